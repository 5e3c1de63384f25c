/* cachekey.c: the octets of a cache key, and its parts read back. */
#include "autoconf.h"

#include <string.h>

#include "cachekey.h"
#include "wire.h"

void
cachekey_fill(const struct msg_question *q, int do_bit, int cd_bit,
    struct cache_key *key)
{
	size_t n = q->qname_len;

	memcpy(key->data, q->qname, n);
	msg_name_fold(key->data, n);
	wire_wr16(key->data + n, q->qtype);
	wire_wr16(key->data + n + 2, q->qclass);
	key->data[n + 4] = (do_bit ? CACHEKEY_DO : 0) |
	    (cd_bit ? CACHEKEY_CD : 0);
	key->len = n + CACHE_KEY_TAIL;
}

uint16_t
cachekey_raw_qtype(const uint8_t *raw, size_t qlen)
{
	return wire_rd16(raw + qlen);
}

const uint8_t *
cachekey_qname(const struct cache_key *key, size_t *len)
{
	*len = key->len - CACHE_KEY_TAIL;
	return key->data;
}

uint16_t
cachekey_qtype(const struct cache_key *key)
{
	return cachekey_raw_qtype(key->data, key->len - CACHE_KEY_TAIL);
}

void
cachekey_question(const struct cache_key *key, struct msg_question *q)
{
	size_t n = key->len - CACHE_KEY_TAIL;

	memcpy(q->qname, key->data, n);
	q->qname_len = (uint8_t)n;
	q->qtype = cachekey_raw_qtype(key->data, n);
	q->qclass = wire_rd16(key->data + n + 2);
}

int
cachekey_do(const struct cache_key *key)
{
	return (key->data[key->len - 1] & CACHEKEY_DO) != 0;
}

int
cachekey_cd(const struct cache_key *key)
{
	return (key->data[key->len - 1] & CACHEKEY_CD) != 0;
}
