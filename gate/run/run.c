/* gate/run/run.c: `gate run`, the pipeline. run_main reads top-down as the product's steps:
 *   1. configure: the project, gate.toml, the outputs, the modes
 *   2. the baseline, read from git before the node starts (a bad ref or a corrupt baseline
 *      costs no suite run)
 *   3. the node: started on loopback or attached to, connected, the probe loaded
 *   4. GC + before-snapshot     5. the workload (mix test, or --exec), --repeat, --sample
 *   6. GC + after-snapshot      7. judge: the rules, the baseline, culprits, tags, severity
 *   8. conclude: the verdict, then --json and --update-baseline, then every report, once.
 * Where the figures come from (one node, a cluster) and what runs between the snapshots
 * (mix test, a command) are the modes of gate/run/pipeline.h.
 * Whatever happens, the node gate started is stopped and the probe removed before exit.
 */
#include "gate/run/run.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/outpath.h"
#include "ci/report/junit.h"
#include "ci/report/summary.h"
#include "ci/store/run_json.h"
#include "gate/config/discover.h"
#include "gate/error.h"
#include "gate/exit.h"
#include "gate/node/signals.h"
#include "gate/probe/faithful.h"
#include "gate/run/pipeline.h"
#include "gate/run/confirm_step.h"
#include "gate/run/report_out.h"
#include "gate/version.h"
#include "model/verdict.h"
#include "rules/attribution.h"
#include "rules/consolidate.h"
#include "rules/tags.h"

/* ---- 1. configure ---- */

/* Appends flags to the node's erl flags (owned, space-separated). Returns 0, or -1
 * on allocation failure (*flags unchanged). */
static int erl_flags_add(char **flags, const char *more)
{
	size_t a = *flags ? strlen(*flags) : 0, b = strlen(more);
	char *f = malloc(a + b + 2);
	if (!f)
		return -1;
	snprintf(f, a + b + 2, "%s%s%s", a ? *flags : "", a ? " " : "", more);
	free(*flags);
	*flags = f;
	return 0;
}

/* The digest of the configuration as gate.toml made it (before the command line and
 * the partition's baseline path), which every partition of one suite shares. */
static int config_digest(struct run *r, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		errtext_set(err, errlen, NULL, "out of memory digesting the configuration");
		return -1;
	}
	config_print(&r->cfg, f);
	if (fclose(f) != 0) {
		free(text);
		errtext_set(err, errlen, NULL, "out of memory digesting the configuration");
		return -1;
	}
	run_json_digest(r->config_digest, text, len);
	free(text);
	r->partition = faithful_partition(r->opts->test_args, r->opts->ntest_args);
	r->partitions = faithful_partitions(r->opts->test_args, r->opts->ntest_args);
	return 0;
}

/* The configuration over the defaults, then what the command line overrides. */
static int load_config(struct run *r, char *err, size_t errlen)
{
	const struct run_opts *o = r->opts;
	if (discover_config(&r->cfg, r->project, o->config_path, err, errlen) < 0 ||
	    config_digest(r, err, errlen) < 0)
		return -1;
	if (o->boot_timeout_ms > 0)
		r->cfg.boot_timeout_ms = o->boot_timeout_ms;
	if (o->test_timeout_ms > 0)
		r->cfg.test_timeout_ms = o->test_timeout_ms;
	if (o->require_baseline)
		r->cfg.rules.baseline.require = true;
	/* --instrument tags every allocator's blocks from the node's boot */
	if (o->instrument && erl_flags_add(&r->cfg.erl_flags, "+Muatags true") < 0) {
		errtext_set(err, errlen, NULL, "out of memory adding --instrument's flag");
		return -1;
	}
	r->rep.n = (size_t)(o->repeat > 0 ? o->repeat : o->exec || o->cluster ? 1 : r->cfg.repeat);
	/* --partitions with MIX_TEST_PARTITION: each partition keeps a baseline of its own */
	if (faithful_baseline_partition(&r->cfg.rules.baseline.path, BASELINE_DEFAULT_PATH,
	                                faithful_partition(o->test_args, o->ntest_args)) < 0) {
		errtext_set(err, errlen, NULL, "out of memory naming the partition's baseline");
		return -1;
	}
	return 0;
}

