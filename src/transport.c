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
	uint8_t			 rbuf[MSG_MAX_LEN];	/* one datagram */
};

/*
 * Timers and UDP connections carry their libevent event in the same
 * allocation (event_assign into ev): no more allocations per fetch than
 * bare events took.
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

static struct transport_timer *
timer_new(void *env, transport_timer_fn fn, void *arg)
{
	struct transport_timer *t;

	/* Not calloc: nothing needs the event zeroed, event_assign sets it. */
	if ((t = malloc(sizeof(*t) + event_get_struct_event_size())) == NULL)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	if (evtimer_assign(EVENT_OF(t), ((struct env *)env)->base,
	    timer_cb, t) == -1) {
		free(t);
		return NULL;
	}
	return t;
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
timer_free(struct transport_timer *t)
{
	event_del(EVENT_OF(t));
	free(t);
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

/*
 * A new non-blocking socket of type for family, with a descriptor of the
 * reserve if there is no other. Returns it, or -1 with errno set.
 */
static int
new_socket(struct env *env, int family, int type)
{
	int fd;

	type |= SOCK_NONBLOCK | SOCK_CLOEXEC;
	if ((fd = socket(family, type, 0)) == -1 &&
	    (errno == EMFILE || errno == ENFILE) && env->n_reserve > 0) {
		close(env->reserve[--env->n_reserve]);
		fd = socket(family, type, 0);
	}
	return fd;
}

static void
conn_close(struct transport_conn *c)
{
	if (c->reading)
		event_del(EVENT_OF(c));
	if (c->fd != -1)
		close(c->fd);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	reserve_fill(c->env);
	free(c);
}

static void
udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct transport_conn *c = arg;
	uint64_t t = clock_now_ms();
	ssize_t n;

	(void)what;
	n = recv(fd, c->env->rbuf, sizeof(c->env->rbuf), 0);
	if (n == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* ICMP port unreachable surfaces here as ECONNREFUSED. */
		c->cb->error(c->arg, strerror(errno), t);
		return;
	}
	c->cb->response(c->arg, c->env->rbuf, (size_t)n, t);
}

/* A connected UDP socket: the kernel picks a random source port and
 * drops datagrams from any other address (RFC 5452 §9.2). */
static int
udp_open(struct transport_conn *c, const struct addr *to, const uint8_t *msg,
    size_t len)
{
	c->fd = new_socket(c->env, to->ss.ss_family, SOCK_DGRAM);
	if (c->fd == -1 ||
	    connect(c->fd, (const struct sockaddr *)&to->ss, to->len) == -1 ||
	    send(c->fd, msg, len, 0) == -1 ||
	    event_assign(EVENT_OF(c), c->env->base, c->fd,
	    EV_READ | EV_PERSIST, udp_read_cb, c) == -1 ||
	    event_add(EVENT_OF(c), NULL) == -1)
		return -1;
	c->reading = 1;
	return 0;
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
tcp_open(struct transport_conn *c, const struct addr *to, const uint8_t *msg,
    size_t len)
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
	int saved;

	if ((c = malloc(sizeof(*c) + (proto == TRANSPORT_UDP ?
	    event_get_struct_event_size() : 0))) == NULL)
		return NULL;
	c->env = env;
	c->fd = -1;
	c->reading = 0;
	c->bev = NULL;
	c->cb = cb;
	c->arg = arg;
	if ((proto == TRANSPORT_UDP ? udp_open : tcp_open)(c, to, msg, len) ==
	    -1) {
		saved = errno;
		conn_close(c);
		errno = saved;
		return NULL;
	}
	return c;
}

static const struct transport_ops event_ops = {
	now, timer_new, timer_set, timer_stop, timer_free, conn_open,
	conn_close
};

struct transport *
transport_new(struct event_base *base)
{
	struct env *env;

	if ((env = calloc(1, sizeof(*env))) == NULL)
		return NULL;
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
	while (env->n_reserve > 0)
		close(env->reserve[--env->n_reserve]);
	free(env);
}
