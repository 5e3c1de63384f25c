/* check_msg.c: unit tests of the wire helpers (RFC 1035 §4, RFC 6891). */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "msg.h"
#include "testpkt.h"
#include "wire.h"

static uint8_t out[MSG_MAX_LEN + 64];

/* A query in raw bytes: header fields, then body. */
static size_t
raw_query(uint8_t *buf, uint16_t flags, uint16_t qd, uint16_t an,
    uint16_t ar, const void *body, size_t bodylen)
{
	uint8_t h[12] = { 0xab, 0xcd, flags >> 8, flags & 0xff, qd >> 8,
	    qd & 0xff, an >> 8, an & 0xff, 0, 0, ar >> 8, ar & 0xff };

	memcpy(buf, h, 12);
	memcpy(buf + 12, body, bodylen);
	return 12 + bodylen;
}

static const uint8_t www_a[] = "\3www\7example\0\0\1\0\1";

START_TEST(parse_query_ok)
{
	struct testpkt t = testpkt_query("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RD | LDNS_CD, 4096, 1);
	struct msg_query q;

	ck_assert_int_eq(msg_parse_query(t.wire, t.len, &q), MSG_PARSE_OK);
	ck_assert_uint_eq(q.id, 0xbeef);
	ck_assert(q.flags & MSG_FLAG_RD);
	ck_assert(q.flags & MSG_FLAG_CD);
	ck_assert_uint_eq(q.q.qtype, MSG_TYPE_A);
	ck_assert_uint_eq(q.q.qclass, MSG_CLASS_IN);
	ck_assert_uint_eq(q.q.qname_len, 13);	/* 1+3 + 1+7 + 1 */
	ck_assert_mem_eq(q.q.qname, "\3www\7example\0", 13);
	ck_assert(q.edns.present);
	ck_assert_uint_eq(q.edns.udp_size, 4096);
	ck_assert(q.edns.do_bit);
	testpkt_free(&t);
}
END_TEST

START_TEST(parse_query_drop)
{
	uint8_t buf[64] = { 0 };
	struct msg_query q;
	size_t len;

	ck_assert_int_eq(msg_parse_query(buf, 11, &q), MSG_PARSE_DROP);
	len = raw_query(buf, MSG_FLAG_QR, 1, 0, 0, www_a, sizeof(www_a) - 1);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_DROP);
}
END_TEST

START_TEST(parse_query_formerr)
{
	static const struct {
		uint16_t	 qd, an;
		const char	*body;
		size_t		 len;
	} cases[] = {
		{ 2, 0, (const char *)www_a, sizeof(www_a) - 1 },
		{ 0, 0, "", 0 },
		{ 1, 1, (const char *)www_a, sizeof(www_a) - 1 },
		{ 1, 0, "\3www\7exa", 8 },		/* runs past the end */
		{ 1, 0, "\100aaaa\0\0\1\0\1", 11 },	/* label type 0x40 */
		{ 1, 0, "\3www\300\014\0\1\0\1", 10 },	/* pointer in qname */
		{ 1, 0, "\3www\7example\0\0\1", 15 },	/* no qclass */
	};
	struct msg_query q;
	uint8_t buf[128];
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = raw_query(buf, MSG_FLAG_RD, cases[i].qd, cases[i].an, 0,
		    cases[i].body, cases[i].len);
		ck_assert_msg(msg_parse_query(buf, len, &q) ==
		    MSG_PARSE_FORMERR, "case %zu", i);
		ck_assert_uint_eq(q.id, 0xabcd);
	}
}
END_TEST

START_TEST(parse_query_long_label)
{
	uint8_t body[80], buf[128];
	struct msg_query q;
	size_t len;

	/* RFC 1035 §2.3.4: labels are 63 octets or less. */
	memset(body, 'a', sizeof(body));
	body[0] = 64;
	body[65] = 0;
	memcpy(body + 66, "\0\1\0\1", 4);
	len = raw_query(buf, 0, 1, 0, 0, body, 70);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_FORMERR);
	body[0] = 63;
	body[64] = 0;
	memcpy(body + 65, "\0\1\0\1", 4);
	len = raw_query(buf, 0, 1, 0, 0, body, 69);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_OK);
}
END_TEST

START_TEST(parse_query_notimp_badvers)
{
	static const uint8_t opt_v1[] = "\0\0\51\20\0\0\1\0\0\0\0";
	static const uint8_t two_opts[] =
	    "\0\0\51\20\0\0\0\0\0\0\0" "\0\0\51\20\0\0\0\0\0\0\0";
	uint8_t body[128], buf[160];
	struct msg_query q;
	size_t len;

	len = raw_query(buf, 2 << 11, 1, 0, 0, www_a, sizeof(www_a) - 1);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_NOTIMP);
	ck_assert_uint_eq(q.q.qname_len, 13);	/* echoed in the reply */

	memcpy(body, www_a, sizeof(www_a) - 1);
	memcpy(body + sizeof(www_a) - 1, opt_v1, sizeof(opt_v1) - 1);
	len = raw_query(buf, 0, 1, 0, 1, body,
	    sizeof(www_a) - 1 + sizeof(opt_v1) - 1);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_BADVERS);

	memcpy(body + sizeof(www_a) - 1, two_opts, sizeof(two_opts) - 1);
	len = raw_query(buf, 0, 1, 0, 2, body,
	    sizeof(www_a) - 1 + sizeof(two_opts) - 1);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_FORMERR);
}
END_TEST

/*
 * An OPT's TTL field is its extended rcode (8 bits), version (8) and
 * flags (16, DO the top one), RFC 6891 §6.1.3: not a TTL, so the RFC 2181
 * §8 rule that zeroes a TTL with the top bit set must leave it alone.
 */
