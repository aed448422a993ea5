/* rules/structure.h: the structure rule: each structure judged against its own before-figure,
 * whatever its category did in total.
 *
 * A category is a sum: a release elsewhere in it (a pool's buffers, a cache emptied) can hide
 * a structure that grew from nothing to megabytes. So every process among the top growers
 * (heap plus the refc binaries it holds after GC), every ETS table among the top growers
 * (bytes), and every group of processes born during the run and still alive (by initial call
 * or registered name) is judged on its own: it fails when it grew by more than its floor AND
 * to more than max_growth above its own before-figure (a structure born during the run has a
 * before-figure of 0). The floors keep real suites clean: their structures move by kilobytes,
 * a leak by megabytes. Small growth that repeats in every run of --repeat is rules/repeat.h's.
 *
 * Ownership: nothing is kept; findings are appended to out. Nothing here does I/O.
 */
#ifndef GATE_RULES_STRUCTURE_H
#define GATE_RULES_STRUCTURE_H

#include "model/finding.h"
#include "rules/culprits.h"

struct structure_config {
	int64_t process_floor; /* bytes a process (heap + refc binaries) may grow; 1 MB */
	int64_t table_floor;   /* bytes an ETS table may grow; 4 MB */
	int64_t group_floor;   /* bytes a group of processes born and alive may use; 4 MB */
	                       /* each RULES_OFF: that family is not judged */
	double max_growth_pct; /* and the growth must exceed this much of the before-figure;
	                          100 % (it at least doubled); < 0: the floor alone */
	/* --repeat (rules/repeat.h, repeat_structures_check): a structure that grew by at least
	 * this much in every run after the warm-up, by similar amounts, is a leak whatever its
	 * size */
	int64_t repeat_bytes; /* bytes per run (a process's refc binaries or memory, a
	                         table's bytes); 4 kB; RULES_OFF: not judged */
	int64_t repeat_rows;  /* a table's rows per run; 10; RULES_OFF: not judged */
	int64_t repeat_count; /* processes of a group, persistent_term keys of a shape per
	                         run; 1; RULES_OFF: not judged */
	double repeat_spread; /* similar: the largest growth of runs 2..N at most this many
	                         times the smallest; 4 */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void structure_config_default(struct structure_config *cfg);

/* Whether an earlier failing finding in out of one of rules (NULL-terminated) names the
 * structure name already (its subject's words after the family: "process X" -> "X"), or,
 * with whole, has exactly the subject whole. */
bool structure_failed_already(const struct findings *out, const char *const *rules,
                              const char *name, const char *whole);

/* Whether the growth rule's row of category c fails in out: the category then names what
 * grew in it (rules/drilldown.c), so a structure in it is not failed a second time. */
bool structure_category_fails(const struct findings *out, enum mem_cat c);

/* Appends, under rule "structure": one FAIL per structure over its limits (subjects "process
 * NAME", "table NAME", "group KEY", the names the process, ets and binary rules use), at most
 * RULES_MAX_CULPRITS per family then "and N more"; else one PASS per family that says the
 * largest growth. One leak, one finding: a structure that an earlier failing finding in out
 * names already (the binary rule's "process X", the process rule's "memory X", the ets rule's
 * "table X", the process rule's "born"), or whose category's growth row fails (ets for a
 * table, binary or processes_used for a process, whichever it grew more, processes_used for
 * a group: the row names the structures that grew in it), is not failed again. The rule is for
 * what its category hides: a release elsewhere in it, or growth under its percentage. SKIP when the
 * after-snapshot has no growth data (a light snapshot).
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int structure_check(struct findings *out, const struct snapshot *before,
                    const struct snapshot *after, const struct structure_config *cfg);

#endif
