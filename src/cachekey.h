/*
 * cachekey.h: the layout of a cache key: the qname folded to lower case
 * (RFC 4343), qtype and qclass in network order, then one octet of the DO
 * (RFC 3225) and CD (RFC 4035 §3.2.2) bits it was asked with; and the
 * parts read back from it. The hash that goes with it is the cache's
 * (cache_key_make, cache_key_load in cache.h).
 */
#ifndef DNSDAMPER_CACHEKEY_H
#define DNSDAMPER_CACHEKEY_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

/* qname (folded), then qtype, qclass and one octet of DO and CD bits. */
#define CACHE_KEY_TAIL	(MSG_QTYPE_QCLASS_LEN + 1)
#define CACHE_KEY_MAX	(MSG_NAME_MAX + CACHE_KEY_TAIL)

/* The bits of a key's last octet. */
#define CACHEKEY_DO	1
#define CACHEKEY_CD	2

struct cache_key {
	uint8_t		data[CACHE_KEY_MAX];
	size_t		len;		/* octets of data used */
	uint64_t	hash;		/* the cache's hash of them */
};

/*
 * cachekey_fill: the octets of the key of question q (borrowed) asked
 * with the given DO and CD bits, into key->data and key->len; key->hash
 * is left alone.
 */
void	cachekey_fill(const struct msg_question *q, int do_bit, int cd_bit,
	    struct cache_key *key);

/*
 * The parts of a key. cachekey_qname: its qname, folded, uncompressed
 * wire of *len octets (the root label included), pointing into key.
 * cachekey_question: that qname, qtype and qclass (host order) copied
 * into *q. cachekey_qtype: its qtype (host order). cachekey_do,
 * cachekey_cd: 1 if it was asked with the DO bit or the CD bit, else 0.
 */
const uint8_t *cachekey_qname(const struct cache_key *key, size_t *len);
uint16_t cachekey_qtype(const struct cache_key *key);
void	cachekey_question(const struct cache_key *key, struct msg_question *q);
int	cachekey_do(const struct cache_key *key);
int	cachekey_cd(const struct cache_key *key);

/* cachekey_raw_qtype: the qtype (host order) of key octets raw whose
 * qname is qlen octets long. */
uint16_t cachekey_raw_qtype(const uint8_t *raw, size_t qlen);

#endif
