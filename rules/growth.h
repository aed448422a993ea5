/* rules/growth.h: the growth rule: erlang:memory categories before vs after the suite. */
#ifndef GATE_RULES_GROWTH_H
#define GATE_RULES_GROWTH_H

#include "model.h"

struct growth_limit {
	bool enabled;
	double max_pct;      /* allowed growth in percent of the before figure */
	int64_t floor_bytes; /* growth of at most this many bytes never fails */
};

struct growth_config {
	struct growth_limit cat[MEM_CAT_COUNT];
	/* Judge total and system on live memory: net of code growth (code has its own limit, and
	 * loading test modules is a one-time cost that would otherwise count three times) and,
	 * for total, net of the growth of free space in the process heap allocators
	 * (processes - processes_used: carriers the allocators keep after a busy suite). */
	bool live_totals;
};

/* Fills cfg with gate's documented defaults (see gate.toml). */
void growth_config_default(struct growth_config *cfg);

/* Appends one finding per enabled category to out: VERDICT_FAIL when the judged growth
 * (finding.delta) is above both the floor and max_pct of the before figure, VERDICT_SKIP when either snapshot lacks the category.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int growth_check(struct findings *out, const struct snapshot *before,
		 const struct snapshot *after, const struct growth_config *cfg);

#endif
