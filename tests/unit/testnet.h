/*
 * testnet.h: a transport (src/transport.h) for unit tests: a virtual
 * clock that moves only when the test says so, timers that fire in order
 * of their times as it moves, and connections that record what was sent
 * and deliver what the test makes the upstream answer.
 */
#ifndef DNSDAMPER_TESTNET_H
#define DNSDAMPER_TESTNET_H

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "transport.h"

#define TESTNET_MAX	64	/* timers alive at once, and sends in all */

struct transport_timer {
	struct testnet		*net;
	transport_timer_fn	 fn;
	void			*arg;
	int			 armed;
	uint64_t		 due;	/* virtual ms */
	uint64_t		 order;	/* when armed: ties fire in order */
};

/* One query the code sent, kept after it is closed for the test to read. */
struct transport_conn {
	struct testnet		*net;
	enum transport_proto	 proto;
	struct addr		 to;
	uint8_t			 msg[MSG_QUERY_MAX_LEN];
	size_t			 len;
	const struct transport_conn_cb *cb;
	void			*arg;
	int			 open;
	uint64_t		 at;	/* virtual ms it was sent */
};

struct testnet {
	struct transport	 t;
	uint64_t		 now;	/* virtual ms */
	uint64_t		 n_armed;
	struct transport_timer	*timers[TESTNET_MAX];
	struct transport_conn	 sent[TESTNET_MAX];
	size_t			 n_sent;
	int			 open_errno;	/* nonzero: opens fail so */
};

static inline uint64_t
testnet_now(void *env)
{
	return ((struct testnet *)env)->now;
}

static inline size_t
testnet_timer_size(void *env)
{
	(void)env;
	return sizeof(struct transport_timer);
}

static inline int
testnet_timer_init(void *env, struct transport_timer *t,
    transport_timer_fn fn, void *arg)
{
	struct testnet *net = env;
	size_t i;

	for (i = 0; i < TESTNET_MAX && net->timers[i] != NULL; i++)
		;
	ck_assert_uint_lt(i, TESTNET_MAX);
	memset(t, 0, sizeof(*t));
	t->net = net;
	t->fn = fn;
	t->arg = arg;
	net->timers[i] = t;
	return 0;
}

static inline void
testnet_timer_set(struct transport_timer *t, uint32_t ms)
{
	t->armed = 1;
	t->due = t->net->now + ms;
	t->order = t->net->n_armed++;
}

static inline void
testnet_timer_stop(struct transport_timer *t)
{
	t->armed = 0;
}

static inline void
testnet_timer_fini(struct transport_timer *t)
{
	size_t i;

	for (i = 0; i < TESTNET_MAX; i++)
		if (t->net->timers[i] == t)
			t->net->timers[i] = NULL;
}

static inline struct transport_conn *
testnet_open(void *env, enum transport_proto proto, const struct addr *to,
    const uint8_t *msg, size_t len, const struct transport_conn_cb *cb,
    void *arg)
{
	struct testnet *net = env;
	struct transport_conn *c;

	if (net->open_errno != 0) {
		errno = net->open_errno;
		return NULL;
	}
	ck_assert_uint_lt(net->n_sent, TESTNET_MAX);
	ck_assert_uint_le(len, sizeof(c->msg));
	c = &net->sent[net->n_sent++];
	c->net = net;
	c->proto = proto;
	c->to = *to;
	memcpy(c->msg, msg, len);
	c->len = len;
	c->cb = cb;
	c->arg = arg;
	c->open = 1;
	c->at = net->now;
	return c;
}

static inline void
testnet_close(struct transport_conn *c)
{
	c->open = 0;
}

static const struct transport_ops testnet_ops = {
	testnet_now, testnet_timer_size, testnet_timer_init, testnet_timer_set,
	testnet_timer_stop, testnet_timer_fini, testnet_open, testnet_close,
	NULL	/* no TLS: a TLS upstream's queries fail here */
};

/* testnet_init: a network where nothing was sent, at virtual time now. */
static inline void
testnet_init(struct testnet *net, uint64_t now)
{
	memset(net, 0, sizeof(*net));
	net->t.ops = &testnet_ops;
	net->t.env = net;
	net->now = now;
}

/* The armed timer that fires first at or before `until`, or NULL. */
static inline struct transport_timer *
testnet_next_timer(struct testnet *net, uint64_t until)
{
	struct transport_timer *t, *first = NULL;
	size_t i;

	for (i = 0; i < TESTNET_MAX; i++) {
		if ((t = net->timers[i]) == NULL || !t->armed || t->due > until)
			continue;
		if (first == NULL || t->due < first->due ||
		    (t->due == first->due && t->order < first->order))
			first = t;
	}
	return first;
}

/*
 * testnet_pass: let ms of virtual time pass, firing each timer due on the
 * way, in order of time, at its time (0: only what is due now).
 */
static inline void
testnet_pass(struct testnet *net, uint64_t ms)
{
	uint64_t until = net->now + ms;
	struct transport_timer *t;

	while ((t = testnet_next_timer(net, until)) != NULL) {
		net->now = t->due;
		t->armed = 0;
		t->fn(t->arg, net->now);
	}
	net->now = until;
}

/*
 * testnet_deliver: the upstream of c answers with pkt (len octets), now:
 * c must still be open, as a real socket would be to get it.
 */
static inline void
testnet_deliver(struct transport_conn *c, const uint8_t *pkt, size_t len)
{
	ck_assert_msg(c->open, "answer to a query no longer listened for");
	c->cb->response(c->arg, pkt, len, c->net->now);
}

/* testnet_unreachable: the kernel reports c's upstream unreachable (ICMP
 * port unreachable), now: c must still be open. */
static inline void
testnet_unreachable(struct transport_conn *c)
{
	ck_assert_msg(c->open, "error on a query no longer listened for");
	c->cb->error(c->arg, "Connection refused", c->net->now);
}

/* testnet_timers: how many timers exist (a fetch has two while alive). */
static inline size_t
testnet_timers(const struct testnet *net)
{
	size_t i, n = 0;

	for (i = 0; i < TESTNET_MAX; i++)
		n += net->timers[i] != NULL;
	return n;
}

#endif
