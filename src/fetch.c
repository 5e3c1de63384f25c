/* fetch.c: outgoing queries to upstreams, with coalescing of identical ones. */
#include "autoconf.h"

#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "clock.h"
#include "fetch.h"
#include "frame.h"
#include "log.h"

#define FETCH_BUCKETS		4096	/* in-flight table, power of two */
#define FETCH_MAX_ATTEMPTS	8	/* sends per fetch: bounds sockets */

/* One query sent to one upstream, over UDP and, after TC=1, over TCP. */
struct attempt {
	struct attempt		*next;
	struct fetch		*f;
	struct upstream		*up;	/* borrowed from the zone */
	size_t			 idx;	/* in f->order */
	int			 fd;	/* UDP socket, or -1 */
	struct event		*ev;	/* UDP readable */
	struct bufferevent	*bev;	/* TCP, once retried */
	uint16_t		 id;
	struct upstream_stats	*st;	/* the upstream's, for this zone */
	uint8_t			 qname[MSG_NAME_MAX];	/* as sent */
	int			 cased;	/* qname has 0x20 case */
	int			 case_only; /* got the name back in another
					     * case: the upstream's, or forged */
	uint8_t			 wire[MSG_QUERY_MAX_LEN];
	size_t			 wire_len;
	uint64_t		 sent;	/* ms */
	uint32_t		 rto;	/* ms, timeout it was sent with */
	int			 live;	/* still awaiting an answer */
};

/* Why a fetch runs: only resolutions are coalesced, budgeted, reported. */
enum fetch_kind {
	FETCH_RESOLVE,		/* for clients or the cache */
	FETCH_PROBE,		/* is a down upstream back? */
	FETCH_LOOP_PROBE	/* does this upstream send queries back to us? */
};

struct fetch {
	struct fetch_ctx	*ctx;
	enum fetch_kind		 kind;
	struct fetch		*hnext;		/* in-flight table, or the list
						 * of probes */
	struct cache_key	 key;
	struct msg_query	 q;		/* qname folded */
	struct zone_table	*zones;		/* referenced */
	struct zone		*zone;
	struct upstream		**order;	/* try order, n_order long */
	uint8_t			*dead;		/* failed for good, per slot */
	size_t			 n_order;
	size_t			 next;		/* next slot to send to */
	unsigned		 n_sent;
	unsigned		 n_live;
	struct attempt		*attempts;	/* newest first */
	struct event		*retry;		/* RTO of the newest attempt */
	struct event		*deadline;
	uint64_t		 started;	/* ms */
	TAILQ_HEAD(, fetch_waiter) waiters;
};

struct fetch_ctx {
	struct event_base	*base;
	struct fetch_settings	 s;
	fetch_done_fn		 done;
	void			*arg;
	struct fetch		*buckets[FETCH_BUCKETS];
	struct fetch		*probes;	/* running, chained by hnext */
	struct fetch_stats	 stats;
	uint8_t			 rbuf[MSG_MAX_LEN];
};

static void fetch_send_next(struct fetch *, uint64_t);
static int fetch_send_to(struct fetch *, size_t, uint64_t);
static void loop_probe_start(struct fetch *, struct upstream *, uint64_t);

static struct fetch **
bucket(struct fetch_ctx *ctx, const struct cache_key *key)
{
	return &ctx->buckets[key->hash & (FETCH_BUCKETS - 1)];
}

static struct fetch *
table_find(struct fetch_ctx *ctx, const struct cache_key *key)
{
	struct fetch *f;

	for (f = *bucket(ctx, key); f != NULL; f = f->hnext)
		if (f->key.hash == key->hash && f->key.len == key->len &&
		    memcmp(f->key.data, key->data, key->len) == 0)
			return f;
	return NULL;
}

