/*
 * check_cache.c: the cache's TTL arithmetic at exact instants: RFC 1035
 * countdown, RFC 2181 §8, RFC 2308 §5 negative TTLs, RFC 9520 failures.
 * Times are monotonic ms, passed in, so nothing here sleeps.
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "check_main.h"
#include "msg.h"
#include "testcache.h"
#include "testpkt.h"
#include "wire.h"

#define T0	1000000		/* an arbitrary "now" at insertion, ms */
#define SOA_600_120 \
	"ns|example. 600 IN SOA ns.example. host.example. 1 7200 3600 86400 120"
#define SOA_90_900 \
	"ns|example. 90 IN SOA ns.example. host.example. 1 7200 3600 86400 900"

/* serve-stale off unless a test turns it on. */
static const struct cache_limits limits = {
	.min_ttl = 0, .max_ttl = 86400, .max_negative_ttl = 3600,
	.failure_ttl = 5, .stale_max_age = 0, .stale_answer_ttl = 30,
	.stale_refresh_interval = 30
};
static uint8_t out[MSG_MAX_LEN + 64];

struct fixture {
	struct cache		*c;
	struct msg_query	 q;
	struct cache_key	 key;
	struct testpkt		 qpkt;
};

/* Store resp (a testpkt_response) as the answer to qname/qtype at T0. */
static int
store(struct fixture *fx, struct testpkt resp, const char *qname,
    ldns_rr_type qtype)
{
	struct msg_response r;
	struct cache_entry *e;
	int rc;

	fx->qpkt = testpkt_query(qname, qtype, LDNS_RD, 0, 0);
	ck_assert_int_eq(msg_parse_query(fx->qpkt.wire, fx->qpkt.len, &fx->q),
	    MSG_PARSE_OK);
	cache_key_make(fx->c, &fx->q.q, 0, 0, &fx->key);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	ck_assert_ptr_nonnull(e = cache_entry_new(fx->c, &r, T0));
	rc = cache_insert(fx->c, &fx->key, e);
	msg_response_free(&r);
	testpkt_free(&resp);
	return rc;
}

/* Look the fixture's question up at now; the answer as an ldns packet. */
static ldns_pkt *
lookup(struct fixture *fx, uint64_t now, enum cache_state want)
{
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };
	struct cache_result res;

	cache_lookup(fx->c, &fx->key, &fx->q, &opts, now, out, sizeof(out),
	    &res);
	ck_assert_int_eq(res.state, want);
	return res.state == CACHE_FRESH ? testpkt_parse(out, res.len) : NULL;
}

static void
fx_init(struct fixture *fx, const struct cache_limits *lim)
{
	memset(fx, 0, sizeof(*fx));
	ck_assert_ptr_nonnull(fx->c = cache_new(1 << 20, lim));
}

static void
fx_fini(struct fixture *fx)
{
	testpkt_free(&fx->qpkt);
	cache_free(fx->c);
}

START_TEST(positive_countdown)
{
	struct fixture fx;
	ldns_pkt *p;

	fx_init(&fx, &limits);
	ck_assert_int_eq(store(&fx, testpkt_response("www.example.",
	    LDNS_RR_TYPE_A, 0, 1232, "an|www.example. 300 IN A 192.0.2.1",
	    NULL), "www.example.", LDNS_RR_TYPE_A), 0);
	/* 2.999 s later only 2 whole seconds have passed: 300 - 2. */
	p = lookup(&fx, T0 + 2999, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 298);
	ck_assert(!ldns_pkt_edns(p));	/* the upstream's OPT is not kept */
	ldns_pkt_free(p);
	p = lookup(&fx, T0 + 299999, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 1);
	ldns_pkt_free(p);
	/* At 300 s it has expired and is gone. */
	lookup(&fx, T0 + 300000, CACHE_ABSENT);
	lookup(&fx, T0 + 1000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(cname_chain_each_ttl)
{
	struct fixture fx;
	ldns_pkt *p;

	fx_init(&fx, &limits);
	store(&fx, testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|a.example. 300 IN CNAME b.example.",
	    "an|b.example. 200 IN CNAME c.example.",
	    "an|c.example. 100 IN A 192.0.2.3", NULL),
	    "a.example.", LDNS_RR_TYPE_A);
	/* After 50 s each RR is 50 lower: 250, 150, 50. */
	p = lookup(&fx, T0 + 50000, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 250);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 1), 150);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 2), 50);
	ldns_pkt_free(p);
	/* The smallest TTL (100 s) governs expiry of the whole chain. */
	lookup(&fx, T0 + 100000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(ttl_bounds)
{
	struct cache_limits lim = limits;
	struct fixture fx;
	ldns_pkt *p;

	lim.min_ttl = 60;
	lim.max_ttl = 3600;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("lo.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|lo.example. 10 IN A 192.0.2.1", NULL), "lo.example.",
	    LDNS_RR_TYPE_A);
	p = lookup(&fx, T0, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 60);
	ldns_pkt_free(p);
	testpkt_free(&fx.qpkt);
	store(&fx, testpkt_response("hi.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|hi.example. 100000 IN A 192.0.2.1", NULL), "hi.example.",
	    LDNS_RR_TYPE_A);
	p = lookup(&fx, T0, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 3600);
	ldns_pkt_free(p);
	fx_fini(&fx);
}
END_TEST

