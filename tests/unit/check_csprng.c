/* check_csprng.c: the random numbers of IDs and 0x20, a block at a time. */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "check_main.h"
#include "csprng.h"

/*
 * Numbers keep coming past the end of a block: 4 blocks' worth (4 * 64
 * draws of 4 octets), and no two consecutive blocks alike (a refill
 * that did not happen would hand the same 64 numbers out again; two
 * real blocks are equal with p = 2^-2048). Every bit position takes
 * both values: over 256 draws a bit stuck at 0 or 1 by chance has
 * p = 2^-255.
 */
START_TEST(blocks_refill)
{
	uint32_t v[4 * CSPRNG_BLOCK / 4], ones = 0, zeros = 0;
	size_t i, per = CSPRNG_BLOCK / sizeof(uint32_t);

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		v[i] = csprng_u32();
		ones |= v[i];
		zeros |= ~v[i];
	}
	ck_assert_uint_eq(ones, UINT32_MAX);
	ck_assert_uint_eq(zeros, UINT32_MAX);
	for (i = 0; i + 2 * per <= sizeof(v) / sizeof(v[0]); i += per)
		ck_assert(memcmp(v + i, v + i + per, per * sizeof(v[0])) != 0);
}
END_TEST

/*
 * csprng_uniform(n) stays below n, and for n = 3 each value comes about
 * a third of the time: 30,000 draws, 10,000 each expected, the binomial
 * standard deviation sqrt(30000 * 1/3 * 2/3) = 81.6; 9,000 to 11,000 is
 * more than 12 of them either way (a modulo bias would not show at 3,
 * but a wrong reduction would). Bounds 0 and 1 give 0.
 */
START_TEST(uniform_range)
{
	unsigned counts[3] = { 0, 0, 0 };
	uint32_t v;
	int i;

	ck_assert_uint_eq(csprng_uniform(0), 0);
	ck_assert_uint_eq(csprng_uniform(1), 0);
	for (i = 0; i < 30000; i++) {
		v = csprng_uniform(3);
		ck_assert_uint_lt(v, 3);
		counts[v]++;
	}
	for (i = 0; i < 3; i++) {
		ck_assert_uint_ge(counts[i], 9000);
		ck_assert_uint_le(counts[i], 11000);
	}
	for (i = 0; i < 1000; i++)
		ck_assert_uint_lt(csprng_uniform(UINT32_MAX), UINT32_MAX);
	for (i = 0; i < 1000; i++)
		ck_assert_uint_lt(csprng_uniform(17), 17);
}
END_TEST

static Suite *
csprng_suite(void)
{
	Suite *s = suite_create("csprng");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, blocks_refill);
	tcase_add_test(tc, uniform_range);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(csprng_suite());
}
