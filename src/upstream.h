/*
 * upstream.h: the registry of upstream servers and their measured state:
 * RTT (RFC 6298), consecutive failures, up or down, re-probe back-off,
 * loops; and the order in which a forward zone's pool is tried under its
 * policy. One object per address, shared by every zone that names it and
 * kept across reloads, so what was learnt about a server survives a config
 * change. Configured state is intent; answers are the fact: only an answer
 * marks one up. Times are monotonic ms.
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

/*
 * Failures in a row after which an upstream is marked down: 3 silent ones
 * (timeouts, unreachable), or 10 answers that were failures (SERVFAIL,
 * REFUSED, garbage) or a mix. An upstream that answers is alive, and one
 * that fails 30 % of its answers at random is flaky, not down: it fails
 * 3 in a row every 37 answers or so, 10 in a row once in 170,000, while
 * one that fails every answer is still down within 10 queries.
 */
#define UPSTREAM_DOWN_AFTER		3
#define UPSTREAM_DOWN_AFTER_ANSWERS	10
/*
 * Re-probe back-off of a down upstream: from 1 s, doubling, up to 12 s,
 * with full jitter: each probe comes at a uniformly random point of
 * [0, back-off] after the one before (or after the upstream was marked
 * down), so that hosts which saw it go down in the same second do not
 * probe it, nor see it back, in step. Hosts then see it back over the
 * next 12 s, with a density of 2 / 12 a second at most (probes every 6 s
 * on average): a fleet whose names all went stale refreshes them in its
 * busiest second at about 2 T / 12 times its steady rate, T their TTL in
 * seconds, under 2 for T = 10 s (with 8 s, 2.5). Two queries in 6 s are
 * no load on a dead server, and clients served stale get fresh answers
 * again within seconds of its return (4 s on average), not a minute.
 */
#define UPSTREAM_PROBE_FIRST	1000
#define UPSTREAM_PROBE_MAX	12000
/*
 * Refreshes of stale entries whose refresh failed before an upstream was
 * seen back (upstream_refresh_allowed): at most UPSTREAM_RECOVERY_FIRST in
 * the first second after its return, twice as many in each second after,
 * at most UPSTREAM_RECOVERY_MAX a second, for UPSTREAM_RECOVERY_SPAN ms
 * after the return; the others are answered stale meanwhile and try again
 * at their next query: 16, 32, 64, 128, then 256 a second. A handful of
 * names is refreshed in the first second, n names (n > 240) within
 * 4 + (n - 240) / 256 s: 1,776 in 10 s. A host's own refreshes are
 * spread that way; a fleet's, also by when each host sees the upstream
 * back (the probes' jitter).
 */
#define UPSTREAM_RECOVERY_FIRST	16
#define UPSTREAM_RECOVERY_MAX	256
#define UPSTREAM_RECOVERY_SPAN	(10 * 60 * 1000)
/*
 * The retry and hedge budget (upstream_budget_*) counts over a sliding
 * window of UPSTREAM_BUDGET_SLOTS seconds, one slot a second.
 */
#define UPSTREAM_BUDGET_SLOTS	10
/*
 * How long an upstream found not to speak EDNS (RFC 6891 §7) gets plain
 * queries before EDNS is tried again, in ms: Unbound keeps its "EDNS lame"
 * verdict on a server for its infra-host-ttl, 15 minutes. Each verdict
 * ends at a random point of the last quarter of that, so that hosts which
 * learnt it together do not re-test together.
 */
#define UPSTREAM_EDNS_RETEST	(15 * 60 * 1000)

/*
 * What one upstream did for one forward zone (metrics labels). Each is
 * allocated on its own and never moves: attempts in flight count into it
 * by address, from every worker thread at once, so each counter is added
 * to with metrics_add_shared and read with metrics_read.
 */
