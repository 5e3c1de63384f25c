/* listen.c: listening sockets, batched UDP receive and send. */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "listen.h"
#include "log.h"
#include "msg.h"
#include "query.h"
#include "systemd.h"

#define UDP_BATCH	32		/* datagrams per recvmmsg */
#define UDP_ROUNDS	4		/* batches per wakeup, for fairness */
#define UDP_QUERY_MAX	4096		/* larger queries are dropped */
#define UDP_RCVBUF	(1024 * 1024)
#define TCP_BACKLOG	256
#define CMSG_BUF	CMSG_SPACE(sizeof(struct in6_pktinfo))

struct listen_udp {
	struct query_ctx	*ctx;
	int			 fd;
	int			 pktinfo;	/* bound to a wildcard */
	struct event		*ev;
	struct mmsghdr		 in[UDP_BATCH];
	struct iovec		 in_iov[UDP_BATCH];
	struct sockaddr_storage	 peers[UDP_BATCH];
	union {
		struct cmsghdr	align;
		char		buf[CMSG_BUF];
	}			 in_cmsg[UDP_BATCH], out_cmsg[UDP_BATCH];
	struct mmsghdr		 out[UDP_BATCH];
	struct iovec		 out_iov[UDP_BATCH];
	struct client		 clients[UDP_BATCH];
	uint8_t			 query[UDP_BATCH][UDP_QUERY_MAX];
	uint8_t			 answer[UDP_BATCH][MSG_MAX_LEN + 64];
};

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

/* The query's destination, from the control message of recvmsg. */
static void
read_pktinfo(struct msghdr *mh, struct client *c)
{
	struct cmsghdr *cm;

	c->has_pktinfo = 0;
	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IP &&
		    cm->cmsg_type == IP_PKTINFO) {
			memcpy(&c->pktinfo.v4, CMSG_DATA(cm),
			    sizeof(c->pktinfo.v4));
			/* Answer from the address asked, any interface. */
			c->pktinfo.v4.ipi_spec_dst = c->pktinfo.v4.ipi_addr;
			c->pktinfo.v4.ipi_ifindex = 0;
			c->has_pktinfo = AF_INET;
		} else if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO) {
			memcpy(&c->pktinfo.v6, CMSG_DATA(cm),
			    sizeof(c->pktinfo.v6));
			c->has_pktinfo = AF_INET6;
		}
	}
}

/* Point mh at c's peer and, on a wildcard socket, its source address. */
static void
fill_reply_header(struct msghdr *mh, const struct client *c, void *cbuf)
{
	struct cmsghdr *cm;
	size_t len;

	memset(mh, 0, sizeof(*mh));
	mh->msg_name = (void *)&c->peer.ss;
	mh->msg_namelen = c->peer.len;
	if (!c->has_pktinfo)
		return;
	len = c->has_pktinfo == AF_INET ? sizeof(c->pktinfo.v4) :
	    sizeof(c->pktinfo.v6);
	mh->msg_control = cbuf;
	mh->msg_controllen = CMSG_SPACE(len);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = c->has_pktinfo == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
	cm->cmsg_type = c->has_pktinfo == AF_INET ? IP_PKTINFO : IPV6_PKTINFO;
	cm->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), &c->pktinfo, len);
}

/*
 * An answer to a query that waited, from the address the query was sent
 * to. A failure is only logged (debug): a lost UDP answer is the client's
 * to retry.
 */
static void
udp_send(const struct client *c, const uint8_t *buf, size_t len)
{
	union {
		struct cmsghdr	align;
		char		buf[CMSG_BUF];
	} cbuf;
	struct msghdr mh;
	struct iovec iov = { (void *)buf, len };

	fill_reply_header(&mh, c, cbuf.buf);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (sendmsg(c->fd, &mh, MSG_DONTWAIT) == -1)
		log_debug("udp send: %s", strerror(errno));
}

/* Nothing to keep alive: the socket outlives every query. */
static void
udp_keep(const struct client *c)
{
	(void)c;
}

