/*
 * tcpconn.h: DNS over TCP from clients (RFC 7766): two-octet length
 * framing, several queries per connection answered in any order, an idle
 * timeout and a shorter one before a whole message, a cap on connections
 * at which the one idle longest makes room for a new one, and a pause in
 * accepting when out of file descriptors.
 */
#ifndef DNSDAMPER_TCPCONN_H
#define DNSDAMPER_TCPCONN_H

struct query_ctx;
struct tcp_server;

/*
 * tcpconn_server_new: accept connections on listening socket fd (owned by
 * the caller) in ctx's loop; ctx->tcp_conns holds the connections of all
 * of ctx's servers. Limits (tcp-clients, tcp-idle-timeout,
 * tcp-initial-timeout) are read from ctx's current config as they apply.
 * Returns NULL on error.
 */
struct tcp_server *tcpconn_server_new(struct query_ctx *ctx, int fd);

/*
 * tcpconn_server_free: stop accepting and close every connection of s.
 * Connections still referenced by pending queries are freed when those
 * release them.
 */
void	tcpconn_server_free(struct tcp_server *s);

#endif
