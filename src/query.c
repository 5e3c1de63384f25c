/* query.c: one client query from parse to answer, and its waiting. */
#include "autoconf.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "cache.h"
#include "clock.h"
#include "lkg.h"
#include "localdata.h"
#include "localzone.h"
#include "log.h"
#include "msg.h"
#include "prefetch.h"
#include "query.h"
#include "zone.h"

/* A query waiting for a fetch. */
struct query {
	struct query_ctx	*ctx;
	struct client		 client;
	struct msg_query	 q;
	struct cache_key	 key;
	uint64_t		 arrived;	/* ms */
	struct fetch_waiter	 waiter;
	struct event		*client_timer;	/* RFC 8767 §5: a stale answer
						 * goes out when it fires */
	TAILQ_ENTRY(query)	 later;		/* in an answering */
};

/*
 * The waiters of an ended resolution beyond the first QUERY_BATCH,
 * answered QUERY_BATCH per turn of the event loop.
 */
struct answering {
	struct query_ctx	*ctx;
	struct cache_entry	*e;		/* owned copy of the answer, or
						 * NULL: answer as if failed */
	int			 landed;	/* another worker resolved it:
						 * answer from the cache */
	char			*upstream;	/* owned: the name of the
						 * upstream that answered, or
						 * NULL */
	TAILQ_HEAD(, query)	 queries;
	struct event		*ev;
	LIST_ENTRY(answering)	 entry;		/* in ctx->answering */
};

#define QUERY_OF(wt)	((struct query *)((char *)(wt) - \
			    offsetof(struct query, waiter)))

/*
 * RFC 6891 §6.2.5: a UDP answer fits the smaller of the client's payload
 * size and ours, and never less than 512 octets; over TCP, no limit.
 */
static void
reply_opts(const struct query_ctx *ctx, const struct msg_query *q,
    enum client_transport t, struct msg_reply_opts *o)
{
	uint16_t ours = ctx->conf->edns_buffer_size;

	o->limit = MSG_UDP_MIN;
	if (t == CLIENT_TCP)
		o->limit = MSG_MAX_LEN;
	else if (q->edns.present && q->edns.udp_size > MSG_UDP_MIN)
		o->limit = q->edns.udp_size < ours ? q->edns.udp_size : ours;
	o->edns_size = ours;
	o->ede = -1;
	o->ede_text = NULL;
}

/* Questions this forwarder will not pass on, and the rcode they get. */
static unsigned
refusal(const struct msg_query *q)
{
	switch (q->q.qtype) {
	case MSG_TYPE_OPT:
		return MSG_RCODE_FORMERR;	/* RFC 6891 §6.1.1 */
	case MSG_TYPE_AXFR:
	case MSG_TYPE_IXFR:
		return MSG_RCODE_REFUSED;	/* zone transfers: not a cache */
	default:
		return MSG_RCODE_NOERROR;
	}
}

/* rcode: the full one (BADVERS is 16, not its header bits, RFC 6891). */
static void
count_answer(struct query_ctx *ctx, enum metrics_source source, unsigned rcode,
    uint64_t arrived, uint64_t now)
{
	metrics_count_answer(&ctx->metrics, source, rcode,
	    now > arrived ? now - arrived : 0);
}

/* Hook: what watches answers (observe.h) hears of this one; held: a
 * stale answer that is a last known good one. */
static inline void
tell(struct query_ctx *ctx, const struct client *c, const struct msg_query *q,
    const uint8_t *buf, size_t len, enum metrics_source source, int held,
    const char *upstream, uint64_t arrived, uint64_t now)
{
	if (observe_wanted(&ctx->observe))
		observe_answer(&ctx->observe, &c->peer,
		    c->transport == CLIENT_TCP, q, buf, len, source, held,
		    upstream, arrived, now);
}

/* upstream: the name of the one that answered (source upstream), or
 * NULL; held as tell's. */
