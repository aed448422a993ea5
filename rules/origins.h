/* rules/origins.h: allocation origins: which NIF, driver or the runtime itself
 * holds the blocks that appeared during the run, from instrument:allocations()'s histograms
 * before and after, named in the findings of the categories those blocks live in. */
#ifndef GATE_RULES_ORIGINS_H
#define GATE_RULES_ORIGINS_H

#include "model/finding.h"
#include "rules/fine.h"

/* An origin's growth over the run: blocks added, and their bytes within a factor of 2 (a
 * histogram counts blocks per doubling size bucket; the last bucket is open: high is then
 * low, and open says so). */
struct origin_growth {
	const char *origin; /* borrowed from the after-snapshot */
	const char *type;
	int64_t blocks;
	int64_t low, high;
	bool open;
};

/* How many origins a finding names. */
#define ORIGINS_SHOWN 3
/* Origins that grew less than this (low bound, bytes) are not named. */
#define ORIGINS_FLOOR ((int64_t)1000000)

/* Fills out (up to cap) with the origins whose blocks grew, by low bound, largest first,
 * skipping those under ORIGINS_FLOOR. Returns how many; 0 when either snapshot lacks origins. */
size_t origins_grown(struct origin_growth *out, size_t cap, const struct snapshot *before,
                     const struct snapshot *after);

/* "NIF FineNif.Native: +30 000 blocks (15.4-30.7 MB, nif_internal)" for people. */
void origins_format(char *buf, size_t len, const struct origin_growth *g);

/* Names the origins that grew in every failing finding about memory they live in: the
 * erlang:memory categories system, binary and total (driver_alloc and binary_alloc tag their
 * blocks). The origin goes first in the message: "allocated by NIF FineNif.Native: +30 000
 * blocks (15-30 MB, nif_internal); system grew ...". Adds no finding: one leak, one voice.
 * Returns 0, or -1 on allocation failure. */
int origins_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                  const struct fine_config *cfg);

#endif
