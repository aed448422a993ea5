/* tests/test_tags.c: ExUnit gate tags (parsing, judging, exemptions), severity and the
 * culprit's file and line (rules/tags.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/tags.h"

static void test_tags__parse(void **state)
{
	(void)state;
	struct tag_limits l;
	char err[512];
	assert_int_equal(tags_parse("max_growth=1 MB\nmax_processes=0\nseverity=warn\n", &l, err,
	                            sizeof(err)),
	                 0);
	assert_int_equal(l.max_growth, 1000000);
	assert_int_equal(l.max_processes, 0);
	assert_int_equal(l.max_ets_tables, -1);
	assert_true(l.warn);
	assert_int_equal(tags_parse("max_growth=2097152", &l, err, sizeof(err)), 0);
	assert_int_equal(l.max_growth, 2097152);
	assert_int_equal(tags_parse("max_growth=1.5 MiB", &l, err, sizeof(err)), 0);
	assert_int_equal(l.max_growth, 1572864);
	assert_int_equal(tags_parse("false", &l, err, sizeof(err)), 0);
	assert_true(l.exempt);
	assert_int_equal(tags_parse("max_grwth=1 MB", &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown key max_grwth; the keys are max_growth"));
	assert_int_equal(tags_parse("max_growth=1 parsec", &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "max_growth: \"1 parsec\" is not a size"));
	assert_int_equal(tags_parse("max_growth=1.5", &l, err, sizeof(err)), -1);
	assert_int_equal(tags_parse("max_processes=-1", &l, err, sizeof(err)), -1);
	assert_int_equal(tags_parse("severity=loud", &l, err, sizeof(err)), -1);
	assert_int_equal(tags_parse("!true", &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a keyword list"));
}

static struct test_result *add(struct test_run *run, const char *mod, const char *name,
                               const char *tag, int line, int64_t ets)
{
	struct test_result *t = test_run_add(run);
	assert_non_null(t);
	t->module = strdup(mod);
	t->name = strdup(name);
	t->file = strdup("/p/test/x_test.exs");
	t->line = line;
	t->state = TEST_PASSED;
	t->gate_tag = tag ? strdup(tag) : NULL;
	t->measured = tag != NULL;
	t->delta.mem[MEM_ETS] = ets;
	return t;
}

/* Within passes, over fails first in the list, warn becomes a warning; untagged and
 * exempt tests get no finding; an exempt module is exempt. */
static void test_tags__check_and_severity(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings out = {0};
	struct severity_config sev = {0};
	char err[512];
	assert_int_equal(findings_add(&out, "growth", "ets", VERDICT_FAIL, 1, 2, 0, 10, "ets grew"),
	                 0);
	add(&run, "Elixir.A", "test within", "max_growth=1 MB", 3, 500000);
	add(&run, "Elixir.A", "test over", "max_growth=1 MB", 9, 4000000);
	add(&run, "Elixir.A", "test warn", "max_growth=1 kB\nseverity=warn", 12, 5000);
	add(&run, "Elixir.A", "test plain", NULL, 15, 9000000);
	add(&run, "Elixir.B", "test exempt", "false", 4, 9000000);
	assert_int_equal(tags_check(&out, &run, &sev, err, sizeof(err)), 0);
	assert_int_equal(out.count, 4);
	/* failing tags first (over, warn), then the rules' findings, then passing tags */
	assert_string_equal(out.items[0].subject, "A \"test over\"");
	assert_int_equal(out.items[0].verdict, VERDICT_FAIL);
	assert_non_null(strstr(out.items[0].message, "grew +4.0 MB, max_growth 1.0 MB"));
	assert_int_equal(out.items[0].line, 9);
	assert_string_equal(out.items[2].rule, "growth");
	assert_int_equal(out.items[3].verdict, VERDICT_PASS);
	assert_non_null(strstr(out.items[3].message, "within its @tag gate limits"));
	assert_int_equal(severity_apply(&out, &sev, false), 1);
	assert_int_equal(out.items[1].verdict, VERDICT_SKIP);
	assert_true(out.items[1].warned);
	assert_true(strncmp(out.items[1].message, "warning: ", 9) == 0);
	assert_int_equal(findings_failed(&out), 2);
	assert_true(tags_module_exempt(&run, "Elixir.B"));
	assert_false(tags_module_exempt(&run, "Elixir.A"));
	/* [severity] growth = "warn": the growth finding too; --warn-only: all */
	sev.warn[SEVERITY_GROWTH] = true;
	assert_int_equal(severity_apply(&out, &sev, false), 1);
	assert_int_equal(findings_failed(&out), 1);
	assert_int_equal(severity_apply(&out, NULL, true), 1);
	assert_int_equal(findings_failed(&out), 0);
	/* the culprit's file and line */
	free(out.items[2].file);
	out.items[2].file = NULL;
	out.items[2].culprit = strdup("Elixir.A");
	assert_int_equal(tags_locate(&out, &run), 0);
	assert_string_equal(out.items[2].file, "/p/test/x_test.exs");
	assert_int_equal(out.items[2].line, 3);
	/* a culprit named as a snapshot names modules (the ports' owners): found, and spelt as
	 * ExUnit does; a module no test has stays without a file */
	free(out.items[2].file);
	free(out.items[2].culprit);
	out.items[2].file = NULL;
	out.items[2].culprit = strdup("A");
	assert_int_equal(findings_add(&out, "ports", "open", VERDICT_FAIL, 0, 300, 50, -1, "p"), 0);
	out.items[out.count - 1].culprit = strdup("Nobody");
	assert_int_equal(tags_locate(&out, &run), 0);
	assert_string_equal(out.items[2].file, "/p/test/x_test.exs");
	assert_string_equal(out.items[2].culprit, "Elixir.A");
	assert_null(out.items[out.count - 1].file);
	assert_string_equal(out.items[out.count - 1].culprit, "Nobody");
	findings_clear(&out);
	test_run_clear(&run);
}

