/* transport.c: upstream queries over sockets, and timers, on libevent. */
#include "autoconf.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "frame.h"
#include "msg.h"
#include "tlsconn.h"
#include "transport.h"

/*
 * Descriptors held back for upstream queries (unwind's approach): when
 * clients' connections, or anything else, take all the others, accept()
 * fails first (and tcpconn pauses accepting), and a query can still have
 * its socket, one of these given up for it. Taken back as sockets close.
 */
#define FD_RESERVE	16

struct env {
	struct transport	 t;
	struct event_base	*base;
	int			 reserve[FD_RESERVE];
	int			 n_reserve;
	struct tlsconn_pool	*tls;	/* DNS over TLS: tlsconn.c */
	uint8_t			 rbuf[MSG_MAX_LEN];	/* one datagram */
};

/*
 * Timers and UDP connections carry their libevent event in the same
 * memory (event_assign into ev): a timer in its owner's allocation
 * (timer_init), a UDP socket's in its connection.
 */
struct transport_timer {
	transport_timer_fn	 fn;
	void			*arg;
	_Alignas(max_align_t) unsigned char ev[];
};

struct transport_conn {
	struct env		*env;
	int			 fd;	/* UDP, or -1 */
	int			 reading; /* UDP: its event is added */
	struct bufferevent	*bev;	/* TCP */
	struct tlsconn_query	*tls;	/* TLS: the query on tlsconn's */
	const struct transport_conn_cb *cb;
	void			*arg;
	_Alignas(max_align_t) unsigned char ev[];	/* UDP */
};

#define EVENT_OF(t)	((struct event *)(void *)(t)->ev)

static uint64_t
now(void *env)
{
	(void)env;
	return clock_now_ms();
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct transport_timer *t = arg;

	(void)fd;
	(void)what;
	t->fn(t->arg, clock_now_ms());
}

static size_t
timer_size(void *env)
{
	(void)env;
	return sizeof(struct transport_timer) + event_get_struct_event_size();
}

static int
timer_init(void *env, struct transport_timer *t, transport_timer_fn fn,
    void *arg)
{
	t->fn = fn;
	t->arg = arg;
	return evtimer_assign(EVENT_OF(t), ((struct env *)env)->base,
	    timer_cb, t);
}

static void
timer_set(struct transport_timer *t, uint32_t ms)
{
	struct timeval tv = clock_ms_to_tv(ms);

	if (ms == 0)
		event_active(EVENT_OF(t), EV_TIMEOUT, 1);
	else
		evtimer_add(EVENT_OF(t), &tv);
}

static void
timer_stop(struct transport_timer *t)
{
	evtimer_del(EVENT_OF(t));
}

static void
timer_fini(struct transport_timer *t)
{
	event_del(EVENT_OF(t));
}

/* Take back what the reserve gave up, as far as descriptors allow. */
static void
reserve_fill(struct env *env)
{
	int fd;

	while (env->n_reserve < FD_RESERVE &&
	    (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1)
		env->reserve[env->n_reserve++] = fd;
}

static void
conn_free(struct transport_conn *c)
{
	if (c->reading)
		event_del(EVENT_OF(c));
	if (c->fd != -1)
		close(c->fd);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	tlsconn_cancel(c->tls);
	reserve_fill(c->env);
	free(c);
}

/*
 * A new non-blocking socket of type for family: if descriptors ran out,
 * with one of the reserve. Returns it, or -1 with errno set.
 */
static int
new_socket(struct env *env, int family, int type)
{
	int fd;

	type |= SOCK_NONBLOCK | SOCK_CLOEXEC;
	if ((fd = socket(family, type, 0)) != -1 ||
	    (errno != EMFILE && errno != ENFILE))
		return fd;
	if (env->n_reserve > 0) {
		close(env->reserve[--env->n_reserve]);
		fd = socket(family, type, 0);
	}
	return fd;
}

static void
udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct transport_conn *c = arg;
	uint64_t t = clock_now_ms();
	ssize_t n;

	(void)what;
	n = recv(fd, c->env->rbuf, sizeof(c->env->rbuf), 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1)	/* ICMP port unreachable surfaces as ECONNREFUSED */
		c->cb->error(c->arg, strerror(errno), t);
	else
		c->cb->response(c->arg, c->env->rbuf, (size_t)n, t);
}

/*
 * A new UDP socket connected to `to`, listening: the kernel picks a
 * random source port and drops datagrams from any other address (RFC
 * 5452 §9.2). Returns 0 or -1.
 */
static int
udp_connect(struct transport_conn *c, const struct addr *to)
{
	c->fd = new_socket(c->env, to->ss.ss_family, SOCK_DGRAM);
	if (c->fd == -1 ||
	    connect(c->fd, (const struct sockaddr *)&to->ss, to->len) == -1 ||
	    event_assign(EVENT_OF(c), c->env->base, c->fd,
	    EV_READ | EV_PERSIST, udp_read_cb, c) == -1 ||
	    event_add(EVENT_OF(c), NULL) == -1)
		return -1;
	c->reading = 1;
	return 0;
}

