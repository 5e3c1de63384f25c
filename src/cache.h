/*
 * cache.h: DNS cache semantics: the key, positive / NXDOMAIN / NODATA /
 * failure entries, and the TTL arithmetic of RFC 1035, RFC 2181 §8,
 * RFC 2308 §5, RFC 9520 and RFC 8767. Storage and locking are lruhash's.
 * Every time argument is monotonic milliseconds (clock_now_ms).
 */
#ifndef DNSDAMPER_CACHE_H
#define DNSDAMPER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cachekey.h"
#include "lruhash.h"
#include "msg.h"

enum cache_kind {
	CACHE_POSITIVE,		/* an answer, possibly through CNAMEs */
	CACHE_NXDOMAIN,		/* RFC 2308 §5 */
	CACHE_NODATA,		/* RFC 2308 §5 */
	CACHE_FAILURE,		/* RFC 9520: all upstreams failed */
	CACHE_UNCACHEABLE	/* an answer to pass on but never store */
};

/* The configured TTL bounds and stale rules, all in seconds. */
struct cache_limits {
	uint32_t	min_ttl;
	uint32_t	max_ttl;
	uint32_t	max_negative_ttl;
	uint32_t	failure_ttl;
	uint32_t	stale_max_age;	/* 0: expired entries are dropped */
	uint32_t	stale_answer_ttl;
	uint32_t	stale_refresh_interval;
};

struct cache;
struct cache_entry;

/*
 * cache_new: an empty cache holding at most size_bytes (entries are
 * charged their wire length plus bookkeeping: the allocation, its malloc
 * overhead, and a bucket pointer), with the given limits (copied).
 * Returns NULL if out of memory.
 */
struct cache *cache_new(uint64_t size_bytes, const struct cache_limits *lim);

/* cache_free: free the cache and every entry. NULL is allowed. */
void	cache_free(struct cache *c);

/* cache_set_limits: use new TTL bounds for entries stored from now on;
 * safe while other threads use the cache (each limit is an atomic). */
void	cache_set_limits(struct cache *c, const struct cache_limits *lim);

/*
 * cache_key_make: the key of question q asked with the given DO and CD
 * bits (cachekey.h's layout: the qname folded to lower case, RFC 4343,
 * qtype, qclass, bits), with c's hash of it. Its parts are read back with
 * cachekey.h's functions.
 */
void	cache_key_make(const struct cache *c, const struct msg_question *q,
	    int do_bit, int cd_bit, struct cache_key *key);

/*
 * cache_entry_new: an entry built from upstream response r (borrowed)
 * received at now: the message without its OPT, each RR's TTL clamped to
 * [min-ttl, max-ttl] (RFC 2181 §8), for NXDOMAIN and NODATA the SOA's TTL
 * set to min(SOA TTL, SOA MINIMUM) and every TTL capped by
 * max-negative-ttl (RFC 2308 §5); its lifetime is the smallest TTL of
 * its answer and authority sections (glue ages out alone, floored at 0).
 * An answer with a zero TTL there, a negative answer without SOA, any rcode
 * other than NOERROR and NXDOMAIN give a CACHE_UNCACHEABLE entry, usable
 * for answering but refused by cache_insert. r must be classified ANSWER,
 * NXDOMAIN, NODATA or OTHER. Returns NULL if out of memory or malformed.
 * The caller owns the entry until cache_insert.
 */
struct cache_entry *cache_entry_new(const struct cache *c,
	    const struct msg_response *r, uint64_t now);

/* cache_entry_kind: what e holds. */
enum cache_kind cache_entry_kind(const struct cache_entry *e);

/*
 * cache_entry_set_asked: a client asked for e's question (it waited for
 * the fetch that made e); cache_insert keeps that bit across the entries
 * that replace e, and cache_result.asked reports it.
 */
void	cache_entry_set_asked(struct cache_entry *e);

