/* rules/binary.h: the binary rule: refc binaries one process still references after GC.
 * (The growth of erlang:memory(binary) as a whole is the growth rule's.) */
#ifndef GATE_RULES_BINARY_H
#define GATE_RULES_BINARY_H

#include "model/finding.h"
#include "rules/culprits.h"

struct binary_config {
	int64_t max_refs_per_process;  /* proc_info.bin_refs; default 50 000; RULES_OFF: off */
	int64_t max_bytes_per_process; /* proc_info.bin_bytes; default 10 MB; RULES_OFF: off */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void binary_config_default(struct binary_config *cfg);

/* Appends, under rule "binary", one FAIL per process of the after-snapshot above either
 * limit (subject "process NAME", NAME its registered name, else its pid; largest bin_bytes
 * first, at most RULES_MAX_CULPRITS, then "and N more"), else one PASS with subject
 * "process". SKIP when the after-snapshot has no per-process data; nothing when both limits
 * are off.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int binary_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                 const struct binary_config *cfg);

#endif
