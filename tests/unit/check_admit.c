/* check_admit.c: unit tests of admit: allow, ratelimit, minimal ANY. */
#include "autoconf.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ldns/ldns.h>

#include "acl.h"
#include "admit.h"
#include "check_main.h"
#include "config.h"
#include "log.h"
#include "msg.h"
#include "testaddr.h"
#include "testpkt.h"

#define UDP	1
#define TCP	0

static struct config conf;
static struct metrics m;
static char logged[4096];

static void
rec_sink(enum log_level level, const char *msg)
{
	size_t used = strlen(logged);

	(void)level;
	snprintf(logged + used, sizeof(logged) - used, "%s\n", msg);
}

/* The defaults, allow 127.0.0.1/32, exempt-clients 127.0.0.3/32. */
static void
setup(void)
{
	log_init("check_admit", LOG_LEVEL_INFO);
	log_set_sink(rec_sink);
	logged[0] = '\0';
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(config_defaults(&conf), 0);
	acl_clear(&conf.allow.acl);
	acl_clear(&conf.exempt_clients.acl);
}

static void
teardown(void)
{
	config_free(&conf);
	log_set_sink(NULL);
}

/* Replace acl with the networks given (NULL-terminated), compiled. */
static void
set_nets(struct acl *acl, ...)
{
	struct acl_prefix p;
	const char *str, *errstr;
	va_list ap;

	acl_clear(acl);
	va_start(ap, acl);
	while ((str = va_arg(ap, const char *)) != NULL) {
		ck_assert_int_eq(acl_prefix_parse(str, &p, &errstr), 0);
		ck_assert_int_eq(acl_add(acl, &p), 0);
	}
	va_end(ap);
	ck_assert_int_eq(acl_compile(acl), 0);
}

#define A(str)	testaddr_parse((str), 4242)

static enum admit_verdict
query_from(struct admit *a, const char *client, int udp, uint64_t now)
{
	struct addr c = A(client);

	return admit_query(a, &conf, &c, udp, &m, now);
}

/*
 * A client not in allow is refused over UDP and TCP; its TCP connection
 * is not kept; one log line a minute says so, with the count held back.
 */
START_TEST(test_allow)
{
	struct ratelimit *rl;
	struct admit *a;
	struct addr c = A("127.0.0.2");

	set_nets(&conf.allow.acl, "127.0.0.1/32", NULL);
	ck_assert_ptr_nonnull(rl = ratelimit_new(conf.ratelimit_size));
	ck_assert_ptr_nonnull(a = admit_new(rl));
	ck_assert_int_eq(query_from(a, "127.0.0.1", UDP, 0), ADMIT_SERVE);
	ck_assert_int_eq(query_from(a, "127.0.0.1", TCP, 0), ADMIT_SERVE);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_REFUSE);
	ck_assert_int_eq(query_from(a, "127.0.0.2", TCP, 1), ADMIT_REFUSE);
	ck_assert_int_eq(admit_connection(a, &conf, &c, &m, 2), 0);
	c = A("127.0.0.1");
	ck_assert_int_eq(admit_connection(a, &conf, &c, &m, 2), 1);
	ck_assert_uint_eq(m.refused_queries, 2);
	ck_assert_uint_eq(m.refused_connections, 1);
	ck_assert_str_eq(logged, "not in allow: refused a UDP query from "
	    "127.0.0.2\n");
	/* A minute after the first line, the next, with the two held. */
	ck_assert_int_eq(query_from(a, "127.0.0.9", UDP, 59999),
	    ADMIT_REFUSE);
	ck_assert_int_eq(query_from(a, "127.0.0.9", UDP, 60000),
	    ADMIT_REFUSE);
	ck_assert_str_eq(logged, "not in allow: refused a UDP query from "
	    "127.0.0.2\n"
	    "not in allow: refused a UDP query from 127.0.0.9 (and 3 more "
	    "since the last such message)\n");
	admit_free(a);
	ratelimit_free(rl);
}
END_TEST

/*
 * ratelimit 1, slip 2, over UDP only, and not for exempt clients: from a
 * bucket of 1, the 2nd query is dropped, the 3rd slipped.
 */
