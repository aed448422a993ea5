/* rules/ports.c: the ports rule: ports opened during the run and still open. */
#include "rules/ports.h"

#include <stdio.h>
#include <string.h>

#include "model/finding.h"
#include "rules/consolidate.h"

#define RULE "ports"
#define SUBJECT "open"
/* groups named in the message (the probe ships up to 20) */
#define PORTS_IN_MESSAGE 3

void ports_config_default(struct ports_config *cfg)
{
	cfg->max_opened = 50;
}

void ports_group_format(char *buf, size_t len, const struct port_group *g)
{
	char n[32], owner[512], os[48] = "";

	rules_count_format(n, sizeof(n), g->count);
	if (g->owner_name)
		snprintf(owner, sizeof(owner), "%s (%s)", rules_display(g->owner_name),
		         g->owner_pid ? g->owner_pid : "?");
	else
		snprintf(owner, sizeof(owner), "%s (%s)", g->owner_pid ? g->owner_pid : "?",
		         g->owner_call ? rules_display(g->owner_call) : "?");
	if (g->os_pid > 0)
		snprintf(os, sizeof(os), ", e.g. OS pid %lld", (long long)g->os_pid);
	snprintf(buf, len, "port %s x %s, owner %s%s%s%s", g->name ? g->name : "?", n, owner,
	         g->module ? " from test module " : "", g->module ? rules_display(g->module) : "",
	         os);
}

/* driver_alloc's growth in use between the snapshots (0 when either lacks it): the memory
 * of the ports' drivers, and of NIFs' enif_alloc, which the origins rule names on its own. */
static int64_t ports_driver_bytes(const struct snapshot *before, const struct snapshot *after)
{
	int64_t b = -1, a = -1;
	for (size_t i = 0; before && i < before->nallocs; i++)
		if (before->allocs[i].type && strcmp(before->allocs[i].type, "driver_alloc") == 0)
			b = before->allocs[i].blocks_size;
	for (size_t i = 0; i < after->nallocs; i++)
		if (after->allocs[i].type && strcmp(after->allocs[i].type, "driver_alloc") == 0)
			a = after->allocs[i].blocks_size;
	return b >= 0 && a > b ? a - b : 0;
}

static int ports_judge(struct findings *out, const struct snapshot *before,
                       const struct snapshot *after, const struct ports_config *cfg)
{
	char msg[2048], n[32], lim[32], grp[768];

	if (cfg->max_opened == RULES_OFF)
		return findings_add(out, RULE, SUBJECT, VERDICT_SKIP, 0, 0, 0, -1,
		                    "ports: off ([ports] max_opened = \"off\")");
	if (!after->have_growth)
		return findings_add(out, RULE, SUBJECT, VERDICT_SKIP, 0, 0, cfg->max_opened, -1,
		                    "ports: the after-snapshot has no diff against a "
		                    "before-snapshot (an older probe or a light snapshot)");

	bool fail = after->ports_opened > cfg->max_opened;
	rules_count_format(n, sizeof(n), after->ports_opened);
	rules_count_format(lim, sizeof(lim), cfg->max_opened);
	size_t o = 0;
	if (fail) {
		/* what, first: the largest groups */
		for (size_t i = 0; i < after->nports && i < PORTS_IN_MESSAGE; i++) {
			ports_group_format(grp, sizeof(grp), &after->ports[i]);
			o += (size_t)snprintf(msg + o, sizeof(msg) - o, "%s%s", i ? ", " : "", grp);
			if (o >= sizeof(msg))
				o = sizeof(msg) - 1;
		}
		if (o)
			o += (size_t)snprintf(msg + o, sizeof(msg) - o, "; ");
		if (o >= sizeof(msg))
			o = sizeof(msg) - 1;
	}
	int64_t drv = fail ? ports_driver_bytes(before, after) : 0;
	char dtext[96] = "";
	if (drv > 0) {
		char d[32];
		model_bytes_format(d, sizeof(d), drv);
		snprintf(dtext, sizeof(dtext), "; their drivers' memory (driver_alloc) +%s", d);
	}
	snprintf(msg + o, sizeof(msg) - o,
	         "%s port%s opened during the run %s still open, limit %s%s", n,
	         after->ports_opened == 1 ? "" : "s", after->ports_opened == 1 ? "is" : "are", lim,
	         dtext);
	if (findings_add(out, RULE, SUBJECT, fail ? VERDICT_FAIL : VERDICT_PASS, 0,
	                 after->ports_opened, cfg->max_opened, -1, msg) < 0)
		return -1;
	struct finding *f = &out->items[out->count - 1];
	f->delta = after->ports_opened;
	/* the ports, one structure; what their drivers allocate (a socket's descriptor and
	 * buffers, a spawned program's pipes) is driver_alloc's growth in system, theirs too */
	if (fail) {
		char label[400];
		snprintf(label, sizeof(label), "%s ports%s%s", n, after->nports ? " " : "",
		         after->nports && after->ports[0].name ? after->ports[0].name : "");
		if (consolidate_name(f, "ports", label, MEM_TOTAL, 0) < 0)
			return -1;
		consolidate_explains_add(f->explains, MEM_SYSTEM,
		                         ports_driver_bytes(before, after));
	}
	/* the culprit, for a reviewer's file and line (rules/tags.c): the test module of the
	 * largest group a test's process opened */
	for (size_t i = 0; fail && i < after->nports; i++)
		if (after->ports[i].module) {
			if (!(f->culprit = strdup(after->ports[i].module)))
				return -1;
			break;
		}
	return 0;
}

int ports_check(struct findings *out, const struct snapshot *before, const struct snapshot *after,
                const struct ports_config *cfg)
{
	size_t first = out->count;
	int rc = ports_judge(out, before, after, cfg);
	findings_show(out, first, UNIT_COUNT, 0); /* its figures are ports, not bytes */
	return rc;
}
