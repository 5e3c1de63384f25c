/* lruhash.c: sharded, byte-bounded hash table; evict.c picks what goes. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "lruhash.h"

#define SHARDS_MAX		64
#define BUCKETS_INITIAL		64
/* Slices per shard: buckets b with b % SLICES == j form slice j. */
#define SLICES			16

struct shard {
	pthread_mutex_t		 lock;
	struct lruhash_node	**buckets;
	size_t			 n_buckets;	/* power of two, <= 2^32 */
	struct evict		 ev;		/* its queues and ghost */
	uint64_t		 entries;
	uint64_t		 bytes;
	uint64_t		 max_bytes;
};

struct lruhash {
	struct shard		*shards;
	unsigned		 n_shards;	/* power of two */
	const struct lruhash_type *type;
	uint64_t		 sipkey[2];
};

/* SipHash-2-4 (Aumasson and Bernstein), 64-bit output. */
#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

static uint64_t
siphash(const uint64_t k[2], const unsigned char *in, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k[0];
	uint64_t v1 = 0x646f72616e646f6dULL ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ k[0];
	uint64_t v3 = 0x7465646279746573ULL ^ k[1];
	uint64_t m, b = (uint64_t)len << 56;
	size_t i, tail = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, in + i, 8);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (i = 0; i < tail; i++)
		b |= (uint64_t)in[len - tail + i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t
lruhash_hash(const struct lruhash *h, const void *key, size_t keylen)
{
	return siphash(h->sipkey, key, keylen);
}

struct lruhash *
lruhash_new(unsigned n_shards, uint64_t max_bytes,
    const struct lruhash_type *type)
{
	struct lruhash *h;
	unsigned n = 1, i;

	while (n * 2 <= n_shards && n * 2 <= SHARDS_MAX)
		n *= 2;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->shards = calloc(n, sizeof(*h->shards))) == NULL) {
		free(h);
		return NULL;
	}
	h->n_shards = n;
	h->type = type;
	arc4random_buf(h->sipkey, sizeof(h->sipkey));
	for (i = 0; i < n; i++) {
		pthread_mutex_init(&h->shards[i].lock, NULL);
		h->shards[i].max_bytes = max_bytes / n;
		evict_init(&h->shards[i].ev, max_bytes / n);
	}
	return h;
}

/* Free a list of entries buried (bury) through their older links. */
static void
free_chain(struct lruhash *h, struct lruhash_node *n)
{
	struct lruhash_node *next;

	for (; n != NULL; n = next) {
		next = n->older;
		h->type->free(n);
	}
}

static void
free_buckets(struct lruhash *h, struct shard *s)
{
	struct lruhash_node *n, *next;
	size_t b;

	for (b = 0; b < s->n_buckets; b++)
		for (n = s->buckets[b]; n != NULL; n = next) {
			next = n->next;
			h->type->free(n);
		}
	free(s->buckets);
}

void
lruhash_free(struct lruhash *h)
{
	unsigned i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n_shards; i++) {
		free_buckets(h, &h->shards[i]);
		evict_fini(&h->shards[i].ev);
		pthread_mutex_destroy(&h->shards[i].lock);
	}
	free(h->shards);
	free(h);
}

static struct shard *
shard_of(struct lruhash *h, uint64_t hash)
{
	/* Top bits pick the shard; low bits pick the bucket within it. */
	return &h->shards[(hash >> 58) & (h->n_shards - 1)];
}

static struct lruhash_node **
bucket_of(struct shard *s, uint32_t hash)
{
	return &s->buckets[hash & (s->n_buckets - 1)];
}

static struct lruhash_node **
find_slot(const struct lruhash *h, struct shard *s, uint32_t hash,
    const void *key, size_t keylen)
{
	struct lruhash_node **pp;

	if (s->buckets == NULL)
		return NULL;
	for (pp = bucket_of(s, hash); *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->hash == hash && h->type->match(*pp, key, keylen))
			return pp;
	return NULL;
}

/* Take n out of its bucket (via *pp) and its queue, and uncharge it. */
static void
detach(struct shard *s, struct lruhash_node **pp, struct lruhash_node *n)
{
	*pp = n->next;
	evict_remove(&s->ev, n);
	s->entries--;
	s->bytes -= n->charge;
}

