/* gate/node/node.c: starts, watches and stops the node gate runs a Mix project's suite in. */
#include "gate/node/node.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ei.h>

#include "base/errtext.h"
#include "gate/node/clock.h"
#include "gate/node/node_erl.h"
#include "gate/node/reaper.h"
#include "gate/node/signals.h"

/* The bootstrap, in two parts. The first, evaluated by `elixir -e` before Mix starts, is a
 * process that opens gate's pipe pair as a port (fd 3: gate's requests and the lifeline;
 * fd 4: replies; never stdin, which is /dev/null as under `mix test < /dev/null`), reads the
 * first frame ({gate_boot, Name | none, Cookie, Unset, Preload}: when gate was asked for a
 * distributed node, distribution starts under that name and cookie, so nothing secret is on this
 * command line; Preload, batches of module names, is loaded meanwhile in a process registered as
 * gate_boot_preload: see gate/probe/boot_modules.h), then serves each {call, Id, M, F, A}
 * in a process of its own, answering
 * {gate_reply, Id, Result} as rpc would (a raise is {badrpc, {'EXIT', Reason}}). It serves
 * while Mix compiles and starts the project, so that gate loads its probe meanwhile, on the
 * other scheduler. The second part, evaluated by `mix run -e` once the project is compiled
 * (and, without --no-start, its applications started), tells it so; it then deletes the OS
 * environment variables in Unset (see node_handoff: Mix has read its env by then) and says
 * {gate_ready}. End-of-file on fd 3 (gate is gone, even killed) halts the node. The called
 * code runs with the node's own group leader, as under rpc from a C node: its output goes to
 * the node's stdout. */
static const char boot_serve[] =
        "spawn(fn -> :erlang.register(:gate_node_boot, self()); "
        "l = :erlang.open_port({:fd, 3, 4}, [:binary, {:packet, 4}, :eof]); "
        "o = fn t -> :erlang.port_command(l, :erlang.term_to_binary(t)) end; "
        "u = receive do {^l, {:data, b}} -> case :erlang.binary_to_term(b) do "
        "{:gate_boot, n, c, u, p} -> "
        "if n != :none do case :net_kernel.start([n, :longnames]) do "
        "{:ok, _} -> :erlang.set_cookie(c); "
        "e -> IO.puts(:stderr, \"cannot start distribution as #{n}: #{inspect(e)}\"); "
        "System.halt(1) end end; "
        "if p != [] do spawn(fn -> :erlang.register(:gate_boot_preload, self()); "
        ":lists.foreach(&:code.ensure_modules_loaded/1, p) end) end; u end; "
        "{^l, :eof} -> System.halt(3) end; "
        "w = fn w -> receive do {^l, {:data, b}} -> {:call, i, m, f, a} = "
        ":erlang.binary_to_term(b); "
        "spawn(fn -> o.({:gate_reply, i, try do apply(m, f, a) catch :throw, t -> t; "
        ":exit, e -> {:badrpc, {:EXIT, e}}; "
        ":error, e -> {:badrpc, {:EXIT, {e, __STACKTRACE__}}} end}) end); w.(w); "
        ":gate_booted -> Enum.each(u, &System.delete_env/1); o.({:gate_ready}); w.(w); "
        "{^l, :eof} -> System.halt(3); _ -> w.(w) end end; "
        "w.(w) end)";
static const char boot_ready[] = "send(:gate_node_boot, :gate_booted)";

/* In the child, before exec: gate's request pipe as fd 3, the reply pipe as fd 4 (neither
 * close-on-exec), stdin from /dev/null; *ready is moved above them first. Returns 0 or -1. */
