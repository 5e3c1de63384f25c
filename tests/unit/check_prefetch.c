/*
 * check_prefetch.c: the prefetch policy as pure functions: the refresh
 * window, whether an entry is due at exact instants (ms), and the SRV
 * target questions with the DO and CD bits of the SRV question.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "check_main.h"
#include "msg.h"
#include "prefetch.h"
#include "testpkt.h"
#include "upstream.h"
#include "zone.h"

static const struct cache_limits limits = {
	.min_ttl = 0, .max_ttl = 86400, .max_negative_ttl = 3600,
	.failure_ttl = 5, .stale_max_age = 0, .stale_answer_ttl = 30,
	.stale_refresh_interval = 30
};

/* The registry the pools' upstreams belong to (their lock's). */
static struct upstream_registry *reg;

static void
setup(void)
{
	ck_assert_ptr_nonnull(reg = upstream_registry_new(50, 2000));
}

static void
teardown(void)
{
	upstream_registry_free(reg);
}

/* A zone forwarding to n upstreams with these RTOs (ms), down if marked. */
struct pool {
	struct upstream	 u[4];
	struct upstream	*p[4];
	struct zone	 z;
};

static const struct zone *
pool_zone(struct pool *pl, const uint32_t *rto, const int *down, size_t n)
{
	size_t i;

	memset(pl, 0, sizeof(*pl));
	for (i = 0; i < n; i++) {
		pl->u[i].reg = reg;
		pl->u[i].rtt.rto = rto[i];
		pl->u[i].down = down[i];
		pl->p[i] = &pl->u[i];
	}
	pl->z.upstreams = pl->p;
	pl->z.n_upstreams = n;
	return &pl->z;
}

/*
 * A fresh entry stored with ttl seconds that has left ms to live, its
 * prefetch point drawn as point (of 65536), asked by a client or not.
 */
static struct cache_result
fresh(uint32_t ttl, uint64_t left, uint16_t point, int asked)
{
	struct cache_result res;

	memset(&res, 0, sizeof(res));
	res.state = CACHE_FRESH;
	res.ttl = ttl;
	res.expires_in = left;
	res.prefetch_point = point;
	res.asked = asked;
	return res;
}

/* prefetch_due and prefetch_target_due of fresh(ttl, left, point). */
static int
due(const struct zone *z, uint32_t ttl, uint64_t left, uint16_t point)
{
	struct cache_result res = fresh(ttl, left, point, 1);

	return prefetch_due(&res, z);
}

static int
due_after_failure(const struct zone *z, uint32_t ttl, uint64_t left,
    uint16_t point)
{
	struct cache_result res = fresh(ttl, left, point, 1);

	res.after_failure = 1;
	return prefetch_due(&res, z);
}

static int
target_due(const struct zone *z, uint32_t ttl, uint64_t left, int asked)
{
	struct cache_result res = fresh(ttl, left, 0, asked);

	return prefetch_target_due(&res, z);
}

static int
may_be_due(uint32_t ttl, uint64_t left)
{
	struct cache_result res = fresh(ttl, left, 0, 1);

	return prefetch_may_be_due(&res);
}

START_TEST(window)
{
	static const uint32_t rto[] = { 50, 3000, 2500 };
	static const int up[] = { 0, 0, 0 }, first_down[] = { 1, 0, 0 },
	    all_down[] = { 1, 1, 1 };
	struct pool pl;

	/* No zone: the last 10 % of the life, 300 s -> 30 s. */
	ck_assert_uint_eq(prefetch_window(NULL, 300), 30000);
	/* Four RTOs of 10 s (40 s) are more than 10 % of 300 s (30 s). */
	ck_assert_uint_eq(prefetch_window(pool_zone(&pl,
	    (const uint32_t[]){ 10000 }, up, 1), 300), 40000);
	/* 60 s: 10 % is 6 s, four RTOs of 2 s are 8 s. */
	ck_assert_uint_eq(prefetch_window(pool_zone(&pl,
	    (const uint32_t[]){ 2000 }, up, 1), 60), 8000);
	/* 10 s: four RTOs (8 s) exceed half the life: 5 s. */
	ck_assert_uint_eq(prefetch_window(pool_zone(&pl,
	    (const uint32_t[]){ 2000 }, up, 1), 10), 5000);
	/* The best RTO of the pool: 50 ms, so 10 % of 60 s (6 s) stands. */
	ck_assert_uint_eq(prefetch_window(pool_zone(&pl, rto, up, 3), 60),
	    6000);
	/* A down upstream's RTO does not count: the best is 2.5 s -> 10 s. */
	ck_assert_uint_eq(prefetch_window(pool_zone(&pl, rto, first_down, 3),
	    60), 10000);
	/* All down: no RTO to widen by, 10 % of 60 s. */
	ck_assert_uint_eq(prefetch_window(pool_zone(&pl, rto, all_down, 3),
	    60), 6000);
}
END_TEST

