/* gate/run/exec.h: the external workload of `gate run --exec`: a command gate runs as a child
 * process, instead of mix test, while the node is observed.
 *
 * The command line is split into words the way a POSIX shell splits them (blanks, '...',
 * "...", backslash), and then run without a shell: no variables, globs, pipes or
 * redirections (for those: --exec 'sh -c "..."'). The child gets its own process group,
 * stdin from /dev/null and gate's stdout and stderr, so its output streams through. When it
 * ends, when gate is interrupted or times out, its whole group is killed: nothing it
 * started is left running.
 */
#ifndef GATE_EXEC_H
#define GATE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "gate/node/eic.h"
#include "model/tests.h"

/* Splits cmd into *out_argv (NULL-terminated, owned by the caller: exec_argv_free). Returns
 * the number of words, or -1 with err (an unterminated quote, a trailing backslash, no word
 * at all, out of memory). */
int exec_split(const char *cmd, char ***out_argv, char *err, size_t errlen);
void exec_argv_free(char **argv);

struct exec_opts {
	char *const *argv;       /* from exec_split */
	char *const *env;        /* extra NAME=VALUE entries for the child, NULL-terminated */
	const char *dir;         /* its working directory; NULL: gate's */
	int timeout_ms;          /* the whole command */
	int stop_ms;             /* after SIGTERM to its group, before SIGKILL */
	struct eic *conn;        /* kept alive while waiting (ticks); its poll callback can
	                            cancel the wait (signals, a dead node); may be NULL */
	const char *secret_file; /* a temp file of gate's own (the cookie file gate made) that
	                            the command's reaper removes, with its directory, should
	                            gate die first; NULL: none (never a file of the user's) */
};

struct exec_result {
	bool exited; /* exited by itself (else: killed by a signal) */
	int status;  /* exit status, or the signal */
	long long wall_ms;
};

/* Runs the command and waits for it. Returns 0 when it ended by itself (whatever its
 * status: out says it), or -1 with err: it could not start (not found, not executable), it
 * ran past timeout_ms, the wait was cancelled, or the node connection broke. Its process
 * group is killed before this returns, in every case. */
int exec_run(const struct exec_opts *o, struct exec_result *out, char *err, size_t errlen);

/* The environment the command gets on top of gate's: what a load script needs to reach
 * the node (GATE_NODE, ...). */
struct exec_env {
	char *vars[8]; /* NAME=VALUE, NULL-terminated; owned */
	size_t n;
	char dir[4096]; /* a private temp dir for GATE_COOKIE_FILE, or "" */
};

/* Adds NAME=VALUE. Returns 0, or -1 when out of memory or full. */
int exec_env_add(struct exec_env *e, const char *name, const char *value);
/* Writes cookie into a new private file (mode 0600 in a 0700 temp dir) and adds
 * GATE_COOKIE_FILE naming it. Returns 0, or -1 with err. */
int exec_env_cookie_file(struct exec_env *e, const char *cookie, char *err, size_t errlen);
/* Frees the entries and removes the cookie file and its dir. */
void exec_env_clear(struct exec_env *e);

/* "exited with status 3", "was killed by signal 9 (Killed)". */
void exec_result_describe(const struct exec_result *r, char *buf, size_t len);

/* The whole --exec step: splits cmd, runs it with env, and appends its outcome to tests as
 * one testcase (module "gate.exec", named after cmd): passed on exit status 0, failed
 * otherwise, with the status as its message. Returns 0, or -1 with err when the command
 * could not run or finish (see exec_run); nothing is appended then. */
int exec_workload(const char *cmd, const char *dir, const struct exec_env *env, int timeout_ms,
                  int stop_ms, struct eic *conn, struct test_run *tests, char *err, size_t errlen);

#endif
