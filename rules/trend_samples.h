/* rules/trend_samples.h: light snapshots taken during a run (gate run --sample) and the
 * trend rule on them: a sustained rise over a long workload (a soak test).
 *
 * Method: only a series that spans at least TREND_MIN_SPAN_MS and has at least
 * TREND_MIN_SAMPLES samples is judged (a short suite just gets its chart). For every
 * category the growth rule judges, the Theil-Sen slope (the median of the slopes between
 * every pair of samples; robust to GC's saw-tooth and to outliers up to ~29 % of the points)
 * times the span is the rise. It fails when that rise is above the category's growth floor
 * and its max percent of the first quarter's median, AND the last quarter's median is above
 * the first quarter's by more than the floor too (the rise held to the end). The samples are
 * taken without GC: garbage that comes and goes has no slope; garbage that piles up does.
 * Findings: rule "soak", subject the category (rule "trend" is the baseline history's).
 *
 * Ownership: struct sample_series owns its items; sample_series_clear frees them.
 */
#ifndef GATE_RULES_TREND_SAMPLES_H
#define GATE_RULES_TREND_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "model/finding.h"
#include "rules/growth.h"

#define TREND_MIN_SPAN_MS 60000
#define TREND_MIN_SAMPLES 20
/* the probe keeps at most this many samples (thinning older ones, doubling the interval) */
#define SAMPLE_CAP 1000

struct sample {
	int64_t t_ms; /* since sampling started */
	int64_t mem[MEM_CAT_COUNT];
	int64_t process_count;
	int64_t ets_count;
	int64_t atom_count;
	int64_t port_count;
};

struct sample_series {
	struct sample *items;
	size_t n;
	int64_t interval_ms; /* the interval in the end (doubled by every thinning) */
};

void sample_series_clear(struct sample_series *s);

/* The Theil-Sen slope of category c over the samples, in bytes per ms (0 for fewer than 2
 * samples). At most TREND_MAX_POINTS evenly spaced samples are used. */
#define TREND_MAX_POINTS 300
double trend_samples_slope(const struct sample_series *s, enum mem_cat c);

/* Appends a "soak" finding per category the growth rule judges (cfg) when the series is
 * long enough (see above); nothing otherwise. s may be empty. Returns 0, or -1 on
 * allocation failure. */
int trend_samples_check(struct findings *out, const struct sample_series *s,
                        const struct growth_config *cfg);

#endif
