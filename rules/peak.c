/* rules/peak.c: the run's peak and the largest heaps. */
#include "rules/peak.h"

#include "model/finding.h"
#include "model/tests.h"
#include "rules/tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void peak_first_test(const char *tests, char *module, size_t mlen, char *test, size_t tlen)
{
	module[0] = test[0] = '\0';
	if (!tests || !*tests)
		return;
	const char *tab = strchr(tests, '\t');
	const char *nl = strchr(tests, '\n');
	if (!tab || (nl && nl < tab))
		return;
	snprintf(module, mlen, "%.*s", (int)(tab - tests), tests);
	const char *end = nl ? nl : tab + strlen(tab);
	snprintf(test, tlen, "%.*s", (int)(end - tab - 1), tab + 1);
}

/* How many lines a "\n"-separated list has. */
static size_t lines(const char *s)
{
	size_t n = s && *s ? 1 : 0;
	for (; s && *s; s++)
		n += *s == '\n' && s[1];
	return n;
}

void peak_where(char *buf, size_t len, const struct fine_level *f)
{
	buf[0] = '\0';
	if (f->nwindows == 0)
		return;
	const struct peak_window *w = &f->windows[0];
	char mod[256], test[512], first[256];
	peak_first_test(w->tests, mod, sizeof(mod), test, sizeof(test));
	size_t nt = lines(w->tests), nm = lines(w->modules);
	const char *nl = strchr(w->modules, '\n');
	snprintf(first, sizeof(first), "%.*s",
	         (int)(nl ? nl - w->modules : (long)strlen(w->modules)), w->modules);
	if (nt == 1)
		snprintf(buf, len, "in %s, test \"%s\"", rules_display(mod), test);
	else if (nm == 1)
		snprintf(buf, len, "in %s%s", rules_display(first),
		         nt > 1 ? " (several of its tests ran then)"
		                : " (its tests are told apart with --per-test)");
	else if (nm > 1)
		snprintf(buf, len, "while %zu test modules ran side by side (%s, ...)", nm,
		         rules_display(first));
	else
		snprintf(buf, len,
		         "outside any test module (loading the test files, setup_all, the "
		         "application, an --exec workload)");
}

/* Sets f's culprit test module (and test); NULL test: none. Returns 0, or -1. */
static int culprit_set(struct finding *f, const char *module, const char *test)
{
	free(f->culprit);
	free(f->culprit_test);
	f->culprit = strdup(module);
	f->culprit_test = test && *test ? strdup(test) : NULL;
	return f->culprit && (!test || !*test || f->culprit_test) ? 0 : -1;
}

static void heap_line(char *buf, size_t len, const struct heap_seen *h)
{
	char b[32], mod[256], test[512];
	model_bytes_format(b, sizeof(b), h->bytes);
	peak_first_test(h->tests, mod, sizeof(mod), test, sizeof(test));
	int at = snprintf(buf, len, "%s%s%s%s reached a heap of %s",
	                  h->label[0] ? rules_display(h->label) : "", h->label[0] ? " (" : "",
	                  h->pid, h->label[0] ? ")" : "", b);
	if (at > 0 && (size_t)at < len && mod[0])
		snprintf(buf + at, len - (size_t)at, " during %s test \"%s\"", rules_display(mod),
		         test);
}

void peak_allocated(char *buf, size_t len, const struct fine_level *f)
{
	char mx[32], bf[32];
	if (len > 0)
		buf[0] = '\0';
	if (!f->have_allocated_max)
		return;
	model_bytes_format(mx, sizeof(mx), f->allocated_max);
	model_bytes_format(bf, sizeof(bf), f->allocated_max_before);
	if (f->allocated_max > f->allocated_max_before)
		snprintf(buf, len,
		         "allocated peak (carriers) at most %s, raised by the run (%s before it)",
		         mx, bf);
	else
		snprintf(buf, len,
		         "allocated peak (carriers) not raised by the run: at most %s since the "
		         "node "
		         "started, set before it",
		         mx);
}