struct upstream_stats {
	struct upstream_stats	*next;		/* the upstream's next zone:
						 * read with
						 * upstream_stats_next */
	char			*zone;		/* owned, "corp.example." */
	uint64_t		 queries;	/* sent, UDP and TCP */
	uint64_t		 answers;	/* usable answers */
	uint64_t		 timeouts;
	uint64_t		 failures;	/* SERVFAIL, REFUSED, unreachable */
	uint64_t		 tc_retries;
	uint64_t		 edns_fallbacks; /* asked again without OPT
						 * after FORMERR or NOTIMP */
	struct metrics_histogram latency;	/* of usable answers */
};

/*
 * The upstreams of the process, created by main: zone tables take their
 * upstreams from it, probes ask it whether any is down, reports list it.
 * Every worker thread uses the same upstreams: once shared
 * (upstream_registry_share), the state of each, the registry's list and
 * its running loop probes are guarded by one lock of the registry, taken
 * inside this file's functions only. Outside this file, only addr, name
 * and reg of a struct upstream are read directly (they never change);
 * the rest through functions (upstream_view), except by single-threaded
 * unit tests.
 */
struct upstream_registry;
struct tlsctx;

/* The longest name of an upstream: "tls://ADDR#NAME". */
#define UPSTREAM_NAME_LEN	(6 + ADDR_STRLEN + 1 + MSG_NAME_MAX)

struct upstream {
	struct upstream_registry *reg;	/* the one it belongs to */
	struct addr	 addr;
	struct tlsctx	*tls;		/* a reference: reached over DNS over
					 * TLS only (RFC 7858); NULL: UDP,
					 * TCP */
	char		 name[UPSTREAM_NAME_LEN]; /* "192.0.2.1:53",
					 * "tls://192.0.2.1:853#dns.example" */
	unsigned	 refs;
	struct rtt	 rtt;
	uint32_t	 fails;		/* consecutive failures */
	uint32_t	 silent;	/* of them, in a row, without any
					 * response (timeouts, unreachable) */
	int		 down;		/* skipped while others are up */
	uint64_t	 last_answer;	/* ms of its latest usable answer */
	uint64_t	 up_since;	/* ms it was last marked up again */
	uint64_t	 back_at;	/* ms of the answer that ended its
					 * latest run of silent failures or
					 * its latest time down, 0 if none */
	uint64_t	 recovery_sec;	/* second since back_at whose
					 * refreshes recovery_n counts */
	uint32_t	 recovery_n;
	uint64_t	 next_probe;	/* when down: next probe, ms */
	uint32_t	 probe_backoff;	/* when down: ms */
	int		 no_case;	/* does not echo 0x20 case */
	int		 no_edns;	/* does not speak EDNS: plain
					 * queries (RFC 6891 §7) */
	uint64_t	 edns_retest;	/* when no_edns: ms when EDNS is
					 * tried again */
	int		 loop;		/* forwards our queries back to us */
	int		 loop_checked;	/* a loop probe was sent to it */
	struct msg_question failed_q;	/* the latest question it failed
					 * (qname folded), qname_len 0 if
					 * none: what probes ask too */
	struct upstream_stats *stats;	/* owned list, one per zone that
					 * used it, first used first */
	struct upstream	*next;		/* registry chain */
};

/* An upstream's state at one instant, for reports (upstream_view). */
struct upstream_view {
	const struct upstream	*u;	/* its name and address */
	int			 down;
	int			 loop;
	int			 no_edns;
	uint32_t		 fails;	/* consecutive failures */
	struct rtt		 rtt;
	const struct upstream_stats *stats; /* first of its list: walk it
					 * with upstream_stats_next */
};

/*
 * upstream_registry_new: an empty registry whose upstreams' retransmission
 * timeouts stay within [min_ms, max_ms] (config upstream-timeout). Free it
 * with upstream_registry_free. Returns NULL if out of memory.
 */
struct upstream_registry *upstream_registry_new(uint32_t min_ms,
	    uint32_t max_ms);

/*
 * upstream_registry_share: from now on reg is used by several threads:
 * its functions take its lock. Before the threads start; a registry used
 * by one thread takes none.
 */
void	upstream_registry_share(struct upstream_registry *reg);

