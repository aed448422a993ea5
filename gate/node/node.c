/* gate/node/node.c: starts, watches and stops the node gate runs a Mix project's suite in. */
#include "gate/node/node.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ci/errtext.h"
#include "gate/node/clock.h"
#include "gate/node/reaper.h"
#include "gate/node/signals.h"

/* Evaluated by `mix run` once the project is compiled (and, without --no-start, its
 * applications started): a process reads the node's name and cookie from file descriptor 3
 * (gate's lifeline pipe, never stdin: the suite's stdin is /dev/null, as under `mix test <
 * /dev/null`), distribution starts under that name, and the process then halts the node when
 * the pipe reaches end-of-file (gate is gone). Nothing secret is on this command line. */
static const char boot_code[] =
        "p = self(); "
        "spawn(fn -> l = :erlang.open_port({:fd, 3, 3}, [:in, :binary, :eof, {:line, 512}]); "
        "receive do {^l, {:data, {:eol, d}}} -> send(p, {:gate_boot, d}); "
        "{^l, :eof} -> System.halt(3) end; "
        "w = fn w -> receive do {^l, {:data, _}} -> w.(w); {^l, :eof} -> System.halt(3) end end; "
        "w.(w) end); "
        "[n, c] = receive do {:gate_boot, d} -> String.split(d) end; "
        "{:ok, _} = :net_kernel.start([String.to_atom(n), :longnames]); "
        ":erlang.set_cookie(String.to_atom(c))";

/* The lifeline as the child's fd 3 (no close-on-exec), stdin from /dev/null. In the child,
 * before exec; *ready is moved off fd 3 first if it was there. Returns 0 or -1. */
static int child_fds(int lifeline, int *ready)
{
	if (*ready == 3) {
		int moved = fcntl(*ready, F_DUPFD_CLOEXEC, 4);
		if (moved < 0)
			return -1;
		*ready = moved;
	}
	if (lifeline == 3) {
		int fl = fcntl(3, F_GETFD);
		if (fl < 0 || fcntl(3, F_SETFD, fl & ~FD_CLOEXEC) < 0)
			return -1;
	} else if (dup2(lifeline, 3) < 0) {
		return -1;
	}
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0)
		return -1;
	if (null != 0)
		close(null);
	return 0;
}

int node_random_hex(char *buf, size_t bytes)
{
	unsigned char raw[64];
	if (bytes > sizeof(raw))
		return -1;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, raw, bytes);
	close(fd);
	if (got != (ssize_t)bytes)
		return -1;
	for (size_t i = 0; i < bytes; i++)
		sprintf(buf + 2 * i, "%02x", raw[i]);
	return 0;
}

/* A port free on 127.0.0.1 now. Another process may take it before the node binds it; the
 * node then fails to start distribution and says so. */
static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int port = -1;
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(s, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(s);
	return port;
}

#define MAX_ARGS 64

/* The node's name (opts->name, else gate_<hex>@127.0.0.1), cookie and distribution port, and
 * the flags erl gets (erl, of erllen bytes). Returns 0, or -1 with err. */
