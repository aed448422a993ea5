/* rules/watch_alert.c: a category above its rolling average (see the header). */
#include "model/snapshot.h"
#include "rules/watch_alert.h"

#include <string.h>

void watch_window_init(struct watch_window *w, size_t size)
{
	memset(w, 0, sizeof(*w));
	w->size = size < 1 ? 1 : size > WATCH_WINDOW_MAX ? WATCH_WINDOW_MAX : size;
}

size_t watch_window_check(const struct watch_window *w, const int64_t *mem, const bool *have,
                          double margin_pct, int64_t floor, struct watch_alert *out)
{
	size_t need = w->size < WATCH_MIN_HISTORY ? w->size : WATCH_MIN_HISTORY;
	size_t k = 0;
	if (w->n < need)
		return 0;
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		if (!have[c])
			continue;
		/* figures are at most MODEL_FIGURE_MAX (2^50) and n <= 1000: no overflow */
		int64_t sum = 0;
		size_t m = 0;
		for (size_t i = 0; i < w->n; i++)
			if (w->have[i][c]) {
				sum += w->vals[i][c];
				m++;
			}
		if (m < need)
			continue;
		int64_t avg = sum / (int64_t)m;
		int64_t over = mem[c] - avg;
		double pct = avg > 0 ? 100.0 * (double)over / (double)avg : (over > 0 ? 1e9 : 0);
		if (over > floor && pct > margin_pct)
			out[k++] = (struct watch_alert){(enum mem_cat)c, mem[c], avg, pct};
	}
	return k;
}

void watch_window_push(struct watch_window *w, const int64_t *mem, const bool *have)
{
	for (int c = 0; c < MEM_CAT_COUNT; c++) {
		w->vals[w->next][c] = mem[c];
		w->have[w->next][c] = have[c];
	}
	w->next = (w->next + 1) % w->size;
	if (w->n < w->size)
		w->n++;
}
