/* check_acl.c: unit tests of acl: networks read, printed, merged, matched. */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "addr.h"
#include "check_main.h"
#include "testaddr.h"

#define A(str)		testaddr_parse((str), 53)
#define A6(str, port)	testaddr_v6((str), (port))

/* Whether the address str is in acl / is loopback. */
static int
match(const struct acl *acl, const char *str)
{
	struct addr a = A(str);

	return acl_match(acl, &a);
}

static int
loopback(const char *str)
{
	struct addr a = A(str);

	return addr_is_loopback(&a);
}

/* A compiled list of the networks in strs (NULL-terminated). */
static void
acl_of(struct acl *acl, const char *const *strs)
{
	struct acl_prefix p;
	const char *errstr;

	memset(acl, 0, sizeof(*acl));
	for (; *strs != NULL; strs++) {
		ck_assert_msg(acl_prefix_parse(*strs, &p, &errstr) == 0,
		    "%s: %s", *strs, errstr);
		ck_assert_int_eq(acl_add(acl, &p), 0);
	}
	ck_assert_int_eq(acl_compile(acl), 0);
}

static const struct {
	const char	*in;
	const char	*canonical;
} parse_ok[] = {
	{ "10.0.0.0/8", "10.0.0.0/8" },
	{ "10.0.0.0/08", "10.0.0.0/8" },
	{ "192.0.2.1", "192.0.2.1/32" },
	{ "0.0.0.0/0", "0.0.0.0/0" },
	{ "2001:db8::/32", "2001:db8::/32" },
	{ "2001:DB8:0:0::/64", "2001:db8::/64" },
	{ "::1", "::1/128" },
	{ "::/0", "::/0" },
	{ "::/80", "::/80" },
	/* RFC 4291 §2.5.5.2: IPv4 networks written as IPv6 ones. */
	{ "::ffff:10.0.0.0/104", "10.0.0.0/8" },
	{ "::ffff:192.0.2.1", "192.0.2.1/32" },
	{ "::ffff:0:0/96", "0.0.0.0/0" },
};

START_TEST(test_parse_ok)
{
	char buf[ACL_PREFIX_STRLEN];
	struct acl_prefix p;
	const char *errstr;

	ck_assert_int_eq(acl_prefix_parse(parse_ok[_i].in, &p, &errstr), 0);
	ck_assert_str_eq(acl_prefix_format(&p, buf, sizeof(buf)),
	    parse_ok[_i].canonical);
	/* What is printed reads back as itself. */
	ck_assert_int_eq(acl_prefix_parse(buf, &p, &errstr), 0);
	ck_assert_str_eq(acl_prefix_format(&p, buf, sizeof(buf)),
	    parse_ok[_i].canonical);
}
END_TEST

static const struct {
	const char	*in;
	const char	*why;
	const char	*meant;		/* NULL: no suggestion */
} parse_bad[] = {
	{ "foo", "not an IPv4 or IPv6 address", NULL },
	{ "", "not an IPv4 or IPv6 address", NULL },
	{ "/8", "not an IPv4 or IPv6 address", NULL },
	{ "10.0.0/8", "not an IPv4 or IPv6 address", NULL },
	{ "fe80::1%lo", "not an IPv4 or IPv6 address", NULL },
	{ "127.0.0.1:53", "not an IPv4 or IPv6 address", NULL },
	{ "10.0.0.0/", "the prefix length is not a number from 0 to 32",
	  NULL },
	{ "10.0.0.0/33", "the prefix length is not a number from 0 to 32",
	  NULL },
	{ "10.0.0.0/-1", "the prefix length is not a number from 0 to 32",
	  NULL },
	{ "10.0.0.0/8x", "the prefix length is not a number from 0 to 32",
	  NULL },
	{ "10.0.0.0/99999999999",
	  "the prefix length is not a number from 0 to 32", NULL },
	{ "2001:db8::/129", "the prefix length is not a number from 0 to 128",
	  NULL },
	{ "10.0.0.1/8", "bits are set past the prefix length", "10.0.0.0/8" },
	{ "192.0.2.129/25", "bits are set past the prefix length",
	  "192.0.2.128/25" },
	{ "2001:db8::1/32", "bits are set past the prefix length",
	  "2001:db8::/32" },
	{ "::ffff:0:0/80", "bits are set past the prefix length", "::/80" },
};

