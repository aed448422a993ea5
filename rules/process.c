/* rules/process.c: the process rule: born and left alive, mailboxes, memory per process. */
#include "rules/process.h"

#include <stdio.h>
#include <string.h>

#include "model/finding.h"
#include "rules/consolidate.h"
#include "rules/inside.h"

#define RULE "process"

/* A clean suite leaves a handful of processes behind (lazily started servers) and no long
 * mailbox; gate.toml says why these figures. */
void process_config_default(struct process_config *cfg)
{
	cfg->max_born = 100;
	cfg->max_mailbox = 10000;
	cfg->max_memory = 100000000;
}

static const char no_procs[] = "the after-snapshot has no per-process data (a light snapshot)";

static int check_born(struct findings *out, const struct snapshot *after,
                      const struct process_config *cfg)
{
	struct culprits groups = {0};
	char msg[2048], n[32], lim[32], mem[32];
	size_t o;

	if (cfg->max_born == RULES_OFF)
		return 0;
	rules_count_format(lim, sizeof(lim), cfg->max_born);
	if (after->nprocs == 0) {
		snprintf(msg, sizeof(msg), "processes born during the run: %s", no_procs);
		return findings_add(out, RULE, "born", VERDICT_SKIP, 0, 0, 0, -1, msg);
	}
	rules_count_format(n, sizeof(n), after->born_count);
	model_bytes_format(mem, sizeof(mem), after->born_memory);
	bool fail = after->born_count > cfg->max_born;
	o = (size_t)snprintf(msg, sizeof(msg),
	                     "%s %s born during the run %s still alive, using %s, limit %s", n,
	                     after->born_count == 1 ? "process" : "processes",
	                     after->born_count == 1 ? "is" : "are", mem, lim);
	if (fail) {
		for (size_t i = 0; i < after->nborn; i++)
			if (culprits_add(&groups, i, after->born[i].count) < 0) {
				culprits_clear(&groups);
				return -1;
			}
		culprits_sort(&groups);
		const struct starter *said = NULL; /* the last starter whose test was named */
		for (size_t k = 0;
		     k < groups.count && k < PROCESS_BORN_GROUPS_SHOWN && o < sizeof(msg); k++) {
			const struct proc_group *g = &after->born[groups.items[k].index];
			char c[32], m[32], started[600];
			rules_count_format(c, sizeof(c), g->count);
			model_bytes_format(m, sizeof(m), g->memory);
			/* who started them (the test, its file and line), without their code, which
			 * the group's key says already; two groups the same test started: the test
			 * said once (what started them, "via ...", stays each group's) */
			if (said && inside_starter_same_test(said, &g->started)) {
				snprintf(started, sizeof(started), "started by the same test%s%s",
				         g->started.by ? ", via " : "",
				         g->started.by ? g->started.by : "");
			} else {
				struct starter who = g->started;
				who.code = NULL;
				inside_starter_text(started, sizeof(started), &who);
				if (g->started.test)
					said = &g->started;
			}
			o += (size_t)snprintf(msg + o, sizeof(msg) - o, "%s%s x %s (%s%s%s%s%s)",
			                      k ? ", " : "; largest groups: ",
			                      g->key ? rules_display(g->key) : "?", c, m,
			                      g->example_pid ? ", e.g. " : "",
			                      g->example_pid ? g->example_pid : "",
			                      *started ? "; " : "", started);
		}
		if (groups.count > PROCESS_BORN_GROUPS_SHOWN && o < sizeof(msg))
			snprintf(msg + o, sizeof(msg) - o, " and %zu more groups",
			         groups.count - PROCESS_BORN_GROUPS_SHOWN);
		culprits_clear(&groups);
	}
	if (findings_add(out, RULE, "born", fail ? VERDICT_FAIL : VERDICT_PASS, 0,
	                 after->born_memory, 0, -1, msg) < 0)
		return -1;
	if (!fail)
		return 0;
	/* the processes left alive, one structure (rules/consolidate.h) */
	char label[400];
	snprintf(label, sizeof(label), "%s %s left alive%s%s%s", n,
	         after->born_count == 1 ? "process" : "processes", after->nborn ? " (" : "",
	         after->nborn && after->born[0].key ? rules_display(after->born[0].key) : "",
	         after->nborn ? ", ...)" : "");
	return consolidate_name(&out->items[out->count - 1], "born", label, MEM_PROCESSES_USED,
	                        after->born_memory);
}

