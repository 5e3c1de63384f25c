/* prefetch.c: when to refresh before expiry, and which SRV targets. */
#include "autoconf.h"

#include <string.h>

#include "name.h"
#include "prefetch.h"
#include "upstream.h"

/* A refresh with two lost attempts still lands: R, then 2R, then R. */
#define WINDOW_RTOS		4

uint64_t
prefetch_window(const struct zone *zone, uint32_t ttl)
{
	uint64_t life = (uint64_t)ttl * 1000, window = life / 10, rto = 0;

	if (zone != NULL)
		rto = upstream_best_rto(zone->upstreams, zone->n_upstreams);
	if (window < WINDOW_RTOS * rto)
		window = WINDOW_RTOS * rto;
	return window < life / 2 ? window : life / 2;
}

int
prefetch_may_be_due(const struct cache_result *res)
{
	/* No window is more than half the life. */
	return res->expires_in <= (uint64_t)res->ttl * 500;
}

uint64_t
prefetch_point(const struct zone *zone, const struct cache_result *res)
{
	uint64_t window = prefetch_window(zone, res->ttl), lead = 0;

	/* The first life after an outage: over half of it (see .h). */
	if (res->after_failure)
		window = (uint64_t)res->ttl * 500;

	if (zone != NULL)
		lead = WINDOW_RTOS * (uint64_t)upstream_best_rto(
		    zone->upstreams, zone->n_upstreams);
	if (lead > window)
		lead = window;
	return lead + ((window - lead) * res->prefetch_point >> 16);
}

int
prefetch_due(const struct cache_result *res, const struct zone *zone)
{
	return res->expires_in <= prefetch_point(zone, res);
}

int
prefetch_target_due(const struct cache_result *res, const struct zone *zone)
{
	return res->asked && (res->state != CACHE_FRESH ||
	    res->expires_in <= prefetch_window(zone, res->ttl));
}

/* The question (target, qtype) asked with key's DO and CD bits. */
static void
target_query(const uint8_t *target, size_t len, uint16_t qtype,
    const struct cache_key *key, struct msg_query *q)
{
	memset(q, 0, sizeof(*q));
	memcpy(q->q.qname, target, len);
	msg_name_fold(q->q.qname, len);
	q->q.qname_len = (uint8_t)len;
	q->q.qtype = qtype;
	q->q.qclass = MSG_CLASS_IN;
	q->edns.do_bit = cachekey_do(key);
	q->flags = cachekey_cd(key) ? MSG_FLAG_CD : 0;
}

size_t
prefetch_srv_questions(const struct msg_response *r,
    const struct cache_key *key, struct msg_query *out)
{
	uint8_t target[MSG_NAME_MAX];
	const struct msg_rr *rr;
	size_t i, n = 0;
	int len;

	if (r->q.qtype != MSG_TYPE_SRV)
		return 0;
	for (i = 0; i < r->n_rrs && n < PREFETCH_SRV_QUESTIONS; i++) {
		rr = &r->rrs[i];
		/* RFC 2782: priority, weight, port, then the target. */
		if (rr->section != MSG_SECTION_ANSWER ||
		    rr->type != MSG_TYPE_SRV || rr->rdlength < 7)
			continue;
		len = name_unpack(r->pkt, r->len, rr->rdata_offset + 6, target);
		/* "." means no service is available: nothing to fetch. */
		if (len <= 1)
			continue;
		target_query(target, (size_t)len, MSG_TYPE_A, key, &out[n++]);
		target_query(target, (size_t)len, MSG_TYPE_AAAA, key,
		    &out[n++]);
	}
	return n;
}