/* Where the reports go: each inside the project unless --allow-outside, and writable. */
static int check_outputs(struct run *r, char *err, size_t errlen)
{
	const struct run_opts *o = r->opts;
	if (o->junit_path)
		snprintf(r->junit, sizeof(r->junit), "%s", o->junit_path);
	else if (r->cfg.junit[0] == '/')
		snprintf(r->junit, sizeof(r->junit), "%s", r->cfg.junit);
	else
		snprintf(r->junit, sizeof(r->junit), "%s/%s", r->project, r->cfg.junit);
	const struct {
		const char *path, *what;
	} outs[] = {{r->junit, "the JUnit report"},
	            {o->json_path, "--json"},
	            {o->summary_path, "--summary"},
	            {o->html_path, "--html"}};
	for (size_t i = 0; !o->allow_outside && i < sizeof(outs) / sizeof(outs[0]); i++)
		if (outs[i].path &&
		    outpath_check(r->project, outs[i].path, outs[i].what, err, errlen) < 0)
			return -1;
	struct report_out ro = {.summary_path = o->summary_path, .html_path = o->html_path};
	return report_out_check(&ro, err, errlen);
}

static int configure(struct run *r)
{
	const struct run_opts *o = r->opts;
	/* attached, the directory only holds gate.toml and the reports */
	if (discover_project(o->project_dir,
	                     o->attach ? DISCOVER_DIR
	                     : o->exec ? DISCOVER_MIX
	                               : DISCOVER_TESTS,
	                     NULL, r->project, r->err, sizeof(r->err)) < 0 ||
	    load_config(r, r->err, sizeof(r->err)) < 0 ||
	    check_outputs(r, r->err, sizeof(r->err)) < 0)
		return -1;
	/* a rebar3 project runs EUnit and Common Test in a node gate starts (not attached) */
	const char *asked = o->runner ? o->runner : r->cfg.runner;
	bool rebar3 = !o->attach && !o->exec &&
	              (discover_is_rebar3(r->project) ||
	               (strcmp(asked, "auto") != 0 && strcmp(asked, "mix") != 0 &&
	                discover_has_rebar3(r->project)));
	if (!o->exec &&
	    runner_pick(o->runner, r->cfg.runner, rebar3, &r->runner, r->err, sizeof(r->err)) < 0)
		return -1;
	if (rebar3 && runner_check_args(o->test_args, o->ntest_args, r->err, sizeof(r->err)) < 0)
		return -1;
	r->scope = o->cluster ? &cluster_scope : &single_scope;
	r->work = o->exec  ? &exec_mode_workload
	          : rebar3 ? &rebar_mode_workload
	                   : &suite_mode_workload;
	return 0;
}

/* ---- 2. the baseline ---- */

static int read_baseline(struct run *r)
{
	char line[2048];
	r->bl.partition = r->partition; /* a partition's trend reads its own figures */
	r->bl.defer_dirty = true;       /* read while the node boots (node_started) */
	if (baseline_step_read(&r->bl, r->project, &r->cfg.rules.baseline, r->opts->baseline_ref,
	                       r->err, sizeof(r->err)) < 0)
		return -1;
	r->bl.allow_outside = r->opts->allow_outside;
	baseline_step_describe(&r->bl, line, sizeof(line));
	run_progress(r, "%s", line);
	return 0;
}

/* ---- 3. the node ---- */

/* Once the node gate starts runs, while it boots, gate's own slow parts on threads: the
 * JUnit writer's library opens (measured: opened during the before-snapshot, it took 4 ms
 * of the node's CPU from it) and the working tree's state is read (git status, 15-30 ms on
 * an application's tree). */
static void node_started(void *arg)
{
	struct run *r = arg;
	junit_warm();
	baseline_step_dirty_start(&r->bl);
}

