/* gate/node/node.h: the life of the node gate starts for a Mix project (start mode).
 *
 * The node runs `elixir -S mix run --no-halt` in the project with MIX_ENV set (taken out of
 * its OS environment once booted when gate's had none, as bare `mix test`), in a process
 * group of its own, and is not distributed: `nonode@nohost`, no cookie, no epmd,
 * nothing listening, as under bare `mix test`; the suite may start distribution itself.
 * gate talks to it over a pipe pair (gate/node/eic.h): the node reads gate's requests on
 * its file descriptor 3 and writes its replies on 4, served by a small bootstrap given on
 * its command line (`mix run -e`). Fd 3 is also its lifeline: gate keeps the write end, and
 * the node halts when it reads end-of-file there, so even a gate killed with SIGKILL leaves
 * no node behind. The node's stdin is /dev/null, as under `mix test < /dev/null`.
 *
 * With a name (`gate run --distributed NAME`, for a workload that reaches the node by
 * distribution) the node also starts distribution as NAME@127.0.0.1 on a free loopback port
 * chosen by gate, without epmd (-start_epmd false, -erl_epmd_port), with a random cookie
 * that reaches it in the first frame on fd 3, never on a command line.
 */
#ifndef GATE_NODE_H
#define GATE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct node_opts {
	const char *project_dir;
	const char *mix_env;
	const char *erl_flags; /* extra erl flags, split on blanks; may be NULL */
	const char *elixir;    /* the elixir executable; NULL for "elixir" from PATH */
	int stderr_fd;         /* > 2: the node's stderr (node_tail's pipe); else gate's */
	const char *name;      /* distributed as NAME@127.0.0.1 (NAME, or NAME@127.0.0.1);
	                          NULL: not distributed */
	bool no_start;         /* boot with `mix run --no-start`: mix test's own app.start (or
	                          gate_probe:run_prep) starts the applications */
	/* modules the node loads in the background from its first moment, preload_batch at a
	 * time, in a process registered as gate_boot_preload (gate/probe/boot_modules.h); a
	 * name its code path lacks is skipped. NULL: none */
	const char *const *preload;
	size_t npreload, preload_batch;
	/* an Erlang project (rebar3): the node is `erl` with these code paths (-pa) and the
	 * bootstrap in Erlang (gate/node/node_erl.c), not `elixir -S mix run`; NULL: a Mix
	 * project. The project is compiled already (rebar3 as test compile) */
	const char *const *code_paths;
	size_t ncode_paths;
	const char *erl; /* the erl executable; NULL for "erl" from PATH */
};

struct node {
	pid_t pid;        /* leader of the node's process group; 0 when none */
	int to_fd;        /* gate's end of the node's fd 3: requests, and the lifeline; -1 when
	                     closed or handed to the channel (eic_open_pipe) */
	int from_fd;      /* gate's end of the node's fd 4: replies; -1 likewise */
	bool distributed; /* started with a name (node_opts.name) */
	int port;         /* distributed: its port on 127.0.0.1 */
	char name[96];    /* distributed: NAME@127.0.0.1; else nonode@nohost */
	char cookie[48];  /* distributed: random, never printed */
	bool exited;
	int wait_status; /* from waitpid once exited */
};

/* Forks and execs the node and sends it its first frame (the name and cookie when
 * distributed). Returns 0, or -1 with err naming what failed. */
int node_start(struct node *n, const struct node_opts *opts, char *err, size_t errlen);

/* Reaps the node if it exited, without blocking. Returns true once it has exited. */
bool node_exited(struct node *n);

/* "exited with status 1", "was killed by signal 9 (Killed)". */
void node_exit_describe(const struct node *n, char *buf, size_t len);

/* Waits up to timeout_ms for the node to exit by itself. Returns true once it has. */
bool node_wait_exit(struct node *n, int timeout_ms);

/* Stops the node: SIGTERM to its process group (the VM stops gracefully), then after
 * timeout_ms SIGKILL, and reaps it. Always ends with SIGKILL to the group, so that no OS
 * process the suite started survives. Safe to call twice and on a node never started. */
void node_stop(struct node *n, int timeout_ms);

/* Async-signal-safe: SIGKILL to the node's group. For the fatal-signal path only. */
void node_kill_now(const struct node *n);

/* Fills buf with 2*bytes random hex digits from /dev/urandom. Returns 0 or -1. */
int node_random_hex(char *buf, size_t bytes);

#endif