static void
query_send(struct query *qr, enum metrics_source source, int held,
    const char *upstream, const uint8_t *buf, size_t len, uint64_t now)
{
	count_answer(qr->ctx, source, buf[3] & 0xf, qr->arrived, now);
	tell(qr->ctx, &qr->client, &qr->q, buf, len, source, held, upstream,
	    qr->arrived, now);
	qr->client.ops->send(&qr->client, buf, len);
}

static void
query_free(struct query *qr)
{
	fetch_leave(&qr->waiter);
	if (qr->client_timer != NULL)
		event_free(qr->client_timer);
	qr->client.ops->release(&qr->client);
	free(qr);
}

/*
 * Answer qr from the cache as it is now (fresh, counted as from fresh,
 * or stale after a failed or slow refresh). Returns 0 if answered, or -1
 * if there was nothing to answer with; the state found in *state (if not
 * NULL).
 */
static int
answer_from_cache(struct query *qr, uint64_t now, enum metrics_source fresh,
    enum cache_state *state)
{
	struct msg_reply_opts opts;
	struct cache_result res;
	uint8_t *out = qr->ctx->scratch;
	int held;

	reply_opts(qr->ctx, &qr->q, qr->client.transport, &opts);
	opts.ede_text = lkg_text(qr->ctx->lkg, &qr->key);
	cache_lookup(qr->ctx->cache, &qr->key, &qr->q, &opts, now, out,
	    sizeof(qr->ctx->scratch), &res);
	if (state != NULL)
		*state = res.state;
	if (res.state != CACHE_FRESH && res.state != CACHE_STALE)
		return -1;
	held = res.state == CACHE_STALE && opts.ede_text != NULL;
	if (held)
		lkg_count_answer(qr->ctx->lkg, &qr->key);
	query_send(qr, res.state == CACHE_STALE ? METRICS_FROM_STALE : fresh,
	    held, NULL, out, res.len, now);
	return 0;
}

/*
 * An attempt of the refresh timed out or failed: once every upstream of
 * the zone is down, waiting out the client response timer is pointless.
 */
static void
query_setback(struct fetch_waiter *wt, const struct zone *zone)
{
	struct query *qr = QUERY_OF(wt);

	if (qr->client_timer == NULL ||
	    !upstream_all_down(zone->upstreams, zone->n_upstreams))
		return;
	if (answer_from_cache(qr, clock_now_ms(), METRICS_FROM_CACHE,
	    NULL) == 0)
		query_free(qr);
}

/* The client response timer fired before the refresh finished. */
static void
client_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct query *qr = arg;

	(void)fd;
	(void)what;
	/* Gone meanwhile (evicted): the fetch will still answer it. */
	if (answer_from_cache(qr, clock_now_ms(), METRICS_FROM_CACHE,
	    NULL) == 0)
		query_free(qr);
}

/*
 * Make q wait for a fetch of key through zone. With a stale answer in
 * the cache, it goes out after stale_wait ms if the fetch has not ended.
 * Returns 0 if q now waits, -1 if it could not (budget, memory).
 */
static int
query_wait(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, struct zone *zone, const struct client *c,
    uint64_t now, int64_t stale_wait)
{
	struct timeval tv;
	struct query *qr;

	/* malloc, then zeroed: glibc's calloc skips its per-thread cache. */
	if ((qr = malloc(sizeof(*qr))) == NULL)
		return -1;
	memset(qr, 0, sizeof(*qr));
	qr->ctx = ctx;
	qr->client = *c;
	qr->q = *q;
	qr->key = *key;
	qr->arrived = now;
	if (stale_wait >= 0) {
		qr->waiter.setback = query_setback;
		tv = clock_ms_to_tv((uint64_t)stale_wait);
		if ((qr->client_timer = evtimer_new(ctx->base,
		    client_timeout_cb, qr)) == NULL ||
		    evtimer_add(qr->client_timer, &tv) == -1)
			goto fail;
	}
	if (fetch_join(ctx->fetches, key, q, ctx->zones, zone, now,
	    &qr->waiter) < 0)
		goto fail;
	c->ops->hold(c);
	return 0;
fail:
	/* Not query_free: c was not held yet. */
	if (qr->client_timer != NULL)
		event_free(qr->client_timer);
	free(qr);
	return -1;
}

