/* rules/fine.h: the fine level's configuration: [rss], [peak] and [process] max_heap, shared by
 * rules/origins.h, rules/rss.h and rules/peak.h. */
#ifndef GATE_RULES_FINE_H
#define GATE_RULES_FINE_H

#include <stdint.h>

#include "model/snapshot.h"
#include "rules/culprits.h"

struct fine_config {
	/* [rss] max_unaccounted: RSS growth the allocators' carriers do not explain (memory
	 * outside the BEAM's allocators); default RULES_OFF: reported, not judged
	 */
	int64_t rss_max_unaccounted;
	/* [peak] max: the node's peak RSS during the run (VmHWM); default RULES_OFF: reported */
	int64_t peak_max;
	/* [process] max_heap: the largest heap any process reached during the run; default
	 * RULES_OFF: heaps from FINE_HEAP_WATCH on are reported */
	int64_t max_heap;
};

/* The heap size the node's system monitor reports from when max_heap is off (bytes). */
#define FINE_HEAP_WATCH ((int64_t)64000000)

/* Fills cfg with the documented defaults (see gate.toml). */
void fine_config_default(struct fine_config *cfg);

/* The heap size to watch in the node: max_heap, else FINE_HEAP_WATCH. */
int64_t fine_heap_watch(const struct fine_config *cfg);

#endif
