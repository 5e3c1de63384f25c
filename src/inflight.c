/* inflight.c: which worker fetches which cache key, and who waits for it. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inflight.h"

#define SHARDS		64	/* power of two: spreads the locks */
#define BUCKETS		64	/* per shard, power of two */

struct claim {
	struct claim	*next;		/* bucket chain */
	struct cache_key key;
	unsigned	 owner;		/* worker fetching it */
	uint64_t	 waiting;	/* bit i: worker i waits for it */
	uint64_t	 started;	/* ms */
};

struct shard {
	pthread_mutex_t	 lock;
	struct claim	*buckets[BUCKETS];
};

struct notify {
	inflight_notify_fn	 fn;
	void			*arg;
};

struct inflight {
	struct shard	 shards[SHARDS];
	unsigned	 n_workers;
	struct notify	 notify[INFLIGHT_WORKERS_MAX];
};

struct inflight *
inflight_new(unsigned n_workers)
{
	struct inflight *idx;
	size_t i;

	if (n_workers == 0 || n_workers > INFLIGHT_WORKERS_MAX ||
	    (idx = calloc(1, sizeof(*idx))) == NULL)
		return NULL;
	for (i = 0; i < SHARDS; i++)
		pthread_mutex_init(&idx->shards[i].lock, NULL);
	idx->n_workers = n_workers;
	return idx;
}

void
inflight_free(struct inflight *idx)
{
	struct claim *c, *next;
	struct shard *s;
	size_t i, j;

	if (idx == NULL)
		return;
	for (i = 0; i < SHARDS; i++) {
		s = &idx->shards[i];
		for (j = 0; j < BUCKETS; j++)
			for (c = s->buckets[j]; c != NULL; c = next) {
				next = c->next;
				free(c);
			}
		pthread_mutex_destroy(&s->lock);
	}
	free(idx);
}

void
inflight_notify(struct inflight *idx, unsigned worker, inflight_notify_fn fn,
    void *arg)
{
	idx->notify[worker].fn = fn;
	idx->notify[worker].arg = arg;
}

/* The shard of key (its top bits, as the cache's) and the key's chain. */
static struct shard *
shard_of(struct inflight *idx, const struct cache_key *key)
{
	return &idx->shards[(key->hash >> 58) & (SHARDS - 1)];
}

static struct claim **
find(struct shard *s, const struct cache_key *key)
{
	struct claim **pp;

	for (pp = &s->buckets[key->hash & (BUCKETS - 1)]; *pp != NULL;
	    pp = &(*pp)->next)
		if ((*pp)->key.hash == key->hash && (*pp)->key.len ==
		    key->len && memcmp((*pp)->key.data, key->data,
		    key->len) == 0)
			return pp;
	return NULL;
}

enum inflight_claim
inflight_claim(struct inflight *idx, const struct cache_key *key,
    unsigned worker, int wait, uint64_t now)
{
	struct shard *s = shard_of(idx, key);
	enum inflight_claim rc = INFLIGHT_ELSEWHERE;
	struct claim **pp, *c;

	pthread_mutex_lock(&s->lock);
	if ((pp = find(s, key)) != NULL) {
		c = *pp;
		if (c->owner != worker && wait) {
			c->waiting |= (uint64_t)1 << worker;
			rc = INFLIGHT_WAITING;
		}
	} else if ((c = malloc(sizeof(*c))) != NULL) {
		c->key = *key;
		c->owner = worker;
		c->waiting = 0;
		c->started = now;
		pp = &s->buckets[key->hash & (BUCKETS - 1)];
		c->next = *pp;
		*pp = c;
		rc = INFLIGHT_OWNER;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void
inflight_release(struct inflight *idx, const struct cache_key *key,
    unsigned worker)
{
	struct shard *s = shard_of(idx, key);
	struct claim **pp, *c = NULL;
	unsigned i;

	pthread_mutex_lock(&s->lock);
	if ((pp = find(s, key)) != NULL && (*pp)->owner == worker) {
		c = *pp;
		*pp = c->next;
	}
	pthread_mutex_unlock(&s->lock);
	if (c == NULL)
		return;
	/* Unlocked: a waiter told may claim the key again at once. */
	for (i = 0; i < idx->n_workers; i++)
		if ((c->waiting & (uint64_t)1 << i) &&
		    idx->notify[i].fn != NULL)
			idx->notify[i].fn(idx->notify[i].arg, key);
	free(c);
}

void
inflight_resume(struct inflight *idx, unsigned worker)
{
	unsigned i;

	for (i = 0; i < idx->n_workers; i++)
		if (i != worker && idx->notify[i].fn != NULL)
			idx->notify[i].fn(idx->notify[i].arg, NULL);
}

uint64_t
inflight_started(struct inflight *idx, const struct cache_key *key)
{
	struct shard *s = shard_of(idx, key);
	struct claim **pp;
	uint64_t started = 0;

	pthread_mutex_lock(&s->lock);
	if ((pp = find(s, key)) != NULL)
		started = (*pp)->started;
	pthread_mutex_unlock(&s->lock);
	return started;
}
