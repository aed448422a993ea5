/* gate/run/repeat_step.h: `gate run --repeat N`: the suite again in the same node, a GC'd snapshot
 * after every run, and the judged pair of rules/repeat.h.
 *
 * Ownership: struct repeat_step owns the warm-up snapshot, the per-run figures and the
 * earlier runs' test results; repeat_step_clear frees them. judged_before/judged_after borrow
 * from warm and from the caller's last snapshot: valid while both live.
 */
#ifndef GATE_REPEAT_STEP_H
#define GATE_REPEAT_STEP_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/probe/session.h"
#include "model/tests.h"
#include "rules/repeat.h"

struct repeat_step {
	size_t n;                 /* runs asked for (>= 2) */
	struct repeat_data data;  /* the figures after every run */
	struct snapshot warm;     /* deep, GC'd, after run 1; the probe's before mark set there */
	struct test_run *earlier; /* runs 1..n-1's results (the last run's stay the caller's) */
	size_t nearlier;
	struct snapshot judged_before, judged_after; /* what the rules judge (borrowed parts) */
	bool judged;
	/* deep snapshots after runs 2..n-1 (after mark: growth since run 1), for the
	 * structures that grow in every run (repeat_structures_check) */
	struct snapshot *mids;
	size_t nmids;
};

/* The deep snapshots the judge looks for structures that grew in every run in (judge/judge.h):
 * runs[0] the before-snapshot, runs[1] st's after run 1, then st's after runs 2..n-1, runs[n]
 * last (after run n); runs holds REPEAT_MAX + 1. Returns n, or 0 when st was not judged. */
size_t repeat_step_runs(const struct repeat_step *st, const struct snapshot *before,
                        const struct snapshot *last, const struct snapshot **runs);

/* Runs the suite again: fills *tests (cleared first) or returns -1 with err. */
typedef int (*repeat_suite_fn)(void *arg, char *err, size_t errlen);

/* Before run 1: the node notes which files are required, so that files required during a
 * run are forgotten before the next (gate_probe:repeat_mark/0). 0, or -1 with err. */
int repeat_step_mark(struct session *ses, int timeout_ms, char *err, size_t errlen);

/* Called after run 1 finished (its results in *tests): for runs 2..n, a GC'd snapshot of the
 * run before (deep after run 1, where the before mark is set again), that run's results kept,
 * the suite again through suite(arg). The last run's results are left in *tests; the caller
 * takes the after-snapshot and calls repeat_step_finish. Returns 0, or -1 with err (a
 * snapshot or a run failed: the run cannot be judged). */
int repeat_step_loop(struct repeat_step *st, struct session *ses, int rpc_timeout_ms,
                     const struct snapshot *before, struct test_run *tests, repeat_suite_fn suite,
                     void *arg, char *err, size_t errlen);

/* After the after-snapshot (last): records run n, builds the judged pair and appends the
 * earlier runs' failed and invalid tests to *tests, named "NAME (run K)", so that a failure
 * in any run fails the gate. 0, or -1 on allocation failure. */
int repeat_step_finish(struct repeat_step *st, const struct snapshot *last, struct test_run *tests);

void repeat_step_clear(struct repeat_step *st);

#endif
