/* gate/run/exec.c: runs the external workload of `gate run --exec` in a process group of its own.
 */
#include "base/errtext.h"
#include "gate/run/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate/node/clock.h"
#include "gate/node/reaper.h"
#include "gate/node/signals.h"
#include "model/tests.h"

#define MAX_WORDS 4096

void exec_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

int exec_split(const char *cmd, char ***out_argv, char *err, size_t errlen)
{
	size_t n = 0, len = strlen(cmd);
	char **argv = calloc(MAX_WORDS + 1, sizeof(*argv));
	char *word = malloc(len + 1);
	const char *p = cmd;

	*out_argv = NULL;
	if (!argv || !word) {
		errtext_set(err, errlen, NULL, "out of memory");
		goto fail;
	}
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t w = 0;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '\'') {
				const char *end = strchr(p + 1, '\'');
				if (!end) {
					errtext_set(err, errlen, NULL,
					            "--exec %s: a ' is not closed", cmd);
					goto fail;
				}
				memcpy(word + w, p + 1, (size_t)(end - p - 1));
				w += (size_t)(end - p - 1);
				p = end + 1;
			} else if (*p == '"') {
				p++;
				while (*p && *p != '"') {
					/* inside "...", a backslash only escapes these, as in sh */
					if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
						p++;
					word[w++] = *p++;
				}
				if (*p != '"') {
					errtext_set(err, errlen, NULL,
					            "--exec %s: a \" is not closed", cmd);
					goto fail;
				}
				p++;
			} else if (*p == '\\') {
				if (!p[1]) {
					errtext_set(err, errlen, NULL,
					            "--exec %s: it ends in a backslash", cmd);
					goto fail;
				}
				word[w++] = p[1];
				p += 2;
			} else {
				word[w++] = *p++;
			}
		}
		if (n == MAX_WORDS) {
			errtext_set(err, errlen, NULL, "--exec: more than %d words", MAX_WORDS);
			goto fail;
		}
		word[w] = '\0';
		if (!(argv[n++] = strdup(word))) {
			errtext_set(err, errlen, NULL, "out of memory");
			goto fail;
		}
	}
	if (n == 0) {
		errtext_set(err, errlen, NULL,
		            "--exec needs a command, e.g. --exec './load.sh --minutes 2'");
		goto fail;
	}
	free(word);
	*out_argv = argv;
	return (int)n;
fail:
	free(word);
	exec_argv_free(argv);
	return -1;
}

void exec_result_describe(const struct exec_result *r, char *buf, size_t len)
{
	if (r->exited)
		snprintf(buf, len, "exited with status %d", r->status);
	else
		snprintf(buf, len, "was killed by signal %d (%s)", r->status, strsignal(r->status));
}

static void child(const struct exec_opts *o, pid_t gate, int ready)
{
	signals_child_reset();
	if (getppid() != gate)
		_exit(127); /* gate is already gone */
	/* whatever the command starts, in any session, is killed when it ends or gate dies
	 * (SIGKILL included), and the cookie file goes with gate (gate/reaper.h) */
	reaper_become(o->secret_file);
	/* the reaper killed outright: the kernel kills the command */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(127);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		if (devnull > 0)
			close(devnull);
	}
	for (char *const *e = o->env; e && *e; e++)
		putenv(*e);
	if (o->dir && chdir(o->dir) < 0) {
		int e = errno;
		(void)!write(ready, &e, sizeof(e));
		_exit(127);
	}
	execvp(o->argv[0], o->argv);
	int e = errno;
	(void)!write(ready, &e, sizeof(e));
	_exit(127);
}

/* SIGTERM to the group, a grace, then SIGKILL to whatever is left of it; reaps the leader. */
static void stop_group(pid_t pid, bool reaped, int stop_ms, int *status)
{
	if (!reaped) {
		kill(-pid, SIGTERM);
		long long deadline = clock_ms() + stop_ms;
		while (clock_ms() < deadline) {
			if (waitpid(pid, status, WNOHANG) == pid) {
				reaped = true;
				break;
			}
			usleep(20000);
		}
	}
	kill(-pid, SIGKILL);
	if (!reaped)
		waitpid(pid, status, 0);
}

