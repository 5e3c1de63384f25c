/* check_ratelimit.c: unit tests of ratelimit at exact instants. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "check_main.h"
#include "ratelimit.h"
#include "testaddr.h"
#include "testhashkey.h"

#define P	RATELIMIT_PASS
#define D	RATELIMIT_DROP
#define S	RATELIMIT_SLIP

#define A(str)	testaddr_parse((str), 53)

/* The ratelimit and ratelimit-slip of the configuration the checking
 * worker serves with (each test sets them, with serving). */
static uint32_t qps, slip;

static void
serving(uint32_t q, uint32_t s)
{
	qps = q;
	slip = s;
}

/* n queries from str at now: each verdict must be the next of want. */
static void
expect(struct ratelimit *rl, const char *str, uint64_t now,
    const enum ratelimit_verdict *want, size_t n)
{
	enum ratelimit_verdict v;
	struct addr a = A(str);
	size_t i;

	for (i = 0; i < n; i++) {
		v = ratelimit_check(rl, &a, qps, slip, now);
		ck_assert_msg(v == want[i], "%s at %llu ms, query %zu: verdict "
		    "%d, not %d", str, (unsigned long long)now, i, v, want[i]);
	}
}

#define EXPECT(rl, str, now, ...) do {					\
	const enum ratelimit_verdict w_[] = { __VA_ARGS__ };		\
	expect((rl), (str), (now), w_, sizeof(w_) / sizeof(w_[0]));	\
} while (0)

/*
 * ratelimit 2: the bucket holds 2 queries and refills one every 500 ms.
 * Slip 2: the 2nd, 4th... query over the limit is slipped.
 */
START_TEST(test_bucket)
{
	struct ratelimit *rl;

	ck_assert_ptr_nonnull(rl = ratelimit_new(100));
	serving(2, 2);
	/* t=0: 2 pass, then over: drop, slip, drop, slip. */
	EXPECT(rl, "192.0.2.1", 0, P, P, D, S, D, S);
	/* 499 ms refill 998 thousandths: not yet a whole query. The count
	 * over the limit goes on: 5th dropped, 6th slipped. */
	EXPECT(rl, "192.0.2.1", 499, D, S);
	/* 500 ms: one query's worth, and the count starts again. */
	EXPECT(rl, "192.0.2.1", 500, P, D, S);
	/* 1000 ms later, a full bucket again (2, no more). */
	EXPECT(rl, "192.0.2.1", 1500, P, P, D);
	/* Another address has its own bucket; the port does not count. */
	EXPECT(rl, "192.0.2.2:5353", 1500, P, P, D);
	EXPECT(rl, "192.0.2.2:5354", 1500, S);
	/* Long idle: full, not more than full. */
	EXPECT(rl, "192.0.2.1", 1000000, P, P, D);
	ratelimit_free(rl);
}
END_TEST

/* Slip 0 drops everything over the limit, slip 1 slips everything. */
START_TEST(test_slip_ends)
{
	struct ratelimit *rl;

	ck_assert_ptr_nonnull(rl = ratelimit_new(10));
	serving(1, 0);
	EXPECT(rl, "192.0.2.1", 0, P, D, D, D, D);
	serving(1, 1);
	EXPECT(rl, "192.0.2.1", 0, S, S, S);
	serving(1, 3);
	EXPECT(rl, "192.0.2.1", 1000, P, D, D, S, D, D, S);
	ratelimit_free(rl);
}
END_TEST

/* A reload that lowers the rate empties fuller buckets down to it. */
START_TEST(test_rate_lowered)
{
	struct ratelimit *rl;

	ck_assert_ptr_nonnull(rl = ratelimit_new(10));
	serving(100, 2);
	EXPECT(rl, "2001:db8::1", 0, P);	/* 99 left */
	serving(2, 2);
	EXPECT(rl, "2001:db8::1", 0, P, P, D, S);
	/* Refill at the new rate: 2 a second, one per 500 ms. */
	EXPECT(rl, "2001:db8::1", 500, P, D);
	ratelimit_free(rl);
}
END_TEST

/*
 * A reload from ratelimit 100 to 2, then to 0 (off), while two workers
 * serve: each checks with the rate of the snapshot it serves with, never
 * with one the other swapped to first. Worker 1, still on ratelimit 100,
 * takes its token from a bucket worker 0 (on ratelimit 2) emptied down
 * to 2; worker 0, on ratelimit 0, lets everything through and leaves the
 * table alone, while worker 1 still limits at 100: a new address starts
 * with 100 tokens, its first taken (not 0 - 1 token, which wrapped
 * around to 2^64 - 1000 thousandths when a reload set 0 under it).
 */
