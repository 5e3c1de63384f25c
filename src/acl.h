/*
 * acl.h: lists of IPv4 and IPv6 networks (`allow`, `exempt-clients`):
 * read from "NETWORK/LEN", printed back, and compiled into sorted,
 * disjoint address ranges that a client address is looked up in by
 * binary search, loopback clients without any search.
 */
#ifndef DNSDAMPER_ACL_H
#define DNSDAMPER_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"

/* One network as written: "192.0.2.0/24", "2001:db8::/32". */
struct acl_prefix {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		net[16];	/* network octets; the first 4 for
					 * AF_INET; no bit set past len */
	uint8_t		len;		/* prefix length, bits */
};

/* A 128-bit address as two halves, for comparing and counting. */
struct acl_u128 {
	uint64_t	hi;
	uint64_t	lo;
};

/* The addresses from lo to hi, both included. */
struct acl_range {
	struct acl_u128	lo;
	struct acl_u128	hi;
};

/* Index of the range arrays of a family. */
enum acl_family { ACL_V4, ACL_V6, ACL_FAMILIES };

/*
 * A list of networks: the prefixes as given, and once acl_compile has
 * run, per family, their union as sorted ranges that neither overlap nor
 * touch (IPv4 addresses as numbers below 2^32).
 */
struct acl {
	struct acl_prefix	*prefixes;	/* owned, in the order given */
	size_t			 n;
	struct acl_range	*ranges[ACL_FAMILIES];	/* owned */
	size_t			 n_ranges[ACL_FAMILIES];
	int			 loopback;	/* 127.0.0.0/8 and ::1 are in
						 * it: the fast path */
	int			 beyond_loopback; /* some address that is
						 * not loopback is in it */
};

/* Longest string acl_prefix_format writes, with its NUL. */
#define ACL_PREFIX_STRLEN	(46 + 4)

/*
 * acl_prefix_parse: read str, "ADDRESS/LEN" or a bare address (the
 * whole address: /32 or /128), into *out. An IPv4-mapped IPv6 network of
 * /96 or longer, "::ffff:192.0.2.0/120", is stored as the IPv4 network it
 * maps (192.0.2.0/24), so that it matches IPv4 clients however they
 * arrive. Returns 0, or -1 with *errstr (static) saying why: "not an
 * IPv4 or IPv6 address", "the prefix length is not a number from 0 to
 * 32" (or 128), "bits are set past the prefix length"; after that last
 * one, *out holds the network with those bits cleared (what was probably
 * meant), after the others out->family is 0.
 */
int	acl_prefix_parse(const char *str, struct acl_prefix *out,
	    const char **errstr);

/*
 * acl_prefix_format: p as acl_prefix_parse reads it, always with its
 * length ("10.0.0.0/8", "::1/128"), into buf (size len; ACL_PREFIX_STRLEN
 * suffices). Returns buf.
 */
char	*acl_prefix_format(const struct acl_prefix *p, char *buf, size_t len);

/*
 * acl_add: append a copy of *p to acl (not compiled yet). Returns 0, or
 * -1 if out of memory (acl unchanged).
 */
int	acl_add(struct acl *acl, const struct acl_prefix *p);

/* acl_add_loopback: append 127.0.0.0/8 and ::1/128. 0, or -1 (memory). */
int	acl_add_loopback(struct acl *acl);

/*
 * acl_compile: (re)build acl's ranges, loopback and beyond_loopback from
 * its prefixes. Returns 0, or -1 if out of memory (ranges then empty:
 * nothing matches).
 */
int	acl_compile(struct acl *acl);

/*
 * acl_match: 1 if a's address (its port ignored; an IPv4-mapped IPv6
 * address as the IPv4 one, see addr_host) is in a compiled acl, else 0.
 * O(1) for loopback when acl->loopback, else O(log n) in the ranges.
 */
int	acl_match(const struct acl *acl, const struct addr *a);

/* acl_clear: free what acl owns; an empty list remains. */
void	acl_clear(struct acl *acl);

#endif
