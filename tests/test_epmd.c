/* tests/test_epmd.c: the epmd look-up behind attach errors, against a stand-in epmd on a
 * free loopback port: a registered node, an unknown one, an epmd that never answers, no
 * epmd at all, an unknown host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gate/node/epmd.h"

enum mode { ANSWER_PORT, ANSWER_UNKNOWN, ANSWER_NOTHING };

struct stand_in {
	pid_t pid;
	int port;
};

/* A one-connection epmd in a child process: checks the PORT_PLEASE2 request for "app",
 * then answers as mode says. */
static void stand_in_start(struct stand_in *s, enum mode mode)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(ls >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &len), 0);
	s->port = ntohs(a.sin_port);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		int c = accept(ls, NULL, NULL);
		unsigned char req[6];
		if (c < 0 || read(c, req, sizeof(req)) != (ssize_t)sizeof(req) || req[0] != 0 ||
		    req[1] != 4 || req[2] != 122 || memcmp(req + 3, "app", 3) != 0)
			_exit(1);
		unsigned char port[] = {119, 0, 0x10, 0xe1}, unknown[] = {119, 1};
		if (mode == ANSWER_PORT)
			(void)!write(c, port, sizeof(port));
		else if (mode == ANSWER_UNKNOWN)
			(void)!write(c, unknown, sizeof(unknown));
		else
			pause();
		_exit(0);
	}
	close(ls);
	char env[16];
	snprintf(env, sizeof(env), "%d", s->port);
	setenv("ERL_EPMD_PORT", env, 1);
}

static void stand_in_stop(struct stand_in *s)
{
	int st;
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &st, 0);
}

/* One look-up of app@127.0.0.1 against a stand-in answering as mode says (or against its
 * freed port, with gone); returns what epmd_port_please returned. */
static int lookup(enum mode mode, bool gone, int timeout_ms, int *port, char *err, size_t len)
{
	struct stand_in s;
	stand_in_start(&s, mode);
	if (gone)
		stand_in_stop(&s); /* its port is free again, and nothing listens there */
	int rc = epmd_port_please("127.0.0.1", "app@127.0.0.1", timeout_ms, port, err, len);
	if (!gone)
		stand_in_stop(&s);
	return rc;
}

static void test_epmd__registered(void **state)
{
	(void)state;
	char err[512] = "";
	int port = 0;
	if (lookup(ANSWER_PORT, false, 5000, &port, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(port, 0x10e1);
}

static void test_epmd__errors(void **state)
{
	(void)state;
	char err[512] = "";
	int port = 0;
	assert_int_equal(lookup(ANSWER_UNKNOWN, false, 5000, &port, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no node named app is registered with epmd on 127.0.0.1"));
	assert_non_null(strstr(err, "epmd -names"));
	assert_int_equal(lookup(ANSWER_NOTHING, false, 300, &port, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "did not answer where node app@127.0.0.1 is"));
	assert_int_equal(lookup(ANSWER_PORT, true, 2000, &port, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "epmd is not running on 127.0.0.1"));
	assert_non_null(strstr(err, "ERL_EPMD_PORT"));
}

static void test_epmd__unknown_host(void **state)
{
	(void)state;
	char err[512] = "";
	int port = 0;
	assert_int_equal(epmd_port_please("no-such-host.invalid", "app@no-such-host.invalid", 2000,
	                                  &port, err, sizeof(err)),
	                 -1);
	assert_non_null(strstr(err, "unknown host no-such-host.invalid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_epmd__registered),
	        cmocka_unit_test(test_epmd__errors),
	        cmocka_unit_test(test_epmd__unknown_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
