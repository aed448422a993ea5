/* base/thread.h: a thread of gate's own, started with every signal blocked. */
#ifndef GATE_BASE_THREAD_H
#define GATE_BASE_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* Starts fn(arg) on a new thread (detached: nobody joins it; *t may then be NULL) with every
 * signal blocked, so that a SIGINT or SIGTERM for gate goes to the thread that waits on the
 * node, whose wait it cuts short. Returns 0, or -1 when no thread could be started. */
int thread_start(pthread_t *t, bool detached, void *(*fn)(void *), void *arg);

#endif
