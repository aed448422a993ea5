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
#include "signals.h"

struct run {
	const struct run_opts *opts;
	struct config cfg;
	char project[PATH_MAX];
	char junit[PATH_MAX * 2];
	struct node node;
	struct eic conn;
	bool probe_loaded;
	struct probe_info info;
	struct snapshot before, after;
	struct test_run tests;
	struct findings findings;
	char *suite_error;
	const char *phase; /* for messages: "booting the node", "running the tests", ... */
	long long t0_ms;
	time_t started;
	char err[4096];
};

static void progress(struct run *r, const char *fmt, ...)
{
	if (r->opts->quiet)
		return;
	va_list ap;
	char line[512];
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "gate: [%5.1fs] %s\n", (double)(clock_ms() - r->t0_ms) / 1000.0, line);
}

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

/* The eic poll callback: a signal or the node process ending stops every wait at once. */
static int run_poll(void *arg, char *err, size_t errlen)
{
	struct run *r = arg;
	if (signals_caught) {
		snprintf(err, errlen, "interrupted by %s while %s", strsignal(signals_caught), r->phase);
		return 1;
	}
	if (r->node.pid > 0 && node_exited(&r->node)) {
		char how[128];
		node_exit_describe(&r->node, how, sizeof(how));
		snprintf(err, errlen, "node %s %s while %s; its output above says why", r->node.name,
			 how, r->phase);
		return 1;
	}
	return 0;
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

/* Step 1: start the node and wait until it answers on the distribution port. */
static int boot_node(struct run *r, char *err, size_t errlen)
{
	struct node_opts no = {
		.project_dir = r->project,
		.mix_env = r->cfg.mix_env,
		.erl_flags = r->cfg.erl_flags,
		.elixir = r->opts->elixir,
	};
	r->phase = "booting the node";
	if (node_start(&r->node, &no, err, errlen) < 0)
		return -1;
	progress(r, "booting node %s in %s (MIX_ENV=%s, compiling if needed)", r->node.name,
		 r->project, r->cfg.mix_env);

	char alive[96];
	snprintf(alive, sizeof(alive), "%s_c", r->node.alive);
	long long deadline = clock_ms() + r->cfg.boot_timeout_ms;
	for (;;) {
		if (run_poll(r, err, errlen))
			return -1;
		char cerr[512];
		int rc = eic_connect_port(&r->conn, r->node.name, alive, r->node.port, r->node.cookie,
					  250, cerr, sizeof(cerr));
		if (rc == EIC_OK)
			break;
		if (clock_ms() >= deadline) {
			snprintf(err, errlen, "node %s did not come up within %d s (last attempt: %s); "
				 "raise node.boot_timeout in gate.toml or --boot-timeout if the project "
				 "takes longer to compile and start", r->node.name,
				 r->cfg.boot_timeout_ms / 1000, cerr);
			return -1;
		}
		usleep(20000); /* a refused connect costs microseconds: poll often */
	}
	progress(r, "node %s is up", r->node.name);
	return 0;
}

/* Step 2: load the probe and check that tests can run in this node. */
static int attach_probe(struct run *r, char *err, size_t errlen)
{
	int rpc = r->cfg.rpc_timeout_ms;
	r->phase = "loading the probe";
	if (probe_load(&r->conn, rpc, err, errlen) != EIC_OK)
		return -1;
	r->probe_loaded = true;
	if (probe_hello(&r->conn, rpc, &r->info, err, errlen) != EIC_OK)
		return -1;
	if (!r->info.mix_project) {
		snprintf(err, errlen, "node %s has no Mix project loaded, so mix test cannot run in it",
			 r->node.name);
		return -1;
	}
	r->phase = "preparing the suite";
	if (probe_prepare(&r->conn, rpc, err, errlen) != EIC_OK)
		return -1;
	return 0;
}

static int take_snapshot(struct run *r, struct snapshot *out, const char *which,
			 enum probe_mark mark, char *err, size_t errlen)
{
	struct probe_snapshot_opts so = { .gc = true, .deep = true, .mark = mark };
	char phase[64];
	snprintf(phase, sizeof(phase), "collecting garbage for the %s-snapshot", which);
	r->phase = phase;
	long long t = clock_ms();
	if (probe_snapshot(&r->conn, &so, r->cfg.rpc_timeout_ms, out, err, errlen) != EIC_OK) {
		r->phase = which;
		return -1;
	}
	char total[32];
	model_bytes_format(total, sizeof(total), out->mem[MEM_TOTAL]);
	progress(r, "%s-snapshot: total %s, %lld processes (GC %.0f ms, %lld ms in all)", which,
		 total, (long long)out->process_count, (double)out->gc_us / 1000.0,
		 clock_ms() - t);
	r->phase = which;
	return 0;
}

/* Step 4: mix test inside the node; its output streams through the node's stdout. */
static int run_suite(struct run *r, char *err, size_t errlen)
{
	r->phase = "running the tests";
	progress(r, "running mix test%s", r->opts->ntest_args ? " with the given arguments" : "");
	fflush(stdout);
	int rc = probe_run_tests(&r->conn, r->opts->test_args, r->opts->ntest_args,
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

/* Stops what this run started. Safe at any point. */
static void teardown(struct run *r)
{
	int saved = signals_caught;
	signals_caught = 0; /* so the unload RPCs are not cancelled by the flag */
	if (r->probe_loaded && r->conn.fd >= 0 && !node_exited(&r->node)) {
		r->conn.poll = NULL;
		probe_unload(&r->conn, 2000);
	}
	r->probe_loaded = false;
	int stop_ms = r->cfg.stop_timeout_ms > 0 ? r->cfg.stop_timeout_ms : 10000;
	if (r->node.pid > 0) {
		progress(r, "stopping node %s", r->node.name);
		/* graceful first: the VM exits the way `mix test` ends it, erlang:halt/2 with its
		 * output flushed (init:stop/0 measured 1.2 s slower, stopping every application
		 * of a node that is about to go away); then SIGTERM, then SIGKILL */
		if (r->conn.fd >= 0 && !node_exited(&r->node)) {
			ei_x_buff args;
			struct term *root;
			const struct term *reply;
			char ignored[256];
			r->conn.poll = NULL;
			ei_x_new(&args);
			ei_x_encode_list_header(&args, 2);
			ei_x_encode_long(&args, 0);
			ei_x_encode_list_header(&args, 1);
			ei_x_encode_tuple_header(&args, 2);
			ei_x_encode_atom(&args, "flush");
			ei_x_encode_atom(&args, "true");
			ei_x_encode_empty_list(&args);
			ei_x_encode_empty_list(&args);
			/* no reply comes: the VM is gone before it could send one */
			eic_rpc(&r->conn, "erlang", "halt", &args, 1000, &root, &reply, ignored,
				sizeof(ignored));
			term_free(root);
			ei_x_free(&args);
			node_wait_exit(&r->node, stop_ms);
		}
	}
	bool connected = r->conn.fd >= 0;
	eic_close(&r->conn);
	/* A node that never answered is still booting: its init process does not act on
	 * SIGTERM before the boot ends, which mix run --no-halt never does. A short grace then. */
	if (r->node.pid > 0)
		node_stop(&r->node, connected ? stop_ms : (stop_ms < 1000 ? stop_ms : 1000));
	signals_caught = saved;
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
		.node = r->node.name[0] ? r->node.name : NULL,
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
		.node = r->node.name,
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
	r.t0_ms = clock_ms();
	r.started = time(NULL);
	r.phase = "starting";
	eic_init(&r.conn);
	r.conn.poll = run_poll;
	r.conn.poll_arg = &r;
	signals_install();

	if (resolve_paths(&r, r.err, sizeof(r.err)) < 0 ||
	    load_config(&r, r.err, sizeof(r.err)) < 0) {
		error_msg("%s", r.err);
		goto out;
	}
	reports = true; /* from here on a JUnit file is written, with an error case if need be */

	if (boot_node(&r, r.err, sizeof(r.err)) < 0 || attach_probe(&r, r.err, sizeof(r.err)) < 0 ||
	    take_snapshot(&r, &r.before, "before", PROBE_MARK_BEFORE, r.err, sizeof(r.err)) < 0 ||
	    run_suite(&r, r.err, sizeof(r.err)) < 0 ||
	    take_snapshot(&r, &r.after, "after", PROBE_MARK_AFTER, r.err, sizeof(r.err)) < 0)
		goto fail;

	teardown(&r);

	if (growth_check(&r.findings, &r.before, &r.after, &r.cfg.growth) < 0) {
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
	if (r.node.pid > 0 && !signals_caught && !r.node.exited && node_wait_exit(&r.node, 2000)) {
		char how[128], was[2048];
		node_exit_describe(&r.node, how, sizeof(how));
		snprintf(was, sizeof(was), "%s", r.err);
		snprintf(r.err, sizeof(r.err), "node %s %s while %s; its output above says why "
			 "(gate saw: %s)", r.node.name, how, r.phase, was);
	}
	error_msg("%s", r.err);
	teardown(&r);
	if (reports)
		write_reports(&r, r.err);
	if (signals_caught)
		code = GATE_EXIT_SIGNAL(signals_caught);
out:
	teardown(&r);
	findings_clear(&r.findings);
	snapshot_clear(&r.before);
	snapshot_clear(&r.after);
	test_run_clear(&r.tests);
	free(r.suite_error);
	config_clear(&r.cfg);
	memset(r.node.cookie, 0, sizeof(r.node.cookie));
	return code;
}
