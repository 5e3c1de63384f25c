/*
 * dnsdamper/srvresolve.h: service location through the host's resolver:
 * the SRV RRset of a name (RFC 2782), or the S-NAPTR tree of a domain
 * (RFC 3958) down to SRV, and the addresses of every target, as the list
 * of candidates a client tries in turn. Blocking calls, bounded in time.
 */
#ifndef DNSDAMPER_SRVRESOLVE_H
#define DNSDAMPER_SRVRESOLVE_H

#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include <dnsdamper/srv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each DNS question is given up this long after it was first sent. */
#define SRVRESOLVE_TIMEOUT_MS	5000
/* Most candidates in a result; the rest are counted in `dropped`. */
#define SRVRESOLVE_CANDIDATES_MAX 256

enum srvresolve_status {
	SRVRESOLVE_OK,		/* a candidate with an address */
	SRVRESOLVE_UNAVAILABLE,	/* RFC 2782: the one SRV record's target is
				   ".": decidedly not available */
	SRVRESOLVE_NXDOMAIN,	/* the name does not exist */
	SRVRESOLVE_NODATA,	/* no SRV records (no NAPTR record for the
				   service and protocols), or no target has
				   an address of the families asked */
	SRVRESOLVE_SERVFAIL	/* the resolver failed or did not answer
				   (SERVFAIL, REFUSED, timeout) */
};

/* Where a candidate was found. */
enum srvresolve_via {
	SRVRESOLVE_VIA_SRV,	/* an SRV record */
	SRVRESOLVE_VIA_NAPTR_A	/* an S-NAPTR "A" record: no priority or
				   weight, the protocol's default port */
};

/* One (target, port) to try, with its addresses. */
struct srvresolve_candidate {
	enum srvresolve_via	 via;
	uint16_t		 priority;	/* of the SRV record; 0 via A */
	uint16_t		 weight;	/* of the SRV record; 0 via A */
	uint16_t		 port;
	char			*target;	/* absolute, presentation form */
	char			*cname;		/* NULL, or: target is an alias
						   (RFC 2782 says it must not
						   be), the name its addresses
						   were found at */
	char			*protocol;	/* S-NAPTR application protocol;
						   NULL for an SRV lookup */
	struct sockaddr_storage	*addrs;		/* IPv6 first, then IPv4, in
						   the order of the answers,
						   port set */
	size_t			 naddrs;
	enum srvresolve_status	 lookup;	/* how the address lookups
						   went: OK, NXDOMAIN, NODATA,
						   SERVFAIL (worst first) */
};

struct srvresolve_result {
	enum srvresolve_status		 status;
	struct srvresolve_candidate	*cand;		/* in try order */
	size_t				 ncand;
	size_t				 dropped;	/* candidates past
							   SRVRESOLVE_CANDIDATES_MAX */
	unsigned			 naptr_cut;	/* S-NAPTR branches cut by
							   its depth or lookup
							   bounds */
};

struct srvresolve_options {
	struct sockaddr_storage	 server;	/* the resolver to ask (see
						   dnsdamper/srvserver.h) */
	socklen_t		 server_len;
	int			 family;	/* AF_UNSPEC (IPv6 and IPv4
						   addresses), AF_INET or
						   AF_INET6 */
	const struct srv_random	*rnd;		/* for srv_iter_init */
	unsigned		 timeout_ms;	/* per question; 0 means
						   SRVRESOLVE_TIMEOUT_MS */
	/*
	 * S-NAPTR "A" records only: the default port of an application
	 * protocol, or 0 when unknown (such records are then skipped).
	 * NULL: every "A" record is skipped.
	 */
	uint16_t		(*default_port)(void *arg,
				    const char *protocol);
	void			*default_port_arg;
};

/*
 * srvresolve_srv: look up the SRV RRset of qname (presentation form,
 * "_service._proto.domain", absolute or not) at o->server, following a
 * CNAME chain at qname itself. Exactly one record with target "." is
 * SRVRESOLVE_UNAVAILABLE, with no candidates. Otherwise the records in
 * try order (srv_iter_next with o->rnd; "." records left out) become the
 * candidates, and each target's addresses of o->family are taken from the
 * answer's additional section when it has them for that type, and else
 * asked for (A and AAAA of every target at once). A target that turns
 * out to be an alias is reported in its candidate's cname (its addresses
 * are those of the canonical name). The status is OK when a candidate has
 * an address; else SERVFAIL if an address lookup failed, else NODATA.
 * Fills *res (free it with srvresolve_free) and returns 0, or returns -1
 * with errno (ENOMEM; EINVAL for a qname that is not a domain name;
 * EMFILE and such) with *res empty.
 */
int	srvresolve_srv(const struct srvresolve_options *o, const char *qname,
	    struct srvresolve_result *res);

/*
 * srvresolve_naptr: locate application service `service` over one of
 * protocols[0..nprotocols) (the client's, preferred first) at domain by
 * S-NAPTR (srvnaptr_walk in dnsdamper/srvnaptr.h, RFC 3958 §2.2): every
 * terminal record in order becomes candidates: an "S" record the SRV
 * RRset at its replacement, in try order (a "." alone there ends that
 * branch); an "A" record one candidate, its replacement with the
 * protocol's default port. Addresses as for srvresolve_srv. The status
 * is that of the first NAPTR lookup when it found nothing (NXDOMAIN,
 * NODATA also when no record offers the service over one of the
 * protocols, SERVFAIL); else OK when a candidate has an address, SERVFAIL
 * when a later lookup failed or a branch was cut at SRVNAPTR_DEPTH_MAX or
 * SRVNAPTR_LOOKUPS_MAX (a loop: naptr_cut), UNAVAILABLE when every branch
 * ended in a lone ".", NODATA otherwise. Returns as srvresolve_srv.
 */
int	srvresolve_naptr(const struct srvresolve_options *o,
	    const char *domain, const char *service,
	    const char *const *protocols, size_t nprotocols,
	    struct srvresolve_result *res);

/* srvresolve_free: release what *res holds and empty it; NULL is fine. */
void	srvresolve_free(struct srvresolve_result *res);

#ifdef __cplusplus
}
#endif

#endif
