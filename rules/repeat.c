/* rules/repeat.c: the continuing growth over repeated runs (see repeat.h for the method). */
#include "rules/repeat.h"

#include "rules/consolidate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/finding.h"

void repeat_point_from(struct repeat_point *out, const struct snapshot *s)
{
	memset(out, 0, sizeof(*out));
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		out->mem[c] = s->mem[c];
		out->have[c] = s->have[c];
	}
	out->process_count = s->process_count;
	out->ets_count = s->ets_count;
	out->atom_count = s->atom_count;
}

int repeat_data_add(struct repeat_data *d, const struct snapshot *after, size_t tests,
                    size_t failed, int64_t wall_us)
{
	if (GROW(d->runs, d->cap, d->n + 1, 4) < 0)
		return -1;
	struct repeat_run *r = &d->runs[d->n++];
	memset(r, 0, sizeof(*r));
	repeat_point_from(&r->after, after);
	r->tests = tests;
	r->failed = failed;
	r->wall_us = wall_us;
	return 0;
}

void repeat_data_clear(struct repeat_data *d)
{
	if (!d)
		return;
	free(d->runs);
	memset(d, 0, sizeof(*d));
}

const struct repeat_point *repeat_point_at(const struct repeat_data *d, size_t k)
{
	if (k == 0)
		return &d->start;
	return k <= d->n ? &d->runs[k - 1].after : NULL;
}

int64_t repeat_run_growth(const struct repeat_data *d, size_t k, enum mem_cat c)
{
	const struct repeat_point *a = repeat_point_at(d, k),
	                          *b = k ? repeat_point_at(d, k - 1) : NULL;
	if (!a || !b || !a->have[c] || !b->have[c])
		return 0;
	return a->mem[c] - b->mem[c];
}

static bool have_all(const struct repeat_data *d, enum mem_cat c)
{
	for (size_t k = 1; k <= d->n; k++)
		if (!d->runs[k - 1].after.have[c])
			return false;
	return true;
}

int64_t repeat_continuing(const struct repeat_data *d, enum mem_cat c)
{
	if (d->n < 2 || !have_all(d, c))
		return 0;
	int64_t m = INT64_MAX;
	for (size_t k = 2; k <= d->n; k++) {
		int64_t g = repeat_run_growth(d, k, c);
		m = g < m ? g : m;
	}
	return m;
}

/* The smallest per-run growth of a count over runs 2..N. */
static int64_t count_continuing(const struct repeat_data *d, size_t off)
{
	int64_t m = INT64_MAX;
	for (size_t k = 2; k <= d->n; k++) {
		int64_t a = *(const int64_t *)((const char *)&d->runs[k - 1].after + off);
		int64_t b = *(const int64_t *)((const char *)&d->runs[k - 2].after + off);
		m = a - b < m ? a - b : m;
	}
	return m;
}

/* base + times x step, at least 0 and at most MODEL_FIGURE_MAX (figures are bounded by the
 * decoder, times by REPEAT_MAX: no overflow) */
static int64_t extrapolate(int64_t base, int64_t step, size_t times)
{
	int64_t v = base + step * (int64_t)times;
	return v < 0 ? 0 : v > MODEL_FIGURE_MAX ? MODEL_FIGURE_MAX : v;
}

int repeat_judged_pair(struct snapshot *before_out, struct snapshot *after_out,
                       const struct repeat_data *d, const struct snapshot *warm,
                       const struct snapshot *last)
{
	if (d->n < 2 || d->n > REPEAT_MAX)
		return -1;
	size_t times = d->n - 1;
	*before_out = *warm;
	*after_out = *last;
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		after_out->have[c] = warm->have[c] && have_all(d, (enum mem_cat)c);
		after_out->mem[c] =
		        extrapolate(warm->mem[c], repeat_continuing(d, (enum mem_cat)c), times);
	}
	after_out->process_count = extrapolate(
	        warm->process_count,
	        count_continuing(d, offsetof(struct repeat_point, process_count)), times);
	after_out->ets_count =
	        extrapolate(warm->ets_count,
	                    count_continuing(d, offsetof(struct repeat_point, ets_count)), times);
	after_out->atom_count =
	        extrapolate(warm->atom_count,
	                    count_continuing(d, offsetof(struct repeat_point, atom_count)), times);
	return 0;
}

