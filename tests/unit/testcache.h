/* testcache.h: cache keys and entries for unit tests, from names. */
#ifndef DNSDAMPER_TESTCACHE_H
#define DNSDAMPER_TESTCACHE_H

#include <check.h>

#include "cache.h"
#include "msg.h"
#include "testpkt.h"

/* testcache_key: the key in c of (qname, qtype), DO and CD clear. */
static inline void
testcache_key(struct cache *c, const char *qname, ldns_rr_type qtype,
    struct cache_key *key)
{
	struct testpkt t = testpkt_query(qname, qtype, LDNS_RD, 0, 0);
	struct msg_query q;

	ck_assert_int_eq(msg_parse_query(t.wire, t.len, &q), MSG_PARSE_OK);
	cache_key_make(c, &q.q, 0, 0, key);
	testpkt_free(&t);
}

/*
 * testcache_store: store resp (a testpkt_response, freed here) in c as the
 * answer to (qname, qtype) at now (ms); cache_insert's result.
 */
static inline int
testcache_store(struct cache *c, const char *qname, ldns_rr_type qtype,
    struct testpkt resp, uint64_t now)
{
	struct msg_response r;
	struct cache_key key;
	int rc;

	testcache_key(c, qname, qtype, &key);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	rc = cache_insert(c, &key, cache_entry_new(c, &r, now));
	msg_response_free(&r);
	testpkt_free(&resp);
	return rc;
}

#endif
