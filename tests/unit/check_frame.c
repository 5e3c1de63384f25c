/* check_frame.c: the two-octet length prefix of DNS over TCP (RFC 7766 §8). */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "check_main.h"
#include "frame.h"

START_TEST(round_trip)
{
	struct evbuffer *b = evbuffer_new();
	uint8_t big[300], raw[2 + 300 + 2 + 3];
	const uint8_t *m;
	size_t len = 99;

	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(frame_add(b, big, sizeof(big)), 0);
	ck_assert_int_eq(frame_add(b, (const uint8_t *)"abc", 3), 0);
	/* 300 is 0x012c, most significant octet first. */
	ck_assert_int_eq(evbuffer_copyout(b, raw, sizeof(raw)), sizeof(raw));
	ck_assert_uint_eq(raw[0], 0x01);
	ck_assert_uint_eq(raw[1], 0x2c);
	ck_assert_uint_eq(raw[302], 0);
	ck_assert_uint_eq(raw[303], 3);
	ck_assert_ptr_nonnull(m = frame_peek(b, &len));
	ck_assert_uint_eq(len, 300);
	ck_assert_mem_eq(m, big, 300);
	frame_drain(b, len);
	ck_assert_ptr_nonnull(m = frame_peek(b, &len));
	ck_assert_uint_eq(len, 3);
	ck_assert_mem_eq(m, "abc", 3);
	frame_drain(b, len);
	ck_assert_uint_eq(evbuffer_get_length(b), 0);
	evbuffer_free(b);
}
END_TEST

START_TEST(partial)
{
	struct evbuffer *b = evbuffer_new();
	size_t len;

	/* Nothing, half a prefix, a prefix without its message. */
	ck_assert_ptr_null(frame_peek(b, &len));
	evbuffer_add(b, "\0", 1);
	ck_assert_ptr_null(frame_peek(b, &len));
	evbuffer_add(b, "\4ab", 3);
	ck_assert_ptr_null(frame_peek(b, &len));
	evbuffer_add(b, "cd", 2);
	ck_assert_ptr_nonnull(frame_peek(b, &len));
	ck_assert_uint_eq(len, 4);
	frame_drain(b, len);
	/* An empty message is a message. */
	evbuffer_add(b, "\0\0", 2);
	ck_assert_ptr_nonnull(frame_peek(b, &len));
	ck_assert_uint_eq(len, 0);
	evbuffer_free(b);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, partial);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(frame_suite());
}
