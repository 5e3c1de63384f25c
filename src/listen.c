/* listen.c: listening sockets, bound here or passed by the service manager;
 * which worker serves which. */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listen.h"
#include "log.h"
#include "systemd.h"

#define UDP_RCVBUF	(1024 * 1024)
#define TCP_BACKLOG	256

static int
set_int(int fd, int level, int name, int value)
{
	return setsockopt(fd, level, name, &value, sizeof(value));
}

/* Ask for each query's destination address when bound to a wildcard. */
static int
enable_pktinfo(int fd, int family)
{
	if (family == AF_INET)
		return set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
	return set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
}

static int
bind_one(const struct addr *a, int type, int reuseport)
{
	int fd, saved;

	fd = socket(a->ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if ((a->ss.ss_family == AF_INET6 &&
	    set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) == -1) ||
	    (type == SOCK_STREAM &&
	    set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1) == -1) ||
	    (reuseport && set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1) == -1) ||
	    (type == SOCK_DGRAM && addr_is_wildcard(a) &&
	    enable_pktinfo(fd, a->ss.ss_family) == -1))
		goto fail;
	if (type == SOCK_DGRAM)	/* best effort: absorbs bursts */
		(void)set_int(fd, SOL_SOCKET, SO_RCVBUF, UDP_RCVBUF);
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) == -1 ||
	    (type == SOCK_STREAM && listen(fd, TCP_BACKLOG) == -1))
		goto fail;
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

/* The host has no IPv6 (or not this address): skip a default listener. */
static int
skippable(const struct config *conf, const struct addr *a)
{
	return conf->listen_default && a->ss.ss_family == AF_INET6 &&
	    (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL);
}

static struct listen_socket *
new_slot(struct listen_set *set, const struct addr *a)
{
	struct listen_socket *s = &set->socks[set->n++];

	s->addr = *a;
	s->udp_fd = s->tcp_fd = -1;
	return s;
}

/* The first socket of set for address a whose half type is free. */
static struct listen_socket *
slot(struct listen_set *set, const struct addr *a, int type)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (addr_equal(&set->socks[i].addr, a) &&
		    (type == SOCK_DGRAM ? set->socks[i].udp_fd :
		    set->socks[i].tcp_fd) == -1)
			return &set->socks[i];
	return new_slot(set, a);
}

/* 1 if name is one we gave our own sockets in the fd store. */
static int
ours(const char *name)
{
	size_t n = strlen(SYSTEMD_FDNAME);

	return strncmp(name, SYSTEMD_FDNAME, n) == 0 &&
	    (name[n] == '\0' || name[n] == '/');
}

/* Remember name (ours) to take it out of the fd store before storing. */
static void
remember(struct listen_set *set, const char *name)
{
	size_t i;

	for (i = 0; i < set->n_passed; i++)
		if (strcmp(set->passed[i], name) == 0)
			return;
	if ((set->passed[set->n_passed] = strdup(name)) != NULL)
		set->n_passed++;
}

/*
 * Take over descriptor fd passed by the service manager: into a slot if
 * keep says so (a socket unit's, or ours from the fd store that conf
 * still listens on), else close it. Returns 1 if it came from a socket
 * unit, else 0.
 */
static int
adopt(const struct config *conf, int fd, const char *name,
    struct listen_set *set)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss), tlen = sizeof(int);
	struct listen_socket *s;
	struct addr a;
	int type, unit = !ours(name);
	size_t i;

	if (!unit)
		remember(set, name);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) ||
	    (type != SOCK_DGRAM && type != SOCK_STREAM)) {
		log_warnx("passed descriptor %d (%s) is not a UDP or TCP "
		    "socket; ignored", fd, name);
		close(fd);
		return 0;
	}
	addr_from_sockaddr(&a, (struct sockaddr *)&ss, len);
	for (i = 0; !unit && i < conf->n_listen; i++)
		if (addr_equal(&conf->listen[i], &a))
			break;
	if (!unit && i == conf->n_listen) {
		close(fd);	/* no longer configured */
		return 0;
	}
	s = slot(set, &a, type);
	if (type == SOCK_DGRAM)
		s->udp_fd = fd;
	else
		s->tcp_fd = fd;
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (type == SOCK_DGRAM && addr_is_wildcard(&a))
		(void)enable_pktinfo(fd, a.ss.ss_family);
	return unit;
}

/*
 * Bind the halves of s not passed in; 0, 1 if skipped, or -1 on error
 * (logged as an error if fatal, as a notice if not: errors are fatal
 * only for an address's first socket).
 */
static int
bind_missing(const struct config *conf, struct listen_socket *s,
    int reuseport, int fatal)
{
	char name[ADDR_STRLEN];

	if ((s->udp_fd == -1 &&
	    (s->udp_fd = bind_one(&s->addr, SOCK_DGRAM, reuseport)) == -1) ||
	    (s->tcp_fd == -1 &&
	    (s->tcp_fd = bind_one(&s->addr, SOCK_STREAM, reuseport)) == -1)) {
		addr_format(&s->addr, name, sizeof(name));
		if (fatal && skippable(conf, &s->addr)) {
			log_info("listen %s: %s; skipped", name,
			    strerror(errno));
			return 1;
		}
		if (fatal)
			log_err("listen %s", name);
		else
			log_info("listen %s: no socket of its own for every "
			    "worker (%s); workers share them", name,
			    strerror(errno));
		return -1;
	}
	return 0;
}

/* Close what s holds and take it out of set (the last takes its place). */
static void
drop(struct listen_set *set, struct listen_socket *s)
{
	if (s->udp_fd != -1)
		close(s->udp_fd);
	if (s->tcp_fd != -1)
		close(s->tcp_fd);
	*s = set->socks[--set->n];
}