/*
 * upstream_registry_free: free reg, once every upstream got from it has
 * been unreferenced (every zone table built from it freed). NULL is fine.
 */
void	upstream_registry_free(struct upstream_registry *reg);

/*
 * upstream_get: the upstream of reg for address a (copied), created on
 * first use with a fresh RTT estimate; its reference count is raised.
 * Returns it (release it with upstream_unref), or NULL if out of memory.
 */
struct upstream *upstream_get(struct upstream_registry *reg,
	    const struct addr *a);

/*
 * upstream_get_tls: the same for an upstream reached over TLS with tls
 * (NULL: upstream_get): one is shared only by zones whose settings of it
 * are the same (tlsctx_same); a new one takes a reference to tls.
 */
struct upstream *upstream_get_tls(struct upstream_registry *reg,
	    const struct addr *a, struct tlsctx *tls);

/*
 * upstream_unref: drop a reference to u; the last one takes it out of its
 * registry and frees it with its counters. NULL is fine.
 */
void	upstream_unref(struct upstream *u);

/*
 * upstream_reconfigure: at reload: the [min_ms, max_ms] bounds of reg's
 * retransmission timeouts (config upstream-timeout), existing RTOs
 * re-clamped; and every upstream may be checked for a loop again (the
 * configuration that made it one may have changed).
 */
void	upstream_reconfigure(struct upstream_registry *reg, uint32_t min_ms,
	    uint32_t max_ms);

/*
 * upstream_stats_for: u's counters for forward zone zone (presentation
 * format, borrowed), created empty on first use, appended to u->stats.
 * They live as long as u, at the same address. Returns NULL if out of
 * memory.
 */
struct upstream_stats *upstream_stats_for(struct upstream *u,
	    const char *zone);

/* upstream_stats_next: the counters after st in its upstream's list, or
 * NULL; safe while another thread appends to the list. */
const struct upstream_stats *upstream_stats_next(
	    const struct upstream_stats *st);

/* upstream_view: u's state now, copied into *v at one instant. */
void	upstream_view(const struct upstream *u, struct upstream_view *v);

/*
 * upstream_each: call fn(v, arg) with the state of every upstream of reg,
 * in no particular order, with reg's lock held: fn must not call this
 * file's functions. For reports.
 */
void	upstream_each(struct upstream_registry *reg,
	    void (*fn)(const struct upstream_view *v, void *arg), void *arg);

/* upstream_up: 1 if u is up and not a loop, else 0. */
int	upstream_up(const struct upstream *u);

/* upstream_rto: the timeout to use for the next query to u, in ms: its
 * RTO (RFC 6298 §2), within the registry's bounds. */
uint32_t upstream_rto(const struct upstream *u);

/*
 * upstream_answered: u answered usefully at now (ms), rtt_ms after the
 * query: a sample for its RTT (RFC 6298 §2, rtt_sample); it is up (again,
 * logged) and its failures are forgotten.
 */
void	upstream_answered(struct upstream *u, uint32_t rtt_ms, uint64_t now);

/*
 * upstream_failed: the kernel reported u unreachable, or a query for
 * question q (qname folded; NULL for a probe's own question) could not be
 * sent to it, at now (ms): a silent failure. UPSTREAM_DOWN_AFTER silent
 * ones in a row mark it down (logged) with its first probe at a uniformly
 * random point of the next UPSTREAM_PROBE_FIRST ms. q, copied, becomes
 * u->failed_q.
 */
void	upstream_failed(struct upstream *u, const struct msg_question *q,
	    uint64_t now);

/*
 * upstream_answered_failure: u answered question q (as above) with
 * SERVFAIL, REFUSED or garbage at now (ms): a failure, but u is alive;
 * UPSTREAM_DOWN_AFTER_ANSWERS failures in a row of any kind mark it down
 * as upstream_failed does.
 */
void	upstream_answered_failure(struct upstream *u,
	    const struct msg_question *q, uint64_t now);

/*
 * upstream_timed_out: a query for q (as for upstream_failed) sent at sent
 * (ms) with timeout used_ms got no answer by now. The RTO backs off (RFC
 * 6298 §5.5); it counts as a failure only if u has not answered anything
 * since sent: a slow upstream still answering others is late, not down.
 */