int repeat_annotate(struct findings *out, const struct repeat_data *d)
{
	if (d->n < 2)
		return 0;
	for (size_t i = 0; i < out->count; i++) {
		struct finding *f = &out->items[i];
		int c = f->rule && strcmp(f->rule, "growth") == 0 && f->subject
		                ? mem_cat_from_name(f->subject)
		                : -1;
		if (c < 0 || f->verdict == VERDICT_SKIP)
			continue;
		char runs[512] = "", g[32], m[32];
		size_t len = 0;
		for (size_t k = 2; k <= d->n && len < sizeof(runs) - 40; k++) {
			model_bytes_format(g, sizeof(g), repeat_run_growth(d, k, (enum mem_cat)c));
			len += (size_t)snprintf(runs + len, sizeof(runs) - len, "%s%s%s",
			                        k > 2 ? ", " : "", g[0] == '-' ? "" : "+", g);
		}
		if (d->n > 2 && len >= sizeof(runs) - 40)
			snprintf(runs + len, sizeof(runs) - len, ", ...");
		int64_t cont = repeat_continuing(d, (enum mem_cat)c);
		model_bytes_format(m, sizeof(m), cont);
		char add[768];
		snprintf(add, sizeof(add),
		         "--repeat %zu: runs 2..%zu grew %s (warm-up excluded), judged: the "
		         "smallest, %s%s per run, x %zu",
		         d->n, d->n, runs, cont >= 0 ? "+" : "", m, d->n - 1);
		if (finding_part_add(f, PART_RUNS, false, "; ", add) < 0)
			return -1;
	}
	return 0;
}

/* ---- structures that grow in every run ---- */

/* One figure of one structure after each run: v[k] after run k (v[0]: the before-snapshot);
 * known[k] false where no snapshot said it. */
struct series {
	int64_t v[REPEAT_MAX + 1];
	bool known[REPEAT_MAX + 1];
};

static void series_set(struct series *s, size_t k, int64_t v)
{
	s->v[k] = v;
	s->known[k] = true;
}

/* Whether the growth of every run 2..n is at least min (and above 0) and similar: the
 * largest at most spread times the smallest; *lo gets the smallest. */
static bool consistent(const struct series *s, size_t n, int64_t min, double spread, int64_t *lo)
{
	int64_t a = INT64_MAX, b = 0;
	if (min == RULES_OFF || n < 3)
		return false;
	for (size_t k = 2; k <= n; k++) {
		if (!s->known[k] || !s->known[k - 1])
			return false;
		int64_t g = s->v[k] - s->v[k - 1];
		if (g <= 0 || g < min)
			return false;
		a = g < a ? g : a;
		b = g > b ? g : b;
	}
	*lo = a;
	return (double)b <= spread * (double)a;
}

/* "in each of 3 runs (+312, +312, +311 rows)": run 1 counts when it grew at least lo / spread
 * too (a leak fills from the start), else "in each of runs 2..3 after the warm-up". */
static void series_text(char *buf, size_t len, const struct series *s, size_t n, int64_t lo,
                        double spread, bool bytes, const char *unit)
{
	char g[32], all[512] = "";
	size_t o = 0;
	bool first = s->known[0] && s->known[1] && s->v[1] - s->v[0] > 0 &&
	             (double)(s->v[1] - s->v[0]) * spread >= (double)lo;
	for (size_t k = first ? 1 : 2; k <= n && o < sizeof(all) - 40; k++) {
		int64_t d = s->v[k] - s->v[k - 1];
		if (bytes)
			model_bytes_format(g, sizeof(g), d);
		else
			rules_count_format(g, sizeof(g), d);
		o += (size_t)snprintf(all + o, sizeof(all) - o, "%s%s%s", o ? ", " : "",
		                      d >= 0 ? "+" : "", g);
	}
	if (bytes)
		model_bytes_format(g, sizeof(g), lo);
	else
		rules_count_format(g, sizeof(g), lo);
	if (first)
		snprintf(buf, len, "+%s%s%s in each of %zu runs (%s)", g, *unit ? " " : "", unit, n,
		         all);
	else
		snprintf(buf, len, "+%s%s%s in each of runs 2..%zu after the warm-up (%s)", g,
		         *unit ? " " : "", unit, n, all);
}

static const char tail[] = "; memory that grows in every run grows without bound in production";

/* A failing finding for one structure, named as the other rules name it (the contract of
 * rules/consolidate.h): key, label, and what it grew since run 1 in category cat. */