START_TEST(opt_ttl_is_not_a_ttl)
{
	/* extended rcode 0x80, version 0, DO: TTL 0x80008000 */
	static const uint8_t opt_do[] = "\0\0\51\20\0\x80\0\x80\0\0\0";
	/* extended rcode 0x80, version 1: TTL 0x80010000 */
	static const uint8_t opt_v1[] = "\0\0\51\20\0\x80\1\0\0\0\0";
	uint8_t body[128], buf[160];
	struct testpkt t;
	struct msg_response r;
	struct msg_query q;
	size_t len;

	memcpy(body, www_a, sizeof(www_a) - 1);
	memcpy(body + sizeof(www_a) - 1, opt_do, sizeof(opt_do) - 1);
	len = raw_query(buf, 0, 1, 0, 1, body,
	    sizeof(www_a) - 1 + sizeof(opt_do) - 1);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_OK);
	ck_assert(q.edns.do_bit);
	ck_assert_uint_eq(q.edns.ext_rcode, 0x80);

	memcpy(body + sizeof(www_a) - 1, opt_v1, sizeof(opt_v1) - 1);
	len = raw_query(buf, 0, 1, 0, 1, body,
	    sizeof(www_a) - 1 + sizeof(opt_v1) - 1);
	ck_assert_int_eq(msg_parse_query(buf, len, &q), MSG_PARSE_BADVERS);

	/* A response with header rcode 0 and extended rcode 0x80: rcode
	 * 0x80 << 4 = 2048, about our query, so a failure. */
	t = testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|www.example. 300 IN A 192.0.2.1", NULL);
	t.wire[t.len - 11 + 5] = 0x80;
	ck_assert_int_eq(msg_response_parse(t.wire, t.len, &r), 0);
	ck_assert_uint_eq(r.rcode, 2048);
	ck_assert_int_eq(r.class, MSG_CLASS_FAILURE);
	msg_response_free(&r);
	testpkt_free(&t);
}
END_TEST

START_TEST(name_case)
{
	uint8_t a[] = "\3WwW\7ExAmPlE\0", b[sizeof(a)];
	int upper = 0, lower = 0, i;

	ck_assert(msg_name_equal(a, 13, (const uint8_t *)"\3www\7example\0",
	    13));
	ck_assert(!msg_name_equal(a, 13, (const uint8_t *)"\3wwx\7example\0",
	    13));
	for (i = 0; i < 64; i++) {
		memcpy(b, a, sizeof(a));
		msg_name_randomize_case(b, 13);
		ck_assert(msg_name_equal(a, 13, b, 13));
		ck_assert_uint_eq(b[0], 3);
		upper += b[1] == 'W';
		lower += b[1] == 'w';
	}
	/* 64 fair coin flips: both faces appear except with p = 2^-63. */
	ck_assert_int_gt(upper, 0);
	ck_assert_int_gt(lower, 0);
	msg_name_fold(a, 13);
	ck_assert_mem_eq(a, "\3www\7example\0", 13);
}
END_TEST

/* RFC 4343: an ASCII upper-case letter, the only octets case touches. */
static int
is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

/*
 * Folding and 0x20 work 8 octets at a step: every octet value 0..255, at
 * every place in a name of every length from 1 to 24 (no step, one, a
 * step and a part, three), comes out as one at a time would make it:
 * 'A'..'Z' lower-cased and nothing else changed by msg_name_fold; by
 * msg_name_randomize_case every letter of either case in either case and
 * nothing else changed, the octets past len untouched by both.
 */
START_TEST(name_case_every_octet)
{
	uint8_t buf[25], want[25];
	size_t len, at, i;
	int c, seen[2];

	for (len = 1; len <= 24; len++)
		for (at = 0; at < len; at++)
			for (c = 0; c < 256; c++) {
				memset(buf, 'Q', sizeof(buf));
				buf[at] = (uint8_t)c;
				memcpy(want, buf, sizeof(buf));
				for (i = 0; i < len; i++)
					if (is_upper(want[i]))
						want[i] += 'a' - 'A';
				msg_name_fold(buf, len);
				ck_assert_mem_eq(buf, want, sizeof(buf));
				msg_name_randomize_case(buf, len);
				ck_assert_uint_eq(buf[len], want[len]);
				ck_assert(msg_name_equal(buf, len, want, len));
				if (!is_upper(c) && (c < 'a' || c > 'z'))
					ck_assert_uint_eq(buf[at], c);
			}
	/* Every letter place gets both cases: 64 tries, each 1/2, miss
	 * both only with p = 2^-63 a place. */
	for (at = 0; at < 20; at++) {
		seen[0] = seen[1] = 0;
		for (c = 0; c < 64; c++) {
			memset(buf, 'q', 20);
			msg_name_randomize_case(buf, 20);
			seen[is_upper(buf[at])]++;
		}
		ck_assert_int_gt(seen[0], 0);
		ck_assert_int_gt(seen[1], 0);
	}
}
END_TEST

static enum msg_class
classify(struct testpkt t, struct msg_response *r)
{
	ck_assert_int_eq(msg_response_parse(t.wire, t.len, r), 0);
	return r->class;
}

START_TEST(classify_answers)
{
	struct testpkt t;
	struct msg_response r;

	t = testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|www.example. 300 IN A 192.0.2.1", NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_ANSWER);
	ck_assert(!r.has_cname);
	ck_assert_int_eq(r.opt_index, 1);
	msg_response_free(&r);
	testpkt_free(&t);

	t = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|a.example. 300 IN CNAME b.example.",
	    "an|b.example. 200 IN CNAME c.example.",
	    "an|c.example. 100 IN A 192.0.2.3", NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_ANSWER);
	ck_assert(r.has_cname);
	msg_response_free(&r);
	testpkt_free(&t);

	/* A chain ending at a name without the type: NODATA (RFC 2308 §2.2). */
	t = testpkt_response("a.example.", LDNS_RR_TYPE_AAAA, 0, 0,
	    "an|a.example. 300 IN CNAME b.example.",
	    "ns|example. 600 IN SOA ns.example. host.example. 1 2 3 4 120",
	    NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_NODATA);
	ck_assert_int_eq(r.soa_index, 1);
	msg_response_free(&r);
	testpkt_free(&t);
}
END_TEST

