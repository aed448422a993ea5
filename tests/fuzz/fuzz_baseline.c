/* tests/fuzz/fuzz_baseline.c: the baseline JSON loader (ci/store/baseline_file.c) on files and
 * notes. Oracle: a baseline that parses formats to text that parses again and formats the same. */
#include <stdlib.h>
#include <string.h>

#include "ci/store/baseline_file.h"
#include "tests/fuzz/fuzz.h"

static void round_trip(const struct baseline *b, int summary)
{
	char err[512], *t1 = NULL, *t2 = NULL;
	struct baseline again;
	memset(&again, 0, sizeof(again));
	int rc = summary ? baseline_summary_format(&t1, b, err, sizeof(err))
	                 : baseline_format(&t1, NULL, b, err, sizeof(err));
	if (rc != BASELINE_OK)
		fuzz_fail("a parsed baseline does not format: %s", err);
	rc = summary ? baseline_summary_parse(&again, t1, strlen(t1), "again", err, sizeof(err))
	             : baseline_parse(&again, t1, strlen(t1), "again", err, sizeof(err));
	if (rc != BASELINE_OK)
		fuzz_fail("a formatted baseline does not parse: %s\n%s", err, t1);
	rc = summary ? baseline_summary_format(&t2, &again, err, sizeof(err))
	             : baseline_format(&t2, NULL, &again, err, sizeof(err));
	if (rc != BASELINE_OK || strcmp(t1, t2) != 0)
		fuzz_fail("formatting is not stable:\n%s\n---\n%s", t1, t2 ? t2 : "(failed)");
	free(t1);
	free(t2);
	baseline_clear(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct baseline b;
	memset(&b, 0, sizeof(b));
	if (baseline_parse(&b, (const char *)data, size, "fuzz.json", err, sizeof(err)) ==
	    BASELINE_OK) {
		round_trip(&b, 0);
		baseline_clear(&b);
	}
	memset(&b, 0, sizeof(b));
	if (baseline_summary_parse(&b, (const char *)data, size, "fuzz.note", err, sizeof(err)) ==
	    BASELINE_OK) {
		round_trip(&b, 1);
		baseline_clear(&b);
	}
	baseline_check_replaceable((const char *)data, size, "fuzz.json", err, sizeof(err));
	return 0;
}
