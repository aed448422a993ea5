/* rules/baseline.c: the baseline model, and the rules that judge a run against the committed
 * baseline ("baseline") and against the rolling history in git notes ("trend"). */
#include "rules/baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/finding.h"
#include "rules/consolidate.h"

void baseline_config_default(struct baseline_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_pct = 20.0;
	cfg->floor_bytes = 1000000;
	cfg->trend_window = 10;
	cfg->trend_sigma = 3.0;
	cfg->trend_min_pct = 10.0;
}

/* ---- the model ---- */

void baseline_clear(struct baseline *b)
{
	if (!b)
		return;
	free(b->gate_version);
	free(b->otp_release);
	free(b->elixir_version);
	free(b->commit);
	for (size_t i = 0; i < b->nets; i++)
		free(b->ets[i].name);
	free(b->ets);
	for (size_t i = 0; i < b->nallocs; i++)
		free(b->allocs[i].type);
	free(b->allocs);
	memset(b, 0, sizeof(*b));
}

/* strdup that keeps NULL; sets *oom when a copy fails */
static char *dup_opt(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static int ets_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_ets *)a)->name,
	              ((const struct baseline_ets *)b)->name);
}

static int alloc_cmp(const void *a, const void *b)
{
	return strcmp(((const struct baseline_alloc *)a)->type,
	              ((const struct baseline_alloc *)b)->type);
}

/* saturating: a corrupt snapshot must not make the sums overflow (undefined behaviour) */
static int64_t add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

int baseline_from_snapshot(struct baseline *out, const struct snapshot *after,
                           const struct baseline_meta *meta)
{
	bool oom = false;

	memset(out, 0, sizeof(*out));
	out->format_version = BASELINE_FORMAT_VERSION;
	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		out->have[i] = after->have[i];
		out->mem[i] = after->have[i] ? after->mem[i] : 0;
	}
	out->process_count = after->process_count;
	out->atom_count = after->atom_count;
	if (after->otp_release[0])
		out->otp_release = dup_opt(after->otp_release, &oom);
	if (meta) {
		out->gate_version = dup_opt(meta->gate_version, &oom);
		out->elixir_version = dup_opt(meta->elixir_version, &oom);
		out->commit = dup_opt(meta->commit, &oom);
		out->commit_dirty = meta->commit_dirty;
		out->timestamp = meta->timestamp;
		out->test_count = meta->test_count;
	}

	/* named tables, merged by name: sort a copy, then fold equal neighbours */
	size_t named = 0;
	for (size_t i = 0; i < after->nets; i++)
		named += after->ets[i].named && after->ets[i].name;
	if (named) {
		out->ets = calloc(named, sizeof(*out->ets));
		if (!out->ets)
			goto oom;
		size_t n = 0;
		for (size_t i = 0; i < after->nets && !oom; i++) {
			const struct ets_info *e = &after->ets[i];
			if (!e->named || !e->name)
				continue;
			out->ets[n].name = dup_opt(e->name, &oom);
			out->ets[n].memory = e->memory;
			out->ets[n].size = e->size;
			n++;
		}
		out->nets = n;
		if (oom)
			goto oom;
		qsort(out->ets, n, sizeof(*out->ets), ets_cmp);
		size_t w = 0;
		for (size_t r = 0; r < n; r++) {
			if (w > 0 && strcmp(out->ets[w - 1].name, out->ets[r].name) == 0) {
				out->ets[w - 1].memory =
				        add_sat(out->ets[w - 1].memory, out->ets[r].memory);
				out->ets[w - 1].size =
				        add_sat(out->ets[w - 1].size, out->ets[r].size);
				free(out->ets[r].name);
				continue;
			}
			out->ets[w++] = out->ets[r];
		}
		out->nets = w;
	}

	size_t typed = 0;
	for (size_t i = 0; i < after->nallocs; i++)
		typed += after->allocs[i].type != NULL;
	if (typed) {
		out->allocs = calloc(typed, sizeof(*out->allocs));
		if (!out->allocs)
			goto oom;
		size_t n = 0;
		for (size_t i = 0; i < after->nallocs && !oom; i++) {
			const struct alloc_info *a = &after->allocs[i];
			if (!a->type)
				continue;
			out->allocs[n].type = dup_opt(a->type, &oom);
			out->allocs[n].carriers_size = a->carriers_size;
			out->allocs[n].blocks_size = a->blocks_size;
			n++;
		}
		out->nallocs = n;
		if (oom)
			goto oom;
		qsort(out->allocs, n, sizeof(*out->allocs), alloc_cmp);
		size_t w = 0;
		for (size_t r = 0; r < n; r++) {
			if (w > 0 && strcmp(out->allocs[w - 1].type, out->allocs[r].type) == 0) {
				struct baseline_alloc *d = &out->allocs[w - 1];
				d->carriers_size =
				        add_sat(d->carriers_size, out->allocs[r].carriers_size);
				d->blocks_size =
				        add_sat(d->blocks_size, out->allocs[r].blocks_size);
				free(out->allocs[r].type);
				continue;
			}
			out->allocs[w++] = out->allocs[r];
		}
		out->nallocs = w;
	}
	if (oom)
		goto oom;
	return 0;
