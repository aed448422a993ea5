/* tests/test_presentation.c: a finding says how its figures are shown (model/finding.h's
 * finding_unit and finding_show), set by the rule that makes it; the writers (console, Markdown,
 * HTML, JUnit, review-comment flag) follow it and know no rule by name, so a new rule needs no
 * writer edit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ci/report/html.h"
#include "ci/report/junit.h"
#include "ci/report/markdown.h"
#include "ci/report/report.h"
#include "ci/report/summary.h"
#include "gate/run/cluster.h"
#include "gate/run/report_out.h"
#include "model/finding.h"
#include "model/tests.h"
#include "rules/baseline.h"
#include "rules/growth.h"
#include "rules/ports.h"

static char *summary_text(const struct findings *f)
{
	struct test_run run = {.finished = true};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	summary_print(out, &(struct report_data){.findings = f, .tests = &run}, false);
	fclose(out);
	return text;
}

static char *markdown_text(const struct findings *f)
{
	struct report_data d = {.project = "p", .findings = f};
	struct textbuf b = {0};
	assert_int_equal(markdown_summary_format(&b, &d), 0);
	return b.s;
}

static char *html_text(const struct findings *f)
{
	struct report_data d = {.project = "p", .findings = f};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(html_report_write(out, &d), 0);
	fclose(out);
	return text;
}

static char *junit_text(const struct findings *f)
{
	char path[] = "/tmp/gate-presentation-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char err[512];
	assert_int_equal(junit_write(path, &(struct report_data){.findings = f}, err, sizeof(err)),
	                 0);
	FILE *in = fopen(path, "r");
	assert_non_null(in);
	char *text = calloc(1, 1 << 20);
	assert_non_null(text);
	size_t n = fread(text, 1, (1 << 20) - 1, in);
	text[n] = '\0';
	fclose(in);
	unlink(path);
	return text;
}

/* The rules say how their findings are shown. */
static void test_presentation__rules_set_it(void **state)
{
	(void)state;
	struct snapshot before = {0}, after = {0};
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		before.mem[c] = 1000000;
		after.mem[c] = 1000000;
		before.have[c] = after.have[c] = true;
	}
	struct findings f = {0};
	struct growth_config g;
	growth_config_default(&g);
	assert_int_equal(growth_check(&f, &before, &after, &g), 0);
	assert_true(f.count > 0);
	for (size_t i = 0; i < f.count; i++) {
		assert_int_equal(f.items[i].unit, UNIT_BYTES);
		assert_int_equal(f.items[i].show, SHOW_CATEGORY | SHOW_FIGURES);
	}
	findings_clear(&f);

	/* the baseline: regressions against the history; its per-table passes are quiet */
	struct baseline base = {0};
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		base.mem[c] = 1000000;
		base.have[c] = true;
	}
	struct baseline_ets tab = {"cache", 1000, 1};
	base.ets = &tab;
	base.nets = 1;
	struct ets_info e = {.name = "cache", .named = true, .memory = 1000};
	after.ets = &e;
	after.nets = 1;
	after.ets_count = 1;
	struct baseline_config bc;
	baseline_config_default(&bc);
	assert_int_equal(baseline_check(&f, &after, &base, &bc, "HEAD:x"), 0);
	assert_int_equal(f.count, MEM_CAT_COUNT + 1);
	for (size_t i = 0; i < f.count; i++) {
		bool table = strcmp(f.items[i].subject, "ets:cache") == 0;
		/* the comparison is one testcase (SHOW_ONE_CASE) */
		assert_int_equal(f.items[i].show,
		                 SHOW_REGRESSION | SHOW_ONE_CASE | (table ? SHOW_QUIET_PASS : 0));
	}
	findings_clear(&f);
	assert_int_equal(baseline_check(&f, &after, NULL, &bc, "HEAD:x"), 0);
	assert_int_equal(f.items[0].show, SHOW_REGRESSION | SHOW_ONE_CASE);
	findings_clear(&f);
	bc.trend_window = 3;
	assert_int_equal(trend_check(&f, &after, &base, 1, &bc), 0);
	assert_int_equal(f.items[0].show, SHOW_REGRESSION | SHOW_ONE_CASE);
	findings_clear(&f);
	after.ets = NULL;
	after.nets = 0;

	/* ports are counted, not bytes */
	struct ports_config pc;
	ports_config_default(&pc);
	after.have_growth = true;
	after.ports_opened = 3;
	assert_int_equal(ports_check(&f, &before, &after, &pc), 0);
	assert_int_equal(f.items[0].unit, UNIT_COUNT);
	char buf[32];
	finding_figure_format(buf, sizeof(buf), &f.items[0], 20000);
	assert_string_equal(buf, "20 000");
	findings_clear(&f);
}

/* A rule no writer has heard of, whose findings are byte rows of the memory table, is shown
 * as growth's are: a row of the console's and the Markdown table, its bytes in the HTML, its
 * figures spelt out in the JUnit. */
