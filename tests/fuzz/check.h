/*
 * check.h: the few Check assertions that tests/unit's helpers (testnet.h,
 * testpkt.h, testcache.h) use, as aborts, so that the fuzz targets can
 * use those helpers without Check's test runner; a failed one is a crash
 * that libFuzzer reports with its input. Found before the system's
 * <check.h> because the targets are built with -I tests/fuzz first.
 */
#ifndef DNSDAMPER_FUZZ_CHECK_H
#define DNSDAMPER_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define ck_assert_msg(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: assertion failed: %s\n",	\
		    __FILE__, __LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)
#define ck_assert(cond)			ck_assert_msg(cond, "%s", "")
#define ck_assert_int_eq(a, b)		ck_assert((a) == (b))
#define ck_assert_int_lt(a, b)		ck_assert((a) < (b))
#define ck_assert_uint_lt(a, b)		ck_assert((a) < (b))
#define ck_assert_uint_le(a, b)		ck_assert((a) <= (b))
#define ck_assert_ptr_nonnull(p)	ck_assert((p) != NULL)

#endif