static void
table_remove(struct fetch_ctx *ctx, struct fetch *f)
{
	struct fetch **pp;

	pp = f->kind != FETCH_RESOLVE ? &ctx->probes : bucket(ctx, &f->key);
	for (; *pp != NULL; pp = &(*pp)->hnext)
		if (*pp == f) {
			*pp = f->hnext;
			break;
		}
	if (f->kind == FETCH_RESOLVE) {
		ctx->stats.inflight--;
		f->zone->inflight--;
	}
}

static void
attempt_close(struct attempt *a)
{
	if (a->ev != NULL)
		event_free(a->ev);
	if (a->fd != -1)
		close(a->fd);
	if (a->bev != NULL)
		bufferevent_free(a->bev);
	a->ev = NULL;
	a->fd = -1;
	a->bev = NULL;
	if (a->live) {
		a->live = 0;
		a->f->n_live--;
	}
}

static void
fetch_free(struct fetch *f)
{
	struct attempt *a, *next;
	struct fetch_waiter *w;

	for (a = f->attempts; a != NULL; a = next) {
		next = a->next;
		attempt_close(a);
		free(a);
	}
	while ((w = TAILQ_FIRST(&f->waiters)) != NULL) {
		TAILQ_REMOVE(&f->waiters, w, entry);
		w->fetch = NULL;
	}
	if (f->retry != NULL)
		event_free(f->retry);
	if (f->deadline != NULL)
		event_free(f->deadline);
	zone_table_unref(f->zones);
	free(f->order);
	free(f->dead);
	free(f);
}

/* The one way a fetch ends: report to the owner, then free it. */
static void
fetch_end(struct fetch *f, enum fetch_outcome outcome,
    const struct msg_response *r, uint64_t now)
{
	struct fetch_result res = { outcome, r, &f->key, now };

	table_remove(f->ctx, f);
	if (f->kind == FETCH_RESOLVE)
		f->ctx->done(f, &res, f->ctx->arg);
	fetch_free(f);
}

/* Fail from the event loop, never from inside fetch_join's caller. */
static void
fetch_fail_soon(struct fetch *f)
{
	event_active(f->deadline, EV_TIMEOUT, 1);
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	fetch_end(arg, FETCH_FAILED, NULL, clock_now_ms());
}

enum match {
	MATCH_NONE,
	MATCH_CASE_ONLY,	/* the same name, but not the case we sent */
	MATCH_EXACT
};

static enum match
same_question(const struct attempt *a, const struct msg_response *r)
{
	const struct msg_question *q = &a->f->q.q;

	if (r->q.qtype != q->qtype || r->q.qclass != q->qclass ||
	    !msg_name_equal(r->q.qname, r->q.qname_len, a->qname,
	    q->qname_len))
		return MATCH_NONE;
	/* With 0x20, the case echoed back is part of what must match. */
	if (a->cased && memcmp(r->q.qname, a->qname, q->qname_len) != 0)
		return MATCH_CASE_ONLY;
	return MATCH_EXACT;
}

/* Counts when the upstream's per-zone counters could not be had. */
static struct upstream_stats stats_lost;

static void
count_sent(struct attempt *a)
{
	a->st->queries++;
}

/* A question clients asked that the upstream failed, for its probes. */
static const struct msg_question *
clients_question(const struct fetch *f)
{
	return f->kind == FETCH_RESOLVE ? &f->q.q : NULL;
}

/*
 * The upstream failed us: count it, and it counts to being down; except
 * for a loop probe, whose made-up name a healthy upstream may refuse.
 */
static void
count_failure(struct attempt *a, uint64_t now)
{
	if (a->f->kind == FETCH_LOOP_PROBE)
		return;
	a->st->failures++;
	upstream_failed(a->up, clients_question(a->f), now);
}

/* With -v: what happened to attempt a, e.g. "answered SERVFAIL". */
static void
attempt_log(const struct attempt *a, const char *what)
{
	char name[1024];

	if (log_get_level() < LOG_LEVEL_DEBUG)
		return;
	log_debug("upstream %s, %s type %u: %s", a->up->name,
	    msg_name_to_str(a->qname, a->f->q.q.qname_len, name,
	    sizeof(name)), a->f->q.q.qtype, what);
}

