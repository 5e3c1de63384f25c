/* check_srv.c: RFC 2782 try order: priorities, the weighted draw, ".". */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "dnsdamper/srv.h"
#include "dnsdamper/srvrand.h"

#define DRAWS		100000
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Upper 0.001 quantiles of the chi-square distribution (a table, e.g.
 * NIST/SEMATECH e-Handbook of Statistical Methods §1.3.6.7.4): a fit whose
 * statistic exceeds them would happen by chance once in a thousand runs.
 */
static const double chi2_p001[] = { 0, 10.828, 13.816, 16.266, 18.467,
    20.515 };

START_TEST(splitmix64_reference)
{
	/* The published outputs of SplitMix64 seeded with 0 (Vigna's
	 * splitmix64.c), so --seed means the same everywhere. */
	struct srvrand_seeded s;
	struct srv_random rnd;

	srvrand_seeded(&s, 0, &rnd);
	ck_assert_uint_eq(rnd.next(rnd.state), 0xe220a8397b1dcdafULL);
	ck_assert_uint_eq(rnd.next(rnd.state), 0x6e789e6aa1b965f4ULL);
	ck_assert_uint_eq(rnd.next(rnd.state), 0x06c45d188009454fULL);
}
END_TEST

/* A Fisher-Yates shuffle of rrs by rnd: the order in which they "arrived". */
static void
shuffle(struct srv_rr *rrs, size_t n, const struct srv_random *rnd)
{
	struct srv_rr t;
	size_t i, j;

	for (i = n; i > 1; i--) {
		j = (size_t)(rnd->next(rnd->state) % i);
		t = rrs[i - 1];
		rrs[i - 1] = rrs[j];
		rrs[j] = t;
	}
}

static const uint16_t prios[] = { 0, 1, 10, 20, 65535 };
static const uint16_t weights[] = { 0, 1, 2, 100, 65535 };
static const char *const names[] = { "a.example.", "b.example.",
    "c.example.", "d.example.", "e.example.", "f.example." };

START_TEST(priority_never_inverted)
{
	/* RFC 2782: "A client MUST attempt to contact the target host with
	 * the lowest-numbered priority it can reach". 20,000 random RRsets
	 * of 1 to 12 records, priorities and weights from the extremes:
	 * the order never puts a higher number before a lower one, and it
	 * is a permutation (every record once). */
	struct srv_rr rrs[12], orig[12];
	struct srvrand_seeded gs, ds;
	struct srv_random gen, draw;
	size_t n, i, j, seen;
	int k;

	srvrand_seeded(&gs, 42, &gen);
	for (k = 0; k < 20000; k++) {
		n = 1 + (size_t)(gen.next(gen.state) % 12);
		for (i = 0; i < n; i++) {
			rrs[i].priority = prios[gen.next(gen.state) % 5];
			rrs[i].weight = weights[gen.next(gen.state) % 5];
			rrs[i].port = (uint16_t)i;	/* identifies it */
			rrs[i].target = names[gen.next(gen.state) % 6];
		}
		memcpy(orig, rrs, sizeof(rrs));
		srvrand_seeded(&ds, (uint64_t)k, &draw);
		srv_order(rrs, n, &draw);
		for (i = 1; i < n; i++)
			ck_assert_uint_le(rrs[i - 1].priority, rrs[i].priority);
		for (i = 0, seen = 0; i < n; i++)
			for (j = 0; j < n; j++)
				if (rrs[j].port == orig[i].port) {
					ck_assert_uint_eq(rrs[j].priority,
					    orig[i].priority);
					ck_assert_uint_eq(rrs[j].weight,
					    orig[i].weight);
					seen++;
				}
		ck_assert_uint_eq(seen, n);
	}
}
END_TEST

START_TEST(backup_never_first)
{
	/* A backup at priority 20 with weight 65535 and a primary at 10
	 * with weight 1: the primary comes first for every one of 100,000
	 * seeds, and through the iterator as well. */
	struct srv_rr rrs[2];
	struct srvrand_seeded s;
	struct srv_random rnd;
	struct srv_iter it;
	uint64_t seed;

	for (seed = 1; seed <= DRAWS; seed++) {
		rrs[0] = (struct srv_rr){ 20, 65535, 8081, "backup.example." };
		rrs[1] = (struct srv_rr){ 10, 1, 8080, "primary.example." };
		srvrand_seeded(&s, seed, &rnd);
		srv_iter_init(&it, rrs, 2, &rnd);
		ck_assert_str_eq(srv_iter_next(&it)->target,
		    "primary.example.");
		ck_assert_str_eq(srv_iter_next(&it)->target,
		    "backup.example.");
		ck_assert_ptr_null(srv_iter_next(&it));
	}
}
END_TEST

