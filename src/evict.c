/* evict.c: the eviction policy of an lruhash shard: S3-FIFO, in bytes. */
#include "autoconf.h"

#include <stdlib.h>

#include "evict.h"

/*
 * Why S3-FIFO. The cache serves what service discovery asks every few
 * seconds, beside processes that ask many names once (crawlers, PTR
 * lookups of logs, search lists). Under least-recently-used eviction
 * every one-off name goes to the front and pushes the oldest out, so a
 * flood of them empties the cache of the names asked again and again,
 * and an outage then finds nothing stale to serve.
 *
 * - Hit ratio: S3-FIFO gives a new entry a probationary tenth of the
 *   shard; only entries asked again there (or asked again soon after
 *   they left: the ghost) reach the main nine tenths, which one-off names
 *   never touch. On the traces of its paper it matches or beats LRU,
 *   ARC and TinyLFU on most, and resists scans, as 2Q and TinyLFU do.
 * - CPU per operation: a hit only raises a 2-bit count in the entry the
 *   lookup already reads; LRU moves the entry to the front, writing its
 *   two neighbours and the list head, other cache lines. W-TinyLFU costs
 *   a count-min sketch update (4 counters) per access and LRU moves in
 *   two of its segments; ARC moves between four lists.
 * - Locks: the table's lock per shard stays; a hit writes nothing
 *   outside its own entry, so the lock is held as briefly as can be.
 *   Eviction work (promotions, laps) is paid on insert, which a miss
 *   does anyway.
 * - Memory per entry: the node keeps its three pointers (bucket chain and
 *   the queue's two links, as LRU's were) and packs the count and queue
 *   into the bits of the charge. The ghost is one 64-bit set of eight
 *   8-bit fingerprints per bucket: 8 octets a bucket, 4 to 8 an entry
 *   (charged as 8, lruhash_charge). A sketch for TinyLFU with the
 *   memory of several cache sizes would cost about as much; an exact
 *   ghost list (a node per remembered hash) several times more.
 *
 * The ghost is a set-associative FIFO: a hash picks a set and 8 bits of
 * it are its fingerprint, shifted in when it leaves probation. It holds
 * about 8 hashes per bucket (4 to 8 times the shard's entries), so a name
 * asked again after up to a few cache sizes of other names comes back to
 * main; a fingerprint can match another name's (up to 8 in 255, 3 % of
 * new entries, go to main by mistake once the ghost is full), and each
 * such entry moves main one step round: its oldest goes if it has no hit
 * left, else loses one. So a flood reaches an entry of main only after
 * about 30 times main's entries, unless clients ask for it meanwhile.
 * Its 8 fingerprints can hold no more: a wider one would halve them.
 */

#define GHOST_WAYS	8
#define LANES		0x0101010101010101ULL	/* one in each octet */
#define FREQ_MAX	3
/* Probation's share of the bytes: 1/10, the paper's choice; 1/20 or
 * 1/50 gain a third to a half of a point of hit ratio on perf's Zipf mix
 * (contrib/bench/hitratio.c) but give a new name less time to be asked
 * again before it goes. */
#define PROBATION_SHARE	10

/* The fingerprint of hash in its ghost set: 1 to 255 (0 is empty). */
static uint64_t
ghost_fp(uint32_t hash)
{
	uint64_t fp = hash & 0xff;

	return fp != 0 ? fp : 1;
}

static uint64_t *
ghost_set(const struct evict *e, uint32_t hash)
{
	return &e->ghost[(hash >> 8) & (e->ghost_sets - 1)];
}

static int
ghost_has(const struct evict *e, uint32_t hash)
{
	uint64_t v;

	if (e->ghost == NULL)
		return 0;
	/* A zero octet in v is a way holding the fingerprint. */
	v = *ghost_set(e, hash) ^ (ghost_fp(hash) * LANES);
	return ((v - LANES) & ~v & (LANES << 7)) != 0;
}

static void
ghost_add(struct evict *e, uint32_t hash)
{
	uint64_t *set;

	if (e->ghost == NULL)
		return;
	/* The set's oldest fingerprint is shifted out. */
	set = ghost_set(e, hash);
	*set = *set << 8 | ghost_fp(hash);
}

void
evict_init(struct evict *e, uint64_t max_bytes)
{
	unsigned q;

	for (q = 0; q < EVICT_QUEUES; q++) {
		e->newest[q] = e->oldest[q] = NULL;
		e->bytes[q] = 0;
		e->evictions[q] = 0;
	}
	e->probation_max = max_bytes / PROBATION_SHARE;
	e->ghost = NULL;
	e->ghost_sets = 0;
}

