/* rules/structure.c: the structure rule: each process, table and born group judged against
 * its own before-figure (see structure.h). */
#include "rules/structure.h"

#include "model/finding.h"
#include "rules/consolidate.h"
#include "rules/drilldown.h"

#include <stdio.h>
#include <string.h>

#define RULE "structure"

/* A clean suite's structures move by kilobytes (a server's state, a first-use cache); the
 * leaks tests/realworld/plant plants grow one structure by megabytes. gate.toml says why. */
void structure_config_default(struct structure_config *cfg)
{
	cfg->process_floor = 1000000;
	cfg->table_floor = 4000000;
	cfg->group_floor = 4000000;
	cfg->max_growth_pct = 100.0;
	cfg->repeat_bytes = 4000;
	cfg->repeat_rows = 10;
	cfg->repeat_count = 1;
	cfg->repeat_spread = 4.0;
}

/* The name after the first space of a subject ("process X" -> "X"). */
static const char *after_space(const char *s)
{
	const char *p = s ? strchr(s, ' ') : NULL;
	return p ? p + 1 : s ? s : "";
}

bool structure_failed_already(const struct findings *out, const char *const *rules,
                              const char *name, const char *whole)
{
	for (size_t i = 0; i < out->count; i++) {
		const struct finding *f = &out->items[i];
		if (f->verdict != VERDICT_FAIL || !f->rule || !f->subject)
			continue;
		for (const char *const *r = rules; *r; r++)
			if (strcmp(f->rule, *r) == 0 &&
			    ((name && strchr(f->subject, ' ') &&
			      strcmp(after_space(f->subject), name) == 0) ||
			     (whole && strcmp(f->subject, whole) == 0)))
				return true;
	}
	return false;
}

bool structure_category_fails(const struct findings *out, enum mem_cat c)
{
	const char *name = mem_cat_name(c);
	for (size_t i = 0; name && i < out->count; i++) {
		const struct finding *f = &out->items[i];
		if (f->verdict == VERDICT_FAIL && f->rule && f->subject &&
		    strcmp(f->rule, "growth") == 0 && strcmp(f->subject, name) == 0)
			return true;
	}
	return false;
}

/* The category a process's growth lands in most: its refc binaries', else its heap's. */
static enum mem_cat proc_category(const struct proc_growth *p)
{
	return p->bin - p->bin_before >= p->memory - p->memory_before ? MEM_BINARY
	                                                              : MEM_PROCESSES_USED;
}

/* grew over the floor and over max_growth_pct of before */
static bool over(int64_t before, int64_t after, int64_t floor, double pct)
{
	int64_t d = after - before;
	if (floor == RULES_OFF || d <= floor)
		return false;
	return pct < 0 || before <= 0 || (double)d * 100.0 > pct * (double)before;
}

static void limit_text(char *buf, size_t len, int64_t floor, double pct)
{
	char f[32];
	model_bytes_format(f, sizeof(f), floor);
	if (pct < 0)
		snprintf(buf, len, "limit +%s", f);
	else
		snprintf(buf, len, "limit +%s and +%g %% of its own before-figure", f, pct);
}

/* ---- processes: heap + refc binaries ---- */

static int64_t proc_before(const struct proc_growth *p)
{
	return p->memory_before + p->bin_before;
}

static int64_t proc_after(const struct proc_growth *p)
{
	return p->memory + p->bin;
}

static const char *proc_name(const struct proc_growth *p)
{
	return p->name ? rules_display(p->name) : p->pid ? p->pid : "?";
}

static void proc_message(char *buf, size_t len, const struct proc_growth *p, const char *lim)
{
	char b[32], a[32], bb[32], ba[32], mb[32], ma[32], who[300] = "";
	model_bytes_format(b, sizeof(b), proc_before(p));
	model_bytes_format(a, sizeof(a), proc_after(p));
	model_bytes_format(bb, sizeof(bb), p->bin_before);
	model_bytes_format(ba, sizeof(ba), p->bin);
	model_bytes_format(mb, sizeof(mb), p->memory_before);
	model_bytes_format(ma, sizeof(ma), p->memory);
	if (p->name && p->initial_call)
		snprintf(who, sizeof(who), " (%s, %s)", p->pid ? p->pid : "?",
		         rules_display(p->initial_call));
	else if (p->initial_call)
		snprintf(who, sizeof(who), " (%s)", rules_display(p->initial_call));
	snprintf(buf, len,
	         "process %s%s grew %s -> %s%s, judged on its own: refc binaries %s -> %s, "
	         "memory %s -> %s after GC; %s",
	         proc_name(p), who, b, a, p->born ? " (born during the run)" : "", bb, ba, mb, ma,
	         lim);
}

