/* gate/run/suite_mode.c: the workload of `gate run` (gate/run/pipeline.h): mix test inside
 * the node, as bare `mix test` would run it, its output streamed through the node. */
#include <stdio.h>
#include <stdlib.h>

#include "gate/node/clock.h"
#include "gate/probe/faithful.h"
#include "gate/run/pipeline.h"
#include "model/tests.h"
#include "rules/attribution.h"

/* Pays ExUnit's one-time costs before the before-snapshot. */
static int suite_prepare(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "preparing the suite";
	if (probe_prepare(&r->ses.conn, r->cfg.rpc_timeout_ms, err, errlen) != EIC_OK)
		return -1;
	/* what mix test does before the suite: the `test` alias's preparation steps, the
	 * applications (the node gate started was booted with --no-start) */
	r->ses.phase = "preparing mix test (alias steps, starting the applications)";
	return faithful_prep(&r->ses.conn, r->opts->test_args, r->opts->ntest_args,
	                     r->ses.node.pid > 0, r->cfg.test_timeout_ms, err, errlen);
}

/* What the suite's results say gate cannot judge: more tests than it records, a suite that
 * never ran. Returns 0, or -1 with err. */
static int suite_check_results(struct run *r, char *err, size_t errlen)
{
	/* nothing is dropped silently: more tests than gate records is "could not run" */
	if (r->tests.tests_dropped > 0) {
		errtext_set(err, errlen, NULL,
		            "the suite ran %lld tests, more than gate records (its cap is %lld "
		            "tests per run); %lld were not recorded, so gate cannot give a verdict "
		            "on them: split the suite (e.g. mix test --partitions N with "
		            "MIX_TEST_PARTITION, one gate run per partition)",
		            (long long)(r->tests.count + (size_t)r->tests.tests_dropped),
		            (long long)r->tests.test_cap, (long long)r->tests.tests_dropped);
		return -1;
	}
	/* mix test failed before any suite ran (a test file that does not compile, a missing
	 * test_helper.exs, a Mix error): the suite could not run at all */
	if (r->tests.mix_reported && !r->tests.suite_ran && r->tests.mix_status != 0) {
		errtext_set(err, errlen, NULL,
		            "mix test could not run the suite (bare `mix test` would exit with "
		            "status %d): %s",
		            r->tests.mix_status,
		            r->tests.mix_reason ? r->tests.mix_reason : "it gave no reason");
		r->tests.mix_explained = true; /* the report's gate.run case says it */
		return -1;
	}
	return 0;
}

/* How the per-module or per-test figures were taken, when it is not the usual way. */
static void suite_say_attribution(struct run *r)
{
	if (r->tests.attribution_error && r->tests.mix_reported)
		run_progress(r,
		             "gate's formatter ran as --formatter Gate.Formatter --formatter "
		             "ExUnit.CLIFormatter (ExUnit.EventManager could not be hooked: %s), "
		             "in place of the formatters the project configured",
		             r->tests.attribution_error);
	if (r->tests.attribution != ATTRIBUTION_OFF && !r->tests.attribution_sync)
		run_progress(r,
		             "attribution is approximate: ExUnit.EventManager could not be hooked "
		             "(%s), so the figures were taken as ExUnit's events reached gate's "
		             "formatter, a little after each module's or test's edge",
		             r->tests.attribution_error ? r->tests.attribution_error
		                                        : "no reason given");
}

/* mix test inside the node; its output streams through the node's stdout. */
static int suite_run(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "running the tests";
	run_progress(r, "running mix test%s",
	             r->opts->ntest_args ? " with the given arguments" : "");
	long long t0 = clock_ms();
	fflush(stdout);
	/* an attached node's stdout is its own console: have the suite's output sent here */
	r->ses.conn.fetch_stdout = r->opts->attach != NULL;
	enum attribution_mode mode = r->opts->no_attribution ? ATTRIBUTION_OFF
	                             : r->opts->per_test || r->cfg.rules.attribution.per_test
	                                     ? ATTRIBUTION_TEST
	                                     : ATTRIBUTION_MODULE;
	int rc = probe_run_tests(&r->ses.conn, r->opts->test_args, r->opts->ntest_args, mode,
	                         r->ses.node.pid > 0, r->cfg.test_timeout_ms, run_after_early, r,
	                         &r->tests, &r->suite_error, err, errlen);
	r->ses.conn.fetch_stdout = false;
	fflush(stdout);
	if (rc == EIC_TIMEOUT) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", err);
		errtext_set(err, errlen, NULL,
		            "the suite did not finish within node.test_timeout (%d s): %s; a test "
		            "may block forever, or raise the limit in gate.toml or with "
		            "--test-timeout",
		            r->cfg.test_timeout_ms / 1000, why);
	}
	if (rc != EIC_OK || suite_check_results(r, err, errlen) < 0)
		return -1;
	suite_say_attribution(r);
	run_progress(r, "mix test finished in %.1f s: %zu tests recorded, %s",
	             (double)(clock_ms() - t0) / 1000.0, r->tests.count,
	             r->tests.attribution == ATTRIBUTION_TEST
	                     ? "growth measured per test and module"
	             : r->tests.attribution == ATTRIBUTION_MODULE ? "growth measured per module"
	                                                          : "no attribution");
	return 0;
}

/* --repeat: runs 2..N, each on a clean slate of results */
static int suite_again(void *arg, char *err, size_t errlen)
{
	struct run *r = arg;
	free(r->suite_error);
	r->suite_error = NULL;
	return suite_run(r, err, errlen);
}

const struct run_workload suite_mode_workload = {
        .name = "mix test",
        .prepare = suite_prepare,
        .run = suite_run,
        .again = suite_again,
};
