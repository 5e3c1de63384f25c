/* tlsconn.c: one worker's DNS over TLS connections to upstreams, pipelined and reused. */
#include "autoconf.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "frame.h"
#include "metrics.h"
#include "msg.h"
#include "tlsconn.h"
#include "wire.h"

#define OPT_TYPE	41	/* RFC 6891 §6.1.1 */
#define PADDING_CODE	12	/* RFC 7830 §3 */
#define OPTION_HDR_LEN	4	/* option code, option length */
/* The largest query sent: attempt's longest, padded. */
#define QUERY_MAX	(MSG_QUERY_MAX_LEN + OPTION_HDR_LEN + TLSCONN_PAD_BLOCK)

TAILQ_HEAD(qlist, tlsconn_query);
struct conn;

/* One upstream's connections in this worker, and its session. */
struct entry {
	TAILQ_ENTRY(entry)	 link;
	struct tlsconn_pool	*pool;
	struct tlsctx		*t;		/* a reference */
	SSL_SESSION		*session;	/* to resume, or NULL */
	TAILQ_HEAD(, conn)	 conns;
	unsigned		 n_conns;
};

struct tlsconn_pool {
	struct event_base	*base;
	TAILQ_HEAD(entry_list, entry) entries;	/* most recently used first */
	unsigned		 n_entries;
};

struct conn {
	TAILQ_ENTRY(conn)	 link;
	struct entry		*e;
	struct bufferevent	*bev;
	struct event		*timer;		/* handshake, then idle */
	int			 ready;		/* handshake done */
	int			 peer_closed;	/* the server closed it, or it
						 * failed */
	int			 stalled;	/* to be closed: a query went
						 * unanswered past its timeout
						 * with nothing read since */
	uint64_t		 last_read;	/* ms of its last response */
	struct qlist		 waiting;	/* written, or to be once
						 * ready; unanswered */
	unsigned		 n_waiting;
};

struct tlsconn_query {
	TAILQ_ENTRY(tlsconn_query) link;
	struct qlist		*on;		/* the list it is on, or NULL */
	struct conn		*c;		/* carrying it, or NULL */
	const struct transport_conn_cb *cb;
	void			*arg;
	uint32_t		 timeout_ms;
	uint64_t		 sent;		/* ms, written */
	int			 resent;
	uint16_t		 id;
	size_t			 qlen;		/* its question, from msg + 12 */
	size_t			 len;
	uint8_t			 msg[QUERY_MAX];
};

static void conn_event_cb(struct bufferevent *, short, void *);
static void conn_read_cb(struct bufferevent *, void *);
static int send_on(struct entry *, struct tlsconn_query *, uint64_t);

size_t
tlsconn_pad(uint8_t *buf, size_t len, size_t cap)
{
	size_t off = MSG_HEADER_LEN, opt, pad;

	if (len < MSG_HEADER_LEN || wire_rd16(buf + 4) != 1 ||
	    wire_rd16(buf + 6) != 0 || wire_rd16(buf + 8) != 0 ||
	    wire_rd16(buf + 10) != 1)
		return len;
	while (off < len && buf[off] != 0)
		off += 1 + buf[off];
	opt = off + 1 + MSG_QTYPE_QCLASS_LEN;
	if (opt + MSG_OPT_LEN > len || buf[opt] != 0 ||
	    wire_rd16(buf + opt + 1) != OPT_TYPE ||
	    opt + MSG_OPT_LEN + wire_rd16(buf + opt + 9) != len)
		return len;
	pad = (TLSCONN_PAD_BLOCK - (len + OPTION_HDR_LEN) % TLSCONN_PAD_BLOCK) %
	    TLSCONN_PAD_BLOCK;
	if (len + OPTION_HDR_LEN + pad > cap)
		return len;
	wire_wr16(buf + opt + 9, (uint16_t)(wire_rd16(buf + opt + 9) +
	    OPTION_HDR_LEN + pad));
	wire_wr16(buf + len, PADDING_CODE);
	wire_wr16(buf + len + 2, (uint16_t)pad);
	memset(buf + len + OPTION_HDR_LEN, 0, pad);
	return len + OPTION_HDR_LEN + pad;
}

/* Move q from the list it is on (if any) to l (if not NULL). */
static void
q_move(struct tlsconn_query *q, struct qlist *l)
{
	if (q->on != NULL)
		TAILQ_REMOVE(q->on, q, link);
	if (q->c != NULL)
		q->c->n_waiting--;
	q->on = l;
	q->c = NULL;
	if (l != NULL)
		TAILQ_INSERT_TAIL(l, q, link);
}