/* The forward zone of key's question, or NULL if none. */
static struct zone *
query_zone(const struct query_ctx *ctx, const struct cache_key *key)
{
	const uint8_t *qname;
	size_t len;

	qname = cachekey_qname(key, &len);
	return zone_find(ctx->zones, qname, len, cachekey_qtype(key));
}

/*
 * Resolve q (key) through zone in the background, for the cache alone;
 * a fetch that this starts is a prefetch, and counted.
 */
static void
query_refresh(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, struct zone *zone, uint64_t now)
{
	if (zone != NULL && fetch_join(ctx->fetches, key, q, ctx->zones, zone,
	    now, NULL) == 1)
		metrics_add(&ctx->metrics.prefetches, 1);
}

/*
 * Whether the entry of key that gave res may be refreshed through zone at
 * now: not while its question is held by last known good and its
 * re-check is not due (lkg_may_refresh, which takes the re-check); nor
 * while its last refresh failed and its failure recheck time (RFC 8767
 * §5, stale-refresh-interval jittered) has not passed; but even then once
 * an upstream of the zone has answered since, for any name (flaky is not
 * down), within that upstream's recovery rate if it was down
 * (upstream_refresh_allowed, which this may spend).
 */
static int
may_refresh(struct query_ctx *ctx, const struct cache_key *key,
    const struct cache_result *res, const struct zone *zone, uint64_t now)
{
	if (zone == NULL || (ctx->lkg != NULL &&
	    !lkg_may_refresh(ctx->lkg, key, now)))
		return 0;
	return !res->refresh_failed || res->may_refresh ||
	    upstream_refresh_allowed(zone->upstreams, zone->n_upstreams,
	    res->failed_at, now);
}

/* A client got fresh entry key (res): refresh it if prefetch says so. */
static void
query_prefetch(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, const struct cache_result *res,
    uint64_t now)
{
	struct zone *zone;

	if (!ctx->conf->prefetch || !prefetch_may_be_due(res))
		return;
	zone = query_zone(ctx, key);
	if (prefetch_due(res, zone) && may_refresh(ctx, key, res, zone, now))
		query_refresh(ctx, q, key, zone, now);
}

/* 1 if key's question is answered locally: it is never fetched. */
static int
query_is_local(const struct query_ctx *ctx, const struct cache_key *key)
{
	struct localzone_result res;
	const uint8_t *qname;
	size_t len;

	qname = cachekey_qname(key, &len);
	localzone_lookup(ctx->local, qname, len, cachekey_qtype(key), &res);
	return res.verdict != LOCALZONE_NONE;
}

/*
 * r answered the SRV question of key: fetch the addresses of its targets
 * that prefetch says are due and that are not local names, unless
 * srv-prefetch-targets is off.
 */
static void
query_srv_targets(struct query_ctx *ctx, const struct msg_response *r,
    const struct cache_key *key, uint64_t now)
{
	struct msg_query qs[PREFETCH_SRV_QUESTIONS];
	struct cache_result res;
	struct cache_key tkey;
	struct zone *zone;
	size_t i, n;
	int local = 0;

	if (!ctx->conf->srv_prefetch_targets)
		return;
	n = prefetch_srv_questions(r, key, qs);
	for (i = 0; i < n; i++) {
		cache_key_make(ctx->cache, &qs[i].q, cachekey_do(key),
		    cachekey_cd(key), &tkey);
		/* A and AAAA of a target come in a row: one look for both. */
		if (i == 0 || !msg_name_equal(qs[i].q.qname,
		    qs[i].q.qname_len, qs[i - 1].q.qname,
		    qs[i - 1].q.qname_len))
			local = query_is_local(ctx, &tkey);
		if (local)
			continue;
		cache_lookup(ctx->cache, &tkey, &qs[i], NULL, now, NULL, 0,
		    &res);
		zone = query_zone(ctx, &tkey);
		if (prefetch_target_due(&res, zone))
			query_refresh(ctx, &qs[i], &tkey, zone, now);
	}
}

