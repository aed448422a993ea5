/* tests/test_markdown.c: the Markdown step summary: golden file, hostile text kept inside its
 * table cell and line, the size cap on a huge run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ci/report/markdown.h"
#include "model/finding.h"
#include "model/tests.h"
#include "tests/report_fixture.h"

static void test_markdown__golden(void **state)
{
	(void)state;
	struct rfx x;
	struct textbuf b = {0};
	rfx_build(&x, true);
	assert_int_equal(markdown_summary_format(&b, &x.d), 0);
	const char *why = rfx_golden("tests/golden/summary.md", b.s, b.len);
	if (why)
		fail_msg("%s\n--- got:\n%s", why, b.s);
	textbuf_free(&b);
	rfx_clear(&x);
}

/* Every table row has exactly its header's columns, whatever the suite's text holds. */
static void assert_tables_intact(const char *text)
{
	int cols = -1;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > 0 && p[0] == '|') {
			int k = 0;
			for (size_t i = 0; i < n; i++)
				if (p[i] == '|' && (i == 0 || p[i - 1] != '\\'))
					k++;
			if (cols < 0)
				cols = k;
			else if (k != cols)
				fail_msg("a row with %d cells where the table has %d: %.*s", k - 1,
				         cols - 1, (int)n, p);
		} else {
			cols = -1;
		}
		p = e ? e + 1 : p + n;
	}
}

static void test_markdown__hostile(void **state)
{
	(void)state;
	struct rfx x;
	struct textbuf b = {0};
	rfx_build(&x, true);
	assert_int_equal(markdown_summary_format(&b, &x.d), 0);
	const char *t = b.s;
	assert_null(strstr(t, "<script"));
	assert_null(strstr(t, "<b>"));
	assert_null(strstr(t, "\n::"));
	assert_null(strstr(t, "\r"));
	assert_null(strstr(t, "\033"));
	for (const char *l = strstr(t, "](javascript"); l; l = strstr(l + 1, "](javascript"))
		assert_true(l > t && l[-1] == '\\'); /* only as escaped text, never a link */
	assert_non_null(strstr(t, "&lt;script&gt;"));
	assert_non_null(strstr(t, "\\| pipe"));
	/* a culprit line under two findings is shown once; the top growing modules */
	const char *dl = strstr(t, "  - 1. Demo.CacheTest (sync) +7.1 MB ets");
	assert_non_null(dl);
	assert_null(strstr(dl + 1, "  - 1. Demo.CacheTest (sync) +7.1 MB ets"));
	assert_non_null(strstr(t, "| 1 | Demo.CacheTest | +7.3 MB |"));
	assert_non_null(strstr(t, "| 2 | Demo.SlowTest (async, shared with 1) | +12.0 kB |"));
	/* invalid UTF-8 and controls became U+FFFD: the text is valid UTF-8 */
	const unsigned char *p = (const unsigned char *)t;
	uint32_t cp;
	while ((cp = report_text_next(&p)) != 0)
		if (cp == 0xFFFD && memcmp(p - 3, "\xEF\xBF\xBD", 3) != 0)
			fail_msg("invalid UTF-8 in the summary at byte %zu",
			         (size_t)(p - 1 - (const unsigned char *)t));
	assert_tables_intact(t);
	textbuf_free(&b);
	rfx_clear(&x);
}

/* A run with 20 000 failed tests with long names and 5 000 failing findings stays under the
 * cap, lists MARKDOWN_LIST_MAX of each and says how many more and that it was cut. */
static void test_markdown__cap(void **state)
{
	(void)state;
	struct rfx x;
	struct textbuf b = {0};
	char name[600];
	rfx_build(&x, false);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (int i = 0; i < 20000; i++)
		rfx_test(&x.run, "Elixir.Big.Test", name, "/ws/test/big_test.exs", i, TEST_FAILED,
		         "boom | <b>");
	for (int i = 0; i < 5000; i++)
		assert_int_equal(
		        findings_add(&x.findings, "ets", name, VERDICT_FAIL, 0, 1, 0, -1, name), 0);
	assert_int_equal(markdown_summary_format(&b, &x.d), 0);
	assert_true(b.len <= MARKDOWN_SUMMARY_MAX);
	assert_non_null(strstr(b.s, "more failed tests"));
	assert_non_null(strstr(b.s, "- and 4953 more"));
	print_message(
	        "summary of a run with 20 001 failed tests and 5 004 failed findings: %zu bytes\n",
	        b.len);
	assert_tables_intact(b.s);
	textbuf_free(&b);

	/* a tighter budget: a cut summary ends with the note, and the writer stopped at a row */
	for (int i = 0; i < 200; i++)
		assert_int_equal(
		        findings_add(&x.findings, "ets", name, VERDICT_FAIL, 0, 1, 0, -1, "x"), 0);
	char *big = malloc(200000);
	assert_non_null(big);
	memset(big, 'm', 199999);
	big[199999] = '\0';
	x.d.error = big; /* an error text longer than the cap */
	assert_int_equal(markdown_summary_format(&b, &x.d), 0);
	assert_true(b.len <= MARKDOWN_SUMMARY_MAX);
	textbuf_free(&b);
	free(big);
	rfx_clear(&x);
}

/* Found by fuzz_markdown: the category table computed after - before itself, which overflows
 * (undefined behaviour) on extreme figures; it now asks finding_raw_delta, which saturates. */
static void test_markdown__extreme_figures(void **state)
{
	(void)state;
	struct findings f = {0};
	struct report_data d = {.project = "p"};
	struct textbuf b = {0};
	assert_int_equal(
	        findings_add(&f, "growth", "total", VERDICT_FAIL, INT64_MIN, 0, 0, 10, "m"), 0);
	assert_int_equal(
	        findings_add(&f, "growth", "ets", VERDICT_FAIL, INT64_MAX, INT64_MIN, 0, 10, "m"),
	        0);
	findings_show(&f, 0, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES); /* as growth.c does */
	d.findings = &f;
	assert_int_equal(markdown_summary_format(&b, &d), 0);
	assert_non_null(strstr(b.s, "| total |"));
	assert_null(strstr(b.s, "\\*")); /* not taken for a judged-on-live-memory delta */
	free(b.s);
	findings_clear(&f);
}

static void test_markdown__passed_and_error(void **state)
{
	(void)state;
	struct report_data d = {.project = "p"};
	struct textbuf b = {0};
	assert_int_equal(markdown_summary_format(&b, &d), 0);
	assert_non_null(strstr(b.s, "gate: PASSED"));
	textbuf_free(&b);
	d.error = "node gate_1@127.0.0.1 exited with status 1 while booting the node";
	assert_int_equal(markdown_summary_format(&b, &d), 0);
	assert_non_null(strstr(b.s, "gate: ERROR (gate could not run)"));
	assert_non_null(strstr(b.s, "exited with status 1"));
	textbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_markdown__golden),
	        cmocka_unit_test(test_markdown__hostile),
	        cmocka_unit_test(test_markdown__cap),
	        cmocka_unit_test(test_markdown__extreme_figures),
	        cmocka_unit_test(test_markdown__passed_and_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