START_TEST(classify_negative_and_failures)
{
	struct testpkt t;
	struct msg_response r;

	t = testpkt_response("nx.example.", LDNS_RR_TYPE_A, LDNS_RCODE_NXDOMAIN,
	    0, "ns|example. 600 IN SOA ns.example. host.example. 1 2 3 4 120",
	    NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_NXDOMAIN);
	ck_assert_int_eq(msg_soa_minimum(r.pkt, r.len, &r.rrs[r.soa_index]),
	    120);
	msg_response_free(&r);
	testpkt_free(&t);

	t = testpkt_response("www.example.", LDNS_RR_TYPE_MX, 0, 0,
	    "ns|example. 600 IN SOA ns.example. host.example. 1 2 3 4 120",
	    NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_NODATA);
	msg_response_free(&r);
	testpkt_free(&t);

	t = testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "ns|example. 600 IN NS ns.example.", NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_REFERRAL);
	msg_response_free(&r);
	testpkt_free(&t);

	t = testpkt_response("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_SERVFAIL, 0, NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_FAILURE);
	msg_response_free(&r);
	testpkt_free(&t);

	t = testpkt_response("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_YXDOMAIN, 0, NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_OTHER);
	msg_response_free(&r);
	testpkt_free(&t);
}
END_TEST

START_TEST(response_malformed)
{
	struct testpkt t = testpkt_response("www.example.", LDNS_RR_TYPE_A, 0,
	    0, "an|www.example. 300 IN A 192.0.2.1", NULL);
	struct msg_response r;
	size_t cut;

	/* Every proper prefix that cuts into the record is malformed. */
	for (cut = 12; cut < t.len; cut++)
		ck_assert_int_eq(msg_response_parse(t.wire, cut, &r), -1);
	t.wire[3 - 1] &= ~0x80;		/* QR=0: not a response */
	ck_assert_int_eq(msg_response_parse(t.wire, t.len, &r), -1);
	testpkt_free(&t);
}
END_TEST

/* The message of the last template_of, which a test may change. */
static uint8_t tpl_wire[MSG_MAX_LEN];

/* A template straight from a parsed response, TTLs as received; its
 * message in tpl_wire, without the OPT, which must be last. */
static struct msg_template
template_of(const struct msg_response *r, uint16_t *offsets)
{
	struct msg_template t;
	size_t i, n = 0;

	memset(&t, 0, sizeof(t));
	memcpy(tpl_wire, r->pkt, r->len);
	t.wire = tpl_wire;
	t.len = (uint16_t)(r->opt_index != -1 ? r->rrs[r->opt_index].offset :
	    r->len);
	wire_wr16(tpl_wire + 10, (uint16_t)(r->counts[MSG_SECTION_ADDITIONAL] -
	    (r->opt_index != -1)));
	t.additional_offset = t.len;
	for (i = 0; i < r->n_rrs; i++) {
		if ((long)i == r->opt_index)
			continue;
		if (r->rrs[i].section == MSG_SECTION_ADDITIONAL &&
		    t.additional_offset == t.len)
			t.additional_offset = r->rrs[i].offset;
		offsets[n++] = r->rrs[i].ttl_offset;
	}
	t.ttl_offsets = offsets;
	t.n_ttls = (uint16_t)n;
	return t;
}

START_TEST(answer_ttl_case_and_opt)
{
	struct testpkt resp = testpkt_response("www.example.", LDNS_RR_TYPE_A,
	    0, 1232, "an|www.example. 300 IN A 192.0.2.1",
	    "ar|ns.example. 100 IN A 192.0.2.53", NULL);
	struct testpkt qp = testpkt_query("WwW.ExAmPlE.", LDNS_RR_TYPE_A,
	    LDNS_RD, 1232, 1);
	struct msg_reply_opts opts = { 1232, 1232, -1, NULL };
	struct msg_ttl_rule rule = { 120, 0 };
	uint16_t offsets[4];
	struct msg_response r;
	struct msg_template t;
	struct msg_query q;
	ldns_pkt *p;
	size_t len;

	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	t = template_of(&r, offsets);
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_mem_eq(out + 12, "\3WwW\7ExAmPlE\0", 13);
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(ldns_pkt_id(p), 0xbeef);
	ck_assert(ldns_pkt_qr(p) && ldns_pkt_ra(p) && ldns_pkt_rd(p));
	ck_assert(!ldns_pkt_aa(p) && !ldns_pkt_tc(p));
	/* 300 s stored, 120 s elapsed: 180; the glue's 100 floors at 0. */
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 180);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ADDITIONAL, 0), 0);
	ck_assert_uint_eq(ldns_pkt_edns_udp_size(p), 1232);
	ck_assert(ldns_pkt_edns_do(p));		/* RFC 3225: DO copied */
	ldns_pkt_free(p);

	rule.fixed = 30;			/* RFC 8767 stale TTL */
	opts.ede = MSG_EDE_STALE;
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 30);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ADDITIONAL, 0), 30);
	ldns_pkt_free(p);
	/* OPT: 11 octets + EDE option 4 + info-code 2, info-code 3. */
	ck_assert_mem_eq(out + len - 6, "\0\17\0\2\0\3", 6);
	/* RFC 8914 §2: EXTRA-TEXT after the info-code, in the option's
	 * length (2 + 4 octets), not NUL-terminated; OPT rdlength 4 + 6. */
	opts.ede_text = "held";
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_mem_eq(out + len - 12, "\0\12\0\17\0\6\0\3held", 12);
	/* with no room for the text in the shortest form, none */
	len = msg_write_answer(&t, &q, &rule, &opts, out, MSG_ERROR_MAX_LEN);
	ck_assert_mem_eq(out + len - 6, "\0\17\0\2\0\3", 6);
	opts.ede_text = NULL;
	msg_response_free(&r);
	testpkt_free(&resp);
	testpkt_free(&qp);
}
END_TEST

