/* rules/attribution.c: growth per test module and test, and the culprit text of failures. */
#include "rules/attribution.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "model/finding.h"
#include "model/tests.h"
#include "rules/blame.h"
#include "rules/culprits.h"
#include "rules/tags.h"

static struct module_growth *module_add(struct test_run *run, size_t *cap,
                                        const struct module_event *e)
{
	if (GROW(run->modules, *cap, run->nmodules + 1, 16) < 0)
		return NULL;
	struct module_growth *m = &run->modules[run->nmodules];
	memset(m, 0, sizeof(*m));
	if (!(m->module = strdup(e->module ? e->module : "?")))
		return NULL;
	m->async = e->async;
	m->time_us = -e->at_us; /* completed at module_finished */
	run->nmodules++;
	return m;
}

/* A module running now: its index in run->modules, the tests of it in progress, whether
 * one of its tests has started yet (before that it runs its setup_all), and how long it was
 * busy since the last snapshot with figures. */
struct running {
	size_t index;
	int in_test;
	bool seen_test;
	int64_t busy_since; /* while busy: when it became busy, or the last snapshot if later */
	int64_t busy_us;    /* busy time since the last snapshot with figures, when not busy now */
};

/* Busy: doing the module's own work. A sync module runs alone and is always busy; an async
 * one is busy in its setup_all and inside its tests, not in between. */
static bool running_busy(const struct running *r, const struct module_growth *m)
{
	return !m->async || r->in_test > 0 || !r->seen_test;
}

static struct running *running_find(struct running *act, size_t n, const struct test_run *run,
                                    const char *module)
{
	for (size_t k = 0; k < n; k++)
		if (module && strcmp(run->modules[act[k].index].module, module) == 0)
			return &act[k];
	return NULL;
}

/* A module's test edge (time only): its busy time is counted up to now when it stops. */
static void running_edge(struct running *r, const struct module_growth *m, bool start,
                         int64_t at_us)
{
	bool was = running_busy(r, m);
	if (start) {
		r->in_test++;
		r->seen_test = true;
	} else if (r->in_test > 0) {
		r->in_test--;
	}
	bool now = running_busy(r, m);
	if (was && !now && at_us > r->busy_since)
		r->busy_us += at_us - r->busy_since;
	else if (!was && now)
		r->busy_since = at_us;
}

/* The growth between two snapshots with figures (p, then e) goes to the modules running
 * then in proportion to how long each was busy in that stretch; when none was (or the clock
 * says nothing), evenly. While no module runs, to nobody. Each module's busy count restarts. */
static void attribute_interval(struct test_run *run, struct running *act, size_t nact,
                               const struct module_event *p, const struct module_event *e)
{
	int64_t total = 0;
	for (size_t k = 0; k < nact; k++) {
		struct running *r = &act[k];
		if (running_busy(r, &run->modules[r->index]) && e->at_us > r->busy_since)
			r->busy_us += e->at_us - r->busy_since;
		if (r->busy_us > 0)
			total += r->busy_us;
	}
	for (size_t k = 0; k < nact; k++) {
		struct running *r = &act[k];
		struct module_growth *m = &run->modules[r->index];
		/* weight of this module: busy_us / total, or 1 / nact */
		double w = total > 0 ? (r->busy_us > 0 ? (double)r->busy_us / (double)total : 0)
		                     : 1.0 / (double)nact;
		for (int c = 0; c < MEM_CAT_COUNT; c++)
			m->delta.mem[c] += (int64_t)((double)(e->mem[c] - p->mem[c]) * w);
		m->delta.processes += (int64_t)((double)(e->processes - p->processes) * w);
		m->delta.ets_tables += (int64_t)((double)(e->ets_tables - p->ets_tables) * w);
		r->busy_us = 0;
		r->busy_since = e->at_us;
	}
}

