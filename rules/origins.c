/* rules/origins.c: allocation origins named in the findings they explain. */
#include "model/finding.h"
#include "rules/origins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct alloc_origin *origin_find(const struct fine_level *f, const char *origin,
                                              const char *type)
{
	for (size_t i = 0; i < f->norigins; i++)
		if (strcmp(f->origins[i].origin, origin) == 0 &&
		    strcmp(f->origins[i].type, type) == 0)
			return &f->origins[i];
	return NULL;
}

/* The growth of one {origin, type}: per bucket, the blocks added, with the bucket's bounds. */
static struct origin_growth origin_diff(const struct alloc_origin *a, const struct alloc_origin *b,
                                        int64_t start)
{
	struct origin_growth g = {.origin = a->origin, .type = a->type};
	for (size_t i = 0; i < a->nhist; i++) {
		int64_t d = a->hist[i] - (b && i < b->nhist ? b->hist[i] : 0);
		if (d <= 0)
			continue;
		int64_t lo = i == 0 ? 1 : start << (i - 1);
		int64_t hi = start << i;
		g.blocks += d;
		g.low += d * lo;
		if (i + 1 == a->nhist) { /* the last bucket has no upper bound */
			g.high += d * lo;
			g.open = true;
		} else {
			g.high += d * hi;
		}
	}
	return g;
}

size_t origins_grown(struct origin_growth *out, size_t cap, const struct snapshot *before,
                     const struct snapshot *after)
{
	const struct fine_level *fa = &after->fine, *fb = &before->fine;
	size_t n = 0;
	if (!fa->have_origins || !fb->have_origins || fa->hist_start <= 0 ||
	    fa->hist_start != fb->hist_start)
		return 0;
	for (size_t i = 0; i < fa->norigins; i++) {
		const struct alloc_origin *a = &fa->origins[i];
		if (a->nhist > FINE_HIST_MAX || a->nhist > 40)
			continue;
		struct origin_growth g =
		        origin_diff(a, origin_find(fb, a->origin, a->type), fa->hist_start);
		if (g.low < ORIGINS_FLOOR)
			continue;
		/* insertion by low bound, largest first, keeping the cap */
		size_t at = n < cap ? n : cap;
		while (at > 0 && out[at - 1].low < g.low) {
			if (at < cap)
				out[at] = out[at - 1];
			at--;
		}
		if (at < cap) {
			out[at] = g;
			if (n < cap)
				n++;
		}
	}
	return n;
}

/* What kind of thing allocated: the type tells a NIF's blocks from a driver's. */
static const char *origin_kind(const struct origin_growth *g)
{
	if (strcmp(g->origin, "system") == 0)
		return "the runtime";
	if (strncmp(g->type, "nif", 3) == 0)
		return "NIF";
	if (strncmp(g->type, "drv", 3) == 0 || strncmp(g->type, "driver", 6) == 0 ||
	    strcmp(g->type, "port") == 0)
		return "driver";
	return "origin";
}

void origins_format(char *buf, size_t len, const struct origin_growth *g)
{
	char blocks[32], lo[32], hi[32];
	rules_count_format(blocks, sizeof(blocks), g->blocks);
	model_bytes_format(lo, sizeof(lo), g->low);
	model_bytes_format(hi, sizeof(hi), g->high);
	const char *kind = origin_kind(g);
	bool runtime = strcmp(kind, "the runtime") == 0;
	if (g->open)
		snprintf(buf, len, "%s%s%s: +%s blocks (at least %s, %s)", kind, runtime ? "" : " ",
		         runtime ? "" : rules_display(g->origin), blocks, lo, g->type);
	else
		snprintf(buf, len, "%s%s%s: +%s blocks (%s-%s, %s)", kind, runtime ? "" : " ",
		         runtime ? "" : rules_display(g->origin), blocks, lo, hi, g->type);
}

/* A failing finding about memory that tagged allocators hold. */
static bool origins_apply(const struct finding *f)
{
	if (f->verdict != VERDICT_FAIL || !f->subject || !(f->show & SHOW_CATEGORY))
		return false;
	return strcmp(f->subject, "system") == 0 || strcmp(f->subject, "binary") == 0 ||
	       strcmp(f->subject, "total") == 0;
}

int origins_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                  const struct fine_config *cfg)
{
	(void)cfg;
	struct origin_growth g[ORIGINS_SHOWN];
	size_t n = origins_grown(g, ORIGINS_SHOWN, before, after);
	if (n == 0)
		return 0;
	char said[1024] = "allocated by ";
	size_t named = 0;
	for (size_t i = 0; i < n; i++) {
		char one[320];
		/* the runtime's own blocks (a process's binaries, the emulator's) name no code the
		 * user could look at: the finding's own figures say more; only a NIF or a driver
		 * is news */
		if (strcmp(g[i].origin, "system") == 0)
			continue;
		origins_format(one, sizeof(one), &g[i]);
		size_t at = strlen(said);
		snprintf(said + at, sizeof(said) - at, "%s%s", named++ ? ", " : "", one);
	}
	if (named == 0)
		return 0;
	for (size_t i = 0; i < out->count; i++) {
		struct finding *f = &out->items[i];
		if (!origins_apply(f))
			continue;
		char lead[sizeof(said) + 2];
		snprintf(lead, sizeof(lead), "%s; ", said);
		if (finding_part_add(f, PART_ORIGINS, true, NULL, lead) < 0)
			return -1;
	}
	return 0;
}
