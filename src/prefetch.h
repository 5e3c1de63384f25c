/*
 * prefetch.h: background fetches that keep the cache ahead of its
 * clients: refreshing an entry asked for near the end of its life, and
 * fetching the addresses of SRV targets along with the SRV set.
 */
#ifndef DNSDAMPER_PREFETCH_H
#define DNSDAMPER_PREFETCH_H

#include <stdint.h>

#include "cache.h"
#include "msg.h"
#include "zone.h"

struct query_ctx;

/*
 * prefetch_window: how long (ms) before expiry an entry stored with a
 * lifetime of ttl seconds should be refreshed when asked for: the last
 * 10 % of its life (as Unbound's prefetch), widened to four of the
 * zone's current best retransmission timeouts, so that a refresh that
 * loses two attempts (the second with a doubled timeout) still lands in
 * time, but never more than half its life.
 */
uint64_t prefetch_window(const struct zone *zone, uint32_t ttl);

/*
 * prefetch_maybe: a client was answered from entry key (res: fresh) at
 * now; start a background refresh of it (q's question, DO and CD) if
 * prefetch is on, its last refresh did not just fail, and it is within
 * prefetch_window of expiry. Counts the prefetch.
 */
void	prefetch_maybe(struct query_ctx *ctx, const struct msg_query *q,
	    const struct cache_key *key, const struct cache_result *res,
	    uint64_t now);

/*
 * prefetch_srv_targets: r answered an SRV question asked with the DO and
 * CD bits of key; fetch in the background the A and AAAA of each target
 * (at most 16) unless cached, fresh and not yet in its own prefetch
 * window, so that a client's next lookup is a hit and a stale SRV set is
 * not left without addresses. No-op unless srv-prefetch-targets.
 */
void	prefetch_srv_targets(struct query_ctx *ctx, const struct msg_response *r,
	    const struct cache_key *key, uint64_t now);

#endif