static int open_node(struct run *r)
{
	const struct run_opts *o = r->opts;
	bool rebar3 = r->runner.rebar3;
	/* a rebar3 project is compiled by rebar3 itself before its node starts */
	if (rebar3) {
		r->ses.phase = "compiling the project (rebar3 as test compile)";
		run_progress(r, "compiling %s with rebar3 as test compile", r->project);
		if (rebar_build(r->project, o->quiet, &r->erl_paths, r->err, sizeof(r->err)) < 0)
			return -1;
	}
	struct session_opts so = {
	        .quiet = o->quiet,
	        .need_mix = !o->exec && !rebar3,
	        .code_paths = rebar3 ? (const char *const *)r->erl_paths.paths : NULL,
	        .ncode_paths = rebar3 ? r->erl_paths.n : 0,
	        .erl = o->erl,
	        .project_dir = o->attach ? NULL : r->project,
	        .attach = o->attach,
	        .cookie_file = o->cookie_file,
	        .mix_env = r->cfg.mix_env,
	        .erl_flags = r->cfg.erl_flags,
	        .elixir = o->elixir,
	        .mix_test = !o->exec && !o->attach && !rebar3,
	        .distributed = o->distributed,
	        .boot_timeout_ms = r->cfg.boot_timeout_ms,
	        .rpc_timeout_ms = r->cfg.rpc_timeout_ms,
	        .stop_timeout_ms = r->cfg.stop_timeout_ms,
	        /* an attached node may still hold a previous gate's copy waiting for
	         * its purge; a cluster's other nodes are loaded under the compiled names */
	        .fresh_names = o->attach && !o->cluster,
	        .started = node_started,
	        .started_arg = r,
	};
	long long t0 = r->ses.t0_ms;
	session_init(&r->ses, &so);
	if (rebar3) /* the progress lines' clock counts rebar3's compile too */
		r->ses.t0_ms = t0;
	if (session_open(&r->ses, r->err, sizeof(r->err)) < 0 ||
	    (r->scope->open && r->scope->open(r, r->err, sizeof(r->err)) < 0) ||
	    (r->work->prepare && r->work->prepare(r, r->err, sizeof(r->err)) < 0))
		return -1;
	return 0;
}

/* ---- 4. and 6. the snapshots ---- */

static struct probe_snapshot_opts snapshot_opts(const struct run *r, enum probe_mark mark)
{
	/* both snapshots settle the same way (the ports' input buffers released) */
	struct probe_snapshot_opts so = {
	        .gc = true,
	        .deep = true,
	        .mark = mark,
	        /* the heaps the node's system monitor reports (rules/fine.h) */
	        .heap_watch = fine_heap_watch(&r->cfg.rules.fine),
	        .settle_ms = r->cfg.settle_timeout_ms,
	};
	return so;
}

void run_after_early(void *arg)
{
	struct run *r = arg;
	bool repeat = r->rep.n >= 2 && r->work->again;
	if (!r->scope->snapshot_send || repeat || r->opts->sample_ms || r->after_sent)
		return;
	struct probe_snapshot_opts so = snapshot_opts(r, PROBE_MARK_AFTER);
	char ignored[256];
	/* not sent: the after-snapshot asks as usual, and says what is wrong then */
	r->after_sent = r->scope->snapshot_send(r, &so, ignored, sizeof(ignored)) == 0;
}

static int take_snapshot(struct run *r, struct snapshot *out, const char *which,
                         enum probe_mark mark)
{
	struct probe_snapshot_opts so = snapshot_opts(r, mark);
	char phase[64];
	snprintf(phase, sizeof(phase), "collecting garbage for the %s-snapshot", which);
	r->ses.phase = phase;
	run_progress(r, "%s", phase);
	int rc = r->scope->snapshot(r, &so, which, out, r->err, sizeof(r->err));
	r->ses.phase = which;
	return rc;
}

/* ---- 5. the workload, with --sample and --repeat ---- */

/* --sample: the sampler's figures, fetched once the workload is done */
static int fetch_samples(struct run *r)
{
	r->ses.phase = "fetching the samples";
	if (sample_fetch(&r->ses.conn, r->cfg.rpc_timeout_ms, &r->samples, r->err, sizeof(r->err)) <
	    0)
		return -1;
	run_progress(r, "%zu samples taken every %lld ms during the run%s", r->samples.n,
	             (long long)r->samples.interval_ms,
	             r->samples.interval_ms > r->opts->sample_ms
	                     ? " (thinned to stay under the cap)"
	                     : "");
	return 0;
}