/*
 * Whether a client should wait for the refresh (allowed) of an expired
 * entry: not when it is known to be hopeless (its last refresh failed and
 * no upstream has answered since, every upstream of the zone is down) or
 * already late (a prefetch started before it expired has not ended: the
 * upstream is slow right now).
 */
static int
worth_waiting(struct query_ctx *ctx, const struct cache_key *key,
    const struct cache_result *res, const struct zone *zone, int allowed)
{
	uint64_t started;

	if (!allowed || ctx->conf->client_timeout == 0 ||
	    (res->refresh_failed && !upstream_answered_since(zone->upstreams,
	    zone->n_upstreams, res->failed_at)) ||
	    upstream_all_down(zone->upstreams, zone->n_upstreams))
		return 0;
	started = fetch_started(ctx->fetches, key);
	return started == 0 || started >= res->expired_at;
}

/*
 * RFC 8767 §5: an expired entry (its stale answer already in out) is
 * refreshed. A client waits for that refresh at most client-timeout, or
 * not at all (worth_waiting); then the stale answer goes out at once and
 * the refresh, if allowed yet (may_refresh), runs in the background.
 */
static enum query_status
query_stale(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, const struct cache_result *res,
    const struct client *c, uint64_t now)
{
	struct zone *zone;
	int allowed;

	zone = query_zone(ctx, key);
	allowed = may_refresh(ctx, key, res, zone, now);
	if (worth_waiting(ctx, key, res, zone, allowed) && query_wait(ctx, q,
	    key, zone, c, now, ctx->conf->client_timeout) == 0)
		return QUERY_PENDING;
	if (allowed)
		(void)fetch_join(ctx->fetches, key, q, ctx->zones, zone, now,
		    NULL);
	return QUERY_ANSWERED;
}

/*
 * A failure cached for key (RFC 9520) at failed_at ends as soon as an
 * upstream of its zone answers again, for any name: 1 if it has ended,
 * and key is to be resolved as if nothing were cached.
 */
static int
failure_over(struct query_ctx *ctx, const struct cache_key *key,
    uint64_t failed_at)
{
	struct zone *zone = query_zone(ctx, key);

	return zone != NULL && upstream_answered_since(zone->upstreams,
	    zone->n_upstreams, failed_at);
}

/* A query with no usable entry: resolve it, or say why not. */
static unsigned
query_miss(struct query_ctx *ctx, const struct msg_query *q,
    const struct cache_key *key, const struct client *c, uint64_t now)
{
	struct zone *zone;

	if ((zone = query_zone(ctx, key)) == NULL)
		return MSG_RCODE_REFUSED;
	if (query_wait(ctx, q, key, zone, c, now, -1) == -1)
		return MSG_RCODE_SERVFAIL;
	return MSG_RCODE_NOERROR;
}

/*
 * Answers made here, never asked upstream: the minimal one to ANY over
 * UDP (RFC 8482 §4.2), and local names: the hosts files, local-data and
 * local zones, localhost and the zones served by default (RFC 6761, RFC
 * 6303), by key's folded qname. Returns the length written to out, or 0
 * if q is not one of them.
 */