static int child_fds(int req, int rep, int *ready)
{
	int a = fcntl(req, F_DUPFD, 10), b = fcntl(rep, F_DUPFD, 10);
	int r = fcntl(*ready, F_DUPFD_CLOEXEC, 10);
	if (a < 0 || b < 0 || r < 0)
		return -1;
	*ready = r;
	if (dup2(a, 3) < 0 || dup2(b, 4) < 0)
		return -1;
	close(a);
	close(b);
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

/* A distributed node's name (opts->name: NAME or NAME@127.0.0.1), cookie and port, and the
 * flags erl gets (erl, of erllen bytes); a node without a name gets only opts->erl_flags.
 * Returns 0, or -1 with err. */
static int node_identity(struct node *n, const struct node_opts *opts, char *erl, size_t erllen,
                         char *err, size_t errlen)
{
	char placeholder[33];
	memset(n, 0, sizeof(*n));
	n->to_fd = n->from_fd = -1;
	snprintf(n->name, sizeof(n->name), "nonode@nohost");
	const char *extra = opts->erl_flags ? opts->erl_flags : "";
	if (!opts->name) {
		if (snprintf(erl, erllen, "%s", extra) >= (int)erllen)
			goto too_long;
		return 0;
	}
	const char *at = strchr(opts->name, '@');
	size_t alive = at ? (size_t)(at - opts->name) : strlen(opts->name);
	if (alive == 0 || alive > 64 || (at && strcmp(at, "@127.0.0.1") != 0) ||
	    strspn(opts->name,
	           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != alive) {
		errtext_set(err, errlen, NULL,
		            "--distributed %s: expected a node name such as load or "
		            "load@127.0.0.1 (letters, digits, _ and -; the node listens on "
		            "127.0.0.1 only)",
		            opts->name);
		return -1;
	}
	n->distributed = true;
	snprintf(n->name, sizeof(n->name), "%.*s@127.0.0.1", (int)alive, opts->name);
	if (node_random_hex(n->cookie, 16) < 0 || node_random_hex(placeholder, 16) < 0) {
		errtext_set(err, errlen, NULL, "cannot read /dev/urandom for the node's cookie: %s",
		            strerror(errno));
		return -1;
	}
	n->port = free_port();
	if (n->port < 0) {
		errtext_set(err, errlen, NULL, "cannot find a free TCP port on 127.0.0.1: %s",
		            strerror(errno));
		return -1;
	}
	/* -setcookie with a random throw-away value keeps erl from reading or creating
	 * ~/.erlang.cookie; the bootstrap replaces it with the real cookie read from the pipe
	 * before distribution starts. */
	int w = snprintf(erl, erllen,
	                 "-start_epmd false -erl_epmd_port %d "
	                 "-kernel inet_dist_use_interface {127,0,0,1} -setcookie %s %s",
	                 n->port, placeholder, extra);
	if (w < 0 || (size_t)w >= erllen)
		goto too_long;
	return 0;
too_long:
	errtext_set(err, errlen, NULL, "node.erl_flags is too long (more than %zu bytes)",
	            erllen - 200);
	return -1;
}

/* In the forked child: its own process group, default signals, gate's pipes on fds 3 and 4
 * (3 is also the lifeline), the project's directory and environment, then exec. A failure is
 * written as an errno to ready (negative: chdir, not exec); never returns. */
__attribute__((noreturn)) static void node_child(const struct node_opts *opts, int req, int rep,
                                                 int ready, const char *elixir, char *const argv[])
{
	signals_child_reset();
	if (opts->stderr_fd > 2)
		dup2(opts->stderr_fd, 2);
	if (child_fds(req, rep, &ready) < 0) {
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
	/* No ERL_EPMD_ADDRESS: gate's node starts no epmd (-start_epmd false when distributed),
	 * and an epmd the suite starts (a :peer booted with -name) listens where it would under
	 * bare `mix test`; kept on loopback, nodes named after the host's own address (a
	 * container's hostname) could not find each other. */
	execvp(elixir, argv);
	int e = errno;
	(void)!write(ready, &e, sizeof(e));
	_exit(127);
}

/* The errno the child wrote on the ready pipe (chdir or exec failed), as the error. */
static void node_exec_error(const struct node_opts *opts, const char *elixir, int child_errno,
                            char *err, size_t errlen)
{
	if (child_errno == ENOENT && strchr(elixir, '/') == NULL && opts->code_paths)
		errtext_set(err, errlen, NULL,
		            "cannot run %s: not found on PATH; install Erlang/OTP (GitHub: "
		            "erlef/setup-beam; Debian: apt-get install erlang-base) or fix PATH",
		            elixir);
	else if (child_errno == ENOENT && strchr(elixir, '/') == NULL)
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

/* Appends the modules opts->preload as a list of batches of opts->preload_batch names. */
static int encode_preload(ei_x_buff *x, const struct node_opts *opts)
{
	size_t n = opts->preload ? opts->npreload : 0, per = opts->preload_batch;
	if (per == 0)
		per = n ? n : 1;
	for (size_t i = 0; i < n; i += per) {
		size_t k = n - i < per ? n - i : per;
		if (ei_x_encode_list_header(x, 1) < 0 || ei_x_encode_list_header(x, (long)k) < 0)
			return -1;
		for (size_t j = 0; j < k; j++)
			if (ei_x_encode_atom(x, opts->preload[i + j]) < 0)
				return -1;
		if (ei_x_encode_empty_list(x) < 0)
			return -1;
	}
	return ei_x_encode_empty_list(x);
}

/* The bootstrap's first frame: {gate_boot, Name, Cookie, Unset, Preload}, Name and Cookie
 * none when not distributed. Unset is ["MIX_ENV"] when gate's own environment has no MIX_ENV
 * and the node runs in test: Mix knows its env once booted, and bare `mix test` leaves
 * MIX_ENV unset for what the suite runs (a `mix` in another project is then in dev, as
 * without gate). Preload: opts->preload in batches ([] for none). A pipe holds the frame
 * whole before the node reads it. */
static int node_handoff(struct node *n, const struct node_opts *opts, bool unset_mix_env, char *err,
                        size_t errlen)
{
	ei_x_buff x;
	int rc = -1;
	if (ei_x_new_with_version(&x) < 0)
		goto out;
	if (ei_x_encode_tuple_header(&x, 5) < 0 || ei_x_encode_atom(&x, "gate_boot") < 0 ||
	    ei_x_encode_atom(&x, n->distributed ? n->name : "none") < 0 ||
	    ei_x_encode_atom(&x, n->distributed ? n->cookie : "none") < 0)
		goto out;
	if (unset_mix_env &&
	    (ei_x_encode_list_header(&x, 1) < 0 || ei_x_encode_binary(&x, "MIX_ENV", 7) < 0))
		goto out;
	if (ei_x_encode_empty_list(&x) < 0 || encode_preload(&x, opts) < 0)
		goto out;
	unsigned char hdr[4] = {(unsigned char)(x.index >> 24), (unsigned char)(x.index >> 16),
	                        (unsigned char)(x.index >> 8), (unsigned char)x.index};
	if (write(n->to_fd, hdr, 4) == 4 && write(n->to_fd, x.buff, (size_t)x.index) == x.index)
		rc = 0;
out:
	if (rc < 0) {
		errtext_set(err, errlen, NULL, "cannot send the node its first frame: %s",
		            strerror(errno ? errno : ENOMEM));
		node_stop(n, 0);
	}
	if (x.buff) {
		memset(x.buff, 0, (size_t)x.index); /* the cookie */
		ei_x_free(&x);
	}
	return rc;
}

int node_start(struct node *n, const struct node_opts *opts, char *err, size_t errlen)
{
	char erl[2048];
	int req[2] = {-1, -1}, rep[2] = {-1, -1}, ready[2] = {-1, -1};

	if (node_identity(n, opts, erl, sizeof(erl), err, errlen) < 0)
		return -1;

	const char *elixir = opts->elixir ? opts->elixir : "elixir";
	char *argv_mix[14], **argv = argv_mix, **argv_erl = NULL;
	int k = 0;
	if (opts->code_paths) { /* an Erlang project: erl, its code paths, gate_erl's bootstrap */
		elixir = opts->erl ? opts->erl : "erl";
		if (!(argv = argv_erl =
		              node_erl_argv(opts->erl, opts->code_paths, opts->ncode_paths, erl))) {
			errtext_set(err, errlen, NULL, "out of memory building the node's command");
			return -1;
		}
		goto spawn;
	}
	argv[k++] = (char *)elixir;
	if (erl[0]) {
		argv[k++] = "--erl";
		argv[k++] = erl;
	}
	argv[k++] = "-e";
	argv[k++] = (char *)boot_serve;
	argv[k++] = "-S";
	argv[k++] = "mix";
	argv[k++] = "run";
	argv[k++] = "--no-halt";
	argv[k++] = "-e";
	argv[k++] = (char *)boot_ready;
	if (opts->no_start)
		argv[k++] = "--no-start";
	argv[k] = NULL;
spawn:
	if (pipe2(req, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		errtext_set(err, errlen, NULL, "pipe: %s", strerror(errno));
		goto fail;
	}
	reaper_gate_init();
	pid_t pid = fork();
	if (pid < 0) {
		errtext_set(err, errlen, NULL, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		close(req[1]); /* gate's ends: the node's own copy would keep its lifeline open */
		close(rep[0]);
		node_child(opts, req[0], rep[1], ready[1], elixir, argv); /* never returns */
	}
	free(argv_erl);
	argv_erl = NULL;
	setpgid(pid, pid); /* also from here, so the group exists before we may signal it */
	close(req[0]);
	close(rep[1]);
	close(ready[1]);
	n->pid = pid;
	n->to_fd = req[1];
	n->from_fd = rep[0];

	/* the ready pipe closes on exec: an errno on it means chdir or exec failed */
	int child_errno = 0;
	ssize_t got = read(ready[0], &child_errno, sizeof(child_errno));
	close(ready[0]);
	if (got == (ssize_t)sizeof(child_errno)) {
		waitpid(pid, &n->wait_status, 0);
		n->exited = true;
		n->pid = 0;
		node_stop(n, 0); /* closes the pipes */
		node_exec_error(opts, elixir, child_errno, err, errlen);
		return -1;
	}
	const char *env = opts->mix_env ? opts->mix_env : "test";
	return node_handoff(n, opts, !getenv("MIX_ENV") && strcmp(env, "test") == 0, err, errlen);
fail:
	free(argv_erl);
	for (int i = 0; i < 2; i++) {
		if (req[i] >= 0)
			close(req[i]);
		if (rep[i] >= 0)
			close(rep[i]);
		if (ready[i] >= 0)
			close(ready[i]);
	}
	return -1;
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

/* Waits for the node's process to end, woken by its end itself (a pidfd, Linux 5.3), until
 * deadline. Returns 1 when it ended, 0 at the deadline, -1 when there is no pidfd to wait on
 * (an older kernel). */
static int wait_pidfd(struct node *n, long long deadline)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, n->pid, 0);
	if (fd < 0)
		return -1;
	int rc = 0;
	for (;;) {
		if (node_exited(n)) {
			rc = 1;
			break;
		}
		long long left = deadline - clock_ms();
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR) {
			rc = -1;
			break;
		}
	}
	close(fd);
	return rc;
#else
	(void)n;
	(void)deadline;
	return -1;
#endif
}

bool node_wait_exit(struct node *n, int timeout_ms)
{
	long long deadline = clock_ms() + timeout_ms;
	int w = wait_pidfd(n, deadline);
	if (w >= 0)
		return w == 1;
	/* without a pidfd: short pauses first (the node usually goes within milliseconds of being
	 * told; a fixed 20 ms pause added 10-20 ms to every run), longer ones for a node that
	 * takes its time */
	useconds_t pause = 1000;
	while (!node_exited(n)) {
		if (clock_ms() >= deadline)
			return false;
		usleep(pause);
		if (pause < 20000)
			pause *= 2;
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
	if (n->to_fd >= 0)
		close(n->to_fd);
	if (n->from_fd >= 0)
		close(n->from_fd);
	n->to_fd = n->from_fd = -1;
}

void node_kill_now(const struct node *n)
{
	if (n->pid > 0)
		kill(-n->pid, SIGKILL);
}
