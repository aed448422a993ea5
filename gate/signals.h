/* gate/signals.h: SIGINT/SIGTERM/SIGHUP turned into a flag the waiting loops check. */
#ifndef GATE_SIGNALS_H
#define GATE_SIGNALS_H

#include <signal.h>

/* The first signal caught, or 0. */
extern volatile sig_atomic_t signals_caught;

/* Installs the handlers (no SA_RESTART, so blocking calls return EINTR) and ignores SIGPIPE. */
void signals_install(void);

/* In a child gate forked, before exec: a process group of its own, no blocked signals and
 * the default handlers, so that gate can stop the child and all it starts as one group. */
void signals_child_reset(void);

#endif
