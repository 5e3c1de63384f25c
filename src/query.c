/* query.c: one client query from parse to answer, and its waiting. */
#include "autoconf.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "listen.h"
#include "log.h"
#include "msg.h"
#include "query.h"
#include "tcpconn.h"
#include "worker.h"
#include "zone.h"

/* A query waiting for a fetch. */
struct query {
	struct worker		*w;
	struct client		 client;
	struct msg_query	 q;
	struct fetch_waiter	 waiter;
};

#define QUERY_OF(wt)	((struct query *)((char *)(wt) - \
			    offsetof(struct query, waiter)))

/*
 * RFC 6891 §6.2.5: a UDP answer fits the smaller of the client's payload
 * size and ours, and never less than 512 octets; over TCP, no limit.
 */
static void
reply_opts(const struct worker *w, const struct msg_query *q,
    enum client_transport t, struct msg_reply_opts *o)
{
	uint16_t ours = worker_config(w)->edns_buffer_size;

	o->limit = MSG_UDP_MIN;
	if (t == CLIENT_TCP)
		o->limit = MSG_MAX_LEN;
	else if (q->edns.present && q->edns.udp_size > MSG_UDP_MIN)
		o->limit = q->edns.udp_size < ours ? q->edns.udp_size : ours;
	o->edns_size = ours;
	o->ede = -1;
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

static void
count_answer(struct worker *w, const uint8_t *answer)
{
	worker_stats(w)->answers_rcode[answer[3] & 0xf]++;
}

static void
query_send(struct query *qr, const uint8_t *buf, size_t len)
{
	count_answer(qr->w, buf);
	if (qr->client.transport == CLIENT_UDP)
		listen_udp_send(&qr->client, buf, len);
	else
		tcpconn_send(qr->client.conn, buf, len);
}

static void
query_free(struct query *qr)
{
	fetch_leave(&qr->waiter);
	if (qr->client.transport == CLIENT_TCP)
		tcpconn_release(qr->client.conn);
	free(qr);
}

/* Hand q to a fetch of key through zone; 0 if it now waits, else -1. */
static int
query_wait(struct worker *w, const struct msg_query *q,
    const struct cache_key *key, const struct zone *zone,
    const struct client *c, uint64_t now)
{
	struct query *qr;

	if ((qr = calloc(1, sizeof(*qr))) == NULL)
		return -1;
	qr->w = w;
	qr->client = *c;
	qr->q = *q;
	if (fetch_join(worker_fetches(w), key, q, worker_zones(w), zone, now,
	    &qr->waiter) == -1) {
		free(qr);
		return -1;
	}
	if (c->transport == CLIENT_TCP)
		tcpconn_hold(c->conn);
	return 0;
}

enum query_status
query_handle(struct worker *w, const uint8_t *pkt, size_t len,
    const struct client *c, uint64_t now, uint8_t *out, size_t cap,
    size_t *outlen)
{
	struct worker_stats *st = worker_stats(w);
	struct msg_reply_opts opts;
	struct cache_result res;
	struct cache_key key;
	struct msg_query q;
	const struct zone *zone;
	unsigned rcode = MSG_RCODE_NOERROR;

	if (c->transport == CLIENT_UDP)
		st->queries_udp++;
	else
		st->queries_tcp++;
	switch (msg_parse_query(pkt, len, &q)) {
	case MSG_PARSE_DROP:
		st->dropped++;
		return QUERY_DROPPED;
	case MSG_PARSE_FORMERR:
		rcode = MSG_RCODE_FORMERR;
		break;
	case MSG_PARSE_NOTIMP:
		rcode = MSG_RCODE_NOTIMP;
		break;
	case MSG_PARSE_BADVERS:
		rcode = MSG_RCODE_BADVERS;
		break;
	case MSG_PARSE_OK:
		rcode = refusal(&q);
		break;
	}
	reply_opts(w, &q, c->transport, &opts);
	if (rcode != MSG_RCODE_NOERROR)
		goto error;
	cache_key_make(worker_cache(w), &q.q, q.edns.do_bit,
	    (q.flags & MSG_FLAG_CD) != 0, &key);
	cache_lookup(worker_cache(w), &key, &q, &opts, now, out, cap, &res);
	if (res.state == CACHE_FRESH) {
		st->cache_hits++;
		*outlen = res.len;
		goto answered;
	}
	st->cache_misses++;
	rcode = MSG_RCODE_SERVFAIL;
	if (res.state == CACHE_FAILED)
		goto error;
	if ((zone = zone_find(worker_zones(w), key.data, q.q.qname_len)) ==
	    NULL) {
		rcode = MSG_RCODE_REFUSED;
		goto error;
	}
	if (query_wait(w, &q, &key, zone, c, now) == 0)
		return QUERY_PENDING;
error:
	*outlen = msg_write_error(&q, rcode, &opts, out, cap);
answered:
	count_answer(w, out);
	return QUERY_ANSWERED;
}

void
query_fetch_done(struct fetch *f, const struct fetch_result *res, void *arg)
{
	struct worker *w = arg;
	struct cache_entry *e = NULL;
	struct msg_reply_opts opts;
	struct fetch_waiter *wt;
	struct query *qr;
	size_t len;

	if (res->outcome == FETCH_ANSWER)
		e = cache_entry_new(worker_cache(w), res->r, res->now);
	while ((wt = fetch_take_waiter(f)) != NULL) {
		qr = QUERY_OF(wt);
		if (res->outcome != FETCH_CANCELLED) {
			reply_opts(w, &qr->q, qr->client.transport, &opts);
			if (e != NULL)
				len = cache_entry_answer(e, &qr->q, &opts,
				    res->now, worker_scratch(w),
				    WORKER_SCRATCH_LEN);
			else
				len = msg_write_error(&qr->q,
				    MSG_RCODE_SERVFAIL, &opts,
				    worker_scratch(w), WORKER_SCRATCH_LEN);
			query_send(qr, worker_scratch(w), len);
		}
		query_free(qr);
	}
	if (e != NULL)
		cache_insert(worker_cache(w), res->key, e);
	else if (res->outcome == FETCH_FAILED)
		cache_insert_failure(worker_cache(w), res->key, res->now);
}