static int node_identity(struct node *n, const struct node_opts *opts, char *erl, size_t erllen,
                         char *err, size_t errlen)
{
	char hex[17], placeholder[33];
	memset(n, 0, sizeof(*n));
	n->stdin_fd = -1;
	if (node_random_hex(hex, 8) < 0 || node_random_hex(n->cookie, 16) < 0 ||
	    node_random_hex(placeholder, 16) < 0) {
		errtext_set(err, errlen, NULL,
		            "cannot read /dev/urandom for the node name and cookie: %s",
		            strerror(errno));
		return -1;
	}
	if (opts->name && strchr(opts->name, '@') &&
	    (size_t)(strchr(opts->name, '@') - opts->name) < sizeof(n->alive) &&
	    strlen(opts->name) < sizeof(n->name)) {
		snprintf(n->name, sizeof(n->name), "%s", opts->name);
		snprintf(n->alive, sizeof(n->alive), "%.*s",
		         (int)(strchr(opts->name, '@') - opts->name), opts->name);
	} else {
		snprintf(n->alive, sizeof(n->alive), "gate_%s", hex);
		snprintf(n->name, sizeof(n->name), "%s@127.0.0.1", n->alive);
	}
	n->port = free_port();
	if (n->port < 0) {
		errtext_set(err, errlen, NULL, "cannot find a free TCP port on 127.0.0.1: %s",
		            strerror(errno));
		return -1;
	}
	/* -setcookie with a random throw-away value keeps erl from reading or creating
	 * ~/.erlang.cookie; the boot code replaces it with the real cookie read from the lifeline
	 * pipe before anything can use it. */
	int w = snprintf(erl, erllen,
	                 "-start_epmd false -erl_epmd_port %d "
	                 "-kernel inet_dist_use_interface {127,0,0,1} -setcookie %s %s",
	                 n->port, placeholder, opts->erl_flags ? opts->erl_flags : "");
	if (w < 0 || (size_t)w >= erllen) {
		errtext_set(err, errlen, NULL, "node.erl_flags is too long (more than %zu bytes)",
		            erllen - 200);
		return -1;
	}
	return 0;
}

/* In the forked child: its own process group, default signals, the lifeline on fd 3, the
 * project's directory and environment, then exec. A failure is written as an errno to ready
 * (negative: chdir, not exec); never returns. */
__attribute__((noreturn)) static void node_child(const struct node_opts *opts, int lifeline,
                                                 int ready, const char *elixir, char *const argv[])
{
	signals_child_reset();
	if (opts->stderr_fd > 2)
		dup2(opts->stderr_fd, 2);
	if (child_fds(lifeline, &ready) < 0) {
		int e = errno;
		(void)!write(ready, &e, sizeof(e));
		_exit(127);
	}
	if (chdir(opts->project_dir) < 0) {
		int e = -errno; /* negative: chdir, not exec */
		(void)!write(ready, &e, sizeof(e));
		_exit(127);
	}
	reaper_become(NULL); /* nothing the node starts outlives gate (gate/reaper.h) */
	setenv("MIX_ENV", opts->mix_env ? opts->mix_env : "test", 1);
	/* should anything start an epmd after all, keep it on loopback */
	setenv("ERL_EPMD_ADDRESS", "127.0.0.1", 1);
	execvp(elixir, argv);
	int e = errno;
	(void)!write(ready, &e, sizeof(e));
	_exit(127);
}

/* The errno the child wrote on the ready pipe (chdir or exec failed), as the error. */
static void node_exec_error(const struct node_opts *opts, const char *elixir, int child_errno,
                            char *err, size_t errlen)
{
	if (child_errno == ENOENT && strchr(elixir, '/') == NULL)
		errtext_set(err, errlen, NULL,
		            "cannot run %s: not found on PATH; install Elixir "
		            "(GitHub: erlef/setup-beam; GitLab: an elixir image; Debian: "
		            "apt-get "
		            "install elixir), fix PATH, or pass --elixir PATH",
		            elixir);
	else if (child_errno > 0)
		errtext_set(err, errlen, NULL,
		            "cannot run %s to start the node in %s: %s; pass "
		            "--elixir the path of an elixir executable",
		            elixir, opts->project_dir, strerror(child_errno));
	else
		errtext_set(err, errlen, NULL, "cannot start the node in %s: %s", opts->project_dir,
		            strerror(-child_errno));
}

/* Hands the node its name and cookie on the lifeline (the boot code reads them). */
static int node_handoff(struct node *n, char *err, size_t errlen)
{
	char line[256];
	int len = snprintf(line, sizeof(line), "%s %s\n", n->name, n->cookie);
	if (write(n->stdin_fd, line, (size_t)len) != len) {
		errtext_set(err, errlen, NULL, "cannot hand the node its name and cookie: %s",
		            strerror(errno));
		memset(line, 0, sizeof(line));
		node_stop(n, 0);
		return -1;
	}
	memset(line, 0, sizeof(line));
	return 0;
}

