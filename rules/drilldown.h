/* rules/drilldown.h: what grew, named first. A failing category says which structure grew ("ETS
 * table corpus_cache (owner Corpus.Cache) +60 000 rows, +7.1 MB; ets grew ..."), before the
 * attribution says which test module grew it.
 *
 * Reads the after-snapshot's diff against the before set (struct proc_growth, ets_growth,
 * key_group: computed in the node), the born-process groups and persistent_term and atom
 * figures. Pure: no I/O, no allocation but the rewritten messages.
 */
#ifndef GATE_RULES_DRILLDOWN_H
#define GATE_RULES_DRILLDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"

enum drill_kind {
	DRILL_ETS,     /* an ETS table grew in bytes or rows */
	DRILL_PROCESS, /* a process's memory grew (its heap, its mailbox) */
	DRILL_BINARY,  /* a process holds more refc binary bytes */
	DRILL_BORN,    /* processes born during the run and still alive, by their top group */
	DRILL_PTERM,   /* persistent_term entries */
	DRILL_ATOMS,   /* atoms created */
	DRILL_KIND_COUNT
};

/* "ETS table", "process", ...: the kind's column in a table of what grew. */
const char *drill_kind_name(enum drill_kind kind);

/* One structure that grew, written for people. */
struct drill_item {
	enum drill_kind kind;
	int64_t bytes; /* how many bytes it grew by (0 when only counted, e.g. atoms) */
	int64_t by_cat[MEM_CAT_COUNT]; /* of those, how many count in each category */
	char text[1536]; /* "ETS table corpus_cache (owner Corpus.Cache) +60 000 rows, +7.1 MB" */
	/* the structure as a finding names it (struct finding's structure_key and structure,
	 * rules/consolidate.h): "ets:corpus_cache", "ETS table corpus_cache" */
	char key[320];
	char label[400];
	/* where text says who started it ("started by \"test ...\" (file:line, in M)", ...):
	 * offset and length, 0 long when it says nothing of it; a finding that names two items
	 * started alike says it once */
	size_t started_at, started_len;
	bool inside; /* text says what grew inside the process (key "proc:PID") */
};

/* The refc binary bytes the new rows of e hold: all of a table created during the run, the
 * new rows' share of a table that grew (rows alike: the probe measured them, up to its bound,
 * rows.c says how many). */
int64_t drilldown_ets_bin(const struct ets_growth *e);

/* How many structures drilldown_list finds at most. */
#define DRILL_MAX 64

/* Writes to out (up to max) every structure that grew between before and after, largest
 * bytes first, and returns how many. Nothing when after has no diff (after->have_growth
 * false) and no born processes; before may be NULL (persistent_term and atoms are then
 * not compared). */
size_t drilldown_list(struct drill_item *out, size_t max, const struct snapshot *before,
                      const struct snapshot *after);

/* What the n structures of items grew in category c, their growth only (a structure that
 * shrank counts 0): the bytes of c that a structure gate names holds. */
int64_t drilldown_held(const struct drill_item *items, size_t n, enum mem_cat c);

/* Rewrites the message of every failing finding that judges a category or a count without
 * naming what grew, to lead with the structures that grew most in it: any rule whose subject
 * is an erlang:memory category (growth, baseline, trend; the structures whose bytes count in it and
 * that grew by at least a tenth of the judged growth, at most two), the ETS total (tables), the
 * born processes (their largest group) and the atom count (atoms by shape). Other findings (they
 * name their table or process already) and findings with nothing to name are left as they
 * are; so is a message that leads with its structures already (calling it twice names
 * nothing twice). before and after may be NULL (nothing is done). Returns 0, or -1 on allocation
 * failure (a message is then left as it was). */
int drilldown_annotate(struct findings *findings, const struct snapshot *before,
                       const struct snapshot *after);

#endif
