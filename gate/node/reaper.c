/* gate/node/reaper.c: a subreaper between gate and the node or workload, so that nothing they
 * start outlives gate. */
#include "gate/node/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t gate_pid;

static void sweep_at_exit(void)
{
	if (getpid() == gate_pid)
		reaper_kill_all();
}

void reaper_gate_init(void)
{
	if (gate_pid == getpid())
		return;
	gate_pid = getpid();
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	static bool registered;
	if (!registered) {
		registered = true;
		atexit(sweep_at_exit);
	}
}

/* The parent pid and state of process pid from /proc/PID/stat; -1 when it is gone. */
static pid_t parent_of(const char *pid, char *state)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "PID (COMM) S PPID ...": COMM may hold anything, so look after the last ')' */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	*state = p[2];
	return (pid_t)strtol(p + 3, NULL, 10);
}

/* An epmd: the program the process runs is named epmd (the runtime's own, which `erl
 * -name` starts as `epmd -daemon`). */
static bool is_epmd(const char *pid)
{
	char path[64], exe[4096];
	snprintf(path, sizeof(path), "/proc/%s/exe", pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	const char *base = strrchr(exe, '/');
	return strcmp(base ? base + 1 : exe, "epmd") == 0;
}

/* SIGKILL to every live child of ours but epmd daemons (counted in *spared); returns how many
 * were killed. */
static int kill_children(int *spared)
{
	pid_t self = getpid();
	int n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char state = '?';
		if (parent_of(e->d_name, &state) != self || state == 'Z' || state == 'X')
			continue;
		if (is_epmd(e->d_name)) {
			(*spared)++;
			continue;
		}
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (kill(pid, SIGKILL) == 0)
			n++;
	}
	closedir(d);
	return n;
}

void reaper_kill_all(void)
{
	int only_spared = 0; /* scans in a row that found no child but epmd daemons */
	for (;;) {
		pid_t w;
		while ((w = waitpid(-1, NULL, WNOHANG | __WALL)) > 0)
			;
		if (w < 0 && errno == ECHILD)
			return; /* no child at all: nothing to look for in /proc (10 ms a run) */
		if (w < 0 && errno != EINTR)
			return;
		int spared = 0;
		int killed = kill_children(&spared);
		if (killed > 0) {
			/* one of them dies for sure; its own children come back to us meanwhile */
			only_spared = 0;
			(void)waitpid(-1, NULL, __WALL);
			continue;
		}
		/* the suite's epmd is all that is left (seen twice, so that a child that was
		 * coming back to us at the first scan is not missed): it outlives us */
		if (spared > 0 && ++only_spared >= 2)
			return;
		/* a child exists but was not seen alive in /proc (it just came back to us):
		 * look again */
		usleep(1000);
	}
}

/* Leaves the way the child left: its exit code, or its signal (without a core file). */
static void exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, sig);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

void reaper_become(const char *remove_file)
{
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	pid_t gate = getppid();
	pid_t child = fork();
	if (child <= 0) {
		/* the child that goes on to exec (or, fork failing, this one) */
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}

	/* the reaper: it holds nothing of gate's (a pipe end held here would keep gate
	 * waiting for an end-of-file), only stderr for nothing in particular */
	(void)prctl(PR_SET_NAME, "gate-reaper");
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	(void)prctl(PR_SET_PDEATHSIG, SIGUSR2);
	int devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		if (devnull > 2)
			close(devnull);
	}
	char keep[4096] = "";
	if (remove_file)
		snprintf(keep, sizeof(keep), "%s", remove_file);
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			close(fd);
	}

	bool gate_gone = getppid() != gate;
	int status = 0;
	while (!gate_gone) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig == SIGUSR2) {
			gate_gone = true;
		} else if (sig == SIGCHLD) {
			pid_t w;
			bool done = false;
			while ((w = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
				if (w == child) {
					done = true;
					break;
				}
			if (done)
				break;
		}
		/* SIGTERM, SIGINT, SIGHUP, SIGQUIT reached the whole process group: the
		 * child acts on them; the reaper waits for it */
	}
	reaper_kill_all();
	if (gate_gone) {
		if (keep[0]) {
			unlink(keep);
			char *slash = strrchr(keep, '/');
			if (slash && slash != keep) {
				*slash = '\0';
				rmdir(keep);
			}
		}
		_exit(1);
	}
	exit_like(status);
}
