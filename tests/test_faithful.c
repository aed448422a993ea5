/* tests/test_faithful.c: gate/probe/faithful.c: the partition and its baseline
 * file, umbrella apps in module names, the test records' extras, and the JUnit's mix.test case for
 * a red `mix test` the failed tests do not tell. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ci/report/junit.h"
#include "gate/probe/faithful.h"
#include "model/tests.h"

static void make_project(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/gate_test_faithful.XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_faithful__partition(void **state)
{
	(void)state;
	char *two[] = {"--partitions", "2"}, *eq[] = {"--partitions=3"},
	     *one[] = {"--partitions", "1"}, *none[] = {"--trace"};
	unsetenv("MIX_TEST_PARTITION");
	assert_int_equal(faithful_partition(two, 2), 0);
	setenv("MIX_TEST_PARTITION", "2", 1);
	assert_int_equal(faithful_partition(two, 2), 2);
	assert_int_equal(faithful_partition(eq, 1), 2);
	assert_int_equal(faithful_partition(one, 2), 0); /* one partition: not partitioned */
	assert_int_equal(faithful_partition(none, 1), 0);
	setenv("MIX_TEST_PARTITION", "3", 1);
	assert_int_equal(faithful_partition(two, 2), 0); /* out of range: Mix refuses it */
	setenv("MIX_TEST_PARTITION", "x", 1);
	assert_int_equal(faithful_partition(two, 2), 0);
	unsetenv("MIX_TEST_PARTITION");
}

static void test_faithful__baseline_partition(void **state)
{
	(void)state;
	char *path = NULL;
	assert_int_equal(faithful_baseline_partition(&path, ".gate/baseline.json", 0), 0);
	assert_null(path);
	assert_int_equal(faithful_baseline_partition(&path, ".gate/baseline.json", 2), 0);
	assert_string_equal(path, ".gate/baseline.partition-2.json");
	free(path);
	path = strdup("ci.d/base");
	assert_int_equal(faithful_baseline_partition(&path, ".gate/baseline.json", 11), 0);
	assert_string_equal(path, "ci.d/base.partition-11");
	free(path);
}

static void add_test(struct test_run *run, const char *module, const char *app)
{
	struct test_result *t = test_run_add(run);
	assert_non_null(t);
	t->module = strdup(module);
	t->name = strdup("test x");
	t->app = app ? strdup(app) : NULL;
}

static void test_faithful__umbrella_apps_named(void **state)
{
	(void)state;
	struct test_run run = {0};
	struct snapshot after = {0};
	add_test(&run, "Elixir.AlphaTest", "alpha");
	add_test(&run, "Elixir.BetaTest", "beta");
	run.modules = calloc(1, sizeof(*run.modules));
	run.modules[0].module = strdup("Elixir.BetaTest");
	run.nmodules = 1;
	after.owners = calloc(1, sizeof(*after.owners));
	after.owners[0].module = strdup("Elixir.AlphaTest");
	after.nowners = 1;
	assert_int_equal(faithful_name_apps(&run, &after), 0);
	assert_string_equal(run.tests[0].module, "Elixir.AlphaTest (app alpha)");
	assert_string_equal(run.tests[1].module, "Elixir.BetaTest (app beta)");
	assert_string_equal(run.modules[0].module, "Elixir.BetaTest (app beta)");
	assert_string_equal(after.owners[0].module, "Elixir.AlphaTest (app alpha)");
	test_run_clear(&run);
	snapshot_clear(&after);

	/* one app: names as they are */
	add_test(&run, "Elixir.AlphaTest", "alpha");
	add_test(&run, "Elixir.Alpha2Test", "alpha");
	assert_int_equal(faithful_name_apps(&run, NULL), 0);
	assert_string_equal(run.tests[1].module, "Elixir.Alpha2Test");
	test_run_clear(&run);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_faithful__junit_mix_case(void **state)
{
	(void)state;
	char dir[64], path[128], err[256];
	make_project(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	struct test_run run = {0};
	add_test(&run, "Elixir.CoverTest", "cover");
	run.tests[0].file = strdup("/repo/apps/cover/test/cover_test.exs");
	run.mix_reported = true;
	run.mix_status = 3;
	run.mix_reason =
	        strdup("Coverage test failed, threshold not met: Coverage: 50.00%\n\nmore");
	struct report_data meta = {.tests = &run, .hostname = "h", .file_root = "/repo"};
	assert_int_equal(junit_write(path, &meta, err, sizeof(err)), 0);
	char *x = slurp(path);
	assert_non_null(
	        strstr(x, "<testsuite name=\"mix.test\" tests=\"1\" failures=\"0\" errors=\"1\""));
	assert_non_null(strstr(x,
	                       "<error message=\"Coverage test failed, threshold not met: "
	                       "Coverage: 50.00%\" type=\"mix.test.exit_status.3\">mix test would "
	                       "exit with status 3: Coverage test failed"));
	assert_non_null(strstr(x, "file=\"apps/cover/test/cover_test.exs\""));
	assert_non_null(strstr(x, "<property name=\"mix.app\" value=\"cover\"/>"));
	assert_non_null(strstr(x, "errors=\"1\""));
	/* failed tests that are the whole reason: no second case for them */
	run.mix_explained = true;
	run.tests[0].state = TEST_FAILED;
	run.tests[0].reason = strdup("Assertion with == failed");
	run.tests[0].message = strdup("  1) test x (CoverTest)\n     stacktrace: ...");
	assert_int_equal(junit_write(path, &meta, err, sizeof(err)), 0);
	x = slurp(path);
	assert_null(strstr(x, "mix.test"));
	assert_non_null(strstr(
	        x, "<failure message=\"Assertion with == failed\" type=\"ExUnit\">  1) test x"));
	test_run_clear(&run);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_faithful__partition),
	        cmocka_unit_test(test_faithful__baseline_partition),
	        cmocka_unit_test(test_faithful__umbrella_apps_named),
	        cmocka_unit_test(test_faithful__junit_mix_case),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
