/* gate/probe/probe_inside.h: decodes what gate_probe_state.erl reports from inside the
 * processes that grew (the after-snapshot's `inside` list) and who started the born
 * processes (a born group's fifth element), into struct proc_inside and struct starter.
 *
 * Every figure is bounded as the snapshot's are (MODEL_FIGURE_MAX); a part's bytes may also
 * be -1 (not sized). Texts are copied; the caller owns them through the snapshot.
 */
#ifndef GATE_PROBE_INSIDE_H
#define GATE_PROBE_INSIDE_H

#include <stddef.h>

#include "gate/node/term.h"
#include "model/snapshot.h"

/* inside: the reply's `inside` value, or NULL (an older probe, a light snapshot: nothing).
 * Returns 0, or -1 with err naming the entry (what was decoded stays in out, freed by
 * snapshot_clear). */
int probe_inside_decode(const struct term *inside, struct snapshot *out, char *err, size_t errlen);

/* t: #{test, file, line, module, code, by} (texts, <<>> for unknown; line an integer), or
 * NULL (nothing). Returns 0, or -1 when t is not such a map (out is then cleared). */
int probe_starter_decode(const struct term *t, struct starter *out);

#endif