int exec_run(const struct exec_opts *o, struct exec_result *out, char *err, size_t errlen)
{
	int ready[2];
	memset(out, 0, sizeof(*out));
	if (pipe2(ready, O_CLOEXEC) < 0) {
		errtext_set(err, errlen, NULL, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	long long t0 = clock_ms();
	pid_t self = getpid();
	reaper_gate_init();
	pid_t pid = fork();
	if (pid < 0) {
		errtext_set(err, errlen, NULL, "fork: %s", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid == 0)
		child(o, self, ready[1]);
	setpgid(pid, pid); /* also here, so the group exists before gate may signal it */
	close(ready[1]);
	int child_errno = 0, status = 0;
	ssize_t got = read(ready[0], &child_errno, sizeof(child_errno));
	close(ready[0]);
	if (got == (ssize_t)sizeof(child_errno)) {
		waitpid(pid, &status, 0);
		if (child_errno == ENOENT)
			errtext_set(err, errlen, NULL, "--exec: cannot run %s: not found%s",
			            o->argv[0],
			            strchr(o->argv[0], '/')
			                    ? ""
			                    : " on PATH (give its path, e.g. ./load.sh)");
		else
			errtext_set(err, errlen, NULL, "--exec: cannot run %s: %s", o->argv[0],
			            strerror(child_errno));
		return -1;
	}

	int rc = -1;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			out->exited = WIFEXITED(status);
			out->status = out->exited ? WEXITSTATUS(status) : WTERMSIG(status);
			stop_group(pid, true, o->stop_ms, &status);
			rc = 0;
			break;
		}
		if (clock_ms() - t0 >= o->timeout_ms) {
			errtext_set(err, errlen, NULL,
			            "--exec: %s did not finish within %d s; it was stopped. "
			            "Raise node.test_timeout in gate.toml or --test-timeout",
			            o->argv[0], o->timeout_ms / 1000);
			stop_group(pid, false, o->stop_ms, &status);
			break;
		}
		int s = EIC_OK;
		if (o->conn)
			s = eic_idle(o->conn, 100, err, errlen);
		else
			usleep(100000);
		if (s != EIC_OK) {
			stop_group(pid, false, o->stop_ms, &status);
			break;
		}
	}
	out->wall_ms = clock_ms() - t0;
	return rc;
}

int exec_env_add(struct exec_env *e, const char *name, const char *value)
{
	if (e->n + 1 >= sizeof(e->vars) / sizeof(e->vars[0]))
		return -1;
	size_t len = strlen(name) + strlen(value) + 2;
	char *v = malloc(len);
	if (!v)
		return -1;
	snprintf(v, len, "%s=%s", name, value);
	e->vars[e->n++] = v;
	e->vars[e->n] = NULL;
	return 0;
}

int exec_env_cookie_file(struct exec_env *e, const char *cookie, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	char path[4200];
	snprintf(e->dir, sizeof(e->dir), "%s/gate-exec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(e->dir)) {
		errtext_set(err, errlen, NULL,
		            "cannot make a temp dir for the workload's cookie file (%s): %s",
		            e->dir, strerror(errno));
		e->dir[0] = '\0';
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cookie", e->dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	size_t len = strlen(cookie);
	bool ok = fd >= 0 && write(fd, cookie, len) == (ssize_t)len;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (!ok) {
		errtext_set(err, errlen, NULL, "cannot write the workload's cookie file %s: %s",
		            path, strerror(errno));
		return -1;
	}
	if (exec_env_add(e, "GATE_COOKIE_FILE", path) < 0) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	return 0;
}

void exec_env_clear(struct exec_env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->vars[i]);
	if (e->dir[0]) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/cookie", e->dir);
		unlink(path);
		rmdir(e->dir);
	}
	memset(e, 0, sizeof(*e));
}

int exec_workload(const char *cmd, const char *dir, const struct exec_env *env, int timeout_ms,
                  int stop_ms, struct eic *conn, struct test_run *tests, char *err, size_t errlen)
{
	char **argv, secret[4200] = "";
	struct exec_result res;
	if (exec_split(cmd, &argv, err, errlen) < 0)
		return -1;
	/* only the cookie file gate made itself (attached with --cookie-file, GATE_COOKIE_FILE
	 * names the user's file, which stays) */
	if (env->dir[0])
		snprintf(secret, sizeof(secret), "%s/cookie", env->dir);
	struct exec_opts o = {
	        .argv = argv,
	        .env = env->vars,
	        .dir = dir,
	        .timeout_ms = timeout_ms,
	        .stop_ms = stop_ms,
	        .conn = conn,
	        .secret_file = secret[0] ? secret : NULL,
	};
	int rc = exec_run(&o, &res, err, errlen);
	exec_argv_free(argv);
	if (rc < 0)
		return -1;
	struct test_result *t = test_run_add(tests);
	char how[160];
	exec_result_describe(&res, how, sizeof(how));
	if (!t || !(t->module = strdup("gate.exec")) || !(t->name = strdup(cmd)) ||
	    !(t->message = strdup(how))) {
		errtext_set(err, errlen, NULL, "out of memory");
		return -1;
	}
	t->state = res.exited && res.status == 0 ? TEST_PASSED : TEST_FAILED;
	t->time_us = res.wall_ms * 1000;
	if (t->state == TEST_PASSED) {
		free(t->message);
		t->message = NULL;
	}
	tests->finished = true;
	tests->wall_us = res.wall_ms * 1000;
	return 0;
}
