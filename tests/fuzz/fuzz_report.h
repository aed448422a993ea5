/* tests/fuzz/fuzz_report.h: the report_data the CI writers (ci/report/markdown.c, ci/report/html.c,
 * ci/report/annotate.c) are given, built from a fuzz model, and the oracles they share. */
#ifndef GATE_FUZZ_REPORT_H
#define GATE_FUZZ_REPORT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report/report.h"
#include "tests/fuzz/fuzz.h"

/* The run as the writers see it: both snapshots (the model's one, twice), every finding and
 * test, the meta strings as project, node, root and JUnit path, an error when the input says so. */
static inline struct report_data fuzz_report_data(const struct fuzz_model *m, const uint8_t *data,
                                                  size_t size)
{
	bool error = size > 0 && data[0] % 7 == 0;
	return (struct report_data){
	        .project = m->meta.project,
	        .node = m->meta.node,
	        .gate_version = "0.0.0-fuzz",
	        .started = size > 1 ? data[1] * 1000003LL : 0,
	        .before = &m->snap,
	        .after = &m->snap,
	        .findings = &m->findings,
	        .tests = &m->run,
	        .baseline_where = m->meta.project,
	        .junit_path = m->meta.node,
	        .root = m->meta.project,
	        .error = error ? m->meta.node : NULL,
	};
}

/* A case-insensitive search for needle in s[0..n). */
static inline const char *fuzz_find_ci(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (strncasecmp(s + i, needle, k) == 0)
			return s + i;
	return NULL;
}

#endif
