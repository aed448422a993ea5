/* tests/test_runner.c: unit tests for which tests gate run runs (gate/run/runner.c: --runner and
 * [run] runner over the project's kind, a rebar3 project's test arguments), how a project's
 * kind is told (gate/config/discover.c: rebar.config, mix.exs, test/test_helper.exs) and the
 * command line of a rebar3 project's node (gate/node/node_erl.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/config/discover.h"
#include "gate/node/node_erl.h"
#include "gate/run/runner.h"

static void pick_ok(const char *cli, const char *cfg, bool rebar3, bool eunit, bool ct)
{
	struct runner_choice c;
	char err[512] = "";
	if (runner_pick(cli, cfg, rebar3, &c, err, sizeof(err)) != 0)
		fail_msg("%s/%s (%s project): refused: %s", cli ? cli : "-", cfg ? cfg : "-",
		         rebar3 ? "rebar3" : "Mix", err);
	assert_int_equal(c.rebar3, rebar3);
	assert_int_equal(c.eunit, eunit);
	assert_int_equal(c.ct, ct);
}

static void pick_err(const char *cli, const char *cfg, bool rebar3, const char *want)
{
	struct runner_choice c;
	char err[512] = "";
	assert_int_equal(runner_pick(cli, cfg, rebar3, &c, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("\"%s\" lacks \"%s\"", err, want);
}

static void test_pick(void **state)
{
	(void)state;
	pick_ok(NULL, "auto", false, false, false);
	pick_ok(NULL, NULL, true, true, true);
	pick_ok(NULL, "auto", true, true, true);
	pick_ok("eunit", "auto", true, true, false);
	pick_ok("ct", "eunit", true, false, true);
	pick_ok(NULL, "eunit,ct", true, true, true);
	pick_ok("mix", "eunit", false, false, false); /* the command line wins */
	pick_err("mix", NULL, true,
	         "--runner \"mix\" does not fit this project, a rebar3 project: use \"auto\", "
	         "\"eunit\", \"ct\" or \"eunit,ct\"");
	pick_err(NULL, "eunit", false,
	         "gate.toml's [run] runner \"eunit\" does not fit this project, a Mix project");
	pick_err("exunit", NULL, false, "--runner \"exunit\" is not a runner: expected \"auto\"");
	assert_string_equal(runner_name(&(struct runner_choice){true, true, true}),
	                    "EUnit and Common Test");
	assert_string_equal(runner_name(&(struct runner_choice){true, false, true}), "Common Test");
	assert_string_equal(runner_name(&(struct runner_choice){false, false, false}), "mix test");
}

static int check(const char *const *args, size_t n, char *err, size_t len)
{
	return runner_check_args((char *const *)args, n, err, len);
}

static void test_args(void **state)
{
	(void)state;
	char err[512];
	const char *ok[] = {"--module", "a,b", "--suite=s_SUITE", "--group", "g", "--case=c"};
	assert_int_equal(check(ok, 6, err, sizeof(err)), 0);
	assert_int_equal(check(NULL, 0, err, sizeof(err)), 0);
	const char *bad[][2] = {{"--only", "slow"},
	                        {"--module", ""},
	                        {"--module=", "x"},
	                        {"--modules", "m"},
	                        {"m", "--module"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(check(bad[i], 2, err, sizeof(err)), -1);
		assert_non_null(
		        strstr(err, "is not one gate passes to a rebar3 project's runners"));
	}
	const char *last[] = {"--case"}; /* no value */
	assert_int_equal(check(last, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the test argument --case is not"));
}

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_discover_kind(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/gate-test-runner.XXXXXX", p[PATH_MAX], err[512];
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	assert_false(discover_is_rebar3(d));
	assert_int_equal(discover_project(d, DISCOVER_TESTS, NULL, p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "has no readable mix.exs or rebar.config"));
	touch(d, "rebar.config");
	assert_true(discover_is_rebar3(d));
	assert_int_equal(discover_project(d, DISCOVER_TESTS, NULL, p, err, sizeof(err)), 0);
	assert_int_equal(discover_project(d, DISCOVER_MIX, NULL, p, err, sizeof(err)), -1);
	touch(d, "mix.exs"); /* a mix.exs for Elixir users, no ExUnit suite: still rebar3 */
	assert_true(discover_is_rebar3(d));
	snprintf(p, sizeof(p), "%s/test", d);
	assert_int_equal(mkdir(p, 0700), 0);
	touch(d, "test/test_helper.exs"); /* an ExUnit suite: a Mix project */
	assert_false(discover_is_rebar3(d));
	assert_true(discover_has_rebar3(d));
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static void test_erl_argv(void **state)
{
	(void)state;
	const char *paths[] = {"/p/a/ebin", "/p/b/ebin"};
	char flags[] = "  +S 2  -kernel x y ";
	char **argv = node_erl_argv(NULL, paths, 2, flags);
	assert_non_null(argv);
	const char *want[] = {"erl", "-noshell", "-noinput", "+S",        "2",         "-kernel",
	                      "x",   "y",        "-pa",      "/p/a/ebin", "/p/b/ebin", "-eval"};
	size_t n = sizeof(want) / sizeof(want[0]);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_non_null(strstr(argv[n], "gate_booted")); /* the bootstrap, last */
	assert_null(argv[n + 1]);
	free(argv);
	char none[] = "";
	argv = node_erl_argv("/opt/otp/bin/erl", NULL, 0, none);
	assert_string_equal(argv[0], "/opt/otp/bin/erl");
	assert_string_equal(argv[3], "-eval"); /* no flags, no -pa */
	free(argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pick),
	        cmocka_unit_test(test_args),
	        cmocka_unit_test(test_discover_kind),
	        cmocka_unit_test(test_erl_argv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