static void test_presentation__new_byte_rule(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "heap_soak", "binary", VERDICT_FAIL, 10000000, 30000000,
	                              1000000, 10, "binary soaked 10.0 MB -> 30.0 MB"),
	                 0);
	findings_show(&f, 0, UNIT_BYTES, SHOW_CATEGORY | SHOW_FIGURES);

	char *t = summary_text(&f);
	assert_non_null(strstr(t, "binary "));
	assert_non_null(strstr(t, "+20.0 MB"));
	assert_null(strstr(t, "heap_soak ")); /* no rule line: it is a table row */
	free(t);
	t = markdown_text(&f);
	assert_non_null(strstr(t, "| binary | 10.0 MB | 30.0 MB | +20.0 MB |"));
	free(t);
	t = html_text(&f);
	assert_non_null(strstr(t, "<td class=\"n\">30.0 MB</td>"));
	free(t);
	t = junit_text(&f);
	assert_non_null(strstr(t, "classname=\"gate.memory.heap_soak\""));
	assert_non_null(strstr(t, "before: 10.0 MB (10000000 bytes)"));
	assert_non_null(strstr(t, "delta:  +20.0 MB (+20000000 bytes, +200.0 %)"));
	assert_non_null(strstr(t, "limit:  +10 % above a floor of 1.0 MB"));
	free(t);

	/* counted figures are spelt out as counts */
	f.items[0].unit = UNIT_COUNT;
	t = junit_text(&f);
	assert_non_null(strstr(t, "before: 10 000 000 (10000000)"));
	assert_non_null(strstr(t, "limit:  +10 % above a floor of 1 000 000"));
	free(t);
	findings_clear(&f);
}

/* Without flags a finding is a line of its rule, and its message says it all. */
static void test_presentation__plain_rule(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_FAIL, 10000000, 30000000,
	                              1000000, 10, "binary has many refs"),
	                 0);
	char *t = summary_text(&f);
	assert_non_null(strstr(t, "growth           FAIL (1 of 1 check)"));
	free(t);
	t = markdown_text(&f);
	assert_non_null(strstr(t, "No memory categories were judged."));
	assert_non_null(strstr(t, "| growth | 1 | 1 | 0 |"));
	free(t);
	t = junit_text(&f);
	assert_null(strstr(t, "before:"));
	assert_non_null(strstr(t, "binary has many refs"));
	free(t);
	findings_clear(&f);
}

/* The HTML rule table shows a count as a count. */
static void test_presentation__html_counts(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "ports", "open", VERDICT_FAIL, 0, 300, 50, -1,
	                              "300 ports opened during the run are still open"),
	                 0);
	findings_show(&f, 0, UNIT_COUNT, 0);
	char *t = html_text(&f);
	assert_non_null(strstr(t, "<td class=\"n\">300</td>"));
	assert_null(strstr(t, "300 B"));
	free(t);
	findings_clear(&f);
}

/* JUnit leaves out quiet passes, never quiet failures; a regression calls for a comment. */
static void test_presentation__quiet_and_regression(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "history", "ets:quiet", VERDICT_PASS, 1, 1, 0, 10, "ok"),
	                 0);
	assert_int_equal(findings_add(&f, "history", "ets:loud", VERDICT_FAIL, 1, 9, 0, 10, "no"),
	                 0);
	findings_show(&f, 0, UNIT_BYTES, SHOW_QUIET_PASS);
	char *t = junit_text(&f);
	assert_null(strstr(t, "ets:quiet"));
	assert_non_null(strstr(t, "ets:loud"));
	free(t);

	struct test_run run = {.finished = true};
	struct report_data d = {.findings = &f, .tests = &run};
	f.items[1].verdict = VERDICT_SKIP; /* the gate passes */
	f.items[1].warned = true;
	assert_false(report_out_comment_due(&d));
	findings_show(&f, 1, UNIT_BYTES, SHOW_REGRESSION); /* a warned regression */
	assert_true(report_out_comment_due(&d));
	f.items[1].warned = false;
	assert_false(report_out_comment_due(&d));
	findings_clear(&f);
}

/* A cluster's merged findings (one list for the reports) keep how each node's are shown. */
static void test_presentation__cluster_merge_keeps_it(void **state)
{
	(void)state;
	static struct cluster_node nd; /* large */
	memset(&nd, 0, sizeof(nd));
	snprintf(nd.name, sizeof(nd.name), "a@h");
	assert_int_equal(findings_add(&nd.findings, "ports", "open", VERDICT_FAIL, 0, 300, 50, -1,
	                              "300 ports"),
	                 0);
	findings_show(&nd.findings, 0, UNIT_COUNT, SHOW_FIGURES | SHOW_REGRESSION);
	struct cluster cl = {.nodes = &nd, .n = 1};
	struct findings merged = {0};
	assert_int_equal(cluster_findings_merge(&cl, &merged), 0);
	assert_int_equal(merged.count, 1);
	assert_string_equal(merged.items[0].subject, "a@h: open");
	assert_int_equal(merged.items[0].unit, UNIT_COUNT);
	assert_int_equal(merged.items[0].show, SHOW_FIGURES | SHOW_REGRESSION);
	findings_clear(&merged);
	findings_clear(&nd.findings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_presentation__rules_set_it),
	        cmocka_unit_test(test_presentation__new_byte_rule),
	        cmocka_unit_test(test_presentation__plain_rule),
	        cmocka_unit_test(test_presentation__html_counts),
	        cmocka_unit_test(test_presentation__quiet_and_regression),
	        cmocka_unit_test(test_presentation__cluster_merge_keeps_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
