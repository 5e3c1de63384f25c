/* prefetch.c: refreshes before expiry, and SRV target addresses. */
#include "autoconf.h"

#include <string.h>

#include "fetch.h"
#include "prefetch.h"
#include "query.h"

#define SRV_TARGETS_MAX		16
/* A refresh with two lost attempts still lands: R, then 2R, then R. */
#define WINDOW_RTOS		4

uint64_t
prefetch_window(const struct zone *zone, uint32_t ttl)
{
	uint64_t life = (uint64_t)ttl * 1000, window = life / 10, rto = 0;
	size_t i;

	for (i = 0; zone != NULL && i < zone->n_upstreams; i++)
		if (!zone->upstreams[i]->down && (rto == 0 ||
		    upstream_rto(zone->upstreams[i]) < rto))
			rto = upstream_rto(zone->upstreams[i]);
	if (window < WINDOW_RTOS * rto)
		window = WINDOW_RTOS * rto;
	return window < life / 2 ? window : life / 2;
}

/*
 * Resolve q in the background, for the cache alone. Returns 0 if that
 * started a fetch (a prefetch to count), -1 if one was running already or
 * none may start.
 */
static int
refresh(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, uint64_t now)
{
	struct zone *zone;

	zone = zone_find(ctx->zones, key->data, q->q.qname_len);
	if (zone == NULL)
		return -1;
	return fetch_join(ctx->fetches, key, q, ctx->zones, zone, now,
	    NULL) == 1 ? 0 : -1;
}

void
prefetch_maybe(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, const struct cache_result *res,
    uint64_t now)
{
	struct zone *zone;

	/* Cheap test first: no window is more than half the life. */
	if (!ctx->conf->prefetch || !res->may_refresh ||
	    res->expires_in > (uint64_t)res->ttl * 500)
		return;
	zone = zone_find(ctx->zones, key->data, q->q.qname_len);
	if (res->expires_in > prefetch_window(zone, res->ttl))
		return;
	if (refresh(ctx, q, key, now) == 0)
		ctx->metrics.prefetches++;
}

/* The question (target, qtype) asked with key's DO and CD bits. */
static void
target_query(const uint8_t *target, size_t len, uint16_t qtype,
    const struct cache_key *key, struct msg_query *q)
{
	uint8_t bits = key->data[key->len - 1];

	memset(q, 0, sizeof(*q));
	memcpy(q->q.qname, target, len);
	q->q.qname_len = (uint8_t)len;
	q->q.qtype = qtype;
	q->q.qclass = MSG_CLASS_IN;
	q->edns.do_bit = (bits & 1) != 0;
	q->flags = (bits & 2) ? MSG_FLAG_CD : 0;
}

/*
 * Fetch a target's address unless it is fresh and not yet due for a
 * refresh of its own: then it is good for as long as a refresh of it
 * would be, and fetching it again would only double the traffic.
 */
static void
fetch_target(struct query_ctx *ctx, const uint8_t *target, size_t len,
    uint16_t qtype, const struct cache_key *srv_key, uint64_t now)
{
	struct cache_result res;
	struct cache_key key;
	struct msg_query q;

	target_query(target, len, qtype, srv_key, &q);
	msg_name_fold(q.q.qname, len);
	cache_key_make(ctx->cache, &q.q, q.edns.do_bit,
	    (q.flags & MSG_FLAG_CD) != 0, &key);
	cache_lookup(ctx->cache, &key, &q, NULL, now, NULL, 0, &res);
	if (res.state == CACHE_FRESH && res.expires_in > prefetch_window(
	    zone_find(ctx->zones, key.data, len), res.ttl))
		return;
	if (refresh(ctx, &q, &key, now) == 0)
		ctx->metrics.prefetches++;
}

void
prefetch_srv_targets(struct query_ctx *ctx, const struct msg_response *r,
    const struct cache_key *key, uint64_t now)
{
	uint8_t target[MSG_NAME_MAX];
	const struct msg_rr *rr;
	size_t i, done = 0;
	int len;

	if (!ctx->conf->srv_prefetch_targets ||
	    r->q.qtype != MSG_TYPE_SRV)
		return;
	for (i = 0; i < r->n_rrs && done < SRV_TARGETS_MAX; i++) {
		rr = &r->rrs[i];
		/* RFC 2782: priority, weight, port, then the target. */
		if (rr->section != MSG_SECTION_ANSWER ||
		    rr->type != MSG_TYPE_SRV || rr->rdlength < 7)
			continue;
		len = msg_name_unpack(r->pkt, r->len, rr->rdata_offset + 6,
		    target);
		/* "." means no service is available: nothing to fetch. */
		if (len <= 1)
			continue;
		fetch_target(ctx, target, (size_t)len, MSG_TYPE_A, key, now);
		fetch_target(ctx, target, (size_t)len, MSG_TYPE_AAAA, key,
		    now);
		done++;
	}
}