START_TEST(due_at_exact_instants)
{
	static const int up[] = { 0 };
	struct pool pl;
	const struct zone *z = pool_zone(&pl, (const uint32_t[]){ 2000 }, up,
	    1);

	/*
	 * TTL 300 s through z: window max(30 s, 4 * 2 s) = 30 s before
	 * expiry; the lead a refresh needs, 4 RTOs, 8 s. The entry's point,
	 * drawn when stored, is 8 s + 22 s * point / 65536 before expiry:
	 * point 0 at 8 s, 32768 at 19 s, 65535 at 29,999 ms (22,000 *
	 * 65,535 / 65,536 = 21,999.66, rounded down).
	 */
	ck_assert_int_eq(due(z, 300, 8001, 0), 0);
	ck_assert_int_eq(due(z, 300, 8000, 0), 1);
	ck_assert_int_eq(due(z, 300, 0, 0), 1);
	ck_assert_int_eq(due(z, 300, 19001, 32768), 0);
	ck_assert_int_eq(due(z, 300, 19000, 32768), 1);
	ck_assert_int_eq(due(z, 300, 30000, 65535), 0);
	ck_assert_int_eq(due(z, 300, 29999, 65535), 1);
	/* No zone, no lead: the whole window, 0 to 30 s. */
	ck_assert_int_eq(due(NULL, 300, 1, 0), 0);
	ck_assert_int_eq(due(NULL, 300, 0, 0), 1);
	ck_assert_int_eq(due(NULL, 300, 15000, 32768), 1);
	ck_assert_int_eq(due(NULL, 300, 15001, 32768), 0);
	/* The first life after a failed refresh: the point is drawn over
	 * the last half of it, 150 s, its lead as before: 8 s + 142 s *
	 * point / 65536, 79 s for 32768. */
	ck_assert_int_eq(due_after_failure(z, 300, 79001, 32768), 0);
	ck_assert_int_eq(due_after_failure(z, 300, 79000, 32768), 1);
	ck_assert_int_eq(due_after_failure(z, 300, 8000, 0), 1);
	ck_assert_int_eq(due_after_failure(z, 300, 8001, 0), 0);
	/* The zone-free test passes up to half the life (150 s) and no more. */
	ck_assert_int_eq(may_be_due(300, 150000), 1);
	ck_assert_int_eq(due(z, 300, 150000, 65535), 0);
	ck_assert_int_eq(may_be_due(300, 150001), 0);
}
END_TEST

/* prefetch_may_be_due never rules out what prefetch_due would allow. */
START_TEST(may_be_due_is_necessary)
{
	static const uint32_t rtos[] = { 1, 2000, 60000, 1000000 };
	static const uint32_t ttls[] = { 1, 10, 60, 300, 86400 };
	static const int up[] = { 0 };
	struct pool pl;
	const struct zone *z;
	uint64_t w;
	size_t i, j;

	for (i = 0; i < sizeof(rtos) / sizeof(rtos[0]); i++) {
		z = pool_zone(&pl, &rtos[i], up, 1);
		for (j = 0; j < sizeof(ttls) / sizeof(ttls[0]); j++) {
			w = prefetch_window(z, ttls[j]);
			ck_assert_int_le(due(z, ttls[j], w, 65535), 1);
			ck_assert_int_eq(may_be_due(ttls[j], w), 1);
			ck_assert_int_eq(due(z, ttls[j], w + 1, 65535), 0);
		}
	}
}
END_TEST

START_TEST(target_due_at_exact_instants)
{
	struct cache_result res;

	/* Nothing cached: no client is known to ask it; never fetched. */
	memset(&res, 0, sizeof(res));
	res.state = CACHE_ABSENT;
	ck_assert_int_eq(prefetch_target_due(&res, NULL), 0);
	/* Stale, asked by a client: fetch it; not asked: no. */
	res.state = CACHE_STALE;
	res.asked = 1;
	ck_assert_int_eq(prefetch_target_due(&res, NULL), 1);
	res.asked = 0;
	ck_assert_int_eq(prefetch_target_due(&res, NULL), 0);
	/* Fresh, TTL 300 s, no zone: due in its last 30 s only, when a
	 * client asked for it. */
	ck_assert_int_eq(target_due(NULL, 300, 30001, 1), 0);
	ck_assert_int_eq(target_due(NULL, 300, 30000, 1), 1);
	ck_assert_int_eq(target_due(NULL, 300, 30000, 0), 0);
}
END_TEST

