/* gate/run.c: `gate run`, the pipeline. It reads top-down as the product's steps:
 *   1. start the project's node        2. connect and load the probe
 *   3. GC + before-snapshot            4. mix test inside the node
 *   5. GC + after-snapshot             6. rules
 *   7. JUnit + summary, exit code      (8. baselines: a later step)
 * Whatever happens, the node gate started is stopped and the probe removed before exit.
 */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ci/junit.h"
#include "ci/summary.h"
#include "clock.h"
#include "config.h"
#include "eic.h"
#include "exit.h"
#include "node.h"
#include "probe.h"
#include "rules/growth.h"
#include "session.h"
#include "signals.h"

struct run {
	const struct run_opts *opts;
	struct config cfg;
	char project[PATH_MAX];
	char junit[PATH_MAX * 2];
	struct session ses;
	struct snapshot before, after;
	struct test_run tests;
	struct findings findings;
	char *suite_error;
	time_t started;
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
		snprintf(err, errlen, "project directory %s: %s; pass the Mix project with -C DIR", dir,
			 strerror(errno));
		return -1;
	}
	if (stat(r->project, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "project directory %s is not a directory; pass the Mix project "
			 "with -C DIR", dir);
		return -1;
	}
	snprintf(mixexs, sizeof(mixexs), "%s/mix.exs", r->project);
	if (access(mixexs, R_OK) < 0) {
		snprintf(err, errlen, "%s has no readable mix.exs: gate runs in a Mix project; pass "
			 "its directory with -C DIR", r->project);
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

	if (r->opts->junit_path)
		snprintf(r->junit, sizeof(r->junit), "%s", r->opts->junit_path);
	else if (r->cfg.junit[0] == '/')
		snprintf(r->junit, sizeof(r->junit), "%s", r->cfg.junit);
	else
		snprintf(r->junit, sizeof(r->junit), "%s/%s", r->project, r->cfg.junit);
	return 0;
}

/* Pays ExUnit's one-time costs before the before-snapshot. */
static int prepare_suite(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "preparing the suite";
	return probe_prepare(&r->ses.conn, r->cfg.rpc_timeout_ms, err, errlen) == EIC_OK ? 0 : -1;
}

static int take_snapshot(struct run *r, struct snapshot *out, const char *which,
			 enum probe_mark mark, char *err, size_t errlen)
{
	struct probe_snapshot_opts so = { .gc = true, .deep = true, .mark = mark };
	char phase[64];
	snprintf(phase, sizeof(phase), "collecting garbage for the %s-snapshot", which);
	r->ses.phase = phase;
	long long t = clock_ms();
	if (probe_snapshot(&r->ses.conn, &so, r->cfg.rpc_timeout_ms, out, err, errlen) != EIC_OK) {
		r->ses.phase = which;
		return -1;
	}
	char total[32];
	model_bytes_format(total, sizeof(total), out->mem[MEM_TOTAL]);
	progress(r, "%s-snapshot: total %s, %lld processes (GC %.0f ms, %lld ms in all)", which,
		 total, (long long)out->process_count, (double)out->gc_us / 1000.0,
		 clock_ms() - t);
	r->ses.phase = which;
	return 0;
}

/* Step 4: mix test inside the node; its output streams through the node's stdout. */
static int run_suite(struct run *r, char *err, size_t errlen)
{
	r->ses.phase = "running the tests";
	progress(r, "running mix test%s", r->opts->ntest_args ? " with the given arguments" : "");
	fflush(stdout);
	int rc = probe_run_tests(&r->ses.conn, r->opts->test_args, r->opts->ntest_args,
				 r->cfg.test_timeout_ms, &r->tests, &r->suite_error, err, errlen);
	fflush(stdout);
	if (rc == EIC_TIMEOUT) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "the suite did not finish within node.test_timeout (%d s): %s; "
			 "a test may block forever, or raise the limit in gate.toml or with "
			 "--test-timeout", r->cfg.test_timeout_ms / 1000, why);
	}
	if (rc != EIC_OK)
		return -1;
	progress(r, "mix test finished: %zu tests recorded", r->tests.count);
	return 0;
}

static void write_reports(struct run *r, const char *error)
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
	};
	char jerr[1024];
	if (junit_write(r->junit, &r->findings, &r->tests, &meta, jerr, sizeof(jerr)) < 0) {
		error_msg("cannot write the JUnit report: %s", jerr);
		r->junit[0] = '\0';
	}
	if (error)
		return;
	struct summary_opts so = {
		.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR"),
		.junit_path = r->junit[0] ? r->junit : NULL,
		.node = r->ses.name,
	};
	fflush(stderr);
	summary_print(stdout, &r->findings, &r->tests, &so);
	fflush(stdout);
}

int run_main(const struct run_opts *opts)
{
	static struct run r; /* large; one run per process */
	int code = GATE_EXIT_ERROR;
	bool reports = false;

	memset(&r, 0, sizeof(r));
	r.opts = opts;
	r.started = time(NULL);
	struct session_opts so = { .quiet = opts->quiet, .need_mix = true };
	session_init(&r.ses, &so);
	signals_install();

	if (resolve_paths(&r, r.err, sizeof(r.err)) < 0 ||
	    load_config(&r, r.err, sizeof(r.err)) < 0) {
		error_msg("%s", r.err);
		goto out;
	}
	reports = true; /* from here on a JUnit file is written, with an error case if need be */
	so.project_dir = r.project;
	so.mix_env = r.cfg.mix_env;
	so.erl_flags = r.cfg.erl_flags;
	so.elixir = opts->elixir;
	so.boot_timeout_ms = r.cfg.boot_timeout_ms;
	so.rpc_timeout_ms = r.cfg.rpc_timeout_ms;
	so.stop_timeout_ms = r.cfg.stop_timeout_ms;
	session_init(&r.ses, &so);

	if (session_open(&r.ses, r.err, sizeof(r.err)) < 0 ||
	    prepare_suite(&r, r.err, sizeof(r.err)) < 0 ||
	    take_snapshot(&r, &r.before, "before", PROBE_MARK_BEFORE, r.err, sizeof(r.err)) < 0 ||
	    run_suite(&r, r.err, sizeof(r.err)) < 0 ||
	    take_snapshot(&r, &r.after, "after", PROBE_MARK_AFTER, r.err, sizeof(r.err)) < 0)
		goto fail;

	session_end(&r.ses);

	if (rules_check_all(&r.findings, &r.before, &r.after, &r.tests, &r.cfg.rules) < 0) {
		snprintf(r.err, sizeof(r.err), "out of memory applying the rules");
		goto fail;
	}
	if (r.suite_error)
		progress(&r, "mix test reported: %s", r.suite_error);
	write_reports(&r, NULL);

	struct test_counts tc = test_run_count(&r.tests);
	code = findings_failed(&r.findings) || tc.failed || tc.invalid ? GATE_EXIT_FAIL
								     : GATE_EXIT_PASS;
	goto out;

fail:
	/* a broken connection usually means the node died: say so, with its exit status */
	session_explain(&r.ses, r.err, sizeof(r.err));
	error_msg("%s", r.err);
	session_end(&r.ses);
	if (reports)
		write_reports(&r, r.err);
	if (signals_caught)
		code = GATE_EXIT_SIGNAL(signals_caught);
out:
	session_end(&r.ses);
	findings_clear(&r.findings);
	snapshot_clear(&r.before);
	snapshot_clear(&r.after);
	test_run_clear(&r.tests);
	free(r.suite_error);
	config_clear(&r.cfg);
	return code;
}
