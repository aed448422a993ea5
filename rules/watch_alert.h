/* rules/watch_alert.h: gate watch's alert rule: a category above its rolling average.
 *
 * The window holds the last `size` samples' categories. A new sample's category alerts when
 * the window holds at least WATCH_MIN_HISTORY samples (or all `size` when smaller) and the
 * value is above the window's mean by more than margin_pct percent of that mean AND by more
 * than floor bytes (so that a few kB on a tiny category cannot alert). The sample is pushed
 * into the window afterwards, alerting or not: a level that stays up becomes the new normal
 * after a window, and alerts stop. Nothing here does I/O or allocates.
 */
#ifndef GATE_RULES_WATCH_ALERT_H
#define GATE_RULES_WATCH_ALERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/snapshot.h"

#define WATCH_WINDOW_MAX 1000
#define WATCH_MIN_HISTORY 3

struct watch_window {
	int64_t vals[WATCH_WINDOW_MAX][MEM_CAT_COUNT];
	bool have[WATCH_WINDOW_MAX][MEM_CAT_COUNT];
	size_t size; /* the window asked for, 1..WATCH_WINDOW_MAX */
	size_t n;    /* samples held, <= size */
	size_t next; /* where the next one goes */
};

struct watch_alert {
	enum mem_cat cat;
	int64_t value;
	int64_t average;
	double over_pct; /* value above the average, percent of it */
};

/* An empty window of size samples (clamped to 1..WATCH_WINDOW_MAX). */
void watch_window_init(struct watch_window *w, size_t size);

/* The categories of mem (have[c]: reported) that alert against w, in category order, into
 * out (room for MEM_CAT_COUNT). Returns how many. */
size_t watch_window_check(const struct watch_window *w, const int64_t *mem, const bool *have,
                          double margin_pct, int64_t floor, struct watch_alert *out);

void watch_window_push(struct watch_window *w, const int64_t *mem, const bool *have);

#endif
