/* rules/rules.c: every rule's defaults in one struct, and applying them all in order. */
#include "rules/rules.h"

#include "rules/consolidate.h"

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
	modules_config_default(&cfg->modules);
	alloc_config_default(&cfg->allocator);
	ports_config_default(&cfg->ports);
	pterm_config_default(&cfg->pterm);
	structure_config_default(&cfg->structure);
	/* its strings stay NULL, which means BASELINE_DEFAULT_* */
	baseline_config_default(&cfg->baseline);
	fine_config_default(&cfg->fine);
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
	    modules_check(out, before, after, &cfg->modules) < 0 ||
	    alloc_check(out, before, after, &cfg->allocator) < 0 ||
	    ports_check(out, before, after, &cfg->ports) < 0 ||
	    pterm_check(out, before, after, &cfg->pterm) < 0 ||
	    /* after the rules whose structures it must not fail twice */
	    structure_check(out, before, after, &cfg->structure) < 0)
		return -1;
	/* one leak, one finding: a leaf whose growth a failing structure explains, and total
	 * when failing leaves explain it, pass as context; then the most specific first */
	if (growth_consolidate(out, start, before, after, &cfg->growth) < 0 ||
	    /* with live totals the consolidation judged the atom rows and entries already */
	    (!cfg->growth.live_totals && atom_rows_context(out, start, before, after) < 0) ||
	    consolidate_order(out, start) < 0)
		return -1;
	/* what grew, named first in every category still failing */
	if (drilldown_annotate(out, before, after) < 0)
		return -1;
	return 0;
}