/*
 * Order set[0..n) (given in canonical order) for seeds 1..DRAWS, each
 * time from an arrival order shuffled by another generator, and count
 * which record comes first: counts[i] for set[i].
 */
static void
first_picks(const struct srv_rr *set, size_t n, unsigned *counts)
{
	struct srv_rr rrs[8];
	struct srvrand_seeded ss, ds;
	struct srv_random shuf, draw;
	uint64_t seed;
	size_t i;

	memset(counts, 0, n * sizeof(*counts));
	srvrand_seeded(&ss, 0x5eed, &shuf);
	for (seed = 1; seed <= DRAWS; seed++) {
		memcpy(rrs, set, n * sizeof(*rrs));
		shuffle(rrs, n, &shuf);
		srvrand_seeded(&ds, seed, &draw);
		srv_order(rrs, n, &draw);
		for (i = 0; i < n; i++)
			if (strcmp(rrs[0].target, set[i].target) == 0)
				counts[i]++;
	}
}

/* Chi-square of counts[0..n) against expected[0..n), n - 1 degrees of
 * freedom, asserted below the critical value at p = 0.001. */
static void
check_chi2(const char *name, const unsigned *counts, const double *expected,
    size_t n)
{
	double chi2 = 0, d;
	size_t i;

	for (i = 0; i < n; i++) {
		d = counts[i] - expected[i];
		chi2 += d * d / expected[i];
		printf("  %s %zu: expected %.1f, drawn %u\n", name, i,
		    expected[i], counts[i]);
	}
	printf("%s: chi-square %.3f, %zu degrees of freedom, critical value "
	    "at p = 0.001 %.3f\n", name, chi2, n - 1, chi2_p001[n - 1]);
	ck_assert_double_lt(chi2, chi2_p001[n - 1]);
}

/*
 * The expected first-pick counts of RFC 2782's draw: r uniform in
 * [0, sum] inclusive, so sum + 1 equally likely values; the first record
 * whose running sum is >= r wins. The head of the list wins for r in
 * [0, w0], w0 + 1 values; record i > 0 for r in (S(i-1), S(i)], w(i)
 * values. Draws first_picks and checks the counts against them with a
 * chi-square test at p = 0.001, n - 1 degrees of freedom. set[0] must be
 * the only weight-0 record, if any, so the shuffle leaves it the head.
 */
static void
check_first_picks(const char *name, const struct srv_rr *set, size_t n)
{
	unsigned counts[8];
	double sum = 0, e[8];
	size_t i;

	first_picks(set, n, counts);
	for (i = 0; i < n; i++)
		sum += set[i].weight;
	for (i = 0; i < n; i++)
		e[i] = DRAWS * (set[i].weight + (i == 0 ? 1.0 : 0.0)) /
		    (sum + 1);
	check_chi2(name, counts, e, n);
}

START_TEST(weighted_first_pick_with_zero)
{
	/* In canonical order: the weight-0 record heads the list (RFC 2782
	 * puts weight 0 first), though its name sorts last; then by name.
	 * sum = 10: expected first picks 1/11, 4/11, 3/11, 2/11, 1/11. */
	static const struct srv_rr set[] = {
		{ 10, 0, 1, "z.example." },
		{ 10, 4, 1, "a.example." },
		{ 10, 3, 1, "b.example." },
		{ 10, 2, 1, "c.example." },
		{ 10, 1, 1, "d.example." },
	};

	check_first_picks("weighted_first_pick_with_zero", set, NELEM(set));
}
END_TEST

START_TEST(weighted_first_pick)
{
	/* No weight 0: the head is the first by name, a.example., which so
	 * has 3 + 1 of 11 chances; b 1, c 2, d 4 of 11. */
	static const struct srv_rr set[] = {
		{ 10, 3, 1, "a.example." },
		{ 10, 1, 1, "b.example." },
		{ 10, 2, 1, "c.example." },
		{ 10, 4, 1, "d.example." },
	};

	check_first_picks("weighted_first_pick", set, NELEM(set));
}
END_TEST

START_TEST(weight_zero_rarely_first)
{
	/* RFC 2782: weight-0 records "should have a very small chance of
	 * being selected". Both go to the head of the list, in an order
	 * shuffled with the random source, and the head has 1 of sum + 1 =
	 * 1001 chances: each weight-0 record is first with probability
	 * 1/2 * 1/1001 (about 49.95 of 100,000), c with 1000/1001. */
	static const struct srv_rr set[] = {
		{ 10, 0, 1, "a.example." },
		{ 10, 0, 1, "b.example." },
		{ 10, 1000, 1, "c.example." },
	};
	unsigned counts[NELEM(set)];
	double e[NELEM(set)] = { DRAWS / 2002.0, DRAWS / 2002.0,
	    DRAWS * 1000 / 1001.0 };

	first_picks(set, NELEM(set), counts);
	check_chi2("weight_zero_rarely_first", counts, e, NELEM(set));
}
END_TEST

