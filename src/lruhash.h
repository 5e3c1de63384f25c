/*
 * lruhash.h: a generic hash table bounded by bytes, split into shards that
 * each have their own lock and least-recently-used list. It knows nothing
 * about DNS: keys are byte strings, values are opaque and owned by the
 * table once inserted.
 */
#ifndef DNSDAMPER_LRUHASH_H
#define DNSDAMPER_LRUHASH_H

#include <stddef.h>
#include <stdint.h>

struct lruhash;

/* What a visitor asks for the entry it was shown. */
enum lruhash_verdict {
	LRUHASH_KEEP,
	LRUHASH_REMOVE
};

/*
 * Called with the entry's shard locked: it must not call back into the
 * table and must not block. key is the stored key (keylen octets).
 */
typedef enum lruhash_verdict (*lruhash_visit_fn)(const void *key,
    size_t keylen, void *value, void *arg);

/* Frees a value the table owns; called without any lock held. */
typedef void (*lruhash_free_fn)(void *value);

/*
 * Decides whether new should replace old on insert of an existing key
 * (1: replace, 0: keep old and free new), and may carry what old knew
 * into new, which is the caller's value. Called with the shard locked.
 */
typedef int (*lruhash_replace_fn)(const void *old, void *new);

struct lruhash_stats {
	uint64_t	entries;
	uint64_t	bytes;		/* charged bytes, see lruhash_insert */
	uint64_t	evictions;	/* entries dropped to honour the bound */
};

/*
 * lruhash_new: a table of n_shards shards (rounded down to a power of two,
 * at least 1) holding at most max_bytes charged bytes in all (each shard
 * max_bytes / n_shards). free_value releases values. The hash key is
 * random per table, so clients cannot aim collisions. Returns NULL if out
 * of memory.
 */
struct lruhash *lruhash_new(unsigned n_shards, uint64_t max_bytes,
	    lruhash_free_fn free_value);

/* lruhash_free: free every value and the table. NULL is allowed. */
void	lruhash_free(struct lruhash *h);

/* lruhash_hash: SipHash-2-4 of key under the table's secret key. */
uint64_t lruhash_hash(const struct lruhash *h, const void *key,
	    size_t keylen);

/*
 * lruhash_lookup: find key (hash from lruhash_hash) and, if present, make
 * it most recently used and call visit on it under the shard lock; a
 * LRUHASH_REMOVE verdict removes and frees it after the lock is released.
 * Returns 1 if the key was present, 0 if not.
 */
int	lruhash_lookup(struct lruhash *h, uint64_t hash, const void *key,
	    size_t keylen, lruhash_visit_fn visit, void *arg);

/*
 * lruhash_charge: the bytes lruhash_insert charges for an entry with a
 * key of keylen octets and a value of size bytes: so entries all of one
 * shape fit n at a time in a one-shard table of n times this.
 */
size_t	lruhash_charge(size_t keylen, size_t size);

/*
 * lruhash_insert: store value under a copy of key, charging size bytes
 * (the caller's estimate of the value's memory; the table adds its own
 * per-entry overhead and the key). An existing entry with the same key is
 * replaced if replace is NULL or returns 1; otherwise value is freed. Least
 * recently used entries of the shard are evicted until it is within its
 * bound. Ownership of value passes to the table in every case.
 * Returns 0 if stored, -1 if not (kept old, too big for a shard, or out of
 * memory; value has been freed).
 */
int	lruhash_insert(struct lruhash *h, uint64_t hash, const void *key,
	    size_t keylen, void *value, size_t size,
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

#endif
