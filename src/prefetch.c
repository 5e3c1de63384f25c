/* prefetch.c: refreshes before expiry, and SRV target addresses. */
#include "autoconf.h"

#include <string.h>

#include "fetch.h"
#include "name.h"
#include "prefetch.h"
#include "worker.h"

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
refresh(struct worker *w, const struct msg_query *q,
    const struct cache_key *key, uint64_t now)
{
	struct zone *zone;

	zone = zone_find(worker_zones(w), key->data, q->q.qname_len);
	if (zone == NULL)
		return -1;
	return fetch_join(worker_fetches(w), key, q, worker_zones(w), zone,
	    now, NULL) == 1 ? 0 : -1;
}

void
prefetch_maybe(struct worker *w, const struct msg_query *q,
    const struct cache_key *key, const struct cache_result *res,
    uint64_t now)
{
	struct zone *zone;

	/* Cheap test first: no window is more than half the life. */
	if (!worker_config(w)->prefetch || !res->may_refresh ||
	    res->expires_in > (uint64_t)res->ttl * 500)
		return;
	zone = zone_find(worker_zones(w), key->data, q->q.qname_len);
	if (res->expires_in > prefetch_window(zone, res->ttl))
		return;
	if (refresh(w, q, key, now) == 0)
		worker_metrics(w)->prefetches++;
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
fetch_target(struct worker *w, const uint8_t *target, size_t len,
    uint16_t qtype, const struct cache_key *srv_key, uint64_t now)
{
	struct cache_result res;
	struct cache_key key;
	struct msg_query q;

	target_query(target, len, qtype, srv_key, &q);
	msg_name_fold(q.q.qname, len);
	cache_key_make(worker_cache(w), &q.q, q.edns.do_bit,
	    (q.flags & MSG_FLAG_CD) != 0, &key);
	cache_lookup(worker_cache(w), &key, &q, NULL, now, NULL, 0, &res);
	if (res.state == CACHE_FRESH && res.expires_in > prefetch_window(
	    zone_find(worker_zones(w), key.data, len), res.ttl))
		return;
	if (refresh(w, &q, &key, now) == 0)
		worker_metrics(w)->prefetches++;
}

void
prefetch_srv_targets(struct worker *w, const struct msg_response *r,
    const struct cache_key *key, uint64_t now)
{
	uint8_t target[MSG_NAME_MAX];
	const struct msg_rr *rr;
	size_t i, done = 0;
	int len;

	if (!worker_config(w)->srv_prefetch_targets ||
	    r->q.qtype != MSG_TYPE_SRV)
		return;
	for (i = 0; i < r->n_rrs && done < SRV_TARGETS_MAX; i++) {
		rr = &r->rrs[i];
		/* RFC 2782: priority, weight, port, then the target. */
		if (rr->section != MSG_SECTION_ANSWER ||
		    rr->type != MSG_TYPE_SRV || rr->rdlength < 7)
			continue;
		len = name_unpack(r->pkt, r->len, rr->rdata_offset + 6, target);
		/* "." means no service is available: nothing to fetch. */
		if (len <= 1)
			continue;
		fetch_target(w, target, (size_t)len, MSG_TYPE_A, key, now);
		fetch_target(w, target, (size_t)len, MSG_TYPE_AAAA, key, now);
		done++;
	}
}
