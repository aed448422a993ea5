/* gate/probe/probe_fine.h: decodes the fine level of a snapshot (the `fine` map
 * gate_probe_alloc.erl adds to deep snapshots) into struct fine_level. */
#ifndef GATE_PROBE_FINE_H
#define GATE_PROBE_FINE_H

#include <stddef.h>

#include "gate/node/term.h"
#include "model/snapshot.h"

/* fine: the reply's `fine` value, or NULL (a light snapshot, an older probe: out stays
 * zeroed). Every figure is bounded as the snapshot's are (MODEL_FIGURE_MAX). Returns 0, or
 * -1 with err (out is then cleared). */
int probe_fine_decode(const struct term *fine, struct fine_level *out, char *err, size_t errlen);

#endif
