/* rules/modules.c: the modules rule: modules created during the run and never purged. */
#include "rules/modules.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/finding.h"
#include "rules/consolidate.h"
#include "rules/culprits.h"
#include "rules/drilldown.h"
#include "rules/growth.h"

#define RULE "modules"

/* A suite creates a few modules at run time for good reasons (a mock library's mocks, a
 * template compiled once); one per call, never purged, grows with the suite and never comes
 * back. 200 modules is many times what a clean suite creates; 1 MB keeps tiny generated
 * modules from failing on their count alone. gate.toml says why. */
void modules_config_default(struct modules_config *cfg)
{
	cfg->max_created = 200;
	cfg->floor_bytes = 1000000;
}

/* "CodeLeak.Tpl.* x 1 500, tpl_# x 12": the largest groups, at most three */
static void shapes_text(char *buf, size_t len, const struct snapshot *a)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < a->ncode_groups && i < 3 && o < len; i++) {
		char n[32];
		model_count_format(n, sizeof(n), a->code_groups[i].count);
		o += (size_t)snprintf(buf + o, len - o, "%s%s x %s", i ? ", " : "",
		                      a->code_groups[i].key ? a->code_groups[i].key : "?", n);
	}
	if (a->ncode_groups > 3 && o < len)
		snprintf(buf + o, len - o, ", and more");
}

/* The refc binary bytes that grew and that no structure the drill-down finds (a process, a
 * table, a persistent_term key) holds: module literals' binaries live there. */
static int binary_unheld(const struct snapshot *b, const struct snapshot *a, int64_t *out)
{
	*out = 0;
	if (!b->have[MEM_BINARY] || !a->have[MEM_BINARY])
		return 0;
	struct drill_item *items = malloc(DRILL_MAX * sizeof(*items));
	if (!items)
		return -1;
	int64_t grew = a->mem[MEM_BINARY] - b->mem[MEM_BINARY];
	grew -= drilldown_held(items, drilldown_list(items, DRILL_MAX, b, a), MEM_BINARY);
	free(items);
	*out = grew > 0 ? grew : 0;
	return 0;
}

static int modules_structure(struct finding *f, const char *shapes, int64_t bytes, int64_t bin)
{
	char label[400];
	snprintf(label, sizeof(label), "modules created during the run (%s)", shapes);
	if (consolidate_name(f, "modules:created", label, MEM_CODE, bytes) < 0)
		return -1;
	consolidate_explains_add(f->explains, MEM_BINARY, bin);
	return 0;
}

int modules_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                  const struct modules_config *cfg)
{
	char msg[1024], shapes[400], n[32], lim[32], fl[32], by[32], bs[32], extra[160] = "";
	struct code_split split;

	if (cfg->max_created == RULES_OFF)
		return 0;
	if (!after->have_code_new)
		return findings_add(out, RULE, "created", VERDICT_SKIP, 0, 0, cfg->floor_bytes, -1,
		                    "modules created during the run: not measured (no before "
		                    "set of loaded modules)");
	growth_code_split(before, after, &split);
	int64_t count = after->code_created.count;
	bool fail = count > cfg->max_created && split.created > cfg->floor_bytes;
	int64_t bin = 0;
	if (fail && binary_unheld(before, after, &bin) < 0)
		return -1;
	shapes_text(shapes, sizeof(shapes), after);
	model_count_format(n, sizeof(n), count);
	model_count_format(lim, sizeof(lim), cfg->max_created);
	model_bytes_format(fl, sizeof(fl), cfg->floor_bytes);
	model_bytes_format(by, sizeof(by), split.created);
	if (bin >= 10000) {
		model_bytes_format(bs, sizeof(bs), bin);
		snprintf(extra, sizeof(extra),
		         " (and +%s of refc binaries no process or table holds: their literals')",
		         bs);
	}
	snprintf(msg, sizeof(msg),
	         "%s created during the run and still loaded, %s of code and literals%s; %s "
	         "module%s created in all (no object file, not compiled from the suite's test "
	         "files), limit %s above %s%s",
	         *shapes ? shapes : "modules", by, extra, n, count == 1 ? "" : "s", lim, fl,
	         fail ? "; modules are never collected: purge them (:code.purge/1, "
	                ":code.delete/1) or create each once and reuse it"
	              : "");
	if (findings_add(out, RULE, "created", fail ? VERDICT_FAIL : VERDICT_PASS, 0, split.created,
	                 cfg->floor_bytes, -1, msg) < 0)
		return -1;
	return fail ? modules_structure(&out->items[out->count - 1], shapes, split.created, bin)
	            : 0;
}
