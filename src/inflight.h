/*
 * inflight.h: the resolutions in flight across worker threads: for each
 * cache key one of them is fetching, which worker fetches it and which
 * others have queries waiting for it. A worker that misses claims the key
 * or, if another has it, adds itself to its waiters, in one locked step,
 * so no end is missed: the owner, once the outcome is in the cache,
 * releases the key and every waiting worker is told (through the notify
 * function it gave), to answer its queries from the cache. Sharded, one
 * mutex a shard; nothing here knows DNS beyond the key. Only with more
 * than one worker: one alone needs none of it. Times are monotonic ms.
 */
#ifndef DNSDAMPER_INFLIGHT_H
#define DNSDAMPER_INFLIGHT_H

#include <stdint.h>

#include "cache.h"

/* Workers an index can have: its waiters are a bitmask. */
#define INFLIGHT_WORKERS_MAX	64

struct inflight;

/*
 * Told to a waiting worker that key's resolution has ended (its outcome,
 * if any, in the cache); or, with key NULL, to every worker that an
 * upstream has answered again after a run of silent failures or a time
 * down (inflight_resume). Called from the telling worker's thread with no
 * lock held; key is borrowed for the call.
 */
typedef void (*inflight_notify_fn)(void *arg, const struct cache_key *key);

enum inflight_claim {
	INFLIGHT_OWNER,		/* the caller fetches it now */
	INFLIGHT_WAITING,	/* another fetches it; the caller is told when
				 * it ends */
	INFLIGHT_ELSEWHERE	/* another fetches it; the caller asked not to
				 * wait */
};

/*
 * inflight_new: an empty index for n_workers (1 to INFLIGHT_WORKERS_MAX)
 * workers, numbered from 0. Returns NULL if out of memory (or n_workers is
 * out of range).
 */
struct inflight *inflight_new(unsigned n_workers);

/*
 * inflight_free: free idx and the keys still claimed. NULL is allowed.
 * Only once no worker uses it.
 */
void	inflight_free(struct inflight *idx);

/*
 * inflight_notify: worker (below n_workers) is told of ends through fn
 * with arg from now on; fn NULL: told nothing (a worker shutting down).
 * Set before the workers run, or with every worker stopped.
 */
void	inflight_notify(struct inflight *idx, unsigned worker,
	    inflight_notify_fn fn, void *arg);

/*
 * inflight_claim: worker asks for key (copied) at now (ms). If nobody has
 * it, worker does: INFLIGHT_OWNER (it must inflight_release it later).
 * If another worker has it: with wait, worker is added to its waiters
 * (INFLIGHT_WAITING), else INFLIGHT_ELSEWHERE. If worker itself has it
 * (a fetch of its own that has not released it yet), INFLIGHT_ELSEWHERE:
 * the caller fetches on its own without claiming. Out of memory:
 * INFLIGHT_ELSEWHERE too, so that the caller fetches unclaimed.
 */
enum inflight_claim inflight_claim(struct inflight *idx,
	    const struct cache_key *key, unsigned worker, int wait,
	    uint64_t now);

/*
 * inflight_release: worker's claim on key ends (the outcome, if any, is
 * in the cache): every waiting worker is told, after the lock is let go.
 * A no-op if worker does not hold key.
 */
void	inflight_release(struct inflight *idx, const struct cache_key *key,
	    unsigned worker);

/*
 * inflight_resume: tell every worker but `worker` that an upstream has
 * answered again after silence (the notify function with key NULL), so
 * that their resolutions still waiting on it ask it again at once
 * (fetch_resume_back) instead of at their deadline.
 */
void	inflight_resume(struct inflight *idx, unsigned worker);

/* inflight_started: when (ms) the fetch of key claimed by any worker
 * started, or 0 if none has it. */
uint64_t inflight_started(struct inflight *idx, const struct cache_key *key);

#endif
