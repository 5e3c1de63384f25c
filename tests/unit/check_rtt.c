/* check_rtt.c: RFC 6298 arithmetic of the RTT estimator, in ms. */
#include "autoconf.h"

#include <check.h>

#include "check_main.h"
#include "rtt.h"

START_TEST(initial)
{
	struct rtt r;

	rtt_init(&r, 50, 2000);
	ck_assert_uint_eq(r.rto, RTT_INITIAL_MS);
	rtt_init(&r, 50, 300);
	ck_assert_uint_eq(r.rto, 300);		/* clamped to max */
	rtt_init(&r, 500, 2000);
	ck_assert_uint_eq(r.rto, 500);		/* clamped to min */
}
END_TEST

START_TEST(samples)
{
	struct rtt r;

	rtt_init(&r, 50, 2000);
	/* §2.2: SRTT = R = 100, RTTVAR = R/2 = 50, RTO = 100 + 4*50 = 300. */
	rtt_sample(&r, 100, 50, 2000);
	ck_assert_uint_eq(r.srtt, 100);
	ck_assert_uint_eq(r.rttvar, 50);
	ck_assert_uint_eq(r.rto, 300);
	/* §2.3 with R' = 200: RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5 -> 62,
	 * SRTT = 7/8*100 + 1/8*200 = 112.5 -> 112, RTO = 112 + 4*62 = 360. */
	rtt_sample(&r, 200, 50, 2000);
	ck_assert_uint_eq(r.rttvar, 62);
	ck_assert_uint_eq(r.srtt, 112);
	ck_assert_uint_eq(r.rto, 360);
	/* A loopback upstream answering in 0 ms: RTO floors at the min. */
	rtt_init(&r, 50, 2000);
	rtt_sample(&r, 0, 50, 2000);
	ck_assert_uint_eq(r.rto, 50);
}
END_TEST

START_TEST(timeouts)
{
	struct rtt r;

	rtt_init(&r, 50, 2000);
	rtt_sample(&r, 100, 50, 2000);		/* RTO 300 */
	/* §5.5: back off by doubling the timeout that was used. */
	rtt_timeout(&r, 300, 50, 2000);
	ck_assert_uint_eq(r.rto, 600);
	rtt_timeout(&r, 600, 50, 2000);
	ck_assert_uint_eq(r.rto, 1200);
	rtt_timeout(&r, 1200, 50, 2000);
	ck_assert_uint_eq(r.rto, 2000);		/* max */
	/* A stale loss of a query sent with 300 does not shrink it. */
	rtt_timeout(&r, 300, 50, 2000);
	ck_assert_uint_eq(r.rto, 2000);
	rtt_clamp(&r, 50, 1000);
	ck_assert_uint_eq(r.rto, 1000);
}
END_TEST

static Suite *
rtt_suite(void)
{
	Suite *s = suite_create("rtt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, initial);
	tcase_add_test(tc, samples);
	tcase_add_test(tc, timeouts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(rtt_suite());
}
