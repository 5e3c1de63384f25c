/*
 * srvexchange.h: a batch of DNS questions asked of one resolver at once,
 * over UDP with poll(2), and over TCP (ldns) when an answer is truncated.
 * Internal to libdnsdamper-srv.
 */
#ifndef DNSDAMPER_SRVEXCHANGE_H
#define DNSDAMPER_SRVEXCHANGE_H

#include <sys/socket.h>

#include <ldns/ldns.h>

/* Most questions in flight at once (each has its own UDP socket). */
#define SRVEXCHANGE_INFLIGHT	64
/* An unanswered question is sent again this often (same ID and socket). */
#define SRVEXCHANGE_RESEND_MS	1000
/* The UDP payload size offered, RFC 6891 §6.2.5 (DNS flag day 2020). */
#define SRVEXCHANGE_EDNS_SIZE	1232

/* One question (class IN, RD set), and its answer. */
struct srvexchange_query {
	const ldns_rdf	*qname;		/* borrowed */
	ldns_rr_type	 qtype;
	ldns_pkt	*answer;	/* set by srvexchange_run: owned by the
					   caller (ldns_pkt_free), NULL when
					   none came in time */
};

/*
 * srvexchange_run: ask the resolver at server (len octets) every question
 * of q[0..n), at most SRVEXCHANGE_INFLIGHT at a time, each from its own
 * UDP socket (a port the kernel picks) with a random ID and EDNS0
 * (payload SRVEXCHANGE_EDNS_SIZE, no DO). A question unanswered is sent
 * again every SRVEXCHANGE_RESEND_MS, and given up timeout_ms after it was
 * first sent. Only a response from the server's address and port with
 * the query's ID and question (name case-insensitive, type, class) is
 * taken (RFC 5452 §9); one with TC set is asked again over TCP (RFC 7766
 * §5), one question after the other, each exchange (connection, query,
 * answer) within timeout_ms as a whole, however slowly the server sends.
 * Sets every q[i].answer and returns 0, or -1
 * with errno (ENOMEM, or EMFILE and such from socket(2)) after freeing
 * the answers it had.
 */
int	srvexchange_run(const struct sockaddr_storage *server, socklen_t len,
	    unsigned timeout_ms, struct srvexchange_query *q, size_t n);

#endif
