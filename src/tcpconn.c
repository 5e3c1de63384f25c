/* tcpconn.c: client DNS over TCP (RFC 7766). */
#include "autoconf.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "accept.h"
#include "admit.h"
#include "clock.h"
#include "frame.h"
#include "log.h"
#include "msg.h"
#include "query.h"
#include "tcpconn.h"

#define TCP_PIPELINE_MAX	64		/* queries pending per connection */
#define TCP_OUTPUT_HIGH		(64 * 1024)	/* unread answers: read no
						 * more queries for now */
#define TCP_OUTPUT_MAX		(1024 * 1024)	/* unread answers: a stuck client */

struct tcpconn {
	TAILQ_ENTRY(tcpconn)	 entry;		/* ctx->tcp_conns */
	struct tcp_server	*srv;		/* NULL once closed */
	struct bufferevent	*bev;
	struct addr		 peer;
	unsigned		 refs;		/* open + pending queries +
						 * a callback running */
	unsigned		 pending;
	int			 closing;	/* no more reading: close once
						 * answered and written */
	uint64_t		 partial_since;	/* ms; a message incomplete
						 * since then, or 0 */
	int			 heard;		/* a whole message came */
	uint32_t		 deadline;	/* ms of silence it may have
						 * now */
};

struct tcp_server {
	struct query_ctx	*ctx;
	struct evconnlistener	*listener;
	uint8_t			 answer[QUERY_ANSWER_MAX]; /* one at a time */
};

static void
conn_unref(struct tcpconn *c)
{
	if (--c->refs == 0)
		free(c);
}

static void
conn_close(struct tcpconn *c)
{
	if (c->srv == NULL)
		return;
	TAILQ_REMOVE(&c->srv->ctx->tcp_conns, c, entry);
	metrics_sub(&c->srv->ctx->metrics.tcp_open, 1);
	(void)__atomic_fetch_sub(c->srv->ctx->tcp_open, 1, __ATOMIC_RELAXED);
	c->srv = NULL;
	bufferevent_free(c->bev);
	c->bev = NULL;
	conn_unref(c);
}

/* c did something worth its slot: last in line for eviction. */
static void
conn_active(struct tcpconn *c)
{
	struct query_ctx *ctx = c->srv->ctx;

	TAILQ_REMOVE(&ctx->tcp_conns, c, entry);
	TAILQ_INSERT_TAIL(&ctx->tcp_conns, c, entry);
}

/*
 * How long c may stay silent: tcp-idle-timeout between messages, but
 * only tcp-initial-timeout (never longer) before its first whole message
 * and while one is coming in: a slot held by a client that says nothing
 * useful is freed sooner (RFC 7766 §6.2.3). Set when it changes.
 */
static void
conn_deadline(struct tcpconn *c, int partial)
{
	const struct config *conf = c->srv->ctx->conf;
	uint32_t ms = conf->tcp_idle_timeout;
	struct timeval read, write;

	if ((!c->heard || partial) && conf->tcp_initial_timeout < ms)
		ms = conf->tcp_initial_timeout;
	if (ms == c->deadline)
		return;
	c->deadline = ms;
	read = clock_ms_to_tv(ms);
	write = clock_ms_to_tv(conf->tcp_idle_timeout);
	bufferevent_set_timeouts(c->bev, &read, &write);
}