static struct finding *fail(struct findings *out, const char *subject, const struct series *s,
                            size_t n, const char *msg)
{
	if (findings_add(out, "structure", subject, VERDICT_FAIL, s->known[1] ? s->v[1] : 0,
	                 s->v[n], 0, -1, msg) < 0)
		return NULL;
	return &out->items[out->count - 1];
}

/* What a series grew since run 1 (0 when it fell). */
static int64_t grown(const struct series *s, size_t n)
{
	int64_t from = s->known[1] ? s->v[1] : 0;
	return s->v[n] > from ? s->v[n] - from : 0;
}

static const char *const structure_rules[] = {"structure", "binary", "process", "ets", NULL};

static const struct ets_info *ets_in(const struct snapshot *s, const struct ets_info *t)
{
	for (size_t i = 0; i < s->nets; i++)
		if (t->id && s->ets[i].id && strcmp(t->id, s->ets[i].id) == 0)
			return &s->ets[i];
	return NULL;
}

static int tables(struct findings *out, const struct snapshot *const *snaps, size_t n,
                  const struct structure_config *cfg, size_t *found)
{
	const struct snapshot *last = snaps[n];
	for (size_t i = 0; i < last->nets; i++) {
		const struct ets_info *t = &last->ets[i];
		const char *name = t->name ? t->name : t->id ? t->id : "?";
		struct series rows = {0}, bytes = {0};
		int64_t lo_r = 0, lo_b = 0;
		char what[640], msg[1024], subject[300], a[32], b[32];
		for (size_t k = 0; k <= n; k++) {
			const struct ets_info *x = ets_in(snaps[k], t);
			if (x) {
				series_set(&rows, k, x->size);
				series_set(&bytes, k, x->memory);
			}
		}
		bool by_rows = consistent(&rows, n, cfg->repeat_rows, cfg->repeat_spread, &lo_r);
		bool by_bytes = consistent(&bytes, n, cfg->repeat_bytes, cfg->repeat_spread, &lo_b);
		if ((!by_rows && !by_bytes) || structure_category_fails(out, MEM_ETS) ||
		    structure_failed_already(out, structure_rules, name, NULL))
			continue;
		if (by_rows)
			series_text(what, sizeof(what), &rows, n, lo_r, cfg->repeat_spread, false,
			            "rows");
		else
			series_text(what, sizeof(what), &bytes, n, lo_b, cfg->repeat_spread, true,
			            "");
		model_bytes_format(a, sizeof(a), bytes.known[1] ? bytes.v[1] : 0);
		model_bytes_format(b, sizeof(b), t->memory);
		snprintf(msg, sizeof(msg), "ETS table %s (owner %s) %s, %s -> %s%s", name,
		         t->owner_name  ? rules_display(t->owner_name)
		         : t->owner_pid ? t->owner_pid
		                        : "?",
		         what, a, b, tail);
		snprintf(subject, sizeof(subject), "table %s", name);
		struct finding *f = fail(out, subject, &bytes, n, msg);
		if (!f || rules_table_structure(f, name, grown(&bytes, n), 0) < 0)
			return -1;
		(*found)++;
	}
	return 0;
}

static const struct proc_growth *grew_in(const struct snapshot *s, const char *pid)
{
	for (size_t i = 0; pid && i < s->ngrew_procs; i++)
		if (s->grew_procs[i].pid && strcmp(s->grew_procs[i].pid, pid) == 0)
			return &s->grew_procs[i];
	return NULL;
}

/* A process's refc binaries (bin) or memory after each run: run 1's from the last
 * snapshot's before-figures (the probe's mark is set after run 1), runs 2..n from each
 * snapshot's growth list, the before-snapshot's from its process list. */
static void proc_series(struct series *s, const struct snapshot *const *snaps, size_t n,
                        const struct proc_growth *p, bool bin)
{
	const struct proc_info *p0 = rules_proc_find(snaps[0], p->pid);
	if (p0)
		series_set(s, 0, bin ? p0->bin_bytes : p0->memory);
	series_set(s, 1, bin ? p->bin_before : p->memory_before);
	for (size_t k = 2; k <= n; k++) {
		const struct proc_growth *x = grew_in(snaps[k], p->pid);
		if (x)
			series_set(s, k, bin ? x->bin : x->memory);
	}
}

/* The probe reports a process's monitors, monitors on it and links from REPEAT_REFS on (a
 * process monitors another once, a supervisor links to its children): fewer than the
 * drill-down's thousands, as growth in every run is small. */
#define REPEAT_REFS 50

