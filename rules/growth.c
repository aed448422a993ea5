/* rules/growth.c: the growth rule: each erlang:memory category, after vs before the suite. */
#include "growth.h"

#include <stdio.h>

/* The defaults pass a clean suite and fail a leak of a few MB; gate.toml says why. */
void growth_config_default(struct growth_config *cfg)
{
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		cfg->cat[i].enabled = true;
		cfg->cat[i].max_pct = 10.0;
		cfg->cat[i].floor_bytes = 1000000;
	}
	/* allocated figures: free carrier space and atom table chunks, judged by the _used twins */
	cfg->cat[MEM_PROCESSES].enabled = false;
	cfg->cat[MEM_ATOM].enabled = false;
	/* test modules load during the suite */
	cfg->cat[MEM_CODE].max_pct = 50.0;
	cfg->cat[MEM_CODE].floor_bytes = 8000000;
	cfg->live_totals = true;
}

static int64_t delta_of(const struct snapshot *b, const struct snapshot *a, enum mem_cat c)
{
	return a->mem[c] - b->mem[c];
}

int growth_check(struct findings *out, const struct snapshot *before,
		 const struct snapshot *after, const struct growth_config *cfg)
{
	bool code_known = before->have[MEM_CODE] && after->have[MEM_CODE];
	int64_t code_delta = code_known ? delta_of(before, after, MEM_CODE) : 0;
	bool heap_known = before->have[MEM_PROCESSES] && after->have[MEM_PROCESSES] &&
			  before->have[MEM_PROCESSES_USED] && after->have[MEM_PROCESSES_USED];
	int64_t free_heap_delta = heap_known ? delta_of(before, after, MEM_PROCESSES) -
						       delta_of(before, after, MEM_PROCESSES_USED)
					     : 0;

	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		const struct growth_limit *lim = &cfg->cat[i];
		const char *name = mem_cat_name((enum mem_cat)i);
		char msg[512], b[32], a[32], d[32], fl[32];

		if (!lim->enabled)
			continue;
		if (!before->have[i] || !after->have[i]) {
			snprintf(msg, sizeof(msg), "%s: not reported by the node in %s snapshot",
				 name, before->have[i] ? "the after" : "the before");
			if (findings_add(out, "growth", name, VERDICT_SKIP, 0, 0, lim->floor_bytes,
					 lim->max_pct, msg) < 0)
				return -1;
			continue;
		}

		int64_t b0 = before->mem[i], a0 = after->mem[i];
		int64_t delta = a0 - b0;
		/* total and system contain code, total the free heap space: judged net of their
		 * growth (never of a shrink, which would hide growth elsewhere) */
		const char *net = "";
		if (cfg->live_totals && (i == MEM_TOTAL || i == MEM_SYSTEM)) {
			bool code = code_known && code_delta > 0;
			bool heap = i == MEM_TOTAL && heap_known && free_heap_delta > 0;
			if (code)
				delta -= code_delta;
			if (heap)
				delta -= free_heap_delta;
			net = code && heap ? " (net of code and free heap growth)"
			      : code     ? " (net of code growth)"
			      : heap     ? " (net of free heap growth)"
					 : "";
		}
		double pct = b0 > 0 ? 100.0 * (double)delta / (double)b0 : (delta > 0 ? 1e9 : 0);
		bool fail = delta > lim->floor_bytes && pct > lim->max_pct;

		model_bytes_format(b, sizeof(b), b0);
		model_bytes_format(a, sizeof(a), a0);
		model_bytes_format(d, sizeof(d), delta);
		model_bytes_format(fl, sizeof(fl), lim->floor_bytes);
		snprintf(msg, sizeof(msg), "%s grew %s -> %s (%s%s, %+.1f %%), limit +%.1f %% above a floor of %s%s",
			 name, b, a, delta >= 0 ? "+" : "", d, pct, lim->max_pct, fl,
			 net);
		if (findings_add(out, "growth", name, fail ? VERDICT_FAIL : VERDICT_PASS, b0, a0,
				 lim->floor_bytes, lim->max_pct, msg) < 0)
			return -1;
		out->items[out->count - 1].delta = delta;
	}
	return 0;
}