START_TEST(answer_truncation)
{
	struct testpkt resp, qp;
	struct msg_reply_opts opts = { MSG_UDP_MIN, 1232, -1, NULL };
	struct msg_ttl_rule rule = { 0, 0 };
	uint16_t offsets[64];
	struct msg_response r;
	struct msg_template t;
	struct msg_query q;
	char txt[200];
	ldns_pkt *p;
	size_t len;

	/* Three TXT records of 180 octets: over 512 in the answer itself. */
	memset(txt, 'x', 180);
	txt[180] = '\0';
	{
		char r1[256], r2[256], r3[256];

		snprintf(r1, sizeof(r1), "an|big.example. 60 IN TXT \"1%s\"", txt);
		snprintf(r2, sizeof(r2), "an|big.example. 60 IN TXT \"2%s\"", txt);
		snprintf(r3, sizeof(r3), "an|big.example. 60 IN TXT \"3%s\"", txt);
		resp = testpkt_response("big.example.", LDNS_RR_TYPE_TXT, 0, 0,
		    r1, r2, r3, "ar|x.example. 60 IN A 192.0.2.9", NULL);
	}
	qp = testpkt_query("big.example.", LDNS_RR_TYPE_TXT, LDNS_RD, 0, 0);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	t = template_of(&r, offsets);
	ck_assert_uint_gt(t.len, 512);
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	/*
	 * RFC 2181 §9: TC=1 with the whole records that fit. Header 12,
	 * question 13 + 4: 29 octets; a TXT RR 2 (owner, compressed) + 10 +
	 * 1 + 181 = 194; (512 - 29) / 194 = 2 of them, 29 + 388 = 417. The
	 * glue, 4 ("\1x" and a pointer) + 10 + 4, goes first.
	 */
	ck_assert_uint_eq(t.len, 29 + 3 * 194 + 4 + 10 + 4);
	p = testpkt_parse(out, len);
	ck_assert(ldns_pkt_tc(p));
	ck_assert_uint_eq(ldns_pkt_ancount(p), 2);
	ck_assert_uint_eq(ldns_pkt_arcount(p), 0);
	ck_assert_uint_eq(ldns_pkt_qdcount(p), 1);
	ck_assert_uint_eq(len, 417);
	ldns_pkt_free(p);

	/* Room for the answer but not the glue: drop glue, no TC. */
	opts.limit = t.additional_offset;
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	p = testpkt_parse(out, len);
	ck_assert(!ldns_pkt_tc(p));
	ck_assert_uint_eq(ldns_pkt_ancount(p), 3);
	ck_assert_uint_eq(ldns_pkt_arcount(p), 0);
	ldns_pkt_free(p);

	opts.limit = MSG_MAX_LEN;
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_uint_eq(len, t.len);
	msg_response_free(&r);
	testpkt_free(&resp);
	testpkt_free(&qp);
}
END_TEST

/*
 * A response to many.example. A (header 12, question 14 + 4: 30 octets)
 * with n_a A records of 2 (owner: a pointer to the qname) + 10 + 4 = 16
 * octets each, then n_ns NS records "example. NS ns.example." of 2 + 10 +
 * 5 ("\2ns" and a pointer) = 17 octets each, TTL 300: 30 + 16 n_a +
 * 17 n_ns octets, no OPT. Returns the length.
 */
static size_t
many_a(uint8_t *buf, unsigned n_a, unsigned n_ns)
{
	static const uint8_t head[] = "\x12\x34\x81\x80\0\1\0\0\0\0\0\0"
	    "\4many\7example\0\0\1\0\1";
	size_t len = sizeof(head) - 1;
	unsigned i;

	memcpy(buf, head, len);
	wire_wr16(buf + 6, (uint16_t)n_a);
	wire_wr16(buf + 8, (uint16_t)n_ns);
	for (i = 0; i < n_a; i++) {
		memcpy(buf + len, "\300\14\0\1\0\1\0\0\1\54\0\4\300\0\2", 15);
		buf[len + 15] = (uint8_t)i;
		len += 16;
	}
	/* "example." is at 12 + 5 = 17 */
	for (i = 0; i < n_ns; i++) {
		memcpy(buf + len, "\300\21\0\2\0\1\0\0\1\54\0\5\2ns\300\21",
		    17);
		len += 17;
	}
	return len;
}

/* Each RR of r, in order, begins where the one before ends, the last
 * ends at len: whole records, and nothing after them. */
static void
assert_whole_records(const struct msg_response *r, size_t len)
{
	size_t i, at = r->question_end;

	for (i = 0; i < r->n_rrs; i++) {
		ck_assert_uint_eq(r->rrs[i].offset, at);
		at = r->rrs[i].end;
	}
	ck_assert_uint_eq(at, len);
}