oom:
	baseline_clear(out);
	return -1;
}

int baseline_copy(struct baseline *out, const struct baseline *src)
{
	bool oom = false;

	*out = *src;
	out->gate_version = dup_opt(src->gate_version, &oom);
	out->otp_release = dup_opt(src->otp_release, &oom);
	out->elixir_version = dup_opt(src->elixir_version, &oom);
	out->commit = dup_opt(src->commit, &oom);
	out->ets = NULL;
	out->nets = 0;
	out->allocs = NULL;
	out->nallocs = 0;
	if (src->nets) {
		out->ets = calloc(src->nets, sizeof(*out->ets));
		if (!out->ets)
			goto oom;
		for (size_t i = 0; i < src->nets; i++) {
			out->ets[i] = src->ets[i];
			out->ets[i].name = dup_opt(src->ets[i].name, &oom);
		}
		out->nets = src->nets;
	}
	if (src->nallocs) {
		out->allocs = calloc(src->nallocs, sizeof(*out->allocs));
		if (!out->allocs)
			goto oom;
		for (size_t i = 0; i < src->nallocs; i++) {
			out->allocs[i] = src->allocs[i];
			out->allocs[i].type = dup_opt(src->allocs[i].type, &oom);
		}
		out->nallocs = src->nallocs;
	}
	if (oom)
		goto oom;
	return 0;
oom:
	baseline_clear(out);
	return -1;
}

const struct baseline_ets *baseline_ets_find(const struct baseline *b, const char *name)
{
	if (!b || !name || !b->nets)
		return NULL;
	struct baseline_ets key = {.name = (char *)name};
	return bsearch(&key, b->ets, b->nets, sizeof(*b->ets), ets_cmp);
}

/* ---- rule "baseline" ---- */

struct judged {
	bool fail;
	double pct;
};

/* growth above both the floor and max_pct of the baseline figure fails, as in growth_check */
static struct judged judge(int64_t base, int64_t after, const struct baseline_config *cfg)
{
	struct judged j;
	int64_t delta = after - base;
	j.pct = base > 0 ? 100.0 * (double)delta / (double)base : (delta > 0 ? 1e9 : 0);
	j.fail = delta > cfg->floor_bytes && j.pct > cfg->max_pct;
	return j;
}

static int add_judged(struct findings *out, const char *subject, const char *what, int64_t base,
                      int64_t after, const struct baseline_config *cfg, const char *otp_note)
{
	char msg[512], b[32], a[32], d[32], fl[32];
	struct judged j = judge(base, after, cfg);
	int64_t delta = after - base;

	model_bytes_format(b, sizeof(b), base);
	model_bytes_format(a, sizeof(a), after);
	model_bytes_format(d, sizeof(d), delta);
	model_bytes_format(fl, sizeof(fl), cfg->floor_bytes);
	snprintf(msg, sizeof(msg),
	         "%s %s vs baseline %s (%s%s, %+.1f %%), limit +%.1f %% above a floor of %s%s",
	         what, a, b, delta >= 0 ? "+" : "", d, j.pct, cfg->max_pct, fl, otp_note);
	return findings_add(out, "baseline", subject, j.fail ? VERDICT_FAIL : VERDICT_PASS, base,
	                    after, cfg->floor_bytes, cfg->max_pct, msg);
}

