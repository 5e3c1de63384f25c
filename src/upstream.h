/*
 * upstream.h: upstream servers and their measured state: RTT (RFC 6298),
 * consecutive failures, up or down, re-probe back-off, loops; and the order
 * in which a forward zone's pool is tried under its policy. One object per
 * address, shared by every zone that names it and kept across reloads, so
 * what was learnt about a server survives a config change. Configured
 * state is intent; answers are the fact: only an answer marks one up.
 * Times are monotonic ms.
 */
#ifndef DNSDAMPER_UPSTREAM_H
#define DNSDAMPER_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "config.h"
#include "metrics.h"
#include "msg.h"
#include "rtt.h"

/* Consecutive failures (timeouts, SERVFAIL, REFUSED, unreachable) after
 * which an upstream is marked down. */
#define UPSTREAM_DOWN_AFTER	3
/*
 * Re-probe back-off of a down upstream: from 1 s, doubling, up to 8 s. One
 * query in 8 s is no load on a dead server, and clients served stale get
 * fresh answers again within seconds of its return, not a minute.
 */
#define UPSTREAM_PROBE_FIRST	1000
#define UPSTREAM_PROBE_MAX	8000

/* What one upstream did for one forward zone (metrics labels). */
struct upstream_stats {
	char			*zone;		/* owned, "corp.example." */
	uint64_t		 queries;	/* sent, UDP and TCP */
	uint64_t		 answers;	/* usable answers */
	uint64_t		 timeouts;
	uint64_t		 failures;	/* SERVFAIL, REFUSED, unreachable */
	uint64_t		 tc_retries;
	struct metrics_histogram latency;	/* of usable answers */
};

struct upstream {
	struct addr	 addr;
	char		 name[ADDR_STRLEN];	/* "192.0.2.1:53" */
	unsigned	 refs;
	struct rtt	 rtt;
	uint32_t	 fails;		/* consecutive failures */
	int		 down;		/* skipped while others are up */
	uint64_t	 last_answer;	/* ms of its latest usable answer */
	uint64_t	 up_since;	/* ms it was last marked up again */
	uint64_t	 next_probe;	/* when down: next probe, ms */
	uint32_t	 probe_backoff;	/* when down: ms */
	int		 no_case;	/* does not echo 0x20 case */
	int		 loop;		/* forwards our queries back to us */
	int		 loop_checked;	/* a loop probe was sent to it */
	struct msg_question failed_q;	/* the latest question it failed
					 * (qname folded), qname_len 0 if
					 * none: what probes ask too */
	struct upstream_stats *stats;	/* owned, one per zone using it */
	size_t		 n_stats;
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
 * upstream_reconfigure: at start and reload: the [min, max] bounds of every
 * upstream's retransmission timeout in ms (config upstream-timeout), with
 * existing RTOs re-clamped; and every upstream may be checked for a loop
 * again (the configuration that made it one may have changed).
 */
void	upstream_reconfigure(uint32_t min_ms, uint32_t max_ms);

/*
 * upstream_stats_for: u's counters for forward zone zone (presentation
 * format), created empty on first use; they live as long as u. Returns
 * NULL if out of memory.
 */
struct upstream_stats *upstream_stats_for(struct upstream *u,
	    const char *zone);

/* upstream_first: the registry, for reports; next with u->next. */
struct upstream *upstream_first(void);

/* upstream_rto: the timeout to use for the next query to u, in ms. */
uint32_t upstream_rto(const struct upstream *u);

/*
 * upstream_answered: u answered usefully at now, rtt_ms after the query;
 * it is up (again, logged) and its failures are forgotten.
 */
void	upstream_answered(struct upstream *u, uint32_t rtt_ms, uint64_t now);

/*
 * upstream_failed: u answered question q (qname folded; NULL for a probe's
 * own question) with SERVFAIL/REFUSED/garbage, or the kernel reported it
 * unreachable, at now. UPSTREAM_DOWN_AFTER in a row mark it down (logged)
 * with its first probe UPSTREAM_PROBE_FIRST ms later. q, copied, becomes
 * u->failed_q.
 */
void	upstream_failed(struct upstream *u, const struct msg_question *q,
	    uint64_t now);

/*
 * upstream_timed_out: a query for q (as for upstream_failed) sent at sent
 * (ms) with timeout used_ms got no answer by now. The RTO backs off (RFC
 * 6298 §5.5); it counts as a failure only if u has not answered anything
 * since sent: a slow upstream still answering others is late, not down.
 */
void	upstream_timed_out(struct upstream *u, const struct msg_question *q,
	    uint32_t used_ms, uint64_t sent, uint64_t now);

/*
 * upstream_recovered: 1 if some upstream of pool (n) was marked up again
 * after since (ms): what failed before then may be worth trying again.
 */
int	upstream_recovered(struct upstream *const *pool, size_t n,
	    uint64_t since);

/*
 * upstream_probe_due: 1 if u is down and its probe time has come, in which
 * case the next one is scheduled after a doubled back-off; else 0.
 */
int	upstream_probe_due(struct upstream *u, uint64_t now);

/* upstream_any_down: 1 if some upstream is down (probes are needed). */
int	upstream_any_down(void);

/*
 * upstream_no_case: u answered with the question's case changed, so 0x20
 * cannot be used with it (logged once per upstream).
 */
void	upstream_no_case(struct upstream *u);

/* upstream_loop: u sent our own query back to us: never use it again
 * until reload (logged as an error, not fatal). */
void	upstream_loop(struct upstream *u);

/*
 * upstream_order: write into out the upstreams of pool (n of them) that a
 * query for qname (wire, folded, qname_len octets) should try, in order:
 * those up first, then those down; never a loop. Among each, `order` keeps
 * list order; `random` is a uniform permutation; `fastest` sorts by
 * smoothed RTT (unmeasured first; ties in list order) and, once the
 * leader is measured, sends about one query in 16 to another up upstream
 * first, so a recovered one is measured again; `hash` is rendezvous (highest random weight) hashing of qname over
 * the upstreams, ties broken by address, so a name sticks to one upstream
 * and a change of pool moves only the names of the upstream added or
 * removed. Returns how many were written (at most n).
 */
size_t	upstream_order(struct upstream *const *pool, size_t n,
	    enum config_policy policy, const uint8_t *qname, size_t qname_len,
	    struct upstream **out);

/* upstream_all_down: 1 if no upstream of pool (n) is up and usable. */
int	upstream_all_down(struct upstream *const *pool, size_t n);

/*
 * upstream_best_rto: the smallest retransmission timeout (ms, as
 * upstream_rto) of the upstreams of pool (n) not marked down, or 0 if
 * every one is down or n is 0.
 */
uint32_t upstream_best_rto(struct upstream *const *pool, size_t n);

/* upstream_rendezvous_weight: hash policy weight of u for qname. */
uint64_t upstream_rendezvous_weight(const struct upstream *u,
	    const uint8_t *qname, size_t qname_len);

#endif