START_TEST(nxdomain_soa_ttl_below)
{
	struct fixture fx;
	ldns_pkt *p;

	fx_init(&fx, &limits);
	store(&fx, testpkt_response("nx.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_NXDOMAIN, 0, SOA_600_120, NULL), "nx.example.",
	    LDNS_RR_TYPE_A);
	/* RFC 2308 §5: min(SOA TTL 600, MINIMUM 120) = 120; 20 s later 100. */
	p = lookup(&fx, T0 + 20000, CACHE_FRESH);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
	ck_assert_uint_eq(ldns_pkt_nscount(p), 1);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_AUTHORITY, 0), 100);
	ldns_pkt_free(p);
	ldns_pkt_free(lookup(&fx, T0 + 119999, CACHE_FRESH));
	lookup(&fx, T0 + 120000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(nodata_soa_ttl_above)
{
	struct fixture fx;
	ldns_pkt *p;

	fx_init(&fx, &limits);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_MX, 0, 0,
	    SOA_90_900, NULL), "www.example.", LDNS_RR_TYPE_MX);
	/* min(SOA TTL 90, MINIMUM 900) = 90. */
	p = lookup(&fx, T0, CACHE_FRESH);
	ck_assert_int_eq(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(p), 0);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_AUTHORITY, 0), 90);
	ldns_pkt_free(p);
	lookup(&fx, T0 + 90000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(negative_capped)
{
	struct cache_limits lim = limits;
	struct fixture fx;
	ldns_pkt *p;

	lim.max_negative_ttl = 60;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("nx.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_NXDOMAIN, 0, SOA_600_120, NULL), "nx.example.",
	    LDNS_RR_TYPE_A);
	/* min(600, 120) = 120, then capped by max-negative-ttl 60. */
	p = lookup(&fx, T0, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_AUTHORITY, 0), 60);
	ldns_pkt_free(p);
	fx_fini(&fx);
	/* max-ttl bounds negative answers too: min(120, 3600, 45) = 45. */
	lim.max_negative_ttl = 3600;
	lim.max_ttl = 45;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("nx.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_NXDOMAIN, 0, SOA_600_120, NULL), "nx.example.",
	    LDNS_RR_TYPE_A);
	p = lookup(&fx, T0, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_AUTHORITY, 0), 45);
	ldns_pkt_free(p);
	fx_fini(&fx);
}
END_TEST

START_TEST(uncacheable)
{
	struct fixture fx;

	fx_init(&fx, &limits);
	/* RFC 1035 §3.2.1: TTL 0 answers are used once, not cached. */
	ck_assert_int_eq(store(&fx, testpkt_response("zero.example.",
	    LDNS_RR_TYPE_A, 0, 0, "an|zero.example. 0 IN A 192.0.2.1", NULL),
	    "zero.example.", LDNS_RR_TYPE_A), -1);
	lookup(&fx, T0, CACHE_ABSENT);
	testpkt_free(&fx.qpkt);
	/* RFC 2308 §5: no SOA, no negative caching. */
	ck_assert_int_eq(store(&fx, testpkt_response("nosoa.example.",
	    LDNS_RR_TYPE_A, LDNS_RCODE_NXDOMAIN, 0, NULL), "nosoa.example.",
	    LDNS_RR_TYPE_A), -1);
	lookup(&fx, T0, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(glue_ages_alone)
{
	struct fixture fx;
	ldns_pkt *p;

	fx_init(&fx, &limits);
	/* A glue TTL of 0 or 10 neither blocks caching nor ends the entry:
	 * the answer and authority sections govern it (300 s). */
	ck_assert_int_eq(store(&fx, testpkt_response("_sip._udp.example.",
	    LDNS_RR_TYPE_SRV, 0, 0,
	    "an|_sip._udp.example. 300 IN SRV 0 0 5060 sip.example.",
	    "ar|sip.example. 10 IN A 192.0.2.7",
	    "ar|sip.example. 0 IN AAAA 2001:db8::7", NULL),
	    "_sip._udp.example.", LDNS_RR_TYPE_SRV), 0);
	p = lookup(&fx, T0 + 20000, CACHE_FRESH);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 280);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ADDITIONAL, 0), 0);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ADDITIONAL, 1), 0);
	ldns_pkt_free(p);
	lookup(&fx, T0 + 300000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(failure_entries)
{
	struct fixture fx;
	ldns_pkt *p;

	fx_init(&fx, &limits);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 300 IN A 192.0.2.1", NULL), "www.example.",
	    LDNS_RR_TYPE_A);
	/* A failure never replaces an answer (RFC 9520 §3.2 with §4). */
	cache_refresh_failed(fx.c, &fx.key, T0 + 1000);
	p = lookup(&fx, T0 + 1000, CACHE_FRESH);
	ldns_pkt_free(p);
	testpkt_free(&fx.qpkt);
	fx.qpkt = testpkt_query("down.example.", LDNS_RR_TYPE_A, LDNS_RD, 0,
	    0);
	ck_assert_int_eq(msg_parse_query(fx.qpkt.wire, fx.qpkt.len, &fx.q),
	    MSG_PARSE_OK);
	cache_key_make(fx.c, &fx.q.q, 0, 0, &fx.key);
	cache_refresh_failed(fx.c, &fx.key, T0);
	/* failure-ttl 5 s: failed until T0 + 5 s, then resolvable again. */
	lookup(&fx, T0 + 4999, CACHE_FAILED);
	lookup(&fx, T0 + 5000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

/* Look up at now, wanting a stale answer; returns it as a packet. */
static ldns_pkt *
lookup_stale(struct fixture *fx, uint64_t now, struct cache_result *res)
{
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };

	cache_lookup(fx->c, &fx->key, &fx->q, &opts, now, out, sizeof(out),
	    res);
	ck_assert_int_eq(res->state, CACHE_STALE);
	return testpkt_parse(out, res->len);
}

/* Stale entries at now, counted slice by slice as the metrics do. */
static uint64_t
stale_entries(struct cache *c, uint64_t now)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < cache_slices(c); i++)
		n += cache_stale_slice(c, i, now);
	return n;
}