/* Closing, every answer given and written: close. */
static void
conn_maybe_close(struct tcpconn *c)
{
	if (c->srv != NULL && c->closing && c->pending == 0 &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_close(c);
}

/*
 * Read no more, but answer what was asked before closing: after the
 * client's half-close (RFC 7766 §6.2.4 lets it wait for answers) or a
 * message that cannot be framed.
 */
static void
conn_finish(struct tcpconn *c)
{
	if (c->srv == NULL)
		return;
	c->closing = 1;
	bufferevent_disable(c->bev, EV_READ);
	conn_maybe_close(c);
}

/* cl's query waits for a fetch: its connection must outlive it. */
static void
conn_hold(const struct client *cl)
{
	cl->conn->refs++;
	cl->conn->pending++;
}

/*
 * 1 if c is to read no more queries for now: as many are pending as
 * pipelining allows, or its client is not reading the answers it has
 * (what it makes us hold is bounded, not only the 1 MiB that closes it).
 */
static int
conn_full(struct tcpconn *c)
{
	return c->pending >= TCP_PIPELINE_MAX ||
	    evbuffer_get_length(bufferevent_get_output(c->bev)) >=
	    TCP_OUTPUT_HIGH;
}

/* Reading stopped by conn_full goes on once it may. */
static void
conn_resume(struct tcpconn *c)
{
	if (c->srv == NULL || c->closing || conn_full(c) ||
	    (bufferevent_get_enabled(c->bev) & EV_READ))
		return;
	/* Queries may already wait in the input: read them now. */
	bufferevent_enable(c->bev, EV_READ);
	bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * cl's waiting query has ended; reading resumes if conn_full had paused
 * it. May free the connection.
 */
static void
conn_release(const struct client *cl)
{
	struct tcpconn *c = cl->conn;

	c->pending--;
	if (c->srv != NULL && c->closing)
		conn_maybe_close(c);
	else
		conn_resume(c);
	conn_unref(c);
}

/*
 * Queue one answer (len octets, at most MSG_MAX_LEN) with its length
 * prefix; dropped if c has closed meanwhile.
 */
static void
conn_send(struct tcpconn *c, const uint8_t *buf, size_t len)
{
	struct evbuffer *out;

	if (c->srv == NULL)
		return;
	out = bufferevent_get_output(c->bev);
	if (evbuffer_get_length(out) > TCP_OUTPUT_MAX) {
		log_debug("tcp client not reading its answers; closing");
		conn_close(c);
		return;
	}
	(void)frame_add(out, buf, len);
	conn_active(c);
}

static void
client_send(const struct client *cl, const uint8_t *buf, size_t len)
{
	conn_send(cl->conn, buf, len);
}

static const struct client_ops tcp_ops = { client_send, conn_hold,
    conn_release };

/* Handle one framed message of len octets; 0 to go on, -1 to stop. */
static int
handle(struct tcpconn *c, const uint8_t *msg, size_t len, uint64_t now)
{
	struct tcp_server *srv = c->srv;
	struct client cl;
	size_t outlen;

	memset(&cl, 0, sizeof(cl));
	cl.ops = &tcp_ops;
	cl.transport = CLIENT_TCP;
	cl.peer = c->peer;
	cl.conn = c;
	switch (query_handle(srv->ctx, msg, len, &cl, now, srv->answer,
	    sizeof(srv->answer), &outlen)) {
	case QUERY_ANSWERED:
		conn_send(c, srv->answer, outlen);
		break;
	case QUERY_PENDING:
		break;
	case QUERY_DROPPED:
		/* Unframeable garbage: the stream cannot be trusted. */
		conn_finish(c);
		return -1;
	}
	return c->srv != NULL ? 0 : -1;
}

/*
 * A message trickling in for longer than its deadline holds a slot as
 * surely as an idle connection (RFC 7766 §6.2.3): close it.
 */
static void
check_partial(struct tcpconn *c, struct evbuffer *in, uint64_t now)
{
	int partial = evbuffer_get_length(in) > 0;

	conn_deadline(c, partial);
	if (!partial) {
		c->partial_since = 0;
		return;
	}
	if (c->partial_since == 0)
		c->partial_since = now;
	else if (now - c->partial_since > c->deadline)
		conn_close(c);
}

/* Take every complete message off the input, until conn_full. */
static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct tcpconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint64_t now = clock_now_ms();
	const uint8_t *msg;
	size_t len;

	c->refs++;	/* answering may close it; it must outlive us */
	while (c->srv != NULL && !c->closing && !conn_full(c) &&
	    (msg = frame_peek(in, &len)) != NULL) {
		if (handle(c, msg, len, now) == -1)
			break;
		frame_drain(in, len);
		c->partial_since = 0;
		c->heard = 1;
		if (c->srv != NULL)
			conn_active(c);
	}
	if (c->srv != NULL && !c->closing) {
		if (conn_full(c))
			bufferevent_disable(bev, EV_READ);
		else
			check_partial(c, in, now);
	}
	conn_unref(c);
}

/* Everything written: a closing connection may go now, another read on. */
static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct tcpconn *c = arg;

	(void)bev;
	c->refs++;
	conn_maybe_close(c);
	conn_resume(c);
	conn_unref(c);
}

static void
event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct tcpconn *c = arg;

	/* RFC 7766 §6.2.3: idle means no query pending, not just silence. */
	if ((events & BEV_EVENT_TIMEOUT) && (events & BEV_EVENT_READING) &&
	    c->pending > 0) {
		bufferevent_enable(bev, EV_READ);
		return;
	}
	/* Half-closed: what was asked is still answered. */
	if ((events & BEV_EVENT_EOF) && (events & BEV_EVENT_READING) &&
	    !(events & BEV_EVENT_ERROR)) {
		conn_finish(c);
		return;
	}
	conn_close(c);
}