/* One cause, one finding, in the repeat path too: q is the other end of h's monitors (the
 * same monitors, counted on both sides: h holds about as many as there are on q), so both
 * grew alike in every run and are one structure, h's. */
static bool other_end_of(const struct proc_growth *q, const struct proc_growth *h)
{
	return q != h && h->monitors >= REPEAT_REFS && q->monitored_by >= REPEAT_REFS &&
	       q->monitored_by <= 2 * h->monitors && h->monitors <= 2 * q->monitored_by;
}

/* A supervisor whose memory grows with the processes born and left alive under it (its links
 * to them, its children's specs): the born processes' finding, failing already, explains it. */
static bool born_explains(const struct findings *out, const struct snapshot *last,
                          const struct proc_growth *p)
{
	if (p->links < REPEAT_REFS || 2 * p->links < last->born_count)
		return false;
	for (size_t i = 0; i < out->count; i++)
		if (out->items[i].verdict == VERDICT_FAIL && out->items[i].structure_key &&
		    strcmp(out->items[i].structure_key, "born") == 0)
			return true;
	return false;
}

/* Whether p grew in every run by similar amounts: its refc binaries (*bin true) or its
 * memory after GC, in *s, the smallest growth in *lo. */
static bool proc_consistent(const struct snapshot *const *snaps, size_t n,
                            const struct structure_config *cfg, const struct proc_growth *p,
                            struct series *s, bool *bin, int64_t *lo)
{
	memset(s, 0, sizeof(*s));
	proc_series(s, snaps, n, p, true);
	if ((*bin = consistent(s, n, cfg->repeat_bytes, cfg->repeat_spread, lo)))
		return true;
	memset(s, 0, sizeof(*s));
	proc_series(s, snaps, n, p, false);
	return consistent(s, n, cfg->repeat_bytes, cfg->repeat_spread, lo);
}

/* The other end of p's monitors among the processes that grew in every run (its series in
 * *os), or NULL. */
static const struct proc_growth *end_of(const struct snapshot *const *snaps, size_t n,
                                        const struct structure_config *cfg,
                                        const struct proc_growth *p, bool holder, struct series *os)
{
	const struct snapshot *last = snaps[n];
	for (size_t i = 0; i < last->ngrew_procs; i++) {
		const struct proc_growth *o = &last->grew_procs[i];
		bool b;
		int64_t lo;
		if ((holder ? other_end_of(o, p) : other_end_of(p, o)) &&
		    proc_consistent(snaps, n, cfg, o, os, &b, &lo))
			return o;
	}
	return NULL;
}

static int processes(struct findings *out, const struct snapshot *const *snaps, size_t n,
                     const struct structure_config *cfg, size_t *found)
{
	const struct snapshot *last = snaps[n];
	for (size_t i = 0; i < last->ngrew_procs; i++) {
		const struct proc_growth *p = &last->grew_procs[i], *o;
		const char *name = p->name ? rules_display(p->name) : p->pid ? p->pid : "?";
		struct series s, os = {0};
		bool by_bin;
		int64_t lo = 0;
		char what[640], msg[1200], subject[300], a[32], b[32], refs[400] = "", mc[32],
		                                                       oc[32];
		if (!proc_consistent(snaps, n, cfg, p, &s, &by_bin, &lo) ||
		    end_of(snaps, n, cfg, p, false, &os) || born_explains(out, last, p))
			continue;
		if (structure_category_fails(out, by_bin ? MEM_BINARY : MEM_PROCESSES_USED) ||
		    structure_failed_already(out, structure_rules, name, NULL))
			continue;
		if ((o = end_of(snaps, n, cfg, p, true, &os))) {
			rules_count_format(mc, sizeof(mc), p->monitors);
			rules_count_format(oc, sizeof(oc), o->monitored_by);
			model_bytes_format(b, sizeof(b), grown(&os, n));
			snprintf(refs, sizeof(refs),
			         "; it holds %s monitors (the other end: %s, monitored %s times, "
			         "+%s)",
			         mc,
			         o->name  ? rules_display(o->name)
			         : o->pid ? o->pid
			                  : "?",
			         oc, b);
		}
		series_text(what, sizeof(what), &s, n, lo, cfg->repeat_spread, true, "");
		model_bytes_format(a, sizeof(a), s.v[1]);
		model_bytes_format(b, sizeof(b), s.v[n]);
		snprintf(msg, sizeof(msg), "process %s%s%s%s: its %s grew %s, %s -> %s%s%s", name,
		         p->initial_call ? " (" : "",
		         p->initial_call ? rules_display(p->initial_call) : "",
		         p->initial_call ? ")" : "", by_bin ? "refc binaries" : "memory after GC",
		         what, a, b, refs, tail);
		snprintf(subject, sizeof(subject), "process %s", name);
		char label[320];
		snprintf(label, sizeof(label), "%sprocess %s", by_bin ? "the binaries of " : "",
		         name);
		struct finding *f = fail(out, subject, &s, n, msg);
		if (!f ||
		    rules_pid_structure(f, p->pid, label, by_bin ? MEM_BINARY : MEM_PROCESSES_USED,
		                        grown(&s, n) + (*refs ? grown(&os, n) : 0)) < 0)
			return -1;
		(*found)++;
	}
	return 0;
}