static int run_workload(struct run *r)
{
	const struct run_opts *o = r->opts;
	bool repeat = r->rep.n >= 2 && r->work->again;
	if ((o->sample_ms && sample_start(&r->ses.conn, o->sample_ms, r->cfg.rpc_timeout_ms, r->err,
	                                  sizeof(r->err)) < 0) ||
	    (repeat &&
	     repeat_step_mark(&r->ses, r->cfg.rpc_timeout_ms, r->err, sizeof(r->err)) < 0) ||
	    r->work->run(r, r->err, sizeof(r->err)) < 0 ||
	    (repeat &&
	     repeat_step_loop(&r->rep, &r->ses, r->cfg.rpc_timeout_ms, &r->before, &r->tests,
	                      r->work->again, r, r->err, sizeof(r->err)) < 0) ||
	    (o->sample_ms && fetch_samples(r) < 0))
		return -1;
	return 0;
}

/* Steps 2 to 6: the baseline, the node, the snapshots around the workload; the node is
 * told to stop (or left, attached) as soon as the figures are in: it exits while the run is
 * judged and the JUnit file written (conclude waits for it before the summary). */
static int observe(struct run *r)
{
	if (read_baseline(r) < 0 || open_node(r) < 0)
		return -1;
	/* gate's slow parts run on threads while the node works (no fork of ours is under way:
	 * the node runs, the --exec command starts after the before-snapshot): from the node's
	 * start (node_started), or now for an attached node; a JUnit library that cannot be
	 * loaded stops the run before the workload, whose results no report could hold */
	if (r->opts->attach)
		node_started(r);
	if (take_snapshot(r, &r->before, "before", PROBE_MARK_BEFORE) < 0)
		return -1;
	if (r->junit[0] && junit_ready(r->err, sizeof(r->err)) < 0)
		return -1;
	baseline_step_dirty_join(&r->bl); /* before the workload, which may fork (--exec) */
	if (run_workload(r) < 0 || take_snapshot(r, &r->after, "after", PROBE_MARK_AFTER) < 0)
		return -1;
	session_release(&r->ses);
	return 0;
}

/* ---- 7. judge ---- */

static int judge(struct run *r)
{
	const char *what = NULL;
	if (faithful_name_apps(&r->tests, &r->after) < 0)
		what = "naming the umbrella's apps";
	/* --repeat: the rules judge the growth that continued after the warm-up */
	else if (r->rep.n >= 2 && r->work->again &&
	         repeat_step_finish(&r->rep, &r->after, &r->tests) < 0)
		what = "judging the repeated runs";
	if (what) {
		errtext_set(r->err, sizeof(r->err), NULL, "out of memory %s", what);
		return -1;
	}
	return r->scope->judge(r);
}

/* ---- 8. conclude ---- */

/* What a view of the run borrows that is made for it: the baseline's description, the
 * repository's root, a cluster's nodes and every node's findings in one list. */
struct view_store {
	char where[2048];
	char repo_root[PATH_MAX];
	struct report_node *nodes;
	struct findings merged;
};

static void view_store_clear(struct view_store *st)
{
	free(st->nodes);
	findings_clear(&st->merged);
}

/* The suite got far enough to say something of itself (a test, mix test's verdict). */
static bool suite_started(const struct run *r)
{
	return r->judged || r->tests.count || r->tests.suite_ran || r->tests.mix_reported;
}

/* The run as every writer reads it (ci/report/report.h), built once when the run concludes.
 * error: why gate could not run or could not finish (exit 2); once the run was judged, its
 * results are in the view too, else only the tests that ran. A cluster's view has its nodes (the
 * console summary and the JUnit file give each its section) and every node's findings, labelled, in
 * one list (the step summary, the HTML report and the annotations). Returns 0, or -1 when out of
 * memory (said; st is then the caller's to clear). */
