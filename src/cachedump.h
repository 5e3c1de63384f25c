/*
 * cachedump.h: the cache as text for GET /cache: each record of each
 * entry in presentation format (via ldns) with its TTL as of the dump, and
 * the entry's state in a comment.
 */
#ifndef DNSDAMPER_CACHEDUMP_H
#define DNSDAMPER_CACHEDUMP_H

#include <stdint.h>

#include "cache.h"

struct evbuffer;

/*
 * cachedump_slice: append to out the entries of slice i (< cache_slices)
 * of c still of use at now (ms), one RR per line: "RR\t; STATE, QNAME
 * QTYPE", each TTL less the whole seconds since the entry was stored (0
 * once expired), the qname as clients see it (lower case); STATE "fresh",
 * "stale Ns" (expired N s ago), "nxdomain" / "nodata", or "nxdomain stale
 * Ns" / "nodata stale Ns". A failure (RFC 9520) is the line "; failure
 * QNAME QTYPE Ns", N its seconds left. Returns how many entries it walked.
 */
uint64_t cachedump_slice(struct cache *c, unsigned i, uint64_t now,
	    struct evbuffer *out);

#endif