/* Free c and forget it; its queries must be gone from it already. */
static void
conn_free(struct conn *c)
{
	struct entry *e = c->e;
	SSL *ssl;

	TAILQ_REMOVE(&e->conns, c, link);
	e->n_conns--;
	metrics_add_shared(&e->t->stats.open, (uint64_t)-1);
	metrics_add_shared(&e->t->stats.closed, 1);
	if ((ssl = bufferevent_openssl_get_ssl(c->bev)) != NULL) {
		tlsctx_ssl_forget(ssl);
		/*
		 * A connection that was up ends as if shut down cleanly, so
		 * that OpenSSL keeps its session resumable (SSL_free of one
		 * not shut down marks it not resumable): close_notify when we
		 * close it idle, the flags alone when the server went first.
		 */
		if (c->ready && !c->peer_closed)
			(void)SSL_shutdown(ssl);
		else if (c->ready)
			SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN |
			    SSL_RECEIVED_SHUTDOWN);
		ERR_clear_error();
	}
	bufferevent_free(c->bev);
	event_free(c->timer);
	free(c);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg);

/* Set c's timer: ms from now. */
static void
conn_timer(struct conn *c, uint32_t ms)
{
	struct timeval tv = clock_ms_to_tv(ms);

	evtimer_add(c->timer, &tv);
}

/*
 * c ended (closed by the server, failed, or its handshake did not end in
 * time: fail, with detail, a reason of handshake). Its queries are sent
 * again once on another connection if c was ready (the server closed it
 * under them, RFC 7766 §6.2.3), else they fail, as do those sent again
 * already.
 */
static void
conn_end(struct conn *c, int handshake, enum tlsctx_fail fail,
    const char *detail, uint64_t now)
{
	struct entry *e = c->e;
	struct tlsconn_query *q;
	struct qlist gone = TAILQ_HEAD_INITIALIZER(gone);
	int ready = c->ready;
	const char *why;

	while ((q = TAILQ_FIRST(&c->waiting)) != NULL)
		q_move(q, &gone);
	conn_free(c);
	if (handshake)
		tlsctx_failed(e->t, fail, detail, now);
	why = handshake ? tlsctx_fail_names[fail] :
	    "TLS connection closed";
	/* Each callback may cancel any query of gone: take one at a time. */
	while ((q = TAILQ_FIRST(&gone)) != NULL) {
		if (ready && !q->resent) {
			q->resent = 1;
			metrics_add_shared(&e->t->stats.resent, 1);
			q_move(q, NULL);
			if (send_on(e, q, now) == 0)
				continue;
		}
		q_move(q, NULL);
		q->cb->error(q->arg, why, now);
	}
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->ready)	/* idle for tls-idle-timeout, or stalled */
		conn_end(c, 0, TLSCTX_FAIL_TIMEOUT, NULL, clock_now_ms());
	else
		conn_end(c, 1, TLSCTX_FAIL_TIMEOUT, "no TLS connection within "
		    "the upstream's timeout", clock_now_ms());
}

/* Write q on c (buffered until the handshake ends, which authenticates
 * the server first). */
static int
conn_write(struct conn *c, struct tlsconn_query *q)
{
	if (frame_add(bufferevent_get_output(c->bev), q->msg, q->len) == -1) {
		errno = ENOMEM;
		return -1;
	}
	q_move(q, &c->waiting);
	q->c = c;
	q->sent = clock_now_ms();
	c->n_waiting++;
	metrics_add_shared(&c->e->t->stats.queries, 1);
	if (c->ready)
		evtimer_del(c->timer);
	return 0;
}

static void
conn_event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct conn *c = arg;
	struct tlsctx *t = c->e->t;
	uint64_t now = clock_now_ms();
	char detail[256];
	enum tlsctx_fail fail;

	if (events & BEV_EVENT_CONNECTED) {
		c->ready = 1;
		evtimer_del(c->timer);
		metrics_add_shared(&t->stats.handshakes, 1);
		if (SSL_session_reused(bufferevent_openssl_get_ssl(bev)))
			metrics_add_shared(&t->stats.resumed, 1);
		if (c->n_waiting == 0)
			conn_timer(c, t->idle_ms);
		return;
	}
	if (!(events & (BEV_EVENT_ERROR | BEV_EVENT_EOF)))
		return;
	if (c->ready) {
		c->peer_closed = 1;
		conn_end(c, 0, TLSCTX_FAIL_CONNECT, NULL, now);
		return;
	}
	fail = tlsctx_why(bufferevent_openssl_get_ssl(bev),
	    bufferevent_get_openssl_error(bev), detail, sizeof(detail));
	while (bufferevent_get_openssl_error(bev) != 0)
		;
	conn_end(c, 1, fail, detail, now);
}

