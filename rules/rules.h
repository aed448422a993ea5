/* rules/rules.h: every rule's configuration in one struct, and the one call that applies
 * them all to a run.
 *
 * Ownership: struct rules_config owns its strings and arrays (the [[ets.table]] entries, the
 * baseline path and refs when set); rules_config_clear frees them. Nothing here does I/O.
 */
#ifndef GATE_RULES_RULES_H
#define GATE_RULES_RULES_H

#include "model/snapshot.h"
#include "rules/alloc.h"
#include "rules/atom.h"
#include "rules/attribution.h"
#include "rules/baseline.h"
#include "rules/binary.h"
#include "rules/drilldown.h"
#include "rules/ets.h"
#include "rules/fine.h" /* [rss], [peak], [process] max_heap */
#include "rules/growth.h"
#include "rules/modules.h"
#include "rules/ports.h"
#include "rules/process.h"
#include "rules/pterm.h"
#include "rules/structure.h"
#include "rules/tags.h"

struct rules_config {
	struct growth_config growth;     /* [growth], [growth.<category>] */
	struct ets_config ets;           /* [ets], [[ets.table]] */
	struct binary_config binary;     /* [binary] */
	struct process_config process;   /* [process] */
	struct atom_config atom;         /* [atom] */
	struct modules_config modules;   /* [modules] */
	struct alloc_config allocator;   /* [allocator] */
	struct baseline_config baseline; /* [baseline]: read here, applied by the baseline rules */
	struct attribution_config attribution; /* [attribution]: what gate run measures per test */
	struct ports_config ports;             /* [ports] */
	struct pterm_config pterm;             /* [persistent_term] */
	struct severity_config severity;       /* [severity] (rules/tags.h) */
	struct fine_config fine;           /* [rss], [peak], [process] max_heap (rules/fine.h) */
	struct structure_config structure; /* [structure]: structures on their own past */
};

/* Fills cfg (raw memory) with every rule's documented defaults (see gate.toml), each from
 * its rule's *_config_default. Allocates nothing: the baseline strings stay NULL, which
 * means BASELINE_DEFAULT_* (rules/baseline.h). */
void rules_config_default(struct rules_config *cfg);

/* Frees what cfg owns and zeroes it; NULL and a zeroed cfg are no-ops. */
void rules_config_clear(struct rules_config *cfg);

#endif
