/* csprng.c: the kernel's random numbers, a block at a time per thread. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "csprng.h"

/*
 * Per thread (each worker its own, no lock): the numbers read from the
 * kernel and not yet handed out; used == CSPRNG_BLOCK when there are
 * none. Each one is handed out once, then overwritten with zeros, so
 * that no number sent in a query stays behind in memory.
 */
static _Thread_local struct {
	uint8_t		buf[CSPRNG_BLOCK];
	size_t		used;
} pool = { .used = CSPRNG_BLOCK };

uint32_t
csprng_u32(void)
{
	uint32_t v;

	if (pool.used + sizeof(v) > CSPRNG_BLOCK) {
		arc4random_buf(pool.buf, sizeof(pool.buf));
		pool.used = 0;
	}
	memcpy(&v, pool.buf + pool.used, sizeof(v));
	memset(pool.buf + pool.used, 0, sizeof(v));
	pool.used += sizeof(v);
	return v;
}

uint32_t
csprng_uniform(uint32_t bound)
{
	uint32_t min, v;

	if (bound < 2)
		return 0;
	/* 2^32 mod bound, without 64-bit arithmetic: (2^32 - bound) mod
	 * bound. */
	min = -bound % bound;
	do
		v = csprng_u32();
	while (v < min);
	return v % bound;
}
