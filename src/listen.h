/*
 * listen.h: the UDP and TCP listening sockets, at start-up: those passed
 * by the service manager (socket activation, fd store) adopted, the rest
 * bound; UDP sockets on a wildcard address ask for each query's
 * destination (pktinfo). udp.c and tcpconn.c serve them.
 */
#ifndef DNSDAMPER_LISTEN_H
#define DNSDAMPER_LISTEN_H

#include <stddef.h>

#include "addr.h"
#include "config.h"

/* A bound address: one UDP and one listening TCP socket (-1: none). */
struct listen_socket {
	struct addr	addr;
	int		udp_fd;
	int		tcp_fd;
};

/*
 * listen_open: the listening sockets: first those passed by the service
 * manager (fds and names, n_fds of them, taken over: see
 * systemd_listen_fds), then a UDP and a TCP socket bound for each listen
 * address of conf not passed in. A socket unit's sockets (names other
 * than SYSTEMD_FDNAME) replace the config's listen addresses, and
 * *activated is set; our own from the fd store are kept only while conf
 * still listens there. IPv6 addresses of the built-in default are skipped
 * with a notice when the host has no IPv6. A socket unit may pass only
 * UDP or only TCP for an address: the other fd is then -1. Returns 0 with
 * *out (owned, *n entries; free with listen_close), or -1 after logging
 * which address failed and why (nothing left open).
 */
int	listen_open(const struct config *conf, int *fds, char **names,
	    int n_fds, struct listen_socket **out, size_t *n, int *activated);

/* listen_close: close the sockets of listen_open and free the array. */
void	listen_close(struct listen_socket *socks, size_t n);

/* listen_same: 1 if conf listens on exactly the addresses of socks. */
int	listen_same(const struct config *conf, const struct listen_socket *socks,
	    size_t n);

#endif