START_TEST(test_ratelimit)
{
	struct ratelimit_stats st;
	struct ratelimit *rl;
	struct admit *a;
	int i;

	set_nets(&conf.allow.acl, "127.0.0.0/8", NULL);
	set_nets(&conf.exempt_clients.acl, "127.0.0.3/32", NULL);
	conf.ratelimit = 1;
	ck_assert_ptr_nonnull(rl = ratelimit_new(conf.ratelimit_size));
	ck_assert_ptr_nonnull(a = admit_new(rl));
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_SERVE);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_DROP);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_SLIP);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(query_from(a, "127.0.0.2", TCP, 0),
		    ADMIT_SERVE);
		ck_assert_int_eq(query_from(a, "127.0.0.3", UDP, 0),
		    ADMIT_SERVE);
	}
	ck_assert_uint_eq(m.ratelimit_dropped, 1);
	ck_assert_uint_eq(m.ratelimit_slipped, 1);
	ck_assert_str_eq(logged, "over ratelimit: dropped or truncated a "
	    "query from 127.0.0.2\n");
	admit_stats(a, &st);
	ck_assert_uint_eq(st.tracked, 1);	/* the exempt one is not */

	/* A reload: a smaller table forgets; ratelimit 0 turns it off. */
	conf.ratelimit_size = 5;
	ck_assert_int_eq(ratelimit_resize(rl, conf.ratelimit_size), 0);
	admit_stats(a, &st);
	ck_assert_uint_eq(st.tracked, 0);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 1), ADMIT_SERVE);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 1), ADMIT_DROP);
	conf.ratelimit = 2;	/* same size: the table stays */
	ck_assert_int_eq(ratelimit_resize(rl, conf.ratelimit_size), 0);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 1), ADMIT_SLIP);
	/* Off: the table is not asked (nor does it change). */
	conf.ratelimit = 0;
	ck_assert_int_eq(ratelimit_resize(rl, conf.ratelimit_size), 0);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(query_from(a, "127.0.0.8", UDP, 1),
		    ADMIT_SERVE);
	admit_stats(a, &st);
	ck_assert_uint_eq(st.tracked, 1);
	admit_free(a);
	ratelimit_free(rl);
}
END_TEST

/*
 * A reload from ratelimit 100 to ratelimit 0 (the table's size kept)
 * while a worker still serves the snapshot before: main has done its
 * part of the reload (the table as the new configuration says), and the
 * worker limits at 100, as its snapshot says, until it swaps. A client
 * it knows keeps its bucket: 99 more pass, then over the limit (slip 2:
 * dropped, slipped); a new client gets a full bucket: 100 pass. (When
 * the table held the rate, the reload set 0 under the old snapshot: the
 * known client was dropped at once.)
 */
START_TEST(test_ratelimit_of_the_snapshot_served)
{
	struct ratelimit *rl;
	struct admit *a;
	int i;

	set_nets(&conf.allow.acl, "127.0.0.0/8", NULL);
	conf.ratelimit = 100;
	conf.ratelimit_slip = 2;
	ck_assert_ptr_nonnull(rl = ratelimit_new(conf.ratelimit_size));
	ck_assert_ptr_nonnull(a = admit_new(rl));
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_SERVE);
	/* main's part of the reload to ratelimit 0 */
	ck_assert_int_eq(ratelimit_resize(rl, conf.ratelimit_size), 0);
	for (i = 0; i < 99; i++)
		ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0),
		    ADMIT_SERVE);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_DROP);
	ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0), ADMIT_SLIP);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(query_from(a, "127.0.0.4", UDP, 0),
		    ADMIT_SERVE);
	ck_assert_int_eq(query_from(a, "127.0.0.4", UDP, 0), ADMIT_DROP);
	/* The worker swapped: ratelimit 0, nothing limited. */
	conf.ratelimit = 0;
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(query_from(a, "127.0.0.2", UDP, 0),
		    ADMIT_SERVE);
	admit_free(a);
	ratelimit_free(rl);
}
END_TEST

/* Parse a query made by testpkt_query into *q. */
static struct testpkt
parsed(const char *qname, ldns_rr_type qtype, uint16_t edns,
    struct msg_query *q)
{
	struct testpkt t = testpkt_query(qname, qtype, LDNS_RD, edns, 0);

	ck_assert_int_eq(msg_parse_query(t.wire, t.len, q), MSG_PARSE_OK);
	return t;
}

/* Who gets the minimal ANY: UDP, class IN, not exempt. */
START_TEST(test_minimal_any_who)
{
	struct addr c = A("127.0.0.2"), ex = A("127.0.0.3");
	struct testpkt t;
	struct msg_query q;

	set_nets(&conf.exempt_clients.acl, "127.0.0.3/32", NULL);
	t = parsed("Example.COM.", LDNS_RR_TYPE_ANY, 1232, &q);
	ck_assert(admit_minimal_any(&conf, &c, UDP, &q, &m));
	ck_assert(!admit_minimal_any(&conf, &c, TCP, &q, &m));
	ck_assert(!admit_minimal_any(&conf, &ex, UDP, &q, &m));
	q.q.qclass = 3;		/* CH */
	ck_assert(!admit_minimal_any(&conf, &c, UDP, &q, &m));
	testpkt_free(&t);
	t = parsed("example.com.", LDNS_RR_TYPE_A, 1232, &q);
	ck_assert(!admit_minimal_any(&conf, &c, UDP, &q, &m));
	testpkt_free(&t);
	ck_assert_uint_eq(m.any_minimal, 1);
}
END_TEST

