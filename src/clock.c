/* clock.c: the daemon's only calls to clock_gettime, and ms as a timeval. */
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

struct timeval
clock_ms_to_tv(uint64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	return tv;
}
