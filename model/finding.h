/* model/finding.h: a finding: what a rule judged, its figures and verdict, how the
 * writers show it, and the list a run's findings are kept in */
#ifndef GATE_MODEL_FINDING_H
#define GATE_MODEL_FINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/figures.h"
#include "model/snapshot.h"

/* Ownership: every char * in these structs is owned by the struct that holds it and freed by
 * the matching *_free / *_clear function. *_free(NULL) and *_clear on a zeroed struct are
 * no-ops. Nothing here does I/O. */

enum verdict { VERDICT_PASS, VERDICT_FAIL, VERDICT_SKIP };

const char *verdict_name(enum verdict v);

/* How the writers show a finding's figures, said by the rule that makes it (findings_show),
 * so that no writer matches a rule's name: a new rule needs no writer edit. */
enum finding_unit {
	UNIT_BYTES, /* before, after, delta and floor are bytes (the default) */
	UNIT_COUNT  /* they are counts (the ports rule); the other rules give bytes even when
	             * they judge a count (atoms, born processes), which their messages say */
};
enum finding_show {
	/* a row of the erlang:memory table (before, after, grew, judged, %, limit): its subject
	 * names a category; the reports chart it */
	SHOW_CATEGORY = 1u << 0,
	/* failing, it spells its figures out (before, after, delta, limit); without it, its
	 * message says it all */
	SHOW_FIGURES = 1u << 1,
	/* passing, it is a row no one asked about (a table no limit named): the JUnit leaves it
	 * out */
	SHOW_QUIET_PASS = 1u << 2,
	/* judged against the project's own history: failing or warned, it calls for a review
	 * comment */
	SHOW_REGRESSION = 1u << 3,
	/* failing, it is a cluster node that failed or left the run, not a memory rule: the
	 * verdict counts it as a node lost */
	SHOW_NODE_LOST = 1u << 4,
	/* the findings of its rule shown so are one comparison: one JUnit testcase, failing when
	 * one of them fails, its failure listing the rows that failed */
	SHOW_ONE_CASE = 1u << 5,
	/* it stands for the culprits past the ones named ("and 12 more ..."): no culprit of its
	 * own */
	SHOW_MORE = 1u << 6,
	/* the code row, judged with the literal area of the loaded modules: the summary says what
	 * it subtracted even when nothing was */
	SHOW_WITH_LITERALS = 1u << 7,
};

/* One rule applied to one subject (e.g. rule "growth", subject "binary"). */
/* What a step after the rule adds to a finding's sentence (finding_part_add). */
enum finding_part_kind {
	PART_GREW,    /* before the rule's words: what grew, named by the drill-down */
	PART_ORIGINS, /* before: the allocation origins that explain it */
	PART_WARNING, /* before: "warning: ", its severity made it one */
	PART_INSIDE,  /* after: what grew inside the process it names */
	PART_RUNS,    /* after: --repeat's growth run after run */
	PART_CULPRIT, /* after: the likely culprit (the tests' readings, the RSS edges) */
	PART_CONTEXT, /* after: what explains it, now that it passes as context */
	PART_CONFIRM, /* after: the culprit's test file run alone (gate run --confirm) */
	/* last, whatever was added after it: the command that reproduces it
	 * (rules/reproduce.h) */
	PART_REPRODUCE,
};

struct finding_part {
	enum finding_part_kind kind;
	bool before; /* put ahead of the rule's words, its text carrying its separator */
	char *sep;   /* after: put between when anything precedes it */
	char *text;
};