/* The questions for response resp to an SRV question, with key bits. */
static size_t
questions(struct testpkt resp, int do_bit, int cd_bit, struct msg_query *out)
{
	struct cache *c = cache_new(1 << 20, &limits);
	struct msg_response r;
	struct cache_key key;
	size_t n;

	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	cache_key_make(c, &r.q, do_bit, cd_bit, &key);
	n = prefetch_srv_questions(&r, &key, out);
	msg_response_free(&r);
	testpkt_free(&resp);
	cache_free(c);
	return n;
}

static void
assert_question(const struct msg_query *q, const char *wire, size_t len,
    uint16_t qtype, int do_bit, int cd_bit)
{
	ck_assert_uint_eq(q->q.qname_len, len);
	ck_assert_mem_eq(q->q.qname, wire, len);
	ck_assert_uint_eq(q->q.qtype, qtype);
	ck_assert_uint_eq(q->q.qclass, MSG_CLASS_IN);
	ck_assert_int_eq(q->edns.do_bit, do_bit);
	ck_assert_int_eq(q->edns.present, 0);
	ck_assert_uint_eq(q->flags, cd_bit ? MSG_FLAG_CD : 0);
}

#define W(s)	(s), sizeof(s)

START_TEST(srv_questions)
{
	struct msg_query qs[PREFETCH_SRV_QUESTIONS];
	int bits;

	for (bits = 0; bits < 4; bits++) {
		/* "." is no service (RFC 2782); glue is not a target. */
		ck_assert_uint_eq(questions(testpkt_response("_x._tcp.example.",
		    LDNS_RR_TYPE_SRV, 0, 0,
		    "an|_x._tcp.example. 300 IN SRV 10 50 8080 Host1.Example.",
		    "an|_x._tcp.example. 300 IN SRV 10 50 8080 .",
		    "an|_x._tcp.example. 300 IN SRV 20 50 8080 host2.example.",
		    "ar|host1.example. 300 IN A 192.0.2.1", NULL), bits & 1,
		    (bits & 2) != 0, qs), 4);
		/* Each target's A then AAAA, qname folded, the SRV's bits. */
		assert_question(&qs[0], W("\5host1\7example"), MSG_TYPE_A,
		    bits & 1, (bits & 2) != 0);
		assert_question(&qs[1], W("\5host1\7example"), MSG_TYPE_AAAA,
		    bits & 1, (bits & 2) != 0);
		assert_question(&qs[2], W("\5host2\7example"), MSG_TYPE_A,
		    bits & 1, (bits & 2) != 0);
		assert_question(&qs[3], W("\5host2\7example"), MSG_TYPE_AAAA,
		    bits & 1, (bits & 2) != 0);
	}
	/* Not an SRV question: nothing. */
	ck_assert_uint_eq(questions(testpkt_response("a.example.",
	    LDNS_RR_TYPE_A, 0, 0, "an|a.example. 300 IN A 192.0.2.1", NULL),
	    0, 0, qs), 0);
}
END_TEST

START_TEST(srv_targets_bounded)
{
	struct msg_query qs[PREFETCH_SRV_QUESTIONS];
	struct testpkt resp;
	ldns_pkt *p;
	ldns_rr *rr;
	char spec[128];
	int i;

	/* 20 targets t0 .. t19: the first 16 give 32 questions. */
	ck_assert_int_eq(ldns_pkt_query_new_frm_str(&p, "_x._tcp.example.",
	    LDNS_RR_TYPE_SRV, LDNS_RR_CLASS_IN, LDNS_RD), LDNS_STATUS_OK);
	ldns_pkt_set_qr(p, 1);
	for (i = 0; i < 20; i++) {
		snprintf(spec, sizeof(spec), "_x._tcp.example. 300 IN SRV "
		    "10 50 8080 t%d.example.", i);
		ck_assert_int_eq(ldns_rr_new_frm_str(&rr, spec, 0, NULL, NULL),
		    LDNS_STATUS_OK);
		ck_assert(ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr));
	}
	ck_assert_int_eq(ldns_pkt2wire(&resp.wire, p, &resp.len),
	    LDNS_STATUS_OK);
	ldns_pkt_free(p);
	ck_assert_uint_eq(questions(resp, 0, 0, qs), PREFETCH_SRV_QUESTIONS);
	ck_assert_uint_eq(PREFETCH_SRV_QUESTIONS, 32);
	assert_question(&qs[31], W("\3t15\7example"), MSG_TYPE_AAAA, 0, 0);
}
END_TEST

static Suite *
prefetch_suite(void)
{
	Suite *s = suite_create("prefetch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, window);
	tcase_add_test(tc, due_at_exact_instants);
	tcase_add_test(tc, may_be_due_is_necessary);
	tcase_add_test(tc, target_due_at_exact_instants);
	tcase_add_test(tc, srv_questions);
	tcase_add_test(tc, srv_targets_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(prefetch_suite());
}
