/*
 * csprng.h: random numbers for what an off-path attacker must not guess
 * (query IDs and 0x20 case, RFC 5452 §4, §9.2) and for random choices on
 * the query path: the kernel's CSPRNG (getrandom, through arc4random_buf),
 * read CSPRNG_BLOCK octets at a time per thread, since glibc's arc4random
 * makes a system call for every number (2.36), two or more per query.
 */
#ifndef DNSDAMPER_CSPRNG_H
#define DNSDAMPER_CSPRNG_H

#include <stdint.h>

#define CSPRNG_BLOCK	256	/* octets read from the kernel at once */

/* csprng_u32: 32 random bits. */
uint32_t csprng_u32(void);

/*
 * csprng_uniform: a random number in [0, bound), each value equally
 * likely (no modulo bias: draws below 2^32 mod bound are drawn again, as
 * OpenBSD's arc4random_uniform does). bound 0 or 1 gives 0.
 */
uint32_t csprng_uniform(uint32_t bound);

#endif
