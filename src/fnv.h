/* fnv.h: FNV-1a 64 (Fowler, Noll, Vo), a fast non-cryptographic hash. */
#ifndef DNSDAMPER_FNV_H
#define DNSDAMPER_FNV_H

#include <stddef.h>
#include <stdint.h>

/* The hash of no bytes: where every FNV-1a 64 hash starts. */
#define FNV1A64_INIT	0xcbf29ce484222325ULL

/*
 * fnv1a64: hash h (FNV1A64_INIT, or the result of an earlier call, to
 * hash a sequence in pieces) continued over the n bytes at p. Stable
 * across runs and hosts: never use it where an attacker picks the input
 * and collisions would hurt.
 */
static inline uint64_t
fnv1a64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

#endif
