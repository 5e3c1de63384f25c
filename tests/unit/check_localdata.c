/*
 * check_localdata.c: local answers as a client gets them: records, the
 * SOA of RFC 6303 §3 in negative answers (RFC 2308 §3), CNAME chains,
 * REFUSED, OPT and truncation.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "config.h"
#include "localbuild.h"
#include "localdata.h"
#include "log.h"
#include "parse.h"
#include "testpkt.h"
#include "testutil.h"

static struct testutil_workdir test_dir;
static struct localzone_table *table;
static uint8_t out[MSG_MAX_LEN + 64];
static uint8_t work[MSG_MAX_LEN];

/* A table of local-zone and local-data lines, hosts-file none. */
static void
table_set(const char *text)
{
	struct config conf;
	struct testutil_capture c;
	char full[8192];

	snprintf(full, sizeof(full), "hosts-file none\n%sforward . { "
	    "upstream 192.0.2.1 }\n", text);
	testutil_write(NULL, "x.conf", full);
	testutil_capture_start(&c);
	ck_assert_int_eq(parse_load("x.conf", &conf, c.fp), 0);
	ck_assert_str_eq(testutil_capture_end(&c), "");
	testutil_capture_free(&c);
	localzone_table_unref(table);
	ck_assert_ptr_nonnull(table = localbuild_table(&conf));
	config_free(&conf);
}

static void
setup(void)
{
	log_init("check_localdata", LOG_LEVEL_ERR);
	testutil_workdir_enter(&test_dir);
	table = NULL;
	table_set("local-zone corp.example static\n"
	    "local-zone shut.example refuse\n"
	    "local-data \"www.corp.example. 300 A 10.1.2.3\"\n"
	    "local-data \"a1.corp.example. 60 CNAME a2.corp.example.\"\n"
	    "local-data \"a2.corp.example. 60 CNAME www.corp.example.\"\n"
	    "local-data \"loop1.corp.example. CNAME loop2.corp.example.\"\n"
	    "local-data \"loop2.corp.example. CNAME loop1.corp.example.\"\n"
	    "local-data \"self.corp.example. CNAME Self.corp.example.\"\n"
	    "local-data \"gone.corp.example. CNAME nope.corp.example.\"\n"
	    "local-data \"out.corp.example. CNAME www.example.org.\"\n");
}

static void
teardown(void)
{
	localzone_table_unref(table);
	testutil_workdir_leave(&test_dir);
}

/*
 * The answer to qname/qtype of class qclass, limit octets at most, EDNS
 * if edns_size > 0; NULL if it is not a local name.
 */
static ldns_pkt *
ask_as(const char *qname, ldns_rr_type qtype, uint16_t edns_size,
    size_t limit, int qclass)
{
	struct msg_reply_opts opts = { limit, 1232, -1, NULL };
	struct testpkt qp = testpkt_query(qname, qtype, LDNS_RD, edns_size, 0);
	struct msg_query q;
	uint8_t folded[MSG_NAME_MAX];
	size_t len;

	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q), MSG_PARSE_OK);
	if (qclass != 0)
		q.q.qclass = (uint16_t)qclass;
	memcpy(folded, q.q.qname, q.q.qname_len);
	msg_name_fold(folded, q.q.qname_len);
	len = localdata_answer(table, &q, folded, &opts, work, sizeof(work),
	    out, sizeof(out));
	testpkt_free(&qp);
	if (len == 0)
		return NULL;
	ck_assert_uint_le(len, limit);
	return testpkt_parse(out, len);
}

static ldns_pkt *
ask(const char *qname, ldns_rr_type qtype)
{
	return ask_as(qname, qtype, 1232, 1232, 0);
}

/* Record i of section sec is want, in ldns's presentation format. */
static void
assert_record(ldns_rr_list *sec, size_t i, const char *want)
{
	char *s;

	ck_assert_uint_lt(i, ldns_rr_list_rr_count(sec));
	s = ldns_rr2str(ldns_rr_list_rr(sec, i));
	ck_assert_str_eq(s, want);
	LDNS_FREE(s);
}

