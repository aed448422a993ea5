/* gate/run/rebar_mode.c: the workload of `gate run` in a rebar3 project (gate/run/pipeline.h),
 * the peer of suite_mode.c's mix test: EUnit, then Common Test where the project has suites, run
 * inside the node by the probe's Erlang runners (gate/probe/gate_probe_erl.erl), their results
 * and module edges read as mix test's. The project was compiled by rebar3 and the node booted
 * with its code paths (run.c, gate/run/rebar_build.h). */
#include <stdio.h>
#include <stdlib.h>

#include "gate/node/clock.h"
#include "gate/probe/probe_erl.h"
#include "gate/run/pipeline.h"
#include "model/tests.h"

/* The test directories on the code path and the runners' one-time costs, before the
 * before-snapshot. */
static int rebar_prepare(struct run *r, char *err, size_t errlen)
{
	struct probe_erl_found found;
	r->ses.phase = "preparing EUnit and Common Test";
	if (probe_erl_prepare(&r->ses.conn, r->project, r->cfg.rpc_timeout_ms, &found, err,
	                      errlen) != EIC_OK)
		return -1;
	run_progress(r, "%lld modules with EUnit tests, %lld Common Test suites",
	             (long long)found.eunit_modules, (long long)found.suites);
	return 0;
}

static int rebar_run(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "running the tests";
	run_progress(r, "running %s%s", runner_name(&r->runner),
	             r->opts->ntest_args ? " with the given arguments" : "");
	long long t0 = clock_ms();
	fflush(stdout);
	enum attribution_mode mode = r->opts->no_attribution ? ATTRIBUTION_OFF
	                             : r->opts->per_test || r->cfg.rules.attribution.per_test
	                                     ? ATTRIBUTION_TEST
	                                     : ATTRIBUTION_MODULE;
	int rc =
	        probe_erl_run(&r->ses.conn, r->project, r->runner.eunit, r->runner.ct,
	                      r->opts->test_args, r->opts->ntest_args, mode, r->cfg.test_timeout_ms,
	                      run_after_early, r, &r->tests, &r->suite_error, err, errlen);
	fflush(stdout);
	if (rc == EIC_TIMEOUT) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", err);
		errtext_set(err, errlen, NULL,
		            "the tests did not finish within node.test_timeout (%d s): %s; a test "
		            "may block forever, or raise the limit in gate.toml or with "
		            "--test-timeout",
		            r->cfg.test_timeout_ms / 1000, why);
	}
	if (rc != EIC_OK)
		return -1;
	if (r->tests.tests_dropped > 0) {
		errtext_set(
		        err, errlen, NULL,
		        "the tests were more than gate records (%lld were not recorded), so "
		        "gate cannot give a verdict on them: run them in parts with --module or "
		        "--suite, one gate run each",
		        (long long)r->tests.tests_dropped);
		return -1;
	}
	run_progress(r, "%s finished in %.1f s: %zu tests recorded, %s", runner_name(&r->runner),
	             (double)(clock_ms() - t0) / 1000.0, r->tests.count,
	             r->tests.attribution == ATTRIBUTION_TEST
	                     ? "growth measured per test and per module or suite"
	             : r->tests.attribution == ATTRIBUTION_MODULE
	                     ? "growth measured per module or suite"
	                     : "no attribution");
	return 0;
}

/* --repeat: runs 2..N, each on a clean slate of results */
static int rebar_again(void *arg, char *err, size_t errlen)
{
	struct run *r = arg;
	free(r->suite_error);
	r->suite_error = NULL;
	return rebar_run(r, err, errlen);
}

const struct run_workload rebar_mode_workload = {
        .name = "EUnit and Common Test",
        .prepare = rebar_prepare,
        .run = rebar_run,
        .again = rebar_again,
};
