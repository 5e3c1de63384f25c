/* name.c: the one walker over a message's names and compression pointers. */
#include "autoconf.h"

#include <string.h>

#include "name.h"
#include "wire.h"

#define LABEL_MAX	63	/* octets, RFC 1035 §3.1 */
/* A length octet above LABEL_MAX with both top bits set is a pointer
 * (RFC 1035 §4.1.4), its other 14 bits an offset; with one, an obsolete
 * label type. */
#define POINTER_BITS	0xc0
#define POINTER_OFFSET	0x3fff
/* A message's header (RFC 1035 §4.1.1) holds no name for a pointer to
 * point to; and what is there changes on the way to a client (ID, flags,
 * counts), so a name read through it would change with it. */
#define HEADER_LEN	12

/* None of the n octets at off is marked in rewritten (or it is NULL). */
static int
unmarked(const uint8_t *rewritten, size_t off, size_t n)
{
	if (rewritten == NULL)
		return 1;
	for (; n > 0; off++, n--)
		if (rewritten[off / 8] & (1U << (off % 8)))
			return 0;
	return 1;
}

/* name_walk, and with rewritten name_validate_marked's rule. */
static long
walk(const uint8_t *pkt, size_t len, size_t off, enum name_mode mode,
    uint8_t *out, size_t *name_len, const uint8_t *rewritten)
{
	size_t n = 0, bound = len, target;
	long end = -1;
	uint8_t c;

	for (;;) {
		if (off >= bound)
			return -1;
		c = pkt[off];
		if (c > LABEL_MAX) {
			if ((c & POINTER_BITS) != POINTER_BITS ||
			    off + 2 > bound ||
			    (end != -1 && !unmarked(rewritten, off, 2)))
				return -1;
			if (end == -1)
				end = (long)(off + 2);
			if (mode == NAME_SKIP)
				break;
			target = wire_rd16(pkt + off) & POINTER_OFFSET;
			/*
			 * A prior occurrence lies wholly before the pointer
			 * to it: each jump lands lower and reads only below
			 * the pointer it followed, so no loop is possible,
			 * nor a name that runs on past the one pointed to.
			 */
			if (target >= off || target < HEADER_LEN)
				return -1;
			bound = off;
			off = target;
			continue;
		}
		if (n + c + 1 > NAME_WIRE_MAX || off + c + 1 > bound ||
		    (end != -1 && !unmarked(rewritten, off, (size_t)c + 1)))
			return -1;
		if (mode == NAME_UNPACK)
			memcpy(out + n, pkt + off, (size_t)c + 1);
		n += (size_t)c + 1;
		off += (size_t)c + 1;
		if (c == 0)
			break;
	}
	if (name_len != NULL)
		*name_len = n;
	return end != -1 ? end : (long)off;
}

long
name_walk(const uint8_t *pkt, size_t len, size_t off, enum name_mode mode,
    uint8_t *out, size_t *name_len)
{
	return walk(pkt, len, off, mode, out, name_len, NULL);
}

long
name_validate_marked(const uint8_t *pkt, size_t len, size_t off,
    const uint8_t *rewritten)
{
	return walk(pkt, len, off, NAME_VALIDATE, NULL, NULL, rewritten);
}

int
name_unpack(const uint8_t *pkt, size_t len, size_t off, uint8_t *out)
{
	size_t n;

	if (name_walk(pkt, len, off, NAME_UNPACK, out, &n) == -1)
		return -1;
	return (int)n;
}
