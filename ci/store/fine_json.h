/* ci/store/fine_json.h: the fine level as JSON: per snapshot ("fine") and for the run ("peak",
 * "rss"), in the run's --json document and gate snapshot's. */
#ifndef GATE_CI_STORE_FINE_JSON_H
#define GATE_CI_STORE_FINE_JSON_H

#include <jansson.h>

#include "model/snapshot.h"

/* {"rss", "hwm", "allocated", "mapped", "cached_segments", "origins": [...]} or null when the
 * snapshot has no fine level. NULL on allocation failure. */
json_t *fine_json_snapshot(const struct snapshot *s);

/* The run's peak: {"rss_peak", "rss_before", "reset", "note", "where", "windows": [...],
 * "heaps": [...], "monitor"}; null when the after-snapshot has none. NULL when out of memory. */
json_t *fine_json_peak(const struct snapshot *after);

/* RSS against the allocators, before and after: {"before": {"rss", "allocated", "mapped",
 * "used"}, "after": {...}, "unaccounted": N}; null when not measured. NULL when out of
 * memory. */
json_t *fine_json_rss(const struct snapshot *before, const struct snapshot *after);

#endif