START_TEST(stale_rfc8767)
{
	struct cache_limits lim = limits;
	struct cache_result res;
	struct fixture fx;
	ldns_pkt *p;

	lim.stale_max_age = 86400;	/* RFC 8767 §5: 1 to 3 days */
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 300 IN A 192.0.2.1",
	    "ar|ns.example. 100 IN A 192.0.2.53", NULL), "www.example.",
	    LDNS_RR_TYPE_A);
	/* Expired at 300 s; stale from then until 300 s + 1 day. */
	ck_assert_uint_eq(stale_entries(fx.c, T0 + 299999), 0);
	ck_assert_uint_eq(stale_entries(fx.c, T0 + 300000), 1);
	ck_assert_uint_eq(stale_entries(fx.c, T0 + 300000 + 86399999), 1);
	ck_assert_uint_eq(stale_entries(fx.c, T0 + 300000 + 86400000), 0);
	p = lookup_stale(&fx, T0 + 300000, &res);
	/* RFC 8767 §4: every TTL of a stale answer is 30 s. */
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ANSWER, 0), 30);
	ck_assert_uint_eq(testpkt_ttl(p, LDNS_SECTION_ADDITIONAL, 0), 30);
	ck_assert(!res.refresh_failed);
	ck_assert(res.may_refresh);
	ldns_pkt_free(p);
	ldns_pkt_free(lookup_stale(&fx, T0 + 300000 + 86399999, &res));
	lookup(&fx, T0 + 300000 + 86400000, CACHE_ABSENT);
	fx_fini(&fx);
}
END_TEST

START_TEST(stale_ede)
{
	struct cache_limits lim = limits;
	struct msg_reply_opts opts = { 1232, 1232, -1, NULL };
	struct cache_result res;
	struct testpkt qp;
	struct fixture fx;

	lim.stale_max_age = 3600;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 60 IN A 192.0.2.1", NULL), "www.example.",
	    LDNS_RR_TYPE_A);
	qp = testpkt_query("www.example.", LDNS_RR_TYPE_A, LDNS_RD, 1232, 0);
	ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &fx.q),
	    MSG_PARSE_OK);
	cache_lookup(fx.c, &fx.key, &fx.q, &opts, T0 + 61000, out,
	    sizeof(out), &res);
	ck_assert_int_eq(res.state, CACHE_STALE);
	/* RFC 8914 §4.4: EDE info-code 3 closes the OPT (code 15, len 2). */
	ck_assert_mem_eq(out + res.len - 6, "\0\17\0\2\0\3", 6);
	testpkt_free(&qp);
	fx_fini(&fx);
}
END_TEST

START_TEST(stale_refresh_failure)
{
	struct cache_limits lim = limits;
	struct cache_result res;
	struct fixture fx;

	lim.stale_max_age = 86400;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("nx.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_NXDOMAIN, 0, SOA_600_120, NULL), "nx.example.",
	    LDNS_RR_TYPE_A);
	/* Negative entries go stale like positive ones (lifetime 120 s). */
	ldns_pkt_free(lookup_stale(&fx, T0 + 120000, &res));
	/* A failed refresh keeps the stale entry, never a failure entry. */
	cache_refresh_failed(fx.c, &fx.key, T0 + 130000);
	ldns_pkt_free(lookup_stale(&fx, T0 + 130000, &res));
	ck_assert(res.refresh_failed);
	ck_assert(!res.may_refresh);
	/* stale-refresh-interval (30 s) times [3/4, 5/4) later, a refresh
	 * may be tried again, and the failure is still known: not before
	 * 22.5 s, always by 37.5 s (the spread is recheck_spread's). */
	ldns_pkt_free(lookup_stale(&fx, T0 + 130000 + 22499, &res));
	ck_assert(!res.may_refresh);
	ldns_pkt_free(lookup_stale(&fx, T0 + 130000 + 37500, &res));
	ck_assert(res.may_refresh);
	ck_assert(res.refresh_failed);
	/* A successful refresh replaces it and forgets the failure. */
	testpkt_free(&fx.qpkt);
	store(&fx, testpkt_response("nx.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|nx.example. 60 IN A 192.0.2.9", NULL), "nx.example.",
	    LDNS_RR_TYPE_A);
	ldns_pkt_free(lookup(&fx, T0 + 1000, CACHE_FRESH));
	fx_fini(&fx);
}
END_TEST

/* The first instant (ms after T0) at which fx's entry may be refreshed:
 * its failure recheck time, found by bisection in [lo, hi]. */
static uint64_t
first_refresh(struct fixture *fx, uint64_t lo, uint64_t hi)
{
	struct cache_result res;
	uint64_t mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		cache_lookup(fx->c, &fx->key, &fx->q, NULL, T0 + mid, NULL, 0,
		    &res);
		ck_assert_int_eq(res.state, CACHE_STALE);
		if (res.may_refresh)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * No two hosts in step: 1,000 names stored at T0 (TTL 10 s), their
 * refreshes all failed at T0 + 20 s. Each one's prefetch point (drawn
 * when stored) is uniform in [0, 65536): each tenth holds 100 of them
 * (sd 9.5; bounds 4 sd out). Each one's failure recheck (RFC 8767 §5) is
 * stale-refresh-interval (30 s) times a factor uniform in [3/4, 5/4):
 * at 42.5 s to 57.5 s after T0, each 1.5 s tenth of that holding 100.
 */
