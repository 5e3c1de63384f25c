/*
 * upstream.h: upstream servers and their measured state (RTT, failures),
 * and the order in which a forward zone's pool is tried. One object per
 * address, shared by every zone that names it and kept across reloads, so
 * what was learnt about a server survives a config change.
 */
#ifndef DNSDAMPER_UPSTREAM_H
#define DNSDAMPER_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "config.h"
#include "rtt.h"

struct upstream {
	struct addr	 addr;
	char		 name[ADDR_STRLEN];	/* "192.0.2.1:53" */
	unsigned	 refs;
	struct rtt	 rtt;
	uint32_t	 fails;		/* consecutive failures */
	int		 no_case;	/* does not echo 0x20 case */
	struct upstream	*next;		/* registry chain */
};

/*
 * upstream_get: the shared upstream for address a, created on first use
 * with a fresh RTT estimate; its reference count is raised. Returns NULL
 * if out of memory.
 */
struct upstream *upstream_get(const struct addr *a);

/* upstream_unref: drop a reference; the last one frees it. NULL is fine. */
void	upstream_unref(struct upstream *u);

/*
 * upstream_set_timeouts: the [min, max] bounds of every upstream's
 * retransmission timeout, in ms (config upstream-timeout); existing RTOs
 * are re-clamped.
 */
void	upstream_set_timeouts(uint32_t min_ms, uint32_t max_ms);

/* upstream_rto: the timeout to use for the next query to u, in ms. */
uint32_t upstream_rto(const struct upstream *u);

/* upstream_answered: u answered usefully after rtt_ms milliseconds. */
void	upstream_answered(struct upstream *u, uint32_t rtt_ms);

/* upstream_failed: u answered SERVFAIL/REFUSED/garbage, or refused us. */
void	upstream_failed(struct upstream *u);

/* upstream_timed_out: a query sent to u with timeout used_ms was lost. */
void	upstream_timed_out(struct upstream *u, uint32_t used_ms);

/*
 * upstream_no_case: u answered with the question's case changed, so 0x20
 * cannot be used with it (logged once per upstream).
 */
void	upstream_no_case(struct upstream *u);

/*
 * upstream_order: write into out (n slots) the pool's n upstreams in the
 * order a query should try them under policy: `order` keeps list order,
 * `random` a uniformly random permutation. Returns n.
 */
size_t	upstream_order(struct upstream *const *pool, size_t n,
	    enum config_policy policy, struct upstream **out);

#endif
