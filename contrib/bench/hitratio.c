/*
 * hitratio.c: the hit ratio of lruhash's eviction on perf's mixed workload
 * (a Zipf draw over a working set, and a share of names asked once), in a
 * cache holding a fraction of the working set's bytes. It drives the
 * table directly, as cache.c does (a client's lookup, an insert on a
 * miss), with no daemon and no network: the figure is the policy's alone.
 * Built against src/lruhash.c of any version (contrib/bench/hitratio-run
 * builds this tree's and another commit's); see contrib/bench/README.md.
 *
 *     hitratio [names [fraction [queries [zipf [miss_share [seed]]]]]]
 *     hitratio noisy [cache_bytes [services [interval [flood [seconds]]]]]
 *
 * The second, issue 22's noisy neighbour as the table sees it: services
 * names, each asked at random (exponential) intervals of interval s on
 * average, and flood names a second each asked once, for seconds s; it
 * prints how many service names the cache still holds at the end, which
 * an outage then would answer stale (answers and TTLs aside: a stale
 * entry is an entry like any other).
 */
#include "autoconf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lruhash.h"

struct item {
	struct lruhash_node	node;
	uint32_t		key;	/* the name's number */
};

#define ITEM_OF(n)	((struct item *)(void *)((char *)(n) - \
			    offsetof(struct item, node)))

static int
item_match(const struct lruhash_node *n, const void *key, size_t keylen)
{
	return keylen == sizeof(uint32_t) &&
	    memcmp(&ITEM_OF(n)->key, key, keylen) == 0;
}

static void
item_free(struct lruhash_node *n)
{
	free(ITEM_OF(n));
}

static const struct lruhash_type items = { item_match, item_free };

static enum lruhash_verdict
keep(struct lruhash_node *n, void *arg)
{
	(void)n;
	(void)arg;
	return LRUHASH_KEEP;
}

/* A cached answer's size as cache.c charges it (before lruhash's share),
 * for perf's three kinds of question: A, AAAA with two addresses, SRV
 * with its target's A and AAAA as glue. */
