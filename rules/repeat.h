/* rules/repeat.h: `gate run --repeat N`: the suite run N times in one node, a GC'd snapshot
 * after each run, and what the rules judge: the growth that continues after the warm-up.
 *
 * Method (documented in docs/reading-findings.md and gate.toml): run 1 is the warm-up (caches
 * fill, code and first-use tables load). For every category the growth of each later run k
 * (2..N) is g_k = S_k - S_(k-1), where S_k is the GC'd snapshot after run k. The continuing
 * growth is the SMALLEST of g_2..g_N: memory that grew in every run after the warm-up grew at
 * least that much each time, while a plateau (a cache that is full after run 1), or a
 * one-off jump in a single run, gives a smallest growth of about zero. The rules then judge
 * a synthetic pair: before = S_1 (after the warm-up), after = S_1 + (N-1) x that smallest
 * growth, i.e. what runs 2..N would have added had each grown by only its smallest share.
 * The same applies to the process, ETS table and atom counts. The deep parts of the
 * judged after-snapshot (processes, tables, born processes) are the real last snapshot's:
 * processes and tables born are counted from S_1 on (the probe's before mark is set again
 * after the warm-up), so what run 1 started and kept is not charged.
 *
 * Ownership: struct repeat_data owns its runs array; repeat_data_clear frees it. The judged
 * pair borrows the deep parts of the snapshots it was built from. Nothing here does I/O.
 */
#ifndef GATE_RULES_REPEAT_H
#define GATE_RULES_REPEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"
#include "rules/structure.h"

/* Most runs gate accepts for --repeat. */
#define REPEAT_MAX 100

/* The figures of one GC'd snapshot around one run. */
struct repeat_point {
	int64_t mem[MEM_CAT_COUNT];
	bool have[MEM_CAT_COUNT];
	int64_t process_count;
	int64_t ets_count;
	int64_t atom_count;
};

/* One run of the suite and the snapshot after it. */
struct repeat_run {
	struct repeat_point after;
	size_t tests;    /* tests the run recorded */
	size_t failed;   /* failed or invalid */
	int64_t wall_us; /* mix test's wall time in the node */
};

struct repeat_data {
	struct repeat_point start; /* the before-snapshot, before run 1 */
	struct repeat_run *runs;   /* runs[0] is run 1 (the warm-up) */
	size_t n;
	size_t cap;
};

/* The figures of s. */
void repeat_point_from(struct repeat_point *out, const struct snapshot *s);

/* Appends a run; 0, or -1 on allocation failure (d unchanged). */
int repeat_data_add(struct repeat_data *d, const struct snapshot *after, size_t tests,
                    size_t failed, int64_t wall_us);
void repeat_data_clear(struct repeat_data *d);

/* The figures of run k (1-based; 0: the before-snapshot) and its growth over the previous. */
const struct repeat_point *repeat_point_at(const struct repeat_data *d, size_t k);
int64_t repeat_run_growth(const struct repeat_data *d, size_t k, enum mem_cat c);

/* The smallest growth of category c over runs 2..N (0 when N < 2 or the category is
 * missing from a snapshot). */
int64_t repeat_continuing(const struct repeat_data *d, enum mem_cat c);

/* Builds the pair the rules judge (see above): *before_out is a shallow copy of warm
 * (the snapshot after run 1), *after_out a shallow copy of last (after run N) with the
 * categories and counts replaced by warm + (N-1) x the smallest per-run growth (never
 * below 0). Both borrow the deep parts: never snapshot_clear them. Returns 0, or -1 when
 * d has fewer than 2 runs. */
int repeat_judged_pair(struct snapshot *before_out, struct snapshot *after_out,
                       const struct repeat_data *d, const struct snapshot *warm,
                       const struct snapshot *last);

/* Appends to every "growth" finding of out what it judged: "; --repeat N: ...". Returns 0,
 * or -1 on allocation failure. */
int repeat_annotate(struct findings *out, const struct repeat_data *d);

/* structures that grow in every run. snaps[0] is the before-snapshot, snaps[k] the
 * deep snapshot after run k (k = 1..n; from run 2 on taken with the after mark, so that
 * their growth lists say each process's figures since run 1). A table (rows or bytes), a
 * process (refc binaries or memory after GC), a group of processes born and left alive, or
 * the persistent_term keys of one shape that grew in every run 2..n by at least cfg's
 * repeat_* minimum, the largest growth at most repeat_spread times the smallest, is a leak
 * whatever its size: one FAIL under rule "structure" per structure (subjects as the
 * structure rule's: "table X", "process X", "group K", "persistent_term K"), unless an
 * earlier failing finding names it already; else one PASS "repeat". Nothing when n < 3
 * (one growth after the warm-up says nothing of a trend) or a snapshot lacks its growth
 * lists. Returns 0, or -1 on allocation failure. */
int repeat_structures_check(struct findings *out, const struct snapshot *const *snaps, size_t n,
                            const struct structure_config *cfg);

#endif
