/* gate/run/cluster_mode.c: the scope of `gate run --attach NODE --cluster`
 * (gate/run/pipeline.h): the attached node and every node of its cluster, each snapshot and
 * judged on its own; a node that fails or leaves is reported and fails the gate. */
#include <stdio.h>
#include <stdlib.h>

#include "base/errtext.h"
#include "base/grow.h"
#include "gate/run/pipeline.h"
#include "judge/judge.h"
#include "model/verdict.h"

char *run_cluster_names(const struct run *r)
{
	struct textbuf b = {0};
	for (size_t i = 0; i < r->cl.n; i++)
		textbuf_printf(&b, "%s%s", i ? " " : "", r->cl.nodes[i].name);
	return textbuf_take(&b);
}

static void cluster_unload_hook(void *arg)
{
	cluster_unload(arg);
}

/* The attached node's nodes(), and the probe pushed to them through it. */
static int cluster_open(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "pushing the probe to the cluster";
	r->ses.before_unload = cluster_unload_hook;
	r->ses.before_unload_arg = &r->cl;
	if (cluster_discover(&r->cl, &r->ses.conn, r->cfg.rpc_timeout_ms, err, errlen) < 0 ||
	    cluster_push(&r->cl, err, errlen) < 0)
		return -1;
	char *names = run_cluster_names(r);
	run_progress(r, "cluster of %zu node%s through %s: %s", r->cl.n, r->cl.n == 1 ? "" : "s",
	             r->ses.name, names ? names : "(out of memory listing them)");
	free(names);
	return 0;
}

static int cluster_snap(struct run *r, const struct probe_snapshot_opts *so, const char *which,
                        struct snapshot *out, char *err, size_t errlen)
{
	(void)out; /* every node keeps its own */
	bool after = so->mark == PROBE_MARK_AFTER;
	size_t lost = cluster_lost(&r->cl);
	if (cluster_snapshot(&r->cl, so, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < r->cl.n; i++) {
		const struct cluster_node *nd = &r->cl.nodes[i];
		const struct snapshot *sn = after ? &nd->after : &nd->before;
		char total[32];
		if (nd->error[0] || !(after ? nd->have_after : nd->have_before))
			continue;
		model_bytes_format(total, sizeof(total), sn->mem[MEM_TOTAL]);
		run_progress(r, "%s-snapshot of %s: total %s, %lld processes (GC %.0f ms)", which,
		             nd->name, total, (long long)sn->process_count,
		             (double)sn->gc_us / 1000.0);
	}
	for (size_t i = 0; i < r->cl.n && cluster_lost(&r->cl) > lost; i++)
		if (r->cl.nodes[i].error[0])
			run_progress(r, "%s", r->cl.nodes[i].error);
	return 0;
}

/* The judge (judge/judge.h) on every node that stayed, as on one node: the rules, the fine
 * level (each node's own tracker), the culprits, severity and --warn-only. The tests ran in
 * the attached node (the first): only its findings are matched against them, and only there
 * do the tests' max_peak tags apply. A cluster has no baseline (one node's). */
static int cluster_judge(struct run *r)
{
	for (size_t i = 0; i < r->cl.n; i++) {
		struct cluster_node *nd = &r->cl.nodes[i];
		if (nd->error[0])
			continue;
		if (!nd->have_before || !nd->have_after) {
			snprintf(nd->error, sizeof(nd->error), "node %s has no %s-snapshot",
			         nd->name, nd->have_before ? "after" : "before");
			continue;
		}
		struct judge_input in = {
		        .before = &nd->before,
		        .after = &nd->after,
		        .run_before = &nd->before,
		        .run_after = &nd->after,
		        .cfg = &r->cfg.rules,
		        .tests = &r->tests,
		        .tests_here = i == 0,
		        .warn_only = r->opts->warn_only,
		};
		char err[sizeof(r->err) - 64];
		if (judge_run(&in, &nd->findings, err, sizeof(err)) < 0) {
			errtext_set(r->err, sizeof(r->err), NULL, "%s (node %s)", err, nd->name);
			return -1;
		}
	}
	return 0;
}

/* a node lost mid-run fails the gate, in its suite */
static void cluster_tally(const struct run *r, struct verdict_tally *vt)
{
	for (size_t i = 0; i < r->cl.n; i++) {
		vt->rules += findings_failed(&r->cl.nodes[i].findings);
		vt->nodes_lost += r->cl.nodes[i].error[0] != '\0';
	}
}

const struct run_scope cluster_scope = {
        .name = "cluster",
        .open = cluster_open,
        .snapshot = cluster_snap,
        .judge = cluster_judge,
        .tally = cluster_tally,
};
