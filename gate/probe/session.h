/* gate/probe/session.h: a session with one node: gate starts it for a Mix project (start mode) or
 * attaches to a running one, opens gate's channel to it (gate/node/eic.h: the node's pipe in
 * start mode, distribution when attached), loads the probe; at the end removes the probe and
 * stops what it started. `gate run` and `gate snapshot` both work through a session.
 */
#ifndef GATE_SESSION_H
#define GATE_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/node/eic.h"
#include "gate/node/node.h"
#include "gate/probe/probe.h"

struct session_opts {
	const char *project_dir; /* start mode: the Mix project (realpath'd by the caller) */
	const char *attach;      /* attach mode: the running node, name@host */
	const char *cookie_file; /* attach mode: cookie from this file, else $GATE_COOKIE, else
	                            ~/.erlang.cookie; never from the command line */
	const char *mix_env;
	const char *erl_flags;
	const char *elixir;
	int boot_timeout_ms;
	int rpc_timeout_ms;
	int stop_timeout_ms;
	bool quiet;
	bool need_mix;           /* tests will run: fail unless the node has a Mix project
	                            loaded, and load the ExUnit formatter too */
	bool mix_test;           /* start mode, mix test will run: boot with
	                            --no-start (the applications are started as mix test
	                            would, or not with --no-start) */
	const char *distributed; /* start mode, --distributed NAME: the node also
	                            starts distribution as NAME@127.0.0.1; NULL: not
	                            distributed, as under bare mix test */
	/* start mode, an Erlang (rebar3) project: the node is erl with these code paths (see
	 * gate/node/node.h), and the probe's test modules are loaded (the Erlang runners,
	 * gate/probe/gate_probe_erl.erl) without a Mix project; NULL: a Mix project */
	const char *const *code_paths;
	size_t ncode_paths;
	const char *erl; /* ... and its erl executable; NULL: erl from PATH */
	/* load the probe under a free slot's names (probe_load's fresh): set by
	 * commands whose calls into the probe all go through probe_entry() */
	bool fresh_names;
	/* start mode: called once the node's process runs (forked, its program exec'd), while it
	 * boots; NULL: nothing. For gate's own work on a thread of its own: no fork of gate's
	 * follows until the workload */
	void (*started)(void *arg);
	void *started_arg;
};

struct session {
	struct session_opts o;
	struct node node; /* start mode only; pid 0 otherwise */
	struct eic conn;
	bool probe_loaded;
	struct probe_info info;
	char name[256];    /* the node's name, for messages */
	const char *phase; /* "booting the node", "running the tests", ... */
	long long boot_t0; /* clock_ms() when the node gate starts was started */
	long long t0_ms;
	/* runs in session_end before the probe leaves this node, while the connection is up
	 * (cluster mode: the probe leaves the other nodes through this one); may be NULL */
	void (*before_unload)(void *arg);
	void *before_unload_arg;
	bool released;  /* session_release ran: the probe is gone, the halt sent */
	bool halt_sent; /* erlang:halt was sent to the node gate started */
};

/* Prepares s (no I/O); call before anything else, so that session_end is always safe. */
void session_init(struct session *s, const struct session_opts *o);

/* Boots or attaches, connects and loads the probe. Returns 0, or -1 with err. */
int session_open(struct session *s, char *err, size_t errlen);

/* After a failure: when the node process died, rewrites err to say so with its status. */
void session_explain(struct session *s, char *err, size_t errlen);

/* Removes the probe and asks a node gate started to halt, without waiting for it to go:
 * what gate does next (judging, the JUnit file) overlaps the node's exit. Safe at any point
 * and twice; session_end does it when it was not done. */
void session_release(struct session *s);

/* Removes the probe, stops a node gate started (erlang:halt, SIGTERM, SIGKILL to its group),
 * closes the connection. Safe at any point and twice. */
void session_end(struct session *s);

/* A progress line on stderr with the elapsed time, unless quiet. */
void session_progress(const struct session *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Reads a cookie for attach mode into buf: file, $GATE_COOKIE, ~/.erlang.cookie. *from says
 * where it came from (for messages). Returns 0, or -1 with err. */
int session_cookie_read(const char *file, char *buf, size_t len, char *from, size_t fromlen,
                        char *err, size_t errlen);

#endif
