/* rules/consolidate.h: one cause, one failing finding, across every rule family.
 *
 * A leak shows in many rules at once: the ETS table's own finding, the growth of ets and of
 * binary (the refc binaries its rows hold), total and system, the baseline's rows for each of
 * them and for the table, the trend, a tag's limit. They are one cause. The mechanism is the
 * one struct finding's consolidation fields describe (model/finding.h):
 *   - a finding that names a structure declares it (structure_key, structure) and the bytes
 *     it explains per erlang:memory category (explains, parents included);
 *   - of the failing findings naming the same structure, the most specific stays failing and
 *     the others pass as context;
 *   - every finding that judges categories (a growth, baseline or trend row: its subject is a
 *     category; a tag: its judges bits) is judged again net of what the failing causes before
 *     it explain, and passes as context when the rest is within its limit, saying
 *     "explained by ETS table sessions (+6.7 MB)"; one still failing is a cause in its turn
 *     (the growth of binary explains the baseline's binary row and system's share of it).
 * Causes are taken most specific first: structures (a failing tag that names what grew in its
 * test is one: the same cause as that table's or process's finding), then the run's growth
 * leaves (ets before
 * binary: ETS rows hold binaries), then total and system, then the tags, then the baseline and
 * trend rows (more evidence for a cause, not another one). Two independent leaks are two
 * structures: two failing findings.
 *
 * Nothing here does I/O.
 */
#ifndef GATE_RULES_CONSOLIDATE_H
#define GATE_RULES_CONSOLIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"

/* Sets f's structure (key and label copied; label NULL: key) and adds bytes to explains in
 * category cat and every category that contains it (ets -> system -> total, processes_used ->
 * processes -> total, atom_used -> atom -> system -> total, ...). bytes <= 0 adds nothing.
 * key NULL leaves the structure as it was. Returns 0, or -1 on allocation failure. */
int consolidate_name(struct finding *f, const char *key, const char *label, enum mem_cat cat,
                     int64_t bytes);

/* Adds bytes to explains[cat] and to every category containing cat. */
void consolidate_explains_add(int64_t explains[MEM_CAT_COUNT], enum mem_cat cat, int64_t bytes);

/* The bits of the categories f judges: its judges bits, else its subject's category, else 0. */
unsigned consolidate_judges(const struct finding *f);

/* Whether f is the first failing finding from out->items[start] on that names its structure
 * (the one that speaks for it); false for a finding naming none. */
bool consolidate_first_of(const struct findings *out, size_t start, size_t i);

/* Turns f into context (VERDICT_PASS), explained by by: sets explained_by and adds
 * "; context: explained by BY" to its message. Returns 0, or -1 on allocation failure. */
int consolidate_context(struct finding *f, const char *by);

/* The whole pass, on the findings from out->items[start] on, after every rule ran (the
 * baseline, trend and tags included): see above. Then orders them: failing first, the most
 * specific first (the first failure is the title CI shows), the rest in the order the rules
 * appended them. Calling it twice changes nothing more. Returns 0, or -1 on allocation
 * failure (out is then as consistent as before: every finding is whole). */
int consolidate_findings(struct findings *out, size_t start);

/* Only the ordering above (the judge's "one leak, one finding" step, before the baseline
 * rules ran: judge/judge.c). */
int consolidate_order(struct findings *out, size_t start);

#endif
