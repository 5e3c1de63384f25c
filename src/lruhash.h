/*
 * lruhash.h: a generic hash table bounded by bytes, split into shards that
 * each have their own lock and eviction queues (S3-FIFO, see evict.h: a
 * flood of keys asked once cannot push out keys asked again). It knows
 * nothing about DNS: its entries are its users' structs, each with a
 * struct lruhash_node inside (intrusive: the table allocates nothing per
 * entry), and keys are byte strings that only the user's match callback
 * reads, wherever the entry keeps them. Entries are the table's once
 * inserted. (The name is older than the policy.)
 */
#ifndef DNSDAMPER_LRUHASH_H
#define DNSDAMPER_LRUHASH_H

#include <stddef.h>
#include <stdint.h>

struct lruhash;

/*
 * The table's part of an entry: its bucket chain, its eviction queue's
 * links, the low 32 bits of its hash, the bytes it is charged, its hits
 * and its queue (32 octets on LP64). The table sets all of it; the user
 * finds its entry from the node with offsetof.
 */
struct lruhash_node {
	struct lruhash_node	*next;		/* bucket chain */
	struct lruhash_node	*newer;		/* in its queue (evict.h) */
	struct lruhash_node	*older;
	uint32_t		 hash;
	unsigned int		 charge : 29;	/* < LRUHASH_CHARGE_MAX */
	unsigned int		 freq : 2;	/* hits, up to 3 */
	unsigned int		 queue : 1;	/* enum evict_queue */
};

/* The largest charge of an entry (512 MiB), beyond any table's need. */
#define LRUHASH_CHARGE_MAX	((1U << 29) - 1)

/* What a visitor asks for the entry it was shown. */
enum lruhash_verdict {
	LRUHASH_KEEP,
	LRUHASH_REMOVE
};

/* What the table needs to know of its entries, given once. */
struct lruhash_type {
	/* 1 if the key of the entry holding n is key (keylen octets), else
	 * 0. Called with n's shard locked. */
	int	(*match)(const struct lruhash_node *n, const void *key,
		    size_t keylen);
	/* Free the entry holding n; called without any lock held. */
	void	(*free)(struct lruhash_node *n);
};

/*
 * Called with the entry's shard locked: it must not call back into the
 * table and must not block.
 */
typedef enum lruhash_verdict (*lruhash_visit_fn)(struct lruhash_node *n,
    void *arg);

/*
 * Decides whether new should replace old on insert of an existing key
 * (1: replace, 0: keep old and free new), and may carry what old knew
 * into new, which is the caller's entry. Called with the shard locked.
 */
typedef int (*lruhash_replace_fn)(const struct lruhash_node *old,
    struct lruhash_node *new);

struct lruhash_stats {
	uint64_t	entries;
	uint64_t	bytes;		/* charged bytes, see lruhash_insert */
	uint64_t	evictions;	/* entries dropped to honour the bound:
					 * the two below together */
	uint64_t	evictions_probation; /* never asked again, from the
					 * probationary queue */
	uint64_t	evictions_main;	/* from the main queue */
};

/*
 * lruhash_new: a table of n_shards shards (rounded down to a power of two,
 * at least 1) holding at most max_bytes charged bytes in all (each shard
 * max_bytes / n_shards), of entries of type (borrowed: it must outlive
 * the table). The hash key is random per table, so clients cannot aim
 * collisions. Returns NULL if out of memory.
 */
struct lruhash *lruhash_new(unsigned n_shards, uint64_t max_bytes,
	    const struct lruhash_type *type);

/* lruhash_free: free every entry and the table. NULL is allowed. */
void	lruhash_free(struct lruhash *h);

/* lruhash_hash: SipHash-2-4 of key under the table's secret key. */
uint64_t lruhash_hash(const struct lruhash *h, const void *key,
	    size_t keylen);

/*
 * lruhash_lookup: find key (hash from lruhash_hash) and, if present, count
 * a hit on it (which keeps it from eviction: evict.h) and call visit on it
 * under the shard lock; a LRUHASH_REMOVE verdict removes and frees it
 * after the lock is released. Returns 1 if the key was present, 0 if not.
 */
int	lruhash_lookup(struct lruhash *h, uint64_t hash, const void *key,
	    size_t keylen, lruhash_visit_fn visit, void *arg);

/*
 * lruhash_peek: lruhash_lookup without the hit: a look that is no use of
 * the entry (a report, a check before a refresh) leaves its eviction as
 * it was.
 */
int	lruhash_peek(struct lruhash *h, uint64_t hash, const void *key,
	    size_t keylen, lruhash_visit_fn visit, void *arg);

/*
 * lruhash_charge: the bytes lruhash_insert charges for an entry of size
 * bytes (its share of the bucket array and of the ghost added: 16): so
 * entries all of one size fit n at a time in a one-shard table of n times
 * this.
 */
size_t	lruhash_charge(size_t size);

/*
 * lruhash_insert: store the entry holding n under key (which the entry
 * must hold: match says so from now on), charging size bytes (the
 * caller's count of the entry's memory; the table adds its own share,
 * lruhash_charge). An existing entry with the same key is replaced if
 * replace is NULL or returns 1 (the new entry then takes the old one's
 * place in its eviction queue, and its hits); otherwise the new entry is
 * freed. A new key first makes room: entries of the shard are evicted
 * (evict_victim) until it fits within its bound; a replacement that is
 * larger evicts after. The entry is the table's in every case. Returns 0
 * if stored, -1 if not (kept old, too big for a shard, out of memory for
 * the shard's bucket array; the new entry has been freed).
 */
int	lruhash_insert(struct lruhash *h, uint64_t hash, const void *key,
	    size_t keylen, struct lruhash_node *n, size_t size,
	    lruhash_replace_fn replace);

/*
 * lruhash_walk: call visit on every entry, one shard at a time with that
 * shard locked, removing those it asks to remove. Entries inserted during
 * the walk may or may not be seen. Returns the number removed.
 */
uint64_t lruhash_walk(struct lruhash *h, lruhash_visit_fn visit, void *arg);

/*
 * lruhash_slices: how many slices h's entries fall into, for walking them
 * a slice at a time. A slice is a fixed set of hash values, so every entry
 * is in exactly one slice however the table grows between two slices.
 */
unsigned lruhash_slices(const struct lruhash *h);

/* lruhash_walk_slice: lruhash_walk over slice i (< lruhash_slices) only. */
uint64_t lruhash_walk_slice(struct lruhash *h, unsigned i,
	    lruhash_visit_fn visit, void *arg);

/* lruhash_stats: totals over all shards, read under each shard's lock. */
void	lruhash_stats(struct lruhash *h, struct lruhash_stats *out);

/*
 * lruhash_check: whether every shard is consistent: its bucket chains hold
 * its count of entries, each in the right bucket, and its eviction queues
 * hold the same entries and bytes (evict_check). Returns 0 if so, else
 * the index of the first inconsistent shard plus 1. For tests: it walks
 * every entry.
 */
unsigned lruhash_check(struct lruhash *h);

/*
 * lruhash_queue: the queue (enum evict_queue) key is in, or -1 if it is
 * absent; no hit is counted. For tests.
 */
int	lruhash_queue(struct lruhash *h, uint64_t hash, const void *key,
	    size_t keylen);

#endif
