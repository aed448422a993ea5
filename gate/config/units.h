/* gate/config/units.h: durations, sizes and percentages as people write them: one grammar and
 * one set of messages for gate.toml and the command line ("90 s", "30min", "250ms", "64 MB").
 *
 * A value is blanks, a decimal number, blanks, a unit, blanks. The number is digits with an
 * optional fraction ("1.5", also ".5" and "5."), an optional exponent ("1e3") and an optional
 * "+"; "-" is refused as negative. Percentages take only digits and a fraction ("2.5 %").
 *   durations  ms, s or sec, m or min, h; a number alone is seconds (as an integer in gate.toml
 *              and a bare option value always were); rounded to the nearest millisecond
 *   sizes      B, kB or KB, MB, GB (1000^n), KiB, MiB, GiB (1024^n); a unit is needed (an
 *              integer without quotes in gate.toml is bytes); a whole number of bytes
 *   percents   "10 %" or "10%"
 *
 * Every function returns 0, or -1 with *out untouched and err (when errlen > 0) holding one
 * sentence naming the value as written and the fix: the units accepted or the range, e.g.
 * "unknown unit \"mins\" in \"30 mins\"; use ms, s, sec, m, min or h". Callers put where the
 * value came from in front: "gate.toml:3:16: node.test_timeout: " or "--test-timeout 30mins: ".
 */
#ifndef GATE_UNITS_H
#define GATE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_MS_PER_S 1000
#define UNITS_MS_PER_MIN (60 * UNITS_MS_PER_S)
#define UNITS_MS_PER_H (60 * UNITS_MS_PER_MIN)

/* The timeouts of gate.toml's [node] and the command line: above 0, at most 24 h. */
#define UNITS_TIMEOUT_MIN_MS 1
#define UNITS_TIMEOUT_MAX_MS (24 * UNITS_MS_PER_H)

/* Sizes (and counts) gate takes: below 2^62. */
#define UNITS_SIZE_LIMIT ((int64_t)1 << 62) /* exclusive */

/* What a duration that is not one should look like; for messages about a wrong TOML type too. */
#define UNITS_DURATION_FIX                                                                         \
	"write a number and a unit, e.g. \"90 s\" (units: ms, s, sec, m, min, h; a number "        \
	"alone is seconds)"
#define UNITS_SIZE_FIX                                                                             \
	"write an integer number of bytes or a string such as \"64 MB\" (units: B, kB, MB, GB, "   \
	"KiB, MiB, GiB)"
#define UNITS_PERCENT_FIX "write a string such as \"10 %\" or a number of percent"

/* s as a duration in [min_ms, max_ms] (min_ms >= 1), in milliseconds. */
int units_parse_duration(const char *s, int64_t min_ms, int64_t max_ms, int64_t *out_ms, char *err,
                         size_t errlen);

/* A duration gate already holds as a number (a TOML integer of seconds): 0 when ms is in
 * [min_ms, max_ms], else -1 with "SHOWN is out of range; use a duration ...". */
int units_check_duration(int64_t ms, const char *shown, int64_t min_ms, int64_t max_ms, char *err,
                         size_t errlen);

/* s as a size from 0 B to below UNITS_SIZE_LIMIT, in bytes. */
int units_parse_size(const char *s, int64_t *out_bytes, char *err, size_t errlen);

/* A size gate already holds as a number (a TOML integer of bytes), checked as above. */
int units_check_size(int64_t bytes, const char *shown, char *err, size_t errlen);

/* s as a finite percentage of 0 or more ("10 %"); read as strtod reads the number, so that
 * what gate prints reads back as the same double. */
int units_parse_percent(const char *s, double *out_pct, char *err, size_t errlen);

/* A percentage gate already holds as a number (a TOML integer or float), checked as above. */
int units_check_percent(double pct, char *err, size_t errlen);

#endif
