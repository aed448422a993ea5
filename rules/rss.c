/* rules/rss.c: RSS growth the BEAM's allocators do not explain. */
#include "model/finding.h"
#include "rules/rss.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the BEAM holds from the OS: its mapped segments and malloc'd carriers, else (an older
 * probe) its carriers alone. */
static int64_t beam_held(const struct fine_level *f, bool mapped)
{
	return mapped ? f->mapped : f->allocated;
}

static bool both_mapped(const struct snapshot *before, const struct snapshot *after)
{
	return before->fine.have_mapped && after->fine.have_mapped;
}

int64_t rss_unaccounted(const struct snapshot *before, const struct snapshot *after)
{
	const struct fine_level *b = &before->fine, *a = &after->fine;
	bool m = both_mapped(before, after);
	/* figures lie in [0, MODEL_FIGURE_MAX]: no overflow */
	return (a->rss - b->rss) - (beam_held(a, m) - beam_held(b, m));
}

/* The test (or test module) whose RSS grew most between its edges, when it holds at least
 * half of the unaccounted growth: named in the message and as the finding's culprit. */
static int rss_culprit(struct finding *f, const struct fine_level *a, int64_t un)
{
	const struct rss_grower *top = NULL;
	for (size_t i = 0; i < a->nrss_grew; i++) /* a test is more precise than its module */
		if (a->rss_grew[i].bytes * 2 >= un &&
		    (!top || (strchr(a->rss_grew[i].what, '\t') && !strchr(top->what, '\t'))))
			top = &a->rss_grew[i];
	char lead[768], g[32];
	if (!top) {
		snprintf(lead, sizeof(lead),
		         "no test module's RSS grew by half of it between its "
		         "edges");
		return finding_part_add(f, PART_CULPRIT, false, "; ", lead);
	}
	const char *tab = strchr(top->what, '\t');
	char mod[256];
	snprintf(mod, sizeof(mod), "%.*s", (int)(tab ? tab - top->what : (long)strlen(top->what)),
	         top->what);
	model_bytes_format(g, sizeof(g), top->bytes);
	if (tab)
		snprintf(lead, sizeof(lead),
		         "likely culprit: %s test \"%s\" (RSS +%s while it ran)",
		         rules_display(mod), tab + 1, g);
	else
		snprintf(lead, sizeof(lead), "likely culprit: %s (RSS +%s while it ran)",
		         rules_display(mod), g);
	free(f->culprit);
	free(f->culprit_test);
	f->culprit = strdup(mod);
	f->culprit_test = tab ? strdup(tab + 1) : NULL;
	if (!f->culprit || (tab && !f->culprit_test))
		return -1;
	return finding_part_add(f, PART_CULPRIT, false, "; ", lead);
}

int rss_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
              const struct fine_config *cfg)
{
	const struct fine_level *b = &before->fine, *a = &after->fine;
	if (!a->have || !b->have)
		return 0;
	size_t first = out->count;
	if (!a->have_rss || !b->have_rss) {
		char msg[512];
		snprintf(msg, sizeof(msg), "not measured: %s",
		         !a->have_rss && a->no_rss   ? a->no_rss
		         : !b->have_rss && b->no_rss ? b->no_rss
		                                     : "the node's RSS could not be read");
		if (findings_add(out, "rss", "outside the BEAM", VERDICT_SKIP, 0, 0, 0, -1, msg) <
		    0)
			return -1;
		findings_show(out, first, UNIT_BYTES, SHOW_QUIET_PASS);
		return 0;
	}
	int64_t un = rss_unaccounted(before, after);
	int64_t limit = cfg->rss_max_unaccounted;
	bool fail = limit >= 0 && un > limit;
	char rss_d[32], al_d[32], un_s[32], lim[32], rb[32], ra[32];
	bool m = both_mapped(before, after);
	int64_t held = beam_held(a, m) - beam_held(b, m);
	model_bytes_format(rss_d, sizeof(rss_d), a->rss - b->rss);
	model_bytes_format(al_d, sizeof(al_d), held);
	model_bytes_format(un_s, sizeof(un_s), un);
	model_bytes_format(lim, sizeof(lim), limit);
	model_bytes_format(rb, sizeof(rb), b->rss);
	model_bytes_format(ra, sizeof(ra), a->rss);
	char msg[1024];
	char car[32];
	model_bytes_format(car, sizeof(car), a->allocated - b->allocated);
	int at = snprintf(msg, sizeof(msg), "RSS %s -> %s (%s%s), %s %s%s%s%s%s%s: %s%s %s", rb, ra,
	                  a->rss >= b->rss ? "+" : "", rss_d,
	                  m ? "what the BEAM's allocators mapped (carriers and mseg's cache)"
	                    : "the BEAM's allocators' carriers",
	                  held >= 0 ? "+" : "", al_d, m ? " (carriers " : "",
	                  m ? (a->allocated >= b->allocated ? "+" : "") : "", m ? car : "",
	                  m ? ")" : "", un >= 0 ? "+" : "", un_s,
	                  fail ? "outside the BEAM's allocators (a NIF's malloc, a driver, a C "
	                         "library: no erlang:memory figure counts it)"
	                       : "unaccounted");
	if (at > 0 && (size_t)at < sizeof(msg)) {
		if (limit >= 0)
			at += snprintf(msg + at, sizeof(msg) - (size_t)at, ", limit %s", lim);
		else
			at += snprintf(msg + at, sizeof(msg) - (size_t)at,
			               " (not judged: [rss] "
			               "max_unaccounted is off)");
	}
	if (findings_add(out, "rss", "outside the BEAM", fail ? VERDICT_FAIL : VERDICT_PASS, b->rss,
	                 a->rss, limit >= 0 ? limit : 0, -1, msg) < 0)
		return -1;
	struct finding *f = &out->items[out->count - 1];
	f->delta = un;
	findings_show(out, first, UNIT_BYTES, SHOW_FIGURES);
	return fail ? rss_culprit(f, a, un) : 0;
}
