/* check_lruhash.c: unit tests of the sharded byte-bounded table and its
 * eviction (S3-FIFO, evict.c). */
#include "autoconf.h"

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "evict.h"
#include "lruhash.h"
#include "testhashkey.h"

static int freed;

/*
 * calloc as the table sees it (linked with -Wl,--wrap=calloc): the
 * calloc_fail_at-th call from now fails (1: the next), 0 none.
 */
void	*__real_calloc(size_t n, size_t size);
void	*__wrap_calloc(size_t n, size_t size);
static int calloc_fail_at;

void *
__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_at > 0 && --calloc_fail_at == 0)
		return NULL;
	return __real_calloc(n, size);
}

/* An entry of the tests' own: an int under a short string key. */
struct item {
	struct lruhash_node	 node;
	int			 v;
	size_t			 keylen;
	char			 key[32];
};

#define ITEM_OF(n)	((struct item *)(void *)((char *)(n) - \
			    offsetof(struct item, node)))

static int
item_match(const struct lruhash_node *n, const void *key, size_t keylen)
{
	const struct item *it = ITEM_OF(n);

	return it->keylen == keylen && memcmp(it->key, key, keylen) == 0;
}

static void
item_free(struct lruhash_node *n)
{
	freed++;
	free(ITEM_OF(n));
}

static const struct lruhash_type items = { item_match, item_free };

static struct lruhash_node *
item(const char *key, int v)
{
	struct item *it = malloc(sizeof(*it));

	ck_assert_ptr_nonnull(it);
	ck_assert_uint_lt(strlen(key), sizeof(it->key));
	it->v = v;
	it->keylen = strlen(key);
	memcpy(it->key, key, it->keylen);
	return &it->node;
}

static enum lruhash_verdict
read_int(struct lruhash_node *n, void *arg)
{
	*(int *)arg = ITEM_OF(n)->v;
	return LRUHASH_KEEP;
}

static int
get(struct lruhash *h, const char *key)
{
	int v = -1;

	lruhash_lookup(h, lruhash_hash(h, key, strlen(key)), key, strlen(key),
	    read_int, &v);
	return v;
}

static int
put(struct lruhash *h, const char *key, int v, size_t size)
{
	return lruhash_insert(h, lruhash_hash(h, key, strlen(key)), key,
	    strlen(key), item(key, v), size, NULL);
}

START_TEST(insert_lookup_replace)
{
	struct lruhash *h = lruhash_new(4, 1 << 20, &items);
	struct lruhash_stats st;

	freed = 0;
	ck_assert_int_eq(get(h, "a"), -1);
	ck_assert_int_eq(put(h, "a", 1, 10), 0);
	ck_assert_int_eq(put(h, "b", 2, 10), 0);
	ck_assert_int_eq(get(h, "a"), 1);
	ck_assert_int_eq(get(h, "b"), 2);
	ck_assert_int_eq(put(h, "a", 3, 10), 0);
	ck_assert_int_eq(freed, 1);		/* the old "a" */
	ck_assert_int_eq(get(h, "a"), 3);
	lruhash_stats(h, &st);
	ck_assert_uint_eq(st.entries, 2);
	lruhash_free(h);
	ck_assert_int_eq(freed, 3);
}
END_TEST

static int
never(const struct lruhash_node *old, struct lruhash_node *new)
{
	(void)old;
	(void)new;
	return 0;
}

START_TEST(replace_refused)
{
	struct lruhash *h = lruhash_new(1, 1 << 20, &items);

	freed = 0;
	ck_assert_int_eq(put(h, "k", 1, 10), 0);
	ck_assert_int_eq(lruhash_insert(h, lruhash_hash(h, "k", 1), "k", 1,
	    item("k", 2), 10, never), -1);
	ck_assert_int_eq(freed, 1);		/* the refused new value */
	ck_assert_int_eq(get(h, "k"), 1);
	lruhash_free(h);
}
END_TEST

