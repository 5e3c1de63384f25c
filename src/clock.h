/* clock.h: monotonic time in ms, read once per callback; ms as a timeval. */
#ifndef DNSDAMPER_CLOCK_H
#define DNSDAMPER_CLOCK_H

#include <sys/time.h>

#include <stdint.h>

/*
 * clock_now_ms: CLOCK_MONOTONIC in milliseconds since an arbitrary epoch,
 * plus CLOCK_OFFSET_MS, so that it is never below 2^40 ms (35 years) and an
 * age read from the cache file can be subtracted from it even just after
 * boot. Callers read it once at the top of an event callback and pass the
 * value down, so that every decision in one callback sees the same instant.
 */
#define CLOCK_OFFSET_MS	(1ULL << 40)

uint64_t	clock_now_ms(void);

/*
 * clock_wall_s / clock_wall_ms: CLOCK_REALTIME in seconds or milliseconds
 * since the Unix epoch; only for what outlives the process (start time,
 * the cache file), never for expiry.
 */
int64_t		clock_wall_s(void);
int64_t		clock_wall_ms(void);

/*
 * clock_ms_to_tv: a duration of ms milliseconds as a struct timeval
 * (seconds and microseconds), as libevent's timers take it.
 */
struct timeval clock_ms_to_tv(uint64_t ms);

#endif
