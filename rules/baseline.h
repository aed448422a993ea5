/* rules/baseline.h: the baseline rules: the after-snapshot against the committed baseline
 * (per category and per named ETS table), and the trend over the notes history.
 * The rules are pure; reading and writing baselines lives in ci/baseline*.c.
 *
 * Ownership: every char * in struct baseline is owned by it and freed by baseline_clear;
 * baseline_clear on a zeroed struct is a no-op. Nothing here does I/O. */
#ifndef GATE_RULES_BASELINE_H
#define GATE_RULES_BASELINE_H

#include "model/finding.h"

/* The defaults of the string fields of struct baseline_config; NULL in a field means these. */
#define BASELINE_DEFAULT_PATH ".gate/baseline.json"
#define BASELINE_DEFAULT_REF "origin/main"
#define BASELINE_DEFAULT_NOTES_REF "refs/notes/gate"
/* The pseudo-ref that reads the baseline from the working tree instead of git's objects. */
#define BASELINE_REF_WORKTREE "worktree"

struct baseline_config {
	char *path;           /* in the repository; default ".gate/baseline.json" */
	char *ref;            /* where the baseline is read from; default "origin/main", falling
	                         back to HEAD; "worktree" reads the working tree */
	char *notes_ref;      /* default "refs/notes/gate" */
	bool require;         /* a missing baseline fails instead of skipping; default false */
	bool skip_ci;         /* add "[skip ci]" to the commit message; default false */
	double max_pct;       /* after vs baseline, per category and named ETS table; default 20 */
	int64_t floor_bytes;  /* growth under this never fails; default 1 MB */
	int trend_window;     /* N: the rolling mean of the last N history entries; default 10 */
	double trend_sigma;   /* k; default 3.0 */
	double trend_min_pct; /* p: the trend rule fails above mean + max(k*sigma, p % of mean);
	                         default 10 */
};

/* Fills the numbers and flags with the defaults above and sets the three strings to NULL
 * (= BASELINE_DEFAULT_*), so that whoever owns the config can free them unconditionally. */
void baseline_config_default(struct baseline_config *cfg);

/* The version of the baseline file format this gate writes and reads. A file with a higher
 * version was written by a newer gate and is refused. */
#define BASELINE_FORMAT_VERSION 1

/* One named ETS table in a baseline: the tables of that name in the snapshot, summed. */
struct baseline_ets {
	char *name;
	int64_t memory; /* bytes */
	int64_t size;   /* rows */
};

/* One allocator type, carriers and blocks as in struct alloc_info. */
struct baseline_alloc {
	char *type;
	int64_t carriers_size;
	int64_t blocks_size;
};

/* A baseline: the after-snapshot figures of one run, with where and how they were measured.
 * Also the form of one history entry (a git note), which has no ets and allocs. */
struct baseline {
	int format_version;   /* BASELINE_FORMAT_VERSION */
	char *gate_version;   /* "0.1.0"; NULL when unknown */
	char *otp_release;    /* "25"; NULL when unknown */
	char *elixir_version; /* "1.14.0"; NULL when unknown */
	char *commit;         /* hex id of the commit measured; NULL when unknown */
	bool commit_dirty;    /* the working tree had local changes besides the baseline file:
	                         the figures are of commit plus those ("worktree" in the file) */
	int64_t timestamp;    /* unix seconds of the run */
	int64_t test_count;
	int64_t mem[MEM_CAT_COUNT]; /* bytes */
	bool have[MEM_CAT_COUNT];
	int64_t process_count;
	int64_t atom_count;
	struct baseline_ets *ets; /* sorted by name (strcmp), names unique */
	size_t nets;
	struct baseline_alloc *allocs; /* sorted by type (strcmp), types unique */
	size_t nallocs;
};

/* Where a baseline comes from besides the snapshot: every field may be NULL / 0. */
struct baseline_meta {
	const char *gate_version;
	const char *elixir_version;
	const char *commit;
	bool commit_dirty;
	int64_t timestamp;
	int64_t test_count;
};

/* Builds out (which must be zeroed or cleared) from the after-snapshot: its categories,
 * process and atom counts, otp_release, its named ETS tables (summed by name, unnamed
 * tables left out) and its allocators (summed by type); meta's strings are copied.
 * Returns 0, or -1 on allocation failure (out is then cleared). */
int baseline_from_snapshot(struct baseline *out, const struct snapshot *after,
                           const struct baseline_meta *meta);

/* Deep copy of src into out (zeroed or cleared). Returns 0, or -1 on allocation failure
 * (out is then cleared). */
int baseline_copy(struct baseline *out, const struct baseline *src);

/* The table named name, or NULL. */
const struct baseline_ets *baseline_ets_find(const struct baseline *b, const char *name);

/* Frees the strings and arrays and zeroes the struct. NULL is a no-op. */
void baseline_clear(struct baseline *b);

/* Rule "baseline": after vs the committed baseline. One finding per category present in
 * base (subject "total", ...) and per named ETS table in base (subject "ets:NAME", bytes):
 * VERDICT_FAIL when the growth over the baseline is above both cfg->floor_bytes and
 * cfg->max_pct of the baseline figure; VERDICT_SKIP when the after-snapshot lacks the
 * category, or lacks the table while listing only part of the node's tables.
 * base == NULL (no baseline found): one finding, subject "baseline", VERDICT_SKIP with
 * "no baseline at SOURCE", or VERDICT_FAIL when cfg->require. source names where the
 * baseline was looked for ("origin/main:.gate/baseline.json"); NULL: cfg's ref and path.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int baseline_check(struct findings *out, const struct snapshot *after, const struct baseline *base,
                   const struct baseline_config *cfg, const char *source);

/* Rule "trend": each category of the after-snapshot against the last cfg->trend_window
 * history entries that have it (history is oldest first, as baseline_git_history returns
 * it). VERDICT_FAIL when after > mean + max(k * sigma, p % of mean), with k =
 * cfg->trend_sigma, p = cfg->trend_min_pct and sigma the sample standard deviation.
 * Fewer than N entries in all: one finding, subject "trend", VERDICT_SKIP saying how many
 * there are; fewer than N for one category: a VERDICT_SKIP for it. trend_window <= 0 turns
 * the rule off (no findings). finding.before is the mean (rounded), finding.floor the
 * allowed excess over it, finding.max_pct -1 (the limit is in floor).
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int trend_check(struct findings *out, const struct snapshot *after, const struct baseline *history,
                size_t nhistory, const struct baseline_config *cfg);

#endif
