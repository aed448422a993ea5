/* tests/fuzz/fuzz_report.h: the report_data the CI writers (ci/markdown.c, ci/html.c,
 * ci/annotate.c) are given, built from a fuzz model, and the oracles they share. */
#ifndef GATE_FUZZ_REPORT_H
#define GATE_FUZZ_REPORT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ci/report.h"
#include "fuzz.h"

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

/* 0 when s[0..n) is valid UTF-8 (no surrogates, no overlongs). */
static inline int fuzz_utf8_valid(const unsigned char *s, size_t n, size_t *at)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		*at = i;
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
			     : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
		if (!len || i + len > n)
			return -1;
		uint32_t cp = c & (0xFF >> (len + 1));
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return -1;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000))
			return -1;
		i += len;
	}
	return 0;
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
