/* srvexchange.c: DNS questions asked at once over UDP, TCP if truncated. */
#include "autoconf.h"

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dnsdamper/srvrand.h"
#include "srvexchange.h"

/* One question in flight. */
struct slot {
	int		 fd;		/* -1: free */
	size_t		 qi;		/* index into the batch */
	uint16_t	 id;
	ldns_buffer	*wire;		/* the query as sent */
	uint64_t	 resend;	/* ms: when to send it again */
	uint64_t	 deadline;	/* ms: when to give up */
};

/* A whole batch. */
struct batch {
	const struct sockaddr_storage	*server;
	socklen_t			 len;
	unsigned			 timeout_ms;
	struct srvexchange_query	*q;
	size_t				 n;
	size_t				 started;	/* q[0..started) sent */
	int				*tc;		/* q[i] needs TCP */
	struct slot			 slot[SRVEXCHANGE_INFLIGHT];
	struct srv_random		 rnd;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The query for q with this ID in wire form, or NULL (no memory). */
static ldns_buffer *
query_wire(const struct srvexchange_query *q, uint16_t id)
{
	ldns_rdf *qname;
	ldns_pkt *pkt;
	ldns_buffer *buf;

	if ((qname = ldns_rdf_clone(q->qname)) == NULL)
		return NULL;
	if ((pkt = ldns_pkt_query_new(qname, q->qtype, LDNS_RR_CLASS_IN,
	    LDNS_RD)) == NULL) {
		ldns_rdf_deep_free(qname);
		return NULL;
	}
	ldns_pkt_set_id(pkt, id);
	ldns_pkt_set_edns_udp_size(pkt, SRVEXCHANGE_EDNS_SIZE);
	if ((buf = ldns_buffer_new(LDNS_MIN_BUFLEN)) != NULL &&
	    ldns_pkt2buffer_wire(buf, pkt) != LDNS_STATUS_OK) {
		ldns_buffer_free(buf);
		buf = NULL;
	}
	ldns_pkt_free(pkt);
	return buf;
}

/* Whether pkt answers q sent with id (RFC 5452 §9.1). */
static int
answers(const ldns_pkt *pkt, const struct srvexchange_query *q, uint16_t id)
{
	const ldns_rr *question;

	if (!ldns_pkt_qr(pkt) || ldns_pkt_id(pkt) != id ||
	    ldns_pkt_qdcount(pkt) != 1 ||
	    ldns_rr_list_rr_count(ldns_pkt_question(pkt)) != 1)
		return 0;
	question = ldns_rr_list_rr(ldns_pkt_question(pkt), 0);
	return ldns_rr_get_type(question) == q->qtype &&
	    ldns_rr_get_class(question) == LDNS_RR_CLASS_IN &&
	    ldns_dname_compare(ldns_rr_owner(question), q->qname) == 0;
}

static void
slot_close(struct slot *s)
{
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	ldns_buffer_free(s->wire);
	s->wire = NULL;
}

static void
slot_send(struct slot *s, uint64_t now)
{
	/* a lost send is a lost datagram: the resend timer covers both */
	(void)send(s->fd, ldns_buffer_begin(s->wire),
	    ldns_buffer_position(s->wire), MSG_NOSIGNAL);
	s->resend = now + SRVEXCHANGE_RESEND_MS;
}

/* Send the next question of the batch from the free slot s. */
static int
slot_start(struct batch *b, struct slot *s, uint64_t now)
{
	s->qi = b->started++;
	s->id = (uint16_t)b->rnd.next(b->rnd.state);
	if ((s->wire = query_wire(&b->q[s->qi], s->id)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if ((s->fd = socket(b->server->ss_family, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(s->fd, (const struct sockaddr *)b->server, b->len) == -1) {
		/* no route and the like: this question gets no answer */
		slot_close(s);
		return 0;
	}
	s->deadline = now + b->timeout_ms;
	slot_send(s, now);
	return 0;
}

/* Read what came to s; close it once its answer is there. */
static void
slot_read(struct batch *b, struct slot *s)
{
	uint8_t buf[65535];
	ldns_pkt *pkt;
	ssize_t got;

	while ((got = recv(s->fd, buf, sizeof(buf), 0)) >= 0) {
		if (ldns_wire2pkt(&pkt, buf, (size_t)got) != LDNS_STATUS_OK)
			continue;
		if (!answers(pkt, &b->q[s->qi], s->id)) {
			ldns_pkt_free(pkt);
			continue;
		}
		if (ldns_pkt_tc(pkt)) {
			b->tc[s->qi] = 1;
			ldns_pkt_free(pkt);
		} else
			b->q[s->qi].answer = pkt;
		slot_close(s);
		return;
	}
	/* EAGAIN; or ICMP unreachable (ECONNREFUSED): the resend tries again */
}

/* Start questions in free slots, and resend or give up those due. */
static int
tend(struct batch *b, uint64_t now)
{
	struct slot *s;
	size_t i;

	for (i = 0; i < SRVEXCHANGE_INFLIGHT; i++) {
		s = &b->slot[i];
		if (s->fd != -1 && now >= s->deadline)
			slot_close(s);
		else if (s->fd != -1 && now >= s->resend)
			slot_send(s, now);
		while (s->fd == -1 && b->started < b->n)
			if (slot_start(b, s, now) == -1)
				return -1;
	}
	return 0;
}

/* Wait for answers until the next timer; returns how many slots are busy. */
static size_t
wait_io(struct batch *b, uint64_t now)
{
	struct pollfd pfd[SRVEXCHANGE_INFLIGHT];
	struct slot *busy[SRVEXCHANGE_INFLIGHT];
	uint64_t next = UINT64_MAX;
	size_t i, k = 0;

	for (i = 0; i < SRVEXCHANGE_INFLIGHT; i++) {
		if (b->slot[i].fd == -1)
			continue;
		busy[k] = &b->slot[i];
		pfd[k].fd = b->slot[i].fd;
		pfd[k].events = POLLIN;
		pfd[k++].revents = 0;
		if (b->slot[i].resend < next)
			next = b->slot[i].resend;
		if (b->slot[i].deadline < next)
			next = b->slot[i].deadline;
	}
	if (k == 0)
		return 0;
	if (poll(pfd, (nfds_t)k, next > now ? (int)(next - now) : 0) > 0)
		for (i = 0; i < k; i++)
			if (pfd[i].revents != 0)
				slot_read(b, busy[i]);
	return k;
}

/* Wait until fd is ready for events, by the deadline (ms): 1, or 0. */
static int
wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd pfd = { fd, events, 0 };
	uint64_t now;
	int r;

	for (;;) {
		if ((now = now_ms()) >= deadline)
			return 0;
		if ((r = poll(&pfd, 1, (int)(deadline - now))) > 0)
			return 1;
		if (r == -1 && errno != EINTR)
			return 0;
	}
}

/*
 * All of buf[0..len) sent on fd (sending), or received into it, by the
 * deadline: 0, or -1. The deadline bounds the whole transfer: a server
 * that trickles its answer an octet at a time cannot hold us longer.
 */
static int
tcp_transfer(int fd, uint8_t *buf, size_t len, int sending,
    uint64_t deadline)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		if (!wait_fd(fd, sending ? POLLOUT : POLLIN, deadline))
			return -1;
		r = sending ? send(fd, buf + done, len - done, MSG_NOSIGNAL) :
		    recv(fd, buf + done, len - done, 0);
		if (r > 0)
			done += (size_t)r;
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
	return 0;
}

/* A TCP connection to the server, made by the deadline; -1 if none. */
static int
tcp_connect(const struct batch *b, uint64_t deadline)
{
	socklen_t len = sizeof(int);
	int fd, e = 0;

	if ((fd = socket(b->server->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (const struct sockaddr *)b->server, b->len) == 0)
		return fd;
	if (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) &&
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0)
		return fd;
	close(fd);
	return -1;
}

/*
 * Ask q again over TCP (RFC 7766 §8: the two-octet length, then the
 * message), the whole exchange within the batch's timeout; its answer,
 * or NULL.
 */
static ldns_pkt *
over_tcp(const struct batch *b, const struct srvexchange_query *q)
{
	uint64_t deadline = now_ms() + b->timeout_ms;
	uint16_t id = (uint16_t)b->rnd.next(b->rnd.state);
	ldns_buffer *wire;
	ldns_pkt *pkt = NULL;
	uint8_t len[2], *raw = NULL;
	size_t size;
	int fd = -1;

	if ((wire = query_wire(q, id)) == NULL)
		return NULL;
	size = ldns_buffer_position(wire);
	len[0] = (uint8_t)(size >> 8);
	len[1] = (uint8_t)size;
	if ((fd = tcp_connect(b, deadline)) == -1 ||
	    tcp_transfer(fd, len, 2, 1, deadline) == -1 ||
	    tcp_transfer(fd, ldns_buffer_begin(wire), size, 1, deadline) ==
	    -1 ||
	    tcp_transfer(fd, len, 2, 0, deadline) == -1)
		goto out;
	size = (size_t)len[0] << 8 | len[1];
	if ((raw = malloc(size > 0 ? size : 1)) == NULL ||
	    tcp_transfer(fd, raw, size, 0, deadline) == -1 ||
	    ldns_wire2pkt(&pkt, raw, size) != LDNS_STATUS_OK)
		goto out;
	if (!answers(pkt, q, id)) {
		ldns_pkt_free(pkt);
		pkt = NULL;
	}
out:
	if (fd != -1)
		close(fd);
	free(raw);
	ldns_buffer_free(wire);
	return pkt;
}

static void
batch_end(struct batch *b)
{
	size_t i;

	for (i = 0; i < SRVEXCHANGE_INFLIGHT; i++)
		slot_close(&b->slot[i]);
	free(b->tc);
}

int
srvexchange_run(const struct sockaddr_storage *server, socklen_t len,
    unsigned timeout_ms, struct srvexchange_query *q, size_t n)
{
	struct batch b;
	size_t i;
	int saved;

	memset(&b, 0, sizeof(b));
	b.server = server;
	b.len = len;
	b.timeout_ms = timeout_ms;
	b.q = q;
	b.n = n;
	srvrand_system(&b.rnd);
	for (i = 0; i < SRVEXCHANGE_INFLIGHT; i++)
		b.slot[i].fd = -1;
	for (i = 0; i < n; i++)
		q[i].answer = NULL;
	if ((b.tc = calloc(n > 0 ? n : 1, sizeof(*b.tc))) == NULL)
		return -1;
	do {
		if (tend(&b, now_ms()) == -1)
			goto fail;
	} while (wait_io(&b, now_ms()) > 0 || b.started < n);
	for (i = 0; i < n; i++)
		if (b.tc[i])
			q[i].answer = over_tcp(&b, &q[i]);
	batch_end(&b);
	return 0;
fail:
	saved = errno;
	batch_end(&b);
	for (i = 0; i < n; i++) {
		ldns_pkt_free(q[i].answer);
		q[i].answer = NULL;
	}
	errno = saved;
	return -1;
}
