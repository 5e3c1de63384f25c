/*
 * listen.h: the UDP and TCP listening sockets, at start-up: those passed
 * by the service manager (socket activation, fd store) adopted, the rest
 * bound; UDP sockets on a wildcard address ask for each query's
 * destination (pktinfo). With several workers, each gets sockets of its
 * own on every address (SO_REUSEPORT: the kernel spreads clients over
 * them), or shares them when it cannot; a socket unit's are shared by
 * every worker. udp.c and tcpconn.c serve them.
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

/* Every listening socket of the process. */
struct listen_set {
	struct listen_socket	*socks;		/* an address may have
						 * several, in order: its
						 * first, second... */
	size_t			 n;
	int			 activated;	/* from a socket unit */
	unsigned		 n_workers;
	char			**passed;	/* fd store names of ours that
						 * were passed in (owned) */
	size_t			 n_passed;
};

/*
 * listen_open: the listening sockets for n_workers workers into *set:
 * first those passed by the service manager (fds and names, n_fds of
 * them, taken over: see systemd_listen_fds), then a UDP and a TCP socket
 * bound for each listen address of conf not passed in, and with more
 * than one worker, more with SO_REUSEPORT until every worker has its own
 * on each address (when that fails, workers share: said in the log). A
 * socket unit's sockets (names other than SYSTEMD_FDNAME and its
 * SYSTEMD_FDNAME/... forms) replace the config's listen addresses, and
 * set->activated is set; our own from the fd store are kept only while
 * conf still listens there, and never closed otherwise, so that queries
 * queued in them are served. IPv6 addresses of the built-in default are
 * skipped with a notice when the host has no IPv6. A socket unit may pass
 * only UDP or only TCP for an address: the other fd is then -1. Returns
 * 0 (free the set with listen_close), or -1 after logging which address
 * failed and why (nothing left open).
 */
int	listen_open(const struct config *conf, unsigned n_workers, int *fds,
	    char **names, int n_fds, struct listen_set *set);

/* listen_close: close the sockets of listen_open and free the set. */
void	listen_close(struct listen_set *set);

/*
 * listen_of_worker: the sockets worker (below set->n_workers) serves,
 * copied into out (room for set->n): of an address with at least as many
 * sockets as workers, every n_workers-th from its own number on; of one
 * with fewer, one shared with other workers; with socket activation,
 * every socket. Returns how many.
 */
size_t	listen_of_worker(const struct listen_set *set, unsigned worker,
	    struct listen_socket *out);

/*
 * listen_count: how many sockets set has for address a (the UDP and TCP
 * of one worker counting once).
 */
size_t	listen_count(const struct listen_set *set, const struct addr *a);

/*
 * listen_store: hand every socket of set to the service manager's fd
 * store (unless a socket unit owns them), in place of ours it held, each
 * named SYSTEMD_FDNAME/WORKER/udp|tcp/ADDRESS (the address with '_' for
 * ':', which names may not hold), so that a restart drops no query.
 */
void	listen_store(const struct listen_set *set);

/* listen_same: 1 if conf listens on exactly the addresses of set. */
int	listen_same(const struct config *conf, const struct listen_set *set);

#endif