static size_t
answer_here(struct query_ctx *ctx, const struct msg_query *q,
    const struct client *c, const struct cache_key *key,
    const struct msg_reply_opts *opts, uint8_t *out, size_t cap)
{
	const uint8_t *qname;
	size_t len;

	if (q->q.qtype == MSG_TYPE_ANY && admit_minimal_any(ctx->conf,
	    &c->peer, c->transport == CLIENT_UDP, q, &ctx->metrics))
		return admit_write_any(ctx->conf, q, opts, out, cap);
	qname = cachekey_qname(key, &len);
	return localdata_answer(ctx->local, q, qname, opts, ctx->scratch,
	    sizeof(ctx->scratch), out, cap);
}

/* Parse pkt into *q; the rcode to answer with if it cannot be served. */
static unsigned
query_parse(struct query_ctx *ctx, const uint8_t *pkt, size_t len,
    struct msg_query *q, int *drop)
{
	*drop = 0;
	switch (msg_parse_query(pkt, len, q)) {
	case MSG_PARSE_DROP:
		*drop = 1;
		return MSG_RCODE_FORMERR;
	case MSG_PARSE_FORMERR:
		return MSG_RCODE_FORMERR;
	case MSG_PARSE_NOTIMP:
		return MSG_RCODE_NOTIMP;
	case MSG_PARSE_BADVERS:
		return MSG_RCODE_BADVERS;
	case MSG_PARSE_OK:
		break;
	}
	/* One of our loop probes come back (to any worker): stop it here. */
	if (upstream_loop_probe_seen(zone_table_registry(ctx->zones),
	    q->q.qname, q->q.qname_len))
		return MSG_RCODE_REFUSED;
	return refusal(q);
}

enum query_status
query_handle(struct query_ctx *ctx, const uint8_t *pkt, size_t len,
    const struct client *c, uint64_t now, uint8_t *out, size_t cap,
    size_t *outlen)
{
	struct metrics *m = &ctx->metrics;
	enum metrics_source source = METRICS_FROM_ERROR;
	struct msg_reply_opts opts;
	struct cache_result res;
	struct cache_key key;
	struct msg_query q;
	unsigned rcode;
	int drop;

	if (observe_wanted(&ctx->observe))
		observe_query(&ctx->observe, &c->peer,
		    c->transport == CLIENT_TCP, pkt, len);
	rcode = query_parse(ctx, pkt, len, &q, &drop);
	metrics_count_query(m, c->transport == CLIENT_UDP ? METRICS_UDP :
	    METRICS_TCP, q.q.qname_len > 0 ? q.q.qtype : 0);
	if (drop) {
		metrics_add(&m->dropped, 1);
		return QUERY_DROPPED;
	}
	reply_opts(ctx, &q, c->transport, &opts);
	switch (admit_query(ctx->admit, ctx->conf, &c->peer,
	    c->transport == CLIENT_UDP, m, now)) {
	case ADMIT_SERVE:
		break;
	case ADMIT_REFUSE:
		rcode = MSG_RCODE_REFUSED;
		goto error;
	case ADMIT_DROP:
		return QUERY_DROPPED;
	case ADMIT_SLIP:
		*outlen = admit_write_slip(&q, &opts, out, cap);
		goto answered;
	}
	if (rcode != MSG_RCODE_NOERROR)
		goto error;
	cache_key_make(ctx->cache, &q.q, q.edns.do_bit,
	    (q.flags & MSG_FLAG_CD) != 0, &key);
	if ((*outlen = answer_here(ctx, &q, c, &key, &opts, out, cap)) > 0) {
		source = METRICS_FROM_LOCAL;
		goto answered;
	}
	opts.ede_text = lkg_text(ctx->lkg, &key);
	cache_lookup(ctx->cache, &key, &q, &opts, now, out, cap, &res);
	metrics_add(&m->cache_hits, res.state != CACHE_ABSENT);
	metrics_add(&m->cache_misses, res.state == CACHE_ABSENT);
	switch (res.state) {
	case CACHE_FRESH:
		query_prefetch(ctx, &q, &key, &res, now);
		*outlen = res.len;
		source = METRICS_FROM_CACHE;
		goto answered;
	case CACHE_STALE:
		*outlen = res.len;
		source = METRICS_FROM_STALE;
		if (opts.ede_text != NULL)
			lkg_count_answer(ctx->lkg, &key);
		if (query_stale(ctx, &q, &key, &res, c, now) == QUERY_PENDING)
			return QUERY_PENDING;
		goto answered;
	case CACHE_FAILED:
		rcode = MSG_RCODE_SERVFAIL;
		if (!failure_over(ctx, &key, res.failed_at))
			goto error;
		/* FALLTHROUGH */
	case CACHE_ABSENT:
		if ((rcode = query_miss(ctx, &q, &key, c, now)) ==
		    MSG_RCODE_NOERROR)
			return QUERY_PENDING;
		goto error;
	}
error:
	*outlen = msg_write_error(&q, rcode, &opts, out, cap);
	count_answer(ctx, source, rcode, now, now);
	tell(ctx, c, &q, out, *outlen, source, 0, NULL, now, now);
	return QUERY_ANSWERED;
answered:
	count_answer(ctx, source, out[3] & 0xf, now, now);
	tell(ctx, c, &q, out, *outlen, source, source == METRICS_FROM_STALE &&
	    opts.ede_text != NULL, NULL, now, now);
	return QUERY_ANSWERED;
}

