/* ci/report.c: what the CI writers share: the verdict, safe text from the suite, a capped
 * buffer. */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ansi.h"

enum report_verdict report_verdict(const struct report_data *d)
{
	if (d->error)
		return REPORT_ERROR;
	if (d->findings && findings_failed(d->findings))
		return REPORT_FAILED;
	if (d->tests) {
		struct test_counts c = test_run_count(d->tests);
		if (c.failed || c.invalid || !d->tests->finished)
			return REPORT_FAILED;
	}
	return REPORT_PASSED;
}

const char *report_verdict_name(enum report_verdict v)
{
	switch (v) {
	case REPORT_PASSED: return "PASSED";
	case REPORT_FAILED: return "FAILED";
	case REPORT_ERROR: return "ERROR";
	}
	return "?";
}

void report_why(char *buf, size_t len, const struct report_data *d)
{
	size_t rules = d->findings ? findings_failed(d->findings) : 0, tests = 0, n = 0;
	bool unfinished = false;
	if (d->tests) {
		struct test_counts c = test_run_count(d->tests);
		tests = c.failed + c.invalid;
		unfinished = !d->tests->finished;
	}
	if (len == 0)
		return;
	buf[0] = '\0';
	if (d->error) {
		snprintf(buf, len, "gate could not run");
		return;
	}
	if (rules)
		n += (size_t)snprintf(buf + n, len - n, "%zu memory %s", rules,
				      rules == 1 ? "rule" : "rules");
	if (tests && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%zu %s", n ? ", " : "", tests,
				      tests == 1 ? "test" : "tests");
	if (unfinished && n < len)
		snprintf(buf + n, len - n, "%sthe test suite did not finish", n ? ", " : "");
}

const char *report_module_name(const char *module)
{
	if (!module)
		return "?";
	if (strncmp(module, "Elixir.", 7) == 0 && module[7])
		return module + 7;
	return module;
}

uint32_t report_text_next(const unsigned char **p)
{
	const unsigned char *s = *p;
	size_t n;

	while (s[0] == 0x1B && (n = ansi_escape_len(s)) > 0)
		s += n;
	unsigned char c = s[0];
	if (c == 0) {
		*p = s;
		return 0;
	}
	if (c < 0x80) {
		*p = s + 1;
		if (c == '\n' || c == '\t' || c == '\r')
			return c;
		return c < 0x20 || c == 0x7F ? 0xFFFD : c;
	}
	size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
						 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	uint32_t cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
	size_t k;
	for (k = 1; k < len && (s[k] & 0xC0) == 0x80; k++)
		cp = (cp << 6) | (s[k] & 0x3F);
	if (len == 0 || k < len) {
		*p = s + (k ? k : 1); /* one U+FFFD for a cut sequence */
		return 0xFFFD;
	}
	*p = s + len;
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F) || cp == 0xFFFE ||
	    cp == 0xFFFF)
		return 0xFFFD;
	return cp;
}

size_t report_utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

int report_buf_put(struct report_buf *b, const char *s, size_t len)
{
	if (b->oom || b->full)
		return -1; /* once full, nothing more: a later small line must not jump the queue */
	if (b->cap && b->len + len > b->cap) {
		b->full = true;
		return -1;
	}
	if (b->len + len + 1 > b->alloc) {
		size_t na = b->alloc ? b->alloc : 4096;
		while (na < b->len + len + 1)
			na *= 2;
		char *nd = realloc(b->data, na);
		if (!nd) {
			b->oom = true;
			return -1;
		}
		b->data = nd;
		b->alloc = na;
	}
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int report_buf_printf(struct report_buf *b, const char *fmt, ...)
{
	char small[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return report_buf_put(b, small, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = true;
		return -1;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int rc = report_buf_put(b, big, (size_t)n);
	free(big);
	return rc;
}

void report_buf_free(struct report_buf *b)
{
	if (!b)
		return;
	free(b->data);
	memset(b, 0, sizeof(*b));
}

const char *report_path_rel(const char *path, const char *root)
{
	size_t n = root ? strlen(root) : 0;
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (path && n && strncmp(path, root, n) == 0 && path[n] == '/' && path[n + 1])
		return path + n + 1;
	return path;
}

void report_pct_format(char *buf, size_t len, int64_t before, int64_t delta)
{
	double pct = before > 0 ? 100.0 * (double)delta / (double)before : 0;
	if (before > 0 && pct >= 10000)
		snprintf(buf, len, ">+9999 %%");
	else if (before > 0)
		snprintf(buf, len, "%+.1f %%", pct);
	else
		snprintf(buf, len, "%s", delta > 0 ? "new" : "-");
}
