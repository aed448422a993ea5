/* gate/run/run.c: `gate run`, the pipeline. It reads top-down as the product's steps:
 *   1. start the project's node        2. connect and load the probe
 *   3. GC + before-snapshot            4. mix test inside the node
 *   5. GC + after-snapshot             6. rules
 *   7. baseline + trend rules          8. JUnit + summary, exit code
 *   then, on request, the run result as JSON and the baseline update (write or commit).
 * The baseline is read from git before the node starts, so that a bad ref or a corrupt
 * baseline costs no suite run.
 * Whatever happens, the node gate started is stopped and the probe removed before exit.
 */
#include "gate/run/run.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gate/run/baseline_step.h"
#include "ci/atomic.h"
#include "ci/baseline.h"
#include "ci/iterations.h"
#include "ci/junit.h"
#include "ci/outpath.h"
#include "ci/snapshot_json.h"
#include "ci/summary.h"
#include "gate/version.h"
#include "gate/node/clock.h"
#include "gate/run/cluster.h"
#include "gate/config/config.h"
#include "gate/node/eic.h"
#include "gate/run/exec.h"
#include "gate/exit.h"
#include "gate/probe/faithful.h"
#include "gate/node/node.h"
#include "gate/probe/probe.h"
#include "gate/run/repeat.h"
#include "gate/run/report_out.h"
#include "rules/attribution.h"
#include "rules/growth.h"
#include "rules/trend_samples.h"
#include "gate/probe/sample.h"
#include "gate/probe/session.h"
#include "gate/node/signals.h"

struct run {
	const struct run_opts *opts;
	struct config cfg;
	char project[PATH_MAX];
	char junit[PATH_MAX * 2];
	struct session ses;
	struct snapshot before, after;
	struct test_run tests;
	struct findings findings;
	struct baseline_step bl; /* the baseline read before the run */
	struct baseline newbase; /* this run's figures, for --json and --update-baseline */
	char *suite_error;
	time_t started;
	struct cluster cl;            /* --cluster: every node, with its snapshots and findings */
	struct exec_env env;          /* --exec: what the command gets to reach the node */
	struct repeat_step rep;       /* --repeat N (issue 14): runs 1..N, the judged pair */
	struct sample_series samples; /* --sample (issue 14): light snapshots during the run */
	char err[4096];
};

#define progress(r, ...) session_progress(&(r)->ses, __VA_ARGS__)