/*
 * The connection to close for a new one at the tcp-clients cap: the one
 * longest without a message or answer (an idle one, or one stuck in the
 * middle of a message: RFC 7766 §6.2.3 lets a server close those under
 * pressure), but never one with a query waiting for its answer. NULL if
 * every one has.
 */
static struct tcpconn *
eviction_candidate(struct query_ctx *ctx)
{
	struct tcpconn *c;

	TAILQ_FOREACH(c, &ctx->tcp_conns, entry)
		if (c->pending == 0)
			return c;
	return NULL;
}

/*
 * At tcp-clients: make room by closing the connection eviction_candidate
 * picks (returns 0), or refuse fd (-1); say so at most once a minute.
 */
static int
at_cap(struct tcp_server *srv, int fd, uint32_t limit)
{
	/* Static: one warning a minute for the whole process, whichever
	 * of the listeners (one struct tcp_server each, in every worker
	 * thread) reaches the cap; log_limit_due is lock-free. */
	static struct log_limit said;
	struct metrics *m = &srv->ctx->metrics;
	struct tcpconn *victim;
	uint64_t held;
	int rc = 0;

	if ((victim = eviction_candidate(srv->ctx)) != NULL) {
		metrics_add(&m->tcp_evicted, 1);
		conn_close(victim);
	} else {
		metrics_add(&m->tcp_refused, 1);
		close(fd);
		rc = -1;
	}
	if (log_limit_due(&said, clock_now_ms(), LOG_LIMIT_MINUTE, &held))
		log_warnx("tcp-clients %u reached: closing idle TCP "
		    "connections for new ones, refusing them when none is idle "
		    "(%llu closed, %llu refused so far)", limit,
		    (unsigned long long)m->tcp_evicted,
		    (unsigned long long)m->tcp_refused);
	return rc;
}

/*
 * A slot of tcp-clients for a new connection (fd) of srv: 0, or -1 if
 * there is none (fd closed). The bound is the process's, one count for
 * every worker; at it, room is made among this worker's own connections.
 */
static int
take_slot(struct tcp_server *srv, int fd)
{
	uint32_t cap = srv->ctx->conf->tcp_clients;

	if (__atomic_fetch_add(srv->ctx->tcp_open, 1, __ATOMIC_RELAXED) <
	    cap || at_cap(srv, fd, cap) == 0)
		return 0;
	(void)__atomic_fetch_sub(srv->ctx->tcp_open, 1, __ATOMIC_RELAXED);
	return -1;
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct tcp_server *srv = arg;
	const struct config *conf = srv->ctx->conf;
	struct tcpconn *c;
	struct addr peer;

	(void)l;
	/* Not in allow: closed before it can take a slot or send a byte. */
	addr_from_sockaddr(&peer, sa, (socklen_t)salen);
	if (!admit_connection(srv->ctx->admit, conf, &peer,
	    &srv->ctx->metrics, clock_now_ms())) {
		close(fd);
		return;
	}
	if (take_slot(srv, fd) == -1)
		return;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->bev = bufferevent_socket_new(srv->ctx->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		metrics_add(&srv->ctx->metrics.tcp_refused, 1);
		(void)__atomic_fetch_sub(srv->ctx->tcp_open, 1,
		    __ATOMIC_RELAXED);
		close(fd);
		free(c);
		return;
	}
	c->peer = peer;
	c->srv = srv;
	c->refs = 1;
	TAILQ_INSERT_TAIL(&srv->ctx->tcp_conns, c, entry);
	metrics_add(&srv->ctx->metrics.tcp_open, 1);
	metrics_add(&srv->ctx->metrics.tcp_accepted, 1);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	conn_deadline(c, 0);
	bufferevent_enable(c->bev, EV_READ);
}

struct tcp_server *
tcpconn_server_new(struct query_ctx *ctx, int fd)
{
	struct tcp_server *srv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return NULL;
	srv->ctx = ctx;
	/* Not LEV_OPT_CLOSE_ON_FREE: the socket belongs to listen.c. */
	srv->listener = evconnlistener_new(ctx->base, accept_cb, srv, 0,
	    -1, fd);
	if (srv->listener == NULL) {
		tcpconn_server_free(srv);
		return NULL;
	}
	accept_pause_on_error(srv->listener);
	return srv;
}

void
tcpconn_server_free(struct tcp_server *srv)
{
	struct tcpconn *c, *next;

	if (srv == NULL)
		return;
	for (c = TAILQ_FIRST(&srv->ctx->tcp_conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->srv == srv)
			conn_close(c);
	}
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	free(srv);
}
