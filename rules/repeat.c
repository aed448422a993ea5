/* rules/repeat.c: the continuing growth over repeated runs (see repeat.h for the method). */
#include "repeat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

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
		         "; --repeat %zu: runs 2..%zu grew %s (warm-up excluded), judged: the "
		         "smallest, %s%s per run, x %zu",
		         d->n, d->n, runs, cont >= 0 ? "+" : "", m, d->n - 1);
		if (text_append(&f->message, add) < 0)
			return -1;
	}
	return 0;
}
