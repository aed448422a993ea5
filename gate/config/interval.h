/* gate/config/interval.h: durations on the command line: "250ms", "5s", "2min", "24h", "1.5s". */
#ifndef GATE_INTERVAL_H
#define GATE_INTERVAL_H

#include <stdint.h>

/* Parses s (a number with a unit ms, s, m or min, h; a bare number is seconds) into
 * milliseconds in [min_ms, max_ms]. Returns 0, or -1 (nothing written) when s is not such a
 * duration or out of range. */
int interval_parse(const char *s, int64_t min_ms, int64_t max_ms, int64_t *out_ms);

#endif