START_TEST(localhost_addresses)
{
	ldns_pkt *p;

	p = ask("localhost.", LDNS_RR_TYPE_A);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	assert_record(ldns_pkt_answer(p), 0,
	    "localhost.\t10800\tIN\tA\t127.0.0.1\n");
	ldns_pkt_free(p);
	/* Any name below, any case (RFC 6761 §6.3): the client's case. */
	p = ask("Web.LOCALHOST.", LDNS_RR_TYPE_AAAA);
	ck_assert_ptr_nonnull(p);
	assert_record(ldns_pkt_answer(p), 0,
	    "Web.LOCALHOST.\t10800\tIN\tAAAA\t::1\n");
	ldns_pkt_free(p);
}
END_TEST

/*
 * RFC 2308 §2.2 and §3: NODATA is NOERROR without records, and the SOA in
 * the authority section; RFC 6303 §3 gives its fields: the zone's name,
 * nobody.invalid., serial 1, 3600 1200 604800, MINIMUM 10800, TTL 10800.
 */
START_TEST(negative_answers)
{
	static const char soa10[] = "10.in-addr.arpa.\t10800\tIN\tSOA\t"
	    "10.in-addr.arpa. nobody.invalid. 1 3600 1200 604800 10800\n";
	ldns_pkt *p;

	p = ask("localhost.", LDNS_RR_TYPE_MX);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 0);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 1);
	assert_record(ldns_pkt_authority(p), 0, "localhost.\t10800\tIN\tSOA\t"
	    "localhost. nobody.invalid. 1 3600 1200 604800 10800\n");
	ldns_pkt_free(p);
	/* NXDOMAIN below the zone; its SOA's owner is the zone's name as the
	 * client wrote it (a pointer into the question) */
	p = ask("1.0.0.10.IN-ADDR.arpa.", LDNS_RR_TYPE_PTR);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 0);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 1);
	assert_record(ldns_pkt_authority(p), 0, "10.IN-ADDR.arpa.\t10800\t"
	    "IN\tSOA\t10.in-addr.arpa. nobody.invalid. 1 3600 1200 604800 "
	    "10800\n");
	ldns_pkt_free(p);
	p = ask("10.in-addr.arpa.", LDNS_RR_TYPE_SOA);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	assert_record(ldns_pkt_answer(p), 0, soa10);
	ldns_pkt_free(p);
	p = ask("10.in-addr.arpa.", LDNS_RR_TYPE_NS);
	assert_record(ldns_pkt_answer(p), 0,
	    "10.in-addr.arpa.\t10800\tIN\tNS\t10.in-addr.arpa.\n");
	ldns_pkt_free(p);
	/* a configured static zone: TTL 3600, local-data's default */
	p = ask("nope.corp.example.", LDNS_RR_TYPE_A);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
	assert_record(ldns_pkt_authority(p), 0, "corp.example.\t3600\tIN\t"
	    "SOA\tcorp.example. nobody.invalid. 1 3600 1200 604800 3600\n");
	ldns_pkt_free(p);
}
END_TEST

/* RFC 1034 §3.6.2: a CNAME, then its target's records while local. */
START_TEST(cname_chain)
{
	ldns_pkt *p;

	p = ask("a1.corp.example.", LDNS_RR_TYPE_A);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 3);
	assert_record(ldns_pkt_answer(p), 0, "a1.corp.example.\t60\tIN\t"
	    "CNAME\ta2.corp.example.\n");
	assert_record(ldns_pkt_answer(p), 1, "a2.corp.example.\t60\tIN\t"
	    "CNAME\twww.corp.example.\n");
	assert_record(ldns_pkt_answer(p), 2, "www.corp.example.\t300\tIN\t"
	    "A\t10.1.2.3\n");
	ldns_pkt_free(p);
	/* asked for the CNAME itself: only it */
	p = ask("a1.corp.example.", LDNS_RR_TYPE_CNAME);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	ldns_pkt_free(p);
	/* a loop ends where a name comes round again: each CNAME of it
	 * once (RFC 2181 §5: no record twice), for the client to see the
	 * loop, not LOCALDATA_MAX_CHAIN copies */
	p = ask("loop1.corp.example.", LDNS_RR_TYPE_A);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 2);
	assert_record(ldns_pkt_answer(p), 0, "loop1.corp.example.\t3600\tIN\t"
	    "CNAME\tloop2.corp.example.\n");
	assert_record(ldns_pkt_answer(p), 1, "loop2.corp.example.\t3600\tIN\t"
	    "CNAME\tloop1.corp.example.\n");
	ldns_pkt_free(p);
	p = ask("SELF.corp.example.", LDNS_RR_TYPE_A);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	ldns_pkt_free(p);
	/* the chain's end has no AAAA: NODATA there, so the SOA of its
	 * zone (RFC 2308 §3), for the client's negative cache */
	p = ask("a1.corp.example.", LDNS_RR_TYPE_AAAA);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 2);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 1);
	assert_record(ldns_pkt_authority(p), 0, "corp.example.\t3600\tIN\t"
	    "SOA\tcorp.example. nobody.invalid. 1 3600 1200 604800 3600\n");
	ldns_pkt_free(p);
	/* a target that does not exist in a static zone: the rcode is the
	 * chain's end's, NXDOMAIN (RFC 6604 §3), with the SOA */
	p = ask("gone.corp.example.", LDNS_RR_TYPE_A);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 1);
	assert_record(ldns_pkt_authority(p), 0, "corp.example.\t3600\tIN\t"
	    "SOA\tcorp.example. nobody.invalid. 1 3600 1200 604800 3600\n");
	ldns_pkt_free(p);
	/* a target that is not local: the CNAME alone */
	p = ask("out.corp.example.", LDNS_RR_TYPE_A);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	ldns_pkt_free(p);
}
END_TEST