static void error_msg(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("gate: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int resolve_paths(struct run *r, char *err, size_t errlen)
{
	const char *dir = r->opts->project_dir ? r->opts->project_dir : ".";
	struct stat st;
	char mixexs[PATH_MAX + 16];

	if (!realpath(dir, r->project)) {
		snprintf(err, errlen, "project directory %s: %s; pass the Mix project with -C DIR",
		         dir, strerror(errno));
		return -1;
	}
	if (stat(r->project, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen,
		         "project directory %s is not a directory; pass the Mix project "
		         "with -C DIR",
		         dir);
		return -1;
	}
	snprintf(mixexs, sizeof(mixexs), "%s/mix.exs", r->project);
	/* attached, the directory only holds gate.toml and the reports */
	if (!r->opts->attach && access(mixexs, R_OK) < 0) {
		snprintf(err, errlen,
		         "%s has no readable mix.exs: gate runs in a Mix project; pass "
		         "its directory with -C DIR",
		         r->project);
		return -1;
	}
	return 0;
}

static int load_config(struct run *r, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	if (config_default(&r->cfg) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (r->opts->config_path) {
		snprintf(path, sizeof(path), "%s", r->opts->config_path);
	} else {
		snprintf(path, sizeof(path), "%s/gate.toml", r->project);
		if (access(path, F_OK) < 0)
			path[0] = '\0'; /* no gate.toml: the defaults */
	}
	if (path[0] && config_load(&r->cfg, path, err, errlen) < 0)
		return -1;
	if (r->opts->boot_timeout_ms > 0)
		r->cfg.boot_timeout_ms = r->opts->boot_timeout_ms;
	if (r->opts->test_timeout_ms > 0)
		r->cfg.test_timeout_ms = r->opts->test_timeout_ms;
	r->rep.n = (size_t)(r->opts->repeat > 0                 ? r->opts->repeat
	                    : r->opts->exec || r->opts->cluster ? 1
	                                                        : r->cfg.repeat);

	if (r->opts->junit_path)
		snprintf(r->junit, sizeof(r->junit), "%s", r->opts->junit_path);
	else if (r->cfg.junit[0] == '/')
		snprintf(r->junit, sizeof(r->junit), "%s", r->cfg.junit);
	else
		snprintf(r->junit, sizeof(r->junit), "%s/%s", r->project, r->cfg.junit);
	if (!r->opts->allow_outside &&
	    (outpath_check(r->project, r->junit, "the JUnit report", err, errlen) < 0 ||
	     (r->opts->json_path &&
	      outpath_check(r->project, r->opts->json_path, "--json", err, errlen) < 0) ||
	     (r->opts->summary_path &&
	      outpath_check(r->project, r->opts->summary_path, "--summary", err, errlen) < 0) ||
	     (r->opts->html_path &&
	      outpath_check(r->project, r->opts->html_path, "--html", err, errlen) < 0)))
		return -1;
	return 0;
}

/* Pays ExUnit's one-time costs before the before-snapshot. */
static int prepare_suite(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "preparing the suite";
	if (probe_prepare(&r->ses.conn, r->cfg.rpc_timeout_ms, err, errlen) != EIC_OK)
		return -1;
	/* what mix test does before the suite: the `test` alias's preparation steps, the
	 * applications (the node gate started was booted with --no-start) */
	r->ses.phase = "preparing mix test (alias steps, starting the applications)";
	return faithful_prep(&r->ses.conn, r->opts->test_args, r->opts->ntest_args,
	                     r->ses.node.pid > 0, r->cfg.test_timeout_ms, err, errlen);
}

/* ---- attach mode, --exec and --cluster (issue 7) ---- */

static void cluster_unload_hook(void *arg)
{
	cluster_unload(arg);
}

/* --cluster: the attached node's nodes(), and the probe pushed to them through it. */
static int cluster_step_open(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "pushing the probe to the cluster";
	r->ses.before_unload = cluster_unload_hook;
	r->ses.before_unload_arg = &r->cl;
	if (cluster_discover(&r->cl, &r->ses.conn, r->cfg.rpc_timeout_ms, err, errlen) < 0 ||
	    cluster_push(&r->cl, err, errlen) < 0)
		return -1;
	char names[1024] = "";
	size_t len = 0;
	for (size_t i = 0; i < r->cl.n && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? " " : "",
		                        r->cl.nodes[i].name);
	progress(r, "cluster of %zu node%s through %s: %s", r->cl.n, r->cl.n == 1 ? "" : "s",
	         r->ses.name, names);
	return 0;
}

static int cluster_step_snapshot(struct run *r, const struct probe_snapshot_opts *so,
                                 const char *which, char *err, size_t errlen)
{
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
		progress(r, "%s-snapshot of %s: total %s, %lld processes (GC %.0f ms)", which,
		         nd->name, total, (long long)sn->process_count, (double)sn->gc_us / 1000.0);
	}
	for (size_t i = 0; i < r->cl.n && cluster_lost(&r->cl) > lost; i++)
		if (r->cl.nodes[i].error[0])
			progress(r, "%s", r->cl.nodes[i].error);
	r->ses.phase = which;
	return 0;
}

/* --cluster: the same rules on every node that stayed. */
static int cluster_step_rules(struct run *r)
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
		if (rules_check_all(&nd->findings, &nd->before, &nd->after, &r->tests,
		                    &r->cfg.rules) < 0)
			return -1;
	}
	return 0;
}

/* Step 4 with --exec: the command instead of mix test, with what it needs to reach the
 * node in its environment. */