START_TEST(recheck_and_prefetch_spread)
{
	unsigned points[10] = { 0 }, rechecks[10] = { 0 };
	struct cache_limits lim = limits;
	struct cache_result res;
	struct fixture fx;
	char name[32], rr[64];
	uint64_t at;
	int i;

	lim.stale_max_age = 86400;
	fx_init(&fx, &lim);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "n%d.example.", i);
		snprintf(rr, sizeof(rr), "an|%s 10 IN A 192.0.2.1", name);
		store(&fx, testpkt_response(name, LDNS_RR_TYPE_A, 0, 0, rr,
		    NULL), name, LDNS_RR_TYPE_A);
		cache_lookup(fx.c, &fx.key, &fx.q, NULL, T0, NULL, 0, &res);
		points[res.prefetch_point / 6554]++;
		cache_refresh_failed(fx.c, &fx.key, T0 + 20000);
		at = first_refresh(&fx, 20000, 60000);
		ck_assert_uint_ge(at, 20000 + 22500);
		ck_assert_uint_lt(at, 20000 + 37500);
		rechecks[(at - 42500) / 1500]++;
		testpkt_free(&fx.qpkt);
	}
	for (i = 0; i < 10; i++) {
		ck_assert_uint_ge(points[i], 60);
		ck_assert_uint_le(points[i], 140);
		ck_assert_uint_ge(rechecks[i], 60);
		ck_assert_uint_le(rechecks[i], 140);
	}
	cache_free(fx.c);
}
END_TEST

/*
 * Whether a client asked for an entry (SRV target prefetch fetches only
 * those): a lookup that writes an answer is a client's and marks it; a
 * peek does not; an entry made for waiting clients is marked; the mark
 * stays across the entries that replace it. And whether an entry ended a
 * failed refresh (its next prefetch point is drawn wider, once).
 */
START_TEST(asked_by_clients)
{
	static const char *a = "an|t.example. 300 IN A 192.0.2.1";
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };
	struct cache_result res;
	struct msg_response r;
	struct cache_entry *e;
	struct testpkt resp;
	struct fixture fx;

	fx_init(&fx, &limits);
	store(&fx, testpkt_response("t.example.", LDNS_RR_TYPE_A, 0, 0, a,
	    NULL), "t.example.", LDNS_RR_TYPE_A);
	cache_lookup(fx.c, &fx.key, &fx.q, NULL, T0, NULL, 0, &res);
	ck_assert(!res.asked);
	cache_lookup(fx.c, &fx.key, &fx.q, &opts, T0, out, sizeof(out), &res);
	ck_assert(res.asked);
	ck_assert(!res.after_failure);
	/* Its refresh fails; a prefetch's entry replaces it, inherits the
	 * mark, and is known to end a failure; the next one is not. */
	cache_refresh_failed(fx.c, &fx.key, T0 + 500);
	resp = testpkt_response("t.example.", LDNS_RR_TYPE_A, 0, 0, a, NULL);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	ck_assert_ptr_nonnull(e = cache_entry_new(fx.c, &r, T0 + 1000));
	ck_assert_int_eq(cache_insert(fx.c, &fx.key, e), 0);
	cache_lookup(fx.c, &fx.key, &fx.q, NULL, T0 + 1000, NULL, 0, &res);
	ck_assert(res.asked);
	ck_assert(res.after_failure);
	ck_assert_ptr_nonnull(e = cache_entry_new(fx.c, &r, T0 + 1500));
	ck_assert_int_eq(cache_insert(fx.c, &fx.key, e), 0);
	cache_lookup(fx.c, &fx.key, &fx.q, NULL, T0 + 1500, NULL, 0, &res);
	ck_assert(!res.after_failure);
	/* Flushed, then made for a waiting client: marked. */
	cache_flush(fx.c, NULL, 0, 0, 0);
	ck_assert_ptr_nonnull(e = cache_entry_new(fx.c, &r, T0 + 2000));
	cache_entry_set_asked(e);
	ck_assert_int_eq(cache_insert(fx.c, &fx.key, e), 0);
	cache_lookup(fx.c, &fx.key, &fx.q, NULL, T0 + 2000, NULL, 0, &res);
	ck_assert(res.asked);
	/* Flushed, then made for the cache alone: not. */
	cache_flush(fx.c, NULL, 0, 0, 0);
	ck_assert_ptr_nonnull(e = cache_entry_new(fx.c, &r, T0 + 3000));
	ck_assert_int_eq(cache_insert(fx.c, &fx.key, e), 0);
	cache_lookup(fx.c, &fx.key, &fx.q, NULL, T0 + 3000, NULL, 0, &res);
	ck_assert(!res.asked);
	msg_response_free(&r);
	testpkt_free(&resp);
	fx_fini(&fx);
}
END_TEST

START_TEST(prefetch_failure_marks_fresh)
{
	struct cache_limits lim = limits;
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };
	struct cache_result res;
	struct fixture fx;

	lim.stale_max_age = 86400;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 100 IN A 192.0.2.1", NULL), "www.example.",
	    LDNS_RR_TYPE_A);
	cache_refresh_failed(fx.c, &fx.key, T0 + 95000);
	cache_lookup(fx.c, &fx.key, &fx.q, &opts, T0 + 96000, NULL, 0, &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	ck_assert_uint_eq(res.expires_in, 4000);
	ck_assert_uint_eq(res.ttl, 100);
	ck_assert(res.refresh_failed);
	ck_assert(!res.may_refresh);
	ck_assert_uint_eq(res.len, 0);		/* a peek writes nothing */
	fx_fini(&fx);
}
END_TEST