START_TEST(all_weights_zero)
{
	/* sum = 0: r = 0 every time and the head wins each draw, so the
	 * order is that of the shuffle: each record first with probability
	 * 1/3, not the canonical first on every host. */
	static const struct srv_rr set[] = {
		{ 10, 0, 1, "A.example." },
		{ 10, 0, 1, "b.example." },
		{ 10, 0, 1, "c.example." },
	};
	unsigned counts[NELEM(set)];
	double e[NELEM(set)] = { DRAWS / 3.0, DRAWS / 3.0, DRAWS / 3.0 };

	first_picks(set, NELEM(set), counts);
	check_chi2("all_weights_zero", counts, e, NELEM(set));
}
END_TEST

START_TEST(arrival_order_does_not_matter)
{
	/* The same seed on the same RRset gives the same order from each of
	 * the 24 arrival orders of four records, whatever the case of the
	 * targets (names compare case-insensitively). */
	static const struct srv_rr set[] = {
		{ 10, 5, 1, "a.example." },
		{ 10, 5, 2, "B.example." },
		{ 10, 50, 3, "c.example." },
		{ 20, 0, 4, "d.example." },
	};
	static const int perm[24][4] = {
		{0,1,2,3},{0,1,3,2},{0,2,1,3},{0,2,3,1},{0,3,1,2},{0,3,2,1},
		{1,0,2,3},{1,0,3,2},{1,2,0,3},{1,2,3,0},{1,3,0,2},{1,3,2,0},
		{2,0,1,3},{2,0,3,1},{2,1,0,3},{2,1,3,0},{2,3,0,1},{2,3,1,0},
		{3,0,1,2},{3,0,2,1},{3,1,0,2},{3,1,2,0},{3,2,0,1},{3,2,1,0},
	};
	struct srv_rr rrs[4], first[4];
	struct srvrand_seeded s;
	struct srv_random rnd;
	uint64_t seed;
	size_t p, i;

	for (seed = 1; seed <= 50; seed++)
		for (p = 0; p < 24; p++) {
			for (i = 0; i < 4; i++) {
				rrs[i] = set[perm[p][i]];
				if (p % 2 == 1 && rrs[i].port == 1)
					rrs[i].target = "A.EXAMPLE.";
			}
			srvrand_seeded(&s, seed, &rnd);
			srv_order(rrs, 4, &rnd);
			if (p == 0)
				memcpy(first, rrs, sizeof(rrs));
			for (i = 0; i < 4; i++)
				ck_assert_uint_eq(rrs[i].port, first[i].port);
		}
}
END_TEST

START_TEST(unavailable_only_alone)
{
	/* RFC 2782: "A Target of "." means that the service is decidedly not
	 * available at this domain" -- when it is the one record. */
	struct srv_rr dot = { 0, 0, 0, "." };
	struct srv_rr host = { 0, 0, 80, "host.example." };
	struct srv_rr two[2] = { { 0, 0, 0, "." }, { 10, 1, 80, "h.example." } };
	struct srvrand_seeded s;
	struct srv_random rnd;
	struct srv_iter it;

	ck_assert_int_eq(srv_unavailable(&dot, 1), 1);
	ck_assert_int_eq(srv_unavailable(&host, 1), 0);
	ck_assert_int_eq(srv_unavailable(two, 2), 0);
	ck_assert_int_eq(srv_unavailable(NULL, 0), 0);
	/* among others, "." is just not a candidate */
	srvrand_seeded(&s, 1, &rnd);
	srv_iter_init(&it, two, 2, &rnd);
	ck_assert_str_eq(srv_iter_next(&it)->target, "h.example.");
	ck_assert_ptr_null(srv_iter_next(&it));
	srv_iter_init(&it, NULL, 0, &rnd);
	ck_assert_ptr_null(srv_iter_next(&it));
}
END_TEST

static Suite *
srv_suite(void)
{
	Suite *s = suite_create("srv");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, splitmix64_reference);
	tcase_add_test(tc, priority_never_inverted);
	tcase_add_test(tc, backup_never_first);
	tcase_add_test(tc, weighted_first_pick_with_zero);
	tcase_add_test(tc, weighted_first_pick);
	tcase_add_test(tc, weight_zero_rarely_first);
	tcase_add_test(tc, all_weights_zero);
	tcase_add_test(tc, arrival_order_does_not_matter);
	tcase_add_test(tc, unavailable_only_alone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(srv_suite());
}
