/* gate/node/node_tail.c: passes the started node's stderr through and keeps its tail. */
#include "gate/node/node_tail.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
	int rfd, wfd;
	bool running;
	atomic_bool stop;
	pthread_t th;
	pthread_mutex_t mu;
	char ring[NODE_TAIL_BYTES];
	size_t len; /* bytes held, the newest at the end */
} tail = {.rfd = -1, .wfd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static void keep(const char *buf, size_t n)
{
	pthread_mutex_lock(&tail.mu);
	if (n >= sizeof(tail.ring)) {
		memcpy(tail.ring, buf + n - sizeof(tail.ring), sizeof(tail.ring));
		tail.len = sizeof(tail.ring);
	} else {
		if (tail.len + n > sizeof(tail.ring)) {
			size_t drop = tail.len + n - sizeof(tail.ring);
			memmove(tail.ring, tail.ring + drop, tail.len - drop);
			tail.len -= drop;
		}
		memcpy(tail.ring + tail.len, buf, n);
		tail.len += n;
	}
	pthread_mutex_unlock(&tail.mu);
}

/* Copies one read's worth; returns false at end-of-file or on an error. */
static bool pump(void)
{
	char buf[4096];
	ssize_t n = read(tail.rfd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	keep(buf, (size_t)n);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(2, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* gate's stderr is gone: keep the tail all the same */
		off += w;
	}
	return true;
}

static void *run(void *arg)
{
	(void)arg;
	int after_stop = 0;
	for (;;) {
		struct pollfd p = {.fd = tail.rfd, .events = POLLIN};
		int r = poll(&p, 1, 100);
		if (r > 0 && !pump())
			break;
		/* nothing more came and gate is done with the node; or something that escaped the
		 * node's group still writes: gate reads at most 50 more chunks of it */
		if (atomic_load(&tail.stop) && (r == 0 || ++after_stop > 50))
			break;
	}
	return NULL;
}

int node_tail_start(void)
{
	int fds[2];
	if (tail.running)
		return -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	tail.rfd = fds[0];
	tail.wfd = fds[1];
	tail.len = 0;
	atomic_store(&tail.stop, false);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&tail.th, NULL, run, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(fds[0]);
		close(fds[1]);
		tail.rfd = tail.wfd = -1;
		errno = rc;
		return -1;
	}
	tail.running = true;
	return tail.wfd;
}

void node_tail_started(void)
{
	if (tail.wfd >= 0) {
		close(tail.wfd);
		tail.wfd = -1;
	}
}

void node_tail_stop(void)
{
	if (!tail.running)
		return;
	node_tail_started();
	atomic_store(&tail.stop, true);
	pthread_join(tail.th, NULL);
	close(tail.rfd);
	tail.rfd = -1;
	tail.running = false;
}

void node_tail_text(char *out, size_t len, int max_lines)
{
	char raw[NODE_TAIL_BYTES + 1];
	pthread_mutex_lock(&tail.mu);
	memcpy(raw, tail.ring, tail.len);
	raw[tail.len] = '\0';
	pthread_mutex_unlock(&tail.mu);
	/* clean: drop ANSI sequences (ESC [ ... letter) and other control characters but \n */
	size_t w = 0;
	for (size_t i = 0; raw[i]; i++) {
		unsigned char ch = (unsigned char)raw[i];
		if (ch == 0x1b) {
			if (raw[i + 1] == '[') {
				i += 2;
				while (raw[i] && !(raw[i] >= 0x40 && raw[i] <= 0x7e))
					i++;
				if (!raw[i])
					break;
			}
			continue;
		}
		if (ch == '\t')
			ch = ' ';
		if (ch < 0x20 && ch != '\n')
			continue;
		if (ch == 0x7f)
			continue;
		raw[w++] = (char)ch;
	}
	raw[w] = '\0';
	/* the last max_lines non-blank lines, oldest first */
	const char *lines[64];
	int n = 0;
	for (char *line = strtok(raw, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ')
			line++;
		if (!*line)
			continue;
		if (n == (int)(sizeof(lines) / sizeof(lines[0]))) {
			memmove(lines, lines + 1, sizeof(lines) - sizeof(lines[0]));
			n--;
		}
		lines[n++] = line;
	}
	int first = n > max_lines ? n - max_lines : 0;
	size_t used = 0;
	out[0] = '\0';
	for (int i = first; i < n && used + 1 < len; i++) {
		int k = snprintf(out + used, len - used, "%s%s", i > first ? "; " : "", lines[i]);
		if (k < 0)
			break;
		used += (size_t)k;
	}
	if (used >= len)
		out[len - 1] = '\0';
}

const char *node_tail_hint(const char *t)
{
	if (strstr(t, "mix deps.get") || strstr(t, "Unchecked dependencies") ||
	    strstr(t, "Could not find an SCM") || strstr(t, "Could not find Hex"))
		return "fetch the project's dependencies before gate runs: `MIX_ENV=test mix "
		       "deps.get` "
		       "in the project (in CI: a `mix deps.get` step, with deps/ and _build/ "
		       "cached on "
		       "mix.lock; Hex packages need `mix local.hex --force` first)";
	if (strstr(t, "You're trying to run") && strstr(t, "on Elixir v"))
		return "run gate with the Elixir the project declares in mix.exs: put that elixir "
		       "on "
		       "PATH (setup-beam's elixir-version, the CI image's tag) or pass --elixir "
		       "PATH";
	return "";
}