START_TEST(key_fold_and_bits)
{
	struct testpkt a = testpkt_query("WWW.Example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 0, 0);
	struct testpkt b = testpkt_query("www.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 0, 0);
	struct cache_key ka, kb, kdo, kcd;
	struct msg_query qa, qb;
	struct cache *c = cache_new(1 << 20, &limits);

	ck_assert_int_eq(msg_parse_query(a.wire, a.len, &qa), MSG_PARSE_OK);
	ck_assert_int_eq(msg_parse_query(b.wire, b.len, &qb), MSG_PARSE_OK);
	cache_key_make(c, &qa.q, 0, 0, &ka);
	cache_key_make(c, &qb.q, 0, 0, &kb);
	cache_key_make(c, &qb.q, 1, 0, &kdo);
	cache_key_make(c, &qb.q, 0, 1, &kcd);
	ck_assert_uint_eq(ka.len, kb.len);
	ck_assert_mem_eq(ka.data, kb.data, ka.len);
	ck_assert_uint_eq(ka.hash, kb.hash);
	ck_assert_uint_ne(kb.hash, kdo.hash);
	ck_assert_uint_ne(kb.hash, kcd.hash);
	ck_assert_uint_ne(kdo.hash, kcd.hash);
	cache_free(c);
	testpkt_free(&a);
	testpkt_free(&b);
}
END_TEST

/* The key gives back its question, folded, and the bits it was made with. */
START_TEST(key_parts)
{
	static const uint8_t folded[] = "\3www\7example";
	struct testpkt t = testpkt_query("WWW.Example.", LDNS_RR_TYPE_SRV,
	    LDNS_RD, 0, 0);
	struct cache *c = cache_new(1 << 20, &limits);
	struct msg_question back;
	struct cache_key key;
	struct msg_query q;
	const uint8_t *qname;
	size_t len;
	int bits;

	ck_assert_int_eq(msg_parse_query(t.wire, t.len, &q), MSG_PARSE_OK);
	for (bits = 0; bits < 4; bits++) {
		cache_key_make(c, &q.q, bits & 1, (bits & 2) != 0, &key);
		/* 3 www 7 example 0: 13 octets, the root label included. */
		qname = cachekey_qname(&key, &len);
		ck_assert_uint_eq(len, 13);
		ck_assert_mem_eq(qname, folded, 13);
		memset(&back, 0xff, sizeof(back));
		cachekey_question(&key, &back);
		ck_assert_uint_eq(back.qname_len, 13);
		ck_assert_mem_eq(back.qname, folded, 13);
		ck_assert_uint_eq(back.qtype, 33);	/* SRV */
		ck_assert_uint_eq(back.qclass, 1);	/* IN */
		ck_assert_int_eq(cachekey_do(&key), bits & 1);
		ck_assert_int_eq(cachekey_cd(&key), (bits & 2) != 0);
	}
	cache_free(c);
	testpkt_free(&t);
}
END_TEST

/* What a walk showed of one entry, copied out of the callback. */
struct seen {
	struct cache_key	key;
	struct cache_record	rec;
	uint32_t		ttls[8];
	uint8_t			wire[512];
};

/* A walk's failure entries and answers, one of each at most. */
struct seen_all {
	struct seen	failure, answer;
	int		failures, answers;
};

static void
see(const struct cache_record *rec, void *arg)
{
	struct seen_all *all = arg;
	int failure = rec->kind == CACHE_FAILURE;
	struct seen *s = failure ? &all->failure : &all->answer;

	ck_assert_int_eq(failure ? all->failures++ : all->answers++, 0);
	ck_assert_uint_le(rec->n_ttls, 8);
	ck_assert_uint_le(rec->wire_len, sizeof(s->wire));
	s->key = *rec->key;
	s->rec = *rec;
	s->rec.key = &s->key;
	memcpy(s->ttls, rec->ttls, rec->n_ttls * sizeof(*rec->ttls));
	s->rec.ttls = s->ttls;
	if (rec->wire != NULL) {
		memcpy(s->wire, rec->wire, rec->wire_len);
		s->rec.wire = s->wire;
	}
}

/*
 * A cache file restored on many hosts at once must not make its entries
 * due at the same instant: each import of rec (key, into c at now) draws
 * the entry's prefetch point anew, uniform in [0, 65536): over 1,000
 * imports each tenth holds 100 (sd 9.5; bounds 4 sd out).
 */
static void
restored_points_spread(struct cache *c, const struct cache_record *rec,
    const struct cache_key *key, uint64_t now)
{
	unsigned tenths[10] = { 0 };
	struct cache_result res;
	int i;

	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(cache_import(c, rec, now), 0);
		cache_lookup(c, key, NULL, NULL, now, NULL, 0, &res);
		ck_assert_int_eq(res.state, CACHE_FRESH);
		tenths[res.prefetch_point / 6554]++;
	}
	for (i = 0; i < 10; i++) {
		ck_assert_uint_ge(tenths[i], 60);
		ck_assert_uint_le(tenths[i], 140);
	}
}

/*
 * A record walked out of one cache goes into another on another clock,
 * keeping its age, TTLs and failed refresh; bad records are refused.
 */
START_TEST(walk_and_import)
{
	struct cache_limits lim = limits;
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };
	struct cache_result res;
	struct seen_all all;
	struct cache_record rec;
	struct cache_key other;
	struct fixture fx;
	struct cache *b;
	const uint64_t t1 = 50000000;	/* the other cache's "now" */
	unsigned i;

	lim.stale_max_age = 3600;
	fx_init(&fx, &lim);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 300 IN A 192.0.2.1", NULL), "www.example.",
	    LDNS_RR_TYPE_A);
	cache_refresh_failed(fx.c, &fx.key, T0 + 1000);
	ck_assert_ptr_nonnull(b = cache_new(1 << 20, &lim));
	testcache_key(fx.c, "bad.example.", LDNS_RR_TYPE_A, &other);
	cache_refresh_failed(fx.c, &other, T0 + 1000);

	/* 5 s after it was stored, 4 s after its refresh failed. */
	memset(&all, 0, sizeof(all));
	for (i = 0; i < cache_slices(fx.c); i++)
		cache_walk_slice(fx.c, i, T0 + 5000, see, &all);
	ck_assert_int_eq(all.failures, 1);
	ck_assert_int_eq(all.answers, 1);
	ck_assert_ptr_null(all.failure.rec.wire);
	/* RFC 9520: 1 s of its 5 s failure-ttl gone. */
	ck_assert_uint_eq(all.failure.rec.age, 4000);
	ck_assert_uint_eq(all.failure.rec.ttl, 5);
	ck_assert_int_eq(cache_import(b, &all.failure.rec, t1), -1);
	rec = all.answer.rec;
	ck_assert_int_eq(rec.kind, CACHE_POSITIVE);
	ck_assert_uint_eq(rec.age, 5000);
	ck_assert_uint_eq(rec.ttl, 300);
	ck_assert_uint_eq(rec.failed_age, 4000);
	ck_assert_uint_eq(rec.n_ttls, 1);
	ck_assert_uint_eq(rec.ttls[0], 300);
	ck_assert_mem_eq(rec.key->data, fx.key.data, fx.key.len);

	/* Under another name's key, or too old by now: refused. */
	testcache_key(b, "other.example.", LDNS_RR_TYPE_A, &other);
	rec.key = &other;
	ck_assert_int_eq(cache_import(b, &rec, t1), -1);
	rec = all.answer.rec;
	rec.age = (300 + 3600) * 1000;
	ck_assert_int_eq(cache_import(b, &rec, t1), -1);

	/* At t1 in b it is 5 s old: TTL 295, its failure 4 s ago. */
	ck_assert_int_eq(cache_import(b, &all.answer.rec, t1), 0);
	cache_key_make(b, &fx.q.q, 0, 0, &other);
	cache_lookup(b, &other, &fx.q, &opts, t1, out, sizeof(out), &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	ck_assert_uint_eq(res.expires_in, 295000);
	ck_assert(res.refresh_failed);
	ck_assert_uint_eq(res.failed_at, t1 - 4000);
	restored_points_spread(b, &all.answer.rec, &other, t1);
	cache_free(b);
	fx_fini(&fx);
}
END_TEST

