/*
 * dnsdamper/srv.h: the order in which a client tries the records of an SRV
 * RRset (RFC 2782, "Usage rules"), with the random source passed in.
 * Pure functions: no I/O, no allocation, no global state.
 *
 * Part of libdnsdamper-srv; see libdnsdamper-srv(3). Companion headers:
 * dnsdamper/srvrand.h (random sources), dnsdamper/srvnaptr.h (RFC 3958
 * S-NAPTR), dnsdamper/srvserver.h (which resolver to ask) and
 * dnsdamper/srvresolve.h (the lookups themselves).
 */
#ifndef DNSDAMPER_SRV_H
#define DNSDAMPER_SRV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One SRV record (RFC 2782): the fields of its RDATA, in host order. */
struct srv_rr {
	uint16_t	 priority;	/* lower is tried first */
	uint16_t	 weight;	/* share within one priority */
	uint16_t	 port;
	const char	*target;	/* absolute name in presentation form,
					   "host.example." or "."; borrowed */
};

/*
 * A source of uniformly distributed 64-bit values: next(state) is called
 * once per value. See dnsdamper/srvrand.h for a seeded and a system one.
 */
struct srv_random {
	uint64_t	(*next)(void *state);
	void		*state;
};

/*
 * srv_unavailable: whether rrs[0..n) is RFC 2782's "service decidedly not
 * available at this domain": exactly one record, whose target is "."
 * (n == 1 only; a "." among other records is just not a candidate).
 * Returns 1 or 0.
 */
int	srv_unavailable(const struct srv_rr *rrs, size_t n);

/*
 * srv_casecmp: compare at most n octets of the strings a and b with ASCII
 * letters folded to lower case (the same in every locale), as DNS names
 * and S-NAPTR tags compare. Returns <0, 0 or >0 like strncmp(3).
 */
int	srv_casecmp(const char *a, const char *b, size_t n);

/*
 * srv_is_root: whether name is the root, ".", which is never a target to
 * connect to (RFC 2782). Returns 1 or 0.
 */
int	srv_is_root(const char *name);

/*
 * Walks an SRV RRset in the order a client must try its targets, drawing
 * each next record as it is asked for (RFC 2782, "Usage rules"). The
 * fields are private; use the functions below.
 */
struct srv_iter {
	struct srv_rr		*rrs;
	size_t			 n;
	size_t			 next;	/* rrs[0..next) are in try order */
	struct srv_random	 rnd;
};

/*
 * srv_iter_init: start an iterator over rrs[0..n) (borrowed, reordered in
 * place as the iterator advances; n may be 0). First puts the records in
 * a canonical order that does not depend on the order in which they
 * arrived: priority ascending; within a priority the weight-0 records
 * first (RFC 2782 asks for them at the head of the list), then by target
 * (ASCII case-insensitive), port, and weight. Then the weight-0 records
 * of each priority are shuffled (Fisher-Yates, drawing from rnd): RFC 2782
 * leaves their order open, and a fixed one would make every host that
 * shares an all-weight-0 RRset try the same target first. rnd is copied;
 * its state must stay valid while the iterator is used. A given random
 * source then yields the same order for the same RRset whatever its
 * arrival order.
 */
void	srv_iter_init(struct srv_iter *it, struct srv_rr *rrs, size_t n,
	    const struct srv_random *rnd);

/*
 * srv_iter_next: the next record to try, or NULL when there is none left.
 * Records of a lower priority number always come before those of a higher
 * one, whatever the weights. Within the lowest priority left, RFC 2782's
 * weighted selection: over the records not yet chosen, in the canonical
 * order, running sums of the weights; a uniform random number r in
 * [0, sum] inclusive (one or more calls of the random source); the first
 * record whose running sum is >= r. So the record at the head of the list
 * has weight + 1 of sum + 1 chances and every other one weight of sum + 1,
 * and a weight-0 record that is not at the head is chosen only when no
 * other record of its priority is left. The chosen record moves to
 * position it->next of the array. Records whose target is "." are ordered
 * like the others but never returned: they are not candidates.
 * The pointer is into the array given to srv_iter_init. Each call costs
 * time linear in the records left at that priority, so srv_order is
 * quadratic at worst: about 5 ms for the 3,400 records of a 64 KB DNS
 * message, 2 s for 65,535 records of one priority.
 */
const struct srv_rr *srv_iter_next(struct srv_iter *it);

/*
 * srv_order: put all of rrs[0..n) in try order at once, as srv_iter_next
 * would draw them (including any "." records, which a client skips).
 */
void	srv_order(struct srv_rr *rrs, size_t n, const struct srv_random *rnd);

#ifdef __cplusplus
}
#endif

#endif