static int baseline_judge(struct findings *out, const struct snapshot *after,
                          const struct baseline *base, const struct baseline_config *cfg,
                          const char *source)
{
	char msg[512], where[512];

	if (!source) {
		snprintf(where, sizeof(where), "%s:%s", cfg->ref ? cfg->ref : BASELINE_DEFAULT_REF,
		         cfg->path ? cfg->path : BASELINE_DEFAULT_PATH);
		source = where;
	}
	if (!base) {
		if (cfg->require)
			snprintf(msg, sizeof(msg),
			         "no baseline at %s, and a baseline is required: commit one with "
			         "`gate baseline update --commit`",
			         source);
		else
			snprintf(
			        msg, sizeof(msg),
			        "no baseline at %s: nothing to compare with (`gate baseline update "
			        "--commit` makes one)",
			        source);
		return findings_add(out, "baseline", "baseline",
		                    cfg->require ? VERDICT_FAIL : VERDICT_SKIP, 0, 0,
		                    cfg->floor_bytes, cfg->max_pct, msg);
	}

	/* figures from another OTP release are comparable but not equal: say so */
	char otp_note[64] = "";
	if (base->otp_release && after->otp_release[0] &&
	    strcmp(base->otp_release, after->otp_release) != 0)
		snprintf(otp_note, sizeof(otp_note), " (baseline measured on OTP %s, now OTP %s)",
		         base->otp_release, after->otp_release);

	for (int i = 0; i < MEM_CAT_COUNT; i++) {
		const char *name = mem_cat_name((enum mem_cat)i);
		if (!base->have[i])
			continue;
		if (!after->have[i]) {
			snprintf(msg, sizeof(msg),
			         "%s: not reported by the node in the after snapshot", name);
			if (findings_add(out, "baseline", name, VERDICT_SKIP, base->mem[i], 0,
			                 cfg->floor_bytes, cfg->max_pct, msg) < 0)
				return -1;
			continue;
		}
		if (add_judged(out, name, name, base->mem[i], after->mem[i], cfg, otp_note) < 0)
			return -1;
	}

	/* a table absent from a complete listing is gone (0 bytes); from a partial one, unknown */
	bool complete = after->nets > 0 && (int64_t)after->nets >= after->ets_count;
	for (size_t t = 0; t < base->nets; t++) {
		const struct baseline_ets *be = &base->ets[t];
		char subject[300], what[320];
		int64_t bytes = 0;
		bool seen = false;

		snprintf(subject, sizeof(subject), "ets:%s", be->name);
		snprintf(what, sizeof(what), "ETS table %s", be->name);
		for (size_t j = 0; j < after->nets; j++) {
			const struct ets_info *e = &after->ets[j];
			if (e->named && e->name && strcmp(e->name, be->name) == 0) {
				bytes = add_sat(bytes, e->memory);
				seen = true;
			}
		}
		if (!seen && !complete) {
			if (after->nets == 0)
				snprintf(msg, sizeof(msg),
				         "%s: the after snapshot lists no ETS tables", what);
			else
				snprintf(msg, sizeof(msg),
				         "%s: not among the %zu largest tables the after snapshot "
				         "lists (of %lld)",
				         what, after->nets, (long long)after->ets_count);
			if (findings_add(out, "baseline", subject, VERDICT_SKIP, be->memory, 0,
			                 cfg->floor_bytes, cfg->max_pct, msg) < 0)
				return -1;
			continue;
		}
		if (add_judged(out, subject, what, be->memory, bytes, cfg, otp_note) < 0 ||
		    consolidate_name(&out->items[out->count - 1], subject, what, MEM_ETS,
		                     bytes - be->memory) < 0)
			return -1;
		/* a table no limit named: its pass is not worth a JUnit testcase */
		out->items[out->count - 1].show |= SHOW_QUIET_PASS;
	}
	return 0;
}

int baseline_check(struct findings *out, const struct snapshot *after, const struct baseline *base,
                   const struct baseline_config *cfg, const char *source)
{
	size_t first = out->count;
	int rc = baseline_judge(out, after, base, cfg, source);
	findings_show(out, first, UNIT_BYTES, SHOW_REGRESSION | SHOW_ONE_CASE);
	return rc;
}

