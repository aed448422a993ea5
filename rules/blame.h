/* rules/blame.h: which test module grew one structure, from the structure itself as read at
 * every test module's edges (struct module_structs), never from its category's growth.
 *
 * A category's growth between a module's edges (light snapshots, no GC) counts whatever
 * else of that category moved meanwhile: garbage in a quiet process, a neighbour's cache. A
 * failing finding that names a structure (rules/consolidate.h: "atoms", "ports",
 * "proc:PID", "ets:NAME", "ets_owner:PID") is blamed on the structure's own growth in each
 * module's window: one module with most of it is the culprit; growth seen in several
 * modules, none with most of it, is spread over the suite, and no module is named.
 *
 * Ownership: struct blame borrows its module name from the test run. Nothing here does I/O.
 */
#ifndef GATE_RULES_BLAME_H
#define GATE_RULES_BLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"
#include "model/tests.h"

enum blame_kind {
	BLAME_NO_EVIDENCE, /* the structure was not read at the edges: other evidence decides */
	BLAME_CULPRIT,     /* one module grew most of it between its edges */
	BLAME_SPREAD,      /* several modules grew it, none most of it */
	BLAME_NONE         /* the modules' windows do not account for it */
};

struct blame {
	enum blame_kind kind;
	const char *module; /* the module with the largest share (borrowed); NULL when none */
	int64_t value;      /* that share */
	int64_t judged;     /* the structure's growth over the run */
	size_t modules;     /* modules whose windows grew it by a visible share */
	bool side_by_side;  /* spread: fewer than two of them ran in a window of their own */
	bool count;         /* value and judged count atoms or ports; else bytes */
	bool per_run;       /* judged is a run's share of what --repeat judged over its runs */
	/* a culprit that did not start the structure's process: the module that did (spawn
	 * ancestry), said as context; NULL when none or the same (borrowed) */
	const char *started_by;
};

/* One structure's share must be above this fraction of its growth (1/BLAME_VISIBLE) and this
 * many bytes (or BLAME_NOISE_COUNT atoms or ports) to count as grown in a module's window. */
#define BLAME_VISIBLE 50
#define BLAME_NOISE_BYTES (32 * 1024)
#define BLAME_NOISE_COUNT 10

/* Blames f's structure on the modules of run (before and after give the atoms' growth; may
 * be NULL). out->kind is BLAME_NO_EVIDENCE when f names no structure read at the edges,
 * when run is NULL or its probe read no structures at the edges, or when the structure grew
 * by nothing. A culprit has at least half of the growth, at most four times it (plus the
 * noise: more is a swell that went again), every other module under a quarter of its share and
 * all of them together under half of it;
 * spread: two or more modules grew it visibly and together account for at least half of it;
 * side_by_side when fewer than two of those ran in a window of their own (sync, or async alone).
 * A module exempt from gate (@moduletag gate: false, rules/tags.h) is never counted. */
void blame_structure(struct blame *out, const struct test_run *run, const struct snapshot *before,
                     const struct snapshot *after, const struct finding *f);

/* What m's window grew key by (0 when it did not show). */
int64_t blame_share(const struct module_structs *m, const char *key);

/* The text a finding's message gets for b: "; likely culprit: M (...)" (with "started by S"
 * inside the parentheses when b->started_by is set), "; spread over N
 * test modules, no single one (...)" or "; no test stands out (...)"; "" for
 * BLAME_NO_EVIDENCE. */
void blame_format(char *buf, size_t len, const struct blame *b, const struct finding *f);

#endif
