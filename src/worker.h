/*
 * worker.h: one worker: an event loop with its listeners, its TCP
 * clients, its mailbox, and the struct query_ctx its queries are served
 * with (its fetches, its counters, the snapshot it serves, and what every
 * worker shares: the cache, the rate limit table, the in-flight index).
 * Worker 0 runs on main's event base, in main's thread; the others each
 * run their own base in a thread of their own, started by worker_start.
 * Nothing of a worker is touched from another thread but through its
 * mailbox (worker_serve, worker_stop, the in-flight index's word that a
 * key has landed) and the atomics worker_heartbeat and its metrics are.
 */
#ifndef DNSDAMPER_WORKER_H
#define DNSDAMPER_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "cache.h"
#include "inflight.h"
#include "listen.h"
#include "query.h"
#include "ratelimit.h"
#include "snapshot.h"

struct worker;

/* What every worker shares, made by main; all borrowed by the workers. */
struct worker_shared {
	struct cache	*cache;
	struct lkg	*lkg;		/* last known good state */
	struct ratelimit *ratelimit;	/* configured by main */
	struct inflight	*index;		/* NULL with one worker */
	uint64_t	 tcp_open;	/* client TCP connections open in
					 * every worker (atomic) */
	struct monitor	*monitor;	/* main's, or NULL */
};

/*
 * worker_new: worker number id (from 0) serving socks (n of them, copied;
 * their descriptors borrowed) with snap (a reference taken) and sh
 * (borrowed: it must outlive the worker), on base (borrowed), or, if base
 * is NULL, on an event base of its own for a thread of its own
 * (worker_start). With sh->index, it tells the index how to reach it.
 * Returns NULL on error, after logging it.
 */
struct worker *worker_new(struct event_base *base, unsigned id,
	    struct worker_shared *sh, struct snapshot *snap,
	    const struct listen_socket *socks, size_t n);

/*
 * worker_start: a worker with a base of its own starts its thread, which
 * runs the loop until worker_stop; signals stay blocked in it, for main's
 * loop to handle. A no-op for a worker on main's base. Returns 0, or -1
 * (logged) if the thread cannot be made.
 */
int	worker_start(struct worker *w);

/*
 * worker_serve: w serves snap (a reference taken) from now on, its old
 * snapshot dropped: a worker on main's base at once, another in its own
 * thread at its loop's next turn. Fetches in flight finish with what
 * they started with. From main's thread only.
 */
void	worker_serve(struct worker *w, struct snapshot *snap);

/*
 * worker_wait_served: wait until w serves the snapshot of the latest
 * worker_serve, at most timeout_ms (ms). Returns 0, or -1 if it has not
 * by then (its loop is busy or stuck). From main's thread only.
 */
int	worker_wait_served(struct worker *w, uint64_t timeout_ms);

/*
 * worker_heartbeat: when (monotonic ms) w's loop last ran its once-a-
 * second tick: a loop that stops ticking is stuck. Any thread.
 */
uint64_t worker_heartbeat(const struct worker *w);

/*
 * worker_stop: a worker in a thread of its own leaves its loop and its
 * thread is joined; a no-op for one on main's base (whose loop main
 * leaves). From main's thread only.
 */
void	worker_stop(struct worker *w);

/*
 * worker_free: cancel fetches, close clients, free. Only after
 * worker_stop, and after every worker that shares w's index was stopped:
 * each is told of nothing from then on. NULL is allowed.
 */
void	worker_free(struct worker *w);

/*
 * worker_context: what w serves with, for reading its figures (metrics,
 * fetch counters: metrics_read's atomics; from another thread, nothing
 * else) and, from main's thread for worker 0 only, its current zones and
 * local zones; valid until worker_free.
 */
const struct query_ctx *worker_context(const struct worker *w);

#endif
