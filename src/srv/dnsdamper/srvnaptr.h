/*
 * dnsdamper/srvnaptr.h: S-NAPTR (RFC 3958), the step before SRV: NAPTR
 * records ordered, filtered by application service and protocol, each one
 * saying what to look up next, and a walk of the whole tree with the
 * lookups done by the caller. No I/O here.
 */
#ifndef DNSDAMPER_SRVNAPTR_H
#define DNSDAMPER_SRVNAPTR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest application service or protocol tag, RFC 3958 §6.5. */
#define SRVNAPTR_TAG_MAX	32
/* Most NAPTR lookups in one chain, the first included (loops end here). */
#define SRVNAPTR_DEPTH_MAX	8
/* Most NAPTR lookups in one walk, over all its branches and protocols. */
#define SRVNAPTR_LOOKUPS_MAX	32

/* One NAPTR record (RFC 3403 §4.1), fields in host order. */
struct srvnaptr_rr {
	uint16_t	 order;
	uint16_t	 preference;
	const char	*flags;		/* the character-strings, without */
	const char	*services;	/* their length octet; borrowed */
	const char	*regexp;
	const char	*replacement;	/* absolute name, presentation form */
};

/* What a record says to look up next (RFC 3958 §2.2.3, §6.4). */
enum srvnaptr_step {
	SRVNAPTR_SKIP,		/* not an S-NAPTR record: ignore it */
	SRVNAPTR_NAPTR,		/* flags "": NAPTR at the replacement */
	SRVNAPTR_SRV,		/* flags "S": SRV at the replacement */
	SRVNAPTR_ADDRESS	/* flags "A": A/AAAA at the replacement, with
				   the protocol's default port */
};

/*
 * srvnaptr_offers: whether a SERVICES field (RFC 3958 §6.5 service-parms,
 * "SERVICE:PROTO1:PROTO2...") names the application service `service`
 * and lists `protocol` among its protocols. Tags compare ASCII
 * case-insensitively. A field that does not follow §6.5's grammar (empty
 * tags, a tag over SRVNAPTR_TAG_MAX octets or with other characters, a
 * registered protocol tag with "+", "-" or ".") offers nothing.
 * Returns 1 or 0.
 */
int	srvnaptr_offers(const char *services, const char *service,
	    const char *protocol);

/*
 * srvnaptr_step: the next lookup for rr (§2.2.3, §6.4): flags "" (a
 * non-terminal record), "S" or "A" (terminal), ASCII case-insensitive.
 * SRVNAPTR_SKIP for any other flags (unknown, or more than one), for a
 * non-empty REGEXP (§6.6: S-NAPTR uses only the replacement) and for the
 * replacement "." (no name to look up).
 */
enum srvnaptr_step srvnaptr_step(const struct srvnaptr_rr *rr);

/*
 * srvnaptr_order: sort rrs[0..n) in place by ORDER, then PREFERENCE, both
 * ascending (§2.2.1); ties by replacement, flags and services so that the
 * result does not depend on the order the records arrived in.
 */
void	srvnaptr_order(struct srvnaptr_rr *rrs, size_t n);

/*
 * srvnaptr_filter: keep, in place and in their order, the records of
 * rrs[0..n) that offer service with protocol (srvnaptr_offers) and whose
 * step is not SRVNAPTR_SKIP (§2.2.2); returns how many are kept, at the
 * head of the array (the rest of it is left unspecified).
 */
size_t	srvnaptr_filter(struct srvnaptr_rr *rrs, size_t n,
	    const char *service, const char *protocol);

/*
 * srvnaptr_protocols: the protocols a client pursues, one whole
 * resolution each (§2.2.5): those of wanted[0..nwanted) (its own order of
 * preference) that some usable record of the first NAPTR RRset,
 * rrs[0..n), offers for service. Writes them to out (room for nwanted
 * pointers, which point into wanted) and returns how many.
 */
size_t	srvnaptr_protocols(const struct srvnaptr_rr *rrs, size_t n,
	    const char *service, const char *const *wanted, size_t nwanted,
	    const char **out);

/* What one NAPTR lookup found. */
enum srvnaptr_lookup {
	SRVNAPTR_FOUND,		/* a NAPTR RRset (maybe matching nothing) */
	SRVNAPTR_NXDOMAIN,
	SRVNAPTR_NODATA,	/* the name has no NAPTR records; from
				   srvnaptr_walk also: none for the service
				   and any wanted protocol */
	SRVNAPTR_FAILED		/* SERVFAIL, timeout, bad answer */
};

/*
 * A walk of the S-NAPTR tree from one domain. The caller fills the first
 * block; srvnaptr_walk sets the counters.
 *
 * lookup(arg, qname, &rrs, &n) does the NAPTR lookup of qname and, when it
 *   returns SRVNAPTR_FOUND, sets rrs and n to its records, which must stay
 *   valid and unchanged until srvnaptr_walk returns (the walk works on
 *   copies).
 * terminal(arg, rr, step, protocol) is called for each terminal record
 *   (step SRVNAPTR_SRV or SRVNAPTR_ADDRESS), in the order the client must
 *   pursue them, with the protocol of the resolution it belongs to (one of
 *   protocols[]); rr is valid during the call only. It returns 0 to go on,
 *   -1 to stop the walk with an error.
 */
struct srvnaptr_walk {
	const char		 *service;	/* application service tag */
	const char *const	 *protocols;	/* the client's, preferred
						   first */
	size_t			  nprotocols;
	enum srvnaptr_lookup	(*lookup)(void *arg, const char *qname,
				    const struct srvnaptr_rr **rrs, size_t *n);
	int			(*terminal)(void *arg,
				    const struct srvnaptr_rr *rr,
				    enum srvnaptr_step step,
				    const char *protocol);
	void			 *arg;

	unsigned		  lookups;	/* NAPTR lookups made */
	unsigned		  too_deep;	/* branches cut at
						   SRVNAPTR_DEPTH_MAX */
	unsigned		  over_budget;	/* lookups not made: over
						   SRVNAPTR_LOOKUPS_MAX */
	unsigned		  failed;	/* later lookups that found
						   nothing usable */
};

/*
 * srvnaptr_walk: walk the S-NAPTR tree of domain (RFC 3958 §2.2): look up
 * its NAPTR RRset; choose the protocols with srvnaptr_protocols; for each
 * protocol in turn, a depth-first walk pinned to that protocol (§2.2.5:
 * every record followed must offer it; it never switches protocol
 * mid-resolution): records filtered (srvnaptr_filter) and ordered
 * (srvnaptr_order); a non-terminal record's replacement looked up and
 * walked in its place; a terminal one handed to terminal(). A later
 * lookup that fails or finds nothing usable is a branch that ends, and
 * the walk backtracks to the next record (§2.2.4), as it does at
 * SRVNAPTR_DEPTH_MAX lookups deep (a loop) or once SRVNAPTR_LOOKUPS_MAX
 * lookups are made (counted in w).
 * Returns what the first lookup found: SRVNAPTR_FOUND when the walk ran
 * (terminal() may still not have been called, if every branch ended
 * early), SRVNAPTR_NODATA also when the first RRset offers none of the
 * protocols for the service; or -1 with errno ENOMEM, or when terminal()
 * returned -1 (errno as it left it).
 */
int	srvnaptr_walk(struct srvnaptr_walk *w, const char *domain);

#ifdef __cplusplus
}
#endif

#endif
