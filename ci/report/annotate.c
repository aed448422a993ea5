/* ci/report/annotate.c: GitHub Actions annotations for failing tests, rules and warnings, within a
 * budget.
 */
#include "ci/report/annotate.h"
#include "model/finding.h"
#include "model/tests.h"

#include <string.h>

/* A workflow command's escaping: arg points to a bool, true for a property value (title,
 * file), false for the message. */
static const char *command_escape(uint32_t cp, void *arg)
{
	bool property = *(const bool *)arg;
	switch (cp) {
	case '%': return "%25";
	case '\r': return "%0D";
	case '\n': return "%0A";
	case ':': return property ? "%3A" : NULL;
	case ',': return property ? "%2C" : NULL;
	}
	return NULL;
}

static void put_escaped(FILE *out, const char *s, bool property, size_t max_chars)
{
	report_text_write(out, s, max_chars, command_escape, &property);
}

/* ---- the attention budget ---- */

/* file relative to the workspace, or NULL when it cannot be placed (absolute elsewhere). */
static const char *workspace_rel(const char *file, const char *workspace)
{
	size_t wl = workspace ? strlen(workspace) : 0;
	while (wl > 1 && workspace[wl - 1] == '/')
		wl--;
	if (file && wl && strncmp(file, workspace, wl) == 0 && file[wl] == '/')
		file += wl + 1;
	return file && *file && file[0] != '/' ? file : NULL;
}

/* Where an annotation points: file relative to the workspace; without one, relative to the
 * project (a relative file as it is); NULL when it cannot be placed. */
static const char *annotation_file(const char *file, const char *workspace, const char *d_root)
{
	const char *rel = workspace_rel(file, workspace);
	if (!rel && file && !workspace)
		rel = workspace_rel(file, d_root);
	return rel;
}

/* A failing test, at its file and line as a memory finding is (GitHub shows an annotation
 * without them above the diff, not on the line). */
static void test_annotation(FILE *out, const struct test_result *t, const char *workspace,
                            const char *d_root)
{
	const char *file = annotation_file(t->file, workspace, d_root);
	fputs("::error ", out);
	if (file) {
		fputs("file=", out);
		put_escaped(out, file, true, 400);
		if (t->line > 0)
			fprintf(out, ",line=%d", t->line);
		fputc(',', out);
	}
	fputs("title=", out);
	put_escaped(out, report_module_name(t->module), true, 100);
	fputs("%3A ", out);
	put_escaped(out, t->name, true, 200);
	fputs("::", out);
	if (t->state == TEST_INVALID)
		fputs("setup_all failed: ", out);
	put_escaped(out, t->message ? t->message : "failed", false, ANNOTATE_MESSAGE_MAX);
	fputc('\n', out);
}

/* A memory finding, at its culprit test's file and line when it has one; a warning (severity
 * warn, --warn-only) is a ::warning. */
static void finding_annotation(FILE *out, const struct finding *f, const char *workspace,
                               const char *d_root)
{
	char title[256];
	const char *file = annotation_file(f->file, workspace, d_root);
	snprintf(title, sizeof(title), "gate: %s %s%s", finding_rule_name(f),
	         f->subject ? f->subject : "", f->warned ? " (warning)" : "");
	fputs(f->warned ? "::warning " : "::error ", out);
	if (file) {
		fputs("file=", out);
		put_escaped(out, file, true, 400);
		if (f->line > 0)
			fprintf(out, ",line=%d", f->line);
		fputc(',', out);
	}
	fputs("title=", out);
	put_escaped(out, title, true, 200);
	fputs("::", out);
	put_escaped(out, f->message ? f->message : title, false, ANNOTATE_MESSAGE_MAX);
	if (f->detail) {
		fputs("%0A", out);
		put_escaped(out, f->detail, false, ANNOTATE_MESSAGE_MAX);
	}
	fputc('\n', out);
}

int annotate_github_write_max(FILE *out, const struct report_data *d, const char *workspace,
                              int max)
{
	size_t budget = max > 0 ? (size_t)max : ANNOTATE_DEFAULT, used = 0;
	size_t tests_more = 0, rules_more = 0, warn_more = 0;

	if (d->error) {
		fputs("::error title=gate could not run::", out);
		put_escaped(out, d->error, false, ANNOTATE_MESSAGE_MAX);
		fputc('\n', out);
		used++;
	}
	/* what must be said, counted first so that the last line can say what was left out */
	size_t ntests = 0, nrules = 0, nwarn = 0;
	for (size_t i = 0; d->tests && i < d->tests->count; i++)
		if (d->tests->tests[i].state == TEST_FAILED ||
		    d->tests->tests[i].state == TEST_INVALID)
			ntests++;
	for (size_t i = 0; d->findings && i < d->findings->count; i++) {
		const struct finding *f = &d->findings->items[i];
		if (f->verdict == VERDICT_FAIL)
			nrules++;
		else if (f->warned)
			nwarn++;
	}
	/* one line is kept for "and N more" when everything does not fit */
	size_t room = used >= budget ? 0 : budget - used;
	if (ntests + nrules + nwarn > room && room > 0)
		room--;
	/* failing tests first: they have a file and line, and a red test is the first thing to fix
	 */
	for (size_t i = 0; d->tests && i < d->tests->count; i++) {
		const struct test_result *t = &d->tests->tests[i];
		if (t->state != TEST_FAILED && t->state != TEST_INVALID)
			continue;
		if (room) {
			test_annotation(out, t, workspace, d->root);
			room--;
		} else {
			tests_more++;
		}
	}
	/* then the memory findings, in the rules' order: failing first, the most specific first */
	for (size_t i = 0; d->findings && i < d->findings->count; i++) {
		const struct finding *f = &d->findings->items[i];
		if (f->verdict != VERDICT_FAIL)
			continue;
		if (room) {
			finding_annotation(out, f, workspace, d->root);
			room--;
		} else {
			rules_more++;
		}
	}
	for (size_t i = 0; d->findings && i < d->findings->count; i++) {
		const struct finding *f = &d->findings->items[i];
		if (f->verdict == VERDICT_FAIL || !f->warned)
			continue;
		if (room) {
			finding_annotation(out, f, workspace, d->root);
			room--;
		} else {
			warn_more++;
		}
	}
	if (tests_more + rules_more + warn_more)
		fprintf(out,
		        "::notice title=gate::and %zu more: %zu failed test%s, %zu failing memory "
		        "rule%s, %zu warning%s; the JUnit report and the step summary have them "
		        "all\n",
		        tests_more + rules_more + warn_more, tests_more, tests_more == 1 ? "" : "s",
		        rules_more, rules_more == 1 ? "" : "s", warn_more,
		        warn_more == 1 ? "" : "s");
	return ferror(out) ? -1 : 0;
}

int annotate_github_write(FILE *out, const struct report_data *d, const char *workspace)
{
	return annotate_github_write_max(out, d, workspace, ANNOTATE_DEFAULT);
}