/*
 * Every worker's sockets for address a: the halves missing of those
 * passed in, and more (SO_REUSEPORT) up to one per worker; only the
 * first's failure is an error. 0, or -1 (logged).
 */
static int
bind_address(const struct config *conf, struct listen_set *set,
    const struct addr *a)
{
	int reuseport = set->n_workers > 1, rc;
	struct listen_socket *s;
	size_t i, k = 0;

	for (i = 0; i < set->n; i++) {
		s = &set->socks[i];
		if (!addr_equal(&s->addr, a))
			continue;
		/* Adopted halves are never closed: they may hold queries. */
		if (bind_missing(conf, s, reuseport, k == 0) == -1 && k == 0)
			return -1;
		k++;
	}
	if (k == 0) {
		if ((rc = bind_missing(conf, new_slot(set, a), reuseport,
		    1)) != 0) {
			drop(set, &set->socks[set->n - 1]);
			return rc == -1 ? -1 : 0;
		}
		k = 1;
	}
	for (; k < set->n_workers; k++)
		if (bind_missing(conf, s = new_slot(set, a), 1, 0) == -1) {
			drop(set, s);
			break;
		}
	return 0;
}

int
listen_open(const struct config *conf, unsigned n_workers, int *fds,
    char **names, int n_fds, struct listen_set *set)
{
	size_t i;
	int j;

	memset(set, 0, sizeof(*set));
	set->n_workers = n_workers;
	if ((set->socks = calloc(conf->n_listen * n_workers + (size_t)n_fds,
	    sizeof(*set->socks))) == NULL ||
	    (n_fds > 0 && (set->passed = calloc((size_t)n_fds,
	    sizeof(*set->passed))) == NULL)) {
		listen_close(set);
		return -1;
	}
	for (j = 0; j < n_fds; j++)
		set->activated |= adopt(conf, fds[j], names[j], set);
	/* With a socket unit, it says where to listen; else the config. */
	for (i = 0; !set->activated && i < conf->n_listen; i++)
		if (bind_address(conf, set, &conf->listen[i]) == -1) {
			listen_close(set);
			return -1;
		}
	return 0;
}

void
listen_close(struct listen_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		if (set->socks[i].udp_fd != -1)
			close(set->socks[i].udp_fd);
		if (set->socks[i].tcp_fd != -1)
			close(set->socks[i].tcp_fd);
	}
	for (i = 0; i < set->n_passed; i++)
		free(set->passed[i]);
	free(set->passed);
	free(set->socks);
	memset(set, 0, sizeof(*set));
}

size_t
listen_count(const struct listen_set *set, const struct addr *a)
{
	size_t i, k = 0;

	for (i = 0; i < set->n; i++)
		k += addr_equal(&set->socks[i].addr, a);
	return k;
}

/* How many sockets of set before the i-th are for its address. */
static size_t
rank_of(const struct listen_set *set, size_t i)
{
	size_t j, rank = 0;

	for (j = 0; j < i; j++)
		rank += addr_equal(&set->socks[j].addr, &set->socks[i].addr);
	return rank;
}

/* 1 if worker serves the i-th socket of set. */
static int
serves(const struct listen_set *set, size_t i, unsigned worker)
{
	size_t k = listen_count(set, &set->socks[i].addr);
	size_t rank = rank_of(set, i);

	if (set->activated)
		return 1;
	/* Fewer sockets than workers: shared, each read by several. */
	if (k < set->n_workers)
		return rank == worker % k;
	return rank % set->n_workers == worker;
}

size_t
listen_of_worker(const struct listen_set *set, unsigned worker,
    struct listen_socket *out)
{
	size_t i, n = 0;

	for (i = 0; i < set->n; i++)
		if (serves(set, i, worker))
			out[n++] = set->socks[i];
	return n;
}

/* The fd store name of half proto ("udp", "tcp") of socket i of set. */
static void
store_name(const struct listen_set *set, size_t i, const char *proto,
    char *buf, size_t len)
{
	char addr[ADDR_STRLEN], *p;
	unsigned w = 0;

	while (!serves(set, i, w))
		w++;
	addr_format(&set->socks[i].addr, addr, sizeof(addr));
	for (p = addr; (p = strchr(p, ':')) != NULL; p++)
		*p = '_';
	snprintf(buf, len, "%s/%u/%s/%s", SYSTEMD_FDNAME, w, proto, addr);
}

void
listen_store(const struct listen_set *set)
{
	char name[sizeof(SYSTEMD_FDNAME) + ADDR_STRLEN + 32];
	size_t i;

	if (set->activated)
		return;
	/* What we stored before, whatever workers and addresses it had. */
	systemd_store_remove(SYSTEMD_FDNAME);
	for (i = 0; i < set->n_passed; i++)
		if (strcmp(set->passed[i], SYSTEMD_FDNAME) != 0)
			systemd_store_remove(set->passed[i]);
	for (i = 0; i < set->n; i++) {
		if (set->socks[i].udp_fd != -1) {
			store_name(set, i, "udp", name, sizeof(name));
			systemd_store_fd(set->socks[i].udp_fd, name);
		}
		if (set->socks[i].tcp_fd != -1) {
			store_name(set, i, "tcp", name, sizeof(name));
			systemd_store_fd(set->socks[i].tcp_fd, name);
		}
	}
}

int
listen_same(const struct config *conf, const struct listen_set *set)
{
	size_t i, j;

	for (i = 0; i < conf->n_listen; i++)
		if (listen_count(set, &conf->listen[i]) == 0)
			return 0;
	for (j = 0; j < set->n; j++) {
		for (i = 0; i < conf->n_listen; i++)
			if (addr_equal(&conf->listen[i], &set->socks[j].addr))
				break;
		if (i == conf->n_listen)
			return 0;
	}
	return 1;
}