/*
 * Another worker's resolution of qr's key left nothing in the cache (an
 * answer not to be stored, or no query sent): resolve it here, once.
 * Returns 0 if qr waits again, -1 if it could not.
 */
static int
query_refetch(struct query *qr, uint64_t now)
{
	struct zone *zone;

	if ((zone = query_zone(qr->ctx, &qr->key)) == NULL)
		return -1;
	qr->waiter.own = 1;
	return fetch_join(qr->ctx->fetches, &qr->key, &qr->q, qr->ctx->zones,
	    zone, now, &qr->waiter) < 0 ? -1 : 0;
}

/*
 * Answer one waiter of a resolution that has ended at now: with e, or if
 * none from the cache (stale after a failed refresh) or else with
 * SERVFAIL. The waiter of another worker's resolution (landed) is
 * answered from the cache (a fresh answer counted as from upstream, as
 * it is), resolved here if that left nothing (query_refetch), and
 * answered SERVFAIL for a failure cached (RFC 9520). Returns 1 if qr is
 * done with (the caller frees it), 0 if it waits again.
 */
static int
answer_waiter(struct query *qr, const struct cache_entry *e, int landed,
    const char *upstream, uint64_t now)
{
	struct msg_reply_opts opts;
	uint8_t *out = qr->ctx->scratch;
	enum cache_state state;
	size_t len;

	if (e == NULL && answer_from_cache(qr, now, landed ?
	    METRICS_FROM_UPSTREAM : METRICS_FROM_CACHE, &state) == 0)
		return 1;
	if (e == NULL && landed && state == CACHE_ABSENT &&
	    query_refetch(qr, now) == 0)
		return 0;
	reply_opts(qr->ctx, &qr->q, qr->client.transport, &opts);
	if (e != NULL)
		len = cache_entry_answer(e, &qr->q, &opts, now, out,
		    sizeof(qr->ctx->scratch));
	else
		len = msg_write_error(&qr->q, MSG_RCODE_SERVFAIL, &opts, out,
		    sizeof(qr->ctx->scratch));
	query_send(qr, e != NULL ? METRICS_FROM_UPSTREAM : METRICS_FROM_ERROR,
	    0, upstream, out, len, now);
	return 1;
}

