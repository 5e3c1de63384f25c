/* udp.c: client DNS over UDP: batched receive and send, pktinfo. */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "query.h"
#include "udp.h"

#define UDP_BATCH	32		/* datagrams per recvmmsg */
#define UDP_ROUNDS	4		/* batches per wakeup, for fairness */
#define UDP_QUERY_MAX	4096		/* larger queries are dropped */
#define CMSG_BUF	CMSG_SPACE(sizeof(struct in6_pktinfo))

struct udp_server {
	struct query_ctx	*ctx;
	int			 fd;
	int			 pktinfo;	/* bound to a wildcard */
	int			 used;		/* in[] the last batch filled */
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
	uint8_t			 answer[UDP_BATCH][QUERY_ANSWER_MAX];
};

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

/* Point every receive header at its buffers, once. */
static void
setup_receive(struct udp_server *u)
{
	struct msghdr *mh;
	size_t i;

	for (i = 0; i < UDP_BATCH; i++) {
		mh = &u->in[i].msg_hdr;
		u->in_iov[i].iov_base = u->query[i];
		u->in_iov[i].iov_len = sizeof(u->query[i]);
		mh->msg_name = &u->peers[i];
		mh->msg_iov = &u->in_iov[i];
		mh->msg_iovlen = 1;
		mh->msg_control = u->pktinfo ? u->in_cmsg[i].buf : NULL;
	}
	u->used = UDP_BATCH;
}

/*
 * Make the headers the last batch filled ready again: recvmmsg changes
 * only their lengths and flags, and a batch of one (most of them, unless
 * busy) need not pay for 32.
 */
static void
prepare_receive(struct udp_server *u)
{
	struct msghdr *mh;
	int i;

	for (i = 0; i < u->used; i++) {
		mh = &u->in[i].msg_hdr;
		mh->msg_namelen = sizeof(u->peers[i]);
		mh->msg_controllen = u->pktinfo ? sizeof(u->in_cmsg[i]) : 0;
		mh->msg_flags = 0;
	}
	u->used = 0;
}

/* Handle datagram i of the batch; queue its answer, if any, at *nout. */
static void
handle_datagram(struct udp_server *u, size_t i, uint64_t now, size_t *nout)
{
	struct msghdr *mh = &u->in[i].msg_hdr;
	struct client *c = &u->clients[*nout];
	size_t len;

	if (mh->msg_flags & MSG_TRUNC) {
		metrics_add(&u->ctx->metrics.dropped, 1);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->ops = &udp_ops;
	c->transport = CLIENT_UDP;
	c->fd = u->fd;
	addr_from_sockaddr(&c->peer, mh->msg_name, mh->msg_namelen);
	if (u->pktinfo)
		read_pktinfo(mh, c);
	if (query_handle(u->ctx, u->query[i], u->in[i].msg_len, c, now,
	    u->answer[*nout], sizeof(u->answer[*nout]), &len) !=
	    QUERY_ANSWERED)
		return;
	fill_reply_header(&u->out[*nout].msg_hdr, c, u->out_cmsg[*nout].buf);
	u->out_iov[*nout].iov_base = u->answer[*nout];
	u->out_iov[*nout].iov_len = len;
	u->out[*nout].msg_hdr.msg_iov = &u->out_iov[*nout];
	u->out[*nout].msg_hdr.msg_iovlen = 1;
	(*nout)++;
}

static void
send_batch(struct udp_server *u, size_t nout)
{
	size_t done = 0;
	int n;

	while (done < nout) {
		n = sendmmsg(u->fd, u->out + done, (unsigned)(nout - done),
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
	struct udp_server *u = arg;
	size_t i, nout;
	uint64_t now;
	int n, round;

	(void)what;
	for (round = 0; round < UDP_ROUNDS; round++) {
		prepare_receive(u);
		n = recvmmsg(fd, u->in, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		u->used = n;
		now = clock_now_ms();
		nout = 0;
		for (i = 0; i < (size_t)n; i++)
			handle_datagram(u, i, now, &nout);
		send_batch(u, nout);
		if (n < UDP_BATCH)
			break;
	}
}

struct udp_server *
udp_server_new(struct query_ctx *ctx, int fd, int wildcard)
{
	struct udp_server *u;

	if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	u->ctx = ctx;
	u->fd = fd;
	u->pktinfo = wildcard;
	setup_receive(u);
	u->ev = event_new(ctx->base, fd, EV_READ | EV_PERSIST, udp_read_cb, u);
	if (u->ev == NULL || event_add(u->ev, NULL) == -1) {
		udp_server_free(u);
		return NULL;
	}
	return u;
}

void
udp_server_free(struct udp_server *u)
{
	if (u == NULL)
		return;
	if (u->ev != NULL)
		event_free(u->ev);
	free(u);
}
