/*
 * prefetch.h: the policy of the background fetches that keep the cache
 * ahead of its clients, as pure functions of what the caller looked up:
 * when an entry asked for near the end of its life is due for a refresh,
 * and which addresses of SRV targets to fetch along with the SRV set.
 * query.c does the fetching.
 */
#ifndef DNSDAMPER_PREFETCH_H
#define DNSDAMPER_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "msg.h"
#include "zone.h"

/* Targets of one SRV set whose addresses are fetched, and the questions. */
#define PREFETCH_SRV_TARGETS	16
#define PREFETCH_SRV_QUESTIONS	(2 * PREFETCH_SRV_TARGETS)

/*
 * prefetch_window: how long (ms) before expiry an entry stored with a
 * lifetime of ttl seconds should be refreshed when asked for: the last
 * 10 % of its life (as Unbound's prefetch), widened to four of the best
 * current retransmission timeouts of zone's upstreams that are up (zone
 * may be NULL: none), so that a refresh that loses two attempts (the
 * second with a doubled timeout) still lands in time, but never more than
 * half its life.
 */
uint64_t prefetch_window(const struct zone *zone, uint32_t ttl);

/*
 * prefetch_may_be_due: 0 if prefetch_due is 0 for res whatever the zone
 * (more than half its life is left), else 1: a test without a zone
 * lookup, for every cache hit.
 */
int	prefetch_may_be_due(const struct cache_result *res);

/*
 * prefetch_point: how long (ms) before expiry the fresh entry that
 * cache_lookup found (res) becomes due for a refresh through zone (NULL:
 * none): a point of its prefetch window drawn for the entry when it was
 * stored (res->prefetch_point / 65536), uniform between the window's end
 * and four of the best retransmission timeouts before expiry (the lead a
 * refresh needs to land, WINDOW_RTOS; the whole window if that is less).
 * The first client query past that point refreshes it: hosts that stored
 * a name at the same time refresh it at different times, not at the first
 * query inside the window. An entry that ended a failed refresh
 * (res->after_failure: an outage is over, and every host refreshed its
 * names in the same few seconds) has its point drawn over the last half
 * of its life instead, once: its next refresh comes up to half a lifetime
 * early, which puts the names that came back together out of step for
 * good at the cost of one early refresh each.
 */
uint64_t prefetch_point(const struct zone *zone,
	    const struct cache_result *res);

/*
 * prefetch_due: 1 if an entry that cache_lookup found fresh (res) is due
 * for a background refresh through zone, its forward zone (NULL: none):
 * it has at most prefetch_point(zone, res) ms left. Else 0. Whether its
 * last refresh failed too recently is the caller's to check
 * (res->may_refresh, upstream_refresh_allowed).
 */
int	prefetch_due(const struct cache_result *res, const struct zone *zone);

/*
 * prefetch_srv_questions: the questions to fetch along with r, an answer
 * to the SRV question of key (nothing for any other qtype): A and AAAA
 * (in that order) of each target of its answer section's SRV records, at
 * most PREFETCH_SRV_TARGETS targets, skipping "." (RFC 2782: no service)
 * and malformed records, each qname folded and asked with key's DO and CD
 * bits, class IN, without EDNS. Writes them to out (room for
 * PREFETCH_SRV_QUESTIONS) and returns how many.
 */
size_t	prefetch_srv_questions(const struct msg_response *r,
	    const struct cache_key *key, struct msg_query *out);

/*
 * prefetch_target_due: 1 if one of those questions, whose cache lookup
 * gave res, should be fetched now through zone (NULL: none): only if a
 * client has asked for it (res->asked: the cache remembers per target
 * whether its A, its AAAA or both were asked), so that no address type
 * or target that no client uses is fetched; and unless its entry is fresh
 * and not yet within its own prefetch_window, when it is good for as
 * long as a refresh of it would be and fetching it again would only
 * double the traffic. Else 0.
 */
int	prefetch_target_due(const struct cache_result *res,
	    const struct zone *zone);

#endif
