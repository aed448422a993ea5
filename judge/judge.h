/* judge/judge.h: where the verdict's findings are made, in one place. judge_run runs one
 * ordered table of steps (judge/judge.c): the rules, one leak one finding, what grew, the
 * structures that grew in every run, the trend of the samples, the baseline, the fine level,
 * then the culprits, the tests' own limits and severity. One node's run, a --repeat run, each
 * node of a cluster and a merged run are judged by it alike; each gives what it has, and a
 * step whose input is absent does not run.
 *
 * A new rule is one file in rules/ (its X_check) and one line in the table, with its configuration
 * where every rule's is (rules/rules.h's rules_config and its default, its keys in
 * gate/config/config_schema.c).
 */
#ifndef GATE_JUDGE_JUDGE_H
#define GATE_JUDGE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/baseline.h"
#include "rules/repeat.h"
#include "rules/reproduce.h"
#include "rules/rules.h"
#include "rules/trend_samples.h"

/* The stored baseline a run is compared with, and the history of earlier runs. */
struct judge_baseline {
	const struct baseline *base; /* NULL: none at the ref (a finding says so) */
	const char *where;           /* where it was read, or looked for */
	const struct baseline *history;
	size_t nhistory;
};

/* What is judged. Absent parts (NULL) skip the steps that need them. */
struct judge_input {
	/* the window the rules judge: the run, or under --repeat runs 2..N */
	const struct snapshot *before, *after;
	/* the whole run, for the peak (the same as the window without --repeat) */
	const struct snapshot *run_before, *run_after;
	const struct rules_config *cfg;
	/* the suite's results (the atoms its test names cost, a culprit's file and line); NULL:
	 * no suite */
	const struct test_run *tests;
	/* the suite ran where these snapshots were taken (not so on a cluster's other nodes):
	 * culprit tests and the tests' own limits are matched here only */
	bool tests_here;
	/* --repeat: the figures after every run, and the deep snapshots from the
	 * before-snapshot to the last run (runs[0] before, runs[k] after run k) */
	const struct repeat_data *repeat;
	const struct snapshot *const *runs;
	size_t nruns;
	const struct sample_series *samples;   /* --sample */
	const struct judge_baseline *baseline; /* NULL: no comparison (outside git, a cluster) */
	bool warn_only;                        /* every memory finding a warning */
	bool merged; /* the findings were made by each partition's run: only severity applies */
	/* the command that reproduces a finding, at its end (rules/reproduce.h); NULL: none */
	const struct reproduce_cmd *reproduce;
	/* stop after the step of this name ("what grew": the rules, consolidated and named);
	 * NULL runs every step */
	const char *last_step;
};

/* Appends the findings of every step that applies to out. Returns 0, or -1 with err ("out of
 * memory ..." naming the step, or a tag that does not parse, naming the test). */
int judge_run(const struct judge_input *in, struct findings *out, char *err, size_t errlen);

/* The names of the steps in order, NULL-terminated (for CONTRIBUTING.md's code map and tests). */
const char *const *judge_step_names(void);

#endif