static int run_view(struct run *r, const char *error, struct report_data *d, struct view_store *st)
{
	const char *slash = strrchr(r->project, '/');
	bool cluster = r->opts->cluster && r->judged;
	memset(st, 0, sizeof(*st));
	if (r->bl.repo || r->bl.have_base)
		baseline_step_describe(&r->bl, st->where, sizeof(st->where));
	if (faithful_repo_root(r->project, st->repo_root, sizeof(st->repo_root)) < 0)
		snprintf(st->repo_root, sizeof(st->repo_root), "%s", r->project);
	if (cluster) {
		st->nodes = calloc(r->cl.n ? r->cl.n : 1, sizeof(*st->nodes));
		if (!st->nodes || cluster_findings_merge(&r->cl, &st->merged) < 0) {
			gate_error("cannot write the reports: out of memory");
			return -1;
		}
		for (size_t i = 0; i < r->cl.n; i++) {
			const struct cluster_node *nd = &r->cl.nodes[i];
			st->nodes[i] =
			        (struct report_node){.name = nd->name,
			                             .findings = &nd->findings,
			                             .error = nd->error[0] ? nd->error : NULL};
		}
	}
	*d = (struct report_data){
	        .project = slash ? slash + 1 : r->project,
	        .node = r->ses.name[0] ? r->ses.name : NULL,
	        .gate_version = GATE_VERSION,
	        .started = (int64_t)r->started,
	        .before = !r->judged || cluster ? NULL : &r->before,
	        .after = !r->judged || cluster ? NULL : &r->after,
	        .findings = !r->judged ? NULL
	                    : cluster  ? &st->merged
	                               : &r->findings,
	        .tests = suite_started(r) ? &r->tests : NULL,
	        .baseline_where = strncmp(st->where, "baseline: ", 10) == 0 ? st->where + 10 : NULL,
	        .junit_path = r->junit[0] ? r->junit : NULL,
	        .root = r->project,
	        .error = error,
	        .repeat = r->judged && r->rep.judged ? &r->rep.data : NULL,
	        .samples = r->judged && r->samples.n ? &r->samples : NULL,
	        .nodes = cluster ? st->nodes : NULL,
	        .nnodes = cluster ? r->cl.n : 0,
	        .memory_time_s = (double)(r->before.gc_us + r->after.gc_us) / 1e6,
	        .file_root = st->repo_root,
	};
	return 0;
}

/* The step summary, the HTML report and the annotations (gate/run/report_out.c) of the view
 * d, once per run. */
static int write_ci_outputs(struct run *r, struct report_data *d)
{
	struct report_out o = {
	        .summary_path = r->opts->summary_path,
	        .html_path = r->opts->html_path,
	        .repo = r->bl.repo,
	        .notes_ref = r->cfg.rules.baseline.notes_ref,
	        .history_from = r->bl.src.commit[0] ? r->bl.src.commit : NULL,
	        .annotations = r->cfg.annotations,
	        .comment_flag = r->opts->comment_flag,
	        .partition = r->partition,
	};
	char err[1024];
	if (report_out_write(&o, d, err, sizeof(err)) < 0) {
		gate_error("cannot write a report: %s", err);
		return -1;
	}
	return 0;
}

/* The JUnit report of the view d, replaced whole (written again only to add a late error
 * case). Returns -1 when it could not be written: r->junit is then cleared, and the view no
 * longer names it. */
static int write_junit(struct run *r, struct report_data *d)
{
	char jerr[1024];
	if (junit_write(r->junit, d, jerr, sizeof(jerr)) == 0)
		return 0;
	gate_error("cannot write the JUnit report: %s", jerr);
	r->junit[0] = '\0';
	d->junit_path = NULL;
	return -1;
}

/* The verdict is the model's (model/verdict.h), as the summary and every report say it. */
static int exit_code(const struct run *r)
{
	struct verdict_tally vt = model_verdict_tally(&r->findings, &r->tests);
	if (r->scope->tally)
		r->scope->tally(r, &vt);
	return model_verdict(&vt) == GATE_PASSED ? GATE_EXIT_PASS : GATE_EXIT_FAIL;
}