START_TEST(bound_and_order)
{
	struct lruhash *h = lruhash_new(1, 4096, &items);
	struct lruhash_stats st;
	char key[32];
	int i;

	freed = 0;
	/* Charged 900 + the table's share (lruhash_charge): 4 fit, not 5. */
	ck_assert_int_eq(put(h, "k0", 0, 900), 0);
	ck_assert_int_eq(put(h, "k1", 1, 900), 0);
	ck_assert_int_eq(put(h, "k2", 2, 900), 0);
	ck_assert_int_eq(put(h, "k3", 3, 900), 0);
	ck_assert_int_eq(get(h, "k0"), 0);	/* k0 asked again */
	ck_assert_int_eq(put(h, "k4", 4, 900), 0);
	ck_assert_int_eq(get(h, "k1"), -1);	/* the oldest not asked went */
	ck_assert_int_eq(get(h, "k0"), 0);
	ck_assert_int_eq(get(h, "k4"), 4);
	for (i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "flood%d", i);
		put(h, key, i, 100);
		lruhash_stats(h, &st);
		ck_assert_uint_le(st.bytes, 4096);
	}
	ck_assert_uint_gt(st.evictions, 9000);
	ck_assert_int_eq(get(h, "flood9999"), 9999);
	ck_assert_int_eq(put(h, "huge", 0, 5000), -1);	/* over the bound */
	lruhash_free(h);
}
END_TEST

static enum lruhash_verdict
remove_odd(struct lruhash_node *n, void *arg)
{
	(void)arg;
	return ITEM_OF(n)->v % 2 ? LRUHASH_REMOVE : LRUHASH_KEEP;
}

START_TEST(walk_removes)
{
	struct lruhash *h = lruhash_new(8, 1 << 20, &items);
	struct lruhash_stats st;
	char key[32];
	int i;

	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		ck_assert_int_eq(put(h, key, i, 10), 0);
	}
	ck_assert_uint_eq(lruhash_walk(h, remove_odd, NULL), 500);
	lruhash_stats(h, &st);
	ck_assert_uint_eq(st.entries, 500);
	ck_assert_int_eq(get(h, "n2"), 2);
	ck_assert_int_eq(get(h, "n3"), -1);
	/* A lookup's REMOVE verdict removes too. */
	ck_assert_int_eq(lruhash_lookup(h, lruhash_hash(h, "n4", 2), "n4", 2,
	    remove_odd, NULL), 1);
	ck_assert_int_eq(get(h, "n4"), 4);
	lruhash_free(h);
}
END_TEST

/* Marks seen[value] for the values below 1000 (the first batch). */
static enum lruhash_verdict
mark_seen(struct lruhash_node *n, void *arg)
{
	int *seen = arg, v = ITEM_OF(n)->v;

	if (v < 1000)
		seen[v]++;
	return LRUHASH_KEEP;
}

START_TEST(slices_partition_while_growing)
{
	struct lruhash *h = lruhash_new(4, 1 << 24, &items);
	static int seen[1000];
	unsigned i;
	char key[32];
	int v;

	memset(seen, 0, sizeof(seen));
	for (v = 0; v < 1000; v++) {
		snprintf(key, sizeof(key), "n%d", v);
		ck_assert_int_eq(put(h, key, v, 10), 0);
	}
	ck_assert_uint_eq(lruhash_slices(h), 4 * 16);
	/* The first half of every shard's slices... */
	for (i = 0; i < lruhash_slices(h); i++)
		if (i % 16 < 8)
			lruhash_walk_slice(h, i, mark_seen, seen);
	/* 20000 more entries between two slices: every shard's table
	 * doubles several times (it grows past 2 entries per bucket). */
	for (v = 1000; v < 21000; v++) {
		snprintf(key, sizeof(key), "n%d", v);
		ck_assert_int_eq(put(h, key, v, 10), 0);
	}
	/* ...then the other half, in tables of another size. */
	for (i = 0; i < lruhash_slices(h); i++)
		if (i % 16 >= 8)
			lruhash_walk_slice(h, i, mark_seen, seen);
	/* Each of the first 1000 seen once: none twice, none missed. */
	for (v = 0; v < 1000; v++)
		ck_assert_int_eq(seen[v], 1);
	lruhash_free(h);
}
END_TEST

START_TEST(hash_is_keyed)
{
	struct lruhash *a = lruhash_new(1, 1024, &items);
	struct lruhash *b = lruhash_new(1, 1024, &items);

	/* Two tables, two secret keys: equal hashes only by 2^-64 chance. */
	ck_assert_uint_ne(lruhash_hash(a, "x", 1), lruhash_hash(b, "x", 1));
	ck_assert_uint_eq(lruhash_hash(a, "x", 1), lruhash_hash(a, "x", 1));
	lruhash_free(a);
	lruhash_free(b);
}
END_TEST