/*
 * cache_entry_answer: write e's answer to q into out (capacity cap) as of
 * now: TTLs decremented by the whole seconds since it was stored, floored
 * at 0; see msg_write_answer for flags, OPT and truncation. Returns the
 * length written, or 0 if cap is below MSG_ERROR_MAX_LEN.
 */
size_t	cache_entry_answer(const struct cache_entry *e,
	    const struct msg_query *q, const struct msg_reply_opts *opts,
	    uint64_t now, uint8_t *out, size_t cap);

/* cache_entry_free: free an entry the caller still owns. */
void	cache_entry_free(struct cache_entry *e);

/*
 * cache_insert: store e under key, taking ownership in every case. key
 * must be the key of e's own question (cache_key_make of the question
 * r asked, with the DO and CD bits it was asked with): the entry keeps
 * it, not a copy of key. CACHE_UNCACHEABLE entries, and entries whose
 * question is not key's, are freed, not stored. Returns 0 if stored, -1
 * if not.
 */
int	cache_insert(struct cache *c, const struct cache_key *key,
	    struct cache_entry *e);

/*
 * cache_refresh_failed: resolving key failed at now. An entry still
 * servable (fresh, or stale within stale-max-age) is kept and remembers
 * the failure (RFC 8767 §5: refreshes of it then wait
 * stale-refresh-interval); otherwise the failure itself is cached for
 * failure-ttl (RFC 9520 §3.2). A failure never replaces an answer.
 */
void	cache_refresh_failed(struct cache *c, const struct cache_key *key,
	    uint64_t now);

enum cache_state {
	CACHE_ABSENT,		/* nothing usable: resolve it */
	CACHE_FRESH,		/* a live entry */
	CACHE_STALE,		/* expired, within stale-max-age (RFC 8767) */
	CACHE_FAILED		/* a recent failure: answer SERVFAIL */
};

struct cache_result {
	enum cache_state	state;
	enum cache_kind		kind;	/* of the entry found */
	size_t			len;	/* answer written to out */
	uint64_t		expires_in;	/* FRESH: ms left */
	uint32_t		ttl;	/* lifetime it was stored with, s */
	int			refresh_failed;	/* its last refresh failed */
	uint64_t		failed_at;	/* then, ms (0 if it did not);
						 * FAILED: when the failure was
						 * stored */
	uint64_t		expired_at;	/* ms it expired (STALE) */
	int			may_refresh;	/* not within its failure
						 * recheck time of that failure:
						 * stale-refresh-interval times
						 * [3/4, 5/4), drawn per entry */
	uint16_t		prefetch_point;	/* of 65536: where in its
						 * prefetch window the entry is
						 * due, drawn when stored */
	int			asked;		/* a client asked for it, this
						 * entry or one it replaced */
	int			after_failure;	/* it replaced an entry whose
						 * last refresh had failed */
};

/*
 * cache_lookup: look key up at now. A fresh entry's answer to q is
 * written into out (capacity cap, see cache_entry_answer); a stale one's
 * with every TTL set to stale-answer-ttl (RFC 8767 §4) and, if the client
 * sent EDNS, an EDE "Stale Answer" (RFC 8914 §4.4). With out NULL nothing
 * is written (a peek); a lookup that writes is a client's: it marks the
 * entry asked, and is a hit that keeps it from eviction. Entries past stale-max-age, and failures past failure-ttl,
 * are removed. Fills *res.
 */
void	cache_lookup(struct cache *c, const struct cache_key *key,
	    const struct msg_query *q, const struct msg_reply_opts *opts,
	    uint64_t now, uint8_t *out, size_t cap, struct cache_result *res);

struct cache_stats {
	uint64_t	entries;
	uint64_t	bytes;		/* charged, see lruhash_insert */
	uint64_t	max_bytes;	/* cache-size */
	uint64_t	evictions;	/* to stay within cache-size: */
	uint64_t	evictions_probation; /* of entries not asked again
					 * since stored (lruhash.h) */
	uint64_t	evictions_main;	/* of entries asked again */
};

