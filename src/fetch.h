/*
 * fetch.h: outgoing queries. A fetch resolves one cache key through one
 * forward zone's upstreams, one attempt (attempt.h) at a time in the
 * order of the zone's policy: the next upstream is asked when the newest
 * attempt's timeout (its RTO, RFC 6298) passes, while the earlier ones
 * keep listening, or when an attempt fails (SERVFAIL, REFUSED, ...; the
 * last upstream left is asked again 4 times when it answered so); at most 8
 * sends (each a socket), all within a deadline (query-timeout). Every
 * send beyond the first is within the registry's retry and hedge budget
 * (upstream_budget_extra), and none goes out while every upstream of the
 * zone is down; an upstream that answers again after silence has the
 * resolutions still waiting on it ask it again at once.
 * Identical keys in flight share one fetch; each client waiting on it is
 * a fetch_waiter. With several workers (fetch_ctx_share), a key another
 * worker is resolving is not fetched again: its waiters here wait on a
 * fetch that sends nothing until that worker says it has ended
 * (fetch_landed), and answer from the cache (inflight.h). Fetches are
 * bounded by max-inflight and by each zone's budget, the waiters of one
 * fetch by max-waiters. Down upstreams and loops are probed through
 * fetches too (probe.h). Times are monotonic ms.
 */
#ifndef DNSDAMPER_FETCH_H
#define DNSDAMPER_FETCH_H

#include <sys/queue.h>

#include <stdint.h>

#include <event2/event.h>

#include "cache.h"
#include "msg.h"
#include "zone.h"

struct dnstap_worker;
struct fetch;
struct fetch_ctx;
struct inflight;
struct transport;

/* Embedded in whatever waits for a fetch (a client query). */
struct fetch_waiter {
	TAILQ_ENTRY(fetch_waiter)	 entry;
	struct fetch			*fetch;	/* NULL when not waiting */
	/*
	 * If set, called each time an attempt of the fetch times out or
	 * fails, with the fetch's zone, so that a waiter with a fallback can
	 * stop waiting once it is hopeless; it may fetch_leave and free
	 * itself, and nothing else.
	 */
	void	(*setback)(struct fetch_waiter *, const struct zone *);
	/* Set: fetch for it in this worker even if another worker is
	 * resolving the key (that one's end left nothing in the cache). */
	int	own;
};

enum fetch_outcome {
	FETCH_ANSWER,		/* r holds an answer to pass on */
	FETCH_FAILED,		/* every upstream failed, or the deadline */
	FETCH_CANCELLED,	/* shutting down: free waiters, send nothing */
	FETCH_LANDED		/* another worker's resolution of the key
				 * ended: its outcome, if any, is in the
				 * cache */
};

/* How a fetch ended; everything borrowed for the done callback. */
struct fetch_result {
	enum fetch_outcome	 outcome;
	const struct msg_response *r;	/* FETCH_ANSWER only */
	const struct cache_key	*key;
	uint64_t		 now;	/* ms */
	int			 unsent; /* FETCH_FAILED without a query
					 * sent: out of descriptors here,
					 * not the upstreams' failure */
	uint32_t		 waiters; /* clients waiting on it here
					 * at its end */
	const struct zone_table	*zones;	/* the routing it started with: */
	const struct zone	*zone;	/* zones' zone it went through */
	const char		*upstream; /* FETCH_ANSWER: the name of the
					 * upstream that answered */
};

/*
 * Called once per fetch when it ends; it takes each waiter with
 * fetch_take_waiter and answers it. The fetch is freed after it returns.
 */
typedef void (*fetch_done_fn)(struct fetch *f, const struct fetch_result *res,
    void *arg);

struct fetch_settings {
	uint16_t	edns_size;	/* our UDP payload size, octets */
	uint32_t	query_timeout;	/* ms from start to giving up */
	uint32_t	max_inflight;	/* fetches at once */
	uint32_t	max_waiters;	/* waiters on one fetch */
	int		randomize_case;	/* 0x20 */
};

/* Per upstream and zone figures are in struct upstream_stats. */
struct fetch_stats {
	uint64_t	started;	/* fetches, i.e. resolutions */
	uint64_t	coalesced;	/* waiters that joined a running fetch */
	uint64_t	across;		/* of them, one another worker ran */
	uint64_t	over_budget;	/* refused: max-inflight reached */
	uint64_t	waiters_refused; /* refused: max_waiters waiting */
	uint64_t	mismatched;	/* responses with wrong ID or question */
	uint64_t	malformed;	/* responses to us that do not parse */
	uint64_t	oversized;	/* UDP responses over edns_size */
	uint64_t	long_chain;	/* answers over MSG_CHAIN_MAX CNAMEs */
	uint64_t	local_errors;	/* queries not sent: out of
					 * descriptors or memory here */
	uint64_t	inflight;	/* fetches running now */
};

