/* tests/fuzz/fuzz_annotate.c: GitHub annotations (ci/report/annotate.c) fed hostile strings.
 * Oracle: every line is one workflow command of ours (`::error ` or `::notice`), no CR, and
 * after the command's `::` separator the message holds no '%' that is not one of the
 * toolkit's escapes (%25, %0D, %0A) - so a name cannot end the command or start another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/annotate.h"
#include "tests/fuzz/fuzz_report.h"

static int escaped_ok(const char *p, size_t n, int props)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '%')
			continue;
		if (i + 3 > n)
			return -1;
		if (strncmp(p + i, "%25", 3) && strncmp(p + i, "%0D", 3) &&
		    strncmp(p + i, "%0A", 3) &&
		    (!props || (strncmp(p + i, "%3A", 3) && strncmp(p + i, "%2C", 3))))
			return -1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_model m;
	char *buf = NULL;
	size_t len = 0;
	fuzz_model_make(&m, data, size);
	struct report_data d = fuzz_report_data(&m, data, size);
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		fuzz_fail("open_memstream");
	if (annotate_github_write(f, &d, m.meta.project) < 0)
		fuzz_fail("annotate_github_write failed");
	fclose(f);
	if (memchr(buf, '\r', len))
		fuzz_fail("a CR in the annotations");
	for (const char *line = buf; line < buf + len;) {
		const char *end = memchr(line, '\n', (size_t)(buf + len - line));
		size_t l = end ? (size_t)(end - line) : (size_t)(buf + len - line);
		if (l && strncmp(line, "::error ", 8) && strncmp(line, "::error::", 9) &&
		    strncmp(line, "::notice", 8))
			fuzz_fail("a line that is not our command: %.*s", (int)l, line);
		/* the message: after the second "::" */
		const char *sep = l > 2 ? memmem(line + 2, l - 2, "::", 2) : NULL;
		if (l && !sep)
			fuzz_fail("a command without its message: %.*s", (int)l, line);
		if (sep) {
			size_t head = (size_t)(sep - line);
			if (escaped_ok(line, head, 1) < 0 ||
			    escaped_ok(sep + 2, l - head - 2, 0) < 0)
				fuzz_fail("an unescaped '%%' in: %.*s", (int)l, line);
			if (memchr(line + 2, ':', head - 2))
				fuzz_fail("a ':' inside the properties: %.*s", (int)l, line);
		}
		line += l + 1;
	}
	free(buf);
	fuzz_model_clear(&m);
	return 0;
}