/* Entries of 100 octets, charged 116 (lruhash_charge): n fit in n * 116. */
#define SIZE		100
#define CHARGE		116

static int
queue_of(struct lruhash *h, const char *key)
{
	return lruhash_queue(h, lruhash_hash(h, key, strlen(key)), key,
	    strlen(key));
}

/*
 * Out of memory for a shard's first bucket array: the insert is refused
 * (an uncached answer), the entry freed, and the table keeps working.
 */
START_TEST(first_insert_out_of_memory)
{
	struct lruhash *h;
	struct lruhash_stats st;
	char key[32];
	int i;

	/* lruhash_new's own two allocations: either failing is NULL. */
	calloc_fail_at = 1;
	ck_assert_ptr_null(lruhash_new(2, 1 << 20, &items));
	calloc_fail_at = 2;
	ck_assert_ptr_null(lruhash_new(2, 1 << 20, &items));
	calloc_fail_at = 0;
	ck_assert_ptr_nonnull(h = lruhash_new(1, 1 << 20, &items));
	freed = 0;
	calloc_fail_at = 1;
	ck_assert_int_eq(put(h, "a", 1, 10), -1);
	ck_assert_int_eq(calloc_fail_at, 0);	/* it was asked, and failed */
	ck_assert_int_eq(freed, 1);
	ck_assert_int_eq(get(h, "a"), -1);
	ck_assert_uint_eq(lruhash_walk(h, remove_odd, NULL), 0);
	lruhash_stats(h, &st);
	ck_assert_uint_eq(st.entries, 0);
	ck_assert_uint_eq(st.bytes, 0);
	/* Memory again: the next insert makes the array. */
	ck_assert_int_eq(put(h, "a", 1, 10), 0);
	ck_assert_int_eq(get(h, "a"), 1);
	/* A failed growth only lengthens the chains. */
	for (i = 0; i < 127; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		ck_assert_int_eq(put(h, key, i, 10), 0);
	}
	calloc_fail_at = 1;
	ck_assert_int_eq(put(h, "b", 2, 10), 0);
	ck_assert_int_eq(calloc_fail_at, 0);
	for (i = 0; i < 127; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		ck_assert_int_eq(get(h, key), i);
	}
	ck_assert_int_eq(get(h, "b"), 2);
	ck_assert_uint_eq(lruhash_check(h), 0);
	lruhash_free(h);

	/* The ghost's array (after the buckets') failing: stored all the
	 * same, on probation, with no ghost to remember what leaves. */
	ck_assert_ptr_nonnull(h = lruhash_new(1, 2 * CHARGE, &items));
	calloc_fail_at = 2;
	ck_assert_int_eq(put(h, "a", 1, SIZE), 0);
	ck_assert_int_eq(calloc_fail_at, 0);
	ck_assert_int_eq(queue_of(h, "a"), EVICT_PROBATION);
	ck_assert_int_eq(put(h, "b", 2, SIZE), 0);
	ck_assert_int_eq(put(h, "c", 3, SIZE), 0);	/* a goes */
	ck_assert_int_eq(put(h, "a", 1, SIZE), 0);	/* b goes */
	ck_assert_int_eq(queue_of(h, "a"), EVICT_PROBATION);
	ck_assert_uint_eq(lruhash_check(h), 0);
	lruhash_free(h);
}
END_TEST

/*
 * A new entry waits on probation; asked again there, it is promoted to
 * main when probation's oldest must go; those not asked are evicted in
 * the order they came; one asked again after it left (its hash in the
 * ghost) goes to main at once.
 */
