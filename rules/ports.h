/* rules/ports.h: the ports rule: ports (sockets, spawned OS programs, drivers) opened during
 * the run and still open afterwards are a resource leak, named by port and owner. */
#ifndef GATE_RULES_PORTS_H
#define GATE_RULES_PORTS_H

#include "model/finding.h"
#include "rules/culprits.h"

struct ports_config {
	/* ports opened during the run and still open after it; default 50; RULES_OFF: off.
	 * A suite may leave a few supervised connections open (a pool started on first use);
	 * hundreds of ports left behind are a leak. */
	int64_t max_opened;
};

/* Fills cfg with the documented defaults (see gate.toml). */
void ports_config_default(struct ports_config *cfg);

/* Appends one finding under rule "ports", subject "open": FAIL when after->ports_opened
 * (ports not open at the before-snapshot and open now) is above max_opened; its message
 * leads with the largest groups (port name, owner process, the owner's test module by spawn
 * ancestry, an OS pid). SKIP when the
 * after-snapshot has no diff against a before-snapshot (after->have_growth false) or the
 * rule is off. Returns 0, or -1 on allocation failure (out keeps what was added). */
int ports_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                const struct ports_config *cfg);

/* "cat x 300, owner Ports.Holder (<0.250.0>) from test Ports.LeakTest, OS pid 4242": one
 * group, for messages. */
void ports_group_format(char *buf, size_t len, const struct port_group *g);

#endif