int attribution_build(struct test_run *run, const struct module_event *ev, size_t n)
{
	size_t cap = run->nmodules, nact = 0, acap = 0;
	struct running *act = NULL;             /* the modules running now */
	const struct module_event *last = NULL; /* the last snapshot with figures */
	int rc = -1;

	for (size_t i = 0; i < n; i++) {
		const struct module_event *e = &ev[i];
		struct running *r;
		if (e->has_mem) {
			if (last && nact)
				attribute_interval(run, act, nact, last, e);
			last = e;
		}
		switch (e->edge) {
		case EDGE_MODULE_START:
			if (GROW(act, acap, nact + 1, 16) < 0)
				goto out;
			struct module_growth *m = module_add(run, &cap, e);
			if (!m)
				goto out;
			m->overlapped = nact;
			for (size_t k = 0; k < nact; k++)
				run->modules[act[k].index].overlapped++;
			act[nact++] = (struct running){run->nmodules - 1, 0, false, e->at_us, 0};
			break;
		case EDGE_TEST_START:
		case EDGE_TEST_FINISH:
			if ((r = running_find(act, nact, run, e->module)))
				running_edge(r, &run->modules[r->index], e->edge == EDGE_TEST_START,
				             e->at_us);
			break;
		case EDGE_MODULE_FINISH:
			if ((r = running_find(act, nact, run, e->module))) {
				struct module_growth *fm = &run->modules[r->index];
				fm->finished = true;
				fm->time_us += e->at_us;
				*r = act[--nact];
			}
			break;
		}
	}
	rc = 0;
out:
	/* modules that never finished: no duration */
	for (size_t k = 0; k < nact; k++)
		run->modules[act[k].index].time_us = 0;
	free(act);
	return rc;
}

