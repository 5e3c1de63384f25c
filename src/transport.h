/*
 * transport.h: what fetches and attempts run on: a clock, one-shot timers
 * and connections that carry one query to an upstream and its responses
 * back. A table of operations, so that the same fetch, attempt and probe
 * code runs on the daemon's sockets and libevent (transport.c) or, in unit
 * tests, on a script and a virtual clock. Every callback runs from the
 * event loop, never from inside the call that set it up, and gets the
 * time (monotonic ms) it runs at.
 */
#ifndef DNSDAMPER_TRANSPORT_H
#define DNSDAMPER_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"

struct event_base;
struct tlsctx;
struct transport_timer;
struct transport_conn;

enum transport_proto {
	TRANSPORT_UDP,	/* one datagram out, datagrams back */
	TRANSPORT_TCP	/* one connection, framed (RFC 7766 §8) */
};

typedef void (*transport_timer_fn)(void *arg, uint64_t now);

/* What a connection reports to whoever opened it. */
struct transport_conn_cb {
	/* A message arrived: pkt (len octets) is borrowed for the call. The
	 * callback may close the connection. */
	void	(*response)(void *arg, const uint8_t *pkt, size_t len,
		    uint64_t now);
	/* It failed (why: static text); nothing more will come. */
	void	(*error)(void *arg, const char *why, uint64_t now);
};

struct transport_ops {
	/* The time now, monotonic ms. */
	uint64_t (*now)(void *env);
	/*
	 * Timers live in their owner's memory: timer_size octets of it
	 * (aligned as max_align_t), made a stopped timer calling fn(arg,
	 * now) when it fires by timer_init (0, or -1 on failure), and
	 * undone by timer_fini before the memory goes.
	 */
	size_t	(*timer_size)(void *env);
	int	(*timer_init)(void *env, struct transport_timer *t,
		    transport_timer_fn fn, void *arg);
	/* Fire once, ms from now (0: at the loop's next turn), instead of
	 * whenever it was set to fire. */
	void	(*timer_set)(struct transport_timer *t, uint32_t ms);
	void	(*timer_stop)(struct transport_timer *t);
	void	(*timer_fini)(struct transport_timer *t);
	/*
	 * Send msg (len octets, copied) to `to` over proto and report what
	 * comes back through cb with arg until closed. UDP goes from a new
	 * socket of its own, on a port the kernel picked at random (RFC
	 * 5452 §9.2), that only the address and port it was sent to can
	 * answer; TCP over a new connection. Returns the connection, or
	 * NULL with errno set.
	 */
	struct transport_conn *(*open)(void *env, enum transport_proto proto,
		    const struct addr *to, const uint8_t *msg, size_t len,
		    const struct transport_conn_cb *cb, void *arg);
	/*
	 * Close c, answered or not: no callback comes after, and its socket
	 * goes, the port with it, so that whatever else comes to that port
	 * (a late duplicate, a forgery) meets no socket. Safe from c's own
	 * callback.
	 */
	void	(*close)(struct transport_conn *c);
	/*
	 * Send msg as open does, to the upstream of tls (borrowed; kept
	 * referenced while needed) over DNS over TLS only (RFC 7858): over
	 * a connection that may carry other queries too (tlsconn.h);
	 * timeout_ms bounds the connect and handshake of a new one. NULL
	 * (no TLS: unit tests' transports) fails every such query.
	 */
	struct transport_conn *(*open_tls)(void *env, struct tlsctx *tls,
		    const uint8_t *msg, size_t len, uint32_t timeout_ms,
		    const struct transport_conn_cb *cb, void *arg);
};

struct transport {
	const struct transport_ops	*ops;
	void				*env;	/* the ops' own */
};

/*
 * transport_new: the daemon's transport on base (borrowed): timers are
 * libevent's, the clock is clock_now_ms, UDP goes through a new connected
 * socket per query, and TCP through bufferevents. It holds 16 descriptors
 * back for its sockets, for when every other is taken (by clients'
 * connections: accept() then fails before a query's socket() does).
 * Free it with transport_free after every timer and connection made on
 * it. Returns NULL if out of memory.
 */
struct transport *transport_new(struct event_base *base);

/* transport_free: free what transport_new made. NULL is fine. */
void	transport_free(struct transport *t);

#endif