static void
answering_free(struct answering *a)
{
	struct query *qr;

	while ((qr = TAILQ_FIRST(&a->queries)) != NULL) {
		TAILQ_REMOVE(&a->queries, qr, later);
		query_free(qr);
	}
	LIST_REMOVE(a, entry);
	if (a->e != NULL)
		cache_entry_free(a->e);
	event_free(a->ev);
	free(a->upstream);
	free(a);
}

/* One turn's batch; the next turn is a timer, so that the loop polls for
 * I/O in between. */
static void
answering_step(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval next_turn = { 0, 0 };
	struct answering *a = arg;
	uint64_t now = clock_now_ms();
	struct query *qr;
	unsigned n;

	(void)fd;
	(void)what;
	for (n = 0; n < QUERY_BATCH &&
	    (qr = TAILQ_FIRST(&a->queries)) != NULL; n++) {
		TAILQ_REMOVE(&a->queries, qr, later);
		if (answer_waiter(qr, a->e, a->landed, a->upstream, now))
			query_free(qr);
	}
	if (TAILQ_EMPTY(&a->queries))
		answering_free(a);
	else
		evtimer_add(a->ev, &next_turn);
}

/*
 * What answers the rest of the waiters of the fetch that ended with res
 * (e its entry, or NULL), from the next turn on: a copy of that entry,
 * since the cache may drop its own. NULL if out of memory.
 */
static struct answering *
answering_new(struct query_ctx *ctx, const struct fetch_result *res,
    const struct cache_entry *e)
{
	static const struct timeval next_turn = { 0, 0 };
	struct answering *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->ctx = ctx;
	a->landed = res->outcome == FETCH_LANDED;
	TAILQ_INIT(&a->queries);
	if ((res->upstream != NULL &&
	    (a->upstream = strdup(res->upstream)) == NULL) ||
	    (a->ev = evtimer_new(ctx->base, answering_step, a)) == NULL ||
	    (e != NULL &&
	    (a->e = cache_entry_new(ctx->cache, res->r, res->now)) == NULL) ||
	    evtimer_add(a->ev, &next_turn) == -1) {
		if (a->ev != NULL)
			event_free(a->ev);
		if (a->e != NULL)
			cache_entry_free(a->e);
		free(a->upstream);
		free(a);
		return NULL;
	}
	LIST_INSERT_HEAD(&ctx->answering, a, entry);
	return a;
}

/* Answer qr now, or, past the first QUERY_BATCH (n counts them), in a
 * later turn through *later (made on first use). */
static void
answer_or_defer(struct query *qr, const struct fetch_result *res,
    const struct cache_entry *e, unsigned n, struct answering **later)
{
	if (n >= QUERY_BATCH && (*later != NULL ||
	    (*later = answering_new(qr->ctx, res, e)) != NULL)) {
		/* Its answer is coming: a stale one must not go first. */
		if (qr->client_timer != NULL)
			evtimer_del(qr->client_timer);
		TAILQ_INSERT_TAIL(&(*later)->queries, qr, later);
		return;
	}
	if (answer_waiter(qr, e, res->outcome == FETCH_LANDED, res->upstream,
	    res->now))
		query_free(qr);
}

/*
 * With other workers on the cache, store the answer of res before one of
 * ours is sent: a client of theirs that asks the moment ours has it must
 * find it (ours are answered from e, which the cache may drop at any
 * time once its own: a copy goes in). Returns 1 if stored.
 */
static int
store_first(struct query_ctx *ctx, const struct fetch_result *res,
    const struct cache_entry *e)
{
	struct cache_entry *copy;

	if (!ctx->cache_shared || cache_entry_kind(e) == CACHE_UNCACHEABLE ||
	    (copy = cache_entry_new(ctx->cache, res->r, res->now)) == NULL)
		return 0;
	if (res->waiters > 0)
		cache_entry_set_asked(copy);
	(void)cache_insert(ctx->cache, res->key, copy);
	return 1;
}

/*
 * Whether res may be cached: its question is still routed as when its
 * fetch started (zone_route_kept). Else it answers its waiters only: the
 * cache was flushed of that route, or the route changed without a flush.
 */