/* The contract of rules/consolidate.h: the process as a structure, keyed as every rule keys a
 * process, explaining its refc binaries in binary and its own memory in processes_used. */
static int proc_structure(struct finding *f, const struct proc_growth *p)
{
	char label[320];
	snprintf(label, sizeof(label), "process %s", proc_name(p));
	if (rules_pid_structure(f, p->pid, label, MEM_BINARY,
	                        p->bin > p->bin_before ? p->bin - p->bin_before : 0) < 0)
		return -1;
	consolidate_explains_add(f->explains, MEM_PROCESSES_USED,
	                         p->memory > p->memory_before ? p->memory - p->memory_before : 0);
	return 0;
}

static int check_processes(struct findings *out, const struct snapshot *after,
                           const struct structure_config *cfg)
{
	static const char *const others[] = {"binary", "process", NULL};
	struct culprits bad = {0};
	const struct proc_growth *top = NULL;
	char msg[1024], lim[160], subject[300];
	int rc = 0;

	if (cfg->process_floor == RULES_OFF)
		return 0;
	limit_text(lim, sizeof(lim), cfg->process_floor, cfg->max_growth_pct);
	for (size_t i = 0; i < after->ngrew_procs; i++) {
		const struct proc_growth *p = &after->grew_procs[i];
		int64_t d = proc_after(p) - proc_before(p);
		if (!top || d > proc_after(top) - proc_before(top))
			top = p;
		if (over(proc_before(p), proc_after(p), cfg->process_floor, cfg->max_growth_pct) &&
		    !structure_category_fails(out, proc_category(p)) &&
		    !structure_failed_already(out, others, proc_name(p), NULL) &&
		    culprits_add(&bad, i, d) < 0)
			goto oom;
	}
	if (bad.count == 0) {
		if (!top)
			snprintf(msg, sizeof(msg), "no process grew since the before-snapshot");
		else {
			char body[900];
			proc_message(body, sizeof(body), top, lim);
			snprintf(msg, sizeof(msg), "largest: %s", body);
		}
		rc = findings_add(out, RULE, "process", VERDICT_PASS, top ? proc_before(top) : 0,
		                  top ? proc_after(top) : 0, cfg->process_floor,
		                  cfg->max_growth_pct, msg);
		goto out;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct proc_growth *p = &after->grew_procs[bad.items[k].index];
		proc_message(msg, sizeof(msg), p, lim);
		snprintf(subject, sizeof(subject), "process %s", proc_name(p));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, proc_before(p), proc_after(p),
		                 cfg->process_floor, cfg->max_growth_pct, msg) < 0 ||
		    proc_structure(&out->items[out->count - 1], p) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, "process", &bad, "processes that grew on their own") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}

/* ---- ETS tables ---- */

static const char *table_name(const struct ets_growth *t)
{
	return t->name ? t->name : t->id ? t->id : "?";
}

static void table_message(char *buf, size_t len, const struct ets_growth *t, const char *lim)
{
	char b[32], a[32], rows[32], owner[300] = "";
	model_bytes_format(b, sizeof(b), t->bytes_before);
	model_bytes_format(a, sizeof(a), t->bytes);
	rules_count_format(rows, sizeof(rows), t->rows - t->rows_before);
	if (t->owner_name || t->owner_pid)
		snprintf(owner, sizeof(owner), " (owner %s)",
		         t->owner_name ? rules_display(t->owner_name) : t->owner_pid);
	snprintf(buf, len, "ETS table %s%s grew %s -> %s (%s%s rows%s), judged on its own; %s",
	         table_name(t), owner, b, a, t->rows >= t->rows_before ? "+" : "", rows,
	         t->created ? ", created during the run" : "", lim);
}

/* The table as a structure, keyed as rules/ets.c keys it: its bytes in ets, the refc
 * binaries its rows hold (measured in the node) in binary. */
static int table_structure(struct finding *f, const struct ets_growth *t)
{
	return rules_table_structure(f, table_name(t),
	                             t->bytes > t->bytes_before ? t->bytes - t->bytes_before : 0,
	                             drilldown_ets_bin(t));
}

