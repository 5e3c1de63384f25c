/* check_upstream.c: the upstream registry, per-zone counters and health. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "upstream.h"

START_TEST(stats_never_move)
{
	struct upstream_stats *st;
	struct upstream *u;
	struct addr a;
	const char *err;
	char zone[32];
	size_t i;

	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &a, &err), 0);
	u = upstream_get(&a);
	/* An attempt in flight holds its zone's counters by address... */
	ck_assert_ptr_nonnull(st = upstream_stats_for(u, "a.test."));
	st->queries = 1;
	/* ...while queries through other zones make theirs. */
	for (i = 0; i < 100; i++) {
		snprintf(zone, sizeof(zone), "z%zu.test.", i);
		ck_assert_ptr_nonnull(upstream_stats_for(u, zone));
	}
	/* The answer is counted where the attempt points: still a.test.'s. */
	st->answers++;
	ck_assert_ptr_eq(upstream_stats_for(u, "a.test."), st);
	ck_assert_uint_eq(upstream_stats_for(u, "a.test.")->queries, 1);
	ck_assert_uint_eq(upstream_stats_for(u, "a.test.")->answers, 1);
	upstream_unref(u);
}
END_TEST

static Suite *
upstream_suite(void)
{
	Suite *s = suite_create("upstream");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, stats_never_move);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(upstream_suite());
}
