/* tests/fuzz/fuzz_snapshot.c: the snapshot writers (ci/store/snapshot_json.c,
 * ci/report/snapshot_text.c) fed hostile strings and figures. Oracle: the JSON is made whatever the
 * names hold (a name that is not UTF-8 must not lose the whole snapshot) and reads back as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/snapshot_text.h"
#include "ci/store/snapshot_json.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_model m;
	json_error_t jerr;
	fuzz_model_make(&m, data, size);
	json_t *j = snapshot_json(&m.snap);
	if (!j)
		fuzz_fail("snapshot_json gave nothing");
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		fuzz_fail("json_dumps gave nothing");
	json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!back)
		fuzz_fail("the snapshot JSON does not read back: %s", jerr.text);
	json_decref(back);
	free(text);
	json_decref(j);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	snapshot_text_print(f, &m.snap, (size_t)((size ? data[0] : 0) % 40));
	fclose(f);
	free(buf);
	fuzz_model_clear(&m);
	return 0;
}