static int run_exec(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "running the --exec command";
	if (exec_env_add(&r->env, "GATE_NODE", r->ses.name) < 0)
		goto oom;
	if (r->opts->cluster) {
		char names[4096] = "";
		size_t len = 0;
		for (size_t i = 0; i < r->cl.n && len < sizeof(names); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
			                        i ? " " : "", r->cl.nodes[i].name);
		if (exec_env_add(&r->env, "GATE_NODES", names) < 0)
			goto oom;
	}
	if (r->ses.node.pid > 0) {
		/* a node gate started: no epmd, a random cookie: both handed over */
		char port[16];
		snprintf(port, sizeof(port), "%d", r->ses.node.port);
		if (exec_env_add(&r->env, "GATE_NODE_PORT", port) < 0)
			goto oom;
		if (exec_env_cookie_file(&r->env, r->ses.node.cookie, err, errlen) < 0)
			return -1;
	} else if (r->opts->cookie_file) {
		char path[PATH_MAX];
		if (exec_env_add(&r->env, "GATE_COOKIE_FILE",
		                 realpath(r->opts->cookie_file, path) ? path
		                                                      : r->opts->cookie_file) < 0)
			goto oom;
	}
	progress(r, "running %s (node %s)", r->opts->exec, r->ses.name);
	int rc = exec_workload(r->opts->exec, r->project, &r->env, r->cfg.test_timeout_ms,
	                       r->cfg.stop_timeout_ms, &r->ses.conn, &r->tests, err, errlen);
	if (rc == 0)
		progress(r, "--exec command %s: %s",
		         r->tests.tests[r->tests.count - 1].state == TEST_PASSED ? "passed"
		                                                                 : "failed",
		         r->tests.tests[r->tests.count - 1].message
		                 ? r->tests.tests[r->tests.count - 1].message
		                 : "exited with status 0");
	exec_env_clear(&r->env);
	return rc;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int take_snapshot(struct run *r, struct snapshot *out, const char *which,
                         enum probe_mark mark, char *err, size_t errlen)
{
	struct probe_snapshot_opts so = {.gc = true, .deep = true, .mark = mark};
	char phase[64];
	snprintf(phase, sizeof(phase), "collecting garbage for the %s-snapshot", which);
	r->ses.phase = phase;
	progress(r, "%s", phase);
	long long t = clock_ms();
	if (r->opts->cluster)
		return cluster_step_snapshot(r, &so, which, err, errlen);
	if (probe_snapshot(&r->ses.conn, &so, r->cfg.rpc_timeout_ms, out, err, errlen) != EIC_OK) {
		r->ses.phase = which;
		return -1;
	}
	char total[32];
	model_bytes_format(total, sizeof(total), out->mem[MEM_TOTAL]);
	progress(r, "%s-snapshot: total %s, %lld processes (GC %.0f ms, %lld ms in all)", which,
	         total, (long long)out->process_count, (double)out->gc_us / 1000.0, clock_ms() - t);
	r->ses.phase = which;
	return 0;
}

/* Step 4: mix test inside the node; its output streams through the node's stdout. */
static int run_suite(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "running the tests";
	progress(r, "running mix test%s", r->opts->ntest_args ? " with the given arguments" : "");
	long long t0 = clock_ms();
	fflush(stdout);
	/* an attached node's stdout is its own console: have the suite's output sent here */
	r->ses.conn.fetch_stdout = r->opts->attach != NULL;
	enum attribution_mode mode = r->opts->no_attribution ? ATTRIBUTION_OFF
	                             : r->opts->per_test || r->cfg.rules.attribution.per_test
	                                     ? ATTRIBUTION_TEST
	                                     : ATTRIBUTION_MODULE;
	int rc = probe_run_tests(&r->ses.conn, r->opts->test_args, r->opts->ntest_args, mode,
	                         r->ses.node.pid > 0, r->cfg.test_timeout_ms, &r->tests,
	                         &r->suite_error, err, errlen);
	r->ses.conn.fetch_stdout = false;
	fflush(stdout);
	if (rc == EIC_TIMEOUT) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen,
		         "the suite did not finish within node.test_timeout (%d s): %s; "
		         "a test may block forever, or raise the limit in gate.toml or with "
		         "--test-timeout",
		         r->cfg.test_timeout_ms / 1000, why);
	}
	if (rc != EIC_OK)
		return -1;
	/* nothing is dropped silently: more tests than gate records is "could not run" */
	if (r->tests.tests_dropped > 0) {
		snprintf(err, errlen,
		         "the suite ran %lld tests, more than gate records (its cap is "
		         "%lld tests per run); %lld were not recorded, so gate cannot give a "
		         "verdict "
		         "on them: split the suite (e.g. mix test --partitions N with "
		         "MIX_TEST_PARTITION, one gate run per partition)",
		         (long long)(r->tests.count + (size_t)r->tests.tests_dropped),
		         (long long)r->tests.test_cap, (long long)r->tests.tests_dropped);
		return -1;
	}
	/* mix test failed before any suite ran (a test file that does not compile, a missing
	 * test_helper.exs, a Mix error): the suite could not run at all */
	if (r->tests.mix_reported && !r->tests.suite_ran && r->tests.mix_status != 0) {
		snprintf(err, errlen,
		         "mix test could not run the suite (bare `mix test` would exit "
		         "with status %d): %s",
		         r->tests.mix_status,
		         r->tests.mix_reason ? r->tests.mix_reason : "it gave no reason");
		r->tests.mix_explained = true; /* the report's gate.run case says it */
		return -1;
	}
	if (r->tests.attribution_error && r->tests.mix_reported)
		progress(r,
		         "gate's formatter ran as --formatter Gate.Formatter --formatter "
		         "ExUnit.CLIFormatter (ExUnit.EventManager could not be hooked: %s), in "
		         "place "
		         "of the formatters the project configured",
		         r->tests.attribution_error);
	if (r->tests.attribution != ATTRIBUTION_OFF && !r->tests.attribution_sync)
		progress(r,
		         "attribution is approximate: ExUnit.EventManager could not be hooked "
		         "(%s), so the figures were taken as ExUnit's events reached gate's "
		         "formatter, "
		         "a little after each module's or test's edge",
		         r->tests.attribution_error ? r->tests.attribution_error
		                                    : "no reason given");
	progress(r, "mix test finished in %.1f s: %zu tests recorded, %s",
	         (double)(clock_ms() - t0) / 1000.0, r->tests.count,
	         r->tests.attribution == ATTRIBUTION_TEST ? "growth measured per test and module"
	         : r->tests.attribution == ATTRIBUTION_MODULE ? "growth measured per module"
	                                                      : "no attribution");
	return 0;
}