START_TEST(asked_again_is_promoted)
{
	struct lruhash *h = lruhash_new(1, 10 * CHARGE, &items);
	struct lruhash_stats st;
	char key[8];
	int i;

	ck_assert_uint_eq(lruhash_charge(SIZE), CHARGE);
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "%c", 'a' + i);
		ck_assert_int_eq(put(h, key, i, SIZE), 0);
		ck_assert_int_eq(queue_of(h, key), EVICT_PROBATION);
	}
	ck_assert_int_eq(get(h, "c"), 2);	/* c asked again */
	ck_assert_int_eq(put(h, "k", 10, SIZE), 0);	/* a goes */
	ck_assert_int_eq(put(h, "l", 11, SIZE), 0);	/* b goes */
	ck_assert_int_eq(queue_of(h, "c"), EVICT_PROBATION);
	ck_assert_int_eq(put(h, "m", 12, SIZE), 0);	/* c promoted, d goes */
	ck_assert_int_eq(queue_of(h, "c"), EVICT_MAIN);
	ck_assert_int_eq(queue_of(h, "a"), -1);
	ck_assert_int_eq(queue_of(h, "b"), -1);
	ck_assert_int_eq(queue_of(h, "d"), -1);
	ck_assert_int_eq(queue_of(h, "e"), EVICT_PROBATION);
	lruhash_stats(h, &st);
	ck_assert_uint_eq(st.entries, 10);
	ck_assert_uint_eq(st.bytes, 10 * CHARGE);
	ck_assert_uint_eq(st.evictions_probation, 3);
	ck_assert_uint_eq(st.evictions_main, 0);
	/* a comes back: remembered, to main; e, probation's oldest, goes. */
	ck_assert_int_eq(put(h, "a", 0, SIZE), 0);
	ck_assert_int_eq(queue_of(h, "a"), EVICT_MAIN);
	ck_assert_int_eq(queue_of(h, "e"), -1);
	/* A peek is no hit: f is not promoted for it, and goes. */
	ck_assert_int_eq(lruhash_peek(h, lruhash_hash(h, "f", 1), "f", 1,
	    read_int, &i), 1);
	ck_assert_int_eq(put(h, "n", 13, SIZE), 0);
	ck_assert_int_eq(queue_of(h, "f"), -1);
	/* A replacement keeps its place, queue and hits. */
	ck_assert_int_eq(put(h, "c", 20, SIZE), 0);
	ck_assert_int_eq(queue_of(h, "c"), EVICT_MAIN);
	ck_assert_int_eq(lruhash_check(h), 0);
	lruhash_stats(h, &st);
	ck_assert_uint_eq(st.evictions_probation, 5);
	ck_assert_uint_eq(st.evictions_main, 0);
	lruhash_free(h);
}
END_TEST

/*
 * A flood of keys asked once, 20 times what the table holds, cannot evict
 * an entry asked twice: it is in main, which the flood does not reach
 * but for the few whose fingerprint the ghost mistakes for one that left
 * (about 3 %: 60 here, each taking main one step, while the entry is worth
 * three laps of its 100 entries). Under LRU it went with the first 100.
 */
START_TEST(one_hit_flood_cannot_evict_asked_twice)
{
	struct lruhash *h = lruhash_new(1, 100 * CHARGE, &items);
	struct lruhash_stats st;
	char key[32];
	int i;

	ck_assert_int_eq(put(h, "service", 7, SIZE), 0);
	ck_assert_int_eq(get(h, "service"), 7);
	ck_assert_int_eq(get(h, "service"), 7);
	for (i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "once%d", i);
		ck_assert_int_eq(put(h, key, i, SIZE), 0);
		ck_assert_int_eq(lruhash_check(h), 0);
	}
	ck_assert_int_eq(queue_of(h, "service"), EVICT_MAIN);
	ck_assert_int_eq(get(h, "service"), 7);
	lruhash_stats(h, &st);
	ck_assert_uint_eq(st.entries, 100);
	ck_assert_uint_eq(st.bytes, 100 * CHARGE);
	ck_assert_uint_eq(st.evictions, 2001 - 100);
	ck_assert_uint_gt(st.evictions_probation, st.evictions_main * 10);
	lruhash_free(h);
}
END_TEST

/*
 * A random sequence of inserts (of keys old and new, of random sizes),
 * hits, peeks, removals and walks on a table of 4 shards, checked after
 * each step against a model (what each key last held, whether it was
 * removed): every entry found holds the model's value; a removed key is
 * never found; a key goes missing otherwise only by an eviction, which
 * the counts show; the bound holds; and each shard's buckets and queues
 * agree (lruhash_check).
 */
#define MODEL_KEYS	400

struct model {
	int		value[MODEL_KEYS];	/* -1: removed or never stored */
	int		present[MODEL_KEYS];	/* found at the last look */
	char		key[MODEL_KEYS][8];
	uint64_t	hash[MODEL_KEYS];
};

