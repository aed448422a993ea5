/* rules/atom.c: the atom rule: atom count growth against the suite's size, and table usage. */
#include "rules/atom.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/finding.h"
#include "model/tests.h"
#include "rules/consolidate.h"
#include "rules/growth.h"

#define RULE "atom"

/* A clean suite adds its module and test names and whatever the code under test names
 * once; a leak (String.to_atom/1 on input) adds one per call. gate.toml says why. */
void atom_config_default(struct atom_config *cfg)
{
	cfg->max_growth = 10000;
	cfg->per_test = 5;
	cfg->max_usage_pct = 80.0;
}

/* The bytes behind the atoms, for the summary's columns: atom_used when reported. */
static int64_t atom_bytes(const struct snapshot *s)
{
	return s->have[MEM_ATOM_USED] ? s->mem[MEM_ATOM_USED] : 0;
}

/* the new atoms as a structure (rules/consolidate.h): their text in atom_used (and atom, which
 * holds it), their table entries beyond it in the rest of system. */
static int atoms_structure(struct finding *f, const struct snapshot *before,
                           const struct snapshot *after, const char *count)
{
	char label[300];
	int64_t atoms = after->atom_count - before->atom_count;
	snprintf(label, sizeof(label), "%s new atoms%s%s", count, after->natoms_new ? " " : "",
	         after->natoms_new && after->atoms_new[0].key ? after->atoms_new[0].key : "");
	if (consolidate_name(f, "atoms", label, MEM_ATOM_USED,
	                     atom_bytes(after) - atom_bytes(before)) < 0)
		return -1;
	if (atoms > 0)
		consolidate_explains_add(f->explains, MEM_SYSTEM, atoms * GROWTH_ATOM_ENTRY_BYTES);
	return 0;
}

int atom_rows_context(struct findings *out, size_t start, const struct snapshot *before,
                      const struct snapshot *after)
{
	const struct finding *rule = NULL;
	char by[160], d[32];

	for (size_t i = start; i < out->count; i++)
		if (strcmp(out->items[i].rule, RULE) == 0 &&
		    strcmp(out->items[i].subject, "growth") == 0)
			rule = &out->items[i];
	if (!rule || rule->verdict != VERDICT_PASS)
		return 0;
	int64_t atoms = after->atom_count - before->atom_count;
	rules_count_format(d, sizeof(d), atoms);
	snprintf(by, sizeof(by), "the run's +%s atoms, within the atom rule's limit", d);
	for (size_t i = start; i < out->count; i++) {
		struct finding *f = &out->items[i];
		if (f->verdict != VERDICT_FAIL || strcmp(f->rule, "growth") != 0)
			continue;
		bool rows = strcmp(f->subject, "atom_used") == 0 || strcmp(f->subject, "atom") == 0;
		/* the rest of system holds the atom table's entries: judged without them */
		int64_t net = f->delta - (atoms > 0 ? atoms * GROWTH_ATOM_ENTRY_BYTES : 0);
		bool rest = strcmp(f->subject, "system") == 0 &&
		            (net <= f->floor ||
		             (f->max_pct >= 0 && f->before > 0 &&
		              100.0 * (double)net / (double)f->before <= f->max_pct));
		if ((rows || rest) && consolidate_context(f, by) < 0)
			return -1;
	}
	return 0;
}

static int check_growth(struct findings *out, const struct snapshot *before,
                        const struct snapshot *after, const struct test_run *run,
                        const struct atom_config *cfg)
{
	char msg[512], b[32], a[32], d[32], lim[32], base[32], per[32];
	size_t tests = run ? run->count : 0;

	if (cfg->max_growth == RULES_OFF)
		return 0;
	if (before->atom_count <= 0 || after->atom_count <= 0) {
		snprintf(msg, sizeof(msg),
		         "atom count: not reported by the node in the %s snapshot",
		         before->atom_count <= 0 ? "before" : "after");
		return findings_add(out, RULE, "growth", VERDICT_SKIP, 0, 0, 0, -1, msg);
	}
	int64_t delta = after->atom_count - before->atom_count;
	int64_t limit = INT64_MAX; /* saturated: a huge per_test cannot wrap around */
	if (cfg->per_test == 0 ||
	    (uint64_t)tests <= (uint64_t)(INT64_MAX - cfg->max_growth) / (uint64_t)cfg->per_test)
		limit = cfg->max_growth + cfg->per_test * (int64_t)tests;
	bool fail = delta > limit;

	rules_count_format(b, sizeof(b), before->atom_count);
	rules_count_format(a, sizeof(a), after->atom_count);
	rules_count_format(d, sizeof(d), delta);
	rules_count_format(lim, sizeof(lim), limit);
	rules_count_format(base, sizeof(base), cfg->max_growth);
	rules_count_format(per, sizeof(per), cfg->per_test);
	snprintf(msg, sizeof(msg),
	         "atom count %s %s -> %s (%s%s atoms), limit +%s (%s + %s x %zu %s)%s",
	         delta > 0   ? "grew"
	         : delta < 0 ? "shrank"
	                     : "stayed at",
	         b, a, delta >= 0 ? "+" : "", d, lim, base, per, tests,
	         tests == 1 ? "test" : "tests",
	         fail ? "; atoms are never collected: look for String.to_atom/1 or "
	                "binary_to_atom/2 on data"
	              : "");
	if (findings_add(out, RULE, "growth", fail ? VERDICT_FAIL : VERDICT_PASS,
	                 atom_bytes(before), atom_bytes(after), 0, -1, msg) < 0)
		return -1;
	return fail ? atoms_structure(&out->items[out->count - 1], before, after, d) : 0;
}

static int check_usage(struct findings *out, const struct snapshot *before,
                       const struct snapshot *after, const struct atom_config *cfg)
{
	char msg[512], a[32], lim[32];

	if (cfg->max_usage_pct < 0)
		return 0;
	if (after->atom_count <= 0 || after->atom_limit <= 0)
		return findings_add(
		        out, RULE, "usage", VERDICT_SKIP, 0, 0, 0, -1,
		        "atom table usage: atom_count or atom_limit not reported by the "
		        "node in the after snapshot");
	/* compared without dividing, so that exactly the limit passes */
	bool fail =
	        (double)after->atom_count * 100.0 > cfg->max_usage_pct * (double)after->atom_limit;
	double pct = 100.0 * (double)after->atom_count / (double)after->atom_limit;

	rules_count_format(a, sizeof(a), after->atom_count);
	rules_count_format(lim, sizeof(lim), after->atom_limit);
	snprintf(msg, sizeof(msg), "atom table holds %s of %s atoms (%.1f %%), limit %g %%%s", a,
	         lim, pct, cfg->max_usage_pct,
	         fail ? "; the node crashes when it is full (raise it with +t, or find the leak)"
	              : "");
	if (findings_add(out, RULE, "usage", fail ? VERDICT_FAIL : VERDICT_PASS, atom_bytes(before),
	                 atom_bytes(after), 0, -1, msg) < 0)
		return -1;
	/* the same atoms as the growth's: one structure */
	return fail ? atoms_structure(&out->items[out->count - 1], before, after, a) : 0;
}

int atom_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
               const struct test_run *run, const struct atom_config *cfg)
{
	if (check_growth(out, before, after, run, cfg) < 0 ||
	    check_usage(out, before, after, cfg) < 0)
		return -1;
	return 0;
}