/* Queue n, out of every list, on *dead (through older) to be freed after
 * unlocking. */
static void
bury(struct lruhash_node *n, struct lruhash_node **dead)
{
	n->older = *dead;
	*dead = n;
}

static int
find_visit(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen, lruhash_visit_fn visit, void *arg, int hit)
{
	struct shard *s = shard_of(h, hash);
	struct lruhash_node **pp, *n, *dead = NULL;

	pthread_mutex_lock(&s->lock);
	if ((pp = find_slot(h, s, (uint32_t)hash, key, keylen)) == NULL) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	n = *pp;
	if (hit)
		evict_hit(n);
	if (visit(n, arg) == LRUHASH_REMOVE) {
		detach(s, pp, n);
		bury(n, &dead);
	}
	pthread_mutex_unlock(&s->lock);
	free_chain(h, dead);
	return 1;
}

int
lruhash_lookup(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen, lruhash_visit_fn visit, void *arg)
{
	return find_visit(h, hash, key, keylen, visit, arg, 1);
}

int
lruhash_peek(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen, lruhash_visit_fn visit, void *arg)
{
	return find_visit(h, hash, key, keylen, visit, arg, 0);
}

/* Double the bucket array when chains grow past two entries on average. */
static void
maybe_grow(struct shard *s)
{
	struct lruhash_node **nb, *n, *next;
	size_t size, i;

	if (s->buckets != NULL && (s->entries < s->n_buckets * 2 ||
	    s->n_buckets > UINT32_MAX / 2))
		return;
	size = s->buckets == NULL ? BUCKETS_INITIAL : s->n_buckets * 2;
	if ((nb = calloc(size, sizeof(*nb))) == NULL)
		return;		/* longer chains, still correct */
	for (i = 0; i < s->n_buckets; i++)
		for (n = s->buckets[i]; n != NULL; n = next) {
			next = n->next;
			n->next = nb[n->hash & (size - 1)];
			nb[n->hash & (size - 1)] = n;
		}
	free(s->buckets);
	s->buckets = nb;
	s->n_buckets = size;
	/* A ghost set a bucket; without one, the ghost of the old size. */
	(void)evict_ghost_size(&s->ev, size);
}

/* Evict until the shard has room for need more bytes. */
static void
make_room(struct shard *s, uint64_t need, struct lruhash_node **dead)
{
	struct lruhash_node *n, **pp;

	while (s->bytes + need > s->max_bytes &&
	    (n = evict_victim(&s->ev)) != NULL) {
		for (pp = bucket_of(s, n->hash); *pp != n; pp = &(*pp)->next)
			;
		/* Out of its queue already: out of its bucket now. */
		*pp = n->next;
		s->entries--;
		s->bytes -= n->charge;
		bury(n, dead);
	}
}

size_t
lruhash_charge(size_t size)
{
	/* A bucket pointer and a ghost set (evict.c) a bucket, and the
	 * array has 1 to 2 entries a bucket: 16 octets at most. */
	return size + sizeof(struct lruhash_node *) + sizeof(uint64_t);
}

int
lruhash_insert(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen, struct lruhash_node *n, size_t size,
    lruhash_replace_fn replace)
{
	struct shard *s = shard_of(h, hash);
	struct lruhash_node *old, **pp, *dead = NULL;
	int stored = -1;

	size = lruhash_charge(size);
	if (size > s->max_bytes || size > LRUHASH_CHARGE_MAX) {
		h->type->free(n);
		return -1;
	}
	n->hash = (uint32_t)hash;
	n->charge = (unsigned int)size;
	pthread_mutex_lock(&s->lock);
	if ((pp = find_slot(h, s, n->hash, key, keylen)) != NULL) {
		if (replace != NULL && !replace(*pp, n)) {
			bury(n, &dead);
			goto out;
		}
		/* In old's place, in its bucket and in its queue. */
		old = *pp;
		n->next = old->next;
		*pp = n;
		evict_replace(&s->ev, old, n);
		s->bytes = s->bytes - old->charge + n->charge;
		bury(old, &dead);
		make_room(s, 0, &dead);
		stored = 0;
		goto out;
	}
	make_room(s, n->charge, &dead);
	maybe_grow(s);
	if (s->buckets == NULL) {
		/* Out of memory for the shard's first bucket array: this
		 * answer goes uncached, the daemon serves on. */
		bury(n, &dead);
		goto out;
	}
	n->next = *bucket_of(s, n->hash);
	*bucket_of(s, n->hash) = n;
	evict_add(&s->ev, n);
	s->entries++;
	s->bytes += n->charge;
	stored = 0;
out:
	pthread_mutex_unlock(&s->lock);
	free_chain(h, dead);
	return stored;
}

