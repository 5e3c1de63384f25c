/*
 * tcpconn.h: DNS over TCP from clients (RFC 7766): two-octet length
 * framing, several queries per connection answered in any order, an idle
 * timeout, a cap on connections, and a pause in accepting when out of
 * file descriptors.
 */
#ifndef DNSDAMPER_TCPCONN_H
#define DNSDAMPER_TCPCONN_H

#include <stddef.h>
#include <stdint.h>

struct query_ctx;
struct tcp_server;
struct tcpconn;

/*
 * tcpconn_server_new: accept connections on listening socket fd (owned by
 * the caller) in ctx's loop. Limits (tcp-clients, tcp-idle-timeout) are
 * read from ctx's current config at each accept. Returns NULL on error.
 */
struct tcp_server *tcpconn_server_new(struct query_ctx *ctx, int fd);

/*
 * tcpconn_server_free: stop accepting and close every connection of s.
 * Connections still referenced by pending queries are freed when those
 * release them.
 */
void	tcpconn_server_free(struct tcp_server *s);

/* tcpconn_hold: a query pending on c keeps it alive. */
void	tcpconn_hold(struct tcpconn *c);

/*
 * tcpconn_release: a pending query of c is finished; reading resumes if
 * it was paused at the pipelining limit. May free c.
 */
void	tcpconn_release(struct tcpconn *c);

/*
 * tcpconn_send: queue one answer (len octets, at most MSG_MAX_LEN) with its
 * length prefix. Silently dropped if the connection has closed meanwhile.
 */
void	tcpconn_send(struct tcpconn *c, const uint8_t *buf, size_t len);

#endif