/* Every module's exemption at once is each module's asked alone: a module whose tests that ran
 * are all exempt, not one with a test that is not, nor one none of whose tests ran (skipped
 * only), nor one without tests; a name listed twice (partitions merged) is said for both. */
static void test_tags__modules_exempt_at_once(void **state)
{
	(void)state;
	struct test_run run = {0};
	const char *names[] = {"Elixir.D",     "Elixir.Mixed", "Elixir.Free", "Elixir.Skipped",
	                       "Elixir.Empty", "Elixir.Free",  "Elixir.A"};
	size_t n = sizeof(names) / sizeof(names[0]);
	bool at_once[sizeof(names) / sizeof(names[0])];

	run.modules = calloc(n, sizeof(*run.modules));
	assert_non_null(run.modules);
	for (size_t i = 0; i < n; i++)
		assert_non_null(run.modules[run.nmodules++].module = strdup(names[i]));
	add(&run, "Elixir.Free", "test a", "false", 1, 0);
	add(&run, "Elixir.Mixed", "test a", "false", 2, 0);
	add(&run, "Elixir.Free", "test b", "false", 3, 0);
	add(&run, "Elixir.Mixed", "test b", NULL, 4, 0);
	add(&run, "Elixir.Skipped", "test a", NULL, 5, 0)->state = TEST_SKIPPED;
	add(&run, "Elixir.Skipped", "test b", "false", 6, 0);
	add(&run, "Elixir.D", "test a", "false", 7, 0);
	add(&run, "Elixir.Nowhere", "test a", "false", 8, 0); /* no module of that name */
	add(&run, "Elixir.A", "test a", NULL, 9, 0)->state = TEST_EXCLUDED;
	assert_int_equal(tags_modules_exempt(&run, at_once), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(at_once[i], tags_module_exempt(&run, names[i]));
	assert_true(at_once[0] && at_once[2] && at_once[3] && at_once[5]);
	assert_false(at_once[1] || at_once[4] || at_once[6]);
	test_run_clear(&run);
}

static void test_tags__bad_tag_names_test(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct findings out = {0};
	char err[512];
	add(&run, "Elixir.A", "test t", "max_grwth=1 MB", 7, 0);
	assert_int_equal(tags_check(&out, &run, NULL, err, sizeof(err)), -2);
	assert_string_equal(err,
	                    "/p/test/x_test.exs:7: A \"test t\": gate: unknown key max_grwth; "
	                    "the keys are max_growth, max_processes, max_ets_tables, severity, "
	                    "max_peak");
	/* a test that did not run is not judged, nor its tag read */
	run.tests[0].state = TEST_EXCLUDED;
	assert_int_equal(tags_check(&out, &run, NULL, err, sizeof(err)), 0);
	assert_int_equal(out.count, 0);
	findings_clear(&out);
	test_run_clear(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_tags__parse),
	        cmocka_unit_test(test_tags__check_and_severity),
	        cmocka_unit_test(test_tags__bad_tag_names_test),
	        cmocka_unit_test(test_tags__modules_exempt_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