/* Whether response pkt (len octets) answers q: its ID and question, the
 * name's case aside (attempt checks the case). */
static int
answers(const struct tlsconn_query *q, uint16_t id,
    const struct msg_question *rq)
{
	const uint8_t *qq = q->msg + MSG_HEADER_LEN;

	return id == q->id && rq->qname_len == q->qlen &&
	    msg_name_equal(rq->qname, rq->qname_len, qq, q->qlen) &&
	    rq->qtype == wire_rd16(qq + q->qlen) &&
	    rq->qclass == wire_rd16(qq + q->qlen + 2);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct tlsconn_query *q;
	struct msg_question rq;
	const uint8_t *pkt;
	uint64_t now = clock_now_ms();
	uint16_t id;
	size_t len;

	while ((pkt = frame_peek(in, &len)) != NULL) {
		if (msg_response_question(pkt, len, &id, &rq) == -1)
			q = NULL;
		else
			TAILQ_FOREACH(q, &c->waiting, link)
				if (answers(q, id, &rq))
					break;
		if (q == NULL) {
			/* The late answer to a query given up (cancelled),
			 * or garbage: dropped, as over UDP. */
			frame_drain(in, len);
			continue;
		}
		q_move(q, NULL);
		c->last_read = now;
		if (c->n_waiting == 0 && !c->stalled)
			conn_timer(c, c->e->t->idle_ms);
		/* The callback may cancel queries of c, not free c. */
		q->cb->response(q->arg, pkt, len, now);
		frame_drain(in, len);
	}
}