/* ---- --repeat and --sample (issue 14): the logic is in gate/repeat.c and gate/sample.c ---- */

/* --repeat: runs 2..N, each on a clean slate of results */
static int suite_again(void *arg, char *err, size_t errlen)
{
	struct run *r = arg;
	free(r->suite_error);
	r->suite_error = NULL;
	return run_suite(r, err, errlen);
}

/* --sample: the sampler's figures, fetched once the workload is done */
static int sample_stage_fetch(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "fetching the samples";
	if (sample_fetch(&r->ses.conn, r->cfg.rpc_timeout_ms, &r->samples, err, errlen) < 0)
		return -1;
	progress(r, "%zu samples taken every %lld ms during the run%s", r->samples.n,
	         (long long)r->samples.interval_ms,
	         r->samples.interval_ms > r->opts->sample_ms ? " (thinned to stay under the cap)"
	                                                     : "");
	return 0;
}

/* The step summary, the HTML report and the annotations (gate/report_out.c). */
static int write_ci_outputs(struct run *r, const char *error)
{
	char where[2048] = "";
	const char *slash = strrchr(r->project, '/');
	if (r->bl.repo || r->bl.have_base)
		baseline_step_describe(&r->bl, where, sizeof(where));
	/* a cluster: every node's findings, labelled, in the one list these reports know */
	struct findings merged = {0};
	bool cluster = r->opts->cluster && !error;
	if (cluster && cluster_findings_merge(&r->cl, &merged) < 0) {
		findings_clear(&merged);
		error_msg("cannot write a report: out of memory");
		return -1;
	}
	struct report_data d = {
	        .project = slash ? slash + 1 : r->project,
	        .node = r->ses.name[0] ? r->ses.name : NULL,
	        .gate_version = GATE_VERSION,
	        .started = (int64_t)r->started,
	        .before = error || cluster ? NULL : &r->before,
	        .after = error || cluster ? NULL : &r->after,
	        .findings = error     ? NULL
	                    : cluster ? &merged
	                              : &r->findings,
	        .tests = error ? NULL : &r->tests,
	        .baseline_where = strncmp(where, "baseline: ", 10) == 0 ? where + 10 : NULL,
	        .junit_path = r->junit[0] ? r->junit : NULL,
	        .root = r->project,
	        .error = error,
	        .repeat = !error && r->rep.judged ? &r->rep.data : NULL,
	        .samples = !error && r->samples.n ? &r->samples : NULL,
	};
	struct report_out o = {
	        .summary_path = r->opts->summary_path,
	        .html_path = r->opts->html_path,
	        .repo = r->bl.repo,
	        .notes_ref = r->cfg.rules.baseline.notes_ref,
	        .history_from = r->bl.src.commit[0] ? r->bl.src.commit : NULL,
	        .annotations = r->cfg.annotations,
	        .comment_flag = r->opts->comment_flag,
	};
	char err[1024];
	int rc = report_out_write(&o, &d, err, sizeof(err));
	findings_clear(&merged);
	if (rc < 0) {
		error_msg("cannot write a report: %s", err);
		return -1;
	}
	return 0;
}

