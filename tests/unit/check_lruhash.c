/* check_lruhash.c: unit tests of the byte-bounded sharded LRU table. */
#include "autoconf.h"

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "lruhash.h"

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

START_TEST(bound_and_lru_order)
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
	ck_assert_int_eq(get(h, "k0"), 0);	/* k0 now most recent */
	ck_assert_int_eq(put(h, "k4", 4, 900), 0);
	ck_assert_int_eq(get(h, "k1"), -1);	/* the least recent went */
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
	lruhash_free(h);
}
END_TEST

static Suite *
lruhash_suite(void)
{
	Suite *s = suite_create("lruhash");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, insert_lookup_replace);
	tcase_add_test(tc, replace_refused);
	tcase_add_test(tc, bound_and_lru_order);
	tcase_add_test(tc, walk_removes);
	tcase_add_test(tc, slices_partition_while_growing);
	tcase_add_test(tc, hash_is_keyed);
	tcase_add_test(tc, first_insert_out_of_memory);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(lruhash_suite());
}
