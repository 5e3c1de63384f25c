/*
 * srvanswer.h: what one DNS answer (an ldns packet) says about the
 * question that was asked: its rcode class, the CNAME chain from the
 * qname, the records of the qtype, the addresses of the additional
 * section, and those records in libdnsdamper-srv's own forms.
 * Internal to libdnsdamper-srv; no I/O.
 */
#ifndef DNSDAMPER_SRVANSWER_H
#define DNSDAMPER_SRVANSWER_H

#include <sys/socket.h>

#include <ldns/ldns.h>

#include "dnsdamper/srv.h"
#include "dnsdamper/srvnaptr.h"

/* Longest CNAME chain followed within one answer. */
#define SRVANSWER_CHAIN_MAX	16

enum srvanswer_status {
	SRVANSWER_OK,		/* records of the qtype at the chain's end */
	SRVANSWER_NXDOMAIN,	/* RFC 2308 §2.1 */
	SRVANSWER_NODATA,	/* NOERROR without them, RFC 2308 §2.2 */
	SRVANSWER_FAILED	/* no answer, or any other rcode */
};

/*
 * srvanswer_read: what pkt, the answer to qname/qtype class IN (NULL when
 * none came), says. *owner is set to the name at the end of the CNAME
 * chain that starts at qname in the answer section (qname itself when
 * there is none; RFC 1034 §4.3.2; at most SRVANSWER_CHAIN_MAX links),
 * borrowed from pkt or qname. With SRVANSWER_OK, *rrs is a new list
 * (ldns_rr_list_free; its records are borrowed from pkt) of the class IN
 * records of qtype owned by *owner; otherwise *rrs is NULL. A list that
 * cannot be allocated reads as SRVANSWER_FAILED.
 */
enum srvanswer_status srvanswer_read(const ldns_pkt *pkt,
	    const ldns_rdf *qname, ldns_rr_type qtype, const ldns_rdf **owner,
	    ldns_rr_list **rrs);

/*
 * srvanswer_additional: the class IN records of type owned by owner in
 * pkt's additional section (RFC 2782: a server may put the targets'
 * addresses there): a new list as for srvanswer_read, or NULL when there
 * is none (or no memory, which only costs a query).
 */
ldns_rr_list *srvanswer_additional(const ldns_pkt *pkt, const ldns_rdf *owner,
	    ldns_rr_type type);

/*
 * srvanswer_srv: the SRV record rr as *out; the target string is in the
 * block returned (the caller frees it, and out->target with it). NULL
 * with errno ENOMEM, or EINVAL when rr is not a well-formed SRV record.
 */
void	*srvanswer_srv(const ldns_rr *rr, struct srv_rr *out);

/*
 * srvanswer_srv_unique: rrs[0..n) without the records that repeat another
 * (the same priority, weight, port and target, the target compared ASCII
 * case-insensitively, RFC 4343): an RRset is a set (RFC 2181 §5), and a
 * record sent twice must not be tried twice nor weigh double. Reorders
 * rrs (srv_iter_init puts them in its own order anyway) and returns how
 * many are left, at its head.
 */
size_t	srvanswer_srv_unique(struct srv_rr *rrs, size_t n);

/*
 * srvanswer_naptr: the NAPTR record rr as *out, its strings in the block
 * returned (freed by the caller). NULL with errno ENOMEM, or EINVAL when
 * rr is not a well-formed NAPTR record or a character-string holds a NUL.
 */
void	*srvanswer_naptr(const ldns_rr *rr, struct srvnaptr_rr *out);

/*
 * srvanswer_address: the A or AAAA record rr as a socket address with
 * port (host order) in *ss, its length in *len. Returns 0, or -1 with
 * errno EINVAL when rr is neither.
 */
int	srvanswer_address(const ldns_rr *rr, uint16_t port,
	    struct sockaddr_storage *ss, socklen_t *len);

#endif