START_TEST(test_parameters_of_each_snapshot)
{
	struct ratelimit_stats st;
	struct ratelimit *rl;
	int i;

	ck_assert_ptr_nonnull(rl = ratelimit_new(10));
	serving(100, 2);
	EXPECT(rl, "192.0.2.1", 0, P);		/* 99 left */
	serving(2, 2);				/* worker 0 swapped */
	EXPECT(rl, "192.0.2.1", 0, P);		/* down to 2: 1 left */
	serving(100, 2);			/* worker 1 has not */
	EXPECT(rl, "192.0.2.1", 0, P, D, S);	/* 1 left, then over */
	/* 10 ms at 100 a second refill one token (not 10 ms at 2) */
	EXPECT(rl, "192.0.2.1", 10, P, D);
	serving(0, 2);				/* worker 0: off */
	for (i = 0; i < 1000; i++)
		EXPECT(rl, "192.0.2.2", 10, P);
	ratelimit_stats(rl, &st);
	ck_assert_uint_eq(st.tracked, 1);	/* .2 never went in */
	serving(100, 2);			/* worker 1: still 100 */
	for (i = 0; i < 100; i++)
		EXPECT(rl, "192.0.2.2", 10, P);
	EXPECT(rl, "192.0.2.2", 10, D, S);
	ratelimit_free(rl);
}
END_TEST

/* IPv4 clients are one bucket whether they came as IPv4 or mapped. */
START_TEST(test_mapped_same_bucket)
{
	struct addr mapped = testaddr_v6("::ffff:192.0.2.9", 1234);
	struct ratelimit *rl;

	ck_assert_ptr_nonnull(rl = ratelimit_new(10));
	serving(1, 0);
	EXPECT(rl, "192.0.2.9", 0, P);
	ck_assert_int_eq(ratelimit_check(rl, &mapped, qps, slip, 0), D);
	ratelimit_free(rl);
}
END_TEST

/*
 * The table holds size addresses; a new one beyond takes the place of one
 * seen only once if there is one (S3-FIFO, evict.h: the probationary
 * queue's oldest; an address seen again there moves to the main queue),
 * which then starts over with a full bucket. A flood of new addresses
 * cannot reset the buckets of those seen twice.
 */
START_TEST(test_table_bound)
{
	struct ratelimit_stats st;
	struct ratelimit *rl;
	char name[32];
	int i;

	ck_assert_ptr_nonnull(rl = ratelimit_new(4));
	serving(1, 0);
	ck_assert_uint_eq(ratelimit_size(rl), 4);
	EXPECT(rl, "192.0.2.1", 0, P, D);	/* A: empty bucket, seen
						 * twice */
	EXPECT(rl, "192.0.2.2", 0, P);		/* B */
	EXPECT(rl, "192.0.2.3", 0, P);		/* C */
	EXPECT(rl, "192.0.2.4", 0, P);		/* D: full table */
	EXPECT(rl, "192.0.2.1", 0, D);		/* A again */
	EXPECT(rl, "192.0.2.5", 0, P);		/* E: A, the oldest, was seen
						 * again: to main; B goes */
	ratelimit_stats(rl, &st);
	ck_assert_uint_eq(st.tracked, 4);
	ck_assert_uint_eq(st.evictions, 1);
	EXPECT(rl, "192.0.2.1", 0, D);		/* A still known */
	EXPECT(rl, "192.0.2.2", 0, P, D);	/* B forgotten: new bucket,
						 * to main (it left lately);
						 * evicts C */
	EXPECT(rl, "192.0.2.6", 0, P);		/* evicts D */
	EXPECT(rl, "192.0.2.7", 0, P);		/* evicts E */
	EXPECT(rl, "192.0.2.8", 0, P);		/* evicts .6, not A or B */
	EXPECT(rl, "192.0.2.1", 0, D);		/* A still known */
	EXPECT(rl, "192.0.2.2", 0, D);		/* B too */
	ratelimit_stats(rl, &st);
	ck_assert_uint_eq(st.tracked, 4);
	ck_assert_uint_eq(st.evictions, 5);
	/* A and B outlast a flood of ten tables' worth of addresses (a
	 * longer one can reach them: 3 % of new addresses look like ones
	 * that left lately, go to main and take it a step round). */
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "2001:db8::%x", i);
		EXPECT(rl, name, 0, P);
	}
	EXPECT(rl, "192.0.2.1", 0, D);
	EXPECT(rl, "192.0.2.2", 0, D);
	ratelimit_free(rl);

	/* A flood of distinct addresses: never more than size tracked. */
	ck_assert_ptr_nonnull(rl = ratelimit_new(1000));
	serving(10, 2);
	for (i = 0; i < 50000; i++) {
		snprintf(name, sizeof(name), "2001:db8::%x:%x", i >> 16,
		    i & 0xffff);
		EXPECT(rl, name, (uint64_t)i, P);
		if (i % 997 == 0) {
			ratelimit_stats(rl, &st);
			ck_assert_uint_le(st.tracked, 1000);
		}
	}
	ratelimit_stats(rl, &st);
	ck_assert_uint_eq(st.tracked, 1000);
	ck_assert_uint_eq(st.evictions, 49000);
	ratelimit_free(rl);
}
END_TEST

static Suite *
ratelimit_suite(void)
{
	Suite *s = suite_create("ratelimit");
	TCase *tc = tcase_create("ratelimit");

	/* Floods of 5,000 to 50,000 inserts: a fraction of a second of CPU,
	 * but more than Check's 4 s under ThreadSanitizer on a machine
	 * loaded 10 deep. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_bucket);
	tcase_add_test(tc, test_slip_ends);
	tcase_add_test(tc, test_rate_lowered);
	tcase_add_test(tc, test_parameters_of_each_snapshot);
	tcase_add_test(tc, test_mapped_same_bucket);
	tcase_add_test(tc, test_table_bound);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(ratelimit_suite());
}