static int peak_run(struct findings *out, const struct fine_level *f, const struct fine_config *cfg)
{
	size_t first = out->count;
	if (!f->have_peak || f->peak <= 0) {
		char msg[512];
		snprintf(msg, sizeof(msg), "not measured: %s",
		         f->peak_note ? f->peak_note
		                      : "the node's high-water mark could not be read");
		if (findings_add(out, "peak", "run", VERDICT_SKIP, 0, 0, 0, -1, msg) < 0)
			return -1;
		findings_show(out, first, UNIT_BYTES, SHOW_QUIET_PASS);
		return 0;
	}
	bool fail = cfg->peak_max >= 0 && f->peak > cfg->peak_max;
	char pk[32], st[32], lim[32], where[768] = "", msg[2048];
	model_bytes_format(pk, sizeof(pk), f->peak);
	model_bytes_format(st, sizeof(st), f->rss_before);
	model_bytes_format(lim, sizeof(lim), cfg->peak_max);
	if (f->hwm_reset)
		peak_where(where, sizeof(where), f);
	int at = snprintf(msg, sizeof(msg), "peak RSS %s during the run (%s at its start)%s%s", pk,
	                  st, where[0] ? " " : "", where);
	if (!f->hwm_reset && at > 0 && (size_t)at < sizeof(msg))
		at += snprintf(msg + at, sizeof(msg) - (size_t)at, " (%s)",
		               f->peak_note ? f->peak_note : "the node's peak since it started");
	char alloc[256];
	peak_allocated(alloc, sizeof(alloc), f);
	if (alloc[0] && at > 0 && (size_t)at < sizeof(msg))
		at += snprintf(msg + at, sizeof(msg) - (size_t)at, "; %s", alloc);
	if (f->nheaps > 0 && at > 0 && (size_t)at < sizeof(msg)) {
		char h[512];
		heap_line(h, sizeof(h), &f->heaps[0]);
		at += snprintf(msg + at, sizeof(msg) - (size_t)at, "; largest heap: %s", h);
	}
	if (at > 0 && (size_t)at < sizeof(msg))
		snprintf(msg + at, sizeof(msg) - (size_t)at, "%s%s%s",
		         cfg->peak_max >= 0 ? ", limit " : "",
		         cfg->peak_max >= 0 ? lim : " (not judged: [peak] max is off)", "");
	if (findings_add(out, "peak", "run", fail ? VERDICT_FAIL : VERDICT_PASS, f->rss_before,
	                 f->peak, cfg->peak_max >= 0 ? cfg->peak_max : 0, -1, msg) < 0)
		return -1;
	struct finding *fd = &out->items[out->count - 1];
	char mod[256], test[512];
	/* a culprit only for a failing peak: a passing one says where it fell, as context */
	if (fail && f->hwm_reset && f->nwindows > 0) {
		const struct peak_window *w = &f->windows[0];
		peak_first_test(w->tests, mod, sizeof(mod), test, sizeof(test));
		if (lines(w->tests) == 1 && culprit_set(fd, mod, test) < 0)
			return -1;
		if (lines(w->tests) != 1 && lines(w->modules) == 1 &&
		    culprit_set(fd, w->modules, NULL) < 0)
			return -1;
	}
	findings_show(out, first, UNIT_BYTES, SHOW_FIGURES);
	return 0;
}

/* Heaps over max_heap: one finding per process label (the largest heap it reached). */
static int peak_heaps(struct findings *out, const struct fine_level *f,
                      const struct fine_config *cfg)
{
	size_t first = out->count;
	if (cfg->max_heap < 0)
		return 0;
	char lim[32];
	model_bytes_format(lim, sizeof(lim), cfg->max_heap);
	if (!f->monitor || strcmp(f->monitor, "gate") != 0) {
		char msg[512];
		snprintf(msg, sizeof(msg), "[process] max_heap %s not judged: %s", lim,
		         f->monitor ? f->monitor : "heaps were not watched");
		if (findings_add(out, "heap", "heap", VERDICT_SKIP, 0, 0, 0, -1, msg) < 0)
			return -1;
		findings_show(out, first, UNIT_BYTES, 0);
		if (!f->monitor || strncmp(f->monitor, "replaced", 8) != 0)
			return 0;
		first = out->count; /* replaced mid-run: what was seen before still counts */
	}
	size_t failed = 0;
	for (size_t i = 0; i < f->nheaps; i++) {
		const struct heap_seen *h = &f->heaps[i];
		if (h->bytes <= cfg->max_heap)
			continue;
		bool dup = false; /* the heaps are largest first: a label seen is already named */
		for (size_t j = 0; j < i && h->label[0]; j++)
			dup |= f->heaps[j].bytes > cfg->max_heap &&
			       strcmp(f->heaps[j].label, h->label) == 0;
		if (dup)
			continue;
		char line[768], msg[1024], subject[300];
		heap_line(line, sizeof(line), h);
		snprintf(msg, sizeof(msg), "process %s, over the limit %s", line, lim);
		snprintf(subject, sizeof(subject), "heap %s",
		         h->label[0] ? rules_display(h->label) : h->pid);
		if (findings_add(out, "heap", subject, VERDICT_FAIL, 0, h->bytes, cfg->max_heap, -1,
		                 msg) < 0)
			return -1;
		char mod[256], test[512];
		peak_first_test(h->tests, mod, sizeof(mod), test, sizeof(test));
		if (mod[0] && culprit_set(&out->items[out->count - 1], mod, test) < 0)
			return -1;
		failed++;
	}
	if (failed == 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "no process's heap passed %s", lim);
		if (findings_add(out, "heap", "heap", VERDICT_PASS, 0, 0, cfg->max_heap, -1, msg) <
		    0)
			return -1;
	}
	findings_show(out, first, UNIT_BYTES, SHOW_FIGURES);
	return 0;
}

