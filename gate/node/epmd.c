/* gate/node/epmd.c: one PORT_PLEASE2 request to a host's epmd, with an error that says why not. */
#include "gate/node/epmd.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/errtext.h"
#include "gate/node/clock.h"

#define EPMD_PORT_PLEASE2_REQ 122
#define EPMD_PORT2_RESP 119

int epmd_port(void)
{
	const char *env = getenv("ERL_EPMD_PORT");
	char *end;
	long p = env ? strtol(env, &end, 10) : 0;
	return env && *env && !*end && p > 0 && p < 65536 ? (int)p : 4369;
}

/* Waits until fd is ready for events or the deadline passes. 1 ready, 0 timeout, -1 error. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - clock_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = events};
		int rc = poll(&p, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			return -1; /* a signal: the caller's loop sees the flag */
		return rc;
	}
}

/* Reads exactly len bytes before the deadline. 0, or -1 (EOF, error or time). */
static int read_all(int fd, unsigned char *buf, size_t len, long long deadline)
{
	size_t got = 0;
	while (got < len) {
		if (wait_fd(fd, POLLIN, deadline) <= 0)
			return -1;
		ssize_t n = read(fd, buf + got, len - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

int epmd_port_please(const char *host, const char *node, int timeout_ms, int *out_port, char *err,
                     size_t errlen)
{
	long long deadline = clock_ms() + timeout_ms;
	int port = epmd_port(), fd = -1, rc = -1;
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	size_t alive_len = strcspn(node, "@");

	*out_port = 0;
	int g = getaddrinfo(host, NULL, &hints, &ai);
	if (g != 0 || !ai) {
		errtext_set(err, errlen, NULL,
		            "unknown host %s in the node name %s (%s): check the part "
		            "after the @, e.g. app@127.0.0.1 or app@myhost",
		            host, node, gai_strerror(g));
		goto out;
	}
	struct sockaddr_in sa;
	memcpy(&sa, ai->ai_addr, sizeof(sa));
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		errtext_set(err, errlen, NULL, "socket: %s", strerror(errno));
		goto out;
	}
	int c = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (c < 0 && errno == EINPROGRESS) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (wait_fd(fd, POLLOUT, deadline) <= 0) {
			errtext_set(err, errlen, NULL,
			            "host %s did not answer on the epmd port %d within %d ms: "
			            "is the host reachable (node %s)?",
			            host, port, timeout_ms, node);
			goto out;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		c = soerr ? -1 : 0;
		errno = soerr;
	}
	if (c < 0) {
		if (errno == ECONNREFUSED)
			errtext_set(
			        err, errlen, NULL,
			        "epmd is not running on %s (port %d), so node %s is not "
			        "up there: start the node (it starts epmd), or set ERL_EPMD_PORT "
			        "to the "
			        "port its epmd uses",
			        host, port, node);
		else
			errtext_set(err, errlen, NULL,
			            "cannot reach epmd on %s (port %d) for node %s: %s", host, port,
			            node, strerror(errno));
		goto out;
	}
	unsigned char req[3 + 256], resp[4];
	if (alive_len == 0 || alive_len > 255) {
		errtext_set(err, errlen, NULL, "node name %s: expected name@host", node);
		goto out;
	}
	req[0] = (unsigned char)((alive_len + 1) >> 8);
	req[1] = (unsigned char)((alive_len + 1) & 0xff);
	req[2] = EPMD_PORT_PLEASE2_REQ;
	memcpy(req + 3, node, alive_len);
	if (write(fd, req, alive_len + 3) != (ssize_t)(alive_len + 3) ||
	    read_all(fd, resp, 2, deadline) < 0 || resp[0] != EPMD_PORT2_RESP) {
		errtext_set(err, errlen, NULL,
		            "epmd on %s (port %d) did not answer where node %s is", host, port,
		            node);
		goto out;
	}
	if (resp[1] != 0) {
		snprintf(
		        err, errlen,
		        "no node named %.*s is registered with epmd on %s (port %d): "
		        "is node %s up, and its name spelt right? `epmd -names` on that host lists "
		        "the nodes",
		        (int)alive_len, node, host, port, node);
		goto out;
	}
	if (read_all(fd, resp + 2, 2, deadline) < 0) {
		errtext_set(err, errlen, NULL,
		            "epmd on %s (port %d) sent a short answer for node %s", host, port,
		            node);
		goto out;
	}
	*out_port = (resp[2] << 8) | resp[3];
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ai)
		freeaddrinfo(ai);
	return rc;
}

int epmd_port_answers(const char *host, int port, int timeout_ms)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	if (getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai)
		return EHOSTUNREACH;
	struct sockaddr_in sa;
	memcpy(&sa, ai->ai_addr, sizeof(sa));
	freeaddrinfo(ai);
	sa.sin_port = htons((uint16_t)port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errno;
	int e = 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		if (e == EINPROGRESS) {
			socklen_t sl = sizeof(e);
			e = wait_fd(fd, POLLOUT, clock_ms() + timeout_ms) <= 0 ? ETIMEDOUT : 0;
			if (!e && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0)
				e = errno;
		}
	}
	close(fd);
	return e;
}
