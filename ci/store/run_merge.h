/* ci/store/run_merge.h: `gate merge`: the partitions' run results (ci/store/run_json_read.h)
 * checked against each other and joined into one run the writers know (model/finding.h,
 * model/tests.h, the cluster's shape of ci/report/junit.h and ci/report/summary.h): every test
 * once, with its partition; every finding once, labelled with its partition; one verdict.
 *
 * Ownership: struct run_merged owns what it holds (run_merged_clear); it keeps no pointer to
 * the results it was built from.
 */
#ifndef GATE_CI_STORE_RUN_MERGE_H
#define GATE_CI_STORE_RUN_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ci/store/run_json_read.h"
#include "model/finding.h"
#include "model/tests.h"
#include "rules/baseline.h"

/* The most partitions gate merges (and --allow-missing names). */
#define RUN_MERGE_MAX 256

/* The refusals, in this order, each naming the files and the fix: a result that is not a
 * partition's; results of different --partitions N, commits, configurations or gate versions;
 * the same partition twice; a test that ran in two partitions; a partition missing that
 * allow (allow[k] true: partition k may be missing; NULL: none may) does not excuse; an allowed
 * one beyond N. r must be in any order, n >= 1. Returns 0, or -1 with err. */
int run_merge_check(const struct run_result *r, size_t n, const bool *allow, size_t nallow,
                    char *err, size_t errlen);

struct run_merged {
	int partitions;           /* N */
	size_t n;                 /* partitions present */
	int *present;             /* their numbers, ascending */
	char **labels;            /* "partition k/N", as present */
	struct findings *per;     /* each present partition's findings, as present */
	struct findings findings; /* all of them, subjects "partition k/N: SUBJECT" */
	struct test_run tests;    /* every test, each with its partition */
	int64_t started;          /* the earliest partition's start */
	bool failed_unexplained;  /* a partition failed for a reason its findings and tests do
	                             not carry (its run failed late): a failing finding says so */
};

/* Sorts r by partition, the order the merged reports show them in. */
void run_merge_sort(struct run_result *r, size_t n);

/* Builds the merged run from r (checked by run_merge_check, sorted by run_merge_sort). Returns 0,
 * or -1 when out of memory (out is then cleared). */
int run_merge_build(struct run_merged *out, const struct run_result *r, size_t n);

void run_merged_clear(struct run_merged *m);

/* Each result's before and after figures of a category made the ones its growth rule judged
 * (the "growth" finding of that category, when there is one): so the "what grew" tables say
 * what each partition's memory table says (code with the literals of loaded modules, as gate
 * shows code everywhere), never a second, raw figure beside it. */
void run_merge_judged_figures(struct run_result *r, size_t n);

/* What grew in each partition (its node's after minus before, by erlang:memory category) and
 * in the whole suite (their sum), as a table for people; r as given to run_merge_build. */
void run_merge_growth_print(FILE *out, const struct run_result *r, size_t n, bool color);

/* The whole suite's figures as one baseline (each category summed over the partitions'
 * baselines, the tests counted together): the summary `gate merge --commit` notes on its
 * commit, so that `gate baseline history` shows the merged runs. Returns 0, or -1 when no
 * result has a baseline or out of memory (out then zeroed). */
int run_merge_baseline_whole(struct baseline *out, const struct run_result *r, size_t n);

#endif
