/*
 * name.h: domain names in a DNS message (RFC 1035 §3.1, §4.1.4): one
 * walker over labels and compression pointers, bounds-checked, that skips
 * a name, validates it, or unpacks it. Names are wire format: length
 * octet, label, ..., the root label (a zero octet).
 */
#ifndef DNSDAMPER_NAME_H
#define DNSDAMPER_NAME_H

#include <stddef.h>
#include <stdint.h>

#define NAME_WIRE_MAX	255	/* octets of a whole name, RFC 1035 §3.1 */

/* What name_walk does with the name it walks. */
enum name_mode {
	NAME_SKIP,	/* find where it ends in place; follow no pointer */
	NAME_VALIDATE,	/* also follow its pointers and check all of it */
	NAME_UNPACK	/* also copy it out, uncompressed */
};

/*
 * name_walk: walk the name at offset off of pkt (len octets) in mode.
 * Labels must lie within len, be of type 0 (no 0x40/0x80 label types,
 * RFC 6891 §5) and add up to at most NAME_WIRE_MAX octets. NAME_SKIP
 * stops at the first pointer, so it cannot loop. NAME_VALIDATE and
 * NAME_UNPACK follow pointers to a prior occurrence of a name (RFC 1035
 * §4.1.4), which lies wholly before the pointer: a pointer must point
 * below itself, and past the header (its 12 octets hold no name, and are
 * rewritten for each client), and what it leads to must end below it;
 * so they cannot loop either. NAME_UNPACK writes the name to out
 * (NAME_WIRE_MAX octets, unused by the other modes, may be NULL). If
 * name_len is not NULL it gets the name's length in octets with the root
 * label: the whole name, or in NAME_SKIP mode the labels before its first
 * pointer.
 * Returns the offset just past the name where it stands (after its first
 * pointer, if any), or -1 if it is malformed, too long or runs past len.
 */
long	name_walk(const uint8_t *pkt, size_t len, size_t off,
	    enum name_mode mode, uint8_t *out, size_t *name_len);

/*
 * name_validate_marked: name_walk in NAME_VALIDATE mode, but no octet it
 * reads through a pointer may be marked in rewritten: a bitmap of
 * (len + 7) / 8 octets, bit i % 8 of octet i / 8 for offset i, marking
 * what changes on the way to a client (TTLs, the OPT record), so that
 * no name read there changes with it. Returns as name_walk.
 */
long	name_validate_marked(const uint8_t *pkt, size_t len, size_t off,
	    const uint8_t *rewritten);

/*
 * name_unpack: the name at off in pkt (len octets) uncompressed into out
 * (NAME_WIRE_MAX octets): name_walk in NAME_UNPACK mode. Returns its
 * length in octets, or -1 as name_walk.
 */
int	name_unpack(const uint8_t *pkt, size_t len, size_t off,
	    uint8_t *out);

#endif
