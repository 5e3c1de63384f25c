/* listen.c: listening sockets, bound here or passed by the service manager. */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
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
bind_one(const struct addr *a, int type)
{
	int fd, saved;

	fd = socket(a->ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if ((a->ss.ss_family == AF_INET6 &&
	    set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) == -1) ||
	    (type == SOCK_STREAM &&
	    set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1) == -1) ||
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

/* The slot of socks (n used, room for more) for address a. */
static struct listen_socket *
slot(struct listen_socket *socks, size_t *n, const struct addr *a)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (addr_equal(&socks[i].addr, a))
			return &socks[i];
	socks[*n].addr = *a;
	socks[*n].udp_fd = socks[*n].tcp_fd = -1;
	return &socks[(*n)++];
}

/*
 * Take over descriptor fd passed by the service manager: into its slot if
 * keep says so (a socket unit's, or ours from the fd store that conf
 * still listens on), else close it. Returns 1 if it came from a socket
 * unit, else 0.
 */
static int
adopt(const struct config *conf, int fd, const char *name,
    struct listen_socket *socks, size_t *n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss), tlen = sizeof(int);
	struct listen_socket *s;
	struct addr a;
	int type, unit = strcmp(name, SYSTEMD_FDNAME) != 0, *half;
	size_t i;

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
	s = slot(socks, n, &a);
	half = type == SOCK_DGRAM ? &s->udp_fd : &s->tcp_fd;
	if (*half != -1)
		close(*half);
	*half = fd;
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (type == SOCK_DGRAM && addr_is_wildcard(&a))
		(void)enable_pktinfo(fd, a.ss.ss_family);
	return unit;
}

/* Bind the halves of s not passed in; 0, or -1 (logged) on error. */
static int
bind_missing(const struct config *conf, struct listen_socket *s)
{
	char name[ADDR_STRLEN];

	if ((s->udp_fd == -1 &&
	    (s->udp_fd = bind_one(&s->addr, SOCK_DGRAM)) == -1) ||
	    (s->tcp_fd == -1 &&
	    (s->tcp_fd = bind_one(&s->addr, SOCK_STREAM)) == -1)) {
		addr_format(&s->addr, name, sizeof(name));
		if (skippable(conf, &s->addr)) {
			log_info("listen %s: %s; skipped", name,
			    strerror(errno));
			return 1;
		}
		log_err("listen %s", name);
		return -1;
	}
	return 0;
}

int
listen_open(const struct config *conf, int *fds, char **names, int n_fds,
    struct listen_socket **out, size_t *n, int *activated)
{
	struct listen_socket *socks, *s;
	size_t i;
	int j, rc;

	*n = 0;
	*activated = 0;
	if ((socks = calloc(conf->n_listen + (size_t)n_fds,
	    sizeof(*socks))) == NULL)
		return -1;
	for (j = 0; j < n_fds; j++)
		*activated |= adopt(conf, fds[j], names[j], socks, n);
	/* With a socket unit, it says where to listen; else the config. */
	for (i = 0; !*activated && i < conf->n_listen; i++) {
		s = slot(socks, n, &conf->listen[i]);
		if ((rc = bind_missing(conf, s)) == -1) {
			listen_close(socks, *n);
			*n = 0;
			return -1;
		}
		if (rc == 1) {		/* skipped: take it out again */
			if (s->udp_fd != -1)
				close(s->udp_fd);
			*s = socks[--(*n)];
		}
	}
	*out = socks;
	return 0;
}

void
listen_close(struct listen_socket *socks, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (socks[i].udp_fd != -1)
			close(socks[i].udp_fd);
		if (socks[i].tcp_fd != -1)
			close(socks[i].tcp_fd);
	}
	free(socks);
}

int
listen_same(const struct config *conf, const struct listen_socket *socks,
    size_t n)
{
	size_t i, j, found = 0;

	for (i = 0; i < conf->n_listen; i++)
		for (j = 0; j < n; j++)
			if (addr_equal(&conf->listen[i], &socks[j].addr)) {
				found++;
				break;
			}
	return found == n && found == conf->n_listen;
}
