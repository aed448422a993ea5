/* ci/store/fine_json.c: the fine level as JSON. */
#include "ci/store/fine_json.h"

#include <string.h>

#include "ci/report/fine_text.h"
#include "model/snapshot.h"
#include "rules/origins.h"
#include "rules/peak.h"
#include "rules/rss.h"

/* jansson wants valid UTF-8; texts from the node are checked by json_string (NULL: null). */
static json_t *str(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	return j ? j : json_null();
}

json_t *fine_json_snapshot(const struct snapshot *s)
{
	const struct fine_level *f = &s->fine;
	if (!f->have)
		return json_null();
	json_t *o = json_object(), *org = json_array();
	if (!o || !org) {
		json_decref(o);
		json_decref(org);
		return NULL;
	}
	int bad = 0;
	for (size_t i = 0; i < f->norigins && !bad; i++) {
		json_t *h = json_array();
		for (size_t k = 0; h && k < f->origins[i].nhist; k++)
			bad |= json_array_append_new(h, json_integer(f->origins[i].hist[k]));
		bad |= json_array_append_new(org, json_pack("{s:o, s:o, s:o}", "origin",
		                                            str(f->origins[i].origin), "type",
		                                            str(f->origins[i].type), "blocks",
		                                            h ? h : json_null()));
	}
	if (f->have_rss) {
		bad |= json_object_set_new(o, "rss", json_integer(f->rss));
		bad |= json_object_set_new(o, "hwm", json_integer(f->hwm));
	} else {
		bad |= json_object_set_new(o, "rss", json_null());
		bad |= json_object_set_new(o, "no_rss", str(f->no_rss));
	}
	bad |= json_object_set_new(o, "allocated", json_integer(f->allocated));
	bad |= json_object_set_new(o, "mapped",
	                           f->have_mapped ? json_integer(f->mapped) : json_null());
	bad |= json_object_set_new(o, "cached_segments", json_integer(f->cached_segments));
	bad |= json_object_set_new(o, "hist_start", json_integer(f->hist_start));
	bad |= json_object_set_new(o, "cost_us",
	                           json_pack("{s:I, s:I, s:I}", "proc", (json_int_t)f->cost_proc_us,
	                                     "allocators", (json_int_t)f->cost_allocators_us,
	                                     "origins", (json_int_t)f->cost_origins_us));
	if (!f->have_origins)
		bad |= json_object_set_new(o, "no_origins", str(f->no_origins));
	bad |= json_object_set_new(o, "origins", org);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *lines_json(const char *s)
{
	json_t *a = json_array();
	const char *p = s;
	while (a && p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		json_t *v = json_stringn(p, n);
		if (json_array_append_new(a, v ? v : json_null()) < 0) {
			json_decref(a);
			return NULL;
		}
		p = nl ? nl + 1 : NULL;
	}
	return a;
}

json_t *fine_json_peak(const struct snapshot *after)
{
	const struct fine_level *f = &after->fine;
	if (!f->have || !(f->have_peak || f->peak_note))
		return json_null();
	char where[768] = "";
	if (f->hwm_reset)
		peak_where(where, sizeof(where), f);
	json_t *o = json_object(), *ws = json_array(), *hs = json_array();
	int bad = !o || !ws || !hs;
	for (size_t i = 0; !bad && i < f->nwindows; i++) {
		const struct peak_window *w = &f->windows[i];
		bad |= json_array_append_new(
		        ws, json_pack("{s:I, s:I, s:o, s:o}", "peak", (json_int_t)w->peak,
		                      "start_rss", (json_int_t)w->start_rss, "modules",
		                      lines_json(w->modules), "tests", lines_json(w->tests)));
	}
	for (size_t i = 0; !bad && i < f->nheaps; i++) {
		const struct heap_seen *h = &f->heaps[i];
		bad |= json_array_append_new(hs, json_pack("{s:o, s:o, s:I, s:o}", "pid",
		                                           str(h->pid), "label", str(h->label),
		                                           "bytes", (json_int_t)h->bytes, "tests",
		                                           lines_json(h->tests)));
	}
	if (bad) {
		json_decref(o);
		json_decref(ws);
		json_decref(hs);
		return NULL;
	}
	bad |= json_object_set_new(o, "rss_peak",
	                           f->have_peak ? json_integer(f->peak) : json_null());
	bad |= json_object_set_new(o, "rss_before", json_integer(f->rss_before));
	/* the allocated peak: an upper bound (see peak_allocated) */
	bad |= json_object_set_new(o, "allocated_peak",
	                           f->have_allocated_max ? json_integer(f->allocated_max)
	                                                 : json_null());
	bad |= json_object_set_new(o, "allocated_peak_before",
	                           f->have_allocated_max ? json_integer(f->allocated_max_before)
	                                                 : json_null());
	bad |= json_object_set_new(
	        o, "allocated_peak_raised",
	        json_boolean(f->have_allocated_max && f->allocated_max > f->allocated_max_before));
	bad |= json_object_set_new(o, "reset", json_boolean(f->hwm_reset));
	bad |= json_object_set_new(o, "note", str(f->peak_note));
	bad |= json_object_set_new(o, "where", where[0] ? str(where) : json_null());
	bad |= json_object_set_new(o, "windows", ws);
	bad |= json_object_set_new(o, "heap_watch", json_integer(f->heap_watch));
	/* what reading the high-water mark at the edges cost in the node */
	bad |= json_object_set_new(o, "edges", json_integer(f->edges));
	bad |= json_object_set_new(o, "edge_cost_us", json_integer(f->edge_us));
	bad |= json_object_set_new(o, "heaps", hs);
	bad |= json_object_set_new(o, "monitor", str(f->monitor));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *side(const struct snapshot *s)
{
	return json_pack("{s:I, s:I, s:o, s:I}", "rss", (json_int_t)s->fine.rss, "allocated",
	                 (json_int_t)s->fine.allocated, "mapped",
	                 s->fine.have_mapped ? json_integer(s->fine.mapped) : json_null(), "used",
	                 (json_int_t)s->mem[MEM_TOTAL]);
}

json_t *fine_json_rss(const struct snapshot *before, const struct snapshot *after)
{
	if (!before || !after || !before->fine.have_rss || !after->fine.have_rss)
		return json_null();
	return json_pack("{s:o, s:o, s:I}", "before", side(before), "after", side(after),
	                 "unaccounted", (json_int_t)rss_unaccounted(before, after));
}
