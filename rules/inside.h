/* rules/inside.h: inside a process that grew, in words: which part of its state, its
 * process dictionary, its mailbox or its handlers grew, with counts before and after, and
 * who started a process born during the run.
 *
 * Reads struct proc_inside (the probe's summaries at the after-snapshot, and at the
 * before-snapshot when the process was read then) and struct starter. Pure: no I/O, no
 * allocation; texts are cut at the buffer's length.
 */
#ifndef GATE_RULES_INSIDE_H
#define GATE_RULES_INSIDE_H

#include <stddef.h>
#include <stdint.h>

#include "model/snapshot.h"

/* The look inside the process pid in after, or NULL (not looked at, or no pid). */
const struct proc_inside *inside_find(const struct snapshot *after, const char *pid);

/* One part compared with itself at the before-snapshot. */
struct inside_change {
	const struct inside_part *now;
	const struct inside_part *was; /* NULL: born (from nothing) or not read before */
	bool known;                    /* the before is known: read, or born (from nothing) */
	int64_t count_before;
	int64_t bytes_before;   /* -1: not sized */
	int64_t dcount, dbytes; /* growth; dbytes 0 when either side is not sized */
};

/* Compares in's parts with its parts before, part by part (same kind and place: a field, a
 * key, a shape), into out (up to max), the largest growth in bytes first (in count when not
 * sized); returns how many. A part that is gone now is not listed. */
size_t inside_compare(struct inside_change *out, size_t max, const struct proc_inside *in);

/* Writes what grew inside in, e.g. "its state's field :keys (a MapSet) grew 12 -> 15 012
 * members, +2.4 MB" (at most two parts, those that grew), "process dictionary +22 800 keys
 * {:session, _} (0 -> 22 800), +1.1 MB", "mailbox 14 000 messages {:DOWN, ...}"; "its state
 * did not grow (...): the +3.0 MB is heap, not state" when the state was read and no part of
 * it grew by a twentieth of memory_growth; "not inspected: WHY" for a process not asked.
 * Empty when there is nothing to say. */
void inside_describe(char *buf, size_t len, const struct proc_inside *in, int64_t memory_growth);

/* "started by test \"test spawns\" (test/a_test.exs:12, in A.Test), with
 * A.Test.-test spawns/1-fun-0-/0, via A.Sup"; empty when nothing is known. */
void inside_starter_text(char *buf, size_t len, const struct starter *s);

/* Whether a and b name the same test (its name, file, line and module; a names one). */
bool inside_starter_same_test(const struct starter *a, const struct starter *b);

#endif
