/* canned.c: perf's floor, answering every UDP query with one fixed record. */

/*
 * What any DNS server must at least do per query over UDP: one receive, a
 * header and question check, one send, amortised over batches as a good
 * server does. No cache, no lookup: the answer is the question followed by
 * one A record (192.0.2.1, RFC 5737 documentation space) whatever the
 * qtype; dnsperf matches answers by ID and does not look at the records.
 *
 * usage: canned ADDRESS PORT	(ADDRESS must be in 127.0.0.0/8)
 * Runs until killed. Malformed queries (short, not a query, not exactly
 * one question) are dropped; EDNS OPT and anything after the question are
 * left out of the answer.
 */

#define _GNU_SOURCE
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CANNED_BATCH	64	/* datagrams per recvmmsg/sendmmsg */
#define CANNED_BUF	4096	/* a query's octets; the answer fits too */
#define DNS_HEADER	12	/* RFC 1035 §4.1.1 */

/* RFC 1035 §4.1.3: pointer to the qname at offset 12, A, IN, TTL one
 * day, RDLENGTH 4, 192.0.2.1. */
static const uint8_t canned_rr[] = {
	0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x51, 0x80,
	0x00, 0x04, 192, 0, 2, 1
};

/*
 * Octets of the header and question of query q (len octets), or 0 if it
 * is not a well-formed query with exactly one question (RFC 1035 §4.1).
 */
static size_t
canned_question_end(const uint8_t *q, size_t len)
{
	size_t	off = DNS_HEADER;

	if (len < DNS_HEADER || (q[2] & 0x80) != 0 || (q[2] & 0x78) != 0 ||
	    q[4] != 0 || q[5] != 1)
		return 0;
	while (off < len && q[off] != 0) {
		if ((q[off] & 0xc0) != 0)	/* no pointer in a query */
			return 0;
		off += 1 + q[off];
	}
	if (off >= len || off - DNS_HEADER + 1 > 255)
		return 0;
	off += 1 + 4;				/* root label, qtype, qclass */
	return off <= len ? off : 0;
}

/*
 * Turn the query in buf (len octets) into its answer in place: QR and RA
 * set, RD kept, NOERROR, one answer record. Returns the answer's length,
 * or 0 to drop the datagram.
 */
static size_t
canned_answer(uint8_t *buf, size_t len)
{
	size_t	end;

	if ((end = canned_question_end(buf, len)) == 0)
		return 0;
	buf[2] = (buf[2] & 0x01) | 0x80;	/* QR, opcode 0, RD as asked */
	buf[3] = 0x80;				/* RA, rcode NOERROR */
	buf[6] = 0;
	buf[7] = 1;				/* ANCOUNT */
	memset(buf + 8, 0, 4);			/* NSCOUNT, ARCOUNT */
	memcpy(buf + end, canned_rr, sizeof(canned_rr));
	return end + sizeof(canned_rr);
}

static int
canned_socket(const char *addr, const char *port)
{
	struct sockaddr_in	sin;
	char			*ep;
	unsigned long		p;
	int			fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    (ntohl(sin.sin_addr.s_addr) >> 24) != 127)
		errx(2, "%s: not an address in 127.0.0.0/8", addr);
	errno = 0;
	p = strtoul(port, &ep, 10);
	if (errno != 0 || *ep != '\0' || p == 0 || p > 65535)
		errx(2, "%s: not a port", port);
	sin.sin_port = htons(p);
	if ((fd = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		err(1, "socket");
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "bind %s:%s", addr, port);
	return fd;
}

int
main(int argc, char *argv[])
{
	static uint8_t		buf[CANNED_BATCH][CANNED_BUF];
	struct sockaddr_in	from[CANNED_BATCH];
	struct mmsghdr		in[CANNED_BATCH], out[CANNED_BATCH];
	struct iovec		iov[CANNED_BATCH];
	int			fd, i, n, k;
	size_t			len;

	if (argc != 3)
		errx(2, "usage: canned ADDRESS PORT");
	fd = canned_socket(argv[1], argv[2]);
	memset(in, 0, sizeof(in));
	for (i = 0; i < CANNED_BATCH; i++) {
		iov[i].iov_base = buf[i];
		in[i].msg_hdr.msg_iov = &iov[i];
		in[i].msg_hdr.msg_iovlen = 1;
		in[i].msg_hdr.msg_name = &from[i];
	}
	for (;;) {
		for (i = 0; i < CANNED_BATCH; i++) {
			iov[i].iov_len = CANNED_BUF - sizeof(canned_rr);
			in[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		n = recvmmsg(fd, in, CANNED_BATCH, MSG_WAITFORONE, NULL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			err(1, "recvmmsg");
		}
		for (i = k = 0; i < n; i++) {
			if ((len = canned_answer(buf[i], in[i].msg_len)) == 0)
				continue;
			out[k] = in[i];
			iov[i].iov_len = len;
			k++;
		}
		/* a full socket buffer drops an answer, as it would a query */
		if (k > 0 && sendmmsg(fd, out, k, 0) == -1 && errno != EAGAIN)
			err(1, "sendmmsg");
	}
}
