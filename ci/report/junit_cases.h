/* ci/report/junit_cases.h: a comparison's rows (the baseline's, the trend's: findings shown
 * SHOW_ONE_CASE) as one JUnit testcase: which finding stands for it, its verdict, and its
 * text; and the text of any failing finding. Nothing here does I/O. */
#ifndef GATE_CI_REPORT_JUNIT_CASES_H
#define GATE_CI_REPORT_JUNIT_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/grow.h"
#include "model/finding.h"

/* Whether a and b are rows of one comparison: both SHOW_ONE_CASE, of the same rule. */
bool junit_case_same(const struct finding *a, const struct finding *b);

/* Whether f->items[i] stands for a testcase: not a row of a comparison whose first row in
 * the list stands for it already. */
bool junit_case_first(const struct findings *f, size_t i);

/* The verdict of the testcase item i stands for: a comparison fails when one of its rows
 * fails, is skipped when every row is, else passes. */
enum verdict junit_case_verdict(const struct findings *f, size_t i);

/* Appends to body the text of the comparison item i stands for: the rows that failed, those
 * that passed as context with what explains them, and how many rows it compared; *first_fail
 * is its first failing row (NULL when none). body's oom flag says whether it all fit. */
void junit_case_body(struct textbuf *body, const struct findings *f, size_t i,
                     const struct finding **first_fail);

/* Appends a failing finding's text to b: its figures when its rule says they tell it
 * (SHOW_FIGURES, in its unit), else its message; then the likely culprits
 * (rules/attribution.c), and the command that explains the rule (rules/explain.h). */
void junit_failure_body(struct textbuf *b, const struct finding *f);

#endif
