/* lruhash.c: sharded, byte-bounded hash table with per-shard LRU lists. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lruhash.h"

#define SHARDS_MAX		64
#define BUCKETS_INITIAL		64
/* Slices per shard: buckets b with b % SLICES == j form slice j. */
#define SLICES			16

struct entry {
	struct entry	*next;		/* bucket chain */
	struct entry	*lru_prev;	/* towards most recently used */
	struct entry	*lru_next;	/* towards least recently used */
	void		*value;
	uint64_t	 hash;
	size_t		 charge;	/* bytes counted against the bound */
	size_t		 keylen;
	unsigned char	 key[];
};

struct shard {
	pthread_mutex_t	 lock;
	struct entry	**buckets;
	size_t		 n_buckets;	/* power of two */
	struct entry	*mru;
	struct entry	*lru;
	uint64_t	 entries;
	uint64_t	 bytes;
	uint64_t	 max_bytes;
	uint64_t	 evictions;
};

struct lruhash {
	struct shard	*shards;
	unsigned	 n_shards;	/* power of two */
	lruhash_free_fn	 free_value;
	uint64_t	 sipkey[2];
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
lruhash_new(unsigned n_shards, uint64_t max_bytes, lruhash_free_fn free_value)
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
	h->free_value = free_value;
	arc4random_buf(h->sipkey, sizeof(h->sipkey));
	for (i = 0; i < n; i++) {
		pthread_mutex_init(&h->shards[i].lock, NULL);
		h->shards[i].max_bytes = max_bytes / n;
	}
	return h;
}

static void
free_chain(struct lruhash *h, struct entry *e)
{
	struct entry *next;

	for (; e != NULL; e = next) {
		next = e->lru_next;
		h->free_value(e->value);
		free(e);
	}
}

void
lruhash_free(struct lruhash *h)
{
	unsigned i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n_shards; i++) {
		free_chain(h, h->shards[i].mru);
		free(h->shards[i].buckets);
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

static struct entry **
bucket_of(struct shard *s, uint64_t hash)
{
	return &s->buckets[hash & (s->n_buckets - 1)];
}

static struct entry **
find_slot(struct shard *s, uint64_t hash, const void *key, size_t keylen)
{
	struct entry **pp;

	if (s->buckets == NULL)
		return NULL;
	for (pp = bucket_of(s, hash); *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->hash == hash && (*pp)->keylen == keylen &&
		    memcmp((*pp)->key, key, keylen) == 0)
			return pp;
	return NULL;
}

static void
lru_unlink(struct shard *s, struct entry *e)
{
	if (e->lru_prev != NULL)
		e->lru_prev->lru_next = e->lru_next;
	else
		s->mru = e->lru_next;
	if (e->lru_next != NULL)
		e->lru_next->lru_prev = e->lru_prev;
	else
		s->lru = e->lru_prev;
}

static void
lru_push(struct shard *s, struct entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = s->mru;
	if (s->mru != NULL)
		s->mru->lru_prev = e;
	s->mru = e;
	if (s->lru == NULL)
		s->lru = e;
}

/* Take e out of its bucket (via *pp) and the LRU list, and uncharge it. */
static void
detach(struct shard *s, struct entry **pp, struct entry *e)
{
	*pp = e->next;
	lru_unlink(s, e);
	s->entries--;
	s->bytes -= e->charge;
}

/* Queue e on *dead (through lru_next) to be freed after unlocking. */
static void
bury(struct entry *e, struct entry **dead)
{
	e->lru_next = *dead;
	*dead = e;
}

int
lruhash_lookup(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen, lruhash_visit_fn visit, void *arg)
{
	struct shard *s = shard_of(h, hash);
	struct entry **pp, *e, *dead = NULL;

	pthread_mutex_lock(&s->lock);
	if ((pp = find_slot(s, hash, key, keylen)) == NULL) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	e = *pp;
	lru_unlink(s, e);
	lru_push(s, e);
	if (visit(e->key, e->keylen, e->value, arg) == LRUHASH_REMOVE) {
		detach(s, pp, e);
		bury(e, &dead);
	}
	pthread_mutex_unlock(&s->lock);
	free_chain(h, dead);
	return 1;
}

/* Double the bucket array when chains grow past two entries on average. */
static void
maybe_grow(struct shard *s)
{
	struct entry **nb, *e, *next;
	size_t n, i;

	if (s->buckets != NULL && s->entries < s->n_buckets * 2)
		return;
	n = s->buckets == NULL ? BUCKETS_INITIAL : s->n_buckets * 2;
	if ((nb = calloc(n, sizeof(*nb))) == NULL)
		return;		/* longer chains, still correct */
	for (i = 0; i < s->n_buckets; i++)
		for (e = s->buckets[i]; e != NULL; e = next) {
			next = e->next;
			e->next = nb[e->hash & (n - 1)];
			nb[e->hash & (n - 1)] = e;
		}
	free(s->buckets);
	s->buckets = nb;
	s->n_buckets = n;
}

static void
evict(struct shard *s, struct entry **dead)
{
	struct entry *e, **pp;

	while (s->bytes > s->max_bytes && (e = s->lru) != NULL) {
		for (pp = bucket_of(s, e->hash); *pp != e; pp = &(*pp)->next)
			;
		detach(s, pp, e);
		bury(e, dead);
		s->evictions++;
	}
}

size_t
lruhash_charge(size_t keylen, size_t size)
{
	/* The entry header, key, and about one bucket pointer. */
	return size + sizeof(struct entry) + keylen + 2 * sizeof(void *);
}

int
lruhash_insert(struct lruhash *h, uint64_t hash, const void *key,
    size_t keylen, void *value, size_t size, lruhash_replace_fn replace)
{
	struct shard *s = shard_of(h, hash);
	struct entry *e, *e_old, **pp, *dead = NULL;
	int stored = -1;

	size = lruhash_charge(keylen, size);
	if (size > s->max_bytes || (e = malloc(sizeof(*e) + keylen)) == NULL) {
		h->free_value(value);
		return -1;
	}
	e->value = value;
	e->hash = hash;
	e->charge = size;
	e->keylen = keylen;
	memcpy(e->key, key, keylen);
	pthread_mutex_lock(&s->lock);
	if ((pp = find_slot(s, hash, key, keylen)) != NULL) {
		if (replace != NULL && !replace((*pp)->value, value)) {
			bury(e, &dead);
			goto out;
		}
		e_old = *pp;
		detach(s, pp, e_old);
		bury(e_old, &dead);
	}
	maybe_grow(s);
	e->next = *bucket_of(s, hash);
	*bucket_of(s, hash) = e;
	lru_push(s, e);
	s->entries++;
	s->bytes += e->charge;
	evict(s, &dead);
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
	struct entry *e, **pp, *dead = NULL;
	uint64_t removed = 0;
	size_t b;

	pthread_mutex_lock(&s->lock);
	/* n_buckets, a power of two >= SLICES, keeps hash % SLICES == b %
	 * SLICES: a slice holds the same hashes after the table grows. */
	for (b = i % SLICES; b < s->n_buckets; b += SLICES) {
		pp = &s->buckets[b];
		while ((e = *pp) != NULL) {
			if (visit(e->key, e->keylen, e->value, arg) ==
			    LRUHASH_KEEP) {
				pp = &e->next;
				continue;
			}
			detach(s, pp, e);
			bury(e, &dead);
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
		out->evictions += h->shards[i].evictions;
		pthread_mutex_unlock(&h->shards[i].lock);
	}
}
