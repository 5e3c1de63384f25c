/*
 * evict.h: which entry of one shard of an lruhash table goes when the
 * shard is full: S3-FIFO (Yang et al., "FIFO queues are all you need for
 * cache eviction", SOSP 2023), in bytes. New entries wait in a small
 * probationary FIFO; those asked again while there move to the main FIFO,
 * the others leave and their hash is remembered a while in a ghost, so
 * that an entry asked again after it left goes straight to main. The
 * main FIFO gives an entry another lap for each hit it had (a 2-bit
 * count). Why this policy, and not LRU, TinyLFU or ARC: evict.c.
 *
 * Every function here is called with the shard's lock held, and
 * allocates nothing but evict_ghost_size's array.
 */
#ifndef DNSDAMPER_EVICT_H
#define DNSDAMPER_EVICT_H

#include <stddef.h>
#include <stdint.h>

#include "lruhash.h"

/* A node's queue (lruhash_node.queue), the class of its eviction. */
enum evict_queue {
	EVICT_PROBATION,
	EVICT_MAIN,
	EVICT_QUEUES
};

/* A shard's queues, their byte counts and its ghost. */
struct evict {
	struct lruhash_node	*newest[EVICT_QUEUES];
	struct lruhash_node	*oldest[EVICT_QUEUES];
	uint64_t		 bytes[EVICT_QUEUES];	/* charged */
	uint64_t		 probation_max;	/* bytes: a tenth of the
						 * shard's bound */
	uint64_t		 evictions[EVICT_QUEUES];
	uint64_t		*ghost;		/* sets of 8 fingerprints */
	size_t			 ghost_sets;	/* power of two, or 0 */
};

/*
 * evict_init: empty queues for a shard bounded to max_bytes charged bytes,
 * no ghost yet (evict_ghost_size).
 */
void	evict_init(struct evict *e, uint64_t max_bytes);

/* evict_fini: free the ghost; the entries are the table's to free. */
void	evict_fini(struct evict *e);

/*
 * evict_ghost_size: a ghost of sets sets (a power of two), 8 hashes each,
 * empty: the table makes it as many sets as buckets (8 octets a bucket,
 * which lruhash_charge counts). Returns 0, or -1 if out of memory: the
 * old ghost stays, and a shard without one admits every new entry to
 * probation.
 */
int	evict_ghost_size(struct evict *e, size_t sets);

/*
 * evict_add: queue n (its hash and charge set) as a new entry: to main if
 * its hash is in the ghost, else to probation; its hit count 0.
 */
void	evict_add(struct evict *e, struct lruhash_node *n);

/* evict_hit: n was asked for: one more lap in main, up to 3. */
void	evict_hit(struct lruhash_node *n);

/* evict_remove: take n out of its queue (not an eviction: not counted). */
void	evict_remove(struct evict *e, struct lruhash_node *n);

/*
 * evict_replace: new (its charge set) takes old's place: the same queue,
 * position and hit count, so that a refreshed answer is as safe from
 * eviction as the one it replaces. old is then out of the queues.
 */
void	evict_replace(struct evict *e, struct lruhash_node *old,
	    struct lruhash_node *new);

/*
 * evict_victim: the entry to evict next, taken out of its queue and
 * counted by its queue (evictions[]); on the way, entries with hits move
 * from probation to main, or around main again with one hit less. An
 * entry evicted from probation is remembered in the ghost. Returns NULL
 * if both queues are empty.
 */
struct lruhash_node *evict_victim(struct evict *e);

/*
 * evict_check: whether e's queues are consistent with entries entries of
 * bytes charged bytes in all (links both ways, byte counts, each node's
 * queue field, hit counts): 0 if so, else -1. For tests.
 */
int	evict_check(const struct evict *e, uint64_t entries, uint64_t bytes);

#endif