int peak_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
               const struct fine_config *cfg)
{
	(void)before;
	const struct fine_level *f = &after->fine;
	if (!f->have || !(f->have_peak || f->peak_note))
		return 0;
	if (peak_run(out, f, cfg) < 0 || peak_heaps(out, f, cfg) < 0)
		return -1;
	return 0;
}

/* ---- @tag gate: [max_peak: SIZE] ---- */

/* How far a test's window rose above its start (0 when it did not). */
static int64_t window_rise(const struct test_peak *p)
{
	return p->peak > p->start_rss ? p->peak - p->start_rss : 0;
}

/* A test's window; under --repeat the tracker saw it once per run (runs 2..N): the highest
 * rise of its clean windows is judged. */
static const struct test_peak *test_peak_find(const struct fine_level *f, const char *module,
                                              const char *name)
{
	size_t ml = strlen(module);
	const struct test_peak *best = NULL;
	for (size_t i = 0; i < f->ntest_peaks; i++) {
		const struct test_peak *p = &f->test_peaks[i];
		const char *w = p->what;
		if (strncmp(w, module, ml) != 0 || w[ml] != '\t' || strcmp(w + ml + 1, name) != 0)
			continue;
		if (!best || (p->clean && !best->clean) ||
		    (p->clean == best->clean && window_rise(p) > window_rise(best)))
			best = p;
	}
	return best;
}

static int tag_one(struct findings *out, const struct fine_level *f, const struct test_result *t,
                   int64_t max)
{
	char subject[512], msg[1024], lim[32];
	snprintf(subject, sizeof(subject), "%s \"%s\"", rules_display(t->module), t->name);
	model_bytes_format(lim, sizeof(lim), max);
	const struct test_peak *p = test_peak_find(f, t->module, t->name);
	enum verdict v = VERDICT_SKIP;
	int64_t rise = 0;
	if (!f->have || !f->have_peak || !f->hwm_reset)
		snprintf(msg, sizeof(msg), "%s: max_peak %s not judged: %s", subject, lim,
		         f->peak_note ? f->peak_note : "the node's high-water mark was not read");
	else if (!p || !p->clean || t->async)
		snprintf(msg, sizeof(msg),
		         "%s: max_peak %s not judged: an async test shares its window with the "
		         "tests running alongside, so its peak is not its own; make its module "
		         "async: false to judge it",
		         subject, lim);
	else {
		char pk[32], r[32];
		rise = window_rise(p);
		model_bytes_format(pk, sizeof(pk), p->peak);
		model_bytes_format(r, sizeof(r), rise);
		v = rise > max ? VERDICT_FAIL : VERDICT_PASS;
		snprintf(msg, sizeof(msg),
		         "%s peaked at RSS %s, +%s above its start, %s its @tag gate "
		         "max_peak %s",
		         subject, pk, r, v == VERDICT_FAIL ? "over" : "within", lim);
	}
	if (findings_add(out, "peak", subject, v, p ? p->start_rss : 0, p ? p->peak : 0, max, -1,
	                 msg) < 0)
		return -1;
	struct finding *fd = &out->items[out->count - 1];
	fd->delta = rise;
	return culprit_set(fd, t->module, t->name);
}

int peak_tags_check(struct findings *out, const struct snapshot *after, const struct test_run *run,
                    char *err, size_t errlen)
{
	size_t first = out->count;
	for (size_t i = 0; run && i < run->count; i++) {
		const struct test_result *t = &run->tests[i];
		struct tag_limits lim;
		if (!t->gate_tag || !t->module || !t->name ||
		    (t->state != TEST_PASSED && t->state != TEST_FAILED))
			continue;
		if (tags_parse(t->gate_tag, &lim, err, errlen) < 0)
			return -2;
		if (lim.exempt || lim.max_peak < 0)
			continue;
		if (tag_one(out, &after->fine, t, lim.max_peak) < 0)
			return -1;
	}
	findings_show(out, first, UNIT_BYTES, SHOW_FIGURES);
	return 0;
}