static enum lruhash_verdict
remove_visit(struct lruhash_node *n, void *arg)
{
	*(int *)arg = ITEM_OF(n)->v;
	return LRUHASH_REMOVE;
}

static enum lruhash_verdict
remove_mod7(struct lruhash_node *n, void *arg)
{
	(void)arg;
	return ITEM_OF(n)->v % 7 == 0 ? LRUHASH_REMOVE : LRUHASH_KEEP;
}

/* Look at every key; returns how many went missing since the last look
 * without being removed (evicted). */
static uint64_t
model_compare(struct lruhash *h, struct model *m)
{
	uint64_t gone = 0;
	int k, v;

	for (k = 0; k < MODEL_KEYS; k++) {
		v = -1;
		lruhash_peek(h, m->hash[k], m->key[k], strlen(m->key[k]),
		    read_int, &v);
		if (v != -1) {
			if (v != m->value[k])
				ck_abort_msg("%s holds %d, not %d", m->key[k],
				    v, m->value[k]);
		} else if (m->present[k])
			gone++;
		m->present[k] = v != -1;
	}
	return gone;
}

START_TEST(random_against_model)
{
	const uint64_t max = 4 * 30 * CHARGE;
	struct lruhash *h = lruhash_new(4, max, &items);
	struct lruhash_stats st;
	static struct model m;
	uint64_t evicted = 0, x = 12345;
	unsigned step;
	char key[16];
	int k, v, op;

	for (k = 0; k < MODEL_KEYS; k++) {
		m.value[k] = -1;
		m.present[k] = 0;
		snprintf(m.key[k], sizeof(m.key[k]), "k%d", k);
		m.hash[k] = lruhash_hash(h, m.key[k], strlen(m.key[k]));
	}
	for (step = 0; step < 5000; step++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		/* A skewed key: a few asked often, most seldom. */
		k = (int)((x >> 33) % MODEL_KEYS);
		if ((x >> 20) % 3 == 0)
			k %= 30;
		op = (int)((x >> 12) % 100);
		snprintf(key, sizeof(key), "k%d", k);
		if (op < 45) {
			v = (int)step;
			ck_assert_int_eq(put(h, key, v, 20 + (x >> 40) % 300), 0);
			m.value[k] = v;
			m.present[k] = 1;
		} else if (op < 85)
			(void)get(h, key);
		else if (op < 93)
			(void)lruhash_peek(h, lruhash_hash(h, key,
			    strlen(key)), key, strlen(key), read_int, &v);
		else if (op < 99) {
			v = -1;
			lruhash_lookup(h, lruhash_hash(h, key, strlen(key)), key,
			    strlen(key), remove_visit, &v);
			if (v != -1)
				ck_assert_int_eq(v, m.value[k]);
			m.value[k] = -1;
			m.present[k] = 0;
		} else {
			/* Walk-remove every value divisible by 7. */
			lruhash_walk(h, remove_mod7, NULL);
			for (k = 0; k < MODEL_KEYS; k++)
				if (m.value[k] % 7 == 0) {
					m.value[k] = -1;
					m.present[k] = 0;
				}
		}
		ck_assert_uint_eq(lruhash_check(h), 0);
		evicted += model_compare(h, &m);
		lruhash_stats(h, &st);
		ck_assert_uint_le(st.bytes, max);
		ck_assert_uint_eq(st.evictions, evicted);
	}
	lruhash_stats(h, &st);
	ck_assert_uint_gt(st.evictions_probation, 0);
	ck_assert_uint_gt(st.evictions_main, 0);
	lruhash_free(h);
}
END_TEST

static Suite *
lruhash_suite(void)
{
	Suite *s = suite_create("lruhash");
	TCase *tc = tcase_create("core");

	/* random_against_model looks at every key after every step. */
	tcase_set_timeout(tc, 60);

	tcase_add_test(tc, insert_lookup_replace);
	tcase_add_test(tc, replace_refused);
	tcase_add_test(tc, bound_and_order);
	tcase_add_test(tc, walk_removes);
	tcase_add_test(tc, slices_partition_while_growing);
	tcase_add_test(tc, hash_is_keyed);
	tcase_add_test(tc, first_insert_out_of_memory);
	tcase_add_test(tc, asked_again_is_promoted);
	tcase_add_test(tc, one_hit_flood_cannot_evict_asked_twice);
	tcase_add_test(tc, random_against_model);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(lruhash_suite());
}
