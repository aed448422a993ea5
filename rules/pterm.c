/* rules/pterm.c: the persistent_term rule: entries and bytes put during the run. */
#include "rules/pterm.h"

#include <stdio.h>
#include <string.h>

#include "model/finding.h"
#include "rules/consolidate.h"

#define RULE "persistent_term"
#define SUBJECT "growth"

void pterm_config_default(struct pterm_config *cfg)
{
	cfg->max_entries = 1000;
	cfg->max_bytes = 1000000;
}

/* "persistent_term {Foo.Cache, _} x 4 000 (e.g. {Foo.Cache, 17}), 612.0 kB" */
static size_t groups_format(char *buf, size_t len, const struct snapshot *after, size_t max)
{
	char n[32], b[32];
	size_t o = 0;

	for (size_t i = 0; i < after->npterm_new && i < max && o < len; i++) {
		const struct key_group *g = &after->pterm_new[i];
		rules_count_format(n, sizeof(n), g->count);
		model_bytes_format(b, sizeof(b), g->bytes);
		o += (size_t)snprintf(buf + o, len - o, "%s%s x %s (e.g. %s)%s%s", i ? ", " : "",
		                      g->key ? g->key : "?", n, g->example ? g->example : "?",
		                      g->bytes > 0 ? ", " : "", g->bytes > 0 ? b : "");
	}
	return o < len ? o : len - 1;
}

int pterm_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                const struct pterm_config *cfg)
{
	char msg[2048], dc[32], db[32], ac[32], ab[32], le[32], lb[32], grp[1024];

	if (cfg->max_entries == RULES_OFF && cfg->max_bytes == RULES_OFF)
		return findings_add(out, RULE, SUBJECT, VERDICT_SKIP, 0, 0, 0, -1,
		                    "persistent_term: off (both limits are \"off\")");
	if (!before->have_pterm || !after->have_pterm)
		return findings_add(out, RULE, SUBJECT, VERDICT_SKIP, 0, 0, 0, -1,
		                    "persistent_term: not reported by the node (an older probe "
		                    "or a light snapshot)");

	int64_t dcount = after->pterm_count - before->pterm_count;
	int64_t dbytes = after->pterm_memory - before->pterm_memory;
	bool fail = (cfg->max_entries != RULES_OFF && dcount > cfg->max_entries) ||
	            (cfg->max_bytes != RULES_OFF && dbytes > cfg->max_bytes);

	rules_count_format(dc, sizeof(dc), dcount);
	model_bytes_format(db, sizeof(db), dbytes);
	rules_count_format(ac, sizeof(ac), after->pterm_count);
	model_bytes_format(ab, sizeof(ab), after->pterm_memory);
	if (cfg->max_entries == RULES_OFF)
		snprintf(le, sizeof(le), "off");
	else
		rules_count_format(le, sizeof(le), cfg->max_entries);
	if (cfg->max_bytes == RULES_OFF)
		snprintf(lb, sizeof(lb), "off");
	else
		model_bytes_format(lb, sizeof(lb), cfg->max_bytes);

	size_t o = 0;
	if (fail && after->npterm_new) {
		o = groups_format(grp, sizeof(grp), after, 2);
		snprintf(msg, sizeof(msg), "persistent_term %s; ", grp);
		o = strlen(msg);
	}
	snprintf(msg + o, sizeof(msg) - o,
	         "persistent_term grew %s%s entries, %s%s (now %s entries, %s), limit +%s entries, "
	         "+%s",
	         dcount >= 0 ? "+" : "", dc, dbytes >= 0 ? "+" : "", db, ac, ab, le, lb);
	if (findings_add(out, RULE, SUBJECT, fail ? VERDICT_FAIL : VERDICT_PASS,
	                 before->pterm_memory, after->pterm_memory,
	                 cfg->max_bytes == RULES_OFF ? 0 : cfg->max_bytes, -1, msg) < 0)
		return -1;
	struct finding *f = &out->items[out->count - 1];
	f->delta = dbytes;
	if (!fail)
		return 0;
	/* the entries as a structure (rules/consolidate.h): their values in the literal area, i.e.
	 * the rest of system; the refc binaries they reference in binary */
	char label[400];
	snprintf(label, sizeof(label), "persistent_term %s x %s",
	         after->npterm_new && after->pterm_new[0].key ? after->pterm_new[0].key : "entries",
	         dc);
	if (consolidate_name(f, "persistent_term", label, MEM_SYSTEM, dbytes) < 0)
		return -1;
	for (size_t i = 0; i < after->npterm_new; i++)
		consolidate_explains_add(f->explains, MEM_BINARY, after->pterm_new[i].bin_bytes);
	return 0;
}
