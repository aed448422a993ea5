/* rules/ets.h: the ETS rule: the total ETS memory cap, per-table caps chosen by name glob, and
 * tables created during the run and left alive. */
#ifndef GATE_RULES_ETS_H
#define GATE_RULES_ETS_H

#include "model/finding.h"
#include "rules/culprits.h"

/* One [[ets.table]] entry: limits for every table whose name matches the glob. */
struct ets_table_limit {
	char *name;            /* fnmatch(3) glob on the table name, e.g. "corpus_*"; owned */
	int64_t max_bytes;     /* RULES_OFF when not set */
	int64_t max_size;      /* rows; RULES_OFF when not set */
	double max_growth_pct; /* vs the same table in the before-snapshot; < 0 when not set */
};

struct ets_config {
	int64_t max_total;        /* bytes of erlang:memory(ets) after the run; default RULES_OFF */
	int64_t max_left_alive;   /* tables created during the run and still alive, of at least
	                             left_alive_floor bytes each; default 0; RULES_OFF: off */
	int64_t left_alive_floor; /* bytes; default 1 MB */
	struct ets_table_limit *tables; /* owned, ntables entries, in file order */
	size_t ntables;
	size_t tables_cap; /* allocated entries (base/grow.h) */
};

/* Fills cfg with the documented defaults (see gate.toml): no table entries. */
void ets_config_default(struct ets_config *cfg);

/* Appends an entry for glob name with no limits set and returns it, or NULL on allocation
 * failure (cfg unchanged). */
struct ets_table_limit *ets_config_table_add(struct ets_config *cfg, const char *name);

/* Frees the table entries and zeroes cfg; NULL is a no-op. */
void ets_config_clear(struct ets_config *cfg);

/* Appends, to out, under rule "ets":
 *   subject "total" (when max_total is set): FAIL when after's erlang:memory(ets) is above it;
 *   per [[ets.table]] entry: FAIL per matching table over a limit (subject "table NAME"),
 *     else one PASS with subject "table GLOB";
 *   subject "left_alive" (unless off): FAIL per created table of at least left_alive_floor
 *     bytes (subject "left_alive NAME") when there are more than max_left_alive.
 * The table checks SKIP when the after-snapshot lists no tables (a light snapshot). At most
 * RULES_MAX_CULPRITS culprits per family are named, then one "and N more" finding.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int ets_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
              const struct ets_config *cfg);

#endif
