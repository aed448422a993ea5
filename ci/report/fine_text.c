/* ci/report/fine_text.c: the fine level for people. */
#include "ci/report/fine_text.h"

#include <stdio.h>
#include <string.h>

#include "model/figures.h"
#include "model/snapshot.h"
#include "rules/origins.h"
#include "rules/peak.h"

static void fig_pair(char *buf, size_t len, int64_t b, int64_t a)
{
	char sb[32], sa[32], sd[32];
	model_bytes_format(sb, sizeof(sb), b);
	model_bytes_format(sa, sizeof(sa), a);
	model_bytes_format(sd, sizeof(sd), a - b);
	snprintf(buf, len, "%s -> %s (%s%s)", sb, sa, a >= b ? "+" : "", sd);
}

static void rss_line(char *buf, size_t len, const struct snapshot *b, const struct snapshot *a)
{
	char rss[96], al[96], used[96];
	fig_pair(rss, sizeof(rss), b->fine.rss, a->fine.rss);
	fig_pair(al, sizeof(al), b->fine.allocated, a->fine.allocated);
	fig_pair(used, sizeof(used), b->mem[MEM_TOTAL], a->mem[MEM_TOTAL]);
	snprintf(buf, len, "RSS %s; allocated (carriers) %s; used (erlang:memory total) %s", rss,
	         al, used);
}

static void peak_line(char *buf, size_t len, const struct fine_level *f)
{
	char pk[32], where[768] = "", alloc[256];
	model_bytes_format(pk, sizeof(pk), f->peak);
	peak_allocated(alloc, sizeof(alloc), f);
	if (f->hwm_reset)
		peak_where(where, sizeof(where), f);
	if (f->hwm_reset)
		snprintf(buf, len, "peak RSS %s during the run%s%s%s%s", pk, where[0] ? " " : "",
		         where, alloc[0] ? "; " : "", alloc);
	else
		snprintf(buf, len, "peak RSS %s (%s)%s%s", pk,
		         f->peak_note ? f->peak_note : "since the node started",
		         alloc[0] ? "; " : "", alloc);
}

static void heaps_line(char *buf, size_t len, const struct fine_level *f)
{
	char watch[32];
	model_bytes_format(watch, sizeof(watch), f->heap_watch);
	int at = snprintf(buf, len, "largest heaps (from %s): ", watch);
	for (size_t i = 0; i < f->nheaps && i < 3 && at > 0 && (size_t)at < len; i++) {
		const struct heap_seen *h = &f->heaps[i];
		char b[32], mod[256], test[512];
		model_bytes_format(b, sizeof(b), h->bytes);
		peak_first_test(h->tests, mod, sizeof(mod), test, sizeof(test));
		at += snprintf(buf + at, len - (size_t)at, "%s%s %s %s%s%s%s", i ? ", " : "",
		               h->label[0] ? rules_display(h->label) : "process", h->pid, b,
		               mod[0] ? " (test \"" : "", test, mod[0] ? "\")" : "");
	}
}

size_t fine_text_lines(char lines[][512], size_t n, const struct snapshot *before,
                       const struct snapshot *after)
{
	size_t k = 0;
	if (!before || !after || !before->fine.have || !after->fine.have)
		return 0;
	const struct fine_level *fa = &after->fine;
	if (k < n && fa->have_rss && before->fine.have_rss)
		rss_line(lines[k++], 512, before, after);
	else if (k < n)
		snprintf(lines[k++], 512, "RSS not measured: %s",
		         fa->no_rss            ? fa->no_rss
		         : before->fine.no_rss ? before->fine.no_rss
		                               : "?");
	if (k < n && fa->have_peak && fa->peak > 0)
		peak_line(lines[k++], 512, fa);
	else if (k < n && fa->peak_note)
		snprintf(lines[k++], 512, "peak not measured: %s", fa->peak_note);
	if (k < n && fa->nheaps > 0)
		heaps_line(lines[k++], 512, fa);
	if (k < n && fa->monitor && strcmp(fa->monitor, "gate") != 0)
		snprintf(lines[k++], 512, "system monitor: %s", fa->monitor);
	struct origin_growth g[ORIGINS_SHOWN];
	size_t ng = origins_grown(g, ORIGINS_SHOWN, before, after);
	if (k < n && ng > 0) {
		int at = snprintf(lines[k], 512,
		                  "allocations by origin (instrument, bytes within 2x): ");
		for (size_t i = 0; i < ng && at > 0 && at < 512; i++) {
			char one[320];
			origins_format(one, sizeof(one), &g[i]);
			at += snprintf(lines[k] + at, 512 - (size_t)at, "%s%s", i ? ", " : "", one);
		}
		k++;
	}
	return k;
}