START_TEST(test_parse_errors)
{
	char buf[ACL_PREFIX_STRLEN];
	struct acl_prefix p;
	const char *errstr = NULL;

	ck_assert_int_eq(acl_prefix_parse(parse_bad[_i].in, &p, &errstr), -1);
	ck_assert_str_eq(errstr, parse_bad[_i].why);
	if (parse_bad[_i].meant == NULL)
		ck_assert_int_eq(p.family, 0);
	else
		ck_assert_str_eq(acl_prefix_format(&p, buf, sizeof(buf)),
		    parse_bad[_i].meant);
}
END_TEST

/* Each end of each range is in, the address past it is not. */
START_TEST(test_match_boundaries)
{
	static const char *const nets[] = { "10.0.0.0/8", "192.0.2.128/25",
	    "2001:db8::/32", "::1", NULL };
	static const char *const in[] = { "10.0.0.0", "10.255.255.255",
	    "192.0.2.128", "192.0.2.255", "2001:db8::",
	    "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "::1", "10.1.2.3:5353" };
	static const char *const out[] = { "9.255.255.255", "11.0.0.0",
	    "192.0.2.127", "192.0.3.0",
	    "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
	    "2001:db9::", "::", "::2", "127.0.0.1", "0.0.0.0",
	    "255.255.255.255" };
	struct acl acl;
	size_t i;

	acl_of(&acl, nets);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ck_assert_msg(match(&acl, in[i]), "%s should match", in[i]);
	for (i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		ck_assert_msg(!match(&acl, out[i]), "%s should not match",
		    out[i]);
	acl_clear(&acl);
}
END_TEST

/*
 * A dual-stack socket shows IPv4 clients as ::ffff:a.b.c.d: they match
 * IPv4 networks (also written in mapped form), never IPv6 ones.
 */
START_TEST(test_match_mapped)
{
	static const char *const v4[] = { "10.0.0.0/8", NULL };
	static const char *const mapped[] = { "::ffff:10.0.0.0/104", NULL };
	static const char *const v6all[] = { "::/0", NULL };
	struct addr client4 = A("10.1.2.3"), client6;
	struct acl acl;

	client6 = A6("::ffff:10.1.2.3", 4242);
	acl_of(&acl, v4);
	ck_assert(acl_match(&acl, &client4));
	ck_assert(acl_match(&acl, &client6));
	client6 = A6("::ffff:11.1.2.3", 4242);
	ck_assert(!acl_match(&acl, &client6));
	acl_clear(&acl);

	acl_of(&acl, mapped);
	ck_assert(acl_match(&acl, &client4));
	acl_clear(&acl);

	acl_of(&acl, v6all);
	client6 = A6("::ffff:10.1.2.3", 4242);
	ck_assert(!acl_match(&acl, &client4));
	ck_assert(!acl_match(&acl, &client6));
	client6 = A6("2001:db8::1", 4242);
	ck_assert(acl_match(&acl, &client6));
	acl_clear(&acl);
}
END_TEST

static void
assert_range4(const struct acl *acl, size_t i, uint32_t lo, uint32_t hi)
{
	ck_assert_uint_eq(acl->ranges[ACL_V4][i].lo.hi, 0);
	ck_assert_uint_eq(acl->ranges[ACL_V4][i].lo.lo, lo);
	ck_assert_uint_eq(acl->ranges[ACL_V4][i].hi.hi, 0);
	ck_assert_uint_eq(acl->ranges[ACL_V4][i].hi.lo, hi);
}

/* Overlapping and adjacent networks become one range; gaps stay. */
START_TEST(test_merge)
{
	static const char *const nets[] = { "10.128.0.0/9", "192.0.2.0/24",
	    "10.0.0.0/9", "10.1.0.0/16", "192.0.4.0/24", "10.0.0.0/8", NULL };
	static const char *const all[] = { "0.0.0.0/0", "10.0.0.0/8",
	    "::/0", "::1", NULL };
	struct acl acl;

	acl_of(&acl, nets);
	ck_assert_uint_eq(acl.n, 6);
	ck_assert_uint_eq(acl.n_ranges[ACL_V4], 3);
	ck_assert_uint_eq(acl.n_ranges[ACL_V6], 0);
	assert_range4(&acl, 0, 0x0a000000, 0x0affffff);
	assert_range4(&acl, 1, 0xc0000200, 0xc00002ff);
	assert_range4(&acl, 2, 0xc0000400, 0xc00004ff);
	ck_assert(!match(&acl, "192.0.3.1"));
	acl_clear(&acl);

	/* Ranges that end at the last address: no overflow past it. */
	acl_of(&acl, all);
	ck_assert_uint_eq(acl.n_ranges[ACL_V4], 1);
	assert_range4(&acl, 0, 0, 0xffffffff);
	ck_assert_uint_eq(acl.n_ranges[ACL_V6], 1);
	ck_assert_uint_eq(acl.ranges[ACL_V6][0].lo.hi, 0);
	ck_assert_uint_eq(acl.ranges[ACL_V6][0].lo.lo, 0);
	ck_assert_uint_eq(acl.ranges[ACL_V6][0].hi.hi, UINT64_MAX);
	ck_assert_uint_eq(acl.ranges[ACL_V6][0].hi.lo, UINT64_MAX);
	acl_clear(&acl);
}
END_TEST

/* A fixed pseudo-random sequence (xorshift64), the same every run. */
static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 1 if the len leading bits of a and b (16 octets each) are equal. */
static int
naive_in(const uint8_t *net, unsigned len, const uint8_t *a)
{
	unsigned i;

	for (i = 0; i < len; i++)
		if (((net[i / 8] ^ a[i / 8]) >> (7 - i % 8)) & 1)
			return 0;
	return 1;
}

/*
 * Many random networks (clustered, so that they overlap and touch) against
 * many random addresses: the binary search over merged ranges says what a
 * check of every prefix in turn says.
 */
START_TEST(test_match_random)
{
	struct acl_prefix *ps;
	struct acl acl;
	struct addr a;
	uint64_t s = 0x9e3779b97f4a7c15ULL, r;
	uint8_t host[16];
	size_t i, j, n = 300, in = 0;
	int family, expect;

	memset(&acl, 0, sizeof(acl));
	ck_assert_ptr_nonnull(ps = calloc(n, sizeof(*ps)));
	for (i = 0; i < n; i++) {
		r = next_random(&s);
		ps[i].family = i % 2 ? AF_INET : AF_INET6;
		ps[i].len = (uint8_t)(ps[i].family == AF_INET ? 8 + r % 25 :
		    8 + r % 121);
		/* A few distinct first octets, so networks collide. */
		ps[i].net[0] = (uint8_t)(10 + (r >> 8) % 4);
		for (j = 1; j < 16; j++)
			ps[i].net[j] = (uint8_t)(next_random(&s) >> 24);
		if (ps[i].family == AF_INET)
			memset(ps[i].net + 4, 0, 12);
		for (j = ps[i].len; j < 128; j++)
			ps[i].net[j / 8] &= (uint8_t)~(0x80 >> (j % 8));
		ck_assert_int_eq(acl_add(&acl, &ps[i]), 0);
	}
	ck_assert_int_eq(acl_compile(&acl), 0);
	for (i = 0; i < 20000; i++) {
		family = i % 2 ? AF_INET : AF_INET6;
		/* Near a network half of the time, anywhere otherwise. */
		r = next_random(&s);
		memcpy(host, ps[r % n].net, 16);
		j = (r >> 32) % 2 ? (size_t)ps[r % n].len : 0;
		for (; j < 128; j++)
			if (next_random(&s) & 1)
				host[j / 8] ^= (uint8_t)(0x80 >> (j % 8));
		if (family == AF_INET)
			memset(host + 4, 0, 12);
		expect = 0;
		for (j = 0; j < n && !expect; j++)
			expect = ps[j].family == family && naive_in(ps[j].net,
			    ps[j].len, host);
		memset(&a, 0, sizeof(a));
		a.ss.ss_family = (sa_family_t)family;
		if (family == AF_INET) {
			memcpy(&((struct sockaddr_in *)&a.ss)->sin_addr, host,
			    4);
			a.len = sizeof(struct sockaddr_in);
		} else {
			memcpy(&((struct sockaddr_in6 *)&a.ss)->sin6_addr,
			    host, 16);
			a.len = sizeof(struct sockaddr_in6);
		}
		ck_assert_int_eq(acl_match(&acl, &a), expect);
		in += (size_t)expect;
	}
	/* Neither all in nor all out, or the test would prove little. */
	ck_assert_uint_gt(in, 2000);
	ck_assert_uint_lt(in, 18000);
	acl_clear(&acl);
	free(ps);
}
END_TEST

/* The loopback fast path, and what the listen check asks. */
START_TEST(test_loopback_flags)
{
	static const char *const half[] = { "127.0.0.0/9", "::1", NULL };
	static const char *const wide[] = { "126.0.0.0/7", NULL };
	static const char *const other[] = { "10.0.0.0/8", NULL };
	static const char *const v6only[] = { "::/127", NULL };
	struct acl acl;

	memset(&acl, 0, sizeof(acl));
	ck_assert_int_eq(acl_add_loopback(&acl), 0);
	ck_assert_int_eq(acl_compile(&acl), 0);
	ck_assert_int_eq(acl.loopback, 1);
	ck_assert_int_eq(acl.beyond_loopback, 0);
	ck_assert(match(&acl, "127.255.255.255"));
	ck_assert(match(&acl, "::1"));
	ck_assert(!match(&acl, "128.0.0.1"));
	acl_clear(&acl);

	acl_of(&acl, half);
	ck_assert_int_eq(acl.loopback, 0);
	ck_assert_int_eq(acl.beyond_loopback, 0);
	ck_assert(!match(&acl, "127.128.0.1"));
	acl_clear(&acl);
	acl_of(&acl, wide);
	ck_assert_int_eq(acl.loopback, 0);	/* no ::1 */
	ck_assert_int_eq(acl.beyond_loopback, 1);
	acl_clear(&acl);
	acl_of(&acl, other);
	ck_assert_int_eq(acl.beyond_loopback, 1);
	acl_clear(&acl);
	acl_of(&acl, v6only);		/* :: and ::1 */
	ck_assert_int_eq(acl.beyond_loopback, 1);
	acl_clear(&acl);

	/* Empty: nothing matches, not even loopback. */
	memset(&acl, 0, sizeof(acl));
	ck_assert_int_eq(acl_compile(&acl), 0);
	ck_assert_int_eq(acl.loopback, 0);
	ck_assert(!match(&acl, "127.0.0.1"));
	acl_clear(&acl);
}
END_TEST

/* addr_host and addr_is_loopback, what acl and the listen check use. */
START_TEST(test_addr_host)
{
	struct addr a;
	uint8_t host[16];

	a = A("192.0.2.7");
	ck_assert_int_eq(addr_host(&a, host), AF_INET);
	ck_assert_mem_eq(host, "\xc0\x00\x02\x07", 4);
	a = A6("::ffff:192.0.2.7", 53);
	ck_assert_int_eq(addr_host(&a, host), AF_INET);
	ck_assert_mem_eq(host, "\xc0\x00\x02\x07", 4);
	a = A6("2001:db8::7", 53);
	ck_assert_int_eq(addr_host(&a, host), AF_INET6);
	ck_assert_uint_eq(host[15], 7);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(addr_host(&a, host), AF_UNSPEC);

	ck_assert(loopback("127.0.0.1"));
	ck_assert(loopback("127.3.2.1"));
	ck_assert(loopback("::1"));
	a = A6("::ffff:127.0.0.2", 53);
	ck_assert(addr_is_loopback(&a));
	ck_assert(!loopback("0.0.0.0"));
	ck_assert(!loopback("::"));
	ck_assert(!loopback("128.0.0.1"));
	ck_assert(!loopback("::2"));
}
END_TEST

static Suite *
acl_suite(void)
{
	Suite *s = suite_create("acl");
	TCase *tc = tcase_create("acl");

	tcase_add_loop_test(tc, test_parse_ok, 0,
	    (int)(sizeof(parse_ok) / sizeof(parse_ok[0])));
	tcase_add_loop_test(tc, test_parse_errors, 0,
	    (int)(sizeof(parse_bad) / sizeof(parse_bad[0])));
	tcase_add_test(tc, test_match_boundaries);
	tcase_add_test(tc, test_match_mapped);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_match_random);
	tcase_add_test(tc, test_loopback_flags);
	tcase_add_test(tc, test_addr_host);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(acl_suite());
}