static size_t
size_of(uint32_t k)
{
	static const size_t sizes[3] = { 150, 190, 280 };

	return sizes[k % 3];
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double
uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* Ask for k: a hit, or a miss and an insert. Returns 1 on a hit. */
static int
ask(struct lruhash *h, uint32_t k)
{
	uint64_t hash = lruhash_hash(h, &k, sizeof(k));
	struct item *it;

	if (lruhash_lookup(h, hash, &k, sizeof(k), keep, NULL))
		return 1;
	if ((it = malloc(sizeof(*it))) == NULL)
		abort();
	it->key = k;
	(void)lruhash_insert(h, hash, &k, sizeof(k), &it->node, size_of(k),
	    NULL);
	return 0;
}

/* Exponential with mean m. */
static double
expo(double m)
{
	return -m * log(1.0 - uniform());
}

static int
noisy(int argc, char **argv)
{
	uint64_t cache = argc > 2 ? (uint64_t)atoll(argv[2]) : 4 << 20;
	uint32_t services = argc > 3 ? (uint32_t)atol(argv[3]) : 200;
	double interval = argc > 4 ? atof(argv[4]) : 10.0;
	double flood = argc > 5 ? atof(argv[5]) : 5000.0;
	double seconds = argc > 6 ? atof(argv[6]) : 15.0;
	double *next, t, next_flood = 0;
	uint32_t i, k, held = 0, twice = 0, held_twice = 0, *n_asks;
	uint32_t flood_key = 1000000;
	struct lruhash *h;
	long asks = 0, hits = 0;

	if ((next = malloc(services * sizeof(*next))) == NULL ||
	    (n_asks = calloc(services, sizeof(*n_asks))) == NULL ||
	    (h = lruhash_new(16, cache, &items)) == NULL)
		return 1;
	for (i = 0; i < services; i++)
		next[i] = uniform() * interval;
	/* Events in time order: the earliest service ask or the next flood
	 * name, whichever comes first (a linear scan: 200 services). */
	for (;;) {
		k = 0;
		for (i = 1; i < services; i++)
			if (next[i] < next[k])
				k = i;
		t = next[k] < next_flood ? next[k] : next_flood;
		if (t >= seconds)
			break;
		if (next_flood <= next[k]) {
			ask(h, flood_key++);
			next_flood += 1.0 / flood;
			continue;
		}
		asks++;
		n_asks[k]++;
		hits += ask(h, k);
		next[k] += expo(interval);
	}
	for (k = 0; k < services; k++) {
		uint64_t hash = lruhash_hash(h, &k, sizeof(k));

		i = (uint32_t)lruhash_lookup(h, hash, &k, sizeof(k), keep, NULL);
		held += i;
		twice += n_asks[k] >= 2;
		held_twice += n_asks[k] >= 2 && i;
	}
	printf("cache %llu bytes, %u services asked every %.1f s on average, "
	    "%.0f one-off names a second, %.0f s\n",
	    (unsigned long long)cache, services, interval, flood, seconds);
	printf("service names held at the end: %u of %u; of the %u asked "
	    "twice or more: %u (service asks that hit: %ld of %ld)\n", held,
	    services, twice, held_twice, hits, asks);
	lruhash_free(h);
	free(n_asks);
	free(next);
	return 0;
}

int
main(int argc, char **argv)
{
	uint32_t names = argc > 1 ? (uint32_t)atol(argv[1]) : 100000;
	double fraction = argc > 2 ? atof(argv[2]) : 0.25;
	long queries = argc > 3 ? atol(argv[3]) : 2000000;
	double s = argc > 4 ? atof(argv[4]) : 1.0;
	double miss_share = argc > 5 ? atof(argv[5]) : 0.1;
	double *cdf, total = 0, bytes = 0;
	uint32_t k, next_new = names, lo, hi, mid;
	struct lruhash_stats st;
	struct lruhash *h;
	long i, hits = 0, zipf_hits = 0, zipf_asks = 0;

	if (argc > 1 && strcmp(argv[1], "noisy") == 0)
		return noisy(argc, argv);
	if (argc > 6)
		rng ^= (uint64_t)atoll(argv[6]) * 0x2545f4914f6cdd1dULL;
	if ((cdf = malloc(names * sizeof(*cdf))) == NULL)
		return 1;
	for (k = 0; k < names; k++) {
		total += 1.0 / pow(k + 1, s);
		cdf[k] = total;
		bytes += (double)lruhash_charge(size_of(k));
	}
	/* 16 shards, as cache.c makes for a cache-size of 4 MiB or more. */
	if ((h = lruhash_new(16, (uint64_t)(bytes * fraction), &items)) == NULL)
		return 1;
	/* perf's warm-up: every question once. */
	for (k = 0; k < names; k++)
		ask(h, k);
	for (i = 0; i < queries; i++) {
		if (uniform() < miss_share) {
			ask(h, next_new++);
			continue;
		}
		/* The rank whose cumulative weight first reaches u. */
		double u = uniform() * total;
		lo = 0;
		hi = names - 1;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		zipf_asks++;
		zipf_hits += ask(h, lo);
	}
	hits = zipf_hits;
	lruhash_stats(h, &st);
	printf("names %u, cache %.0f%% of %.0f bytes, %ld queries, zipf %.2f, "
	    "new names %.0f%%\n", names, fraction * 100, bytes, queries, s,
	    miss_share * 100);
	printf("hit ratio %.4f (of all queries), %.4f (of the working set's), "
	    "entries %llu, evictions %llu\n", (double)hits / (double)queries,
	    (double)zipf_hits / (double)zipf_asks,
	    (unsigned long long)st.entries, (unsigned long long)st.evictions);
	lruhash_free(h);
	free(cdf);
	return 0;
}
