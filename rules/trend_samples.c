/* rules/trend_samples.c: the trend rule on samples taken during a run (see the header). */
#include "model/finding.h"
#include "rules/trend_samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sample_series_clear(struct sample_series *s)
{
	if (!s)
		return;
	free(s->items);
	memset(s, 0, sizeof(*s));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* index of the i-th of m points evenly spread over n samples */
static size_t pick(size_t i, size_t m, size_t n)
{
	return m <= 1 ? 0 : (size_t)((double)i * (double)(n - 1) / (double)(m - 1) + 0.5);
}

double trend_samples_slope(const struct sample_series *s, enum mem_cat c)
{
	if (s->n < 2)
		return 0;
	size_t m = s->n < TREND_MAX_POINTS ? s->n : TREND_MAX_POINTS;
	double *sl = malloc(m * (m - 1) / 2 * sizeof(*sl));
	if (!sl)
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		const struct sample *a = &s->items[pick(i, m, s->n)];
		for (size_t j = i + 1; j < m; j++) {
			const struct sample *b = &s->items[pick(j, m, s->n)];
			if (b->t_ms > a->t_ms)
				sl[k++] = (double)(b->mem[c] - a->mem[c]) /
				          (double)(b->t_ms - a->t_ms);
		}
	}
	double med = 0;
	if (k) {
		qsort(sl, k, sizeof(*sl), cmp_double);
		med = k % 2 ? sl[k / 2] : (sl[k / 2 - 1] + sl[k / 2]) / 2;
	}
	free(sl);
	return med;
}

/* The median of category c over samples [from, to). */
static int64_t median_of(const struct sample_series *s, enum mem_cat c, size_t from, size_t to)
{
	size_t n = to - from;
	int64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return s->items[from].mem[c];
	for (size_t i = 0; i < n; i++)
		v[i] = s->items[from + i].mem[c];
	qsort(v, n, sizeof(*v), cmp_i64);
	int64_t med = v[n / 2];
	free(v);
	return med;
}

int trend_samples_check(struct findings *out, const struct sample_series *s,
                        const struct growth_config *cfg)
{
	if (!s || s->n < TREND_MIN_SAMPLES)
		return 0;
	int64_t span = s->items[s->n - 1].t_ms - s->items[0].t_ms;
	if (span < TREND_MIN_SPAN_MS)
		return 0;
	size_t q = s->n / 4;
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		const struct growth_limit *lim = &cfg->cat[c];
		if (!lim->enabled)
			continue;
		double slope = trend_samples_slope(s, (enum mem_cat)c);
		int64_t rise = (int64_t)(slope * (double)span);
		int64_t first = median_of(s, (enum mem_cat)c, 0, q);
		int64_t last = median_of(s, (enum mem_cat)c, s->n - q, s->n);
		double pct =
		        first > 0 ? 100.0 * (double)rise / (double)first : (rise > 0 ? 1e9 : 0);
		bool fail = rise > lim->floor_bytes && pct > lim->max_pct &&
		            last - first > lim->floor_bytes;
		char msg[512], r[32], per[32], f[32], l[32], fl[32];
		model_bytes_format(r, sizeof(r), rise);
		model_bytes_format(per, sizeof(per), (int64_t)(slope * 60000.0));
		model_bytes_format(f, sizeof(f), first);
		model_bytes_format(l, sizeof(l), last);
		model_bytes_format(fl, sizeof(fl), lim->floor_bytes);
		snprintf(msg, sizeof(msg),
		         "%s %s during the run: Theil-Sen slope %s%s/min over %.1f min (%s%s, "
		         "%+.1f %%), "
		         "median of the first quarter of %zu samples %s, of the last %s; limit "
		         "+%.1f %% "
		         "above a floor of %s",
		         mem_cat_name((enum mem_cat)c), fail ? "rose steadily" : "trend",
		         slope >= 0 ? "+" : "", per, (double)span / 60000.0, rise >= 0 ? "+" : "",
		         r, pct, s->n, f, l, lim->max_pct, fl);
		if (findings_add(out, "soak", mem_cat_name((enum mem_cat)c),
		                 fail ? VERDICT_FAIL : VERDICT_PASS, first, last, lim->floor_bytes,
		                 lim->max_pct, msg) < 0)
			return -1;
		out->items[out->count - 1].delta = rise;
	}
	return 0;
}
