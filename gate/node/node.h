/* gate/node/node.h: the life of the node gate starts for a Mix project (start mode).
 *
 * The node runs `elixir -S mix run --no-halt` in the project with MIX_ENV set, in a process
 * group of its own. Distribution listens on 127.0.0.1 at a free port chosen by gate, without
 * epmd (-start_epmd false, -erl_epmd_port), so no epmd is started and no fixed port is used.
 * The node name and the random cookie reach the node on a pipe of its own (file descriptor
 * 3, the "lifeline"), never on a command line; gate keeps that pipe open, and the node halts
 * itself when it reads end-of-file there, so even a gate killed with SIGKILL leaves no node
 * behind. The node's stdin is /dev/null, as under `mix test < /dev/null` (issue 18): a test
 * reading stdin gets :eof and never sees gate's boot data.
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
	const char *name;      /* the node's name (NAME@127.0.0.1, adopted from the project's
	                          test_helper); NULL: gate_<random>@127.0.0.1 */
	bool no_start;         /* boot with `mix run --no-start`: mix test's own app.start (or
	                          gate_probe:run_prep) starts the applications */
};

struct node {
	pid_t pid;       /* leader of the node's process group; 0 when none */
	int stdin_fd;    /* write end of the node's lifeline pipe (its fd 3; the name kept
	                    for the callers); -1 when closed */
	int port;        /* distribution port on 127.0.0.1 */
	char alive[64];  /* gate_<hex> */
	char name[96];   /* gate_<hex>@127.0.0.1 */
	char cookie[48]; /* random, never printed */
	bool exited;
	int wait_status; /* from waitpid once exited */
};

/* Forks and execs the node. Returns 0, or -1 with err naming what failed. */
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