void	upstream_timed_out(struct upstream *u, const struct msg_question *q,
	    uint32_t used_ms, uint64_t sent, uint64_t now);

/*
 * upstream_answered_since: 1 if some upstream of pool (n of them) gave a
 * usable answer, for any name, after since (ms): a resolution through
 * pool that failed at since may well succeed now. Else 0.
 */
int	upstream_answered_since(struct upstream *const *pool, size_t n,
	    uint64_t since);

/*
 * upstream_refresh_allowed: whether the stale entry of a name whose
 * refresh through pool (n upstreams) failed at failed_at (ms) may be
 * refreshed at now (ms), before its stale-refresh-interval is over (RFC
 * 8767 §5): only if an upstream of pool has answered since
 * (upstream_answered_since), and if that answer ended an outage that began
 * before failed_at (the upstream's back_at is after failed_at), only within
 * that upstream's recovery rate (UPSTREAM_RECOVERY_FIRST...), which a 1
 * here spends. Returns 1 if allowed, else 0.
 */
int	upstream_refresh_allowed(struct upstream *const *pool, size_t n,
	    uint64_t failed_at, uint64_t now);

/*
 * upstream_back_at: when (ms) u's latest answer ended a run of silent
 * failures or a time down, or 0 if none did: a resolution still waiting
 * for an answer it sent before then may ask it again at once.
 */
uint64_t upstream_back_at(const struct upstream *u);

/*
 * upstream_probe_due: 1 if u is down (not a loop) and its probe time has
 * come by now (ms), in which case the back-off is doubled, at most
 * UPSTREAM_PROBE_MAX, and the next probe scheduled at a uniformly random
 * point of [now, now + back-off] (full jitter); else 0.
 */
int	upstream_probe_due(struct upstream *u, uint64_t now);

/*
 * upstream_budget_set: the retry and hedge budget of reg: every query of
 * a resolution beyond its first (a hedge after an RTO, a retry after a
 * failure) is allowed while those sent in the last UPSTREAM_BUDGET_SLOTS
 * seconds number fewer than percent % of the first queries sent in that
 * window, or fewer than min (config retry-budget, retry-budget-min).
 */
void	upstream_budget_set(struct upstream_registry *reg, uint32_t percent,
	    uint32_t min);

/* upstream_budget_first: a resolution sent its first query at now (ms). */
void	upstream_budget_first(struct upstream_registry *reg, uint64_t now);

/*
 * upstream_budget_extra: 1 if a query beyond a resolution's first may be
 * sent at now (ms), counted as sent; 0 if the budget is spent.
 */
int	upstream_budget_extra(struct upstream_registry *reg, uint64_t now);

/* What the budget saw, for metrics and reports. */
struct upstream_budget_stats {
	uint64_t	first;		/* first queries, in the window */
	uint64_t	extra;		/* further ones sent, in the window */
	uint64_t	extra_total;	/* further ones sent, since start */
	uint64_t	denied_total;	/* further ones not sent: over budget */
};

/* upstream_budget_stats: reg's budget figures at now (ms), into *out. */
void	upstream_budget_stats(struct upstream_registry *reg, uint64_t now,
	    struct upstream_budget_stats *out);

/* upstream_any_down: 1 if some upstream of reg is down (probes are
 * needed), else 0. */
int	upstream_any_down(const struct upstream_registry *reg);

/*
 * upstream_echoes_case: 1 if 0x20 may be used with u (it was not seen
 * changing the case of questions), else 0.
 */
int	upstream_echoes_case(const struct upstream *u);

/*
 * upstream_no_case: u answered with the question's case changed, so 0x20
 * (draft-vixie-dnsext-dns0x20) cannot be used with it until it is freed
 * (logged once per upstream).
 */
void	upstream_no_case(struct upstream *u);