/*
 * The cache file is read while the workers fetch: an imported copy never
 * replaces an entry stored after it (one fetched since the restart), but
 * does replace one stored before it, and a failure.
 */
START_TEST(import_keeps_newer)
{
	struct cache_limits lim = limits;
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };
	struct cache_result res;
	struct seen_all all;
	struct cache_record rec;
	struct fixture fx;
	struct cache *b;
	const uint64_t t1 = 50000000;
	unsigned i;

	fx_init(&fx, &lim);
	store(&fx, testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 300 IN A 192.0.2.1", NULL), "www.example.",
	    LDNS_RR_TYPE_A);
	ck_assert_ptr_nonnull(b = cache_new(1 << 20, &lim));
	memset(&all, 0, sizeof(all));
	for (i = 0; i < cache_slices(fx.c); i++)
		cache_walk_slice(fx.c, i, T0 + 5000, see, &all);
	ck_assert_int_eq(all.answers, 1);

	/* Fetched in fx at T0; the copy 5 s old at T0 + 1 s was stored at
	 * T0 - 4 s: refused, the fetched entry (300 s left at T0) stays. */
	ck_assert_int_eq(cache_import(fx.c, &all.answer.rec, T0 + 1000), -1);
	cache_lookup(fx.c, &fx.key, &fx.q, &opts, T0, out, sizeof(out), &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	ck_assert_uint_eq(res.expires_in, 300000);

	/* In b: 5 s old at t1, then 1 s old replaces it (TTL 299 s left),
	 * then the 5 s old copy again is refused and 299 s stay. */
	ck_assert_int_eq(cache_import(b, &all.answer.rec, t1), 0);
	rec = all.answer.rec;
	rec.age = 1000;
	ck_assert_int_eq(cache_import(b, &rec, t1), 0);
	ck_assert_int_eq(cache_import(b, &all.answer.rec, t1), -1);
	cache_key_make(b, &fx.q.q, 0, 0, &fx.key);
	cache_lookup(b, &fx.key, &fx.q, &opts, t1, out, sizeof(out), &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	ck_assert_uint_eq(res.expires_in, 299000);
	cache_free(b);

	/* A failure (RFC 9520) holds no answer: the older copy replaces it,
	 * 5 s old at t1, 295 s left. */
	ck_assert_ptr_nonnull(b = cache_new(1 << 20, &lim));
	cache_key_make(b, &fx.q.q, 0, 0, &fx.key);
	cache_refresh_failed(b, &fx.key, t1);
	cache_lookup(b, &fx.key, &fx.q, &opts, t1, out, sizeof(out), &res);
	ck_assert_int_eq(res.kind, CACHE_FAILURE);
	ck_assert_int_eq(cache_import(b, &all.answer.rec, t1), 0);
	cache_lookup(b, &fx.key, &fx.q, &opts, t1, out, sizeof(out), &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	ck_assert_int_eq(res.kind, CACHE_POSITIVE);
	ck_assert_uint_eq(res.expires_in, 295000);
	cache_free(b);
	fx_fini(&fx);
}
END_TEST

/*
 * A record as a forged cache file may hold it: its message as an upstream
 * would have sent it (resp, freed here), the TTL of each RR and the kind
 * and lifetime claimed, stored a second ago; imported into c at T0.
 */
static int
import_forged(struct cache *c, struct testpkt resp, const char *qname,
    enum cache_kind kind, const uint32_t *ttls, size_t n, uint32_t ttl)
{
	struct cache_record rec;
	struct cache_key key;
	int rc;

	testcache_key(c, qname, LDNS_RR_TYPE_A, &key);
	memset(&rec, 0, sizeof(rec));
	rec.key = &key;
	rec.kind = kind;
	rec.age = 1000;
	rec.ttl = ttl;
	rec.ttls = ttls;
	rec.n_ttls = n;
	rec.wire = resp.wire;
	rec.wire_len = resp.len;
	rc = cache_import(c, &rec, T0);
	testpkt_free(&resp);
	return rc;
}

/* What a query for qname A finds in fx's cache at T0, in *res. */
static void
look(struct fixture *fx, const char *qname, struct cache_result *res)
{
	struct msg_reply_opts opts = { MSG_MAX_LEN, 1232, -1, NULL };

	testpkt_free(&fx->qpkt);
	fx->qpkt = testpkt_query(qname, LDNS_RR_TYPE_A, LDNS_RD, 0, 0);
	ck_assert_int_eq(msg_parse_query(fx->qpkt.wire, fx->qpkt.len, &fx->q),
	    MSG_PARSE_OK);
	cache_key_make(fx->c, &fx->q.q, 0, 0, &fx->key);
	cache_lookup(fx->c, &fx->key, &fx->q, &opts, T0, out, sizeof(out),
	    res);
}

/*
 * Every cache rule holds again for what is imported: TTLs within max-ttl
 * (1 d here) and no longer than the upstream gave (RFC 2181 §8), the
 * lifetime worked out from them and not taken as claimed, and the kind
 * the rcode and records make (RFC 2308 §2).
 */
START_TEST(import_reapplies_rules)
{
	static const uint32_t month[] = { 30 * 86400 };
	static const uint32_t negative[] = { 30 * 86400 };
	struct cache_result res;
	struct fixture fx;

	fx_init(&fx, &limits);
	/* The upstream said 30 days; max-ttl caps it at 1 d, less the
	 * second it spent in the cache already. */
	ck_assert_int_eq(import_forged(fx.c, testpkt_response("www.example.",
	    LDNS_RR_TYPE_A, 0, 0, "an|www.example. 2592000 IN A 192.0.2.1",
	    NULL), "www.example.", CACHE_POSITIVE, month, 1, 30 * 86400), 0);
	look(&fx, "www.example.", &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	ck_assert_uint_eq(res.ttl, 86400);
	ck_assert_uint_eq(res.expires_in, 86400 * 1000 - 1000);

	/* The upstream said 300 s: a file claiming more gets 300. */
	ck_assert_int_eq(import_forged(fx.c, testpkt_response("w2.example.",
	    LDNS_RR_TYPE_A, 0, 0, "an|w2.example. 300 IN A 192.0.2.2", NULL),
	    "w2.example.", CACHE_POSITIVE, month, 1, 30 * 86400), 0);
	look(&fx, "w2.example.", &res);
	ck_assert_uint_eq(res.ttl, 300);

	/* An answer called NXDOMAIN, an NXDOMAIN called an answer, and a
	 * NODATA without SOA (uncacheable, RFC 2308 §5): refused. */
	ck_assert_int_eq(import_forged(fx.c, testpkt_response("w3.example.",
	    LDNS_RR_TYPE_A, 0, 0, "an|w3.example. 300 IN A 192.0.2.3", NULL),
	    "w3.example.", CACHE_NXDOMAIN, month, 1, 300), -1);
	ck_assert_int_eq(import_forged(fx.c, testpkt_response("w4.example.",
	    LDNS_RR_TYPE_A, LDNS_RCODE_NXDOMAIN, 0, SOA_600_120, NULL),
	    "w4.example.", CACHE_POSITIVE, negative, 1, 120), -1);
	ck_assert_int_eq(import_forged(fx.c, testpkt_response("w5.example.",
	    LDNS_RR_TYPE_A, 0, 0, NULL), "w5.example.", CACHE_NODATA, NULL, 0,
	    300), -1);
	/* A true NXDOMAIN: min(SOA TTL 600, MINIMUM 120) = 120 s, not the
	 * 30 days claimed (RFC 2308 §5). */
	ck_assert_int_eq(import_forged(fx.c, testpkt_response("w4.example.",
	    LDNS_RR_TYPE_A, LDNS_RCODE_NXDOMAIN, 0, SOA_600_120, NULL),
	    "w4.example.", CACHE_NXDOMAIN, negative, 1, 30 * 86400), 0);
	look(&fx, "w4.example.", &res);
	ck_assert_int_eq(res.kind, CACHE_NXDOMAIN);
	ck_assert_uint_eq(res.ttl, 120);
	fx_fini(&fx);
}
END_TEST

START_TEST(key_load)
{
	static const uint8_t good[] = "\3www\7example\0\0\1\0\1\1";
	static const uint8_t pointer[] = "\3www\300\0\0\1\0\1\0";
	static const uint8_t overrun[] = "\3www\11example\0\0\1\0\1\0";
	struct cache *c = cache_new(1 << 20, &limits);
	struct cache_key key, made;
	struct msg_question q;
	size_t len;

	/* www.example. A IN with DO: as cache_key_make makes it. */
	ck_assert_int_eq(cache_key_load(c, good, sizeof(good) - 1, &key), 0);
	cachekey_question(&key, &q);
	cache_key_make(c, &q, 1, 0, &made);
	ck_assert_uint_eq(key.len, made.len);
	ck_assert_mem_eq(key.data, made.data, made.len);
	ck_assert_uint_eq(key.hash, made.hash);
	ck_assert_ptr_nonnull(cachekey_qname(&key, &len));
	ck_assert_uint_eq(len, 13);
	/* Too short for qtype, qclass and bits after the root. */
	ck_assert_int_eq(cache_key_load(c, good, 5, &key), -1);
	/* Compressed, or a label running into the tail: not a key. */
	ck_assert_int_eq(cache_key_load(c, pointer, sizeof(pointer) - 1,
	    &key), -1);
	ck_assert_int_eq(cache_key_load(c, overrun, sizeof(overrun) - 1,
	    &key), -1);
	cache_free(c);
}
END_TEST

/* The one record a walk shows, copied into *s. */
static void
see_one(const struct cache_record *rec, void *arg)
{
	struct seen *s = arg;

	ck_assert_uint_le(rec->wire_len, sizeof(s->wire));
	ck_assert_uint_le(rec->n_ttls, 8);
	s->rec = *rec;
	memcpy(s->wire, rec->wire, rec->wire_len);
	memcpy(s->ttls, rec->ttls, rec->n_ttls * sizeof(*rec->ttls));
}

/*
 * One allocation per entry (cache.c), charged as what it takes: 62
 * octets of the table's node and the entry's fields (its flags and its
 * jitter, 3 of them, and an octet to align the jitter); the message without
 * its OPT: header 12, question www.example. A 13 + 4, the A record with
 * its owner a pointer to the qname 2 + 10 + 4, 45 octets, rounded up to
 * 46 for the TTL offsets after it; 2 for its one TTL offset; 16 for
 * malloc's own header and rounding; 16 for its share of the buckets and
 * of the eviction ghost: 142.
 * The message, as a walk shows it, holds the key: its qname folded
 * whatever case the upstream used, and the TTL field holds the stored
 * TTL (30 raised to min-ttl 60). An entry offered under a key that is not
 * its own question is refused.
 */
START_TEST(entry_layout)
{
	struct cache_limits lim = limits;
	struct cache_stats st;
	struct cache_key other;
	struct msg_response r;
	struct testpkt resp;
	struct fixture fx;
	struct seen seen;
	unsigned i;

	lim.min_ttl = 60;
	fx_init(&fx, &lim);
	ck_assert_int_eq(store(&fx, testpkt_response("WwW.ExAmple.",
	    LDNS_RR_TYPE_A, 0, 1232, "an|WwW.ExAmple. 30 IN A 192.0.2.1",
	    NULL), "www.example.", LDNS_RR_TYPE_A), 0);
	cache_stats(fx.c, &st);
	ck_assert_uint_eq(st.entries, 1);
	ck_assert_uint_eq(st.bytes, 142);
	memset(&seen, 0, sizeof(seen));
	for (i = 0; i < cache_slices(fx.c); i++)
		cache_walk_slice(fx.c, i, T0, see_one, &seen);
	ck_assert_uint_eq(seen.rec.wire_len, 45);
	ck_assert_mem_eq(seen.wire + 12, "\3www\7example\0", 13);
	ck_assert_uint_eq(seen.rec.n_ttls, 1);
	ck_assert_uint_eq(seen.ttls[0], 60);
	ck_assert_uint_eq(wire_rd32(seen.wire + 12 + 17 + 6), 60);

	resp = testpkt_response("www.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|www.example. 30 IN A 192.0.2.2", NULL);
	ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r), 0);
	testcache_key(fx.c, "other.example.", LDNS_RR_TYPE_A, &other);
	ck_assert_int_eq(cache_insert(fx.c, &other,
	    cache_entry_new(fx.c, &r, T0)), -1);
	cache_stats(fx.c, &st);
	ck_assert_uint_eq(st.entries, 1);
	msg_response_free(&r);
	testpkt_free(&resp);
	fx_fini(&fx);
}
END_TEST

START_TEST(bounded_under_flood)
{
	struct cache *c = cache_new(256 * 1024, &limits);
	struct cache_stats st;
	struct msg_response r;
	struct msg_query q;
	struct cache_key key;
	struct testpkt resp, qp;
	char name[64], rr[128];
	int i;

	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "n%d.flood.example.", i);
		snprintf(rr, sizeof(rr), "an|%s 300 IN A 192.0.2.1", name);
		resp = testpkt_response(name, LDNS_RR_TYPE_A, 0, 0, rr, NULL);
		qp = testpkt_query(name, LDNS_RR_TYPE_A, LDNS_RD, 0, 0);
		ck_assert_int_eq(msg_parse_query(qp.wire, qp.len, &q),
		    MSG_PARSE_OK);
		ck_assert_int_eq(msg_response_parse(resp.wire, resp.len, &r),
		    0);
		cache_key_make(c, &q.q, 0, 0, &key);
		cache_insert(c, &key, cache_entry_new(c, &r, T0));
		msg_response_free(&r);
		testpkt_free(&resp);
		testpkt_free(&qp);
	}
	cache_stats(c, &st);
	ck_assert_uint_le(st.bytes, 256 * 1024);
	ck_assert_uint_gt(st.evictions, 0);
	ck_assert_uint_eq(st.entries + st.evictions, 5000);
	cache_free(c);
}
END_TEST

