/* tests/fuzz/fuzz_summary.c: the console summary (ci/report/summary.c) fed hostile strings
 * (the view the other writers' targets get, snapshots and all).
 * Oracle: without colour the output holds no escape, no C0/C1 control but newline, and is
 * valid UTF-8, so nothing in a test name can act on the terminal of the person reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/summary.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_model m;
	char *buf = NULL;
	size_t len = 0, at = 0;
	fuzz_model_make(&m, data, size);
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	struct report_data d = fuzz_report_data(&m, data, size);
	summary_print(f, &d, false);
	fclose(f);
	if (fuzz_utf8_scan((const unsigned char *)buf, len, &at, 1) < 0)
		fuzz_fail("unsafe byte 0x%02x at %zu of the summary:\n%s", (unsigned char)buf[at],
		          at, buf);
	free(buf);
	/* with colour: the same code paths plus our own escapes; only memory errors count */
	f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	summary_print(f, &d, true);
	fclose(f);
	free(buf);
	fuzz_model_clear(&m);
	return 0;
}
