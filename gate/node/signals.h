/* gate/node/signals.h: SIGINT/SIGTERM/SIGHUP turned into a flag the waiting loops check. */
#ifndef GATE_SIGNALS_H
#define GATE_SIGNALS_H

#include <signal.h>

/* The first signal caught, or 0. */
extern volatile sig_atomic_t signals_caught;

/* Where the current phase's name lives (e.g. &session->phase), or NULL; the handler copies
 * that name into signals_phase when it catches the first signal ("" when there was none). */
extern const char *const *volatile signals_phase_src;
extern char signals_phase[128];

/* Installs the handlers (no SA_RESTART, so blocking calls return EINTR) and ignores SIGPIPE. */
void signals_install(void);

/* In a child gate forked, before exec: a process group of its own, no blocked signals and
 * the default handlers, so that gate can stop the child and all it starts as one group. */
void signals_child_reset(void);

#endif
