/* gate/run/single_mode.c: the scope of a run on one node, started by gate or attached to
 * (gate/run/pipeline.h): its snapshots, and every rule on them, the baseline's included. */
#include <stdio.h>
#include <string.h>

#include "gate/node/clock.h"
#include "gate/run/pipeline.h"
#include "judge/judge.h"
#include "model/figures.h"
#include "model/snapshot.h"

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

static int single_snapshot_send(struct run *r, const struct probe_snapshot_opts *so, char *err,
                                size_t errlen)
{
	return probe_snapshot_send(&r->ses.conn, so, err, errlen) == EIC_OK ? 0 : -1;
}

static int single_snapshot(struct run *r, const struct probe_snapshot_opts *so, const char *which,
                           struct snapshot *out, char *err, size_t errlen)
{
	long long t = clock_ms();
	bool sent = r->after_sent && strcmp(which, "after") == 0;
	if (sent)
		r->after_sent = false;
	if ((sent ? probe_snapshot_wait(&r->ses.conn, r->cfg.rpc_timeout_ms, out, err, errlen)
	          : probe_snapshot(&r->ses.conn, so, r->cfg.rpc_timeout_ms, out, err, errlen)) !=
	    EIC_OK)
		return -1;
	char total[32];
	model_bytes_format(total, sizeof(total), out->mem[MEM_TOTAL]);
	run_progress(r, "%s-snapshot: total %s, %lld processes (GC %.0f ms, %lld ms in all)", which,
	             total, (long long)out->process_count, (double)out->gc_us / 1000.0,
	             clock_ms() - t);
	settle_say(r, which, out);
	return 0;
}

/* What reproduces a finding of this run: its own command with the options that change what
 * is measured (not where reports go), for a suite's tests only (mix test, a rebar3
 * project's); `rebar3 gate` takes gate's options after its own --. */
static void reproduce_prefix(char *buf, size_t len, const struct run *r)
{
	const struct run_opts *o = r->opts;
	bool rebar = r->work == &rebar_mode_workload;
	size_t n = (size_t)snprintf(buf, len, "%s",
	                            !o->via_plugin ? "gate run"
	                            : rebar        ? "rebar3 gate --"
	                                           : "mix gate");
	if (o->project_dir && !o->via_plugin && n < len)
		n += (size_t)snprintf(buf + n, len - n, " -C %s", o->project_dir);
	if (o->config_path && n < len)
		n += (size_t)snprintf(buf + n, len - n, " -c %s", o->config_path);
	if (o->per_test && n < len)
		n += (size_t)snprintf(buf + n, len - n, " --per-test");
	if (o->instrument && n < len)
		n += (size_t)snprintf(buf + n, len - n, " --instrument");
	if (o->repeat && n < len)
		n += (size_t)snprintf(buf + n, len - n, " --repeat %d", o->repeat);
}

/* The judge (judge/judge.h) on one node: under --repeat the growth that continued after the
 * warm-up, with the structures that grew in every run; --sample's trend; the baseline. */
static int single_judge(struct run *r)
{
	const struct snapshot *runs[REPEAT_MAX + 1];
	struct judge_baseline bl;
	struct judge_input in = {
	        .before = r->rep.judged ? &r->rep.judged_before : &r->before,
	        .after = r->rep.judged ? &r->rep.judged_after : &r->after,
	        .run_before = &r->before,
	        .run_after = &r->after,
	        .cfg = &r->cfg.rules,
	        .tests = &r->tests,
	        .tests_here = true,
	        .repeat = &r->rep.data,
	        .samples = &r->samples,
	        .baseline = baseline_step_judged(&r->bl, &r->cfg.rules.baseline, &bl),
	        .warn_only = r->opts->warn_only,
	};
	char prefix[1024];
	struct reproduce_cmd rc = {prefix, r->project, r->opts->test_args, r->opts->ntest_args,
	                           r->work == &rebar_mode_workload ? REPRODUCE_REBAR
	                                                           : REPRODUCE_MIX};
	if (r->work == &suite_mode_workload || r->work == &rebar_mode_workload) {
		reproduce_prefix(prefix, sizeof(prefix), r);
		in.reproduce = &rc;
	}
	if (r->rep.judged) {
		in.runs = runs;
		in.nruns = repeat_step_runs(&r->rep, &r->before, &r->after, runs);
	}
	return judge_run(&in, &r->findings, r->err, sizeof(r->err));
}

const struct run_scope single_scope = {
        .name = "one node",
        .snapshot = single_snapshot,
        .snapshot_send = single_snapshot_send,
        .judge = single_judge,
};
