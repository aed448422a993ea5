/* tests/fuzz/fuzz_toml.c: the TOML reader (gate/config/toml*.c) and the configuration on top
 * of it (gate/config/config*.c, units.c). Oracle: a configuration that loads prints as TOML that
 * loads again and prints the same (the promise of `gate config check`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config/config.h"
#include "gate/config/toml.h"
#include "tests/fuzz/fuzz.h"

static char *print_config(const struct config *cfg, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		fuzz_fail("open_memstream");
	config_print(cfg, f);
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct toml_value *root = NULL;
	if (toml_parse(&root, (const char *)data, size, err, sizeof(err)) == 0) {
		if (!root || toml_type(root) != TOML_TABLE)
			fuzz_fail("toml_parse succeeded without a root table");
		toml_free(root);
	} else if (root) {
		fuzz_fail("toml_parse failed but handed out a tree");
	}

	struct config cfg, again;
	if (config_default(&cfg) < 0)
		return 0;
	if (config_load_text(&cfg, (const char *)data, size, "fuzz.toml", err, sizeof(err)) == 0) {
		size_t len1, len2;
		char *p1 = print_config(&cfg, &len1);
		if (config_default(&again) < 0)
			fuzz_fail("out of memory");
		if (config_load_text(&again, p1, len1, "printed.toml", err, sizeof(err)) < 0)
			fuzz_fail("the printed configuration does not load: %s\n%s", err, p1);
		char *p2 = print_config(&again, &len2);
		/* the first line names the source: compare from the second on */
		const char *b1 = strchr(p1, '\n'), *b2 = strchr(p2, '\n');
		if (!b1 || !b2 || strcmp(b1, b2) != 0)
			fuzz_fail("printing is not stable:\n%s\n---\n%s", p1, p2);
		free(p1);
		free(p2);
		config_clear(&again);
	}
	config_clear(&cfg);
	return 0;
}
