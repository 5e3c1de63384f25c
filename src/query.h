/*
 * query.h: one client query's life: parse, cache, forward zone, fetch,
 * and the answer to every client waiting on the same fetch.
 */
#ifndef DNSDAMPER_QUERY_H
#define DNSDAMPER_QUERY_H

#include <sys/queue.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "addr.h"
#include "cache.h"
#include "config.h"
#include "fetch.h"
#include "metrics.h"
#include "msg.h"
#include "observe.h"
#include "zone.h"

struct answering;
struct admit;
struct lkg;
struct localzone_table;
struct tcpconn;

/* Room for any answer: msg_write_answer keeps within opts->limit, which is
 * at most MSG_MAX_LEN (over TCP). */
#define QUERY_ANSWER_MAX	MSG_MAX_LEN

/*
 * Waiters of an ended resolution answered per turn of the event loop:
 * each answer is a send, and thousands at once would hold up every other
 * client for as long (some 5 µs each).
 */
#define QUERY_BATCH		100

/*
 * What queries are served with: one per worker (event loop), owned by it
 * and passed down by pointer to its transports and queries, never global.
 * It is the worker's alone but for what it borrows shared with the other
 * workers: the cache (locked per shard), the configuration, zones and
 * local zones (immutable), their upstreams (upstream.h locks them), the
 * rate limit table (locked), and the count of TCP connections.
 */
struct query_ctx {
	struct event_base	*base;
	const struct config	*conf;		/* borrowed; reload swaps it */
	struct zone_table	*zones;		/* referenced */
	struct localzone_table	*local;		/* referenced: local zones
						 * and records */
	struct cache		*cache;		/* borrowed, shared */
	struct lkg		*lkg;		/* borrowed, shared: last known
						 * good (lkg.h); NULL: none */
	uint64_t		*tcp_open;	/* borrowed, shared: client TCP
						 * connections open in every
						 * worker, the tcp-clients
						 * bound (atomic) */
	int			 cache_shared;	/* other workers use the cache:
						 * an answer is stored before
						 * it is sent */
	struct fetch_ctx	*fetches;	/* this loop's */
	struct admit		*admit;		/* this loop's: allow,
						 * ratelimit */
	struct metrics		 metrics;	/* this loop's */
	struct observe		 observe;	/* what watches its answers:
						 * dnstap (its snapshot's),
						 * monitor, log-queries */
	uint8_t			 scratch[QUERY_ANSWER_MAX]; /* query.c's:
						 * an answer to a waiting
						 * client, or a local answer
						 * before it is fitted */
	LIST_HEAD(, answering)	 answering;	/* query.c's: resolutions
						 * ended, waiters still to
						 * answer */
	TAILQ_HEAD(, tcpconn)	 tcp_conns;	/* tcpconn.c's: the loop's
						 * client connections, least
						 * recently active first */
};

enum client_transport {
	CLIENT_UDP,
	CLIENT_TCP
};

struct client;

/* How a transport answers its clients; udp.c and tcpconn.c each have one. */
struct client_ops {
	/* Send one answer (len octets, at most QUERY_ANSWER_MAX) to c. */
	void	(*send)(const struct client *c, const uint8_t *buf,
		    size_t len);
	/* c's query waits for a fetch: keep alive what answering it needs. */
	void	(*hold)(const struct client *c);
	/* That query has ended, answered or not. */
	void	(*release)(const struct client *c);
};

/*
 * Where a query came from and how to send its answer back. A query that
 * waits keeps a copy, so the transport's state for answering is in it by
 * value; query.c reads only ops and transport, the rest is the
 * transport's.
 */
struct client {
	const struct client_ops	*ops;
	enum client_transport	 transport;
	struct addr		 peer;
	int			 fd;	/* UDP: the listening socket */
	int			 has_pktinfo;	/* UDP on a wildcard address */
	union {
		struct in_pktinfo	v4;
		struct in6_pktinfo	v6;
	}			 pktinfo;	/* destination of the query */
	struct tcpconn		*conn;	/* TCP */
};

enum query_status {
	QUERY_ANSWERED,		/* the answer is in out: send it */
	QUERY_PENDING,		/* it will be answered through the client */
	QUERY_DROPPED		/* nothing to send */
};

/*
 * query_handle: handle one client message (pkt, len octets, wire format)
 * received at now (ms) from c (copied if needed). Malformed messages are
 * answered FORMERR when the header can be read and dropped otherwise; other
 * opcodes get NOTIMP (RFC 1035 §4.1.1), EDNS versions above 0 BADVERS
 * (RFC 6891 §6.1.3). Before all that, admit.h decides: REFUSED for a
 * client not in allow, nothing (QUERY_DROPPED) or an empty TC=1 answer
 * for one over its rate limit; and ANY over UDP gets its minimal answer.
 * On QUERY_ANSWERED, *outlen octets of out (capacity cap, at least
 * QUERY_ANSWER_MAX) hold the answer. On QUERY_PENDING, the
 * answer goes out later through c->ops->send, between c->ops->hold now
 * and c->ops->release when the query ends.
 */
enum query_status query_handle(struct query_ctx *ctx, const uint8_t *pkt,
	    size_t len, const struct client *c, uint64_t now, uint8_t *out,
	    size_t cap, size_t *outlen);

/*
 * query_fetch_done: the fetch_done_fn of a worker's fetches: stores the
 * result in the cache and answers every waiting query, QUERY_BATCH of
 * them now and the rest as many per turn of ctx's event loop; after
 * another worker's resolution (FETCH_LANDED), from the cache, each query
 * costing one cache hit, or resolved here if nothing was stored. arg is
 * the worker's struct query_ctx.
 */
void	query_fetch_done(struct fetch *f, const struct fetch_result *res,
	    void *arg);

/*
 * query_cancel: when shutting down, after the fetches: free every query
 * of ctx whose resolution ended and that query_fetch_done had not
 * answered yet, unanswered.
 */
void	query_cancel(struct query_ctx *ctx);

#endif
