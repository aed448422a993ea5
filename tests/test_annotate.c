/* tests/test_annotate.c: GitHub ::error annotations: golden file, escaping that keeps every
 * annotation on its own line, files made relative to the workspace, the caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ci/report/annotate.h"
#include "model/finding.h"
#include "model/tests.h"
#include "tests/report_fixture.h"

static char *annotate(const struct report_data *d, const char *workspace, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	assert_non_null(f);
	assert_int_equal(annotate_github_write(f, d, workspace), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void test_annotate__golden(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, true);
	char *t = annotate(&x.d, "/ws/proj/", &len);
	const char *why = rfx_golden("tests/golden/annotations.txt", t, len);
	if (why)
		fail_msg("%s\n--- got:\n%s", why, t);
	free(t);
	rfx_clear(&x);
}

/* One command per line, each line a command; the properties hold no raw ':' or ','. */
static void test_annotate__escaping(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, true);
	char *t = annotate(&x.d, "/ws/proj", &len);
	size_t lines = 0;
	for (char *p = t; *p;) {
		char *e = strchr(p, '\n');
		assert_non_null(e);
		*e = '\0';
		lines++;
		assert_true(strncmp(p, "::error ", 8) == 0 || strncmp(p, "::notice ", 9) == 0);
		assert_null(strchr(p, '\r'));
		assert_null(strchr(p, '\033'));
		/* the properties end at the first "::" after the command name */
		char *props = strchr(p + 2, ' ') + 1, *end = strstr(props, "::");
		assert_non_null(end);
		for (char *c = props; c < end; c++)
			if (*c == ':' || (*c == ',' && strncmp(c + 1, "line=", 5) != 0 &&
			                  strncmp(c + 1, "title=", 6) != 0))
				fail_msg("raw '%c' in the properties of: %s", *c, p);
		/* a literal "%0A" in the suite's text is written as "%250A", never as a newline */
		assert_null(strstr(end, "%0A,"));
		p = e + 1;
	}
	/* 4 failed findings, 2 failed tests */
	assert_int_equal(lines, 6);
	free(t);
	rfx_clear(&x);
}

/* The attention budget: at most ANNOTATE_DEFAULT lines, gate's error first, then
 * failed tests, then failing findings; the last line says how many of each were left out. */
static void test_annotate__budget_and_error(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, false);
	for (int i = 0; i < 30; i++)
		rfx_test(&x.run, "Elixir.T", "test t", "test/t_test.exs", i + 1, TEST_FAILED, "m");
	x.d.error = "the node died\nwhile running the tests";
	char *t = annotate(&x.d, NULL, &len);
	assert_true(strncmp(t, "::error title=gate could not run::the node died%0Awhile", 55) == 0);
	assert_non_null(strstr(t, "::error file=test/t_test.exs,line=1,title=T%3A test t::m\n"));
	size_t lines = 0, errors = 0;
	for (const char *p = t; (p = strchr(p, '\n')); p++)
		lines++;
	for (const char *p = t; (p = strstr(p, "::error ")); p++)
		errors++;
	assert_int_equal(lines, ANNOTATE_DEFAULT);
	/* the error and 6 tests; the 7th line of room went to the notice */
	assert_int_equal(errors, ANNOTATE_DEFAULT - 1);
	const char *last = strstr(t, "::notice title=gate::and ");
	assert_non_null(last);
	if (!strstr(last, " failed tests, 3 failing memory rules, 0 warnings"))
		fail_msg("%s", t);
	free(t);
	rfx_clear(&x);
}

/* Failed tests come before memory findings, and a finding with a culprit file is placed at
 * it (relative to the workspace); a warning is a ::warning. */
static void test_annotate__order_and_location(void **state)
{
	(void)state;
	struct rfx x;
	size_t len;
	rfx_build(&x, true);
	struct finding *f = &x.findings.items[0];
	for (size_t i = 0; i < x.findings.count; i++)
		if (x.findings.items[i].verdict == VERDICT_FAIL) {
			f = &x.findings.items[i];
			break;
		}
	f->file = strdup("/ws/proj/test/leak_test.exs");
	f->line = 7;
	assert_non_null(f->file);
	char *t = NULL;
	FILE *out = open_memstream(&t, &len);
	assert_int_equal(annotate_github_write_max(out, &x.d, "/ws/proj", 50), 0);
	assert_int_equal(fclose(out), 0);
	const char *test = strstr(t, "::error file=test/");
	const char *finding = strstr(t, "::error file=test/leak_test.exs,line=7,title=gate%3A ");
	assert_non_null(test);
	assert_non_null(finding);
	assert_true(test < finding);
	assert_null(strstr(t, "::notice"));
	free(t);
	rfx_clear(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_annotate__golden),
	        cmocka_unit_test(test_annotate__escaping),
	        cmocka_unit_test(test_annotate__budget_and_error),
	        cmocka_unit_test(test_annotate__order_and_location),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
