/* model/verdict.h: the gate's verdict: one decision, used by the exit code, the console
 * summary and every report (docs/how-it-works.md, "Exit codes") */
#ifndef GATE_MODEL_VERDICT_H
#define GATE_MODEL_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "model/finding.h"
#include "model/tests.h"

enum gate_verdict {
	GATE_PASSED, /* every memory rule and every test passed: exit 0 */
	GATE_FAILED, /* a memory rule or a test failed, a node was lost, the suite did not finish,
	                or bare `mix test` would exit non-zero: exit 1 */
	GATE_ERROR   /* gate could not run: exit 2 */
};

/* What the verdict is made of, counted, so that the verdict line can say why. */
struct verdict_tally {
	bool error;        /* gate could not run (nothing else counts then) */
	size_t rules;      /* failing memory findings; a warning (severity warn) is none */
	size_t tests;      /* failed or invalid tests */
	size_t nodes_lost; /* cluster nodes that failed or left the run */
	bool unfinished;   /* ExUnit never reported the end of the suite */
	bool mix_red;      /* bare `mix test` would exit non-zero (mix_status) */
	int mix_status;    /* that status when the failed tests are not the whole reason; else 0 */
};

/* The tally of one run: findings and tests may be NULL (none were judged or none ran). A
 * failing finding shown SHOW_NODE_LOST counts in nodes_lost, every other failing one in
 * rules. A cluster's console summary adds its other nodes' failing findings to rules and its
 * lost nodes to nodes_lost. */
struct verdict_tally model_verdict_tally(const struct findings *findings,
                                         const struct test_run *tests);
/* ERROR when t->error; FAILED when anything in t counts against the run; else PASSED. */
enum gate_verdict model_verdict(const struct verdict_tally *t);
const char *model_verdict_name(enum gate_verdict v); /* "PASSED", "FAILED", "ERROR" */
/* Why, for a verdict line: "1 memory rule, 2 tests, 1 node lost, the test suite did not finish,
 * mix test exit status 3"; "gate could not run"; "" when it passed. Truncated to len. */
void model_verdict_why(char *buf, size_t len, const struct verdict_tally *t);

#endif