static const struct client_ops udp_ops = { udp_send, udp_keep, udp_keep };

static void
prepare_receive(struct listen_udp *l)
{
	struct msghdr *mh;
	size_t i;

	for (i = 0; i < UDP_BATCH; i++) {
		mh = &l->in[i].msg_hdr;
		l->in_iov[i].iov_base = l->query[i];
		l->in_iov[i].iov_len = sizeof(l->query[i]);
		mh->msg_name = &l->peers[i];
		mh->msg_namelen = sizeof(l->peers[i]);
		mh->msg_iov = &l->in_iov[i];
		mh->msg_iovlen = 1;
		mh->msg_control = l->pktinfo ? l->in_cmsg[i].buf : NULL;
		mh->msg_controllen = l->pktinfo ? sizeof(l->in_cmsg[i]) : 0;
		mh->msg_flags = 0;
	}
}

/* Handle datagram i of the batch; queue its answer, if any, at *nout. */
static void
handle_datagram(struct listen_udp *l, size_t i, uint64_t now, size_t *nout)
{
	struct msghdr *mh = &l->in[i].msg_hdr;
	struct client *c = &l->clients[*nout];
	size_t len;

	if (mh->msg_flags & MSG_TRUNC) {
		l->ctx->metrics.dropped++;
		return;
	}
	memset(c, 0, sizeof(*c));
	c->ops = &udp_ops;
	c->transport = CLIENT_UDP;
	c->fd = l->fd;
	addr_from_sockaddr(&c->peer, mh->msg_name, mh->msg_namelen);
	if (l->pktinfo)
		read_pktinfo(mh, c);
	if (query_handle(l->ctx, l->query[i], l->in[i].msg_len, c, now,
	    l->answer[*nout], sizeof(l->answer[*nout]), &len) !=
	    QUERY_ANSWERED)
		return;
	fill_reply_header(&l->out[*nout].msg_hdr, c, l->out_cmsg[*nout].buf);
	l->out_iov[*nout].iov_base = l->answer[*nout];
	l->out_iov[*nout].iov_len = len;
	l->out[*nout].msg_hdr.msg_iov = &l->out_iov[*nout];
	l->out[*nout].msg_hdr.msg_iovlen = 1;
	(*nout)++;
}

static void
send_batch(struct listen_udp *l, size_t nout)
{
	size_t done = 0;
	int n;

	while (done < nout) {
		n = sendmmsg(l->fd, l->out + done, (unsigned)(nout - done),
		    MSG_DONTWAIT);
		if (n == -1) {
			/* Skip the datagram that failed; send the rest. */
			log_debug("udp send: %s", strerror(errno));
			n = 1;
		}
		done += (size_t)n;
	}
}

static void
udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listen_udp *l = arg;
	size_t i, nout;
	uint64_t now;
	int n, round;

	(void)what;
	for (round = 0; round < UDP_ROUNDS; round++) {
		prepare_receive(l);
		n = recvmmsg(fd, l->in, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		now = clock_now_ms();
		nout = 0;
		for (i = 0; i < (size_t)n; i++)
			handle_datagram(l, i, now, &nout);
		send_batch(l, nout);
		if (n < UDP_BATCH)
			break;
	}
}

struct listen_udp *
listen_udp_start(struct query_ctx *ctx, const struct listen_socket *s)
{
	struct listen_udp *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->ctx = ctx;
	l->fd = s->udp_fd;
	l->pktinfo = addr_is_wildcard(&s->addr);
	l->ev = event_new(ctx->base, l->fd, EV_READ | EV_PERSIST,
	    udp_read_cb, l);
	if (l->ev == NULL || event_add(l->ev, NULL) == -1) {
		listen_udp_stop(l);
		return NULL;
	}
	return l;
}

void
listen_udp_stop(struct listen_udp *l)
{
	if (l == NULL)
		return;
	if (l->ev != NULL)
		event_free(l->ev);
	free(l);
}