/* Returns -1 when the JUnit report could not be written (the summary is printed anyway). */
static int write_reports(struct run *r, const char *error)
{
	char host[256] = "localhost";
	gethostname(host, sizeof(host) - 1);
	const char *slash = strrchr(r->project, '/');
	struct junit_meta meta = {
	        .hostname = host,
	        .timestamp = (int64_t)r->started,
	        .project = slash ? slash + 1 : r->project,
	        .node = r->ses.name[0] ? r->ses.name : NULL,
	        .memory_time_s = (double)(r->before.gc_us + r->after.gc_us) / 1e6,
	        .error = error,
	        .repeat = !error && r->rep.judged ? &r->rep.data : NULL,
	};
	char repo_root[PATH_MAX];
	if (faithful_repo_root(r->project, repo_root, sizeof(repo_root)) == 0)
		meta.file_root = repo_root;
	else
		meta.file_root = r->project;
	struct junit_node jn[r->cl.n ? r->cl.n : 1];
	struct summary_node sn[r->cl.n ? r->cl.n : 1];
	for (size_t i = 0; r->opts->cluster && i < r->cl.n; i++) {
		const struct cluster_node *nd = &r->cl.nodes[i];
		jn[i] = (struct junit_node){nd->name, &nd->findings,
		                            nd->error[0] ? nd->error : NULL};
		sn[i] = (struct summary_node){nd->name, &nd->findings, jn[i].error};
	}
	if (r->opts->cluster && !error) {
		meta.nodes = jn;
		meta.nnodes = r->cl.n;
	}
	char jerr[1024];
	int rc = 0;
	if (junit_write(r->junit, &r->findings, &r->tests, &meta, jerr, sizeof(jerr)) < 0) {
		error_msg("cannot write the JUnit report: %s", jerr);
		r->junit[0] = '\0';
		rc = -1;
	}
	if (error) {
		int w = write_ci_outputs(r, error);
		return rc < 0 ? rc : w;
	}
	struct summary_opts so = {
	        .color = report_out_color(STDOUT_FILENO),
	        .junit_path = r->junit[0] ? r->junit : NULL,
	        .node = r->ses.name,
	};
	fflush(stderr);
	if (r->rep.judged)
		iterations_print(stdout, &r->rep.data, so.color);
	if (r->opts->cluster)
		summary_print_cluster(stdout, sn, r->cl.n, &r->tests, &so);
	else
		summary_print(stdout, &r->findings, &r->tests, &so);
	fflush(stdout);
	int w = write_ci_outputs(r, NULL);
	return rc < 0 ? rc : w;
}

