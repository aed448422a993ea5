/* ci/run_json.h: `gate run --json FILE`: the run result as JSON ("format": "gate.run/1"). Its
 * "baseline" object is what `gate baseline update --from FILE` reads back. */
#ifndef GATE_CI_RUN_JSON_H
#define GATE_CI_RUN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ci/baseline.h"
#include "rules/model.h"
#include "rules/repeat.h"
#include "rules/trend_samples.h"

/* Everything is borrowed; NULL leaves the key out (commit: null). */
struct run_json {
	const char *gate_version;
	const char *project;
	const char *commit;              /* HEAD's commit id, NULL outside git */
	bool passed;                     /* the verdict of the run */
	int64_t started;                 /* Unix time */
	const struct baseline *baseline; /* this run's figures */
	const struct test_run *tests;
	const struct findings *findings;
	const struct snapshot *before, *after;
	const struct repeat_data *iterations; /* --repeat, when it was judged */
	const struct sample_series *samples;  /* --sample */
};

/* Writes the run result to path, atomically (a reader sees the old file or the new one).
 * Returns 0, or -1 with err naming path. */
int run_json_write(const char *path, const struct run_json *d, char *err, size_t errlen);

#endif
