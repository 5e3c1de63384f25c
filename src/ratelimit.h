/*
 * ratelimit.h: a query rate limit per client address: a token bucket for
 * each address, kept in a table of bounded size, and BIND's "slip" for
 * the queries over the limit (every Nth of them answered with TC=1 so a
 * real client retries over TCP, the others dropped). Time is a parameter
 * (monotonic ms); nothing here knows DNS. One table serves every worker
 * thread, under its own lock: SO_REUSEPORT spreads one client's source
 * ports over the workers, and a table each would multiply the limit.
 */
#ifndef DNSDAMPER_RATELIMIT_H
#define DNSDAMPER_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"

struct ratelimit;

enum ratelimit_verdict {
	RATELIMIT_PASS,		/* within the limit */
	RATELIMIT_DROP,		/* over it: no answer */
	RATELIMIT_SLIP		/* over it, but this one gets a truncated
				 * answer */
};

struct ratelimit_stats {
	uint64_t	tracked;	/* addresses in the table now */
	uint64_t	evictions;	/* addresses dropped from the table to
					 * make room for another */
};

/*
 * ratelimit_new: a table of token buckets for at most size client
 * addresses (at least 1): a new address beyond that takes the place of
 * one seen only once if there is one (evict.h). The rate and slip are
 * not the table's but each check's (ratelimit_check), so that every
 * worker applies those of the configuration it serves with, whatever
 * another has swapped to. Returns NULL if out of memory.
 */
struct ratelimit *ratelimit_new(size_t size);

/*
 * ratelimit_resize: a new table for size addresses (a reload), its
 * addresses forgotten; the same size keeps the table and its buckets.
 * Returns 0, or -1 if out of memory for the new table: the old one stays.
 */
int	ratelimit_resize(struct ratelimit *rl, size_t size);

/* ratelimit_size: the most addresses rl tracks. */
size_t	ratelimit_size(struct ratelimit *rl);

/*
 * ratelimit_check: take a token for a query from client (its address;
 * the port is ignored, an IPv4-mapped IPv6 address is the IPv4 one) at
 * now (ms), at a limit of qps queries a second with bursts of up to qps
 * (one second's worth: a bucket holds qps tokens, refilled at qps a
 * second, and a query takes one), slipping every slip-th query over it
 * (0: none). A bucket fuller than qps allows (a lower rate since it was
 * filled) is emptied down to it. RATELIMIT_PASS if there was a token;
 * else the query is over the limit, and the n-th over it since the
 * address last passed is RATELIMIT_SLIP when n is a multiple of slip,
 * RATELIMIT_DROP otherwise. A qps of 0 (no limit) and a client the
 * table has no room for (out of memory) pass, the table untouched.
 */
enum ratelimit_verdict ratelimit_check(struct ratelimit *rl,
	    const struct addr *client, uint32_t qps, uint32_t slip,
	    uint64_t now);

/* ratelimit_stats: how full rl's table is, and how many were evicted. */
void	ratelimit_stats(struct ratelimit *rl, struct ratelimit_stats *out);

/* ratelimit_free: free rl. NULL is allowed. */
void	ratelimit_free(struct ratelimit *rl);

#endif