/*
 * upstream_edns: 1 if a query sent to u at now (ms) should carry an OPT
 * record (RFC 6891), 0 while u is known not to speak EDNS; when its
 * edns_retest time has come, EDNS is tried again (logged) and 1 returned.
 */
int	upstream_edns(struct upstream *u, uint64_t now);

/*
 * upstream_no_edns: u answered, at now (ms), a query without OPT after it
 * had answered the same question with an OPT FORMERR or NOTIMP: it does
 * not speak EDNS (RFC 6891 §7). Queries to it go without OPT until a
 * random time between 3/4 and all of UPSTREAM_EDNS_RETEST later (logged
 * when it starts). Its health is not touched: such an upstream is up.
 */
void	upstream_no_edns(struct upstream *u, uint64_t now);

/* upstream_loop: u sent our own query back to us: never use it again
 * until reload (logged as an error, not fatal). */
void	upstream_loop(struct upstream *u);

/*
 * upstream_loop_unchecked: 1, once, if u has not been checked for a loop
 * since start or reload (it is then marked checked); else 0. Of threads
 * asking at once, one gets 1.
 */
int	upstream_loop_unchecked(struct upstream *u);

/*
 * upstream_loop_probe_start: a loop probe asking qname (uncompressed wire,
 * folded, qname_len octets, copied) of u is running: until
 * upstream_loop_probe_end, a client query for that name, in any case, is
 * that probe come back (upstream_loop_probe_seen), whichever thread's
 * listener it reaches. Returns 0, or -1 if out of memory (not recorded).
 */
int	upstream_loop_probe_start(struct upstream *u, const uint8_t *qname,
	    size_t qname_len);

/* upstream_loop_probe_end: that probe ended (a no-op if not recorded). */
void	upstream_loop_probe_end(struct upstream *u, const uint8_t *qname,
	    size_t qname_len);

/*
 * upstream_loop_probe_seen: 1 if a client asks qname (uncompressed wire,
 * any case, qname_len octets), the name of a loop probe of reg still
 * running: its upstream is marked a loop (upstream_loop). Else 0, at the
 * cost of one relaxed load while no loop probe runs: every query asks.
 */
int	upstream_loop_probe_seen(struct upstream_registry *reg,
	    const uint8_t *qname, size_t qname_len);

/*
 * upstream_failed_question: the latest question u failed (upstream.h's
 * failed_q) into *q; 1 if there is one, 0 if none.
 */
int	upstream_failed_question(const struct upstream *u,
	    struct msg_question *q);

/*
 * upstream_order: write into out (room for n) the upstreams of pool (n of
 * them, borrowed) that a query for qname (wire, folded, qname_len octets)
 * should try, in order: those up first, then those down; never a loop.
 * Among each, `order` keeps list order; `random` is a uniform
 * permutation; `fastest` sorts by smoothed RTT (unmeasured first; ties in
 * list order) and, once the leader is measured, sends about one query in
 * 16 to another up upstream first, so a recovered one is measured again;
 * `hash` is rendezvous (highest random weight) hashing of qname over the
 * upstreams, ties broken by address, so a name sticks to one upstream and
 * a change of pool moves only the names of the upstream added or removed.
 * Returns how many were written (at most n), 0 if out of memory.
 */
size_t	upstream_order(struct upstream *const *pool, size_t n,
	    enum config_policy policy, const uint8_t *qname, size_t qname_len,
	    struct upstream **out);

/* upstream_all_down: 1 if no upstream of pool (n of them) is up and not
 * a loop, else 0. */
int	upstream_all_down(struct upstream *const *pool, size_t n);

/*
 * upstream_best_rto: the smallest retransmission timeout (ms, as
 * upstream_rto) of the upstreams of pool (n) not marked down, or 0 if
 * every one is down or n is 0.
 */
uint32_t upstream_best_rto(struct upstream *const *pool, size_t n);

/* upstream_rendezvous_weight: the hash policy's weight of u for qname
 * (wire, folded, qname_len octets): the same on every host and run. */
uint64_t upstream_rendezvous_weight(const struct upstream *u,
	    const uint8_t *qname, size_t qname_len);

#endif
