/* tests/e2e/ei_ping.c: tries one distribution handshake with a node that runs without epmd.
 * usage: ei_ping NODE@IP PORT COOKIE_FILE   prints "pong" (accepted) or "pang" (refused).
 * The cookie comes from a file so that this test tool does not put it on a command line. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ei.h>

int main(int argc, char **argv)
{
	char cookie[256] = "";
	if (argc != 4) {
		fprintf(stderr, "usage: ei_ping NODE@IP PORT COOKIE_FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[3], "r");
	if (!f || !fgets(cookie, sizeof(cookie), f)) {
		fprintf(stderr, "ei_ping: cannot read %s\n", argv[3]);
		return 2;
	}
	fclose(f);
	cookie[strcspn(cookie, "\r\n")] = '\0';
	const char *ip = strchr(argv[1], '@');
	struct in_addr addr;
	if (!ip || inet_aton(ip + 1, &addr) == 0) {
		fprintf(stderr, "ei_ping: %s: expected NAME@IPv4\n", argv[1]);
		return 2;
	}
	ei_init();
	ei_cnode ec;
	if (ei_connect_xinit(&ec, ip + 1, "ei_ping", "ei_ping@127.0.0.1", (Erl_IpAddr)&addr, cookie,
	                     0) < 0)
		return 2;
	int fd = ei_xconnect_host_port_tmo(&ec, (Erl_IpAddr)&addr, atoi(argv[2]), 5000);
	puts(fd >= 0 ? "pong" : "pang");
	if (fd >= 0)
		ei_close_connection(fd);
	return 0;
}
