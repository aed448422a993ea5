/* gate/node/clock.h: the monotonic clock gate measures waits and phases with. */
#ifndef GATE_CLOCK_H
#define GATE_CLOCK_H

#include <time.h>

static inline long long clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline long long clock_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
