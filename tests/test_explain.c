/* tests/test_explain.c: every rule gate judges has an explanation (`gate explain RULE`,
 * docs/findings.md), each part of it said, and a failing finding's JUnit text ends with the
 * command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/grow.h"
#include "ci/report/junit_cases.h"
#include "model/finding.h"
#include "rules/explain.h"
#include "rules/tags.h"

/* The rules findings carry that severity cannot change, beside those it can. */
static const char *const other_rules[] = {"structure", "rss", "peak", "heap", "soak", "node"};

static void test_explain__every_rule(void **state)
{
	(void)state;
	for (int r = 0; r < SEVERITY_RULE_COUNT; r++) {
		const char *name = severity_rule_name((enum severity_rule)r);
		if (!rule_explain_find(name))
			fail_msg("the rule %s has no explanation (rules/explain.c)", name);
	}
	for (size_t i = 0; i < sizeof(other_rules) / sizeof(other_rules[0]); i++)
		if (!rule_explain_find(other_rules[i]))
			fail_msg("the rule %s has no explanation (rules/explain.c)",
			         other_rules[i]);
	assert_null(rule_explain_find("nope"));
	assert_null(rule_explain_find(NULL));
}

/* Each part is there; causes and fixes are lists ("- " lines), one line per item. */
static void test_explain__parts(void **state)
{
	(void)state;
	size_t n;
	const struct rule_explain *all = rule_explain_all(&n);
	assert_true(n >= SEVERITY_RULE_COUNT);
	for (size_t i = 0; i < n; i++) {
		const struct rule_explain *e = &all[i];
		assert_true(e->title[0] && e->measures[0] && e->config[0]);
		assert_true(strlen(e->measures) > 80);
		const char *lists[] = {e->causes, e->fixes};
		for (int k = 0; k < 2; k++) {
			for (const char *p = lists[k]; *p;) {
				if (strncmp(p, "- ", 2) != 0)
					fail_msg("%s: a list line without \"- \": %.40s", e->rule,
					         p);
				const char *nl = strchr(p, '\n');
				p = nl ? nl + 1 : p + strlen(p);
			}
		}
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(all[k].rule, e->rule);
	}
}

static void test_explain__failure_text_ends_with_the_command(void **state)
{
	(void)state;
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "ets", "table cache", VERDICT_FAIL, 1, 2, 0, -1,
	                              "ETS table cache grew"),
	                 0);
	assert_int_equal(findings_add(&f, "custom", "x", VERDICT_FAIL, 1, 2, 0, -1, "x grew"), 0);
	assert_int_equal(findings_add(&f, "growth", "ets", VERDICT_FAIL, 1, 2, 0, -1, "ets grew"),
	                 0);
	assert_int_equal(findings_add(&f, "growth", "total", VERDICT_FAIL, 1, 2, 0, -1, "grew"), 0);
	struct textbuf b = {0};
	junit_failure_body(&b, &f.items[2]); /* the growth of ets: the ets rule's causes */
	assert_non_null(strstr(b.s, "\ngate explain ets: its usual causes and fixes\n"));
	textbuf_free(&b);
	junit_failure_body(&b, &f.items[3]);
	assert_non_null(strstr(b.s, "\ngate explain growth: its usual causes and fixes\n"));
	textbuf_free(&b);
	junit_failure_body(&b, &f.items[0]);
	assert_non_null(strstr(b.s, "\ngate explain ets: its usual causes and fixes\n"));
	textbuf_free(&b);
	junit_failure_body(&b, &f.items[1]); /* a rule without an explanation: no command */
	assert_null(strstr(b.s, "gate explain"));
	textbuf_free(&b);
	findings_clear(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_explain__every_rule),
	        cmocka_unit_test(test_explain__parts),
	        cmocka_unit_test(test_explain__failure_text_ends_with_the_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
