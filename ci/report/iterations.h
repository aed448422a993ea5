/* ci/report/iterations.h: --repeat's and --sample's figures for people and machines: --repeat's
 * runs as a console table and as JSON ("iterations"), --sample's series as JSON ("samples"). */
#ifndef GATE_CI_REPORT_ITERATIONS_H
#define GATE_CI_REPORT_ITERATIONS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "rules/repeat.h"
#include "rules/trend_samples.h"

/* The runs: one row per run with its tests and each judged category's figure and growth
 * over the run before, then how the continuing growth was judged. of names whose runs they
 * are ("partition 1/2" of a merged run); NULL: the run's own. */
void iterations_print(FILE *out, const struct repeat_data *d, const char *of, bool color);

/* [{run, warmup, tests, failed, wall_ms, memory: {CAT: bytes}, delta: {CAT: bytes},
 *   process_count, ets_count, atom_count}], run 0 being the before-snapshot; a new
 * reference, or NULL when out of memory. */
json_t *iterations_json(const struct repeat_data *d);

/* {interval_ms, count, samples: [{t_ms, memory: {CAT: bytes}, process_count, ets_count,
 *   atom_count, port_count}]}; a new reference, or NULL when out of memory. */
json_t *samples_json(const struct sample_series *s);

#endif
