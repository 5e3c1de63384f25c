/* ratelimit.c: token buckets per client address, in a bounded table. */
#include "autoconf.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lruhash.h"
#include "ratelimit.h"

/* Tokens are counted in thousandths, so that a bucket refills exactly by
 * qps thousandths each millisecond. */
#define TOKEN		1000
#define KEY_LEN		16	/* an IPv6 address, IPv4 ones mapped: one
				 * size, so the bound is exact */

struct ratelimit_bucket {
	struct lruhash_node node;
	uint64_t	tokens;		/* thousandths of a token */
	uint64_t	last;		/* ms: tokens counted up to then */
	uint32_t	over;		/* queries over the limit since the last
					 * one within it */
	uint8_t		key[KEY_LEN];	/* the client's address */
};

#define BUCKET_OF(n)	((struct ratelimit_bucket *)(void *)((char *)(n) - \
			    offsetof(struct ratelimit_bucket, node)))

struct ratelimit {
	pthread_mutex_t	 lock;		/* all below; a check's lookup and
					 * insert as one step */
	struct lruhash	*table;		/* of struct ratelimit_bucket */
	size_t		 size;
};

/* What taking a token from a tracked bucket found. */
struct ratelimit_take {
	uint32_t		 qps;
	uint32_t		 slip;
	uint64_t		 now;
	enum ratelimit_verdict	 verdict;
};

static int
bucket_match(const struct lruhash_node *n, const void *key, size_t keylen)
{
	return keylen == KEY_LEN && memcmp(BUCKET_OF(n)->key, key,
	    KEY_LEN) == 0;
}

static void
bucket_free(struct lruhash_node *n)
{
	free(BUCKET_OF(n));
}

static const struct lruhash_type bucket_type = { bucket_match, bucket_free };

/* A table for size addresses. */
static struct lruhash *
table_new(size_t size)
{
	/* One shard: one eviction order over every address (evict.h). */
	return lruhash_new(1, size * lruhash_charge(
	    sizeof(struct ratelimit_bucket)), &bucket_type);
}

struct ratelimit *
ratelimit_new(size_t size)
{
	struct ratelimit *rl;

	if ((rl = calloc(1, sizeof(*rl))) == NULL)
		return NULL;
	if ((rl->table = table_new(size)) == NULL) {
		free(rl);
		return NULL;
	}
	pthread_mutex_init(&rl->lock, NULL);
	rl->size = size;
	return rl;
}

int
ratelimit_resize(struct ratelimit *rl, size_t size)
{
	struct lruhash *table, *old;

	if (size == ratelimit_size(rl))
		return 0;
	/* Made, and the old one freed, outside the lock. */
	if ((table = table_new(size)) == NULL)
		return -1;
	pthread_mutex_lock(&rl->lock);
	old = rl->table;
	rl->table = table;
	rl->size = size;
	pthread_mutex_unlock(&rl->lock);
	lruhash_free(old);
	return 0;
}

size_t
ratelimit_size(struct ratelimit *rl)
{
	size_t size;

	pthread_mutex_lock(&rl->lock);
	size = rl->size;
	pthread_mutex_unlock(&rl->lock);
	return size;
}

/* Refill b for the time since it was last seen, then take a token. */
static enum ratelimit_verdict
bucket_take(struct ratelimit_bucket *b, uint32_t qps, uint32_t slip,
    uint64_t now)
{
	uint64_t full = (uint64_t)qps * TOKEN;

	if (now > b->last) {
		/* A second refills any bucket: no product to overflow. */
		b->tokens = now - b->last >= 1000 ? full :
		    b->tokens + (now - b->last) * qps;
		b->last = now;
	}
	if (b->tokens > full)
		b->tokens = full;	/* filled at a higher qps */
	if (b->tokens >= TOKEN) {
		b->tokens -= TOKEN;
		b->over = 0;
		return RATELIMIT_PASS;
	}
	b->over++;
	return slip > 0 && b->over % slip == 0 ? RATELIMIT_SLIP :
	    RATELIMIT_DROP;
}

static enum lruhash_verdict
take_visit(struct lruhash_node *n, void *arg)
{
	struct ratelimit_take *t = arg;

	t->verdict = bucket_take(BUCKET_OF(n), t->qps, t->slip, t->now);
	return LRUHASH_KEEP;
}

enum ratelimit_verdict
ratelimit_check(struct ratelimit *rl, const struct addr *client,
    uint32_t qps, uint32_t slip, uint64_t now)
{
	struct ratelimit_take t = { qps, slip, now, RATELIMIT_PASS };
	struct ratelimit_bucket *b;
	uint8_t key[KEY_LEN];
	uint64_t hash;

	if (qps == 0)
		return RATELIMIT_PASS;
	/* ::ffff:a.b.c.d for IPv4 (RFC 4291 §2.5.5.2), whichever way it
	 * came; the rest of the key stays zero if the client is neither. */
	memset(key, 0, sizeof(key));
	if (addr_host(client, key) == AF_INET) {
		memcpy(key + 12, key, 4);
		memset(key, 0, 10);
		key[10] = key[11] = 0xff;
	}
	pthread_mutex_lock(&rl->lock);
	hash = lruhash_hash(rl->table, key, sizeof(key));
	if (lruhash_lookup(rl->table, hash, key, sizeof(key), take_visit, &t))
		goto out;
	if ((b = malloc(sizeof(*b))) == NULL)
		goto out;
	/* A new address starts with a full bucket, this query's token
	 * taken. */
	b->tokens = (uint64_t)qps * TOKEN - TOKEN;
	b->last = now;
	b->over = 0;
	memcpy(b->key, key, sizeof(key));
	(void)lruhash_insert(rl->table, hash, key, sizeof(key), &b->node,
	    sizeof(*b), NULL);
out:
	pthread_mutex_unlock(&rl->lock);
	return t.verdict;
}

void
ratelimit_stats(struct ratelimit *rl, struct ratelimit_stats *out)
{
	struct lruhash_stats ls;

	pthread_mutex_lock(&rl->lock);
	lruhash_stats(rl->table, &ls);
	pthread_mutex_unlock(&rl->lock);
	out->tracked = ls.entries;
	out->evictions = ls.evictions;
}

void
ratelimit_free(struct ratelimit *rl)
{
	if (rl == NULL)
		return;
	lruhash_free(rl->table);
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}
