/* gate/signals.c: SIGINT/SIGTERM/SIGHUP turned into a flag the waiting loops check. */
#include "signals.h"

#include <string.h>

volatile sig_atomic_t signals_caught;

static void on_signal(int sig)
{
	if (!signals_caught)
		signals_caught = sig;
}

void signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
