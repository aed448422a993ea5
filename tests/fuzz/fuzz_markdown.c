/* tests/fuzz/fuzz_markdown.c: the Markdown step summary (ci/report/markdown.c) fed hostile strings.
 * Oracle: valid UTF-8, under MARKDOWN_SUMMARY_MAX, no raw HTML from the suite (no '<' but in
 * gate's own tags), no control character but newline, and every table row that starts with
 * '|' ends with '|' on the same line (a name cannot break the table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/markdown.h"
#include "tests/fuzz/fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_model m;
	struct textbuf b = {0};
	size_t at = 0;
	fuzz_model_make(&m, data, size);
	struct report_data d = fuzz_report_data(&m, data, size);
	if (markdown_summary_format(&b, &d) < 0)
		fuzz_fail("markdown_summary_format: out of memory");
	const char *s = b.s ? b.s : "";
	size_t n = b.len;
	if (n > MARKDOWN_SUMMARY_MAX)
		fuzz_fail("the summary is %zu bytes, over the cap", n);
	if (fuzz_utf8_scan((const unsigned char *)s, n, &at, 0) < 0)
		fuzz_fail("invalid UTF-8 at byte %zu of the summary", at);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\n') || c == 0x7F)
			fuzz_fail("control byte 0x%02x at %zu", c, i);
	}
	if (fuzz_find_ci(s, n, "<script") || fuzz_find_ci(s, n, "<img") ||
	    fuzz_find_ci(s, n, "<iframe"))
		fuzz_fail("raw HTML from the suite in the summary:\n%.4000s", s);
	for (const char *line = s; line < s + n;) {
		const char *end = memchr(line, '\n', (size_t)(s + n - line));
		size_t l = end ? (size_t)(end - line) : (size_t)(s + n - line);
		if (l && line[0] == '|' && line[l - 1] != '|')
			fuzz_fail("a table row does not end with '|': %.*s", (int)l, line);
		line += l + 1;
	}
	free(b.s);
	fuzz_model_clear(&m);
	return 0;
}
