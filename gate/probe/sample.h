/* gate/probe/sample.h: `gate run --sample INTERVAL`: the probe's sampler
 * (gate_probe:sample_start/2, sample_stop/0) started before the workload and its samples fetched
 * after it. */
#ifndef GATE_SAMPLE_H
#define GATE_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "gate/node/eic.h"
#include "gate/node/term.h"
#include "rules/trend_samples.h"

/* Starts the sampler in the node: a light snapshot every interval_ms, at most SAMPLE_CAP
 * kept. Returns 0, or -1 with err. */
int sample_start(struct eic *c, int64_t interval_ms, int timeout_ms, char *err, size_t errlen);

/* Stops the sampler and decodes its samples into *out (owned by the caller,
 * sample_series_clear). Returns 0, or -1 with err. */
int sample_fetch(struct eic *c, int timeout_ms, struct sample_series *out, char *err,
                 size_t errlen);

/* The reply of sample_stop/0 (for the unit tests). 0, or -1 with err. */
int sample_decode(const struct term *reply, struct sample_series *out, char *err, size_t errlen);

#endif
