/* rules/alloc.h: the allocator rule: memory the allocators hold from the OS but do not use. */
#ifndef GATE_RULES_ALLOC_H
#define GATE_RULES_ALLOC_H

#include "model/finding.h"
#include "rules/culprits.h"

struct alloc_config {
	double max_fragmentation_pct; /* of carriers not in blocks; default 75; < 0: off */
	int64_t waste_floor;          /* carriers - blocks at or below this never fail; 64 MB */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void alloc_config_default(struct alloc_config *cfg);

/* Appends, under rule "allocator", one FAIL per allocator type of the after-snapshot whose
 * fragmentation is above max_fragmentation_pct AND whose waste (carriers_size - blocks_size)
 * is above waste_floor (subject "fragmentation TYPE"; most waste first, at most
 * RULES_MAX_CULPRITS, then "and N more"), else one PASS "fragmentation". SKIP when the
 * after-snapshot has no allocator data; nothing when off.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int alloc_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                const struct alloc_config *cfg);

#endif
