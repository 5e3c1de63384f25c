/*
 * wire.h: network byte order (RFC 1035 §2.3.2: most significant octet
 * first) for the 16- and 32-bit fields of DNS messages, the cache file and
 * TCP framing, read and written in place.
 */
#ifndef DNSDAMPER_WIRE_H
#define DNSDAMPER_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* wire_rd16: the big-endian 16-bit value in the 2 octets at p. */
static inline uint16_t
wire_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* wire_rd32: the big-endian 32-bit value in the 4 octets at p. */
static inline uint32_t
wire_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/*
 * wire_wr16: write v big-endian into the 2 octets at p. Returns 2, so
 * that a message can be built with `n += wire_wr16(p + n, v)`.
 */
static inline size_t
wire_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

/* wire_wr32: write v big-endian into the 4 octets at p. Returns 4. */
static inline size_t
wire_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

#endif
