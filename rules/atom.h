/* rules/atom.h: the atom rule: atoms are never collected, so the atom count may only grow by
 * what loading the suite explains, and the table must stay clear of its limit. */
#ifndef GATE_RULES_ATOM_H
#define GATE_RULES_ATOM_H

#include "model/finding.h"
#include "model/tests.h"
#include "rules/culprits.h"

struct atom_config {
	int64_t max_growth; /* atoms, on top of per_test x tests; default 10 000; RULES_OFF: off */
	int64_t per_test;   /* atoms allowed per test of the run (test names are atoms); 5 */
	double max_usage_pct; /* atom_count of atom_limit after the run; default 80; < 0: off */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void atom_config_default(struct atom_config *cfg);

/* Appends, under rule "atom":
 *   subject "growth": FAIL when after->atom_count - before->atom_count is above
 *     max_growth + per_test x the number of tests in run (run may be NULL: no tests);
 *   subject "usage": FAIL when after->atom_count is above max_usage_pct of atom_limit.
 * Each SKIPs when a figure it needs is missing (0 in the snapshot).
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int atom_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
               const struct test_run *run, const struct atom_config *cfg);
/* The growth rule's atom_used and atom rows, from out->items[start] on, pass as context when
 * they fail while the atom rule's growth check passed: atoms are never freed, so those rows
 * grow by the run's new atoms alone (their text, their table's chunks), which the atom rule
 * judges by count against a limit that grows with the suite (every test's name is an atom: a
 * suite of 20 000 tests with names of about 45 characters adds 1.2 MB of atom_used, over the
 * growth row's 1 MB floor). The system row, judged on the rest of system where the atom
 * table's entries are (GROWTH_ATOM_ENTRY_BYTES an atom), passes as context too when it is
 * within its limit without them. For growth judged without live totals: with them,
 * growth_consolidate judges the same rows and entries as it goes. Returns 0, or -1 on
 * allocation failure. */
int atom_rows_context(struct findings *out, size_t start, const struct snapshot *before,
                      const struct snapshot *after);

#endif
