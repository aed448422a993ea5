/* gate/probe/probe_fine.c: the fine level of a snapshot, decoded with bounds. */
#include "gate/probe/probe_fine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errtext.h"
#include "model/snapshot.h"

/* Most rows of each list gate keeps: the probe sends tens; a node that sends more is cut. */
#define FINE_ROWS_MAX 4096

static int fig(const struct term *t, int64_t *out)
{
	int64_t v;
	if (term_int(t, &v) < 0 || v < 0 || v > MODEL_FIGURE_MAX)
		return -1;
	*out = v;
	return 0;
}

/* An optional figure under key: absent is fine (0), present must be one. */
static int opt_fig(const struct term *map, const char *key, int64_t *out, bool *have)
{
	const struct term *t = term_map_get(map, key);
	if (have)
		*have = false;
	if (!t)
		return 0;
	if (fig(t, out) < 0)
		return -1;
	if (have)
		*have = true;
	return 0;
}

/* An optional text under key: NULL when absent. */
static int opt_str(const struct term *map, const char *key, char **out)
{
	const struct term *t = term_map_get(map, key);
	*out = NULL;
	if (!t)
		return 0;
	const char *s = term_text(t);
	if (!s)
		return -1;
	*out = strdup(s);
	return *out ? 0 : -1;
}

/* A list of texts as one "\n"-separated string ("" for none). */
static int joined(const struct term *t, char **out)
{
	*out = NULL;
	size_t n = 0, len = 1;
	if (t && t->type == TERM_LIST)
		n = t->u.seq.n;
	else if (t && !(t->type == TERM_BINARY && t->u.bin.len == 0))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *s = term_text(&t->u.seq.items[i]);
		if (!s)
			return -1;
		len += strlen(s) + 1;
	}
	if (!(*out = calloc(1, len)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(*out, "\n");
		strcat(*out, term_text(&t->u.seq.items[i]));
	}
	return 0;
}

