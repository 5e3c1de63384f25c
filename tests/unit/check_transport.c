/*
 * check_transport.c: the daemon's transport sends every UDP query from a
 * socket of its own (RFC 5452 §9.2), closed with the query. These rules
 * are about sockets, so this test uses real ones, on loopback only: an
 * upstream of its own on 127.0.0.1, and bind(2) on a port to tell whether
 * the transport still holds it. Every wait is bounded (WAIT_MS).
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
#define SEQUENTIAL	20	/* queries one after the other */
#define DISTINCT_MIN	18	/* ports among them at least: the kernel
				 * picks each from some 28,000 (Linux's
				 * default 32768-60999), so that 3 repeats
				 * in 20 are a chance below 1 in 10^6 */
#define FORGED_ROUNDS	8	/* the old pool kept a socket for a random
				 * 1 to 16 queries: it would pass all 8
				 * rounds by chance at 16^-8 */

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

/* The peer sends one octet to port, as a late duplicate or a forgery
 * would come. */
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

/* A query to p, answered, closed: its source port, host order. */
static uint16_t
query_answered(struct world *w, struct peer *p)
{
	struct transport_conn *c;
	struct heard h;

	c = ask(w, p, &h);
	peer_serve(p, 1);
	run_until(w->base, &h.responses);
	ck_assert_int_eq(h.responses, 1);
	w->t->ops->close(c);
	return p->from;
}

/*
 * 20 queries to one upstream, one after the other, each answered before
 * the next is asked: each came from a socket of its own, closed with it
 * (its port is free at once), and the ports are the kernel's random
 * picks: at least 18 distinct. A socket kept for the next query would
 * show its port held after the close, and the same port again.
 */
START_TEST(each_query_its_own_port)
{
	uint16_t ports[SEQUENTIAL];
	struct world w;
	int i, j, distinct = 0;

	world_new(&w);
	for (i = 0; i < SEQUENTIAL; i++) {
		ports[i] = query_answered(&w, &w.one);
		ck_assert_msg(port_free(ports[i]), "query %d's port %u is "
		    "still held after its answer", i, ports[i]);
		for (j = 0; j < i && ports[j] != ports[i]; j++)
			;
		distinct += j == i;
	}
	ck_assert_int_ge(distinct, DISTINCT_MIN);
	transport_free(w.t);
	world_free(&w);
}
END_TEST

/*
 * A query whose socket first hears a forgery (from the upstream's own
 * address and port, as an off-path forger who found the port would send
 * it), then its answer: once closed, its port is free, so that the
 * socket that heard the forgery carries no other query. A query closed
 * before any answer came is closed with its port too.
 */
START_TEST(socket_that_heard_a_forgery_is_not_used_again)
{
	struct transport_conn *c;
	struct world w;
	struct heard h;
	uint16_t port;
	int i;

	world_new(&w);
	for (i = 0; i < FORGED_ROUNDS; i++) {
		c = ask(&w, &w.one, &h);
		peer_serve(&w.one, 0);
		port = w.one.from;
		peer_stray(&w.one, port);
		run_until(w.base, &h.responses);
		ck_assert_int_eq(h.responses, 1);	/* the forgery */
		peer_stray(&w.one, port);
		run_until(w.base, &h.responses);
		ck_assert_int_eq(h.responses, 2);	/* its answer */
		w.t->ops->close(c);
		ck_assert_msg(port_free(port), "round %d: the socket that "
		    "heard a forgery is kept", i);
	}
	c = ask(&w, &w.two, &h);
	peer_serve(&w.two, 0);
	w.t->ops->close(c);
	ck_assert(port_free(w.two.from));
	transport_free(w.t);
	world_free(&w);
}
END_TEST

static Suite *
transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, each_query_its_own_port);
	tcase_add_test(tc, socket_that_heard_a_forgery_is_not_used_again);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(transport_suite());
}