/*
 * fetch_ctx_new: the fetches of one event loop, base (borrowed), on the
 * daemon's transport (transport_new). done is called with arg when a
 * fetch ends. s is copied. Returns the context (free it with
 * fetch_ctx_free), or NULL if out of memory.
 */
struct fetch_ctx *fetch_ctx_new(struct event_base *base,
	    const struct fetch_settings *s, fetch_done_fn done, void *arg);

/*
 * fetch_ctx_new_on: the same on transport t (borrowed: it must outlive
 * the context), e.g. a script and a virtual clock in tests.
 */
struct fetch_ctx *fetch_ctx_new_on(const struct transport *t,
	    const struct fetch_settings *s, fetch_done_fn done, void *arg);

/*
 * fetch_ctx_share: ctx is worker number worker (below the index's
 * n_workers) of several sharing index (borrowed: it must outlive ctx):
 * keys are claimed there, and fetch_landed must be called for each key
 * the index tells this worker of.
 */
void	fetch_ctx_share(struct fetch_ctx *ctx, struct inflight *index,
	    unsigned worker);

/* fetch_ctx_configure: settings s (copied) for the fetches started from
 * now on; those running keep theirs. */
void	fetch_ctx_configure(struct fetch_ctx *ctx,
	    const struct fetch_settings *s);

/* fetch_ctx_tap: every query sent and response received from now on,
 * by running fetches too, goes to tap (borrowed; NULL: none). */
void	fetch_ctx_tap(struct fetch_ctx *ctx, struct dnstap_worker *tap);

/*
 * fetch_ctx_free: end every fetch with FETCH_CANCELLED (the done callback
 * frees the waiters), close every attempt's socket and free the context.
 * NULL is allowed.
 */
void	fetch_ctx_free(struct fetch_ctx *ctx);

/*
 * fetch_join: make w (or nobody, if w is NULL: a background refresh) wait
 * for the resolution of key, asking q's question with q's DO and CD bits
 * (RFC 4035 §3.2; key and q are copied) through zone, which must belong to
 * zones (the table is referenced for the fetch's life), at now (ms). Joins
 * the fetch already running for key, if any. w is borrowed while it
 * waits: until the done callback takes it or it leaves. Never calls the
 * done callback before returning. The first time a resolution uses an
 * upstream (since start or reload) it is sent a loop probe first. With
 * ctx shared, a key another worker resolves is not fetched: w waits for
 * that one to end (its done callback then comes with FETCH_LANDED), and
 * without w nothing is done; unless w->own.
 * Returns 1 if it started a fetch, 0 if it joined one (or left it to
 * another worker), or -1 (counted as over_budget) if a new fetch would
 * exceed max-inflight or the zone's own budget, or if out of memory, or
 * -1 (counted as waiters_refused) if w would join a fetch that has
 * max_waiters waiting already.
 */
int	fetch_join(struct fetch_ctx *ctx, const struct cache_key *key,
	    const struct msg_query *q, struct zone_table *zones,
	    struct zone *zone, uint64_t now, struct fetch_waiter *w);

/*
 * fetch_probe_down: at now (ms), send the probes probe_down finds due for
 * the down upstreams of zones (referenced while they run): each a fetch
 * of one query to one upstream, never coalesced. An answer to either
 * marks the upstream up (upstream_answered); nothing is cached or
 * reported.
 */
void	fetch_probe_down(struct fetch_ctx *ctx, struct zone_table *zones,
	    uint64_t now);

/*
 * fetch_landed: the index told this worker (see fetch_ctx_share) that the
 * resolution of key (borrowed) by another worker ended at or before now
 * (ms): the fetch its waiters here wait on ends with FETCH_LANDED. A
 * no-op if none waits.
 */
void	fetch_landed(struct fetch_ctx *ctx, const struct cache_key *key,
	    uint64_t now);

/*
 * fetch_resume_back: the index told this worker that an upstream answered
 * another worker after a run of silent failures or a time down: every
 * resolution here whose newest query went out over UDP before its
 * upstream came back (upstream_back_at) and has waited its RTO asks that
 * upstream again at now (ms), within the retry and hedge budget, rather
 * than waiting for its deadline (none went out meanwhile: every upstream
 * of its zone was down).
 */
void	fetch_resume_back(struct fetch_ctx *ctx, uint64_t now);

/*
 * fetch_started: when (ms) the resolution of key (borrowed) now in flight,
 * in this worker or (shared) another, started, or 0 if none is.
 */
uint64_t fetch_started(struct fetch_ctx *ctx, const struct cache_key *key);

/* fetch_leave: w stops waiting and is the caller's again; the fetch goes
 * on. A no-op if w is not waiting. */
void	fetch_leave(struct fetch_waiter *w);

/* fetch_take_waiter: for the done callback: the next waiter of f (in
 * arrival order), no longer waiting and the caller's again, or NULL. */
struct fetch_waiter *fetch_take_waiter(struct fetch *f);

/* fetch_stats: the counters of ctx since it was created, into *out. */
void	fetch_stats(const struct fetch_ctx *ctx, struct fetch_stats *out);

#endif
