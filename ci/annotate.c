/* ci/annotate.c: GitHub Actions `::error` annotations for failing rules and tests. */
#include "annotate.h"

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

static void rule_annotation(FILE *out, const struct finding *f)
{
	char title[256];
	snprintf(title, sizeof(title), "gate: %s %s", f->rule ? f->rule : "growth",
	         f->subject ? f->subject : "");
	fputs("::error title=", out);
	put_escaped(out, title, true, 200);
	fputs("::", out);
	if (f->message)
		put_escaped(out, f->message, false, ANNOTATE_MESSAGE_MAX);
	else
		put_escaped(out, title, false, 200);
	if (f->detail) {
		/* the likely culprits, on lines of their own in the annotation */
		fputs("%0A", out);
		put_escaped(out, f->detail, false, ANNOTATE_MESSAGE_MAX);
	}
	fputc('\n', out);
}

static void test_annotation(FILE *out, const struct test_result *t, const char *workspace)
{
	const char *file = t->file;
	size_t wl = workspace ? strlen(workspace) : 0;
	while (wl > 1 && workspace[wl - 1] == '/')
		wl--;
	if (file && wl && strncmp(file, workspace, wl) == 0 && file[wl] == '/')
		file += wl + 1;
	fputs("::error ", out);
	if (file && file[0] != '/') {
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

int annotate_github_write(FILE *out, const struct report_data *d, const char *workspace)
{
	size_t shown = 0, more = 0;

	if (d->error) {
		fputs("::error title=gate could not run::", out);
		put_escaped(out, d->error, false, ANNOTATE_MESSAGE_MAX);
		fputc('\n', out);
	}
	for (size_t i = 0; d->findings && i < d->findings->count; i++) {
		const struct finding *f = &d->findings->items[i];
		if (f->verdict != VERDICT_FAIL)
			continue;
		if (shown < ANNOTATE_MAX) {
			rule_annotation(out, f);
			shown++;
		} else {
			more++;
		}
	}
	if (more)
		fprintf(out,
		        "::notice title=gate::and %zu more failing memory rule%s: the JUnit "
		        "report has them all\n",
		        more, more == 1 ? "" : "s");
	shown = more = 0;
	for (size_t i = 0; d->tests && i < d->tests->count; i++) {
		const struct test_result *t = &d->tests->tests[i];
		if (t->state != TEST_FAILED && t->state != TEST_INVALID)
			continue;
		if (shown < ANNOTATE_MAX) {
			test_annotation(out, t, workspace);
			shown++;
		} else {
			more++;
		}
	}
	if (more)
		fprintf(out,
		        "::notice title=gate::and %zu more failed test%s: the JUnit report has "
		        "them all\n",
		        more, more == 1 ? "" : "s");
	return ferror(out) ? -1 : 0;
}
