/* gate/probe/session.c: a session with one node: start or attach, connect, probe, teardown. */
#include "gate/probe/session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/errtext.h"
#include "base/readfile.h"
#include "gate/node/clock.h"
#include "gate/node/node_tail.h"
#include "gate/node/signals.h"
#include "gate/probe/boot_modules.h"
#include "gate/probe/otp.h"

void session_init(struct session *s, const struct session_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->node.to_fd = s->node.from_fd = -1;
	s->t0_ms = clock_ms();
	s->phase = "starting";
	signals_phase_src = &s->phase;
	eic_init(&s->conn);
}

void session_progress(const struct session *s, const char *fmt, ...)
{
	if (s->o.quiet)
		return;
	va_list ap;
	char line[512];
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "gate: [%5.*fs] %s\n", getenv("GATE_PROGRESS_MS") ? 3 : 1,
	        (double)(clock_ms() - s->t0_ms) / 1000.0, line);
}

/* A node that died while booting: Mix's own words (the tail of its stderr) are the reason,
 * with gate's hint when it knows the case. Returns -1 when there is nothing to quote. */
static int session_boot_failure(struct session *s, const char *how, char *err, size_t errlen)
{
	char said[1024];
	if (strcmp(s->phase, "booting the node") != 0)
		return -1;
	node_tail_stop(); /* everything the node wrote before it died */
	node_tail_text(said, sizeof(said), 6);
	if (!said[0])
		return -1;
	const char *hint = node_tail_hint(said);
	errtext_set(err, errlen, NULL, "node %s %s while %s in %s: %s; %s", s->name, how, s->phase,
	            s->o.project_dir, said, hint[0] ? hint : "its output above says more");
	return 0;
}

/* The eic poll callback: a signal or the node process ending stops every wait at once. */
static int session_poll(void *arg, char *err, size_t errlen)
{
	struct session *s = arg;
	if (signals_caught) {
		errtext_set(err, errlen, NULL, "interrupted by %s while %s",
		            strsignal(signals_caught), signals_phase[0] ? signals_phase : s->phase);
		return 1;
	}
	if (s->node.pid > 0 && node_exited(&s->node)) {
		char how[128];
		node_exit_describe(&s->node, how, sizeof(how));
		if (session_boot_failure(s, how, err, errlen) == 0)
			return 1;
		errtext_set(err, errlen, NULL, "node %s %s while %s; its output above says why",
		            s->name, how, s->phase);
		return 1;
	}
	return 0;
}

int session_cookie_read(const char *file, char *buf, size_t len, char *from, size_t fromlen,
                        char *err, size_t errlen)
{
	char path[4096];
	const char *env = getenv("GATE_COOKIE");
	if (!file && env && *env) {
		snprintf(buf, len, "%s", env);
		snprintf(from, fromlen, "$GATE_COOKIE");
		return 0;
	}
	if (file) {
		snprintf(path, sizeof(path), "%s", file);
	} else {
		const char *home = getenv("HOME");
		snprintf(path, sizeof(path), "%s/.erlang.cookie", home ? home : "");
	}
	snprintf(from, fromlen, "%s", path);
	/* a cookie is short: the first len - 1 bytes are all that can be one */
	char *data, why[4096 + 256];
	size_t n, plen = strlen(path);
	if (readfile_bounded(path, len - 1, READFILE_TRUNCATE | READFILE_STREAM, &data, &n, why,
	                     sizeof(why)) != READFILE_OK) {
		/* why says "PATH: what went wrong": the path is said once */
		const char *what =
		        strncmp(why, path, plen) == 0 && why[plen] == ':' ? why + plen + 2 : why;
		errtext_set(err, errlen, NULL,
		            "cannot read the cookie from %s: %s; pass --cookie-file FILE or "
		            "set GATE_COOKIE",
		            path, what);
		return -1;
	}
	memcpy(buf, data, n + 1);
	memset(data, 0, n); /* a secret: no copy left behind in freed memory */
	free(data);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[0]) {
		errtext_set(err, errlen, NULL, "the cookie file %s is empty", path);
		return -1;
	}
	return 0;
}