/* Groups of processes born since run 1 and persistent_term keys created since, by shape:
 * counts after each run 2..n (0 after run 1, where the mark is set). */
static int groups(struct findings *out, const struct snapshot *const *snaps, size_t n,
                  const struct structure_config *cfg, bool pterm, size_t *found)
{
	const struct snapshot *last = snaps[n];
	size_t count = pterm ? last->npterm_new : last->nborn;
	for (size_t i = 0; i < count; i++) {
		const char *key = pterm ? last->pterm_new[i].key : last->born[i].key;
		struct series s = {0};
		int64_t lo = 0;
		char what[640], msg[1024], subject[300];
		if (!key)
			continue;
		series_set(&s, 1, 0);
		for (size_t k = 2; k <= n; k++) {
			int64_t c = 0;
			size_t m = pterm ? snaps[k]->npterm_new : snaps[k]->nborn;
			for (size_t j = 0; j < m; j++) {
				const char *kj =
				        pterm ? snaps[k]->pterm_new[j].key : snaps[k]->born[j].key;
				if (kj && strcmp(kj, key) == 0)
					c = pterm ? snaps[k]->pterm_new[j].count
					          : snaps[k]->born[j].count;
			}
			series_set(&s, k, c);
		}
		if (!consistent(&s, n, cfg->repeat_count, cfg->repeat_spread, &lo) ||
		    (!pterm && structure_category_fails(out, MEM_PROCESSES_USED)) ||
		    structure_failed_already(out, structure_rules, rules_display(key),
		                             pterm ? NULL : "born"))
			continue;
		series_text(what, sizeof(what), &s, n, lo, cfg->repeat_spread, false,
		            pterm ? "keys" : "processes");
		snprintf(msg, sizeof(msg), "%s %s: %s%s",
		         pterm ? "persistent_term keys" : "processes born and left alive",
		         rules_display(key), what, tail);
		snprintf(subject, sizeof(subject), "%s %s", pterm ? "persistent_term" : "group",
		         rules_display(key));
		if (findings_add(out, "structure", subject, VERDICT_FAIL, 0, s.v[n], 0, -1, msg) <
		            0 ||
		    consolidate_name(&out->items[out->count - 1],
		                     pterm ? "persistent_term" : "born", subject,
		                     pterm ? MEM_SYSTEM : MEM_PROCESSES_USED, 0) < 0)
			return -1;
		(*found)++;
	}
	return 0;
}

int repeat_structures_check(struct findings *out, const struct snapshot *const *snaps, size_t n,
                            const struct structure_config *cfg)
{
	size_t found = 0;
	char msg[512], lim[32];
	if (n < 3 || n > REPEAT_MAX)
		return 0;
	for (size_t k = 1; k <= n; k++)
		if (!snaps[k] || (k >= 2 && !snaps[k]->have_growth))
			return 0;
	if (tables(out, snaps, n, cfg, &found) < 0 ||
	    groups(out, snaps, n, cfg, false, &found) < 0 ||
	    processes(out, snaps, n, cfg, &found) < 0 ||
	    groups(out, snaps, n, cfg, true, &found) < 0)
		return -1;
	if (found)
		return 0;
	model_bytes_format(lim, sizeof(lim), cfg->repeat_bytes);
	snprintf(msg, sizeof(msg),
	         "no table, process, group of processes or persistent_term shape grew in every "
	         "run 2..%zu by similar amounts (at least %s or %lld rows or %lld processes or "
	         "keys per run)",
	         n, lim, (long long)cfg->repeat_rows, (long long)cfg->repeat_count);
	return findings_add(out, "structure", "repeat", VERDICT_PASS, 0, 0, 0, -1, msg);
}
