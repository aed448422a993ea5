/* ci/report/fine_text.h: the fine level for people: the node's OS memory against what
 * the BEAM allocated and used, the run's peak and where it was, the largest heaps and the
 * allocation origins that grew, as plain lines every report writer shows (the console
 * summary as is, Markdown and HTML escaped). */
#ifndef GATE_CI_REPORT_FINE_TEXT_H
#define GATE_CI_REPORT_FINE_TEXT_H

#include <stddef.h>

#include "model/snapshot.h"

/* How many lines fine_text_lines writes at most. */
#define FINE_TEXT_LINES 5

/* Fills lines (each of len bytes) with what before and after carry: "RSS 62.5 MB -> 126.8
 * MB (+64.4 MB); allocated (carriers) ...; used (erlang:memory total) ...", "peak RSS ...",
 * "largest heaps: ...", "allocations by origin: ...". Returns how many (0 when the snapshots
 * have no fine level: an older probe, a cluster). before or after may be NULL. */
size_t fine_text_lines(char lines[][512], size_t n, const struct snapshot *before,
                       const struct snapshot *after);

#endif