/* Tell the waiters of f of a timeout or failure (fetch_waiter.setback). */
static void
fetch_setback(struct fetch *f)
{
	struct fetch_waiter *w, *next;

	for (w = TAILQ_FIRST(&f->waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->setback != NULL)
			w->setback(w, f->zone);
	}
}

/*
 * An attempt ended without a usable answer: this upstream is out. The
 * fetch goes on (it ends, if at all, from the event loop), then waiters
 * hear of it.
 */
static void
attempt_failed(struct attempt *a, const char *why, uint64_t now)
{
	struct fetch *f = a->f;

	attempt_log(a, why);
	count_failure(a, now);
	f->dead[a->idx] = 1;
	attempt_close(a);
	fetch_send_next(f, now);
	fetch_setback(f);
}

static void tcp_read_cb(struct bufferevent *, void *);
static void tcp_event_cb(struct bufferevent *, short, void *);

/* RFC 7766 §5: a truncated UDP answer is asked again over TCP. */
static void
attempt_tcp_start(struct attempt *a, uint64_t now)
{
	struct fetch *f = a->f;

	event_free(a->ev);
	close(a->fd);
	a->ev = NULL;
	a->fd = -1;
	if (f->attempts == a)
		evtimer_del(f->retry);	/* TCP gets until the deadline */
	a->st->tc_retries++;
	count_sent(a);
	a->sent = now;
	a->bev = bufferevent_socket_new(f->ctx->base, -1, BEV_OPT_CLOSE_ON_FREE);
	attempt_log(a, "truncated (TC); asking again over TCP");
	if (a->bev == NULL) {
		attempt_failed(a, "no memory for TCP", now);
		return;
	}
	bufferevent_setcb(a->bev, tcp_read_cb, NULL, tcp_event_cb, a);
	if (bufferevent_socket_connect(a->bev,
	    (const struct sockaddr *)&a->up->addr.ss, (int)a->up->addr.len) ==
	    -1 || frame_add(bufferevent_get_output(a->bev), a->wire,
	    a->wire_len) == -1 ||
	    bufferevent_enable(a->bev, EV_READ) == -1) {
		attempt_failed(a, strerror(errno), now);
		return;
	}
}

/*
 * A response arrived for attempt a. Anything not matching what was sent
 * is ignored (RFC 5452 §9.1) and the attempt keeps waiting, except over
 * TCP where the connection carried only our query.
 */
static void
attempt_receive(struct attempt *a, const uint8_t *pkt, size_t len,
    uint64_t now)
{
	struct fetch *f = a->f;
	struct msg_response r;
	enum match match;
	int tcp = a->bev != NULL;

	if (msg_response_parse(pkt, len, &r) == -1 || r.id != a->id ||
	    (match = same_question(a, &r)) == MATCH_NONE) {
		msg_response_free(&r);
		f->ctx->stats.mismatched++;
		if (tcp)
			attempt_failed(a, "a TCP response that does not match",
			    now);
		else
			attempt_log(a, "ignored a response that does not "
			    "match (RFC 5452)");
		return;
	}
	if (match == MATCH_CASE_ONLY) {
		/*
		 * Ignored like any mismatch: it may be forged, and the real
		 * answer may be on its way. Only if none comes by the
		 * timeout does the upstream lose 0x20 (see retry_cb).
		 */
		msg_response_free(&r);
		f->ctx->stats.mismatched++;
		a->case_only = 1;
		attempt_log(a, "ignored a response in another case (0x20)");
		return;
	}
	if ((r.flags & MSG_FLAG_TC) && !tcp) {
		msg_response_free(&r);
		attempt_tcp_start(a, now);
		return;
	}
	if (r.flags & MSG_FLAG_TC) {
		/* Truncated even over TCP: not an answer (RFC 7766 §8). */
		msg_response_free(&r);
		attempt_failed(a, "truncated over TCP", now);
		return;
	}
	if (r.class == MSG_CLASS_FAILURE || r.class == MSG_CLASS_REFERRAL ||
	    (r.opt_index != -1 && (size_t)r.opt_index != r.n_rrs - 1)) {
		msg_response_free(&r);
		attempt_failed(a, r.class == MSG_CLASS_FAILURE ?
		    "answered with a failure rcode" :
		    r.class == MSG_CLASS_REFERRAL ?
		    "answered with a referral (not recursive?)" :
		    "answered with an OPT record that is not last", now);
		return;
	}
	a->st->answers++;
	metrics_observe(&a->st->latency, now - a->sent);
	upstream_answered(a->up, (uint32_t)(now - a->sent), now);
	fetch_end(f, FETCH_ANSWER, &r, now);
	msg_response_free(&r);
}

