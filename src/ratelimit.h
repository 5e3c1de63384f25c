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
 * ratelimit_new: a limit of qps queries a second (at least 1) for each
 * client address, with bursts of up to qps queries (one second's worth:
 * the bucket holds qps tokens, refilled at qps a second, and a query takes
 * one), slipping every slip-th query over the limit (0: none), tracking
 * at most size addresses (at least 1): a new address beyond that takes
 * the place of one seen only once if there is one (evict.h). Returns
 * NULL if out of memory.
 */
struct ratelimit *ratelimit_new(uint32_t qps, uint32_t slip, size_t size);

/*
 * ratelimit_configure: change the rate and slip of rl (as in
 * ratelimit_new; a qps of 0 is kept, for a caller that does not ask while
 * it is 0): tracked addresses keep their tokens, up to the new bucket
 * size; and with a new size, a new table (its addresses forgotten).
 * Returns 0, or -1 if out of memory for the new table: the old one stays,
 * with the new rate and slip.
 */
int	ratelimit_configure(struct ratelimit *rl, uint32_t qps, uint32_t slip,
	    size_t size);

/* ratelimit_size: the most addresses rl tracks. */
size_t	ratelimit_size(struct ratelimit *rl);

/*
 * ratelimit_check: take a token for a query from client (its address;
 * the port is ignored, an IPv4-mapped IPv6 address is the IPv4 one) at
 * now (ms). RATELIMIT_PASS if there was one; else the query is over the
 * limit, and the n-th over it since the address last passed is
 * RATELIMIT_SLIP when n is a multiple of the slip, RATELIMIT_DROP
 * otherwise. A client the table has no room for (out of memory) passes.
 */
enum ratelimit_verdict ratelimit_check(struct ratelimit *rl,
	    const struct addr *client, uint64_t now);

/* ratelimit_stats: how full rl's table is, and how many were evicted. */
void	ratelimit_stats(struct ratelimit *rl, struct ratelimit_stats *out);

/* ratelimit_free: free rl. NULL is allowed. */
void	ratelimit_free(struct ratelimit *rl);

#endif
