/* clock.c: the daemon's only calls to clock_gettime. */
#include "autoconf.h"

#include <time.h>

#include "clock.h"

uint64_t
clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return CLOCK_OFFSET_MS + (uint64_t)ts.tv_sec * 1000 +
	    (uint64_t)ts.tv_nsec / 1000000;
}

int64_t
clock_wall_s(void)
{
	return clock_wall_ms() / 1000;
}

int64_t
clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