struct ranked {
	size_t index;
	int64_t key;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int64_t attribution_value(const struct mem_delta *d, int key)
{
	if (key == ATTRIBUTION_KEY_PROCESSES)
		return d->processes;
	return key >= 0 && key < MEM_CAT_COUNT ? d->mem[key] : 0;
}

void attribution_value_format(char *buf, size_t len, int key, int64_t v)
{
	char n[32];
	if (key == ATTRIBUTION_KEY_PROCESSES) {
		rules_count_format(n, sizeof(n), v);
		snprintf(buf, len, "%s%s processes", v > 0 ? "+" : "", n);
		return;
	}
	model_bytes_format(n, sizeof(n), v);
	snprintf(buf, len, "%s%s %s", v > 0 ? "+" : "", n,
	         key >= 0 && key < MEM_CAT_COUNT ? mem_cat_name((enum mem_cat)key) : "?");
}

size_t attribution_rank(const struct test_run *run, int key, bool tests, size_t *out, size_t max)
{
	size_t n = tests ? run->count : run->nmodules, k = 0;
	struct ranked *r = n ? malloc(n * sizeof(*r)) : NULL;
	/* which modules @moduletag gate: false exempts, in one pass over the tests */
	bool *exempt = !tests && n ? malloc(n * sizeof(*exempt)) : NULL;

	if (!r || key < 0 || key > ATTRIBUTION_KEY_PROCESSES || (!tests && !exempt) ||
	    (exempt && tags_modules_exempt(run, exempt) < 0)) {
		free(r);
		free(exempt);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		if (tests) {
			if (!run->tests[i].measured || tags_test_exempt(&run->tests[i]))
				continue;
			v = attribution_value(&run->tests[i].delta, key);
		} else {
			if (exempt[i])
				continue;
			v = attribution_value(&run->modules[i].delta, key);
		}
		if (v > 0)
			r[k++] = (struct ranked){i, v};
	}
	free(exempt);
	qsort(r, k, sizeof(*r), ranked_cmp);
	if (k > max)
		k = max;
	for (size_t i = 0; i < k; i++)
		out[i] = r[i].index;
	free(r);
	return k;
}

static int growth_by_name(const void *pa, const void *pb)
{
	const struct module_growth *a = *(const struct module_growth *const *)pa;
	const struct module_growth *b = *(const struct module_growth *const *)pb;
	int c = strcmp(a->module ? a->module : "", b->module ? b->module : "");
	return c ? c : (a > b) - (a < b); /* the same array: by position */
}

const struct module_growth **attribution_modules_sorted(const struct test_run *run)
{
	const struct module_growth **s =
	        run && run->nmodules ? malloc(run->nmodules * sizeof(*s)) : NULL;
	for (size_t i = 0; s && i < run->nmodules; i++)
		s[i] = &run->modules[i];
	if (s)
		qsort(s, run->nmodules, sizeof(*s), growth_by_name);
	return s;
}

const struct module_growth *attribution_module_find(const struct module_growth *const *sorted,
                                                    size_t n, const char *module)
{
	size_t lo = 0, hi = n; /* the first whose name is not below module */
	while (module && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(sorted[mid]->module ? sorted[mid]->module : "", module) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return module && lo < n && sorted[lo]->module && strcmp(sorted[lo]->module, module) == 0
	               ? sorted[lo]
	               : NULL;
}

int attribution_key(const struct finding *f)
{
	const char *rule = f->rule ? f->rule : "";
	int c = mem_cat_from_name(f->subject);

	if (f->unit == UNIT_COUNT)
		return ATTRIBUTION_KEY_NONE; /* ports against bytes would be no evidence */
	if ((strcmp(rule, "growth") == 0 || strcmp(rule, "baseline") == 0 ||
	     strcmp(rule, "trend") == 0) &&
	    c >= 0)
		return c;
	if (strcmp(rule, "ets") == 0)
		return MEM_ETS;
	if (strcmp(rule, "binary") == 0)
		return MEM_BINARY;
	/* born counts processes; a mailbox or one process's memory is bytes of process heap */
	if (strcmp(rule, "process") == 0)
		return f->subject && strcmp(f->subject, "born") != 0 ? MEM_PROCESSES_USED
		                                                     : ATTRIBUTION_KEY_PROCESSES;
	if (strcmp(rule, "atom") == 0)
		return MEM_ATOM_USED;
	if (strcmp(rule, "modules") == 0)
		return MEM_CODE;
	/* RSS, the peak and heaps are no erlang:memory figure; those rules name their own culprits
	 * from the node's readings at the edges (rules/rss.c, rules/peak.c) */
	if (strcmp(rule, "rss") == 0 || strcmp(rule, "peak") == 0 || strcmp(rule, "heap") == 0)
		return ATTRIBUTION_KEY_NONE;
	return MEM_TOTAL;
}

static const char *key_name(int key)
{
	if (key == ATTRIBUTION_KEY_PROCESSES)
		return "the process count";
	return key >= 0 && key < MEM_CAT_COUNT ? mem_cat_name((enum mem_cat)key) : "?";
}

/* One line of a finding's detail, cut at 1023 bytes, into t (base/grow.h: oom is sticky). */
__attribute__((format(printf, 2, 3))) static void text_add(struct textbuf *t, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (t->oom || n < 0)
		return;
	textbuf_add(t, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* What a finding judged, in key's unit: the growth (or, for the process rule's count, the
 * processes born and still alive). */
static int64_t judged_of(const struct snapshot *after, const struct finding *f, int key)
{
	if (key == ATTRIBUTION_KEY_PROCESSES)
		return after ? after->born_count : 0;
	return f->delta > 0 ? f->delta : f->after;
}

static int64_t noise_of(int key)
{
	return key == ATTRIBUTION_KEY_PROCESSES ? ATTRIBUTION_NOISE_PROCESSES
	                                        : ATTRIBUTION_NOISE_BYTES;
}

static void module_label(char *buf, size_t len, const struct module_growth *m)
{
	if (m->async && m->overlapped)
		snprintf(buf, len, "%s (async: shared with %zu overlapping module%s)",
		         rules_display(m->module), m->overlapped, m->overlapped == 1 ? "" : "s");
	else
		snprintf(buf, len, "%s (%s)", rules_display(m->module),
		         m->async ? "async, ran alone" : "sync");
}

static void add_modules(struct textbuf *t, const struct test_run *run, int key, int64_t judged)
{
	size_t top[ATTRIBUTION_TOP];
	size_t n = attribution_rank(run, key, false, top, ATTRIBUTION_TOP), shown = 0;
	char v[64], label[512];

	for (size_t i = 0; i < n; i++) {
		const struct module_growth *m = &run->modules[top[i]];
		/* more than the whole grew: garbage between edges, not a share of it */
		if (attribution_value(&m->delta, key) - noise_of(key) >
		    judged * ATTRIBUTION_MAX_OVER)
			continue;
		if (!shown++)
			text_add(t,
			         "test modules that grew %s most (light snapshots at their edges, "
			         "no GC%s):\n",
			         key_name(key), run->attribution_sync ? "" : "; approximate edges");
		attribution_value_format(v, sizeof(v), key, attribution_value(&m->delta, key));
		module_label(label, sizeof(label), m);
		if (key == ATTRIBUTION_KEY_PROCESSES)
			text_add(t, "  %zu. %s %s, %+lld ETS tables\n", shown, label, v,
			         (long long)m->delta.ets_tables);
		else
			text_add(t, "  %zu. %s %s, %+lld processes, %+lld ETS tables\n", shown,
			         label, v, (long long)m->delta.processes,
			         (long long)m->delta.ets_tables);
	}
}

/* The modules whose own edges show f's structure grow, most first (blame.h). */
static void add_struct_modules(struct textbuf *t, const struct test_run *run,
                               const struct finding *f, const struct blame *b)
{
	struct culprits list = {0};
	char v[64], label[512];
	for (size_t i = 0; i < run->nstructs; i++) {
		int64_t x = blame_share(&run->structs[i], f->structure_key);
		if (x > 0 && culprits_add(&list, i, x) < 0)
			t->oom = true;
	}
	culprits_sort(&list);
	for (size_t i = 0, shown = 0; i < list.count && shown < ATTRIBUTION_TOP; i++) {
		const struct module_structs *m = &run->structs[list.items[i].index];
		const struct module_growth *g = NULL;
		/* an exempt module is never named (checked for those shown: it reads every test) */
		if (tags_module_exempt(run, m->module))
			continue;
		for (size_t k = 0; k < run->nmodules && !g; k++)
			if (run->modules[k].module &&
			    strcmp(run->modules[k].module, m->module) == 0)
				g = &run->modules[k];
		if (shown == 0)
			text_add(t,
			         "test modules whose edges show %s grow (read at their edges):\n",
			         f->structure ? f->structure : f->structure_key);
		if (b->count)
			rules_count_format(v, sizeof(v), list.items[i].key);
		else
			model_bytes_format(v, sizeof(v), list.items[i].key);
		if (g)
			module_label(label, sizeof(label), g);
		else
			snprintf(label, sizeof(label), "%s", rules_display(m->module));
		text_add(t, "  %zu. %s +%s\n", ++shown, label, v);
	}
	culprits_clear(&list);
}

static void add_tests(struct textbuf *t, const struct test_run *run, int key, int64_t judged)
{
	size_t top[ATTRIBUTION_TOP];
	size_t n = attribution_rank(run, key, true, top, ATTRIBUTION_TOP), shown = 0;
	char v[64];

	for (size_t i = 0; i < n; i++) {
		const struct test_result *r = &run->tests[top[i]];
		if (attribution_value(&r->delta, key) - noise_of(key) >
		    judged * ATTRIBUTION_MAX_OVER)
			continue;
		if (!shown++)
			text_add(t,
			         "tests that grew %s most (light readings at each test's edges):\n",
			         key_name(key));
		attribution_value_format(v, sizeof(v), key, attribution_value(&r->delta, key));
		text_add(t, "  %zu. %s \"%s\" %s%s\n", shown, rules_display(r->module), r->name, v,
		         r->async ? " (async: overlapping tests share it)" : "");
	}
}

static void add_born(struct textbuf *t, const struct snapshot *after)
{
	char b[32], n[32];

	if (!after->nborn)
		return;
	rules_count_format(n, sizeof(n), after->born_count);
	model_bytes_format(b, sizeof(b), after->born_memory);
	text_add(t,
	         "processes born during the run and still alive: %s (%s), by initial call "
	         "or name:\n",
	         n, b);
	for (size_t i = 0; i < after->nborn && i < ATTRIBUTION_TOP; i++) {
		const struct proc_group *g = &after->born[i];
		rules_count_format(n, sizeof(n), g->count);
		model_bytes_format(b, sizeof(b), g->memory);
		text_add(t, "  %s x %s, %s (e.g. %s)\n", rules_display(g->key), n, b,
		         g->example_pid ? g->example_pid : "?");
	}
}

static void add_ets(struct textbuf *t, const struct snapshot *after)
{
	char b[32], rows[32];
	size_t shown = 0;

	/* the probe ships the tables largest first */
	for (size_t i = 0; i < after->nets && shown < ATTRIBUTION_TOP; i++) {
		const struct ets_info *e = &after->ets[i];
		if (!e->created)
			continue;
		if (!shown++)
			text_add(t, "ETS tables created during the run and left alive:\n");
		model_bytes_format(b, sizeof(b), e->memory);
		rules_count_format(rows, sizeof(rows), e->size);
		text_add(t, "  %s, %s rows, %s, owner %s%s%s%s\n", e->name ? e->name : "?", rows, b,
		         e->owner_name ? rules_display(e->owner_name) : "",
		         e->owner_name ? " (" : "", e->owner_pid ? e->owner_pid : "?",
		         e->owner_name ? ")" : "");
	}
}

static void add_bin_holders(struct textbuf *t, const struct snapshot *after)
{
	struct culprits list = {0};
	char b[32], freed[32], label[512];

	for (size_t i = 0; i < after->nprocs; i++)
		if (after->procs[i].bin_bytes >= ATTRIBUTION_MIN_HOLDER &&
		    culprits_add(&list, i, after->procs[i].bin_bytes) < 0)
			t->oom = true;
	culprits_sort(&list);
	for (size_t i = 0; i < list.count && i < ATTRIBUTION_TOP; i++) {
		const struct proc_info *p = &after->procs[list.items[i].index];
		if (i == 0)
			text_add(t, "processes holding the most refc binary bytes after GC:\n");
		model_bytes_format(b, sizeof(b), p->bin_bytes);
		/* -1 before GC: not measured; gate run always measures it */
		model_bytes_format(freed, sizeof(freed),
		                   p->bin_bytes_before_gc > p->bin_bytes
		                           ? p->bin_bytes_before_gc - p->bin_bytes
		                           : 0);
		rules_proc_label(label, sizeof(label), p);
		text_add(t, "  %s %s in %lld binaries (GC freed %s)%s\n", label, b,
		         (long long)p->bin_refs, freed, p->born ? ", born during the run" : "");
	}
	culprits_clear(&list);
}

int64_t attribution_owner_value(const struct module_owner *o, int key)
{
	switch (key) {
	case ATTRIBUTION_KEY_PROCESSES: return o->processes;
	case MEM_BINARY: return o->bin_bytes;
	case MEM_ETS: return o->table_bytes;
	case MEM_PROCESSES:
	case MEM_PROCESSES_USED: return o->memory;
	default: return -1;
	}
}

static void owner_format(char *buf, size_t len, const struct module_owner *o, int key)
{
	char n[32], b[32];
	switch (key) {
	case ATTRIBUTION_KEY_PROCESSES:
	case MEM_PROCESSES:
	case MEM_PROCESSES_USED:
		rules_count_format(n, sizeof(n), o->processes);
		model_bytes_format(b, sizeof(b), o->memory);
		snprintf(buf, len, "left %s process%s alive, %s", n, o->processes == 1 ? "" : "es",
		         b);
		break;
	case MEM_BINARY:
		model_bytes_format(b, sizeof(b), o->bin_bytes);
		snprintf(buf, len, "its processes hold %s of refc binaries", b);
		break;
	default:
		rules_count_format(n, sizeof(n), o->tables);
		model_bytes_format(b, sizeof(b), o->table_bytes);
		snprintf(buf, len, "its processes own %s ETS table%s of %s created during the run",
		         n, o->tables == 1 ? "" : "s", b);
		break;
	}
}

/* The module that left the most behind for key, by spawn ancestry; NULL when none did or
 * when what it left is under a quarter of what the finding judged (the growth is then
 * mostly elsewhere, e.g. in a process started before the run). */
static const struct module_owner *top_owner(const struct snapshot *after, int key,
                                            const struct finding *f)
{
	const struct module_owner *best = NULL;
	if (!after)
		return NULL;
	for (size_t i = 0; i < after->nowners; i++) {
		const struct module_owner *o = &after->owners[i];
		int64_t v = attribution_owner_value(o, key);
		if (v > 0 && (!best || v > attribution_owner_value(best, key)))
			best = o;
	}
	/* the process rule judges bytes or counts; what is left behind is counted in processes */
	int64_t judged = key == ATTRIBUTION_KEY_PROCESSES ? after->born_count
	                 : f->delta > 0                   ? f->delta
	                                                  : f->after;
	if (best && judged > 0 && attribution_owner_value(best, key) < judged / 4)
		return NULL;
	return best;
}

static void add_owners(struct textbuf *t, const struct snapshot *after, int key)
{
	struct culprits list = {0};
	char what[256];

	if (!after)
		return;
	for (size_t i = 0; i < after->nowners; i++) {
		int64_t v = attribution_owner_value(&after->owners[i], key);
		if (v > 0 && culprits_add(&list, i, v) < 0)
			t->oom = true;
	}
	culprits_sort(&list);
	for (size_t i = 0; i < list.count && i < ATTRIBUTION_TOP; i++) {
		const struct module_owner *o = &after->owners[list.items[i].index];
		if (i == 0)
			text_add(t,
			         "test modules that left it behind (processes descending from the "
			         "module's tests, still alive):\n");
		owner_format(what, sizeof(what), o, key);
		text_add(t, "  %zu. %s %s\n", i + 1, rules_display(o->module), what);
	}
	culprits_clear(&list);
}

bool attribution_evidence(int64_t measured, int64_t judged, int key)
{
	int64_t noise = key == ATTRIBUTION_KEY_PROCESSES ? ATTRIBUTION_NOISE_PROCESSES
	                                                 : ATTRIBUTION_NOISE_BYTES;
	if (judged <= 0 || measured < noise)
		return false;
	/* a quarter of what was judged at least, and at most twice it (plus noise): the edges
	 * are light snapshots without GC, so a leaking module's figure carries some garbage
	 * (a GenServer's heap before its GC: +13.2 MB measured, +11.5 MB judged); far more
	 * than the whole is garbage, not this growth (plug: +28.6 MB against +4.2 MB) */
	return measured >= judged / 4 && measured - noise <= judged * ATTRIBUTION_MAX_OVER;
}

/* "; likely culprit: X (...)": the module that left it behind when one clearly did (exact,
 * also for async modules), else the test when measured, else the module that grew it, each
 * only with evidence (attribution_evidence); else "; no test stands out". */
static int category_culprit(char *buf, size_t len, const struct test_run *run,
                            const struct snapshot *after, const struct finding *f, int key,
                            const char **cmod, const char **ctest, bool *exact)
{
	size_t top[1];
	char v[256], w[64];
	const struct module_owner *o = top_owner(after, key, f);
	int64_t judged = judged_of(after, f, key);

	if (o && tags_module_exempt(run, o->module))
		o = NULL; /* @moduletag gate: false: never a culprit */
	if (o && attribution_owner_value(o, key) < (key == ATTRIBUTION_KEY_PROCESSES
	                                                    ? ATTRIBUTION_NOISE_PROCESSES
	                                                    : ATTRIBUTION_NOISE_BYTES))
		o = NULL;

	if (o) {
		owner_format(v, sizeof(v), o, key);
		/* per test, name the module's test that grew it most */
		if (run && run->attribution == ATTRIBUTION_TEST &&
		    attribution_rank(run, key, true, top, 1) && run->tests[top[0]].module &&
		    strcmp(run->tests[top[0]].module, o->module) == 0) {
			snprintf(buf, len, "; likely culprit: %s \"%s\" (%s)",
			         rules_display(o->module), run->tests[top[0]].name, v);
			*ctest = run->tests[top[0]].name;
		} else {
			snprintf(buf, len, "; likely culprit: %s (%s)", rules_display(o->module),
			         v);
		}
		*cmod = o->module;
		*exact = true;
		return 1;
	}
	if (!run)
		return 0;

	if (key == ATTRIBUTION_KEY_PROCESSES)
		rules_count_format(w, sizeof(w), judged);
	else
		model_bytes_format(w, sizeof(w), judged);
	if (run->attribution == ATTRIBUTION_TEST && attribution_rank(run, key, true, top, 1) &&
	    attribution_evidence(attribution_value(&run->tests[top[0]].delta, key), judged, key)) {
		const struct test_result *r = &run->tests[top[0]];
		int64_t x = attribution_value(&r->delta, key);
		attribution_value_format(v, sizeof(v), key, x < judged ? x : judged);
		snprintf(buf, len, "; likely culprit: %s \"%s\" (%s of %s%s judged%s)",
		         rules_display(r->module), r->name, v,
		         key == ATTRIBUTION_KEY_PROCESSES ? "" : "+", w,
		         r->async ? ", async: overlapping tests share it" : "");
		*cmod = r->module;
		*ctest = r->name;
		return 1;
	}
	if (attribution_rank(run, key, false, top, 1) &&
	    attribution_evidence(attribution_value(&run->modules[top[0]].delta, key), judged,
	                         key)) {
		const struct module_growth *m = &run->modules[top[0]];
		int64_t x = attribution_value(&m->delta, key);
		attribution_value_format(v, sizeof(v), key, x < judged ? x : judged);
		snprintf(buf, len, "; likely culprit: %s (%s of %s%s judged%s)",
		         rules_display(m->module), v, key == ATTRIBUTION_KEY_PROCESSES ? "" : "+",
		         w,
		         m->async && m->overlapped ? ", in an async group: shared with the modules "
		                                     "busy at the same time"
		                                   : "");
		*cmod = m->module;
		return 1;
	}
	if (judged > 0 && (run->nmodules || run->attribution == ATTRIBUTION_TEST)) {
		snprintf(buf, len,
		         "; no test stands out (no test module's own growth of %s is a "
		         "consistent share of the %s%s judged)",
		         key_name(key), key == ATTRIBUTION_KEY_PROCESSES ? "" : "+", w);
		return 1;
	}
	return 0;
}

/* The test module f's structure descends from by spawn ancestry (the probe's), or the one its
 * rule named from it; NULL when none. Borrowed. */
static const char *structure_module(const struct snapshot *after, const struct finding *f)
{
	const char *key = f->structure_key;
	if (f->culprit || !key || !after)
		return f->culprit;
	if (strncmp(key, "proc:", 5) == 0)
		for (size_t i = 0; i < after->ngrew_procs; i++)
			if (after->grew_procs[i].pid &&
			    strcmp(after->grew_procs[i].pid, key + 5) == 0)
				return after->grew_procs[i].module;
	if (strncmp(key, "ets:", 4) == 0)
		for (size_t i = 0; i < after->ngrew_ets; i++)
			if (after->grew_ets[i].name &&
			    strcmp(after->grew_ets[i].name, key + 4) == 0)
				return after->grew_ets[i].module;
	return NULL;
}

/* The test module that started f's structure (its process, its table's owner), by spawn
 * ancestry; NULL when unknown. Borrowed. */
static const char *structure_starter(const struct snapshot *after, const struct finding *f)
{
	const char *key = f->structure_key;
	if (!key || !after)
		return NULL;
	if (strncmp(key, "proc:", 5) == 0) {
		for (size_t i = 0; i < after->ngrew_procs; i++)
			if (after->grew_procs[i].pid && after->grew_procs[i].module &&
			    strcmp(after->grew_procs[i].pid, key + 5) == 0)
				return after->grew_procs[i].module;
		for (size_t i = 0; i < after->ninside; i++)
			if (after->inside[i].pid && strcmp(after->inside[i].pid, key + 5) == 0 &&
			    after->inside[i].started.module && *after->inside[i].started.module)
				return after->inside[i].started.module;
	}
	if (strncmp(key, "ets:", 4) == 0)
		for (size_t i = 0; i < after->ngrew_ets; i++)
			if (after->grew_ets[i].name &&
			    strcmp(after->grew_ets[i].name, key + 4) == 0)
				return after->grew_ets[i].module;
	return NULL;
}

/* The culprit of a finding: the module whose processes left it behind (spawn ancestry) when
 * one did; else, when its structure was read at the modules' edges (blame.h), the
 * structure's own growth decides, and the category's culprit keeps its words only when it
 * is the same module (a category's growth between a module's edges also counts the garbage
 * and the other structures of that category, which named innocent modules). Else as before. */
static int first_culprit(char *buf, size_t len, const struct test_run *run,
                         const struct snapshot *after, const struct finding *f, int key,
                         const struct blame *b, const char **cmod, const char **ctest)
{
	bool exact = false;
	int rc = key == ATTRIBUTION_KEY_NONE
	                 ? 0
	                 : category_culprit(buf, len, run, after, f, key, cmod, ctest, &exact);
	/* spawn ancestry is exact when it is the structure's own (its process, its table's
	 * owner, what its rule named from it), and stands unless the edges name another
	 * module or show it grow in windows of their own (async neighbours see the same
	 * growth: no evidence against it) */
	const char *own = structure_module(after, f);
	bool contested = b->kind == BLAME_CULPRIT || (b->kind == BLAME_SPREAD && !b->side_by_side);
	/* who started it is not who grew it: a structure whose own growth is one other
	 * module's (a server started in one module's setup_all, fed by another's tests) is that
	 * module's, and its starter stays as context */
	const char *starter = structure_starter(after, f);
	bool grown_elsewhere =
	        b->kind == BLAME_CULPRIT && starter && strcmp(starter, b->module) != 0;
	if (b->kind == BLAME_NO_EVIDENCE || (exact && *cmod && !grown_elsewhere &&
	                                     ((own && strcmp(own, *cmod) == 0) || !contested)))
		return rc;
	if (b->kind == BLAME_CULPRIT && *cmod && strcmp(*cmod, b->module) == 0)
		return rc;
	struct blame told = *b;
	if (grown_elsewhere && !tags_module_exempt(run, starter))
		told.started_by = starter;
	blame_format(buf, len, &told, f);
	*cmod = b->kind == BLAME_CULPRIT ? b->module : NULL;
	*ctest = NULL;
	return 1;
}

int attribution_annotate(struct findings *findings, const struct snapshot *before,
                         const struct snapshot *after, const struct test_run *run)
{
	for (size_t i = 0; i < findings->count; i++) {
		struct finding *f = &findings->items[i];
		struct textbuf t = {0};
		char lead[1024];

		if (f->verdict != VERDICT_FAIL || (f->show & SHOW_MORE))
			continue;
		int key = attribution_key(f);
		struct blame b;
		blame_structure(&b, run, before, after, f);
		/* a rule that named its culprit from the structure's own ancestry (ports, a group
		 * of tables) is exact */
		if (key == ATTRIBUTION_KEY_NONE && (b.kind == BLAME_NO_EVIDENCE || f->culprit))
			continue;
		if (run && b.kind != BLAME_NO_EVIDENCE) {
			/* the structure's own growth, not its category's, is the evidence shown */
			add_struct_modules(&t, run, f, &b);
		} else if (run && key != ATTRIBUTION_KEY_NONE) {
			int64_t judged = judged_of(after, f, key);
			add_modules(&t, run, key, judged);
			if (run->attribution == ATTRIBUTION_TEST)
				add_tests(&t, run, key, judged);
		}
		if (after && key != ATTRIBUTION_KEY_NONE) {
			add_owners(&t, after, key);
			add_born(&t, after);
			add_ets(&t, after);
			add_bin_holders(&t, after);
		}
		if (t.oom) {
			textbuf_free(&t);
			return -1;
		}
		if (t.s) {
			free(f->detail);
			f->detail = t.s;
		}
		const char *cmod = NULL, *ctest = NULL;
		if (first_culprit(lead, sizeof(lead), run, after, f, key, &b, &cmod, &ctest)) {
			const char *l = strncmp(lead, "; ", 2) == 0 ? lead + 2 : lead;
			if (finding_part_add(f, PART_CULPRIT, false, "; ", l) < 0)
				return -1;
			/* who, for the writers' file and line (rules/tags.c) */
			free(f->culprit);
			free(f->culprit_test);
			f->culprit = cmod ? strdup(cmod) : NULL;
			f->culprit_test = ctest ? strdup(ctest) : NULL;
			if ((cmod && !f->culprit) || (ctest && !f->culprit_test))
				return -1;
		}
	}
	return 0;
}
