/*
 * testhashkey.h: the same hash keys in every run, for tests of which
 * entry a table evicts (its ghost's fingerprints are bits of keyed
 * hashes). Included by one file of a test linked with
 * -Wl,--wrap=arc4random_buf: every table still gets a key of its own.
 */
#ifndef DNSDAMPER_TESTHASHKEY_H
#define DNSDAMPER_TESTHASHKEY_H

#include <stddef.h>
#include <stdint.h>

void	__wrap_arc4random_buf(void *buf, size_t n);

/* A 64-bit LCG (Knuth's MMIX constants), from a fixed start. */
void
__wrap_arc4random_buf(void *buf, size_t n)
{
	static uint64_t x = 0x243f6a8885a308d3ULL;
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		p[i] = (unsigned char)(x >> 56);
	}
}

#endif
