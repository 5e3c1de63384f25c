/* check_inflight.c: the in-flight index: claims, waiters, their wakeups. */
#include "autoconf.h"

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "cache.h"
#include "check_main.h"
#include "inflight.h"

#define WORKERS	4

/* What each worker was told: keys (by their first octet) and how often. */
static unsigned told[WORKERS];
static uint8_t told_key[WORKERS];

static void
notify(void *arg, const struct cache_key *key)
{
	unsigned w = (unsigned)(uintptr_t)arg;

	__atomic_add_fetch(&told[w], 1, __ATOMIC_SEQ_CST);
	/* 0 for the word that an upstream is back (key NULL) */
	__atomic_store_n(&told_key[w], key != NULL ? key->data[0] : 0,
	    __ATOMIC_SEQ_CST);
}

/* A key of octets c, len long, its hash made from them: the index needs
 * only equality and a spread of hashes. */
static struct cache_key
key_of(uint8_t c, size_t len)
{
	struct cache_key k;

	memset(&k, 0, sizeof(k));
	memset(k.data, c, len);
	k.len = len;
	k.hash = 0x9e3779b97f4a7c15ULL * (c + 1) + len;
	return k;
}

static struct inflight *
index_new(void)
{
	struct inflight *idx;
	unsigned i;

	memset(told, 0, sizeof(told));
	ck_assert_ptr_nonnull(idx = inflight_new(WORKERS));
	for (i = 0; i < WORKERS; i++)
		inflight_notify(idx, i, notify, (void *)(uintptr_t)i);
	return idx;
}

/*
 * Worker 0 claims; 1 waits; 2 asks not to wait; 0 asking again is told
 * to fetch on its own (a fetch of its own not yet released). Only the
 * owner releases; then 1 alone is told, once, and the key is free.
 */
START_TEST(claim_wait_release)
{
	struct inflight *idx = index_new();
	struct cache_key a = key_of('a', 10);

	ck_assert_int_eq(inflight_claim(idx, &a, 0, 1, 1000), INFLIGHT_OWNER);
	ck_assert_uint_eq(inflight_started(idx, &a), 1000);
	ck_assert_int_eq(inflight_claim(idx, &a, 1, 1, 1001),
	    INFLIGHT_WAITING);
	ck_assert_int_eq(inflight_claim(idx, &a, 1, 1, 1002),
	    INFLIGHT_WAITING);
	ck_assert_int_eq(inflight_claim(idx, &a, 2, 0, 1003),
	    INFLIGHT_ELSEWHERE);
	ck_assert_int_eq(inflight_claim(idx, &a, 0, 1, 1004),
	    INFLIGHT_ELSEWHERE);
	inflight_release(idx, &a, 1);		/* not its to release */
	ck_assert_uint_eq(told[1], 0);
	ck_assert_uint_eq(inflight_started(idx, &a), 1000);
	inflight_release(idx, &a, 0);
	ck_assert_uint_eq(told[0], 0);
	ck_assert_uint_eq(told[1], 1);
	ck_assert_uint_eq(told_key[1], 'a');
	ck_assert_uint_eq(told[2], 0);
	ck_assert_uint_eq(told[3], 0);
	ck_assert_uint_eq(inflight_started(idx, &a), 0);
	ck_assert_int_eq(inflight_claim(idx, &a, 2, 1, 2000), INFLIGHT_OWNER);
	inflight_release(idx, &a, 2);
	ck_assert_uint_eq(told[1], 1);
	inflight_free(idx);
}
END_TEST

