/*
 * zone.h: forward zones: the closest enclosing zone of a qname and the
 * upstreams it forwards to. A table is immutable once built (but for each
 * zone's count of fetches, an atomic) and shared by reference, by every
 * worker thread; reload builds a new one and swaps the pointer.
 */
#ifndef DNSDAMPER_ZONE_H
#define DNSDAMPER_ZONE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "msg.h"
#include "upstream.h"

/* A forward zone. Everything but the in-flight count is fixed when built. */
struct zone {
	uint8_t			 name[MSG_NAME_MAX];	/* wire, lower case */
	size_t			 name_len;
	char			*name_str;	/* "corp.example." */
	struct upstream		**upstreams;	/* referenced */
	size_t			 n_upstreams;
	enum config_policy	 policy;
	uint32_t		 max_inflight;	/* its budget of fetches */
	int			 lkg;		/* last-known-good (lkg.h) */
	uint64_t		 lkg_hold;	/* last-known-good-hold, ms */
	uint32_t		 inflight;	/* its fetches running now, in
						 * every worker: zone_spend */
};

struct zone_table;

/*
 * zone_table_new: a table with one zone per `forward` of conf (borrowed),
 * its upstreams taken from reg (borrowed; it must outlive the table), and
 * its budget of fetches its own max-inflight or else an even share of
 * what those leave of the global max-inflight (at least 1). Returns it
 * with one reference, or NULL with errno set if out of memory or if a
 * zone name cannot be converted to wire format (EINVAL).
 */
struct zone_table *zone_table_new(struct upstream_registry *reg,
	    const struct config *conf);

/*
 * zone_share: the budget of fetches of a zone of conf without its own
 * max-inflight: an even share of what the zones with their own leave of
 * the global max-inflight, at least 1.
 */
uint32_t zone_share(const struct config *conf);

/* zone_table_registry: the registry t's upstreams come from (borrowed). */
struct upstream_registry *zone_table_registry(const struct zone_table *t);

/* zone_table_ref / zone_table_unref: share a table (between threads too:
 * the count is atomic); the last unref frees it and drops its references
 * to its upstreams. unref(NULL) is fine. */
struct zone_table *zone_table_ref(struct zone_table *t);
void	zone_table_unref(struct zone_table *t);

/*
 * zone_name_to_wire: the uncompressed wire form of domain name str
 * (presentation format, e.g. "corp.example." or "corp.example", parsed by
 * ldns), folded to lower case (RFC 4343) as zone_find wants it, into out
 * (MSG_NAME_MAX octets) and its length into *len. Returns 0, or -1 if str
 * is not a domain name.
 */
int	zone_name_to_wire(const char *str, uint8_t *out, size_t *len);

/*
 * zone_find: the forward zone that a question for qtype (host order) at
 * qname goes to: the closest enclosing one, whose name is the longest
 * label-wise suffix of qname (RFC 1034 §3.1; qname in uncompressed wire
 * format, already folded to lower case (RFC 4343), qname_len octets);
 * but DS at a zone's own name goes to the zone of the parent name, since
 * a DS RRset lives on the parent side of a zone cut (RFC 4034 §5, RFC
 * 4035 §5; the zone itself if no zone encloses the parent). NULL if not
 * even `.` is configured. The zone lives as long as a reference to its
 * table.
 */
struct zone *zone_find(const struct zone_table *t, const uint8_t *qname,
	    size_t qname_len, uint16_t qtype);

/*
 * zone_spend: take one fetch of z's budget: 1 if there was one left (the
 * fetch then gives it back with zone_refund), 0 if max_inflight fetches
 * of z run already. Atomic: every worker spends the same budget.
 */
int	zone_spend(struct zone *z);
void	zone_refund(struct zone *z);

/* zone_uses: 1 if z forwards to upstream u (the same object), else 0. */
int	zone_uses(const struct zone *z, const struct upstream *u);

/* zone_count / zone_at: iterate the zones, in config order (i below
 * zone_count); each lives as long as a reference to its table. */
size_t	zone_count(const struct zone_table *t);
struct zone *zone_at(const struct zone_table *t, size_t i);

/*
 * zone_fingerprint: a hash of the set of upstreams z forwards to (order
 * and policy aside), equal across runs and hosts for the same set (the
 * cache file keeps it).
 */
uint64_t zone_fingerprint(const struct zone *z);

/* zone_same_upstreams: 1 if a and b forward to the same set of upstreams
 * (the same objects, in any order), else 0. */
int	zone_same_upstreams(const struct zone *a, const struct zone *b);

/*
 * zone_routes_alike: 1 if a question sent through a would go the same way
 * through b: both zones are there, with the same name and the same set of
 * upstreams (zone_same_upstreams); else 0 (either NULL too).
 */
int	zone_routes_alike(const struct zone *a, const struct zone *b);

/*
 * zone_route_kept: 1 if a question for qtype at qname (as zone_find wants
 * it) that was sent through zone `then` of table `was` would be sent the
 * same way through table `now` (zone_routes_alike; at once if now is
 * was), else 0. What a resolution's result may be cached by: one whose
 * routing changed while it ran (a reload, a forward zone changed) is
 * from upstreams the question no longer goes to.
 */
int	zone_route_kept(const struct zone_table *now,
	    const struct zone_table *was, const struct zone *then,
	    const uint8_t *qname, size_t qname_len, uint16_t qtype);

#endif
