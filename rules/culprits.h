/* rules/culprits.h: what the rules share to name their culprits: display names, counts
 * written for people, and the list that ranks culprits and caps how many are reported.
 *
 * Ownership: struct culprits owns its array (culprits_clear frees it); the strings the
 * display helpers return are borrowed from their argument. Nothing here does I/O.
 */
#ifndef GATE_RULES_CULPRITS_H
#define GATE_RULES_CULPRITS_H

#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"

/* A limit that is not applied ("off" in gate.toml): int64_t limits hold RULES_OFF, percent
 * limits any negative value. */
#define RULES_OFF ((int64_t)-1)

/* How many culprits one rule family reports by name before one "and N more" finding. */
#define RULES_MAX_CULPRITS 10

/* "Elixir.Foo.Bar" as Elixir writes it, "Foo.Bar"; anything else unchanged; NULL stays NULL. */
const char *rules_display(const char *name);

/* 60000 as "60 000", -1234 as "-1 234". */
void rules_count_format(char *buf, size_t len, int64_t n);

/* A process for messages: "LeakBin.Holder (<0.123.0>)" when registered, else
 * "<0.123.0> (Foo.Server:init/1)", else the pid alone; "?" for a missing pid. */
void rules_proc_label(char *buf, size_t len, const struct proc_info *p);

/* A process as a finding's subject: its registered name, else its pid ("?" when neither). */
const char *rules_proc_subject(const struct proc_info *p);

/* names p the structure of f (rules/consolidate.h): key "proc:PID", label "process NAME",
 * explaining bytes of category cat. Returns 0, or -1 on allocation failure. */
int rules_proc_structure(struct finding *f, const struct proc_info *p, enum mem_cat cat,
                         int64_t bytes);

/* The same for a process known by its pid only: key "proc:PID" (pid NULL: "?"), the given
 * label. Every rule keys a process through here, so that consolidation sees one structure. */
int rules_pid_structure(struct finding *f, const char *pid, const char *label, enum mem_cat cat,
                        int64_t bytes);

/* An ETS table as the structure of f: key "ets:NAME", label "ETS table NAME", its growth in
 * ets and the refc binaries its rows hold in binary. Returns 0, or -1 on allocation failure. */
int rules_table_structure(struct finding *f, const char *name, int64_t ets_bytes,
                          int64_t bin_bytes);

/* The process with pid in s, or NULL (pid NULL, or not in the snapshot's lists). */
const struct proc_info *rules_proc_find(const struct snapshot *s, const char *pid);

struct culprit {
	size_t index; /* into the rule's own array (procs, ets, allocs) */
	int64_t key;  /* how bad: reported largest first */
};

struct culprits {
	struct culprit *items;
	size_t count;
	size_t cap;
};

/* Appends one; returns 0, or -1 on allocation failure. */
int culprits_add(struct culprits *list, size_t index, int64_t key);
/* Largest key first; equal keys keep the order they were added in. */
void culprits_sort(struct culprits *list);
void culprits_clear(struct culprits *list);

/* Appends the FAIL finding that stands for the culprits past RULES_MAX_CULPRITS:
 * "and N more <what>" with subject. Does nothing when list has at most RULES_MAX_CULPRITS.
 * Returns 0, or -1 on allocation failure. */
int culprits_add_more(struct findings *out, const char *rule, const char *subject,
                      const struct culprits *list, const char *what);

#endif
