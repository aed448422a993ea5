/* gate/run/single_mode.c: the scope of a run on one node, started by gate or attached to
 * (gate/run/pipeline.h): its snapshots, and every rule on them, the baseline's included. */
#include <stdio.h>

#include "gate/node/clock.h"
#include "gate/run/pipeline.h"
#include "rules/origins.h"
#include "rules/peak.h"
#include "rules/repeat.h"
#include "rules/rss.h"
#include "rules/trend_samples.h"

/* The sockets' input buffers the snapshot set aside, and what it waited for,
 * when it had to wait (port drivers' binaries that no socket explains) */
static void settle_say(struct run *r, const char *which, const struct snapshot *s)
{
	char first[32], left[32], b0[32], b1[32];
	if (s->have_set_aside && s->set_aside_bytes > 0) {
		char raw[32], aside[32], judged[32];
		model_bytes_format(raw, sizeof(raw), s->set_aside_binary_raw);
		model_bytes_format(aside, sizeof(aside), s->set_aside_bytes);
		model_bytes_format(judged, sizeof(judged), s->mem[MEM_BINARY]);
		bool one = s->set_aside_sockets == 1;
		run_progress(
		        r,
		        "%s-snapshot: binary %s, of which %s%s %s %lld %s (released at %s next "
		        "read), judged %s",
		        which, raw, s->set_aside_exact ? "" : "at least ", aside,
		        one ? "is" : "are", (long long)s->set_aside_sockets,
		        one ? "socket's input buffer" : "sockets' input buffers",
		        one ? "its" : "their", judged);
	}
	if (!s->have_settle || s->settle_binary_before == 0)
		return;
	model_bytes_format(first, sizeof(first), s->settle_port_buffers);
	model_bytes_format(left, sizeof(left), s->settle_port_buffers_left);
	model_bytes_format(b0, sizeof(b0), s->settle_binary_before);
	model_bytes_format(b1, sizeof(b1), s->settle_binary_after);
	/* settled: what is left is under the floor the probe waited for (the probe is compiled
	 * into gate: it always reports that floor with the wait) */
	if (s->settle_port_buffers_left <= s->settle_floor)
		run_progress(r,
		             "%s-snapshot settled: port drivers' binaries that no socket explains "
		             "(at least %s) released in %.0f ms; binary %s -> %s",
		             which, first, (double)s->settle_us / 1000.0, b0, b1);
	else
		run_progress(r,
		             "%s-snapshot: port drivers still keep at least %s of binaries that no "
		             "socket explains after %.0f ms (settle_timeout); binary %s -> %s",
		             which, left, (double)s->settle_us / 1000.0, b0, b1);
}

static int single_snapshot(struct run *r, const struct probe_snapshot_opts *so, const char *which,
                           struct snapshot *out, char *err, size_t errlen)
{
	long long t = clock_ms();
	if (probe_snapshot(&r->ses.conn, so, r->cfg.rpc_timeout_ms, out, err, errlen) != EIC_OK)
		return -1;
	char total[32];
	model_bytes_format(total, sizeof(total), out->mem[MEM_TOTAL]);
	run_progress(r, "%s-snapshot: total %s, %lld processes (GC %.0f ms, %lld ms in all)", which,
	             total, (long long)out->process_count, (double)out->gc_us / 1000.0,
	             clock_ms() - t);
	settle_say(r, which, out);
	return 0;
}

/* --repeat judges the growth that continued after the warm-up (rules/repeat.h); --sample
 * adds the trend of the samples; the baseline compares the after-snapshot. */
static int single_judge(struct run *r)
{
	const struct snapshot *jb = r->rep.judged ? &r->rep.judged_before : &r->before;
	const struct snapshot *ja = r->rep.judged ? &r->rep.judged_after : &r->after;
	if (rules_check_all(&r->findings, jb, ja, &r->tests, &r->cfg.rules) < 0 ||
	    /* the structures that grew in every run; they name their structure, so
	     * run_findings_finish's consolidation (rules/consolidate.h) gives one leak one
	     * finding with them too (growth_consolidate is not run twice: a row that adopted
	     * a structure would then be judged net of itself) */
	    (r->rep.judged && (repeat_step_structures(&r->findings, &r->rep, &r->before, &r->after,
	                                              &r->cfg.rules.structure) < 0 ||
	                       drilldown_annotate(&r->findings, jb, ja) < 0)) ||
	    repeat_annotate(&r->findings, &r->rep.data) < 0 ||
	    trend_samples_check(&r->findings, &r->samples, &r->cfg.rules.growth) < 0 ||
	    baseline_step_check(&r->findings, &r->bl, &r->after, &r->cfg.rules.baseline) < 0 ||
	    /* origins named in the findings they explain, RSS, the run's peak */
	    origins_check(&r->findings, jb, ja, &r->cfg.rules.fine) < 0 ||
	    /* RSS over the judged window, as every other rule: under --repeat, runs 2..N (a
	     * suite's first run maps what later runs reuse: warm-up, not a leak) */
	    rss_check(&r->findings, jb, ja, &r->cfg.rules.fine) < 0 ||
	    peak_check(&r->findings, &r->before, &r->after, &r->cfg.rules.fine) < 0) {
		errtext_set(r->err, sizeof(r->err), NULL, "out of memory applying the rules");
		return -1;
	}
	/* the tests' max_peak tags (a tag that does not parse: tags_check, run by
	 * run_findings_finish, says so with the test's file and line) */
	char terr[512];
	if (peak_tags_check(&r->findings, &r->after, &r->tests, terr, sizeof(terr)) == -1) {
		errtext_set(r->err, sizeof(r->err), NULL, "out of memory applying the rules");
		return -1;
	}
	return run_findings_finish(r, &r->findings, jb, ja, true);
}

const struct run_scope single_scope = {
        .name = "one node",
        .snapshot = single_snapshot,
        .judge = single_judge,
};