static int
query_route_kept(const struct query_ctx *ctx, const struct fetch_result *res)
{
	const uint8_t *qname;
	size_t len;

	qname = cachekey_qname(res->key, &len);
	return zone_route_kept(ctx->zones, res->zones, res->zone, qname, len,
	    cachekey_qtype(res->key));
}

/*
 * Last known good (lkg.h), for an answer res of a zone that has it: a
 * positive one is noted, a negative one (NXDOMAIN, or NODATA: an empty
 * RRset of any type) held if the rule says so while the cache has a
 * servable positive answer. Returns 1 if held: nothing is stored, and
 * the waiters get the cached answer.
 */
static int
lkg_holds(struct query_ctx *ctx, const struct fetch_result *res)
{
	const struct config *conf = ctx->conf;
	struct cache_result cr;
	uint64_t until = 0;
	struct zone *zone;

	if (ctx->lkg == NULL || (zone = query_zone(ctx, res->key)) == NULL)
		return 0;
	if (!zone->lkg) {
		lkg_forget(ctx->lkg, res->key, res->now);
		return 0;
	}
	if (res->r->class == MSG_CLASS_ANSWER)
		lkg_positive(ctx->lkg, zone->name_str, res->key, res->now);
	if (res->r->class != MSG_CLASS_NXDOMAIN &&
	    res->r->class != MSG_CLASS_NODATA)
		return 0;
	cache_lookup(ctx->cache, res->key, NULL, NULL, res->now, NULL, 0, &cr);
	if ((cr.state == CACHE_FRESH || cr.state == CACHE_STALE) &&
	    cr.kind == CACHE_POSITIVE)
		until = cr.expired_at + (conf->serve_stale ?
		    (uint64_t)conf->stale_max_age * 1000 : 0);
	return lkg_negative(ctx->lkg, zone->name_str, zone->lkg_hold, res->key,
	    res->r->class == MSG_CLASS_NXDOMAIN ? LKG_NXDOMAIN : LKG_NODATA,
	    until, res->now) == LKG_HOLD;
}

void
query_fetch_done(struct fetch *f, const struct fetch_result *res, void *arg)
{
	struct query_ctx *ctx = arg;
	struct answering *later = NULL;
	struct cache_entry *e = NULL;
	struct fetch_waiter *wt;
	unsigned n = 0;
	int stored = 0, kept;

	kept = query_route_kept(ctx, res);
	/* An answer from a route no longer taken is no evidence for last
	 * known good either way: it only answers its waiters. */
	if (res->outcome == FETCH_ANSWER && !(kept && lkg_holds(ctx, res)) &&
	    (e = cache_entry_new(ctx->cache, res->r, res->now)) != NULL) {
		if (res->waiters > 0)
			cache_entry_set_asked(e);
		stored = kept && store_first(ctx, res, e);
	}
	else if (res->outcome == FETCH_FAILED && !res->unsent && kept)
		/* RFC 9520 is about upstreams: no use caching our own lack
		 * of descriptors. */
		cache_refresh_failed(ctx->cache, res->key, res->now);
	while ((wt = fetch_take_waiter(f)) != NULL) {
		if (res->outcome == FETCH_CANCELLED)
			query_free(QUERY_OF(wt));
		else
			answer_or_defer(QUERY_OF(wt), res, e, n++, &later);
	}
	if (e == NULL)
		return;
	if (cache_entry_kind(e) == CACHE_POSITIVE)
		query_srv_targets(ctx, res->r, res->key, res->now);
	if (stored || !kept)
		cache_entry_free(e);
	else
		cache_insert(ctx->cache, res->key, e);
}

void
query_cancel(struct query_ctx *ctx)
{
	while (!LIST_EMPTY(&ctx->answering))
		answering_free(LIST_FIRST(&ctx->answering));
}