START_TEST(refused_and_not_local)
{
	ldns_pkt *p;

	p = ask("www.shut.example.", LDNS_RR_TYPE_A);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_REFUSED);
	ck_assert_uint_eq(ldns_pkt_ancount(p) + ldns_pkt_nscount(p), 0);
	ldns_pkt_free(p);
	ck_assert_ptr_null(ask("notlocalhost.", LDNS_RR_TYPE_A));
	ck_assert_ptr_null(ask("localhost.example.", LDNS_RR_TYPE_A));
	ck_assert_ptr_null(ask("example.", LDNS_RR_TYPE_A));
	ck_assert_ptr_null(ask(".", LDNS_RR_TYPE_NS));
	/* class CH (version.bind and the like) is not ours */
	ck_assert_ptr_null(ask_as("localhost.", LDNS_RR_TYPE_TXT, 1232, 1232,
	    LDNS_RR_CLASS_CH));
}
END_TEST

/*
 * Our OPT only for a client that sent one (RFC 6891 §6.1.1); an answer
 * over the client's limit: TC=1 (RFC 1035 §4.2.1) with the whole records
 * that fit (RFC 2181 §9).
 */
START_TEST(opt_and_truncation)
{
	char text[200 * 64 + 64], *p;
	ldns_pkt *pkt;
	int i;

	pkt = ask_as("localhost.", LDNS_RR_TYPE_A, 0, 512, 0);
	ck_assert(!ldns_pkt_edns(pkt));
	ldns_pkt_free(pkt);
	pkt = ask("localhost.", LDNS_RR_TYPE_A);
	ck_assert(ldns_pkt_edns(pkt));
	ck_assert_uint_eq(ldns_pkt_edns_udp_size(pkt), 1232);
	ldns_pkt_free(pkt);
	/* 100 A records at one name: 12 + 23 (question: 19 + 4) + 100 * 16
	 * octets > 512; each record 2 (a pointer to the qname) + 10 + 4 */
	for (p = text, i = 0; i < 100; i++)
		p += snprintf(p, sizeof(text) - (size_t)(p - text),
		    "local-data \"many.corp.example. A 10.0.0.%d\"\n", i);
	table_set(text);
	pkt = ask_as("many.corp.example.", LDNS_RR_TYPE_A, 0, 512, 0);
	ck_assert(ldns_pkt_tc(pkt));
	/* (512 - 35) / 16 = 29 of them */
	ck_assert_uint_eq(ldns_pkt_ancount(pkt), 29);
	ldns_pkt_free(pkt);
	pkt = ask_as("many.corp.example.", LDNS_RR_TYPE_A, 0, MSG_MAX_LEN, 0);
	ck_assert(!ldns_pkt_tc(pkt));
	ck_assert_uint_eq(ldns_pkt_ancount(pkt), 100);
	ldns_pkt_free(pkt);
}
END_TEST

static Suite *
localdata_suite(void)
{
	Suite *s = suite_create("localdata");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, localhost_addresses);
	tcase_add_test(tc, negative_answers);
	tcase_add_test(tc, cname_chain);
	tcase_add_test(tc, refused_and_not_local);
	tcase_add_test(tc, opt_and_truncation);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(localdata_suite());
}
