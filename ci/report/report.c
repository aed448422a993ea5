/* ci/report/report.c: what the CI writers share: the verdict, safe text from the suite, a capped
 * buffer. */
#include "ci/report/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/utf8.h"
#include "ci/report/ansi.h"
#include "model/verdict.h"
#include "rules/attribution.h"
#include "rules/culprits.h"

/* The tally of d: the model's, or "could not run" when gate stopped early. */
static struct verdict_tally report_tally(const struct report_data *d)
{
	struct verdict_tally t = model_verdict_tally(d->findings, d->tests);
	t.error = d->error != NULL;
	return t;
}

enum gate_verdict report_verdict(const struct report_data *d)
{
	struct verdict_tally t = report_tally(d);
	return model_verdict(&t);
}

void report_why(char *buf, size_t len, const struct report_data *d)
{
	struct verdict_tally t = report_tally(d);
	model_verdict_why(buf, len, &t);
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
	if (s[0] == 0) {
		*p = s;
		return 0;
	}
	uint32_t cp;
	*p = s + utf8_next(s, &cp);
	if (cp == '\n' || cp == '\t' || cp == '\r')
		return cp;
	/* C0 and C1 controls, DEL, and the two non-characters XML forbids */
	if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF)
		return 0xFFFD;
	return cp;
}

void report_text_write(FILE *out, const char *s, size_t max_chars, report_escape_fn esc, void *arg)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t chars = 0;
	uint32_t cp;
	char u[4];

	while ((cp = report_text_next(&p)) != 0) {
		if (chars++ == max_chars) {
			fputs("\xE2\x80\xA6", out); /* … */
			return;
		}
		const char *rep = esc(cp, arg);
		if (rep)
			fputs(rep, out);
		else
			fwrite(u, 1, utf8_put(u, cp), out);
	}
}

size_t report_utf8_put(char *out, uint32_t cp)
{
	return utf8_put(out, cp);
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

size_t report_top_growing(const struct test_run *run, size_t *idx, size_t max, bool *tests)
{
	*tests = run->attribution == ATTRIBUTION_TEST;
	if (run->attribution == ATTRIBUTION_OFF || (!run->nmodules && !*tests))
		return 0;
	return attribution_rank(run, MEM_TOTAL, *tests, idx, max);
}

const struct mem_delta *report_growing_entry(char *label, size_t len, const struct test_run *run,
                                             size_t i, bool tests)
{
	if (tests) {
		const struct test_result *r = &run->tests[i];
		snprintf(label, len, "%s \"%s\"%s", rules_display(r->module),
		         r->name ? r->name : "", r->async ? " (async)" : "");
		return &r->delta;
	}
	const struct module_growth *m = &run->modules[i];
	if (m->async && m->overlapped)
		snprintf(label, len, "%s (async, shared with %zu)", rules_display(m->module),
		         m->overlapped);
	else
		snprintf(label, len, "%s%s", rules_display(m->module), m->async ? " (async)" : "");
	return &m->delta;
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
