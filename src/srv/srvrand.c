/* srvrand.c: the seeded SplitMix64 source and the system random source. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#ifndef HAVE_ARC4RANDOM_BUF
#include <sys/random.h>
#endif

#include "dnsdamper/srvrand.h"

static uint64_t
splitmix64_next(void *arg)
{
	struct srvrand_seeded *s = arg;
	uint64_t z = (s->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void
srvrand_seeded(struct srvrand_seeded *s, uint64_t seed,
    struct srv_random *out)
{
	s->state = seed;
	out->next = splitmix64_next;
	out->state = s;
}

static uint64_t
system_next(void *arg)
{
	uint64_t v;
#ifdef HAVE_ARC4RANDOM_BUF
	arc4random_buf(&v, sizeof(v));
#else
	unsigned char *p = (unsigned char *)&v;
	size_t got = 0;
	ssize_t r;

	while (got < sizeof(v)) {
		if ((r = getrandom(p + got, sizeof(v) - got, 0)) > 0)
			got += (size_t)r;
		else if (r == -1 && errno != EINTR)
			abort();
	}
#endif
	(void)arg;
	return v;
}

void
srvrand_system(struct srv_random *out)
{
	out->next = system_next;
	out->state = NULL;
}
