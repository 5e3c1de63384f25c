/*
 * check_transport.c: the daemon's transport keeps UDP sockets between
 * queries within RFC 5452 §9.2's bounds. These rules are about sockets,
 * so this test uses real ones, on loopback only: an upstream of its own
 * on 127.0.0.1, and bind(2) on a port to tell whether the transport
 * still holds it. Every wait is bounded (WAIT_MS).
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "check_main.h"
#include "transport.h"

#define WAIT_MS		2000	/* the longest wait for a datagram */
#define TRIES		64	/* budgets of 1 use all: p = 16^-64 */

/* A UDP upstream of the test's own on 127.0.0.1, and what it was sent. */
struct peer {
	int		fd;
	struct addr	addr;
	uint16_t	from;		/* port of the last query, host order */
};

/* What a connection reported. */
struct heard {
	int	responses;
	int	errors;
};

static void
heard_response(void *arg, const uint8_t *pkt, size_t len, uint64_t now)
{
	(void)pkt;
	(void)len;
	(void)now;
	((struct heard *)arg)->responses++;
}

static void
heard_error(void *arg, const char *why, uint64_t now)
{
	(void)why;
	(void)now;
	((struct heard *)arg)->errors++;
}

static const struct transport_conn_cb heard_cb = { heard_response,
    heard_error };

static void
peer_open(struct peer *p)
{
	struct sockaddr_in sin;
	struct timeval tv = { WAIT_MS / 1000, 0 };
	socklen_t len = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ne(p->fd = socket(AF_INET, SOCK_DGRAM, 0), -1);
	ck_assert_int_eq(bind(p->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(p->fd, (struct sockaddr *)&sin, &len), 0);
	ck_assert_int_eq(setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)), 0);
	addr_from_sockaddr(&p->addr, (struct sockaddr *)&sin, len);
}

/* The peer reads the next query (1 octet), notes its port, and answers
 * (1 octet) if answer. */
static void
peer_serve(struct peer *p, int answer)
{
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	uint8_t b;

	ck_assert_int_eq(recvfrom(p->fd, &b, 1, 0, (struct sockaddr *)&from,
	    &len), 1);
	p->from = ntohs(from.sin_port);
	if (answer)
		ck_assert_int_eq(sendto(p->fd, &b, 1, 0,
		    (struct sockaddr *)&from, len), 1);
}

/* The peer sends one octet to port, as a late duplicate would come. */
static void
peer_stray(struct peer *p, uint16_t port)
{
	struct sockaddr_in to;
	uint8_t b = 0;

	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons(port);
	ck_assert_int_eq(sendto(p->fd, &b, 1, 0, (struct sockaddr *)&to,
	    sizeof(to)), 1);
}

/* 1 if nothing holds 127.0.0.1:port (a bind there works), else 0. */
static int
port_free(uint16_t port)
{
	struct sockaddr_in sin;
	int fd, ok;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	ck_assert_int_ne(fd = socket(AF_INET, SOCK_DGRAM, 0), -1);
	ok = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	if (!ok)
		ck_assert_int_eq(errno, EADDRINUSE);
	close(fd);
	return ok;
}

static void
wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(int *)arg = 1;
}

/* Run base until *count moves, or WAIT_MS pass. */
static void
run_until(struct event_base *base, const int *count)
{
	struct timeval tv = { WAIT_MS / 1000, 0 };
	int start = *count, late = 0;
	struct event *guard;

	ck_assert_ptr_nonnull(guard = evtimer_new(base, wake, &late));
	evtimer_add(guard, &tv);
	while (*count == start && !late)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(guard);
}

/* A transport on an event base of its own, and two upstreams. */
struct world {
	struct event_base	*base;
	struct transport	*t;
	struct peer		 one, two;
};

static void
world_new(struct world *w)
{
	ck_assert_ptr_nonnull(w->base = event_base_new());
	ck_assert_ptr_nonnull(w->t = transport_new(w->base));
	peer_open(&w->one);
	peer_open(&w->two);
}

/* Everything but the transport, which the test may have freed. */
static void
world_free(struct world *w)
{
	event_base_free(w->base);
	close(w->one.fd);
	close(w->two.fd);
}

/* A query of w's transport to p, its connection reporting into *h. */
static struct transport_conn *
ask(struct world *w, struct peer *p, struct heard *h)
{
	const uint8_t q = 1;
	struct transport_conn *c;

	memset(h, 0, sizeof(*h));
	ck_assert_ptr_nonnull(c = w->t->ops->open(w->t->env, TRANSPORT_UDP,
	    &p->addr, &q, 1, &heard_cb, h));
	return c;
}

/*
 * A query to p, answered; closed as answered. Returns its port, held by
 * the transport for the next query (tried again until a socket is not at
 * the end of its random budget of 1 to 16 uses).
 */
static uint16_t
query_kept(struct world *w, struct peer *p)
{
	struct transport_conn *c;
	struct heard h;
	int i;

	for (i = 0; i < TRIES; i++) {
		c = ask(w, p, &h);
		peer_serve(p, 1);
		run_until(w->base, &h.responses);
		ck_assert_int_eq(h.responses, 1);
		w->t->ops->close(c, 1);
		if (!port_free(p->from))
			return p->from;
	}
	ck_abort_msg("no socket kept after %d queries", TRIES);
	return 0;
}

/*
 * A socket whose answer came is kept for the next query to the same
 * upstream: that query comes from its port. One to another upstream
 * never does (the port is held, so the kernel cannot give it to another
 * socket either: the other upstream sees another port). One whose
 * answer may still come is closed, its port free at once.
 */
START_TEST(kept_for_one_upstream)
{
	struct transport_conn *c;
	struct world w;
	struct heard h;
	uint16_t port;

	world_new(&w);
	port = query_kept(&w, &w.one);
	c = ask(&w, &w.two, &h);
	peer_serve(&w.two, 0);
	ck_assert_uint_ne(w.two.from, port);
	/* unanswered: closed with its port */
	w.t->ops->close(c, 0);
	ck_assert(port_free(w.two.from));
	c = ask(&w, &w.one, &h);
	peer_serve(&w.one, 0);
	ck_assert_uint_eq(w.one.from, port);
	w.t->ops->close(c, 0);
	ck_assert(port_free(port));
	transport_free(w.t);
	world_free(&w);
}
END_TEST

/*
 * An idle socket that receives anything (a late duplicate, or a forger
 * who found its port) is closed as soon as the loop reads it, before its
 * second of life is up: its port is free after that one turn of the loop
 * (the datagram is there before the loop looks: loopback delivers it
 * within sendto).
 */
START_TEST(idle_socket_that_hears_is_closed)
{
	struct world w;
	uint16_t port;

	world_new(&w);
	port = query_kept(&w, &w.one);
	peer_stray(&w.one, port);
	event_base_loop(w.base, EVLOOP_ONCE);
	ck_assert(port_free(port));
	transport_free(w.t);
	world_free(&w);
}
END_TEST

/* transport_free closes the idle sockets too. */
START_TEST(free_closes_idle)
{
	struct world w;
	uint16_t port;

	world_new(&w);
	port = query_kept(&w, &w.one);
	transport_free(w.t);
	ck_assert(port_free(port));
	world_free(&w);
}
END_TEST

static Suite *
transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, kept_for_one_upstream);
	tcase_add_test(tc, idle_socket_that_hears_is_closed);
	tcase_add_test(tc, free_closes_idle);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(transport_suite());
}