static Suite *
cache_suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("core");

	/* Floods of 5,000 to 50,000 inserts: a fraction of a second of CPU,
	 * but more than Check's 4 s on a machine loaded 10 deep. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, positive_countdown);
	tcase_add_test(tc, recheck_and_prefetch_spread);
	tcase_add_test(tc, asked_by_clients);
	tcase_add_test(tc, cname_chain_each_ttl);
	tcase_add_test(tc, ttl_bounds);
	tcase_add_test(tc, nxdomain_soa_ttl_below);
	tcase_add_test(tc, nodata_soa_ttl_above);
	tcase_add_test(tc, negative_capped);
	tcase_add_test(tc, uncacheable);
	tcase_add_test(tc, glue_ages_alone);
	tcase_add_test(tc, failure_entries);
	tcase_add_test(tc, stale_rfc8767);
	tcase_add_test(tc, stale_ede);
	tcase_add_test(tc, stale_refresh_failure);
	tcase_add_test(tc, prefetch_failure_marks_fresh);
	tcase_add_test(tc, key_fold_and_bits);
	tcase_add_test(tc, key_parts);
	tcase_add_test(tc, key_load);
	tcase_add_test(tc, walk_and_import);
	tcase_add_test(tc, import_keeps_newer);
	tcase_add_test(tc, import_reapplies_rules);
	tcase_add_test(tc, entry_layout);
	tcase_add_test(tc, bounded_under_flood);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(cache_suite());
}