static struct transport_conn *
conn_alloc(struct env *env, enum transport_proto proto)
{
	struct transport_conn *c;

	if ((c = malloc(sizeof(*c) + (proto == TRANSPORT_UDP ?
	    event_get_struct_event_size() : 0))) == NULL)
		return NULL;
	c->env = env;
	c->fd = -1;
	c->reading = 0;
	c->bev = NULL;
	c->tls = NULL;
	c->cb = NULL;
	c->arg = NULL;
	return c;
}

/* Free c, keeping errno. */
static void
conn_fail(struct transport_conn *c)
{
	int saved = errno;

	conn_free(c);
	errno = saved;
}

/*
 * msg over UDP to `to`, from a socket of its own (RFC 5452 §9.2: each
 * query a port of its own, picked by the kernel at random; one an
 * attacker found, or that heard a forgery, carries nothing more).
 * Returns the connection, or NULL with errno set.
 */
static struct transport_conn *
udp_open(struct env *env, const struct addr *to, const uint8_t *msg,
    size_t len)
{
	struct transport_conn *c;

	if ((c = conn_alloc(env, TRANSPORT_UDP)) == NULL)
		return NULL;
	if (udp_connect(c, to) == -1 || send(c->fd, msg, len, 0) == -1) {
		conn_fail(c);
		return NULL;
	}
	return c;
}

static void
tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct transport_conn *c = arg;
	const uint8_t *msg;
	size_t len;

	if ((msg = frame_peek(bufferevent_get_input(bev), &len)) != NULL)
		c->cb->response(c->arg, msg, len, clock_now_ms());
}

static void
tcp_event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct transport_conn *c = arg;

	(void)bev;
	if (events & (BEV_EVENT_ERROR | BEV_EVENT_EOF | BEV_EVENT_TIMEOUT))
		c->cb->error(c->arg, events & BEV_EVENT_EOF ?
		    "TCP connection closed" : "TCP connection failed",
		    clock_now_ms());
}

static int
tcp_connect(struct transport_conn *c, const struct addr *to,
    const uint8_t *msg, size_t len)
{
	int fd;

	if ((fd = new_socket(c->env, to->ss.ss_family, SOCK_STREAM)) == -1)
		return -1;
	c->bev = bufferevent_socket_new(c->env->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	bufferevent_setcb(c->bev, tcp_read_cb, NULL, tcp_event_cb, c);
	/* Room for one whole response, no more: what the upstream sends
	 * past it waits in the kernel, not in our memory. */
	bufferevent_setwatermark(c->bev, EV_READ, 0,
	    FRAME_PREFIX_LEN + MSG_MAX_LEN);
	if (bufferevent_socket_connect(c->bev,
	    (const struct sockaddr *)&to->ss, (int)to->len) == -1 ||
	    frame_add(bufferevent_get_output(c->bev), msg, len) == -1 ||
	    bufferevent_enable(c->bev, EV_READ) == -1)
		return -1;
	return 0;
}

static struct transport_conn *
conn_open(void *env, enum transport_proto proto, const struct addr *to,
    const uint8_t *msg, size_t len, const struct transport_conn_cb *cb,
    void *arg)
{
	struct transport_conn *c;

	if (proto == TRANSPORT_UDP)
		c = udp_open(env, to, msg, len);
	else if ((c = conn_alloc(env, proto)) != NULL &&
	    tcp_connect(c, to, msg, len) == -1) {
		conn_fail(c);
		c = NULL;
	}
	if (c != NULL) {
		c->cb = cb;
		c->arg = arg;
	}
	return c;
}

/* A query over TLS: tlsconn's, under a connection of ours to close. */
static struct transport_conn *
conn_open_tls(void *env, struct tlsctx *tls, const uint8_t *msg, size_t len,
    uint32_t timeout_ms, const struct transport_conn_cb *cb, void *arg)
{
	struct env *e = env;
	struct transport_conn *c;

	if ((c = conn_alloc(e, TRANSPORT_TCP)) == NULL)
		return NULL;
	if ((c->tls = tlsconn_send(e->tls, tls, msg, len, timeout_ms, cb,
	    arg)) == NULL) {
		conn_fail(c);
		return NULL;
	}
	c->cb = cb;
	c->arg = arg;
	return c;
}

static const struct transport_ops event_ops = {
	now, timer_size, timer_init, timer_set, timer_stop, timer_fini,
	conn_open, conn_free, conn_open_tls
};

struct transport *
transport_new(struct event_base *base)
{
	struct env *env;

	if ((env = calloc(1, sizeof(*env))) == NULL)
		return NULL;
	if ((env->tls = tlsconn_pool_new(base)) == NULL) {
		free(env);
		return NULL;
	}
	env->base = base;
	env->t.ops = &event_ops;
	env->t.env = env;
	reserve_fill(env);
	return &env->t;
}

void
transport_free(struct transport *t)
{
	struct env *env;

	if (t == NULL)
		return;
	env = t->env;
	tlsconn_pool_free(env->tls);
	while (env->n_reserve > 0)
		close(env->reserve[--env->n_reserve]);
	free(env);
}
