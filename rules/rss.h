/* rules/rss.h: memory outside the BEAM's allocators: the node's OS RSS against what its allocators
 * hold in carriers, before and after the run. A NIF's malloc, a driver's or a C library's memory
 * moves no erlang:memory figure; only RSS sees it. */
#ifndef GATE_RULES_RSS_H
#define GATE_RULES_RSS_H

#include "model/finding.h"
#include "rules/fine.h"

/* (rss after - rss before) - (allocated after - allocated before): the RSS growth the
 * allocators' carriers do not explain. */
int64_t rss_unaccounted(const struct snapshot *before, const struct snapshot *after);

/* Appends one finding, rule "rss", subject "outside the BEAM": before/after are the RSS,
 * delta the unaccounted growth, floor cfg->rss_max_unaccounted. FAIL when that limit is
 * not off and the growth passes it; PASS otherwise (the figures are context for every
 * report); SKIP, saying why, when either snapshot has no RSS (no /proc in the node). Nothing
 * when neither snapshot has the fine level (an older probe, a cluster node).
 * Returns 0, or -1 on allocation failure. */
int rss_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
              const struct fine_config *cfg);

#endif
