/* check_localdata.c: the localhost names of RFC 6761 §6.3. */
#include "autoconf.h"

#include <check.h>

#include "check_main.h"
#include "localdata.h"
#include "testpkt.h"

static uint8_t out[MSG_MAX_LEN + 64];

/* Answer qname/qtype locally; NULL if it is not a local name. */
static ldns_pkt *
ask(const char *qname, ldns_rr_type qtype)
{
	struct msg_reply_opts opts = { 1232, 1232, -1 };
	struct testpkt qp = testpkt_query(qname, qtype, LDNS_RD, 0, 0);
	struct msg_query q;
	size_t len;

	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	len = localdata_answer(&q, &opts, out, sizeof(out));
	testpkt_free(&qp);
	return len == 0 ? NULL : testpkt_parse(out, len);
}

START_TEST(localhost_addresses)
{
	ldns_pkt *p;
	char *s;

	p = ask("localhost.", LDNS_RR_TYPE_A);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	s = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(p), 0),
	    0));
	ck_assert_str_eq(s, "127.0.0.1");
	LDNS_FREE(s);
	ck_assert_uint_eq(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_answer(p), 0)),
	    LOCALDATA_TTL);
	ldns_pkt_free(p);
	/* Any name below, any case (RFC 6761 §6.3: "localhost." and below). */
	p = ask("Web.LOCALHOST.", LDNS_RR_TYPE_AAAA);
	ck_assert_ptr_nonnull(p);
	s = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(p), 0),
	    0));
	ck_assert_str_eq(s, "::1");
	LDNS_FREE(s);
	ldns_pkt_free(p);
}
END_TEST

START_TEST(localhost_nodata)
{
	ldns_pkt *p = ask("localhost.", LDNS_RR_TYPE_MX);

	/* RFC 2308 §2.2: NODATA is NOERROR, no answer, the SOA. */
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 0);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 1);
	ck_assert_int_eq(ldns_rr_get_type(ldns_rr_list_rr(
	    ldns_pkt_authority(p), 0)), LDNS_RR_TYPE_SOA);
	ldns_pkt_free(p);
}
END_TEST

START_TEST(not_local)
{
	ck_assert_ptr_null(ask("notlocalhost.", LDNS_RR_TYPE_A));
	ck_assert_ptr_null(ask("localhost.example.", LDNS_RR_TYPE_A));
	ck_assert_ptr_null(ask("example.", LDNS_RR_TYPE_A));
	ck_assert_ptr_null(ask(".", LDNS_RR_TYPE_NS));
}
END_TEST

static Suite *
localdata_suite(void)
{
	Suite *s = suite_create("localdata");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, localhost_addresses);
	tcase_add_test(tc, localhost_nodata);
	tcase_add_test(tc, not_local);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(localdata_suite());
}
