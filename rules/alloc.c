/* rules/alloc.c: the allocator rule: fragmented carriers that waste a lot of memory. */
#include "model/finding.h"
#include "rules/alloc.h"

#include <stdio.h>
#include <string.h>

#define RULE "allocator"
#define FAMILY "fragmentation"

/* Allocators keep freed carriers after a busy suite, so fragmentation alone says little;
 * only tens of MB of waste on top of it are worth a failure. gate.toml says why. */
void alloc_config_default(struct alloc_config *cfg)
{
	cfg->max_fragmentation_pct = 75.0;
	cfg->waste_floor = 64000000;
}

static int64_t waste(const struct alloc_info *a)
{
	return a->carriers_size - a->blocks_size;
}

static const char *type_name(const struct alloc_info *a)
{
	return a->type ? a->type : "?";
}

static const struct alloc_info *find_type(const struct snapshot *s, const char *type)
{
	for (size_t i = 0; i < s->nallocs; i++)
		if (s->allocs[i].type && type && strcmp(s->allocs[i].type, type) == 0)
			return &s->allocs[i];
	return NULL;
}

static bool over(const struct alloc_config *cfg, const struct alloc_info *a)
{
	return a->fragmentation * 100.0 > cfg->max_fragmentation_pct && waste(a) > cfg->waste_floor;
}

int alloc_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                const struct alloc_config *cfg)
{
	struct culprits bad = {0};
	const struct alloc_info *top = NULL;
	char msg[1024], fl[32], c[32], b[32], w[32];
	int rc = 0;

	if (cfg->max_fragmentation_pct < 0)
		return 0;
	model_bytes_format(fl, sizeof(fl), cfg->waste_floor);
	if (after->nallocs == 0)
		return findings_add(out, RULE, FAMILY, VERDICT_SKIP, 0, 0, cfg->waste_floor,
		                    cfg->max_fragmentation_pct,
		                    "allocator fragmentation: the after-snapshot has no allocator "
		                    "data (a light snapshot)");
	for (size_t i = 0; i < after->nallocs; i++) {
		const struct alloc_info *a = &after->allocs[i];
		if (!top || waste(a) > waste(top))
			top = a;
		if (over(cfg, a) && culprits_add(&bad, i, waste(a)) < 0)
			goto oom;
	}
	if (bad.count == 0) {
		model_bytes_format(w, sizeof(w), waste(top));
		snprintf(msg, sizeof(msg),
		         "no allocator is over %g %% fragmented with more than %s of waste (most "
		         "waste: %s, %s, %.1f %%)",
		         cfg->max_fragmentation_pct, fl, type_name(top), w,
		         top->fragmentation * 100.0);
		rc = findings_add(out, RULE, FAMILY, VERDICT_PASS, 0, waste(top), cfg->waste_floor,
		                  cfg->max_fragmentation_pct, msg);
		goto out;
	}
	culprits_sort(&bad);
	for (size_t k = 0; k < bad.count && k < RULES_MAX_CULPRITS; k++) {
		const struct alloc_info *a = &after->allocs[bad.items[k].index];
		const struct alloc_info *was = find_type(before, a->type);
		char subject[160], wb[32];
		size_t o;
		model_bytes_format(c, sizeof(c), a->carriers_size);
		model_bytes_format(b, sizeof(b), a->blocks_size);
		model_bytes_format(w, sizeof(w), waste(a));
		o = (size_t)snprintf(
		        msg, sizeof(msg),
		        "allocator %s is %.1f %% fragmented: %s of carriers hold %s of "
		        "blocks (%s wasted), limit %g %% above a waste floor of %s",
		        type_name(a), a->fragmentation * 100.0, c, b, w, cfg->max_fragmentation_pct,
		        fl);
		if (was && o < sizeof(msg)) {
			model_bytes_format(wb, sizeof(wb), waste(was));
			snprintf(msg + o, sizeof(msg) - o, "; it wasted %s before the run", wb);
		}
		snprintf(subject, sizeof(subject), FAMILY " %s", type_name(a));
		if (findings_add(out, RULE, subject, VERDICT_FAIL, was ? waste(was) : 0, waste(a),
		                 cfg->waste_floor, cfg->max_fragmentation_pct, msg) < 0)
			goto oom;
	}
	if (culprits_add_more(out, RULE, FAMILY, &bad, "fragmented allocators") < 0)
		goto oom;
	goto out;
oom:
	rc = -1;
out:
	culprits_clear(&bad);
	return rc;
}
