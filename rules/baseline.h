/* rules/baseline.h: the baseline rules: the after-snapshot against the committed baseline
 * (per category and per named ETS table), and the trend over the notes history.
 * The rules are pure; reading and writing baselines lives in ci/baseline*.c. */
#ifndef GATE_RULES_BASELINE_H
#define GATE_RULES_BASELINE_H

#include "model.h"

struct baseline_config {
	char *path;          /* in the repository; default ".gate/baseline.json" */
	char *ref;           /* where the baseline is read from; default "origin/main", falling
				back to HEAD; "worktree" reads the working tree */
	char *notes_ref;     /* default "refs/notes/gate" */
	bool require;        /* a missing baseline fails instead of skipping; default false */
	bool skip_ci;        /* add "[skip ci]" to the commit message; default false */
	double max_pct;      /* after vs baseline, per category and named ETS table; default 20 */
	int64_t floor_bytes; /* growth under this never fails; default 1 MB */
	int trend_window;    /* N: the rolling mean of the last N history entries; default 10 */
	double trend_sigma;  /* k; default 3.0 */
	double trend_min_pct; /* p: the trend rule fails above mean + max(k*sigma, p % of mean);
				 default 10 */
};

#endif