/* cache_stats: the figures above, read from counters (no walk). */
void	cache_stats(struct cache *c, struct cache_stats *out);

/*
 * cache_flush: remove entries: every one (name NULL); those whose qname is
 * name (wire, folded to lower case, name_len octets), of qtype only if
 * qtype is not 0; or, with subtree, those whose qname is name or below it.
 * Returns how many were removed.
 */
uint64_t cache_flush(struct cache *c, const uint8_t *name, size_t name_len,
	    uint16_t qtype, int subtree);

/*
 * cache_flush_if: remove every entry whose question keep() says 0 for:
 * qname (wire, folded, len octets) and qtype (host order); keep gets arg.
 * Returns how many were removed.
 */
uint64_t cache_flush_if(struct cache *c,
	    int (*keep)(const uint8_t *qname, size_t len, uint16_t qtype,
	    void *arg), void *arg);

/*
 * cache_slices: how many slices the cache's entries fall into, for the
 * *_slice walks below (each entry is in exactly one). A slice is a small
 * part of the cache, so that walking the whole cache can be spread over
 * turns of the event loop.
 */
unsigned cache_slices(const struct cache *c);

/*
 * cache_stale_slice: how many entries of slice i (< cache_slices) are
 * expired but still servable stale at now (ms; RFC 8767 §5: within
 * stale-max-age).
 */
uint64_t cache_stale_slice(struct cache *c, unsigned i, uint64_t now);

/*
 * One entry as plain data, for walks (the cache file, the /cache dump) and
 * for cache_import: times are ages, so that it can move to another clock.
 */
struct cache_record {
	const struct cache_key *key;
	enum cache_kind	 kind;
	uint64_t	 age;		/* ms since it was stored */
	uint32_t	 ttl;		/* lifetime, s (expired at age
					 * ttl * 1000 ms) */
	uint64_t	 failed_age;	/* ms since its refresh failed, or
					 * 0 if it did not */
	const uint32_t	*ttls;		/* stored TTL of each RR, s */
	size_t		 n_ttls;
	const uint8_t	*wire;		/* the message without OPT, its
					 * qname folded, its TTL fields the
					 * stored TTLs; NULL for a failure */
	size_t		 wire_len;
};

/*
 * cache_walk_slice: call fn(rec, arg) for every entry of slice i (<
 * cache_slices) still of use at now: answers fresh or servable stale
 * (within stale-max-age), and failures not yet expired. The record and
 * everything it points to are valid during the call only; fn must not
 * call back into the cache.
 */
void	cache_walk_slice(struct cache *c, unsigned i, uint64_t now,
	    void (*fn)(const struct cache_record *rec, void *arg), void *arg);

/*
 * cache_key_load: the key whose octets (as a record's key->data) are raw,
 * len of them, into *key, hash included. Returns 0, or -1 if raw is not
 * an uncompressed domain name followed by qtype, qclass and bits.
 */
int	cache_key_load(const struct cache *c, const uint8_t *raw, size_t len,
	    struct cache_key *key);

/*
 * cache_import: store rec as if it had been stored rec->age ms before now,
 * after checking it again, for it may come from a file: a positive,
 * NXDOMAIN or NODATA entry whose message parses without an OPT, is of
 * that kind by its rcode and records (RFC 2308 §2), has one TTL per RR
 * and asks the question of its key, and is still servable at now. Every
 * TTL is stored by the rules of cache_entry_new with the limits in force
 * (max-ttl, max-negative-ttl...), and no longer than rec's; rec->ttl is
 * not used, the lifetime is worked out again from those. An entry of the
 * same key already in c stays if it was stored after rec's time and is
 * no failure: an import never replaces what was fetched since. Returns
 * 0 if stored, -1 if refused (or out of memory, or a newer entry kept).
 */
int	cache_import(struct cache *c, const struct cache_record *rec,
	    uint64_t now);

#endif
