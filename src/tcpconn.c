/* tcpconn.c: client DNS over TCP (RFC 7766). */
#include "autoconf.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "admit.h"
#include "clock.h"
#include "frame.h"
#include "log.h"
#include "msg.h"
#include "query.h"
#include "tcpconn.h"

#define TCP_PIPELINE_MAX	64		/* queries pending per connection */
#define TCP_OUTPUT_MAX		(1024 * 1024)	/* unread answers: a stuck client */
#define ACCEPT_PAUSE_SEC	1

struct tcpconn {
	LIST_ENTRY(tcpconn)	 entry;
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
};

struct tcp_server {
	struct query_ctx	*ctx;
	struct evconnlistener	*listener;
	struct event		*resume;	/* accept again after EMFILE */
	LIST_HEAD(, tcpconn)	 conns;
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
	LIST_REMOVE(c, entry);
	c->srv->ctx->metrics.tcp_open--;
	c->srv = NULL;
	bufferevent_free(c->bev);
	c->bev = NULL;
	conn_unref(c);
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
 * cl's waiting query has ended; reading resumes if it was paused at the
 * pipelining limit. May free the connection.
 */
static void
conn_release(const struct client *cl)
{
	struct tcpconn *c = cl->conn;

	c->pending--;
	if (c->srv != NULL && c->closing)
		conn_maybe_close(c);
	else if (c->srv != NULL && c->pending == TCP_PIPELINE_MAX - 1) {
		/* Queries may already wait in the input: read them now. */
		bufferevent_enable(c->bev, EV_READ);
		bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_DEFER_CALLBACKS);
	}
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
 * A message trickling in for longer than tcp-idle-timeout holds a slot
 * as surely as an idle connection (RFC 7766 §6.2.3): close it.
 */
static void
check_partial(struct tcpconn *c, struct evbuffer *in, uint64_t now)
{
	uint32_t idle = c->srv->ctx->conf->tcp_idle_timeout;

	if (evbuffer_get_length(in) == 0) {
		c->partial_since = 0;
		return;
	}
	if (c->partial_since == 0)
		c->partial_since = now;
	else if (now - c->partial_since > idle)
		conn_close(c);
}

/* Take every complete message off the input, up to the pipeline limit. */
static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct tcpconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint64_t now = clock_now_ms();
	const uint8_t *msg;
	size_t len;

	c->refs++;	/* answering may close it; it must outlive us */
	while (c->srv != NULL && !c->closing &&
	    c->pending < TCP_PIPELINE_MAX &&
	    (msg = frame_peek(in, &len)) != NULL) {
		if (handle(c, msg, len, now) == -1)
			break;
		frame_drain(in, len);
		c->partial_since = 0;
	}
	if (c->srv != NULL && !c->closing) {
		if (c->pending >= TCP_PIPELINE_MAX)
			bufferevent_disable(bev, EV_READ);
		else
			check_partial(c, in, now);
	}
	conn_unref(c);
}

/* Everything written: a closing connection may go now. */
static void
write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_maybe_close(arg);
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

/* Over tcp-clients: close at once, and say so at most once a minute. */
static void
refuse(struct tcp_server *srv, int fd, uint32_t limit)
{
	static uint64_t last_logged;
	uint64_t now = clock_now_ms();

	srv->ctx->metrics.tcp_refused++;
	close(fd);
	if (last_logged != 0 && now - last_logged < 60000)
		return;
	last_logged = now;
	log_warnx("tcp-clients %u reached: refusing TCP connections "
	    "(%llu so far)", limit,
	    (unsigned long long)srv->ctx->metrics.tcp_refused);
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct tcp_server *srv = arg;
	const struct config *conf = srv->ctx->conf;
	struct timeval idle;
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
	/* tcp-clients bounds the worker, across all its listeners. */
	if (srv->ctx->metrics.tcp_open >= conf->tcp_clients ||
	    (c = calloc(1, sizeof(*c))) == NULL) {
		refuse(srv, fd, conf->tcp_clients);
		return;
	}
	c->bev = bufferevent_socket_new(srv->ctx->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		free(c);
		return;
	}
	c->peer = peer;
	c->srv = srv;
	c->refs = 1;
	LIST_INSERT_HEAD(&srv->conns, c, entry);
	srv->ctx->metrics.tcp_open++;
	srv->ctx->metrics.tcp_accepted++;
	idle.tv_sec = conf->tcp_idle_timeout / 1000;
	idle.tv_usec = (conf->tcp_idle_timeout % 1000) * 1000;
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	bufferevent_enable(c->bev, EV_READ);
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_server *srv = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(srv->listener);
}

/* Out of descriptors is normal under load: pause instead of spinning. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct tcp_server *srv = arg;
	struct timeval tv = { ACCEPT_PAUSE_SEC, 0 };

	log_warn("tcp accept");
	if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
	    errno == ENOMEM) {
		evconnlistener_disable(l);
		evtimer_add(srv->resume, &tv);
	}
}

struct tcp_server *
tcpconn_server_new(struct query_ctx *ctx, int fd)
{
	struct tcp_server *srv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return NULL;
	srv->ctx = ctx;
	LIST_INIT(&srv->conns);
	srv->resume = evtimer_new(ctx->base, resume_cb, srv);
	/* Not LEV_OPT_CLOSE_ON_FREE: the socket belongs to listen.c. */
	srv->listener = evconnlistener_new(ctx->base, accept_cb, srv, 0,
	    -1, fd);
	if (srv->resume == NULL || srv->listener == NULL) {
		tcpconn_server_free(srv);
		return NULL;
	}
	evconnlistener_set_error_cb(srv->listener, accept_error_cb);
	return srv;
}

void
tcpconn_server_free(struct tcp_server *srv)
{
	if (srv == NULL)
		return;
	while (!LIST_EMPTY(&srv->conns))
		conn_close(LIST_FIRST(&srv->conns));
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	if (srv->resume != NULL)
		event_free(srv->resume);
	free(srv);
}