struct finding {
	char *rule;    /* "growth" */
	char *subject; /* "binary" */
	enum verdict verdict;
	int64_t before;
	int64_t after;
	int64_t delta;  /* the growth the rule judged: after - before unless the rule says */
	int64_t floor;  /* growth below this many bytes never fails */
	double max_pct; /* allowed growth in percent; < 0 when the rule has none */
	/* one line, what a reader reads: the rule's own words (what) with the parts the judge's
	 * later steps added around them, made by finding_sentence alone (finding_part_add) */
	char *message;
	char *detail; /* more lines for people, e.g. the likely culprits; may be NULL */
	/* what the rule subtracted from after - before to get delta, and why, for people:
	 * "code and literals +3.7 MB (modules the suite loaded), free heap +0.1 MB (...)";
	 * NULL when it judged the raw growth */
	char *explained;
	/* its severity, and where it points a reviewer (rules/tags.h) */
	bool warned;        /* it failed, but its severity is warn: a pass that says so */
	char *culprit;      /* the culprit test module ("Elixir.Foo.BarTest"); NULL when none */
	char *culprit_test; /* and its test, when one test stands out or a tag judged it */
	char *file;         /* where a reviewer looks: the culprit's test file; NULL when none */
	int line;           /* and line, 0 when unknown */
	/* how its figures are shown (findings_show); findings_add sets bytes and no flags */
	enum finding_unit unit;
	unsigned show; /* enum finding_show flags */
	/* one cause, one failing finding, across every rule family
	 * (rules/consolidate.h). The contract for a rule (growth, ets, binary, process, atom,
	 * persistent_term, ports, a structure rule of rules/structure.c, ...): a finding that
	 * names ONE structure fills, when it fails, structure_key (how two findings tell they
	 * name the same thing: "ets:NAME", "proc:<0.1.0>", "atoms", "persistent_term",
	 * "ports", "born", "ets_owner:PID": the tables created during the run that PID owns),
	 * structure (the same for people: "ETS table sessions") and explains (the structure's
	 * growth in bytes in every erlang:memory category it counts in, parents included: an ETS
	 * table's bytes in ets, system and total, the refc binaries its rows hold in binary, system
	 * and total). Nothing else: consolidation then keeps one failing finding per structure and
	 * turns every other finding whose growth those structures explain (the growth, baseline and
	 * trend rows of a category, the tags' limits) into context, saying so in explained_by. */
	char *structure_key;             /* NULL: the finding names no structure */
	char *structure;                 /* for people; NULL when structure_key is */
	int64_t explains[MEM_CAT_COUNT]; /* bytes; 0 where it counts in none */
	/* a finding that judges the summed growth of several categories (the tags' max_growth),
	 * as bits 1u << enum mem_cat; 0: its subject's category when it is one, else none */
	unsigned judges;
	/* set by consolidation on a finding it turned into context: what explains it,
	 * "ETS table sessions (+6.7 MB)"; every writer shows it with the message */
	char *explained_by;
	/* the rule's own words, kept once a part is added (NULL: message is them) */
	char *what;
	/* what the judge's steps after the rule added, in the order they added it */
	struct finding_part *parts;
	size_t nparts;
	/* the drill-down's lead already says what grew inside the process the finding names */
	bool inside_named;
};

struct findings {
	struct finding *items;
	size_t count;
	size_t cap;
};

/* Appends a finding, copying the strings. Returns 0, or -1 on allocation failure. */
int findings_add(struct findings *list, const char *rule, const char *subject, enum verdict verdict,
                 int64_t before, int64_t after, int64_t floor, double max_pct, const char *message);
/* Appends a copy of f, every field, under subject (f's own when NULL). Returns 0, or -1 on
 * allocation failure (nothing appended). */
int findings_add_copy(struct findings *list, const struct finding *f, const char *subject);
/* after - before, saturated at the int64 limits (figures come from outside). */
int64_t finding_raw_delta(const struct finding *f);
/* The rule judged another delta than after - before (e.g. net of code growth). */
bool finding_adjusted(const struct finding *f);
/* Says how the findings from list->items[first] on show their figures: the unit, and show
 * flags added to theirs. A rule calls it on the findings it appended. */
void findings_show(struct findings *list, size_t first, enum finding_unit unit, unsigned show);
/* The rule's name for people: "rule" when it has none. Borrowed. */
const char *finding_rule_name(const struct finding *f);
/* Whether a and b come from the same rule. */
bool finding_same_rule(const struct finding *a, const struct finding *b);
/* One figure of f (its before, after, delta or floor) in f's unit: "13.7 MB", "20 000". */
void finding_figure_format(char *buf, size_t len, const struct finding *f, int64_t v);
void findings_clear(struct findings *list);

/* Adds a part to f's sentence and makes f->message anew (finding_sentence): the one way a step
 * after the rule adds to what a finding says; nothing edits or searches the text itself.
 * before: ahead of everything said so far (text carries its separator: "what grew; ",
 * "warning: "); else at the end, sep first when anything precedes it. Returns 0, or -1 when
 * out of memory (f unchanged). */
int finding_part_add(struct finding *f, enum finding_part_kind kind, bool before, const char *sep,
                     const char *text);
/* Replaces the rule's own words (a judgement made again), keeping the parts. 0 or -1. */
int finding_what_set(struct finding *f, const char *what);
/* Whether f has a part of kind (with that text, when text is not NULL). */
bool finding_has_part(const struct finding *f, enum finding_part_kind kind, const char *text);

/* What acts on a failing finding, for a writer that shows it apart from the sentence (which
 * it may cut): out[0] its PART_CONFIRM, out[1] its PART_REPRODUCE, each NULL unless it ends
 * the message; returns the length of the message before them. */
size_t finding_acting_split(const struct finding *f, const struct finding_part *out[2]);
size_t findings_failed(const struct findings *list);

#endif
