/* check_queryinfo.c: one answered query as the JSON line every output shares. */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "check_main.h"
#include "queryinfo.h"
#include "testpkt.h"

/* 2026-12-07T23:01:02.345Z in Unix ms: 1796684462 s (worked out with
 * date -u -d @1796684462), and 345 ms. */
#define WALL_MS	1796684462345LL

static void
info_of(struct queryinfo *qi, struct msg_query *q, struct addr *client,
    const struct testpkt *query, const struct testpkt *answer)
{
	const char *errstr;

	ck_assert_int_eq(msg_parse_query(query->wire, query->len, q),
	    MSG_PARSE_OK);
	ck_assert_int_eq(addr_parse("192.0.2.7:41234", 53, client, &errstr),
	    0);
	memset(qi, 0, sizeof(*qi));
	qi->client = client;
	qi->q = q;
	qi->answer = answer->wire;
	qi->answer_len = answer->len;
	qi->arrived = 1000;
	qi->now = 1003;
}

START_TEST(upstream_answer)
{
	struct testpkt query = testpkt_query("www.Example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 0, 0);
	struct testpkt answer = testpkt_response("www.example.",
	    LDNS_RR_TYPE_A, LDNS_RCODE_NOERROR, 0,
	    "an|www.example. 300 IN A 192.0.2.1", NULL);
	char buf[QUERYINFO_JSON_MAX];
	struct queryinfo qi;
	struct msg_query q;
	struct addr client;
	size_t len;

	info_of(&qi, &q, &client, &query, &answer);
	qi.source = QUERYINFO_UPSTREAM;
	qi.upstream = "192.0.2.53:53";
	len = queryinfo_json(&qi, WALL_MS, buf, sizeof(buf));
	/* The qname as the client wrote it; latency 1003 - 1000 ms. */
	ck_assert_str_eq(buf, "{\"time\":\"2026-12-07T23:01:02.345Z\","
	    "\"client\":\"192.0.2.7\",\"port\":41234,\"protocol\":\"udp\","
	    "\"name\":\"www.Example.\",\"type\":\"A\",\"class\":\"IN\","
	    "\"rcode\":\"NOERROR\","
	    "\"answer\":[\"www.example. 300 IN A 192.0.2.1\"],"
	    "\"source\":\"upstream\",\"upstream\":\"192.0.2.53:53\","
	    "\"latency_ms\":3}");
	ck_assert_uint_eq(len, strlen(buf));
	testpkt_free(&query);
	testpkt_free(&answer);
}
END_TEST

/* A TXT record's quotes and backslashes escaped; NXDOMAIN, no records. */
START_TEST(escaped_and_negative)
{
	struct testpkt query = testpkt_query("t.example.", LDNS_RR_TYPE_TXT,
	    LDNS_RD, 0, 0);
	struct testpkt txt = testpkt_response("t.example.", LDNS_RR_TYPE_TXT,
	    LDNS_RCODE_NOERROR, 0, "an|t.example. 60 IN TXT \"a\\\\b\"", NULL);
	struct testpkt nx = testpkt_response("t.example.", LDNS_RR_TYPE_TXT,
	    LDNS_RCODE_NXDOMAIN, 0, NULL);
	char buf[QUERYINFO_JSON_MAX];
	struct queryinfo qi;
	struct msg_query q;
	struct addr client;

	info_of(&qi, &q, &client, &query, &txt);
	qi.tcp = 1;
	qi.source = QUERYINFO_CACHE;
	(void)queryinfo_json(&qi, WALL_MS, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"protocol\":\"tcp\""));
	/* ldns writes "a\\b"; JSON escapes the quotes and the backslashes. */
	ck_assert_ptr_nonnull(strstr(buf,
	    "\"answer\":[\"t.example. 60 IN TXT \\\"a\\\\\\\\b\\\"\"]"));
	ck_assert_ptr_nonnull(strstr(buf, "\"source\":\"cache\","
	    "\"latency_ms\":3}"));
	qi.answer = nx.wire;
	qi.answer_len = nx.len;
	qi.source = QUERYINFO_STALE;
	(void)queryinfo_json(&qi, WALL_MS, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"rcode\":\"NXDOMAIN\","
	    "\"answer\":[],\"source\":\"stale\""));
	testpkt_free(&query);
	testpkt_free(&txt);
	testpkt_free(&nx);
}
END_TEST

/* An answer longer than the line: its records cut, the object whole. */
START_TEST(long_answer_cut)
{
	struct testpkt query = testpkt_query("many.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 0, 0);
	struct testpkt answer;
	char buf[600], rr[40][64];
	struct queryinfo qi;
	struct msg_query q;
	struct addr client;
	ldns_pkt *p;
	ldns_rr *r;
	size_t i;

	ck_assert_int_eq(ldns_pkt_query_new_frm_str(&p, "many.example.",
	    LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD), LDNS_STATUS_OK);
	for (i = 0; i < 40; i++) {
		snprintf(rr[i], sizeof(rr[i]), "many.example. 60 IN A "
		    "192.0.2.%zu", i + 1);
		ck_assert_int_eq(ldns_rr_new_frm_str(&r, rr[i], 0, NULL,
		    NULL), LDNS_STATUS_OK);
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, r);
	}
	ldns_pkt_set_qr(p, 1);
	ck_assert_int_eq(ldns_pkt2wire(&answer.wire, p, &answer.len),
	    LDNS_STATUS_OK);
	ldns_pkt_free(p);
	info_of(&qi, &q, &client, &query, &answer);
	qi.source = QUERYINFO_LOCAL;
	(void)queryinfo_json(&qi, WALL_MS, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, ",\"...\"],\"source\":\"local\","
	    "\"latency_ms\":3}"));
	ck_assert_uint_lt(strlen(buf), sizeof(buf));
	testpkt_free(&query);
	testpkt_free(&answer);
}
END_TEST

START_TEST(source_names)
{
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_CACHE), "cache");
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_STALE), "stale");
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_LKG),
	    "last-known-good");
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_UPSTREAM),
	    "upstream");
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_LOCAL), "local");
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_REFUSED),
	    "refused");
	ck_assert_str_eq(queryinfo_source_name(QUERYINFO_ERROR), "error");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("queryinfo");
	TCase *tc = tcase_create("queryinfo");

	tcase_add_test(tc, upstream_answer);
	tcase_add_test(tc, escaped_and_negative);
	tcase_add_test(tc, long_answer_cut);
	tcase_add_test(tc, source_names);
	suite_add_tcase(s, tc);
	return check_main_run(s);
}