void
evict_fini(struct evict *e)
{
	free(e->ghost);
	e->ghost = NULL;
	e->ghost_sets = 0;
}

int
evict_ghost_size(struct evict *e, size_t sets)
{
	uint64_t *g;

	/* Fingerprints cannot be moved to the sets of another size: the
	 * ghost starts over, as the shard grows only while it fills. */
	if ((g = calloc(sets, sizeof(*g))) == NULL)
		return -1;
	free(e->ghost);
	e->ghost = g;
	e->ghost_sets = sets;
	return 0;
}

/* Put n at the new end of queue q. */
static void
push(struct evict *e, unsigned q, struct lruhash_node *n)
{
	n->queue = q;
	n->newer = NULL;
	n->older = e->newest[q];
	if (e->newest[q] != NULL)
		e->newest[q]->newer = n;
	else
		e->oldest[q] = n;
	e->newest[q] = n;
	e->bytes[q] += n->charge;
}

static void
unlink_node(struct evict *e, struct lruhash_node *n)
{
	unsigned q = n->queue;

	if (n->newer != NULL)
		n->newer->older = n->older;
	else
		e->newest[q] = n->older;
	if (n->older != NULL)
		n->older->newer = n->newer;
	else
		e->oldest[q] = n->newer;
	e->bytes[q] -= n->charge;
}

void
evict_add(struct evict *e, struct lruhash_node *n)
{
	n->freq = 0;
	push(e, ghost_has(e, n->hash) ? EVICT_MAIN : EVICT_PROBATION, n);
}

void
evict_hit(struct lruhash_node *n)
{
	if (n->freq < FREQ_MAX)
		n->freq++;
}

void
evict_remove(struct evict *e, struct lruhash_node *n)
{
	unlink_node(e, n);
}

void
evict_replace(struct evict *e, struct lruhash_node *old,
    struct lruhash_node *new)
{
	unsigned q = old->queue;

	new->queue = q;
	new->freq = old->freq;
	new->newer = old->newer;
	new->older = old->older;
	if (new->newer != NULL)
		new->newer->older = new;
	else
		e->newest[q] = new;
	if (new->older != NULL)
		new->older->newer = new;
	else
		e->oldest[q] = new;
	e->bytes[q] += new->charge;
	e->bytes[q] -= old->charge;
}

struct lruhash_node *
evict_victim(struct evict *e)
{
	struct lruhash_node *n;

	/* Ends: each turn moves an entry out of probation, or takes a hit
	 * off one in main, or evicts. */
	for (;;) {
		if ((n = e->oldest[EVICT_PROBATION]) != NULL &&
		    (e->bytes[EVICT_PROBATION] >= e->probation_max ||
		    e->oldest[EVICT_MAIN] == NULL)) {
			unlink_node(e, n);
			if (n->freq > 0) {
				/* Asked again while on probation. */
				push(e, EVICT_MAIN, n);
				continue;
			}
			ghost_add(e, n->hash);
			e->evictions[EVICT_PROBATION]++;
			return n;
		}
		if ((n = e->oldest[EVICT_MAIN]) == NULL)
			return NULL;
		unlink_node(e, n);
		if (n->freq > 0) {
			n->freq--;
			push(e, EVICT_MAIN, n);
			continue;
		}
		e->evictions[EVICT_MAIN]++;
		return n;
	}
}

/* Whether queue q of e is a consistent list of its byte count. */
static int
check_queue(const struct evict *e, unsigned q, uint64_t *entries,
    uint64_t *bytes)
{
	const struct lruhash_node *n, *newer = NULL;
	uint64_t b = 0;

	for (n = e->newest[q]; n != NULL; newer = n, n = n->older) {
		if (n->newer != newer || n->queue != q)
			return -1;
		b += n->charge;
		(*entries)++;
	}
	if (e->oldest[q] != newer || b != e->bytes[q])
		return -1;
	*bytes += b;
	return 0;
}

int
evict_check(const struct evict *e, uint64_t entries, uint64_t bytes)
{
	uint64_t n = 0, b = 0;
	unsigned q;

	for (q = 0; q < EVICT_QUEUES; q++)
		if (check_queue(e, q, &n, &b) == -1)
			return -1;
	return n == entries && b == bytes ? 0 : -1;
}
