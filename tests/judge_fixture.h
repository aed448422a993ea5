/* tests/judge_fixture.h: the judge's rules on two snapshots, for the rules' tests: its steps
 * up to "what grew" (the rules, one leak one finding, what grew named), as a run makes them
 * before the baseline, the fine level and the culprits. Header-only. */
#ifndef GATE_TESTS_JUDGE_FIXTURE_H
#define GATE_TESTS_JUDGE_FIXTURE_H

#include "judge/judge.h"
#include "model/finding.h"
#include "model/tests.h"

/* 0, or -1 on allocation failure (out keeps what was added). run may be NULL (no tests: the
 * atom rule's per-test allowance is 0). */
static inline int judge_rules(struct findings *out, const struct snapshot *before,
                              const struct snapshot *after, const struct test_run *run,
                              const struct rules_config *cfg)
{
	char err[256];
	struct judge_input in = {.before = before,
	                         .after = after,
	                         .run_before = before,
	                         .run_after = after,
	                         .cfg = cfg,
	                         .tests = run,
	                         .last_step = "what grew"};
	return judge_run(&in, out, err, sizeof(err));
}

#endif