/* What mix test said of itself: why bare `mix test` would be red, said even with -q. */
static void say_mix_result(struct run *r)
{
	if (r->suite_error)
		run_progress(r, "mix test reported: %s", r->suite_error);
	if (r->tests.mix_status != 0) { /* the verdict's reason, not an error of gate's */
		fflush(stdout);
		fprintf(stderr,
		        "gate: mix test failed: bare `mix test` would exit with status %d: %s\n",
		        r->tests.mix_status,
		        r->tests.mix_reason ? r->tests.mix_reason : "it printed no reason");
	}
}

/* --cluster --json: one result with every node (its verdict, findings and snapshots) and
 * every node's findings in one list, labelled; no baseline (a baseline is one node's).
 * Returns 0, or -1 with r->err. */
static int json_cluster_output(struct run *r, int code)
{
	struct findings merged = {0};
	struct run_json_node *nodes = calloc(r->cl.n ? r->cl.n : 1, sizeof(*nodes));
	if (!nodes || cluster_findings_merge(&r->cl, &merged) < 0) {
		free(nodes);
		findings_clear(&merged);
		errtext_set(r->err, sizeof(r->err), NULL, "out of memory writing --json");
		return -1;
	}
	for (size_t i = 0; i < r->cl.n; i++) {
		const struct cluster_node *nd = &r->cl.nodes[i];
		nodes[i] = (struct run_json_node){
		        .name = nd->name,
		        .error = nd->error[0] ? nd->error : NULL,
		        .findings = &nd->findings,
		        .before = nd->have_before ? &nd->before : NULL,
		        .after = nd->have_after ? &nd->after : NULL,
		};
	}
	char repo_root[PATH_MAX] = "";
	if (faithful_repo_root(r->project, repo_root, sizeof(repo_root)) < 0)
		repo_root[0] = '\0';
	struct run_json j = {
	        .gate_version = GATE_VERSION,
	        .project = r->project,
	        .commit = r->bl.head[0] ? r->bl.head : NULL,
	        .passed = code == GATE_EXIT_PASS,
	        .started = (int64_t)r->started,
	        .tests = &r->tests,
	        .findings = &merged,
	        .samples = r->opts->sample_ms ? &r->samples : NULL,
	        .config_digest = r->config_digest,
	        .repo_root = repo_root[0] ? repo_root : NULL,
	        .nodes = nodes,
	        .nnodes = r->cl.n,
	};
	int rc = run_json_write(r->opts->json_path, &j, r->err, sizeof(r->err));
	free(nodes);
	findings_clear(&merged);
	return rc;
}

/* --json (with the baseline this run would commit in it), written while the node halts.
 * Returns 0, or -1 with r->err. */
static int json_output(struct run *r, int code)
{
	const struct run_opts *o = r->opts;
	if (!o->json_path && !o->update_baseline)
		return 0;
	if (o->cluster)
		return r->judged ? json_cluster_output(r, code) : 0;
	char repo_root[PATH_MAX] = "";
	if (faithful_repo_root(r->project, repo_root, sizeof(repo_root)) < 0)
		repo_root[0] = '\0';
	if (baseline_step_make(&r->newbase, &r->bl, &r->after, r->ses.info.elixir,
	                       (int64_t)r->started, (int64_t)r->tests.count) < 0) {
		errtext_set(r->err, sizeof(r->err), NULL, "out of memory building the baseline");
		return -1;
	}
	struct run_json j = {
	        .gate_version = GATE_VERSION,
	        .project = r->project,
	        .commit = r->bl.head[0] ? r->bl.head : NULL,
	        .passed = code == GATE_EXIT_PASS,
	        .started = (int64_t)r->started,
	        .baseline = &r->newbase,
	        .tests = &r->tests,
	        .findings = &r->findings,
	        .before = &r->before,
	        .after = &r->after,
	        .iterations = r->rep.judged ? &r->rep.data : NULL,
	        .samples = o->sample_ms ? &r->samples : NULL,
	        .partition = r->partition,
	        .partitions = r->partitions,
	        .config_digest = r->config_digest,
	        .repo_root = repo_root[0] ? repo_root : NULL,
	};
	if (o->json_path && run_json_write(o->json_path, &j, r->err, sizeof(r->err)) < 0)
		return -1;
	return 0;
}

/* --update-baseline, once the node is gone and the summary printed (only a passing run
 * becomes the baseline, unless --force). Returns 0, or -1 with r->err. */
