/* check_tlsconn.c: EDNS(0) padding of DNS over TLS queries (RFC 7830, RFC 8467) and SPKI pins (RFC 7469). */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "check_main.h"
#include "msg.h"
#include "tlsconn.h"
#include "tlsctx.h"
#include "wire.h"

/* A query for the wire name qname as attempt writes it: with an OPT of
 * payload 1232 if edns, else none. */
static size_t
write_query(const char *qname, size_t qname_len, int edns, uint8_t *out,
    size_t cap)
{
	struct msg_query q;

	memset(&q, 0, sizeof(q));
	memcpy(q.q.qname, qname, qname_len);
	q.q.qname_len = (uint8_t)qname_len;
	q.q.qtype = MSG_TYPE_A;
	q.q.qclass = 1;
	return msg_write_query(&q, 0x1234, q.q.qname, edns ? 1232 : 0, out,
	    cap);
}

/*
 * www.example.test.: 18 octets of name; header 12 + name 18 + type and
 * class 4 + OPT 11 = 45 octets. Padded (RFC 8467 §4.1, block 128): the
 * option's 4 octets of code and length and 79 of zeros make 128; the
 * OPT's RDLENGTH is 83.
 */
START_TEST(pad_to_block)
{
	uint8_t buf[512];
	size_t len, padded, opt = 12 + 18 + 4;

	len = write_query("\3www\7example\4test", 18, 1, buf, sizeof(buf));
	ck_assert_uint_eq(len, 45);
	padded = tlsconn_pad(buf, len, sizeof(buf));
	ck_assert_uint_eq(padded, 128);
	ck_assert_uint_eq(wire_rd16(buf + opt + 1), 41);	/* OPT */
	ck_assert_uint_eq(wire_rd16(buf + opt + 9), 83);	/* RDLENGTH */
	ck_assert_uint_eq(wire_rd16(buf + 45), 12);		/* Padding */
	ck_assert_uint_eq(wire_rd16(buf + 47), 79);
	for (size_t i = 49; i < 128; i++)
		ck_assert_uint_eq(buf[i], 0);
}
END_TEST

/* A query of 124 octets (+ 4 of option header = 128) gets an empty
 * Padding option; of 125, one that fills the next block (256). */
START_TEST(pad_edges)
{
	char name[255];
	uint8_t buf[512];
	size_t len, nlen;

	/* 124 - 12 - 4 - 11 = 97 octets of name: 95 + 1 + root */
	memset(name, 'a', sizeof(name));
	name[0] = 95;
	name[96] = 0;
	nlen = 97;
	len = write_query(name, nlen, 1, buf, sizeof(buf));
	ck_assert_uint_eq(len, 124);
	ck_assert_uint_eq(tlsconn_pad(buf, len, sizeof(buf)), 128);
	ck_assert_uint_eq(wire_rd16(buf + 126), 0);
	name[0] = 96;
	name[97] = 0;
	nlen = 98;
	len = write_query(name, nlen, 1, buf, sizeof(buf));
	ck_assert_uint_eq(len, 125);
	ck_assert_uint_eq(tlsconn_pad(buf, len, sizeof(buf)), 256);
	/* No room: left as it was. */
	len = write_query(name, nlen, 1, buf, sizeof(buf));
	ck_assert_uint_eq(tlsconn_pad(buf, len, 200), 125);
}
END_TEST

/* No OPT, no padding (RFC 7830 §3: the option lives in the OPT). */
START_TEST(no_opt_no_pad)
{
	uint8_t buf[512];
	size_t len;

	len = write_query("\3www\7example\4test", 18, 0, buf, sizeof(buf));
	ck_assert_uint_eq(len, 34);
	ck_assert_uint_eq(tlsconn_pad(buf, len, sizeof(buf)), 34);
}
END_TEST

/*
 * RFC 7469 §2.4's form: "sha256/" and the base64 of 32 octets (44
 * characters, one "="). SHA-256 of the empty string is e3b0c442...b855,
 * 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= in base64.
 */
START_TEST(pin_parse)
{
	static const char b64[] =
	    "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
	uint8_t pin[TLSCTX_PIN_LEN];
	char out[64];

	ck_assert_int_eq(tlsctx_pin_parse(b64, pin), 0);
	ck_assert_uint_eq(pin[0], 0xe3);
	ck_assert_uint_eq(pin[1], 0xb0);
	ck_assert_uint_eq(pin[31], 0x55);
	tlsctx_pin_format(pin, out, sizeof(out));
	ck_assert_str_eq(out, b64);
	ck_assert_int_eq(tlsctx_pin_parse("sha256/", pin), -1);
	ck_assert_int_eq(tlsctx_pin_parse(b64 + 1, pin), -1);
	/* 33 octets' worth, and a stray character */
	ck_assert_int_eq(tlsctx_pin_parse("sha256/"
	    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFUA", pin), -1);
	ck_assert_int_eq(tlsctx_pin_parse("sha256/"
	    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSu!U=", pin), -1);
}
END_TEST

static Suite *
tlsconn_suite(void)
{
	Suite *s = suite_create("tlsconn");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, pad_to_block);
	tcase_add_test(tc, pad_edges);
	tcase_add_test(tc, no_opt_no_pad);
	tcase_add_test(tc, pin_parse);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(tlsconn_suite());
}