static void
udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attempt *a = arg;
	uint64_t now = clock_now_ms();
	ssize_t n;

	(void)what;
	n = recv(fd, a->f->ctx->rbuf, sizeof(a->f->ctx->rbuf), 0);
	if (n == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* ICMP port unreachable surfaces here as ECONNREFUSED. */
		attempt_failed(a, strerror(errno), now);
		return;
	}
	attempt_receive(a, a->f->ctx->rbuf, (size_t)n, now);
}

static void
tcp_read_cb(struct bufferevent *bev, void *arg)
{
	const uint8_t *msg;
	size_t len;

	if ((msg = frame_peek(bufferevent_get_input(bev), &len)) != NULL)
		attempt_receive(arg, msg, len, clock_now_ms());
}

static void
tcp_event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct attempt *a = arg;

	(void)bev;
	if (events & (BEV_EVENT_ERROR | BEV_EVENT_EOF | BEV_EVENT_TIMEOUT)) {
		attempt_failed(a, events & BEV_EVENT_EOF ?
		    "TCP connection closed" : "TCP connection failed",
		    clock_now_ms());
	}
}

/* A connected UDP socket: the kernel picks a random source port and
 * drops datagrams from any other address (RFC 5452 §9.2). */
static int
udp_socket(const struct addr *to)
{
	int fd;

	fd = socket(to->ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, (const struct sockaddr *)&to->ss, to->len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct attempt *
attempt_new(struct fetch *f, size_t idx, uint64_t now)
{
	struct attempt *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->f = f;
	a->up = f->order[idx];
	a->idx = idx;
	a->fd = -1;
	a->id = (uint16_t)arc4random();
	memcpy(a->qname, f->q.q.qname, f->q.q.qname_len);
	if (f->ctx->s.randomize_case && !a->up->no_case) {
		msg_name_randomize_case(a->qname, f->q.q.qname_len);
		a->cased = 1;
	}
	a->wire_len = msg_write_query(&f->q, a->id, a->qname,
	    f->ctx->s.edns_size, a->wire, sizeof(a->wire));
	a->sent = now;
	a->rto = upstream_rto(a->up);
	if ((a->st = upstream_stats_for(a->up, f->zone->name_str)) == NULL)
		a->st = &stats_lost;
	a->next = f->attempts;
	f->attempts = a;
	return a;
}

/* Send a new attempt to slot idx over UDP. Returns 0, or -1 on error. */
static int
attempt_send(struct fetch *f, size_t idx, uint64_t now)
{
	struct attempt *a;

	if ((a = attempt_new(f, idx, now)) == NULL)
		return -1;
	if (!a->up->loop_checked && f->kind == FETCH_RESOLVE)
		loop_probe_start(f, a->up, now);
	f->n_sent++;
	count_sent(a);
	if ((a->fd = udp_socket(&a->up->addr)) == -1 ||
	    send(a->fd, a->wire, a->wire_len, 0) == -1 ||
	    (a->ev = event_new(f->ctx->base, a->fd, EV_READ | EV_PERSIST,
	    udp_read_cb, a)) == NULL || event_add(a->ev, NULL) == -1) {
		attempt_log(a, strerror(errno));
		count_failure(a, now);
		return -1;
	}
	a->live = 1;
	f->n_live++;
	return 0;
}

/* Send a new attempt to slot i and arm the retry timer with its RTO. */
static int
fetch_send_to(struct fetch *f, size_t i, uint64_t now)
{
	struct timeval tv;

	if (attempt_send(f, i, now) == -1)
		return -1;
	tv = clock_ms_to_tv(f->attempts->rto);
	evtimer_add(f->retry, &tv);
	return 0;
}

/*
 * Send to the next upstream not known to have failed, cycling through the
 * order again for retransmissions. With nothing left to send and nothing
 * to wait for, the fetch has failed.
 */
static void
fetch_send_next(struct fetch *f, uint64_t now)
{
	size_t tries, i;

	/* A probe is one query: its back-off is the probing's business. */
	unsigned max = f->kind == FETCH_RESOLVE ? FETCH_MAX_ATTEMPTS : 1;

	for (tries = 0; tries < f->n_order && f->n_sent < max; tries++) {
		i = f->next++ % f->n_order;
		if (f->dead[i])
			continue;
		if (fetch_send_to(f, i, now) == 0)
			return;
		f->dead[i] = 1;
	}
	if (f->n_live == 0)
		fetch_fail_soon(f);
}

/* The newest attempt's RTO passed without an answer: try the next one,
 * and keep listening for the late answer meanwhile. */
static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fetch *f = arg;
	struct attempt *a = f->attempts;
	uint64_t now = clock_now_ms();

	(void)fd;
	(void)what;
	if (a != NULL && a->live && a->bev == NULL && a->case_only) {
		/*
		 * Only answers in another case came, never ours: this upstream
		 * does not echo case. Ask it again, and from now on, without
		 * 0x20 rather than never getting an answer.
		 */
		upstream_no_case(a->up);
		attempt_close(a);
		if (fetch_send_to(f, a->idx, now) == 0)
			return;
	}
	if (a != NULL && a->live && a->bev == NULL &&
	    f->kind != FETCH_LOOP_PROBE) {
		attempt_log(a, "no answer within its timeout; asking the next");
		a->st->timeouts++;
		upstream_timed_out(a->up, clients_question(f), a->rto,
		    a->sent, now);
	}
	fetch_send_next(f, now);
	fetch_setback(f);
}

/*
 * A fetch of key through zone: to `only` if given (a probe), else to the
 * zone's upstreams in the order of its policy. Not yet sending.
 */
static struct fetch *
fetch_new(struct fetch_ctx *ctx, enum fetch_kind kind,
    const struct cache_key *key, const struct msg_query *q,
    struct zone_table *zones, struct zone *zone, struct upstream *only)
{
	struct fetch *f;
	struct timeval tv;
	size_t n = only != NULL ? 1 : zone->n_upstreams;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->ctx = ctx;
	f->kind = kind;
	f->key = *key;
	f->q = *q;
	msg_name_fold(f->q.q.qname, f->q.q.qname_len);
	f->zones = zone_table_ref(zones);
	f->zone = zone;
	TAILQ_INIT(&f->waiters);
	f->order = calloc(n, sizeof(*f->order));
	f->dead = calloc(n, 1);
	f->retry = evtimer_new(ctx->base, retry_cb, f);
	f->deadline = evtimer_new(ctx->base, deadline_cb, f);
	if (f->order == NULL || f->dead == NULL || f->retry == NULL ||
	    f->deadline == NULL) {
		fetch_free(f);
		return NULL;
	}
	if (only != NULL)
		f->order[f->n_order++] = only;
	else
		f->n_order = upstream_order(zone->upstreams, n, zone->policy,
		    f->q.q.qname, f->q.q.qname_len, f->order);
	tv = clock_ms_to_tv(ctx->s.query_timeout);
	evtimer_add(f->deadline, &tv);
	return f;
}

int
fetch_join(struct fetch_ctx *ctx, const struct cache_key *key,
    const struct msg_query *q, struct zone_table *zones, struct zone *zone,
    uint64_t now, struct fetch_waiter *w)
{
	struct fetch *f;
	int started = 0;

	if ((f = table_find(ctx, key)) != NULL) {
		ctx->stats.coalesced += w != NULL;
	} else {
		/* A zone spends its own budget only: a stalled upstream of
		 * one zone cannot starve the others. */
		if (ctx->stats.inflight >= ctx->s.max_inflight ||
		    zone->inflight >= zone->max_inflight ||
		    (f = fetch_new(ctx, FETCH_RESOLVE, key, q, zones, zone,
		    NULL)) == NULL) {
			ctx->stats.over_budget++;
			return -1;
		}
		f->hnext = *bucket(ctx, key);
		*bucket(ctx, key) = f;
		ctx->stats.inflight++;
		ctx->stats.started++;
		zone->inflight++;
		f->started = now;
		started = 1;
		fetch_send_next(f, now);
	}
	if (w != NULL) {
		TAILQ_INSERT_TAIL(&f->waiters, w, entry);
		w->fetch = f;
	}
	return started;
}

uint64_t
fetch_started(struct fetch_ctx *ctx, const struct cache_key *key)
{
	struct fetch *f = table_find(ctx, key);

	return f != NULL ? f->started : 0;
}

/* A fetch of question qq to upstream u alone, for its own sake. */
static void
probe_start(struct fetch_ctx *ctx, enum fetch_kind kind, struct upstream *u,
    struct zone_table *zones, struct zone *zone,
    const struct msg_question *qq, uint64_t now)
{
	struct msg_query q;
	struct cache_key key;
	struct fetch *f;

	memset(&q, 0, sizeof(q));
	q.q = *qq;
	memset(&key, 0, sizeof(key));
	if ((f = fetch_new(ctx, kind, &key, &q, zones, zone, u)) == NULL)
		return;
	f->hnext = ctx->probes;
	ctx->probes = f;
	fetch_send_next(f, now);
}

/* The question (qname, IN, qtype) in q. */
static void
question_set(struct msg_question *q, const uint8_t *qname, size_t qname_len,
    uint16_t qtype)
{
	memcpy(q->qname, qname, qname_len);
	q->qname_len = (uint8_t)qname_len;
	q->qtype = qtype;
	q->qclass = MSG_CLASS_IN;
}

/*
 * Probe down upstream u, met first in zone z, with two questions: z's
 * SOA, which a resolver answers even when the names it failed are broken
 * at their source; and the latest question u failed, if a zone forwarding
 * to u still claims it, which a server that only answers some names (one
 * authoritative for a few zones, behind ".") answers when it refuses the
 * SOA. Either answered marks u up.
 */
static void
probe_down(struct fetch_ctx *ctx, struct zone_table *zones, struct zone *z,
    struct upstream *u, uint64_t now)
{
	const struct msg_question *fq = &u->failed_q;
	struct msg_question soa;
	struct zone *fz;

	question_set(&soa, z->name, z->name_len, MSG_TYPE_SOA);
	probe_start(ctx, FETCH_PROBE, u, zones, z, &soa, now);
	if (fq->qname_len == 0)
		return;
	fz = zone_find(zones, fq->qname, fq->qname_len);
	if (fz != NULL && zone_uses(fz, u))
		probe_start(ctx, FETCH_PROBE, u, zones, fz, fq, now);
}

void
fetch_probe_down(struct fetch_ctx *ctx, struct zone_table *zones,
    uint64_t now)
{
	struct zone *z;
	size_t i, j;

	if (!upstream_any_down(zone_table_registry(zones)))
		return;
	for (i = 0; i < zone_count(zones); i++) {
		z = zone_at(zones, i);
		for (j = 0; j < z->n_upstreams; j++)
			if (upstream_probe_due(z->upstreams[j], now))
				probe_down(ctx, zones, z, z->upstreams[j], now);
	}
}

/*
 * Like dnsmasq's loop detection: ask u once for a name that only we could
 * have made up, under the zone so that a forwarder behind u routes it
 * back to us if it routes to us at all; "<random>.test." (RFC 6761 §6.2)
 * for the root. If it comes in through our listener, u is a loop.
 */
static void
loop_probe_start(struct fetch *f, struct upstream *u, uint64_t now)
{
	static const uint8_t test[] = "\4test";
	uint8_t name[MSG_NAME_MAX];
	struct msg_question q;
	const uint8_t *suffix = f->zone->name;
	size_t suffix_len = f->zone->name_len, len;
	uint32_t r[2];

	u->loop_checked = 1;
	if (suffix_len == 1) {
		suffix = test;
		suffix_len = sizeof(test);
	}
	if (suffix_len + 18 > MSG_NAME_MAX)
		return;
	arc4random_buf(r, sizeof(r));
	name[0] = 16;
	len = 1 + (size_t)snprintf((char *)name + 1, sizeof(name) - 1,
	    "%08x%08x", r[0], r[1]);
	memcpy(name + len, suffix, suffix_len);
	question_set(&q, name, len + suffix_len, MSG_TYPE_TXT);
	probe_start(f->ctx, FETCH_LOOP_PROBE, u, f->zones, f->zone, &q, now);
}

int
fetch_loop_check(struct fetch_ctx *ctx, const struct msg_query *q)
{
	uint8_t folded[MSG_NAME_MAX];
	struct fetch *f;

	if (ctx->probes == NULL)
		return 0;
	memcpy(folded, q->q.qname, q->q.qname_len);
	msg_name_fold(folded, q->q.qname_len);
	for (f = ctx->probes; f != NULL; f = f->hnext)
		if (f->kind == FETCH_LOOP_PROBE &&
		    f->q.q.qname_len == q->q.qname_len &&
		    memcmp(f->q.q.qname, folded, q->q.qname_len) == 0) {
			upstream_loop(f->order[0]);
			return 1;
		}
	return 0;
}

void
fetch_leave(struct fetch_waiter *w)
{
	if (w->fetch == NULL)
		return;
	TAILQ_REMOVE(&w->fetch->waiters, w, entry);
	w->fetch = NULL;
}

struct fetch_waiter *
fetch_take_waiter(struct fetch *f)
{
	struct fetch_waiter *w;

	if ((w = TAILQ_FIRST(&f->waiters)) != NULL) {
		TAILQ_REMOVE(&f->waiters, w, entry);
		w->fetch = NULL;
	}
	return w;
}

struct fetch_ctx *
fetch_ctx_new(struct event_base *base, const struct fetch_settings *s,
    fetch_done_fn done, void *arg)
{
	struct fetch_ctx *ctx;

	if ((ctx = calloc(1, sizeof(*ctx))) == NULL)
		return NULL;
	ctx->base = base;
	ctx->s = *s;
	ctx->done = done;
	ctx->arg = arg;
	return ctx;
}

void
fetch_ctx_configure(struct fetch_ctx *ctx, const struct fetch_settings *s)
{
	ctx->s = *s;
}

void
fetch_ctx_free(struct fetch_ctx *ctx)
{
	size_t i;

	if (ctx == NULL)
		return;
	for (i = 0; i < FETCH_BUCKETS; i++)
		while (ctx->buckets[i] != NULL)
			fetch_end(ctx->buckets[i], FETCH_CANCELLED, NULL,
			    clock_now_ms());
	while (ctx->probes != NULL)
		fetch_end(ctx->probes, FETCH_CANCELLED, NULL, clock_now_ms());
	free(ctx);
}

void
fetch_stats(const struct fetch_ctx *ctx, struct fetch_stats *out)
{
	*out = ctx->stats;
}
