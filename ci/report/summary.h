/* ci/report/summary.h: the console summary people read at the end of a run. */
#ifndef GATE_CI_REPORT_SUMMARY_H
#define GATE_CI_REPORT_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "model/finding.h"
#include "model/tests.h"

/* How many failed tests the summary names before it says "and N more". */
#define SUMMARY_FAILED_MAX 10
/* How many modules or tests the "top growing" section names. */
#define SUMMARY_TOP_GROWING 5

struct summary_opts {
	bool color;             /* ANSI colours (the caller decides: isatty, NO_COLOR, --color) */
	const char *junit_path; /* shown as "JUnit: PATH"; NULL: no such line */
	const char *node;       /* shown in the table's heading; may be NULL */
};

/* the fine level's lines (ci/report/fine_text.h: RSS against the allocators, the run's peak, the
 * largest heaps, allocation origins) under "Node memory (OS and allocators)"; nothing when the
 * snapshots carry none. before and after may be NULL. */
void summary_print_fine(FILE *out, const struct snapshot *before, const struct snapshot *after);
/* the sockets' input buffers each snapshot set aside (binary, system and total are judged without
 * them); prints nothing when none was */
void summary_print_set_aside(FILE *out, const struct snapshot *before,
                             const struct snapshot *after);

/* Prints the growth table, the failing findings' messages, the test counts with the failed
 * tests' names, the JUnit path and the verdict line ("gate: PASSED" / "gate: FAILED (...)")
 * to out. findings, run and opts may be NULL. Text from the test suite is printed with
 * escape sequences and control characters made harmless. Write errors on out are the
 * caller's to see with ferror(). */
void summary_print(FILE *out, const struct findings *findings, const struct test_run *run,
                   const struct summary_opts *opts);

/* One node of a cluster run (gate run --cluster). */
struct summary_node {
	const char *name;
	const struct findings *findings; /* may be NULL */
	const char *error;               /* non-NULL: the node failed or left the run */
};

/* The same for a cluster: a memory section per node (opts->node is not used), a line per
 * node that failed or left, then the tests and one verdict over all nodes. */
void summary_print_cluster(FILE *out, const struct summary_node *nodes, size_t n,
                           const struct test_run *run, const struct summary_opts *opts);

#endif
