/*
 * udp.h: DNS over UDP from clients: queries received in batches
 * (recvmmsg), their immediate answers sent in batches (sendmmsg), each
 * from the address its query was sent to (IP_PKTINFO / IPV6_PKTINFO on a
 * socket bound to a wildcard address), and the answers to queries that
 * waited for a fetch sent one by one.
 */
#ifndef DNSDAMPER_UDP_H
#define DNSDAMPER_UDP_H

struct query_ctx;
struct udp_server;

/*
 * udp_server_new: serve the queries arriving on UDP socket fd (owned by
 * the caller) in ctx's event loop; wildcard says fd is bound to a wildcard
 * address, with the pktinfo option listen.c sets on such sockets. A
 * datagram longer than 4096 octets is dropped and counted (dropped).
 * Returns NULL if out of memory.
 */
struct udp_server *udp_server_new(struct query_ctx *ctx, int fd,
	    int wildcard);

/* udp_server_free: stop serving and free s. NULL is allowed. */
void	udp_server_free(struct udp_server *s);

#endif
