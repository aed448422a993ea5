/* rules/process.h: the process rule: processes born during the run and left alive, long
 * mailboxes, and single processes using too much memory. */
#ifndef GATE_RULES_PROCESS_H
#define GATE_RULES_PROCESS_H

#include "model/finding.h"
#include "rules/culprits.h"

/* How many born groups a "born" failure names. */
#define PROCESS_BORN_GROUPS_SHOWN 5

struct process_config {
	int64_t max_born;    /* processes born during the run, still alive; default 100 */
	int64_t max_mailbox; /* message_queue_len of any one process; default 10 000 */
	int64_t max_memory;  /* bytes of one process after GC; default 100 MB */
	                     /* each RULES_OFF: not checked */
};

/* Fills cfg with the documented defaults (see gate.toml). */
void process_config_default(struct process_config *cfg);

/* Appends, under rule "process", per limit that is not off:
 *   subject "born": FAIL when after->born_count > max_born, naming the largest groups;
 *   "mailbox": one FAIL per process over max_mailbox (subject "mailbox NAME", NAME its
 *     registered name, else its pid), else one PASS "mailbox";
 *   "memory": one FAIL per process over max_memory (subject "memory NAME"), else one PASS
 *     "memory".
 * Each SKIPs when the after-snapshot has no per-process data. At most RULES_MAX_CULPRITS
 * culprits per family are named, then one "and N more" finding.
 * Returns 0, or -1 on allocation failure (out keeps what was added). */
int process_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                  const struct process_config *cfg);

#endif
