/* base/thread.c: see base/thread.h. */
#include "base/thread.h"

#include <signal.h>

int thread_start(pthread_t *t, bool detached, void *(*fn)(void *), void *arg)
{
	pthread_t own;
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0)
		return -1;
	if (detached)
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(t ? t : &own, &a, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return rc == 0 ? 0 : -1;
}