/* --json: the run result; its "baseline" object is what `gate baseline update --from` reads. */
static int write_json(struct run *r, int code, char *err, size_t errlen)
{
	char *btext = NULL, *text = NULL;
	json_error_t jerr;
	int rc = -1;
	json_t *root = json_object(), *findings = json_array(), *tests = json_object();
	struct test_counts tc = test_run_count(&r->tests);

	if (!root || !findings || !tests)
		goto oom;
	if (baseline_format(&btext, NULL, &r->newbase, err, errlen) != BASELINE_OK)
		goto out;
	json_t *base = json_loads(btext, 0, &jerr);
	if (!base)
		goto oom;
	json_object_set_new(root, "baseline", base);
	json_object_set_new(root, "format", json_string("gate.run/1"));
	json_object_set_new(root, "gate", json_string(GATE_VERSION));
	json_object_set_new(root, "project", json_string(r->project));
	json_object_set_new(root, "commit", r->bl.head[0] ? json_string(r->bl.head) : json_null());
	json_object_set_new(root, "verdict",
	                    json_string(code == GATE_EXIT_PASS ? "passed" : "failed"));
	json_object_set_new(root, "started", json_integer((json_int_t)r->started));
	json_object_set_new(tests, "total", json_integer((json_int_t)tc.total));
	json_object_set_new(tests, "passed", json_integer((json_int_t)tc.passed));
	json_object_set_new(tests, "failed", json_integer((json_int_t)tc.failed));
	json_object_set_new(tests, "skipped", json_integer((json_int_t)tc.skipped));
	json_object_set_new(tests, "invalid", json_integer((json_int_t)tc.invalid));
	json_object_set_new(root, "tests", tests);
	tests = NULL;
	for (size_t i = 0; i < r->findings.count; i++) {
		const struct finding *f = &r->findings.items[i];
		json_t *o = json_pack("{s:s?, s:s?, s:s, s:I, s:I, s:I, s:I, s:f, s:s?}", "rule",
		                      f->rule, "subject", f->subject, "verdict",
		                      verdict_name(f->verdict), "before", (json_int_t)f->before,
		                      "after", (json_int_t)f->after, "delta", (json_int_t)f->delta,
		                      "floor", (json_int_t)f->floor, "max_pct", f->max_pct,
		                      "message", f->message);
		if (!o || json_array_append_new(findings, o) < 0)
			goto oom;
	}
	json_object_set_new(root, "findings", findings);
	findings = NULL;
	json_object_set_new(root, "before", snapshot_json(&r->before));
	json_object_set_new(root, "after", snapshot_json(&r->after));
	if ((r->rep.judged &&
	     json_object_set_new(root, "iterations", iterations_json(&r->rep.data)) < 0) ||
	    (r->opts->sample_ms &&
	     json_object_set_new(root, "samples", samples_json(&r->samples)) < 0))
		goto oom;
	text = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
	if (!text)
		goto oom;
	size_t len = strlen(text);
	char *nl = realloc(text, len + 2);
	if (!nl)
		goto oom;
	text = nl;
	text[len] = '\n';
	text[len + 1] = '\0';
	if (atomic_file_replace(r->opts->json_path, text, len + 1, err, errlen) < 0)
		goto out;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "--json %s: out of memory", r->opts->json_path);
out:
	free(btext);
	free(text);
	json_decref(tests);
	json_decref(findings);
	json_decref(root);
	return rc;
}

/* --update-baseline: only a passing run becomes the baseline, unless --force. */
static int update_baseline(struct run *r, int code, char *err, size_t errlen)
{
	if (code != GATE_EXIT_PASS && !r->opts->force) {
		fprintf(stderr,
		        "gate: the baseline was not updated: the run failed, and a baseline "
		        "is taken from a passing run only (--force takes it anyway)\n");
		return 0;
	}
	fflush(stdout);
	return baseline_step_update(&r->bl, &r->newbase, &r->cfg.rules.baseline, r->opts->commit,
	                            r->opts->message, NULL, stdout, err, errlen);
}