/*
 * RFC 8482 §4.2: NOERROR, one HINFO RR for the qname (the client's case)
 * with CPU "RFC8482" and an empty OS, TTL 3600 or max-ttl if lower: 21
 * octets (2 owner pointer, 10 type class TTL length, 9 RDATA) more than
 * an empty answer, whatever the name holds.
 */
START_TEST(test_minimal_any_answer)
{
	static const uint8_t rr[21] = { 0xc0, 0x0c, 0, 13, 0, 1,
	    0, 0, 0x0e, 0x10, 0, 9, 7, 'R', 'F', 'C', '8', '4', '8', '2', 0 };
	struct msg_reply_opts opts = { 1232, 1232, -1, NULL };
	uint8_t out[MSG_MAX_LEN], empty[MSG_ERROR_MAX_LEN];
	struct testpkt t;
	struct msg_query q;
	ldns_pkt *p;
	ldns_rr *hinfo;
	size_t len, elen;
	char *text;

	t = parsed("Example.COM.", LDNS_RR_TYPE_ANY, 1232, &q);
	len = admit_write_any(&conf, &q, &opts, out, sizeof(out));
	elen = msg_write_error(&q, MSG_RCODE_NOERROR, &opts, empty,
	    sizeof(empty));
	ck_assert_uint_eq(len, elen + sizeof(rr));
	/* Header, question; the RR; the OPT, as in the empty answer. */
	ck_assert_mem_eq(out + 12, empty + 12, q.q.qname_len + 4);
	ck_assert_mem_eq(out + 12 + q.q.qname_len + 4, rr, sizeof(rr));
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(ldns_pkt_id(p), 0xbeef);
	ck_assert(ldns_pkt_qr(p) && ldns_pkt_rd(p) && ldns_pkt_ra(p));
	ck_assert(!ldns_pkt_tc(p) && !ldns_pkt_aa(p));
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 1);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 0);
	ck_assert_uint_eq(ldns_pkt_edns_udp_size(p), 1232);
	hinfo = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	ck_assert_ptr_nonnull(text = ldns_rr2str(hinfo));
	ck_assert_str_eq(text, "Example.COM.\t3600\tIN\tHINFO\t\"RFC8482\" "
	    "\"\"\n");
	LDNS_FREE(text);
	ldns_pkt_free(p);

	/* max-ttl below an hour caps it. */
	conf.max_ttl = 60;
	len = admit_write_any(&conf, &q, &opts, out, sizeof(out));
	ck_assert_mem_eq(out + 12 + q.q.qname_len + 4 + 6, "\0\0\0\x3c", 4);
	testpkt_free(&t);
}
END_TEST

/* A slipped answer: NOERROR, TC=1, the question, no records but OPT. */
START_TEST(test_slip_answer)
{
	struct msg_reply_opts opts = { 1232, 1232, -1, NULL };
	uint8_t out[MSG_ERROR_MAX_LEN];
	struct testpkt t;
	struct msg_query q;
	ldns_pkt *p;
	size_t len;

	t = parsed("www.example.com.", LDNS_RR_TYPE_A, 1232, &q);
	ck_assert_uint_gt(len = admit_write_slip(&q, &opts, out, sizeof(out)),
	    0);
	p = testpkt_parse(out, len);
	ck_assert_uint_eq(ldns_pkt_id(p), 0xbeef);
	ck_assert(ldns_pkt_qr(p) && ldns_pkt_tc(p));
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_qdcount(p), 1);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 0);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 0);
	ck_assert_uint_eq(ldns_pkt_edns_udp_size(p), 1232);
	ldns_pkt_free(p);
	testpkt_free(&t);
}
END_TEST

static Suite *
admit_suite(void)
{
	Suite *s = suite_create("admit");
	TCase *tc = tcase_create("admit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_allow);
	tcase_add_test(tc, test_ratelimit);
	tcase_add_test(tc, test_ratelimit_of_the_snapshot_served);
	tcase_add_test(tc, test_minimal_any_who);
	tcase_add_test(tc, test_minimal_any_answer);
	tcase_add_test(tc, test_slip_answer);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(admit_suite());
}