static int baseline_output(struct run *r, int code)
{
	const struct run_opts *o = r->opts;
	if (!o->update_baseline)
		return 0;
	if (code != GATE_EXIT_PASS && !o->force) {
		fprintf(stderr,
		        "gate: the baseline was not updated: the run failed, and a baseline "
		        "is taken from a passing run only (--force takes it anyway)\n");
		return 0;
	}
	fflush(stdout);
	return baseline_step_update(&r->bl, &r->newbase, &r->cfg.rules.baseline, o->commit,
	                            o->message, NULL, stdout, r->err, sizeof(r->err));
}

/* The verdict, then the reports, each once: the JUnit file first (one that cannot be written
 * ends the run with exit 2 before anything that cannot be undone, the baseline commit), then
 * --json while the node halts, the summary, --update-baseline, then the step summary, the
 * HTML report and the annotations. A late failure (the --json file, a refused commit) is exit 2: it
 * joins the run's results in those reports (the JUnit file replaced with an error case), never a
 * second set of reports. */
static int conclude(struct run *r)
{
	say_mix_result(r);
	r->judged = true;
	int code = exit_code(r);
	struct report_data d;
	struct view_store st;
	if (run_view(r, NULL, &d, &st) < 0) {
		view_store_clear(&st);
		session_end(&r->ses);
		return GATE_EXIT_ERROR;
	}
	bool junit = write_junit(r, &d) == 0;
	/* the --json file while the node halts: it says nothing, so it may */
	int late = junit ? json_output(r, code) : 0;
	/* the node's last output (halt flushes it) before the summary, never inside it */
	session_end(&r->ses);
	fflush(stderr);
	summary_print(stdout, &d, report_out_color(STDOUT_FILENO));
	fflush(stdout);
	if (!junit)
		code = GATE_EXIT_ERROR;
	if (junit && (late < 0 || baseline_output(r, code) < 0)) {
		gate_error("%s", r->err);
		d.error = r->err;
		code = GATE_EXIT_ERROR;
		(void)write_junit(r, &d);
	}
	if (write_ci_outputs(r, &d) < 0)
		code = GATE_EXIT_ERROR;
	view_store_clear(&st);
	return code;
}

/* A step failed: why, the node stopped, the reports say it (exit 2, or 128+signal). */
static int could_not_run(struct run *r)
{
	/* a broken connection usually means the node died: say so, with its exit status */
	session_explain(&r->ses, r->err, sizeof(r->err));
	gate_error("%s", r->err);
	session_end(&r->ses);
	struct report_data d;
	struct view_store st;
	if (run_view(r, r->err, &d, &st) == 0) {
		(void)write_junit(r, &d);
		(void)write_ci_outputs(r, &d);
	}
	view_store_clear(&st);
	return signals_caught ? GATE_EXIT_SIGNAL(signals_caught) : GATE_EXIT_ERROR;
}

static void run_clear(struct run *r)
{
	session_end(&r->ses);
	findings_clear(&r->findings);
	snapshot_clear(&r->before);
	snapshot_clear(&r->after);
	test_run_clear(&r->tests);
	baseline_step_clear(&r->bl);
	baseline_clear(&r->newbase);
	cluster_clear(&r->cl);
	exec_env_clear(&r->env);
	repeat_step_clear(&r->rep);
	sample_series_clear(&r->samples);
	rebar_paths_clear(&r->erl_paths);
	free(r->suite_error);
	config_clear(&r->cfg);
}

int run_main(const struct run_opts *opts)
{
	static struct run r; /* large; one run per process */
	int code;

	memset(&r, 0, sizeof(r));
	r.opts = opts;
	r.started = time(NULL);
	struct session_opts quiet = {.quiet = opts->quiet};
	session_init(&r.ses, &quiet); /* progress lines before the node, and a safe session_end */
	signals_install();

	if (configure(&r) < 0) /* nothing to report on yet: no JUnit file */
		code = gate_error("%s", r.err);
	else if (observe(&r) < 0 || judge(&r) < 0 || confirm_step(&r) < 0)
		code = could_not_run(&r);
	else
		code = conclude(&r);
	run_clear(&r);
	return code;
}
