/*
 * tlsconn.h: DNS over TLS to upstreams (RFC 7858), one worker's
 * connections: per upstream, one connection carries many queries at once,
 * pipelined and answered in any order (RFC 7766 §6.2.1.1: an answer is
 * matched to its query by ID and question); a second connection opens
 * only while every open one has the upstream's tls-max-inflight queries
 * waiting (at most TLSCONN_MAX_CONNS); one with nothing waiting closes
 * after tls-idle-timeout; a session ticket is kept to resume the next
 * handshake (RFC 8446 §2.2). A connection the server closes takes its
 * unanswered queries to another (reopened on demand), each sent again
 * once. Queries are padded to blocks of 128 octets (RFC 7830, RFC 8467
 * §4.1). A connect or handshake that does not end within the timeout of
 * the query that opened it fails every query it carries. Never anything
 * in clear text.
 */
#ifndef DNSDAMPER_TLSCONN_H
#define DNSDAMPER_TLSCONN_H

#include <stddef.h>
#include <stdint.h>

#include "tlsctx.h"
#include "transport.h"

#define TLSCONN_MAX_CONNS	8	/* per upstream and worker */
#define TLSCONN_MAX_UPSTREAMS	64	/* remembered per worker, with their
					 * sessions */
#define TLSCONN_PAD_BLOCK	128	/* RFC 8467 §4.1 */

struct event_base;
struct tlsconn_pool;
struct tlsconn_query;

/* tlsconn_pool_new: a worker's connections, on base (borrowed). NULL if
 * out of memory. */
struct tlsconn_pool *tlsconn_pool_new(struct event_base *base);

/* tlsconn_pool_free: close every connection (no callback is called: the
 * queries must have been cancelled) and free p. NULL is fine. */
void	tlsconn_pool_free(struct tlsconn_pool *p);

/*
 * tlsconn_send: send msg (len octets, a query as attempt writes it:
 * header, one question, at most an OPT as its last record; copied and
 * padded) to t's upstream over a connection of p, and report its
 * response, or that none will come, through cb with arg, from the event
 * loop only. timeout_ms bounds the connect and handshake of a connection
 * this query opens. Returns the query (cancel it with tlsconn_cancel,
 * also after its callback), or NULL with errno set.
 */
struct tlsconn_query *tlsconn_send(struct tlsconn_pool *p, struct tlsctx *t,
	    const uint8_t *msg, size_t len, uint32_t timeout_ms,
	    const struct transport_conn_cb *cb, void *arg);

/* tlsconn_cancel: forget q: no callback after; its connection stays.
 * Safe from q's own callback. NULL is fine. */
void	tlsconn_cancel(struct tlsconn_query *q);

/*
 * tlsconn_pad: pad the query in buf (len octets; room for cap) with an
 * EDNS(0) Padding option (RFC 7830) so that its length is a multiple of
 * TLSCONN_PAD_BLOCK, if it ends with an OPT record (no OPT: no padding,
 * RFC 7830 §3). Returns the new length, or len if it has no OPT or no
 * room.
 */
size_t	tlsconn_pad(uint8_t *buf, size_t len, size_t cap);

#endif
