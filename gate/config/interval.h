/* gate/config/interval.h: durations on the command line for callers that word their own
 * message (gate watch): units_parse_duration (units.h) without the message. */
#ifndef GATE_INTERVAL_H
#define GATE_INTERVAL_H

#include <stdint.h>

/* Parses s as units_parse_duration does ("250ms", "5s", "2min", "24h", "1.5"; a bare number is
 * seconds) into milliseconds in [min_ms, max_ms] (min_ms >= 1). Returns 0, or -1 (nothing
 * written) when s is not such a duration or out of range. */
int interval_parse(const char *s, int64_t min_ms, int64_t max_ms, int64_t *out_ms);

#endif