START_TEST(answer_truncated_whole_records)
{
	static uint8_t resp[MSG_MAX_LEN];
	struct testpkt plain = testpkt_query("many.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 0, 0);
	struct testpkt edns = testpkt_query("many.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 1232, 0);
	struct msg_reply_opts opts = { MSG_UDP_MIN, 1232, -1, NULL };
	struct msg_ttl_rule rule = { 100, 0 };
	uint16_t offsets[64];
	struct msg_response r, a;
	struct msg_template t;
	struct msg_query q;
	size_t len, i;

	/* 60 A records: 30 + 60 * 16 = 990 octets, over 512. */
	len = many_a(resp, 60, 0);
	ck_assert_uint_eq(len, 990);
	ck_assert_int_eq(msg_response_parse(resp, len, &r), 0);
	t = template_of(&r, offsets);
	ck_assert_int_eq(msg_parse_query(plain.wire, plain.len, &q),
	    MSG_PARSE_OK);
	/* Without EDNS, 512 octets (RFC 1035 §4.2.1): (512 - 30) / 16 = 30
	 * records, 30 + 30 * 16 = 510 octets, no OPT. */
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_uint_eq(len, 510);
	ck_assert(out[2] & (MSG_FLAG_TC >> 8));
	ck_assert_uint_eq(wire_rd16(out + 4), 1);
	ck_assert_uint_eq(wire_rd16(out + 6), 30);
	ck_assert_uint_eq(wire_rd16(out + 8), 0);
	ck_assert_uint_eq(wire_rd16(out + 10), 0);
	ck_assert_int_eq(msg_response_parse(out, len, &a), 0);
	assert_whole_records(&a, len);
	/* the first 30, as stored, each TTL aged 300 - 100 = 200 s */
	for (i = 0; i < 30; i++) {
		ck_assert_uint_eq(a.rrs[i].ttl, 200);
		ck_assert_uint_eq(out[a.rrs[i].end - 1], i);
	}
	msg_response_free(&a);

	/* With EDNS and a limit of 600: the OPT (11) stays, (600 - 30 -
	 * 11) / 16 = 34 records, 30 + 544 + 11 = 585 octets. */
	ck_assert_int_eq(msg_parse_query(edns.wire, edns.len, &q),
	    MSG_PARSE_OK);
	opts.limit = 600;
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_uint_eq(len, 585);
	ck_assert(out[2] & (MSG_FLAG_TC >> 8));
	ck_assert_uint_eq(wire_rd16(out + 6), 34);
	ck_assert_uint_eq(wire_rd16(out + 10), 1);
	ck_assert_int_eq(msg_response_parse(out, len, &a), 0);
	assert_whole_records(&a, len);
	ck_assert_int_eq(a.opt_index, 34);
	msg_response_free(&a);
	msg_response_free(&r);

	/* 29 A and 2 NS: the answer (30 + 464 = 494) fits whole, the first
	 * NS too (511), the second not (528 > 512): TC=1, 29 and 1. */
	len = many_a(resp, 29, 2);
	ck_assert_uint_eq(len, 528);
	ck_assert_int_eq(msg_response_parse(resp, len, &r), 0);
	t = template_of(&r, offsets);
	ck_assert_int_eq(msg_parse_query(plain.wire, plain.len, &q),
	    MSG_PARSE_OK);
	opts.limit = MSG_UDP_MIN;
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_uint_eq(len, 511);
	ck_assert(out[2] & (MSG_FLAG_TC >> 8));
	ck_assert_uint_eq(wire_rd16(out + 6), 29);
	ck_assert_uint_eq(wire_rd16(out + 8), 1);
	ck_assert_int_eq(msg_response_parse(out, len, &a), 0);
	assert_whole_records(&a, len);
	msg_response_free(&a);
	msg_response_free(&r);
	testpkt_free(&plain);
	testpkt_free(&edns);
}
END_TEST

START_TEST(answer_truncated_no_later_section)
{
	char big[256], txt[600];
	struct testpkt resp, qp;
	struct msg_reply_opts opts = { MSG_UDP_MIN, 1232, -1, NULL };
	struct msg_ttl_rule rule = { 0, 0 };
	uint16_t offsets[8];
	struct msg_response r, a;
	struct msg_template t;
	struct msg_query q;
	size_t len;

	memset(big, 'x', 250);
	big[250] = '\0';
	snprintf(txt, sizeof(txt), "an|m.example. 300 IN TXT \"%s\" \"%s\"",
	    big, big);
	/*
	 * Header 12, question 11 + 4: 27; A 16 (43); TXT 2 + 10 + 2 * 251
	 * = 514, which does not fit; then an A and an NS (2 + 10 + 5 = 17)
	 * that would fit in what is left, but follow a record that did not:
	 * TC=1 with the first A alone, 43 octets (RFC 2181 §9).
	 */
	resp = testpkt_response("m.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|m.example. 300 IN A 192.0.2.1", txt,
	    "an|m.example. 300 IN A 192.0.2.2",
	    "ns|example. 300 IN NS ns.example.", NULL);
	qp = testpkt_query("m.example.", LDNS_RR_TYPE_A, LDNS_RD, 0, 0);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	t = template_of(&r, offsets);
	ck_assert_uint_eq(t.len, 27 + 16 + 514 + 16 + 17);
	len = msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert_uint_eq(len, 43);
	ck_assert(out[2] & (MSG_FLAG_TC >> 8));
	ck_assert_uint_eq(wire_rd16(out + 6), 1);
	ck_assert_uint_eq(wire_rd16(out + 8), 0);
	ck_assert_uint_eq(wire_rd16(out + 10), 0);
	ck_assert_int_eq(msg_response_parse(out, len, &a), 0);
	assert_whole_records(&a, len);
	msg_response_free(&a);
	msg_response_free(&r);
	testpkt_free(&resp);
	testpkt_free(&qp);
}
END_TEST

START_TEST(answer_ad_bit)
{
	struct testpkt resp = testpkt_response("www.example.", LDNS_RR_TYPE_A,
	    0, 0, "an|www.example. 300 IN A 192.0.2.1", NULL);
	struct testpkt plain = testpkt_query("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 0, 0);
	struct testpkt dnssec = testpkt_query("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 1232, 1);
	struct msg_reply_opts opts = { 1232, 1232, -1, NULL };
	struct msg_ttl_rule rule = { 0, 0 };
	uint16_t offsets[2];
	struct msg_response r;
	struct msg_template t;
	struct msg_query q;

	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	t = template_of(&r, offsets);
	tpl_wire[3] |= MSG_FLAG_AD;	/* the upstream set AD */
	/* RFC 6840 §5.8: AD only to clients that sent DO or AD. */
	ck_assert_int_eq(msg_parse_query(plain.wire, plain.len, &q),
	    MSG_PARSE_OK);
	msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert(!(out[3] & 0x20));
	ck_assert_int_eq(msg_parse_query(dnssec.wire, dnssec.len, &q),
	    MSG_PARSE_OK);
	msg_write_answer(&t, &q, &rule, &opts, out, sizeof(out));
	ck_assert(out[3] & 0x20);
	msg_response_free(&r);
	testpkt_free(&resp);
	testpkt_free(&plain);
	testpkt_free(&dnssec);
}
END_TEST

START_TEST(error_replies)
{
	struct testpkt qp = testpkt_query("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 1232, 0);
	struct msg_reply_opts opts = { 1232, 1232, -1, NULL };
	struct msg_query q;
	ldns_pkt *p;
	size_t len;

	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	len = msg_write_error(&q, MSG_RCODE_SERVFAIL, &opts, out, sizeof(out));
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(ldns_pkt_id(p), 0xbeef);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_SERVFAIL);
	ck_assert_uint_eq(ldns_pkt_qdcount(p), 1);
	ck_assert(ldns_pkt_edns(p));
	ldns_pkt_free(p);

	/* RFC 6891 §6.1.3: BADVERS (16) is 0 in the header, 1 in the OPT. */
	len = msg_write_error(&q, MSG_RCODE_BADVERS, &opts, out, sizeof(out));
	ck_assert_uint_eq(out[3] & 0xf, 0);
	ck_assert_uint_eq(out[len - 11 + 5], 1);
	testpkt_free(&qp);
}
END_TEST

/* A name of 4 + 3 * 63 + 61 + 1 = 255 octets in wire format, the most. */
static const char *
longest_name(char *buf)
{
	memset(buf, 'a', 63);
	buf[63] = '.';
	memset(buf + 64, 'b', 63);
	buf[127] = '.';
	memset(buf + 128, 'c', 63);
	buf[191] = '.';
	memset(buf + 192, 'd', 61);
	strcpy(buf + 253, ".");
	return buf;
}

START_TEST(buffer_sizes)
{
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, MSG_EDE_STALE, NULL };
	struct msg_ttl_rule rule = { 0, 0 };
	uint16_t offsets[4];
	struct testpkt qp, resp;
	struct msg_response r;
	struct msg_template t;
	struct msg_query q;
	char name[256], rr[400];

	/* The longest error: header 12, question 255 + 4, OPT 11 with a
	 * 6-octet EDE option: 288 octets. */
	ck_assert_uint_eq(MSG_ERROR_MAX_LEN, 12 + 255 + 4 + 11 + 6);
	ck_assert_uint_eq(MSG_QUERY_MAX_LEN, 12 + 255 + 4 + 11);
	qp = testpkt_query(longest_name(name), LDNS_RR_TYPE_TXT, LDNS_RD, 1232,
	    0);
	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	ck_assert_uint_eq(q.q.qname_len, 255);
	ck_assert_uint_eq(msg_write_error(&q, MSG_RCODE_SERVFAIL, &opts, out,
	    MSG_ERROR_MAX_LEN), 288);
	ck_assert_uint_eq(msg_write_error(&q, MSG_RCODE_SERVFAIL, &opts, out,
	    MSG_ERROR_MAX_LEN - 1), 0);
	ck_assert_uint_eq(msg_write_query(&q, 1, q.q.qname, 1232, out,
	    MSG_QUERY_MAX_LEN), 282);
	ck_assert_uint_eq(msg_write_query(&q, 1, q.q.qname, 1232, out,
	    MSG_QUERY_MAX_LEN - 1), 0);
	/* An answer that does not fit cap is truncated to header, question
	 * and OPT, which MSG_ERROR_MAX_LEN always holds; below it, nothing. */
	snprintf(rr, sizeof(rr), "an|%s 60 IN TXT \"hello\"", name);
	resp = testpkt_response(name, LDNS_RR_TYPE_TXT, 0, 0, rr, NULL);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	t = template_of(&r, offsets);
	ck_assert_uint_eq(msg_write_answer(&t, &q, &rule, &opts, out,
	    MSG_ERROR_MAX_LEN), 288);
	ck_assert(out[2] & (MSG_FLAG_TC >> 8));
	ck_assert_uint_eq(msg_write_answer(&t, &q, &rule, &opts, out,
	    MSG_ERROR_MAX_LEN - 1), 0);
	msg_response_free(&r);
	testpkt_free(&resp);
	testpkt_free(&qp);
}
END_TEST

START_TEST(upstream_query)
{
	struct testpkt qp = testpkt_query("www.example.", LDNS_RR_TYPE_AAAA,
	    LDNS_RD | LDNS_CD, 4096, 1);
	struct msg_query q;
	ldns_pkt *p;
	size_t len;

	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	len = msg_write_query(&q, 0x4242, (const uint8_t *)"\3wWw\7eXample\0",
	    1232, out, sizeof(out));
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(ldns_pkt_id(p), 0x4242);
	ck_assert(ldns_pkt_rd(p) && ldns_pkt_cd(p) && ldns_pkt_ad(p));
	ck_assert(!ldns_pkt_qr(p));
	ck_assert_uint_eq(ldns_pkt_edns_udp_size(p), 1232);
	ck_assert(ldns_pkt_edns_do(p));
	ck_assert_mem_eq(out + 12, "\3wWw\7eXample\0", 13);
	ldns_pkt_free(p);
	/* RFC 6891 §7: to an upstream without EDNS, no OPT (so no DO): the
	 * header and question alone, 12 + 13 + 4 octets. */
	len = msg_write_query(&q, 0x4242, (const uint8_t *)"\3wWw\7eXample\0",
	    0, out, sizeof(out));
	ck_assert_uint_eq(len, 12 + 13 + 4);
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(ldns_pkt_arcount(p), 0);
	ck_assert(!ldns_pkt_edns(p));
	ck_assert(ldns_pkt_rd(p) && ldns_pkt_cd(p));
	ldns_pkt_free(p);
	testpkt_free(&qp);
}
END_TEST

/* Wire messages with a defect in one record: all must be refused. */
START_TEST(response_bad_records)
{
	/* Header: id, QR RD RA, 1 question, 1 answer; question www.x. A. */
	static const uint8_t head[] = "\x12\x34\x81\x80\0\1\0\1\0\0\0\0"
	    "\3www\1x\0\0\1\0\1";
	static const struct {
		const char	*what;
		const char	*rr;
		size_t		 len;
	} cases[] = {
		{ "owner pointing at itself", "\xc0\x17\0\1\0\1\0\0\0\x3c\0\4"
		    "\xc0\0\2\1", 16 },
		{ "owner pointing forward", "\xc0\x30\0\1\0\1\0\0\0\x3c\0\4"
		    "\xc0\0\2\1", 16 },
		/* Offset 11 is ARCOUNT's low octet, 0: read as a name, the
		 * root; but a client gets another ARCOUNT (our OPT), so
		 * another name (found by fuzz_response). */
		{ "owner pointing into the header", "\xc0\x0b\0\1\0\1\0\0"
		    "\0\x3c\0\4\xc0\0\2\1", 16 },
		{ "CNAME target pointing into the header", "\xc0\x0c\0\5\0\1"
		    "\0\0\0\x3c\0\4\1y\xc0\x0b", 16 },
		{ "A of 3 octets", "\xc0\x0c\0\1\0\1\0\0\0\x3c\0\3"
		    "\xc0\0\2", 15 },
		{ "CNAME target past its rdata", "\xc0\x0c\0\5\0\1\0\0\0\x3c"
		    "\0\2\3abc", 16 },
		{ "CNAME target looping", "\xc0\x0c\0\5\0\1\0\0\0\x3c\0\2"
		    "\xc0\x23", 14 },
	};
	uint8_t pkt[128];
	struct msg_response r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(pkt, head, sizeof(head) - 1);
		memcpy(pkt + sizeof(head) - 1, cases[i].rr, cases[i].len);
		ck_assert_msg(msg_response_parse(pkt, sizeof(head) - 1 +
		    cases[i].len, &r) == -1, "accepted: %s", cases[i].what);
	}
}
END_TEST

/*
 * A compression pointer points at a prior occurrence of a name (RFC 1035
 * §4.1.4), which lies wholly before the pointer, and never through what
 * an answer to a client changes: a TTL (aged, capped) or the OPT record
 * (ours instead). Found by fuzz_response: a name read through a TTL
 * octet 0x2c, a label of 44 octets, ran on past the records into
 * trailing octets that are not passed on, and clients got an answer
 * they could not read.
 */
START_TEST(response_pointers_to_names_only)
{
	/* Header: QR RD RA, 1 question, 2 answers; question www.x. A (the
	 * name at 12, its label "x" at 16); the first answer at 23:
	 * www.x. 24690700 A 192.0.2.1, its TTL octets at 29 01 78 c0 0c
	 * reading as the name "x" + a pointer to 12. */
	static const uint8_t head[] = "\x12\x34\x81\x80\0\1\0\2\0\0\0\0"
	    "\3www\1x\0\0\1\0\1"
	    "\xc0\x0c\0\1\0\1\x01\x78\xc0\x0c\0\4\xc0\0\2\1";
	static const struct {
		const char	*what;
		const char	*rr;
		size_t		 len;
		int		 ok;
	} cases[] = {
		{ "owner through the first answer's TTL",
		    "\xc0\x1d\0\1\0\1\0\0\0\x3c\0\4\xc0\0\2\2", 16, 0 },
		{ "owner at the question's label x.", "\xc0\x10\0\1\0\1\0\0"
		    "\0\x3c\0\4\xc0\0\2\2", 16, 1 },
		{ "CNAME target through the first answer's TTL",
		    "\xc0\x0c\0\5\0\1\0\0\0\x3c\0\2\xc0\x1d", 14, 0 },
		/* a pointer to a name that is a pointer is to a name */
		{ "CNAME target at the first answer's owner, a pointer",
		    "\xc0\x0c\0\5\0\1\0\0\0\x3c\0\2\xc0\x17", 14, 1 },
		{ "owner pointing forward",
		    "\xc0\x2a\0\1\0\1\0\0\0\x3c\0\4\xc0\0\2\2", 16, 0 },
	};
	uint8_t pkt[128];
	struct msg_response r;
	size_t i, n = sizeof(head) - 1;
	int ok;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(pkt, head, n);
		memcpy(pkt + n, cases[i].rr, cases[i].len);
		ok = msg_response_parse(pkt, n + cases[i].len, &r) == 0;
		ck_assert_msg(ok == cases[i].ok, "%s: %s", cases[i].ok ?
		    "refused" : "accepted", cases[i].what);
		msg_response_free(&r);
	}
}
END_TEST

/*
 * A name may point into an earlier record's rdata: glue whose owner
 * points at the NS target, as servers compress, or into rdata we do not
 * read as names (named points into a NAPTR's replacement); but what it
 * points to must end before the pointer, and never run into the
 * following records.
 */
START_TEST(response_pointers_into_rdata)
{
	/* Header: QR RD RA, 1 question, 1 authority, 1 additional; question
	 * x. NS; authority at 19: x. NS ns.x. (rdata at 31: "\2ns" and a
	 * pointer to 12); additional at 37: owner a pointer to 31. */
	static const uint8_t ns[] = "\x12\x34\x81\x80\0\1\0\0\0\1\0\1"
	    "\1x\0\0\2\0\1"
	    "\xc0\x0c\0\2\0\1\0\0\0\x3c\0\5\2ns\xc0\x0c"
	    "\xc0\x1f\0\1\0\1\0\0\0\x3c\0\4\xc0\0\2\1";
	uint8_t pkt[sizeof(ns)];
	struct msg_response r;

	ck_assert_int_eq(msg_response_parse(ns, sizeof(ns) - 1, &r), 0);
	msg_response_free(&r);
	/* The same as type 65280 (private use, opaque): still a name. */
	memcpy(pkt, ns, sizeof(ns));
	pkt[21] = 0xff;
	pkt[22] = 0x00;
	ck_assert_int_eq(msg_response_parse(pkt, sizeof(ns) - 1, &r), 0);
	msg_response_free(&r);
	/* Its rdata "\6ns" + pointer instead: the label of 6 runs past the
	 * rdata and into the owner that points at it. */
	pkt[31] = 6;
	ck_assert_int_eq(msg_response_parse(pkt, sizeof(ns) - 1, &r), -1);
}
END_TEST

START_TEST(response_not_an_answer)
{
	struct testpkt t;
	struct msg_response r;

	/* A record of another class answers nothing (RFC 1035 §4.3.2). */
	t = testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 300 CH A 192.0.2.1", NULL);
	ck_assert_int_eq(classify(t, &r), MSG_CLASS_FAILURE);
	msg_response_free(&r);
	testpkt_free(&t);
	/* An SOA whose rdata ends early is malformed, not a negative TTL:
	 * NXDOMAIN, one authority SOA with root mname and rname and only
	 * 16 of its 20 octets of numbers (rdlength 18). */
	{
		static const uint8_t nx[] = "\x12\x34\x81\x83\0\1\0\0\0\1"
		    "\0\0\2nx\1x\0\0\1\0\1"
		    "\xc0\x0f\0\6\0\1\0\0\0\x3c\0\x12\0\0"
		    "0123456789abcdef";

		ck_assert_int_eq(msg_response_parse(nx, sizeof(nx) - 1, &r),
		    -1);
	}
}
END_TEST

/*
 * A CNAME chain is followed at most MSG_CHAIN_MAX = 16 CNAMEs from the
 * qname (RFC 1034 §3.6.2 asks for a bound, against loops): 16 and then
 * the A is an answer, 17 a failure, and so is a loop.
 */
START_TEST(response_chain_bound)
{
	/* Header: id, QR RD RA, 1 question; question a.example. A IN. */
	static const uint8_t head[] = "\x12\x34\x81\x80\0\1\0\0\0\0\0\0"
	    "\1a\7example\0\0\1\0\1";
	static const uint8_t loop[] = "\x12\x34\x81\x80\0\1\0\2\0\0\0\0"
	    "\1a\7example\0\0\1\0\1"
	    /* a.example. CNAME b.example.; b.example. CNAME a.example. */
	    "\xc0\x0c\0\5\0\1\0\0\1\x2c\0\4\1b\xc0\x0e"
	    "\xc0\x27\0\5\0\1\0\0\1\x2c\0\2\xc0\x0c";
	uint8_t pkt[1024];
	struct msg_response r;
	size_t len;

	memcpy(pkt, head, sizeof(head) - 1);
	len = testpkt_chain(pkt, sizeof(head) - 1, MSG_CHAIN_MAX);
	ck_assert_int_eq(msg_response_parse(pkt, len, &r), 0);
	ck_assert_int_eq(r.class, MSG_CLASS_ANSWER);
	ck_assert(r.has_cname && !r.long_chain);
	msg_response_free(&r);

	len = testpkt_chain(pkt, sizeof(head) - 1, MSG_CHAIN_MAX + 1);
	ck_assert_int_eq(msg_response_parse(pkt, len, &r), 0);
	ck_assert_int_eq(r.class, MSG_CLASS_FAILURE);
	ck_assert(r.long_chain);
	msg_response_free(&r);

	ck_assert_int_eq(msg_response_parse(loop, sizeof(loop) - 1, &r), 0);
	ck_assert_int_eq(r.class, MSG_CLASS_FAILURE);
	ck_assert(r.long_chain);
	msg_response_free(&r);
}
END_TEST

/* Header and question alone: what a response answers, read first. */
START_TEST(response_question_first)
{
	static const uint8_t head[] = "\x12\x34\x81\x80\0\1\0\5\0\0\0\0"
	    "\1a\7example\0\0\1\0\1";
	struct msg_question q;
	uint8_t pkt[64];
	uint16_t id;

	/* Five answers promised, none there: the rest is not read. */
	memcpy(pkt, head, sizeof(head) - 1);
	ck_assert_int_eq(msg_response_question(pkt, sizeof(head) - 1, &id,
	    &q), sizeof(head) - 1);
	ck_assert_uint_eq(id, 0x1234);
	ck_assert_uint_eq(q.qname_len, 11);
	ck_assert_mem_eq(q.qname, "\1a\7example\0", 11);
	ck_assert_uint_eq(q.qtype, MSG_TYPE_A);
	ck_assert_uint_eq(q.qclass, MSG_CLASS_IN);
	pkt[2] &= 0x7f;			/* QR=0: a query, not a response */
	ck_assert_int_eq(msg_response_question(pkt, sizeof(head) - 1, &id,
	    &q), -1);
	pkt[2] |= 0x80;
	pkt[5] = 2;			/* QDCOUNT 2 */
	ck_assert_int_eq(msg_response_question(pkt, sizeof(head) - 1, &id,
	    &q), -1);
	pkt[5] = 1;
	ck_assert_int_eq(msg_response_question(pkt, sizeof(head) - 2, &id,
	    &q), -1);		/* the question cut short */
}
END_TEST

static Suite *
msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse_query_ok);
	tcase_add_test(tc, parse_query_drop);
	tcase_add_test(tc, parse_query_formerr);
	tcase_add_test(tc, parse_query_long_label);
	tcase_add_test(tc, parse_query_notimp_badvers);
	tcase_add_test(tc, opt_ttl_is_not_a_ttl);
	tcase_add_test(tc, name_case);
	tcase_add_test(tc, name_case_every_octet);
	tcase_add_test(tc, classify_answers);
	tcase_add_test(tc, classify_negative_and_failures);
	tcase_add_test(tc, response_malformed);
	tcase_add_test(tc, response_bad_records);
	tcase_add_test(tc, response_pointers_to_names_only);
	tcase_add_test(tc, response_pointers_into_rdata);
	tcase_add_test(tc, response_not_an_answer);
	tcase_add_test(tc, response_chain_bound);
	tcase_add_test(tc, response_question_first);
	tcase_add_test(tc, answer_ttl_case_and_opt);
	tcase_add_test(tc, answer_truncation);
	tcase_add_test(tc, answer_truncated_whole_records);
	tcase_add_test(tc, answer_truncated_no_later_section);
	tcase_add_test(tc, answer_ad_bit);
	tcase_add_test(tc, error_replies);
	tcase_add_test(tc, buffer_sizes);
	tcase_add_test(tc, upstream_query);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(msg_suite());
}