/* A new connection to e's upstream, connecting; NULL with errno set. */
static struct conn *
conn_open(struct entry *e, uint32_t timeout_ms)
{
	const struct addr *to = &e->t->addr;
	struct conn *c;
	SSL *ssl;
	int err;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->e = e;
	TAILQ_INIT(&c->waiting);
	if ((c->timer = evtimer_new(e->pool->base, timer_cb, c)) == NULL)
		goto nomem;
	if ((ssl = tlsctx_ssl(e->t, e->session, &e->session)) == NULL)
		goto nomem;
	if ((c->bev = bufferevent_openssl_socket_new(e->pool->base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(ssl);
		goto nomem;
	}
	/* A server closing without close_notify has closed all the same. */
	bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	bufferevent_setcb(c->bev, conn_read_cb, NULL, conn_event_cb, c);
	/* Room for one whole response, no more (as over TCP). */
	bufferevent_setwatermark(c->bev, EV_READ, 0,
	    FRAME_PREFIX_LEN + MSG_MAX_LEN);
	TAILQ_INSERT_TAIL(&e->conns, c, link);
	e->n_conns++;
	metrics_add_shared(&e->t->stats.open, 1);
	metrics_add_shared(&e->t->stats.opened, 1);
	if (bufferevent_socket_connect(c->bev, (const struct sockaddr *)
	    &to->ss, (int)to->len) == -1 ||
	    bufferevent_enable(c->bev, EV_READ | EV_WRITE) == -1) {
		err = errno != 0 ? errno : ECONNREFUSED;
		conn_free(c);
		errno = err;
		return NULL;
	}
	conn_timer(c, timeout_ms);
	return c;
nomem:
	if (c->timer != NULL)
		event_free(c->timer);
	free(c);
	errno = ENOMEM;
	return NULL;
}

/*
 * The connection of e to carry one more query: the first with fewer than
 * tls-max-inflight waiting; else a new one, up to TLSCONN_MAX_CONNS; else
 * the one with fewest waiting.
 */
static struct conn *
conn_pick(struct entry *e, uint32_t timeout_ms)
{
	struct conn *c, *least = NULL;

	TAILQ_FOREACH(c, &e->conns, link) {
		if (c->stalled)
			continue;
		if (c->n_waiting < e->t->max_inflight)
			return c;
		if (least == NULL || c->n_waiting < least->n_waiting)
			least = c;
	}
	if (e->n_conns < TLSCONN_MAX_CONNS || least == NULL)
		return conn_open(e, timeout_ms);
	return least;
}

static int
send_on(struct entry *e, struct tlsconn_query *q, uint64_t now)
{
	struct conn *c;

	(void)now;
	if ((c = conn_pick(e, q->timeout_ms)) == NULL)
		return -1;
	return conn_write(c, q);
}

static void
entry_free(struct entry *e)
{
	struct conn *c;
	struct tlsconn_query *q;

	while ((c = TAILQ_FIRST(&e->conns)) != NULL) {
		while ((q = TAILQ_FIRST(&c->waiting)) != NULL)
			q_move(q, NULL);
		conn_free(c);
	}
	TAILQ_REMOVE(&e->pool->entries, e, link);
	e->pool->n_entries--;
	SSL_SESSION_free(e->session);
	tlsctx_unref(e->t);
	free(e);
}

/* p's entry of t, made first if need be (an idle one making room). */
static struct entry *
entry_get(struct tlsconn_pool *p, struct tlsctx *t)
{
	struct entry *e;

	TAILQ_FOREACH(e, &p->entries, link)
		if (e->t == t) {
			TAILQ_REMOVE(&p->entries, e, link);
			TAILQ_INSERT_HEAD(&p->entries, e, link);
			return e;
		}
	if (p->n_entries >= TLSCONN_MAX_UPSTREAMS)
		TAILQ_FOREACH_REVERSE(e, &p->entries, entry_list, link)
			if (e->n_conns == 0) {
				entry_free(e);
				break;
			}
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	e->pool = p;
	e->t = tlsctx_ref(t);
	TAILQ_INIT(&e->conns);
	TAILQ_INSERT_HEAD(&p->entries, e, link);
	p->n_entries++;
	return e;
}

/* The question's length of query msg (len octets): its name's. */
static size_t
question_len(const uint8_t *msg, size_t len)
{
	size_t off = MSG_HEADER_LEN;

	while (off < len && msg[off] != 0)
		off += 1 + msg[off];
	return off + 1 + MSG_QTYPE_QCLASS_LEN <= len ? off + 1 -
	    MSG_HEADER_LEN : 0;
}

struct tlsconn_query *
tlsconn_send(struct tlsconn_pool *p, struct tlsctx *t, const uint8_t *msg,
    size_t len, uint32_t timeout_ms, const struct transport_conn_cb *cb,
    void *arg)
{
	struct tlsconn_query *q;
	struct entry *e;
	int err;

	if (len > MSG_QUERY_MAX_LEN || (len >= MSG_HEADER_LEN &&
	    question_len(msg, len) == 0) || len < MSG_HEADER_LEN) {
		errno = EINVAL;
		return NULL;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	memcpy(q->msg, msg, len);
	q->len = tlsconn_pad(q->msg, len, sizeof(q->msg));
	q->id = wire_rd16(msg);
	q->qlen = question_len(msg, len);
	q->cb = cb;
	q->arg = arg;
	q->timeout_ms = timeout_ms;
	if ((e = entry_get(p, t)) == NULL ||
	    send_on(e, q, clock_now_ms()) == -1) {
		err = e == NULL ? ENOMEM : errno;
		free(q);
		errno = err;
		return NULL;
	}
	return q;
}

void
tlsconn_cancel(struct tlsconn_query *q)
{
	struct conn *c;
	uint64_t now;

	if (q == NULL)
		return;
	c = q->c;
	q_move(q, NULL);
	now = clock_now_ms();
	if (c != NULL && c->ready && !c->stalled &&
	    now - q->sent >= q->timeout_ms && c->last_read < q->sent) {
		/*
		 * Given up unanswered past its timeout, and c has read
		 * nothing since it was written: a server that took the
		 * handshake but answers nothing. c takes no more queries and
		 * closes at the loop's next turn (not from inside this call),
		 * the queries it holds going again once on a new one.
		 */
		c->stalled = 1;
		conn_timer(c, 0);
	} else if (c != NULL && c->ready && !c->stalled && c->n_waiting == 0)
		/* A late answer to q is matched to nothing and dropped. */
		conn_timer(c, c->e->t->idle_ms);
	free(q);
}

struct tlsconn_pool *
tlsconn_pool_new(struct event_base *base)
{
	struct tlsconn_pool *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->base = base;
	TAILQ_INIT(&p->entries);
	return p;
}

void
tlsconn_pool_free(struct tlsconn_pool *p)
{
	if (p == NULL)
		return;
	while (!TAILQ_EMPTY(&p->entries))
		entry_free(TAILQ_FIRST(&p->entries));
	free(p);
}
