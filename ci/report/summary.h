/* ci/report/summary.h: the console summary people read at the end of a run. */
#ifndef GATE_CI_REPORT_SUMMARY_H
#define GATE_CI_REPORT_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "ci/report/report.h"

/* How many failed tests the summary names before it says "and N more". */
#define SUMMARY_FAILED_MAX 10
/* How many modules or tests the "top growing" section names. */
#define SUMMARY_TOP_GROWING 5

/* Prints the view d to out: --repeat's runs (d->repeat), the fine level's lines (RSS against
 * the allocators, the run's peak, the largest heaps, allocation origins: "Node memory (OS and
 * allocators)") and the sockets' buffers set aside, the growth table on d->node, the failing
 * findings' messages, the tests that grew most when a memory rule failed or warned, the test
 * counts with the failed tests' names, the JUnit path and the verdict line ("gate: PASSED" /
 * "gate: FAILED (...)"). With d->nodes (a cluster, or a merged run's partitions): a memory
 * section per node and a line per node that failed or left, then the tests and one verdict
 * over all nodes (d->findings is not read then). color: ANSI colours (the caller decides:
 * isatty, NO_COLOR, --color). Text from the test suite is printed with escape sequences and
 * control characters made harmless. Write errors on out are the caller's to see with
 * ferror(). */
void summary_print(FILE *out, const struct report_data *d, bool color);

#endif
