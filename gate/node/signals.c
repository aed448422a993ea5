/* gate/node/signals.c: SIGINT/SIGTERM/SIGHUP turned into a flag the waiting loops check. */
#include "gate/node/signals.h"

#include <string.h>
#include <unistd.h>

volatile sig_atomic_t signals_caught;
const char *const *volatile signals_phase_src;
char signals_phase[128];

/* The phase is copied here, when the signal arrives: by the time a waiting loop notices the
 * flag the run may have moved on, and the message must name the step that was interrupted. */
static void on_signal(int sig)
{
	if (signals_caught)
		return;
	const char *const *src = signals_phase_src;
	const char *p = src ? *src : NULL;
	size_t i = 0;
	for (; p && p[i] && i + 1 < sizeof(signals_phase); i++)
		signals_phase[i] = p[i];
	signals_phase[i] = '\0';
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

void signals_child_reset(void)
{
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}
