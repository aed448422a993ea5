/* rules/pterm.h: the persistent_term rule: entries put during the run and never erased stay
 * in the literal area for good (and every put or erase of one scans every process). */
#ifndef GATE_RULES_PTERM_H
#define GATE_RULES_PTERM_H

#include "model/finding.h"
#include "rules/culprits.h"

struct pterm_config {
	int64_t max_entries; /* growth of persistent_term:info() count; default 1 000; RULES_OFF */
	int64_t max_bytes;   /* growth of its memory; default 1 MB; RULES_OFF: off */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void pterm_config_default(struct pterm_config *cfg);

/* Appends one finding under rule "persistent_term", subject "growth": FAIL when the count
 * grew by more than max_entries or the memory by more than max_bytes; its message leads with
 * the largest groups of keys created during the run (by shape: "{MyApp.Cache, _} x 4 000")
 * when the after-snapshot has them. SKIP when either snapshot lacks persistent_term:info()
 * or both limits are off. Returns 0, or -1 on allocation failure (out keeps what was
 * added). */
int pterm_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                const struct pterm_config *cfg);

#endif