int node_start(struct node *n, const struct node_opts *opts, char *err, size_t errlen)
{
	char erl[2048];
	int in[2] = {-1, -1};

	if (node_identity(n, opts, erl, sizeof(erl), err, errlen) < 0)
		return -1;

	const char *elixir = opts->elixir ? opts->elixir : "elixir";
	char *argv[] = {(char *)elixir,
	                "--erl",
	                erl,
	                "-S",
	                "mix",
	                "run",
	                "--no-halt",
	                "-e",
	                (char *)boot_code,
	                opts->no_start ? "--no-start" : NULL,
	                NULL};

	if (pipe2(in, O_CLOEXEC) < 0) {
		errtext_set(err, errlen, NULL, "pipe: %s", strerror(errno));
		return -1;
	}
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0) {
		errtext_set(err, errlen, NULL, "pipe: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return -1;
	}
	reaper_gate_init();
	pid_t pid = fork();
	if (pid < 0) {
		errtext_set(err, errlen, NULL, "fork: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid == 0)
		node_child(opts, in[0], ready[1], elixir, argv); /* never returns */
	setpgid(pid, pid); /* also from here, so the group exists before we may signal it */
	close(in[0]);
	close(ready[1]);
	n->pid = pid;
	n->stdin_fd = in[1];

	/* the ready pipe closes on exec: an errno on it means chdir or exec failed */
	int child_errno = 0;
	ssize_t got = read(ready[0], &child_errno, sizeof(child_errno));
	close(ready[0]);
	if (got == (ssize_t)sizeof(child_errno)) {
		waitpid(pid, &n->wait_status, 0);
		n->exited = true;
		n->pid = 0;
		close(n->stdin_fd);
		n->stdin_fd = -1;
		node_exec_error(opts, elixir, child_errno, err, errlen);
		return -1;
	}
	return node_handoff(n, err, errlen);
}

bool node_exited(struct node *n)
{
	if (n->exited)
		return true;
	if (n->pid <= 0)
		return false;
	pid_t r = waitpid(n->pid, &n->wait_status, WNOHANG);
	if (r == n->pid || (r < 0 && errno == ECHILD)) {
		n->exited = true;
		return true;
	}
	return false;
}

void node_exit_describe(const struct node *n, char *buf, size_t len)
{
	if (!n->exited)
		snprintf(buf, len, "is still running");
	else if (WIFEXITED(n->wait_status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(n->wait_status));
	else if (WIFSIGNALED(n->wait_status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(n->wait_status),
		         strsignal(WTERMSIG(n->wait_status)));
	else
		snprintf(buf, len, "ended (wait status %d)", n->wait_status);
}

bool node_wait_exit(struct node *n, int timeout_ms)
{
	long long deadline = clock_ms() + timeout_ms;
	while (!node_exited(n)) {
		if (clock_ms() >= deadline)
			return false;
		usleep(20000);
	}
	return true;
}

void node_stop(struct node *n, int timeout_ms)
{
	if (n->pid > 0) {
		if (!node_exited(n)) {
			kill(-n->pid, SIGTERM);
			if (!node_wait_exit(n, timeout_ms)) {
				kill(-n->pid, SIGKILL);
				node_wait_exit(n, 5000);
			}
		}
		/* whatever else is left in the group: erl_child_setup, OS processes of the suite */
		kill(-n->pid, SIGKILL);
		if (!n->exited)
			waitpid(n->pid, &n->wait_status, 0);
		n->exited = true;
		n->pid = 0;
	}
	if (n->stdin_fd >= 0) {
		close(n->stdin_fd);
		n->stdin_fd = -1;
	}
}

void node_kill_now(const struct node *n)
{
	if (n->pid > 0)
		kill(-n->pid, SIGKILL);
}