unsigned
lruhash_slices(const struct lruhash *h)
{
	return h->n_shards * SLICES;
}

uint64_t
lruhash_walk_slice(struct lruhash *h, unsigned i, lruhash_visit_fn visit,
    void *arg)
{
	struct shard *s = &h->shards[i / SLICES];
	struct lruhash_node *n, **pp, *dead = NULL;
	uint64_t removed = 0;
	size_t b;

	pthread_mutex_lock(&s->lock);
	/* n_buckets, a power of two >= SLICES, keeps hash % SLICES == b %
	 * SLICES: a slice holds the same hashes after the table grows. */
	for (b = i % SLICES; b < s->n_buckets; b += SLICES) {
		pp = &s->buckets[b];
		while ((n = *pp) != NULL) {
			if (visit(n, arg) == LRUHASH_KEEP) {
				pp = &n->next;
				continue;
			}
			detach(s, pp, n);
			bury(n, &dead);
			removed++;
		}
	}
	pthread_mutex_unlock(&s->lock);
	free_chain(h, dead);
	return removed;
}

uint64_t
lruhash_walk(struct lruhash *h, lruhash_visit_fn visit, void *arg)
{
	uint64_t removed = 0;
	unsigned i;

	for (i = 0; i < lruhash_slices(h); i++)
		removed += lruhash_walk_slice(h, i, visit, arg);
	return removed;
}

void
lruhash_stats(struct lruhash *h, struct lruhash_stats *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < h->n_shards; i++) {
		pthread_mutex_lock(&h->shards[i].lock);
		out->entries += h->shards[i].entries;
		out->bytes += h->shards[i].bytes;
		out->evictions_probation +=
		    h->shards[i].ev.evictions[EVICT_PROBATION];
		out->evictions_main += h->shards[i].ev.evictions[EVICT_MAIN];
		pthread_mutex_unlock(&h->shards[i].lock);
	}
	out->evictions = out->evictions_probation + out->evictions_main;
}

/* Whether s's buckets hold its entries and bytes, as its queues do. */
static int
shard_consistent(struct shard *s)
{
	const struct lruhash_node *n;
	uint64_t entries = 0, bytes = 0;
	size_t b;

	for (b = 0; b < s->n_buckets; b++)
		for (n = s->buckets[b]; n != NULL; n = n->next) {
			if ((n->hash & (s->n_buckets - 1)) != b)
				return 0;
			entries++;
			bytes += n->charge;
		}
	return entries == s->entries && bytes == s->bytes &&
	    bytes <= s->max_bytes &&
	    evict_check(&s->ev, entries, bytes) == 0;
}

unsigned
lruhash_check(struct lruhash *h)
{
	unsigned i;
	int ok;

	for (i = 0; i < h->n_shards; i++) {
		pthread_mutex_lock(&h->shards[i].lock);
		ok = shard_consistent(&h->shards[i]);
		pthread_mutex_unlock(&h->shards[i].lock);
		if (!ok)
			return i + 1;
	}
	return 0;
}

int
lruhash_queue(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen)
{
	struct shard *s = shard_of(h, hash);
	struct lruhash_node **pp;
	int q = -1;

	pthread_mutex_lock(&s->lock);
	if ((pp = find_slot(h, s, (uint32_t)hash, key, keylen)) != NULL)
		q = (*pp)->queue;
	pthread_mutex_unlock(&s->lock);
	return q;
}