static int boot(struct session *s, char *err, size_t errlen)
{
	struct node_opts no = {
	        .project_dir = s->o.project_dir,
	        .mix_env = s->o.mix_env,
	        .erl_flags = s->o.erl_flags,
	        .elixir = s->o.elixir,
	        .stderr_fd = node_tail_start(),
	        .name = s->o.distributed,
	        .no_start = s->o.mix_test,
	        /* what mix test loads, loaded from the node's first moment */
	        .preload = s->o.mix_test ? probe_boot_modules : NULL,
	        .npreload = s->o.mix_test ? probe_boot_nmodules : 0,
	        .preload_batch = PROBE_BOOT_BATCH,
	        .code_paths = s->o.code_paths,
	        .ncode_paths = s->o.ncode_paths,
	        .erl = s->o.erl,
	};
	s->phase = "booting the node";
	int rc = node_start(&s->node, &no, err, errlen);
	node_tail_started();
	if (rc < 0)
		return -1;
	if (s->o.started)
		s->o.started(s->o.started_arg);
	snprintf(s->name, sizeof(s->name), "%s", s->node.name);
	if (s->o.code_paths)
		session_progress(s, "booting node %s in %s (erl, the project's code paths)",
		                 s->name, s->o.project_dir);
	else
		session_progress(s, "booting node %s in %s (MIX_ENV=%s, compiling if needed)",
		                 s->name, s->o.project_dir, s->o.mix_env ? s->o.mix_env : "test");

	/* the channel is the node's pipe pair (gate/node/eic.h), served from before Mix starts:
	 * session_open loads the probe while the project compiles and starts, then waits for
	 * the bootstrap to say the project is up (booted) */
	s->boot_t0 = clock_ms();
	int rfd = s->node.from_fd, wfd = s->node.to_fd;
	s->node.from_fd = s->node.to_fd = -1; /* the channel's from now on */
	eic_take_pipe(&s->conn, rfd, wfd, s->name);
	return 0;
}

/* Waits for the project of the node gate started to be compiled and started. */
static int booted(struct session *s, char *err, size_t errlen)
{
	s->phase = "booting the node";
	long long left = s->o.boot_timeout_ms - (clock_ms() - s->boot_t0);
	int rc = eic_pipe_booted(&s->conn, left > 0 ? (int)left : 0, err, errlen);
	if (rc == EIC_TIMEOUT) {
		errtext_set(
		        err, errlen, NULL,
		        "node %s did not come up within %d s; raise node.boot_timeout in "
		        "gate.toml or --boot-timeout if the project takes longer to compile and "
		        "start",
		        s->name, s->o.boot_timeout_ms / 1000);
		return -1;
	}
	if (rc == EIC_ERROR && node_wait_exit(&s->node, 2000))
		session_poll(s, err, errlen); /* the node died: its own words say why */
	if (rc != EIC_OK)
		return -1;
	session_progress(s, "node %s is up (booted in %.1f s)", s->name,
	                 (double)(clock_ms() - s->boot_t0) / 1000.0);
	return 0;
}

static int attach(struct session *s, char *err, size_t errlen)
{
	char cookie[256], from[4096], alive[64], hex[17];
	s->phase = "attaching to the node";
	snprintf(s->name, sizeof(s->name), "%s", s->o.attach);
	if (session_cookie_read(s->o.cookie_file, cookie, sizeof(cookie), from, sizeof(from), err,
	                        errlen) < 0)
		return -1;
	if (node_random_hex(hex, 8) < 0) {
		errtext_set(err, errlen, NULL, "cannot read /dev/urandom: %s", strerror(errno));
		return -1;
	}
	snprintf(alive, sizeof(alive), "gate_%s_c", hex);
	int rc = eic_connect_node(&s->conn, s->name, alive, cookie, from, s->o.boot_timeout_ms, err,
	                          errlen);
	memset(cookie, 0, sizeof(cookie));
	if (rc != EIC_OK)
		return -1;
	session_progress(s, "attached to node %s", s->name);
	return 0;
}