static int decode_origins(const struct term *list, struct fine_level *out)
{
	if (!list || list->type != TERM_LIST)
		return -1;
	size_t n = list->u.seq.n < FINE_ROWS_MAX ? list->u.seq.n : FINE_ROWS_MAX;
	if (n && !(out->origins = calloc(n, sizeof(*out->origins))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct term *r = &list->u.seq.items[i];
		struct alloc_origin *o = &out->origins[i];
		out->norigins = i + 1;
		if (r->type != TERM_TUPLE || r->u.seq.n != 3)
			return -1;
		const char *org = term_text(term_tuple_at(r, 0)),
		           *ty = term_text(term_tuple_at(r, 1));
		const struct term *h = term_tuple_at(r, 2);
		if (!org || !ty || !h || h->type != TERM_TUPLE || h->u.seq.n > FINE_HIST_MAX ||
		    !(o->origin = strdup(org)) || !(o->type = strdup(ty)))
			return -1;
		o->nhist = h->u.seq.n;
		for (size_t k = 0; k < o->nhist; k++)
			if (fig(&h->u.seq.items[k], &o->hist[k]) < 0)
				return -1;
	}
	return 0;
}

static int decode_windows(const struct term *list, struct fine_level *out)
{
	if (!list)
		return 0;
	if (list->type != TERM_LIST)
		return -1;
	size_t n = list->u.seq.n < FINE_ROWS_MAX ? list->u.seq.n : FINE_ROWS_MAX;
	if (n && !(out->windows = calloc(n, sizeof(*out->windows))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct term *m = &list->u.seq.items[i];
		struct peak_window *w = &out->windows[i];
		out->nwindows = i + 1;
		if (m->type != TERM_MAP || fig(term_map_get(m, "peak"), &w->peak) < 0 ||
		    fig(term_map_get(m, "start_rss"), &w->start_rss) < 0 ||
		    joined(term_map_get(m, "modules"), &w->modules) < 0 ||
		    joined(term_map_get(m, "tests"), &w->tests) < 0)
			return -1;
	}
	return 0;
}

static int decode_heaps(const struct term *list, struct fine_level *out)
{
	if (!list)
		return 0;
	if (list->type != TERM_LIST)
		return -1;
	size_t n = list->u.seq.n < FINE_ROWS_MAX ? list->u.seq.n : FINE_ROWS_MAX;
	if (n && !(out->heaps = calloc(n, sizeof(*out->heaps))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct term *m = &list->u.seq.items[i];
		struct heap_seen *h = &out->heaps[i];
		out->nheaps = i + 1;
		if (m->type != TERM_MAP || opt_str(m, "pid", &h->pid) < 0 || !h->pid ||
		    opt_str(m, "label", &h->label) < 0 || !h->label ||
		    fig(term_map_get(m, "bytes"), &h->bytes) < 0 ||
		    joined(term_map_get(m, "tests"), &h->tests) < 0)
			return -1;
	}
	return 0;
}

static int decode_grew(const struct term *list, struct fine_level *out)
{
	if (!list)
		return 0;
	if (list->type != TERM_LIST)
		return -1;
	size_t n = list->u.seq.n < FINE_ROWS_MAX ? list->u.seq.n : FINE_ROWS_MAX;
	if (n && !(out->rss_grew = calloc(n, sizeof(*out->rss_grew))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct term *m = &list->u.seq.items[i];
		struct rss_grower *g = &out->rss_grew[i];
		out->nrss_grew = i + 1;
		if (m->type != TERM_MAP || opt_str(m, "what", &g->what) < 0 || !g->what ||
		    fig(term_map_get(m, "bytes"), &g->bytes) < 0)
			return -1;
	}
	return 0;
}

static int decode_test_peaks(const struct term *list, struct fine_level *out)
{
	if (!list)
		return 0;
	if (list->type != TERM_LIST)
		return -1;
	size_t n = list->u.seq.n < FINE_ROWS_MAX ? list->u.seq.n : FINE_ROWS_MAX;
	if (n && !(out->test_peaks = calloc(n, sizeof(*out->test_peaks))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct term *m = &list->u.seq.items[i];
		struct test_peak *p = &out->test_peaks[i];
		out->ntest_peaks = i + 1;
		const struct term *clean = m->type == TERM_MAP ? term_map_get(m, "clean") : NULL;
		if (m->type != TERM_MAP || opt_str(m, "what", &p->what) < 0 || !p->what ||
		    fig(term_map_get(m, "peak"), &p->peak) < 0 ||
		    fig(term_map_get(m, "start_rss"), &p->start_rss) < 0 || !clean)
			return -1;
		p->clean = term_is_atom(clean, "true");
	}
	return 0;
}

/* The allocated peak's bound (a probe without it sends neither: have_allocated_max false);
 * allocated_max_before is `undefined` when the before-snapshot had no fine level. */
static int decode_allocated_max(const struct term *p, struct fine_level *out)
{
	const struct term *mb = term_map_get(p, "allocated_max_before");
	if (opt_fig(p, "allocated_max", &out->allocated_max, &out->have_allocated_max) < 0)
		return -1;
	if (out->have_allocated_max && mb && mb->type == TERM_INT)
		return fig(mb, &out->allocated_max_before);
	out->have_allocated_max = false;
	return 0;
}

/* The tracker's report (after-snapshot): the run's peak, its windows, the heaps. */
static int decode_peak(const struct term *p, struct fine_level *out)
{
	if (!p)
		return 0;
	if (p->type != TERM_MAP)
		return -1;
	bool have_hwm;
	const struct term *reset = term_map_get(p, "hwm_reset");
	if (opt_fig(p, "hwm", &out->peak, &have_hwm) < 0 ||
	    opt_fig(p, "allocated_before", &out->allocated_before, NULL) < 0 ||
	    decode_allocated_max(p, out) < 0 || opt_fig(p, "edge_us", &out->edge_us, NULL) < 0 ||
	    opt_fig(p, "edges", &out->edges, NULL) < 0 ||
	    opt_fig(p, "heap_watch", &out->heap_watch, NULL) < 0 ||
	    opt_str(p, "hwm_note", &out->peak_note) < 0 ||
	    opt_str(p, "monitor", &out->monitor) < 0 ||
	    decode_windows(term_map_get(p, "windows"), out) < 0 ||
	    decode_heaps(term_map_get(p, "heaps"), out) < 0 ||
	    decode_grew(term_map_get(p, "rss_grew"), out) < 0 ||
	    decode_test_peaks(term_map_get(p, "test_peaks"), out) < 0)
		return -1;
	/* rss_before is `undefined` when the node had no /proc */
	const struct term *rb = term_map_get(p, "rss_before");
	if (rb && rb->type == TERM_INT && fig(rb, &out->rss_before) < 0)
		return -1;
	out->have_peak = have_hwm;
	out->hwm_reset = reset && term_is_atom(reset, "true");
	return 0;
}

static int decode(const struct term *fine, struct fine_level *out)
{
	bool have_rss, have_hwm, have_hist;
	if (fine->type != TERM_MAP || opt_fig(fine, "rss", &out->rss, &have_rss) < 0 ||
	    opt_fig(fine, "hwm", &out->hwm, &have_hwm) < 0 ||
	    opt_fig(fine, "allocated", &out->allocated, NULL) < 0 ||
	    opt_fig(fine, "cached_segments", &out->cached_segments, NULL) < 0 ||
	    opt_fig(fine, "mapped", &out->mapped, &out->have_mapped) < 0 ||
	    opt_fig(fine, "hist_start", &out->hist_start, &have_hist) < 0 ||
	    opt_fig(fine, "cost_proc_us", &out->cost_proc_us, NULL) < 0 ||
	    opt_fig(fine, "cost_allocators_us", &out->cost_allocators_us, NULL) < 0 ||
	    opt_fig(fine, "cost_origins_us", &out->cost_origins_us, NULL) < 0 ||
	    opt_str(fine, "no_rss", &out->no_rss) < 0 ||
	    opt_str(fine, "no_origins", &out->no_origins) < 0)
		return -1;
	out->have_rss = have_rss && have_hwm;
	const struct term *origins = term_map_get(fine, "origins");
	if (have_hist && origins) {
		if (decode_origins(origins, out) < 0)
			return -1;
		out->have_origins = true;
	}
	return decode_peak(term_map_get(fine, "peak"), out);
}

int probe_fine_decode(const struct term *fine, struct fine_level *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!fine)
		return 0;
	out->have = true;
	if (decode(fine, out) < 0) {
		fine_level_clear(out);
		errtext_set(err, errlen, NULL,
		            "snapshot: the fine level (RSS, carriers, origins, peak) is malformed");
		return -1;
	}
	return 0;
}
