/* rules/rules.c: every rule's defaults in one struct, and applying them all in order. */
#include "rules.h"

#include <stdlib.h>
#include <string.h>

void rules_config_default(struct rules_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	growth_config_default(&cfg->growth);
	ets_config_default(&cfg->ets);
	binary_config_default(&cfg->binary);
	process_config_default(&cfg->process);
	atom_config_default(&cfg->atom);
	alloc_config_default(&cfg->allocator);
	ports_config_default(&cfg->ports);
	pterm_config_default(&cfg->pterm);
	structure_config_default(&cfg->structure); /* issue 31 */
	/* its strings stay NULL, which means BASELINE_DEFAULT_* */
	baseline_config_default(&cfg->baseline);
}

void rules_config_clear(struct rules_config *cfg)
{
	if (!cfg)
		return;
	ets_config_clear(&cfg->ets);
	free(cfg->baseline.path);
	free(cfg->baseline.ref);
	free(cfg->baseline.notes_ref);
	memset(cfg, 0, sizeof(*cfg));
}

/* The order failing findings are reported in (issue 12): the first failure is what CI shows
 * as the title, so the most specific comes first. 0: a named structure (a table, a process,
 * the processes left alive, atoms, an allocator); 1..: a growth leaf, the structures' usual
 * containers first (ETS rows hold binaries, process state holds binaries); then total,
 * context; last everything that passed or was skipped, in the order the rules ran. */
static int rules_rank(const struct finding *f)
{
	static const int leaf_order[MEM_CAT_COUNT] = {
	        [MEM_ETS] = 1,       [MEM_PROCESSES_USED] = 2, [MEM_BINARY] = 3,
	        [MEM_ATOM_USED] = 4, [MEM_CODE] = 5,           [MEM_SYSTEM] = 6,
	        [MEM_PROCESSES] = 7, [MEM_ATOM] = 8,           [MEM_TOTAL] = 9,
	};
	int c;
	if (f->verdict != VERDICT_FAIL)
		return 100;
	if (!f->rule || strcmp(f->rule, "growth") != 0 || (c = mem_cat_from_name(f->subject)) < 0)
		return 0;
	return leaf_order[c];
}

/* Stable: equal ranks keep the order the rules appended them in. */
static int rules_order(struct findings *out, size_t start)
{
	size_t n = out->count - start, k = 0;
	struct finding *sorted;
	if (n < 2)
		return 0;
	if (!(sorted = malloc(n * sizeof(*sorted))))
		return -1;
	for (int rank = 0; rank <= 100; rank++)
		for (size_t i = start; i < out->count; i++)
			if (rules_rank(&out->items[i]) == rank)
				sorted[k++] = out->items[i];
	memcpy(out->items + start, sorted, n * sizeof(*sorted));
	free(sorted);
	return 0;
}

int rules_check_all(struct findings *out, const struct snapshot *before,
                    const struct snapshot *after, const struct test_run *run,
                    const struct rules_config *cfg)
{
	size_t start = out->count;
	if (growth_check(out, before, after, &cfg->growth) < 0 ||
	    ets_check(out, before, after, &cfg->ets) < 0 ||
	    binary_check(out, before, after, &cfg->binary) < 0 ||
	    process_check(out, before, after, &cfg->process) < 0 ||
	    atom_check(out, before, after, run, &cfg->atom) < 0 ||
	    alloc_check(out, before, after, &cfg->allocator) < 0 ||
	    ports_check(out, before, after, &cfg->ports) < 0 ||
	    pterm_check(out, before, after, &cfg->pterm) < 0 ||
	    /* issue 31: after the rules whose structures it must not fail twice */
	    structure_check(out, before, after, &cfg->structure) < 0)
		return -1;
	/* one leak, one finding: a leaf whose growth a failing structure explains, and total
	 * when failing leaves explain it, pass as context; then the most specific first */
	if (growth_consolidate(out, start, before, after, &cfg->growth) < 0 ||
	    rules_order(out, start) < 0)
		return -1;
	/* what grew, named first in every category still failing */
	if (drilldown_annotate(out, before, after) < 0)
		return -1;
	return 0;
}
