/* check_name.c: the name walker (RFC 1035 §3.1 lengths, §4.1.4 pointers). */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "check_main.h"
#include "name.h"

/* A byte string literal and its length without the literal's NUL. */
#define P(s)	(const uint8_t *)(s), sizeof(s) - 1

static uint8_t out[NAME_WIRE_MAX];

/* Append a label of n copies of c at buf + *off. */
static void
label(uint8_t *buf, size_t *off, size_t n, char c)
{
	buf[(*off)++] = (uint8_t)n;
	memset(buf + *off, c, n);
	*off += n;
}

START_TEST(plain_names)
{
	size_t n = 0;

	/* "www.example.": 1+3 + 1+7 + the root's 1 = 13 octets, every mode. */
	ck_assert_int_eq(name_walk(P("\3www\7example\0"), 0, NAME_SKIP, NULL,
	    &n), 13);
	ck_assert_uint_eq(n, 13);
	ck_assert_int_eq(name_walk(P("\3www\7example\0"), 0, NAME_VALIDATE,
	    NULL, &n), 13);
	ck_assert_int_eq(name_walk(P("\3www\7example\0"), 0, NAME_UNPACK, out,
	    &n), 13);
	ck_assert_mem_eq(out, "\3www\7example\0", 13);
	/* The root alone is one octet; a name may start anywhere. */
	ck_assert_int_eq(name_walk(P("xx\0"), 2, NAME_UNPACK, out, &n), 3);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(name_unpack(P("\3www\7example\0"), 0, out), 13);
}
END_TEST

START_TEST(pointers)
{
	/* "example." at 12, "www" + pointer to 12 at 21, and at 27 a
	 * pointer to that pointer (a chain of two jumps). */
	static const uint8_t pkt[] = "0123456789AB\7example\0\3www\300\014"
	    "\300\025";
	size_t n = 0;

	ck_assert_int_eq(name_unpack(pkt, sizeof(pkt) - 1, 21, out), 13);
	ck_assert_mem_eq(out, "\3www\7example\0", 13);
	ck_assert_int_eq(name_unpack(pkt, sizeof(pkt) - 1, 27, out), 13);
	ck_assert_mem_eq(out, "\3www\7example\0", 13);
	/* In place, the name at 21 ends after its pointer, at 27, whatever
	 * the mode; skipping counts only the 4 octets of "www" before it. */
	ck_assert_int_eq(name_walk(pkt, sizeof(pkt) - 1, 21, NAME_VALIDATE,
	    NULL, &n), 27);
	ck_assert_uint_eq(n, 13);
	ck_assert_int_eq(name_walk(pkt, sizeof(pkt) - 1, 21, NAME_SKIP, NULL,
	    &n), 27);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(name_walk(pkt, sizeof(pkt) - 1, 27, NAME_SKIP, NULL,
	    &n), 29);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(pointer_loops)
{
	size_t n;

	/* A pointer to itself. */
	ck_assert_int_eq(name_unpack(P("0123456789AB\300\014"), 12, out), -1);
	/* A pointer forward, even to a good name. */
	ck_assert_int_eq(name_unpack(P("0123456789AB\300\016\0"), 12, out),
	    -1);
	/* Two pointers to each other: 14 -> 12 is backwards, 12 -> 14 is
	 * not lower than 12, where the name already was. */
	ck_assert_int_eq(name_walk(P("0123456789AB\300\016\300\014"), 14,
	    NAME_VALIDATE, NULL, &n), -1);
	/* A label, then a pointer back into that same label. */
	ck_assert_int_eq(name_unpack(P("0123456789AB\1a\300\014"), 12, out),
	    -1);
	/* A pointer into the header, which holds no name: offset 11 is 0
	 * here, the root, but a header is rewritten for each client (its
	 * ID, flags, counts), and the name with it. */
	ck_assert_int_eq(name_unpack(P("\0\1\201\200\0\1\0\0\0\0\0\0"
	    "\1x\300\013"), 12, out), -1);
	ck_assert_int_eq(name_walk(P("\0\1\201\200\0\1\0\0\0\0\0\0"
	    "\1x\300\0"), 12, NAME_VALIDATE, NULL, &n), -1);
	/* Skipping does not follow, so it does not see the loop. */
	ck_assert_int_eq(name_walk(P("0123456789AB\300\014"), 12, NAME_SKIP,
	    NULL, &n), 14);
}
END_TEST

START_TEST(past_the_end)
{
	/* A pointer cut short: its second octet is missing. */
	ck_assert_int_eq(name_walk(P("\3www\300"), 0, NAME_SKIP, NULL, NULL),
	    -1);
	ck_assert_int_eq(name_unpack(P("\7example\0\3www\300"), 9, out), -1);
	/* A label longer than what is left, and a name without its root. */
	ck_assert_int_eq(name_walk(P("\5ab"), 0, NAME_SKIP, NULL, NULL), -1);
	ck_assert_int_eq(name_unpack(P("\3www"), 0, out), -1);
	ck_assert_int_eq(name_walk(P("\3www"), 4, NAME_SKIP, NULL, NULL), -1);
	/* The obsolete label types 0x40 and 0x80 (RFC 6891 §5). */
	ck_assert_int_eq(name_walk(P("\101\0"), 0, NAME_SKIP, NULL, NULL), -1);
	ck_assert_int_eq(name_unpack(P("\201\0"), 0, out), -1);
}
END_TEST

START_TEST(too_long)
{
	uint8_t buf[600];
	size_t off = 0, start, n;

	/* 63-octet labels: 3 * (1 + 63) + (1 + 61) + 1 = 255, the most. */
	label(buf, &off, 63, 'a');
	label(buf, &off, 63, 'b');
	label(buf, &off, 63, 'c');
	label(buf, &off, 61, 'd');
	buf[off++] = 0;
	ck_assert_int_eq(name_unpack(buf, off, 0, out), 255);
	ck_assert_int_eq(name_walk(buf, off, 0, NAME_SKIP, NULL, &n), 255);
	/* One octet more is 256. */
	off = 0;
	label(buf, &off, 63, 'a');
	label(buf, &off, 63, 'b');
	label(buf, &off, 63, 'c');
	label(buf, &off, 62, 'd');
	buf[off++] = 0;
	ck_assert_int_eq(name_unpack(buf, off, 0, out), -1);
	ck_assert_int_eq(name_walk(buf, off, 0, NAME_SKIP, NULL, &n), -1);
	/* Too long only through a pointer: 2 * 64 octets, then a pointer to
	 * a 2 * 64 + 1 octet name: 257 in all. */
	off = 0;
	label(buf, &off, 63, 'a');
	label(buf, &off, 63, 'b');
	buf[off++] = 0;
	start = off;
	label(buf, &off, 63, 'c');
	label(buf, &off, 63, 'd');
	buf[off++] = 0xc0;
	buf[off++] = 0;
	ck_assert_int_eq(name_walk(buf, off, start, NAME_VALIDATE, NULL, &n),
	    -1);
	ck_assert_int_eq(name_unpack(buf, off, start, out), -1);
	/* Skipping sees 128 octets and the pointer: it stops there. */
	ck_assert_int_eq(name_walk(buf, off, start, NAME_SKIP, NULL, &n),
	    (long)off);
	ck_assert_uint_eq(n, 128);
}
END_TEST

static Suite *
name_suite(void)
{
	Suite *s = suite_create("name");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, plain_names);
	tcase_add_test(tc, pointers);
	tcase_add_test(tc, pointer_loops);
	tcase_add_test(tc, past_the_end);
	tcase_add_test(tc, too_long);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(name_suite());
}
