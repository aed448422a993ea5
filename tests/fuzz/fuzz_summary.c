/* tests/fuzz/fuzz_summary.c: the console summary (ci/summary.c) fed hostile strings.
 * Oracle: without colour the output holds no escape, no C0/C1 control but newline, and is
 * valid UTF-8, so nothing in a test name can act on the terminal of the person reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/summary.h"
#include "fuzz.h"

/* 0 when s[0..n) is valid UTF-8 with no controls but '\n' and no C1 controls. */
static int check_terminal_safe(const unsigned char *s, size_t n, size_t *at)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		*at = i;
		if (c < 0x80) {
			if ((c < 0x20 && c != '\n') || c == 0x7F)
				return -1;
			i++;
			continue;
		}
		size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
			     : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
		if (!len || i + len > n)
			return -1;
		uint32_t cp = c & (0xFF >> (len + 1));
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return -1;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if (cp < 0xA0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF ||
		    (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
			return -1;
		i += len;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_model m;
	char *buf = NULL;
	size_t len = 0, at = 0;
	fuzz_model_make(&m, data, size);
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	struct summary_opts so = { .color = false, .junit_path = m.meta.project,
				   .node = m.meta.node };
	summary_print(f, &m.findings, &m.run, &so);
	fclose(f);
	if (check_terminal_safe((const unsigned char *)buf, len, &at) < 0)
		fuzz_fail("unsafe byte 0x%02x at %zu of the summary:\n%s",
			  (unsigned char)buf[at], at, buf);
	free(buf);
	/* with colour: the same code paths plus our own escapes; only memory errors count */
	f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	so.color = true;
	summary_print(f, &m.findings, &m.run, &so);
	fclose(f);
	free(buf);
	fuzz_model_clear(&m);
	return 0;
}
