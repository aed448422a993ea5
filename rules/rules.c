/* rules/rules.c: every rule's defaults in one struct (judge/judge.c applies them in order). */
#include "rules/rules.h"

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