/* Attached: should gate die without cleaning up (SIGKILL), the probe's watchdog notices
 * gate's connection go down and removes the probe from the node itself. */
static int watch(struct session *s, char *err, size_t errlen)
{
	const char *self = ei_thisnodename(&s->conn.ec);
	ei_x_buff args;
	struct term *root;
	const struct term *reply;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_binary(&args, self, (long)strlen(self));
	ei_x_encode_empty_list(&args);
	ei_x_encode_empty_list(&args);
	int rc = eic_rpc(&s->conn, probe_entry(), "watch", &args, s->o.rpc_timeout_ms, &root,
	                 &reply, err, errlen);
	ei_x_free(&args);
	term_free(root);
	return rc == EIC_OK ? 0 : -1;
}

int session_open(struct session *s, char *err, size_t errlen)
{
	s->conn.poll = session_poll;
	s->conn.poll_arg = s;
	if ((s->o.attach ? attach(s, err, errlen) : boot(s, err, errlen)) < 0)
		return -1;
	/* a node gate starts serves before Mix starts: the probe loads meanwhile (a node that
	 * stops then, the project not compiling, says why as a boot that failed) */
	s->phase = s->o.attach ? "loading the probe" : "booting the node";
	char otp[16];
	if (otp_node_check(&s->conn, s->o.rpc_timeout_ms, otp, sizeof(otp), err, errlen) != EIC_OK)
		return -1;
	if (probe_load(&s->conn, s->o.need_mix || s->o.code_paths, s->o.fresh_names, !s->o.attach,
	               s->o.rpc_timeout_ms, err, errlen) != EIC_OK) {
		otp_explain_probe_load(s->name, otp, err, errlen);
		return -1;
	}
	s->probe_loaded = true;
	/* another slot's names when a previous gate's copy is still being purged */
	session_progress(s, "probe loaded as %s%s", probe_entry(),
	                 strcmp(probe_entry(), "gate_probe") != 0
	                         ? " (gate_probe is still attached or being purged in the node)"
	                         : "");
	if (!s->o.attach) {
		/* what mix test loads, loaded while the project boots too */
		if (s->o.need_mix &&
		    probe_preload(&s->conn, s->o.rpc_timeout_ms, err, errlen) != EIC_OK)
			return -1;
		if (booted(s, err, errlen) < 0)
			return -1;
		s->phase = "loading the probe";
	}
	if (probe_hello(&s->conn, s->o.rpc_timeout_ms, &s->info, err, errlen) != EIC_OK ||
	    (s->o.attach && watch(s, err, errlen) < 0))
		return -1;
	/* a node gate booted not distributed may have been named by node.erl_flags
	 * (-sname x, as a CI's `elixir --sname x -S mix test`): say and report its real name */
	if (s->node.pid > 0 && !s->node.distributed && s->info.node[0] &&
	    strcmp(s->info.node, s->name) != 0) {
		snprintf(s->name, sizeof(s->name), "%s", s->info.node);
		snprintf(s->conn.node, sizeof(s->conn.node), "%s", s->info.node);
		session_progress(
		        s,
		        "node is %s (distributed from its boot by its VM flags: node.erl_flags, "
		        "ERL_AFLAGS or ELIXIR_ERL_OPTIONS)",
		        s->name);
	}
	if (s->o.need_mix && !s->info.mix_project) {
		errtext_set(err, errlen, NULL,
		            "node %s has no Mix project loaded, so mix test cannot run in "
		            "it; attach to a node started in the project with `MIX_ENV=test iex "
		            "--sname x "
		            "-S mix`, let gate start one with -C DIR, or observe a workload with "
		            "--exec CMD",
		            s->name);
		return -1;
	}
	/* a node gate starts has the configured MIX_ENV; a running node must be in test */
	if (s->o.need_mix && s->o.attach && strcmp(s->info.mix_env, "test") != 0) {
		errtext_set(
		        err, errlen, NULL,
		        "node %s is not a Mix node in the test env (Mix.env() is :%s), "
		        "so mix test cannot run in it; start it with `MIX_ENV=test iex --sname x "
		        "-S "
		        "mix`, or observe a workload with --exec CMD",
		        s->name, s->info.mix_env);
		return -1;
	}
	return 0;
}