/* ---- rule "trend" ---- */

/* libm is not linked (and a rule needs no more than this): Newton's iteration on x >= 0 */
static double sqrt_nonneg(double x)
{
	if (!(x > 0))
		return 0;
	double r = x > 1 ? x : 1;
	for (int i = 0; i < 200; i++) {
		double next = 0.5 * (r + x / r);
		if (next >= r)
			break;
		r = next;
	}
	return r;
}

static int64_t round_i64(double x)
{
	if (x >= 9.2e18)
		return INT64_MAX;
	if (x <= -9.2e18)
		return INT64_MIN;
	return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

static int trend_judge(struct findings *out, const struct snapshot *after,
                       const struct baseline *history, size_t nhistory,
                       const struct baseline_config *cfg)
{
	char msg[512];
	const char *notes = cfg->notes_ref ? cfg->notes_ref : BASELINE_DEFAULT_NOTES_REF;

	if (cfg->trend_window <= 0)
		return 0;
	size_t n = (size_t)cfg->trend_window;
	if (nhistory < n) {
		snprintf(msg, sizeof(msg),
		         "trend: %zu of %zu history entr%s in %s; the trend rule starts at %zu",
		         nhistory, n, nhistory == 1 ? "y" : "ies", notes, n);
		return findings_add(out, "trend", "trend", VERDICT_SKIP, 0, 0, 0, -1, msg);
	}

	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const char *name = mem_cat_name((enum mem_cat)c);
		if (!after->have[c])
			continue;

		/* the newest n entries that have the category */
		double sum = 0, sumsq_dev = 0;
		size_t used = 0, first = nhistory;
		for (size_t i = nhistory; i-- > 0 && used < n;) {
			if (!history[i].have[c])
				continue;
			sum += (double)history[i].mem[c];
			used++;
			first = i;
		}
		if (used < n) {
			snprintf(msg, sizeof(msg),
			         "%s: %zu of %zu history entries have it; the trend rule starts at "
			         "%zu",
			         name, used, n, n);
			if (findings_add(out, "trend", name, VERDICT_SKIP, 0, after->mem[c], 0, -1,
			                 msg) < 0)
				return -1;
			continue;
		}
		double mean = sum / (double)n;
		for (size_t i = first; i < nhistory; i++)
			if (history[i].have[c]) {
				double dv = (double)history[i].mem[c] - mean;
				sumsq_dev += dv * dv;
			}
		double sigma = n > 1 ? sqrt_nonneg(sumsq_dev / (double)(n - 1)) : 0.0;
		double by_sigma = cfg->trend_sigma * sigma;
		double by_pct = cfg->trend_min_pct / 100.0 * mean;
		double margin = by_sigma > by_pct ? by_sigma : by_pct;
		if (margin < 0)
			margin = 0;
		double cur = (double)after->mem[c];
		bool fail = cur > mean + margin;
		double pct = mean > 0 ? 100.0 * (cur - mean) / mean : 0;

		char a[32], m[32], s[32], l[32];
		model_bytes_format(a, sizeof(a), after->mem[c]);
		model_bytes_format(m, sizeof(m), round_i64(mean));
		model_bytes_format(s, sizeof(s), round_i64(sigma));
		model_bytes_format(l, sizeof(l), round_i64(mean + margin));
		snprintf(msg, sizeof(msg),
		         "%s %s vs mean %s of the last %zu runs (%+.1f %%, sigma %s), limit %s = "
		         "mean + max(%.1f sigma, %.1f %%)",
		         name, a, m, n, pct, s, l, cfg->trend_sigma, cfg->trend_min_pct);
		if (findings_add(out, "trend", name, fail ? VERDICT_FAIL : VERDICT_PASS,
		                 round_i64(mean), after->mem[c], round_i64(margin), -1, msg) < 0)
			return -1;
	}
	return 0;
}

int trend_check(struct findings *out, const struct snapshot *after, const struct baseline *history,
                size_t nhistory, const struct baseline_config *cfg)
{
	size_t first = out->count;
	int rc = trend_judge(out, after, history, nhistory, cfg);
	findings_show(out, first, UNIT_BYTES, SHOW_REGRESSION | SHOW_ONE_CASE);
	return rc;
}
