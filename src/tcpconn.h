/*
 * tcpconn.h: DNS over TCP from clients (RFC 7766): two-octet length
 * framing, several queries per connection answered in any order, an idle
 * timeout, a cap on connections, and a pause in accepting when out of
 * file descriptors.
 */
#ifndef DNSDAMPER_TCPCONN_H
#define DNSDAMPER_TCPCONN_H

struct query_ctx;
struct tcp_server;

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

#endif