void session_explain(struct session *s, char *err, size_t errlen)
{
	if (s->node.pid > 0 && !signals_caught && !s->node.exited && !s->halt_sent &&
	    node_wait_exit(&s->node, 2000)) {
		char how[128], was[2048];
		node_exit_describe(&s->node, how, sizeof(how));
		snprintf(was, sizeof(was), "%s", err);
		errtext_set(err, errlen, NULL,
		            "node %s %s while %s; its output above says why (gate saw: %s)",
		            s->name, how, s->phase, was);
	}
}

/* erlang:halt(0, [{flush, true}]): the VM exits the way `mix test` ends it. No reply comes:
 * the call returns when the channel closes, or at once with wait_ms 0 (sent, not waited for). */
static void halt_node(struct session *s, int wait_ms)
{
	ei_x_buff args;
	struct term *root;
	const struct term *reply;
	char ignored[256];
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 2);
	ei_x_encode_long(&args, 0);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_tuple_header(&args, 2);
	ei_x_encode_atom(&args, "flush");
	ei_x_encode_atom(&args, "true");
	ei_x_encode_empty_list(&args);
	ei_x_encode_empty_list(&args);
	eic_rpc(&s->conn, "erlang", "halt", &args, wait_ms, &root, &reply, ignored,
	        sizeof(ignored));
	term_free(root);
	ei_x_free(&args);
}

void session_release(struct session *s)
{
	if (s->released)
		return;
	int saved = signals_caught;
	signals_caught = 0; /* so the clean-up RPCs are not cancelled by the flag */
	s->conn.poll = NULL;
	bool alive = s->node.pid <= 0 || !node_exited(&s->node);
	if (s->probe_loaded && eic_connected(&s->conn) && alive) {
		if (s->before_unload)
			s->before_unload(s->before_unload_arg);
		/* a node gate started is halted next: its code goes with it; an attached node
		 * keeps running: the final purge is left to the node (see probe.h) */
		probe_unload(&s->conn, s->o.need_mix || s->o.code_paths,
		             s->node.pid > 0 ? PROBE_UNLOAD_HALTING : PROBE_UNLOAD_HANDOFF, 2000);
	}
	s->before_unload = NULL;
	s->probe_loaded = false;
	if (s->node.pid > 0) {
		session_progress(s, "stopping node %s", s->name);
		/* graceful first: erlang:halt/2 (init:stop/0 measured 1.2 s slower, stopping every
		 * application of a node that is about to go away); session_end waits for it, then
		 * SIGTERM, then SIGKILL */
		if (eic_connected(&s->conn) && !node_exited(&s->node)) {
			halt_node(s, 0);
			s->halt_sent = true;
		}
	}
	s->released = true;
	signals_caught = saved;
}

void session_end(struct session *s)
{
	session_release(s);
	int saved = signals_caught;
	signals_caught = 0;
	int stop_ms = s->o.stop_timeout_ms > 0 ? s->o.stop_timeout_ms : 10000;
	bool connected = eic_connected(&s->conn);
	if (s->node.pid > 0 && s->halt_sent && !node_exited(&s->node))
		node_wait_exit(&s->node, stop_ms);
	eic_close(&s->conn);
	/* A node that never answered is still booting: its init process does not act on
	 * SIGTERM before the boot ends, which mix run --no-halt never does. A short grace then. */
	if (s->node.pid > 0)
		node_stop(&s->node, connected ? stop_ms : (stop_ms < 1000 ? stop_ms : 1000));
	node_tail_stop();
	memset(s->node.cookie, 0, sizeof(s->node.cookie));
	s->released = false; /* nothing left to release: the node is gone */
	s->halt_sent = false;
	signals_caught = saved;
}