/* Keys differing only in length, or colliding in hash, are apart. */
START_TEST(keys_apart)
{
	struct inflight *idx = index_new();
	struct cache_key a = key_of('a', 10), b = key_of('a', 11), c;

	c = key_of('c', 10);
	c.hash = a.hash;
	ck_assert_int_eq(inflight_claim(idx, &a, 0, 1, 1), INFLIGHT_OWNER);
	ck_assert_int_eq(inflight_claim(idx, &b, 1, 1, 1), INFLIGHT_OWNER);
	ck_assert_int_eq(inflight_claim(idx, &c, 2, 1, 1), INFLIGHT_OWNER);
	ck_assert_int_eq(inflight_claim(idx, &c, 3, 1, 1), INFLIGHT_WAITING);
	inflight_release(idx, &a, 0);
	inflight_release(idx, &b, 1);
	ck_assert_uint_eq(told[3], 0);
	inflight_release(idx, &c, 2);
	ck_assert_uint_eq(told[3], 1);
	ck_assert_uint_eq(told_key[3], 'c');
	/* A claim left at free is freed with the index. */
	ck_assert_int_eq(inflight_claim(idx, &a, 0, 1, 1), INFLIGHT_OWNER);
	inflight_free(idx);
}
END_TEST

/* A worker told nothing (its notify NULL, as when shutting down). */
START_TEST(notify_off)
{
	struct inflight *idx = index_new();
	struct cache_key a = key_of('a', 4);

	inflight_notify(idx, 1, NULL, NULL);
	ck_assert_int_eq(inflight_claim(idx, &a, 0, 1, 1), INFLIGHT_OWNER);
	ck_assert_int_eq(inflight_claim(idx, &a, 1, 1, 1), INFLIGHT_WAITING);
	inflight_release(idx, &a, 0);
	ck_assert_uint_eq(told[1], 0);
	inflight_free(idx);
	ck_assert_ptr_null(inflight_new(0));
	ck_assert_ptr_null(inflight_new(INFLIGHT_WORKERS_MAX + 1));
}
END_TEST

/*
 * Worker 2 saw an upstream back: every other worker with a notify
 * function is told, once, with no key; worker 2 itself, and worker 1
 * (told nothing), are not.
 */
START_TEST(resume_tells_the_others)
{
	struct inflight *idx = index_new();

	inflight_notify(idx, 1, NULL, NULL);
	inflight_resume(idx, 2);
	ck_assert_uint_eq(told[0], 1);
	ck_assert_uint_eq(told[1], 0);
	ck_assert_uint_eq(told[2], 0);
	ck_assert_uint_eq(told[3], 1);
	ck_assert_uint_eq(told_key[0], 0);
	ck_assert_uint_eq(told_key[3], 0);
	inflight_free(idx);
}
END_TEST

#define ROUNDS	20000

static struct inflight *shared;

/*
 * One of WORKERS threads on one key: claim; as owner release it; as a
 * waiter, wait for the word it ended before claiming again. A wakeup
 * lost would leave a waiter spinning until the test's timeout.
 */
static void *
hammer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, seen;
	struct cache_key k = key_of('k', 8);
	int i;

	for (i = 0; i < ROUNDS; i++) {
		seen = __atomic_load_n(&told[w], __ATOMIC_SEQ_CST);
		switch (inflight_claim(shared, &k, w, 1, (uint64_t)i + 1)) {
		case INFLIGHT_OWNER:
			inflight_release(shared, &k, w);
			break;
		case INFLIGHT_WAITING:
			while (__atomic_load_n(&told[w], __ATOMIC_SEQ_CST) ==
			    seen)
				sched_yield();
			break;
		case INFLIGHT_ELSEWHERE:
			ck_abort_msg("worker %u: its own claim", w);
		}
	}
	return NULL;
}

START_TEST(no_wakeup_lost)
{
	struct cache_key k = key_of('k', 8);
	pthread_t t[WORKERS];
	uintptr_t i;

	shared = index_new();
	for (i = 0; i < WORKERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer,
		    (void *)i), 0);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(inflight_started(shared, &k), 0);
	inflight_free(shared);
}
END_TEST

static Suite *
inflight_suite(void)
{
	Suite *s = suite_create("inflight");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, claim_wait_release);
	tcase_add_test(tc, keys_apart);
	tcase_add_test(tc, notify_off);
	tcase_add_test(tc, resume_tells_the_others);
	tcase_add_test(tc, no_wakeup_lost);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(inflight_suite());
}