static int check_tables(struct findings *out, const struct snapshot *after,
                        const struct structure_config *cfg)
{
	static const char *const others[] = {"ets", NULL};
	struct culprits bad = {0};
	const struct ets_growth *top = NULL;
	char msg[1024], lim[160], subject[300];
	int rc = 0;

	if (cfg->table_floor == RULES_OFF)
		return 0;
	limit_text(lim, sizeof(lim), cfg->table_floor, cfg->max_growth_pct);
	for (size_t i = 0; i < after->ngrew_ets; i++) {
		const struct ets_growth *t = &after->grew_ets[i];
		int64_t d = t->bytes - t->bytes_before;
		if (!top || d > top->bytes - top->bytes_before)
			top = t;
		if (over(t->bytes_before, t->bytes, cfg->table_floor, cfg->max_growth_pct) &&
		    !structure_category_fails(out, MEM_ETS) &&
		    !structure_failed_already(out, others, table_name(t), NULL) &&
		    culprits_add(&bad, i, d) < 0)
			goto oom;
	}
	if (bad.count == 0) {
		if (!top)
			snprintf(msg, sizeof(msg), "no ETS table grew since the before-snapshot");
		else {
			char body[900];
			table_message(body, sizeof(body), top, lim);
			snprintf(msg, sizeof(msg), "largest: %s", body);
		}
		rc = findings_add(out, RULE, "table", VERDICT_PASS, top ? top->bytes_before : 0,
		                  top ? top->bytes : 0, cfg->table_floor, cfg->max_growth_pct, msg);
		goto out;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct ets_growth *t = &after->grew_ets[bad.items[k].index];
		table_message(msg, sizeof(msg), t, lim);
		snprintf(subject, sizeof(subject), "table %s", table_name(t));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, t->bytes_before, t->bytes,
		                 cfg->table_floor, cfg->max_growth_pct, msg) < 0 ||
		    table_structure(&out->items[out->count - 1], t) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, "table", &bad, "ETS tables that grew on their own") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}

/* ---- groups of processes born during the run and alive after it ---- */

static int check_groups(struct findings *out, const struct snapshot *after,
                        const struct structure_config *cfg)
{
	static const char *const others[] = {"process", NULL};
	struct culprits bad = {0};
	const struct proc_group *top = NULL;
	char msg[1024], lim[160], subject[300], n[32], m[32];
	int rc = 0;

	if (cfg->group_floor == RULES_OFF)
		return 0;
	/* born processes have no before-figure: the floor alone judges them */
	limit_text(lim, sizeof(lim), cfg->group_floor, -1);
	for (size_t i = 0; i < after->nborn; i++) {
		const struct proc_group *g = &after->born[i];
		if (!top || g->memory > top->memory)
			top = g;
		if (over(0, g->memory, cfg->group_floor, -1) &&
		    !structure_category_fails(out, MEM_PROCESSES_USED) &&
		    !structure_failed_already(out, others, NULL, "born") &&
		    culprits_add(&bad, i, g->memory) < 0)
			goto oom;
	}
	if (bad.count == 0) {
		if (top) {
			rules_count_format(n, sizeof(n), top->count);
			model_bytes_format(m, sizeof(m), top->memory);
			snprintf(
			        msg, sizeof(msg),
			        "largest group of processes born during the run and alive: %s x %s "
			        "using %s; %s",
			        top->key ? rules_display(top->key) : "?", n, m, lim);
		} else
			snprintf(msg, sizeof(msg),
			         "no process born during the run is alive after it");
		rc = findings_add(out, RULE, "group", VERDICT_PASS, 0, top ? top->memory : 0,
		                  cfg->group_floor, -1, msg);
		goto out;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct proc_group *g = &after->born[bad.items[k].index];
		const char *key = g->key ? rules_display(g->key) : "?";
		rules_count_format(n, sizeof(n), g->count);
		model_bytes_format(m, sizeof(m), g->memory);
		snprintf(msg, sizeof(msg),
		         "processes %s x %s born during the run and still alive use %s (e.g. %s), "
		         "judged as one group; %s",
		         key, n, m, g->example_pid ? g->example_pid : "?", lim);
		snprintf(subject, sizeof(subject), "group %s", key);
		if (findings_add(out, RULE, subject, VERDICT_FAIL, 0, g->memory, cfg->group_floor,
		                 -1, msg) < 0 ||
		    consolidate_name(&out->items[out->count - 1], "born", subject,
		                     MEM_PROCESSES_USED, g->memory) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, "group", &bad, "groups of processes") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}

int structure_check(struct findings *out, const struct snapshot *before,
                    const struct snapshot *after, const struct structure_config *cfg)
{
	(void)before; /* the after-snapshot's growth lists carry the before-figures */
	if (cfg->process_floor == RULES_OFF && cfg->table_floor == RULES_OFF &&
	    cfg->group_floor == RULES_OFF)
		return 0;
	if (!after->have_growth)
		return findings_add(out, RULE, "process", VERDICT_SKIP, 0, 0, 0, -1,
		                    "structures on their own: the after-snapshot has no growth "
		                    "data (a light snapshot)");
	if (check_processes(out, after, cfg) < 0 || check_tables(out, after, cfg) < 0 ||
	    check_groups(out, after, cfg) < 0)
		return -1;
	return 0;
}