int run_main(const struct run_opts *opts)
{
	static struct run r; /* large; one run per process */
	int code = GATE_EXIT_ERROR;
	bool reports = false;

	memset(&r, 0, sizeof(r));
	r.opts = opts;
	r.started = time(NULL);
	struct session_opts so = {.quiet = opts->quiet, .need_mix = !opts->exec};
	session_init(&r.ses, &so);
	signals_install();

	struct report_out ro = {.summary_path = opts->summary_path, .html_path = opts->html_path};
	if (resolve_paths(&r, r.err, sizeof(r.err)) < 0 ||
	    load_config(&r, r.err, sizeof(r.err)) < 0 ||
	    report_out_check(&ro, r.err, sizeof(r.err)) < 0) {
		error_msg("%s", r.err);
		goto out;
	}
	reports = true; /* from here on a JUnit file is written, with an error case if need be */
	/* --partitions with MIX_TEST_PARTITION: each partition keeps a baseline of its own */
	if (faithful_baseline_partition(&r.cfg.rules.baseline.path, BASELINE_DEFAULT_PATH,
	                                faithful_partition(opts->test_args, opts->ntest_args)) <
	    0) {
		snprintf(r.err, sizeof(r.err), "out of memory");
		goto fail;
	}
	if (opts->require_baseline)
		r.cfg.rules.baseline.require = true;
	if (baseline_step_read(&r.bl, r.project, &r.cfg.rules.baseline, opts->baseline_ref, r.err,
	                       sizeof(r.err)) < 0)
		goto fail;
	r.bl.allow_outside = opts->allow_outside;
	{
		char line[2048];
		baseline_step_describe(&r.bl, line, sizeof(line));
		progress(&r, "%s", line);
	}
	so.project_dir = opts->attach ? NULL : r.project;
	so.attach = opts->attach;
	so.cookie_file = opts->cookie_file;
	so.mix_env = r.cfg.mix_env;
	so.erl_flags = r.cfg.erl_flags;
	so.elixir = opts->elixir;
	so.mix_test = !opts->exec && !opts->attach;
	so.boot_timeout_ms = r.cfg.boot_timeout_ms;
	so.rpc_timeout_ms = r.cfg.rpc_timeout_ms;
	so.stop_timeout_ms = r.cfg.stop_timeout_ms;
	session_init(&r.ses, &so);

	if (session_open(&r.ses, r.err, sizeof(r.err)) < 0 ||
	    (opts->cluster && cluster_step_open(&r, r.err, sizeof(r.err)) < 0) ||
	    (!opts->exec && prepare_suite(&r, r.err, sizeof(r.err)) < 0) ||
	    take_snapshot(&r, &r.before, "before", PROBE_MARK_BEFORE, r.err, sizeof(r.err)) < 0 ||
	    (opts->sample_ms && sample_start(&r.ses.conn, opts->sample_ms, r.cfg.rpc_timeout_ms,
	                                     r.err, sizeof(r.err)) < 0) ||
	    (r.rep.n >= 2 &&
	     repeat_step_mark(&r.ses, r.cfg.rpc_timeout_ms, r.err, sizeof(r.err)) < 0) ||
	    (opts->exec ? run_exec(&r, r.err, sizeof(r.err))
	                : run_suite(&r, r.err, sizeof(r.err))) < 0 ||
	    (r.rep.n >= 2 &&
	     repeat_step_loop(&r.rep, &r.ses, r.cfg.rpc_timeout_ms, &r.before, &r.tests,
	                      suite_again, &r, r.err, sizeof(r.err)) < 0) ||
	    (opts->sample_ms && sample_stage_fetch(&r, r.err, sizeof(r.err)) < 0) ||
	    take_snapshot(&r, &r.after, "after", PROBE_MARK_AFTER, r.err, sizeof(r.err)) < 0)
		goto fail;

	session_end(&r.ses);

	if (faithful_name_apps(&r.tests, &r.after) < 0) {
		snprintf(r.err, sizeof(r.err), "out of memory naming the umbrella's apps");
		goto fail;
	}
	/* --repeat: the rules judge the growth that continued after the warm-up (rules/repeat.h) */
	if (r.rep.n >= 2 && repeat_step_finish(&r.rep, &r.after, &r.tests) < 0) {
		snprintf(r.err, sizeof(r.err), "out of memory judging the repeated runs");
		goto fail;
	}
	const struct snapshot *jb = r.rep.judged ? &r.rep.judged_before : &r.before;
	const struct snapshot *ja = r.rep.judged ? &r.rep.judged_after : &r.after;
	if (opts->cluster ? cluster_step_rules(&r) < 0
	                  : rules_check_all(&r.findings, jb, ja, &r.tests, &r.cfg.rules) < 0 ||
	                            repeat_annotate(&r.findings, &r.rep.data) < 0 ||
	                            trend_samples_check(&r.findings, &r.samples,
	                                                &r.cfg.rules.growth) < 0) {
		snprintf(r.err, sizeof(r.err), "out of memory applying the rules");
		goto fail;
	}
	if (!opts->cluster && /* a baseline is one node's: cluster runs have none */
	    baseline_step_check(&r.findings, &r.bl, &r.after, &r.cfg.rules.baseline) < 0) {
		snprintf(r.err, sizeof(r.err), "out of memory applying the baseline rules");
		goto fail;
	}
	/* the culprits go into the failing findings' messages, so before any report */
	if (attribution_annotate(&r.findings, jb, ja, &r.tests) < 0) {
		snprintf(r.err, sizeof(r.err), "out of memory naming the culprits");
		goto fail;
	}
	/* issue 19: the tests' own limits (a tag that does not parse is exit 2, naming the test),
	 * severity (warnings never fail), and each finding's culprit file and line */
	{
		int trc = tags_check(&r.findings, &r.tests, &r.cfg.rules.severity, r.err,
		                     sizeof(r.err));
		if (trc == -2)
			goto fail;
		if (trc < 0 ||
		    severity_apply(&r.findings, &r.cfg.rules.severity, opts->warn_only) < 0 ||
		    tags_locate(&r.findings, &r.tests) < 0) {
			snprintf(r.err, sizeof(r.err),
			         "out of memory applying the tests' gate tags");
			goto fail;
		}
	}
	if (r.suite_error)
		progress(&r, "mix test reported: %s", r.suite_error);
	if (r.tests.mix_status != 0) { /* said even with -q: it is the verdict's reason */
		fflush(stdout);
		fprintf(stderr,
		        "gate: mix test failed: bare `mix test` would exit with status %d: "
		        "%s\n",
		        r.tests.mix_status,
		        r.tests.mix_reason ? r.tests.mix_reason : "it printed no reason");
	}
	int reports_rc = write_reports(&r, NULL);

	/* the verdict is the model's (rules/model.h), as the summary and every report say it */
	struct verdict_tally vt = model_verdict_tally(&r.findings, &r.tests);
	for (size_t i = 0; opts->cluster && i < r.cl.n; i++) { /* a node lost fails the gate */
		vt.rules += findings_failed(&r.cl.nodes[i].findings);
		vt.nodes_lost += r.cl.nodes[i].error[0] != '\0';
	}
	code = model_verdict(&vt) == GATE_PASSED ? GATE_EXIT_PASS : GATE_EXIT_FAIL;
	if (reports_rc < 0) { /* CI would read no report, or an old one: "could not run" */
		code = GATE_EXIT_ERROR;
		goto out;
	}
	if (opts->json_path || opts->update_baseline) {
		if (baseline_step_make(&r.newbase, &r.bl, &r.after, r.ses.info.elixir,
		                       (int64_t)r.started, (int64_t)r.tests.count) < 0) {
			error_msg("out of memory building the baseline");
			code = GATE_EXIT_ERROR;
			goto out;
		}
		if ((opts->json_path && write_json(&r, code, r.err, sizeof(r.err)) < 0) ||
		    (opts->update_baseline &&
		     update_baseline(&r, code, r.err, sizeof(r.err)) < 0)) {
			error_msg("%s", r.err);
			code = GATE_EXIT_ERROR;
			write_reports(&r, r.err); /* the report says why gate exits 2 */
		}
	}
	goto out;

fail:
	/* a broken connection usually means the node died: say so, with its exit status */
	session_explain(&r.ses, r.err, sizeof(r.err));
	error_msg("%s", r.err);
	session_end(&r.ses);
	if (reports)
		(void)write_reports(&r, r.err); /* exit 2 either way */
	if (signals_caught)
		code = GATE_EXIT_SIGNAL(signals_caught);
out:
	session_end(&r.ses);
	findings_clear(&r.findings);
	snapshot_clear(&r.before);
	snapshot_clear(&r.after);
	test_run_clear(&r.tests);
	baseline_step_clear(&r.bl);
	baseline_clear(&r.newbase);
	cluster_clear(&r.cl);
	exec_env_clear(&r.env);
	repeat_step_clear(&r.rep);
	sample_series_clear(&r.samples);
	free(r.suite_error);
	config_clear(&r.cfg);
	return code;
}
