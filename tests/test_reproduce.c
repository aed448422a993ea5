/* tests/test_reproduce.c: the command that reproduces a failing finding (rules/reproduce.c):
 * the run's command on the culprit alone (mix test: its test file; rebar3: its suite or EUnit
 * module), the run's other test arguments kept, quoted where a shell would split them, at the
 * end of the finding's sentence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/finding.h"
#include "rules/reproduce.h"

static void test_line_keeps_arguments_drops_paths(void **state)
{
	(void)state;
	char *args[] = {"test/a_test.exs:3", "--only",    "feed",     "--seed", "0",
	                "test/unit",         "--exclude", "it's slow"};
	struct reproduce_cmd cmd = {"mix gate --per-test", "/p/app", args, 8, REPRODUCE_MIX};
	char buf[512];
	reproduce_line(buf, sizeof(buf), &cmd, "A.FeederTest", "/p/app/test/feeder_test.exs", 0);
	assert_string_equal(buf, "mix gate --per-test -- test/feeder_test.exs --only feed --seed 0 "
	                         "--exclude 'it'\\''s slow'");
	reproduce_line(buf, sizeof(buf), &cmd, "A.XTest", "test/x_test.exs", 12);
	assert_string_equal(buf, "mix gate --per-test -- test/x_test.exs:12 --only feed --seed 0 "
	                         "--exclude 'it'\\''s slow'");
	/* truncated, never overrun */
	char small[16];
	reproduce_line(small, sizeof(small), &cmd, "A.XTest", "test/x_test.exs", 12);
	assert_true(strlen(small) < sizeof(small));
}

static void test_annotate_ends_failing_findings(void **state)
{
	(void)state;
	struct findings f = {0};
	struct reproduce_cmd cmd = {"gate run", NULL, NULL, 0, REPRODUCE_MIX};
	assert_int_equal(findings_add(&f, "growth", "ets", VERDICT_FAIL, 0, 1, 0, -1, "grew"), 0);
	assert_int_equal(findings_add(&f, "growth", "binary", VERDICT_PASS, 0, 1, 0, -1, "ok"), 0);
	assert_int_equal(findings_add(&f, "growth", "atom", VERDICT_FAIL, 0, 1, 0, -1, "erl"), 0);
	f.items[0].culprit = strdup("Elixir.A.FeederTest");
	f.items[0].culprit_test = strdup("test feeds");
	f.items[0].file = strdup("test/feeder_test.exs");
	f.items[0].line = 7;
	f.items[1].culprit = strdup("Elixir.A.OkTest");
	f.items[1].file = strdup("test/ok_test.exs");
	f.items[2].culprit = strdup("a_tests"); /* an EUnit module: no mix test file */
	f.items[2].file = strdup("test/a_tests.erl");
	assert_int_equal(finding_part_add(&f.items[0], PART_CULPRIT, false, "; ", "likely A"), 0);
	assert_int_equal(reproduce_annotate(&f, &cmd), 0);
	/* a part added later still comes before it */
	assert_int_equal(finding_part_add(&f.items[0], PART_CONFIRM, false, "; ", "confirmed"), 0);
	assert_string_equal(f.items[0].message, "grew; likely A; confirmed; reproduce: gate run -- "
	                                        "test/feeder_test.exs:7");
	assert_string_equal(f.items[1].message, "ok");
	assert_string_equal(f.items[2].message, "erl");
	/* the writers that cut a long sentence show these two apart */
	const struct finding_part *acting[2];
	size_t head = finding_acting_split(&f.items[0], acting);
	assert_int_equal(head, strlen("grew; likely A"));
	assert_non_null(acting[0]);
	assert_non_null(acting[1]);
	assert_string_equal(acting[0]->text, "confirmed");
	assert_string_equal(acting[1]->text, "reproduce: gate run -- test/feeder_test.exs:7");
	assert_int_equal(finding_acting_split(&f.items[1], acting), strlen("ok"));
	assert_null(acting[0]);
	assert_null(acting[1]);
	/* once */
	assert_int_equal(reproduce_annotate(&f, &cmd), 0);
	assert_int_equal(strstr(strstr(f.items[0].message, "reproduce") + 1, "reproduce") == NULL,
	                 1);
	findings_clear(&f);
}

/* A rebar3 project: a Common Test suite by --suite (its name ends in _SUITE), an EUnit module
 * by --module; the run's own selections give way, whichever form they took. */
static void test_rebar_selects_suite_or_module(void **state)
{
	(void)state;
	char *args[] = {"--module", "a_tests,b_tests", "--suite=x_SUITE", "--group", "g", "--case"};
	struct reproduce_cmd cmd = {"rebar3 gate -- --repeat 3", "/p/app", args, 6,
	                            REPRODUCE_REBAR};
	char buf[512];
	reproduce_line(buf, sizeof(buf), &cmd, "erl_app_SUITE", "/p/app/test/erl_app_SUITE.erl", 4);
	assert_string_equal(buf, "rebar3 gate -- --repeat 3 -- --suite erl_app_SUITE");
	reproduce_line(buf, sizeof(buf), &cmd, "store_tests", "/p/app/test/store_tests.erl", 0);
	assert_string_equal(buf, "rebar3 gate -- --repeat 3 -- --module store_tests");
	/* "_SUITE" alone is no suite's name */
	reproduce_line(buf, sizeof(buf), &cmd, "_SUITE", NULL, 0);
	assert_string_equal(buf, "rebar3 gate -- --repeat 3 -- --module _SUITE");
	assert_int_equal(reproduce_selecting(REPRODUCE_REBAR, args, 6, 0), 2);
	assert_int_equal(reproduce_selecting(REPRODUCE_REBAR, args, 6, 2), 1);
	assert_int_equal(reproduce_selecting(REPRODUCE_REBAR, args, 6, 5), 1);
	assert_int_equal(reproduce_selecting(REPRODUCE_MIX, args, 6, 0), 0);

	/* every failing finding with a culprit ends with it, whatever its file */
	struct findings f = {0};
	assert_int_equal(findings_add(&f, "growth", "ets", VERDICT_FAIL, 0, 1, 0, -1, "grew"), 0);
	f.items[0].culprit = strdup("store_tests");
	f.items[0].file = strdup("test/store_tests.erl");
	struct reproduce_cmd plain = {"gate run", NULL, NULL, 0, REPRODUCE_REBAR};
	assert_int_equal(reproduce_annotate(&f, &plain), 0);
	assert_string_equal(f.items[0].message,
	                    "grew; reproduce: gate run -- --module store_tests");
	findings_clear(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_line_keeps_arguments_drops_paths),
	        cmocka_unit_test(test_annotate_ends_failing_findings),
	        cmocka_unit_test(test_rebar_selects_suite_or_module),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