/* Which figure of a process a per-process family judges. */
enum per_proc { PER_MAILBOX, PER_MEMORY };

static int64_t figure(const struct proc_info *p, enum per_proc what)
{
	return what == PER_MAILBOX ? p->message_queue_len : p->memory;
}

static int check_per_process(struct findings *out, const struct snapshot *before,
                             const struct snapshot *after, int64_t limit, enum per_proc what)
{
	const char *family = what == PER_MAILBOX ? "mailbox" : "memory";
	struct culprits bad = {0};
	const struct proc_info *top = NULL;
	char msg[1024], lim[32], label[256], v[32], mem[32];
	int64_t floor = what == PER_MEMORY ? limit : 0;
	int rc = 0;

	if (limit == RULES_OFF)
		return 0;
	if (what == PER_MAILBOX)
		rules_count_format(lim, sizeof(lim), limit);
	else
		model_bytes_format(lim, sizeof(lim), limit);
	if (after->nprocs == 0) {
		snprintf(msg, sizeof(msg), "%s per process: %s", family, no_procs);
		return findings_add(out, RULE, family, VERDICT_SKIP, 0, 0, floor, -1, msg);
	}
	for (size_t i = 0; i < after->nprocs; i++) {
		const struct proc_info *p = &after->procs[i];
		if (!top || figure(p, what) > figure(top, what))
			top = p;
		if (figure(p, what) > limit && culprits_add(&bad, i, figure(p, what)) < 0)
			goto oom;
	}
	if (bad.count == 0) {
		rules_proc_label(label, sizeof(label), top);
		if (what == PER_MAILBOX) {
			rules_count_format(v, sizeof(v), top->message_queue_len);
			snprintf(msg, sizeof(msg),
			         "no process has more than %s messages in its mailbox (longest: %s "
			         "with %s)",
			         lim, label, v);
		} else {
			model_bytes_format(v, sizeof(v), top->memory);
			snprintf(msg, sizeof(msg),
			         "no process uses more than %s after GC (largest: %s with %s)", lim,
			         label, v);
		}
		rc = findings_add(out, RULE, family, VERDICT_PASS, 0, top->memory, floor, -1, msg);
		goto out;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct proc_info *p = &after->procs[bad.items[k].index];
		const struct proc_info *was = rules_proc_find(before, p->pid);
		rules_proc_label(label, sizeof(label), p);
		model_bytes_format(mem, sizeof(mem), p->memory);
		if (what == PER_MAILBOX) {
			rules_count_format(v, sizeof(v), p->message_queue_len);
			snprintf(msg, sizeof(msg),
			         "process %s has %s messages in its mailbox, limit %s (memory "
			         "%s%s%s)",
			         label, v, lim, mem, p->current_function ? ", in " : "",
			         p->current_function ? rules_display(p->current_function) : "");
		} else {
			char heap[32], wb[32];
			model_bytes_format(heap, sizeof(heap), p->total_heap_size);
			if (was)
				model_bytes_format(wb, sizeof(wb), was->memory);
			snprintf(msg, sizeof(msg),
			         "process %s uses %s after GC (heap %s), limit %s%s%s%s", label,
			         mem, heap, lim, was ? "; it used " : "", was ? wb : "",
			         was ? " before the run" : "");
		}
		char subject[300];
		snprintf(subject, sizeof(subject), "%s %s", family, rules_proc_subject(p));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, was ? was->memory : 0, p->memory,
		                 floor, -1, msg) < 0 ||
		    rules_proc_structure(&out->items[out->count - 1], p, MEM_PROCESSES_USED,
		                         p->memory - (was ? was->memory : 0)) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, family, &bad,
	                      what == PER_MAILBOX ? "processes with long mailboxes"
	                                          : "processes over the memory limit") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}

int process_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                  const struct process_config *cfg)
{
	if (check_born(out, after, cfg) < 0 ||
	    check_per_process(out, before, after, cfg->max_mailbox, PER_MAILBOX) < 0 ||
	    check_per_process(out, before, after, cfg->max_memory, PER_MEMORY) < 0)
		return -1;
	return 0;
}
