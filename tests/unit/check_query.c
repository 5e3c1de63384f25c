/*
 * check_query.c: client queries waiting on one resolution, on a scripted
 * upstream (testnet.h) and a real event loop: how many may wait
 * (max-waiters), and how many are answered per turn of the loop when the
 * resolution ends (QUERY_BATCH).
 */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "acl.h"
#include "admit.h"
#include "cache.h"
#include "check_main.h"
#include "config.h"
#include "fetch.h"
#include "inflight.h"
#include "localbuild.h"
#include "localzone.h"
#include "query.h"
#include "testnet.h"
#include "testpkt.h"
#include "upstream.h"
#include "wire.h"
#include "zone.h"

#define MAX_CLIENTS	400

/* What a client was sent, by query ID. */
struct answers {
	unsigned	 sent;		/* answers in all */
	unsigned	 rcode[MAX_CLIENTS];	/* +1: 0 is "none yet" */
	int		 held;		/* hold - release */
	struct cache	*cache;		/* if set, looked at for a.example.
					 * A at the first answer */
	enum cache_state at_first;	/* what it held then */
};

static struct answers got;

/* The state of the cache entry of a.example. A (plain key) at now, and
 * whether a client asked for it (NULL: not wanted). A peek: it marks
 * nothing asked. */
static enum cache_state
cached_asked(struct cache *c, uint64_t now, int *asked)
{
	struct testpkt q = testpkt_query("a.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 1232, 0);
	struct cache_result res;
	struct cache_key key;
	struct msg_query mq;

	ck_assert_int_eq(msg_parse_query(q.wire, q.len, &mq), MSG_PARSE_OK);
	cache_key_make(c, &mq.q, 0, 0, &key);
	cache_lookup(c, &key, &mq, NULL, now, NULL, 0, &res);
	testpkt_free(&q);
	if (asked != NULL)
		*asked = res.asked;
	return res.state;
}

static enum cache_state
cached(struct cache *c, uint64_t now)
{
	return cached_asked(c, now, NULL);
}

static void
record_send(const struct client *c, const uint8_t *buf, size_t len)
{
	uint16_t id = wire_rd16(buf);

	(void)c;
	ck_assert_uint_ge(len, MSG_HEADER_LEN);
	ck_assert_uint_lt(id, MAX_CLIENTS);
	ck_assert_msg(got.rcode[id] == 0, "query %u answered twice", id);
	got.rcode[id] = MSG_RCODE(wire_rd16(buf + 2)) + 1;
	if (got.sent++ == 0 && got.cache != NULL)
		got.at_first = cached(got.cache, 0);
}

static void
record_hold(const struct client *c)
{
	(void)c;
	got.held++;
}

static void
record_release(const struct client *c)
{
	(void)c;
	got.held--;
}

static const struct client_ops ops = { record_send, record_hold,
    record_release };

/* A worker's context on a scripted upstream: zone "example." forwarded
 * to 127.0.0.1:5301. */
struct world {
	struct testnet		 net;
	struct config		 conf;
	struct config_forward	 fw;
	struct addr		 up;
	struct addr		 client;	/* 127.0.0.1: allowed */
	struct upstream_registry *reg;
	struct ratelimit	*rl;
	struct inflight		*index;		/* shared: another worker 0 */
	struct query_ctx	 ctx;
};

static void
world_new(struct world *w, uint32_t max_waiters)
{
	static const struct cache_limits lim = { 0, 86400, 3600, 5, 86400,
	    30, 30 };
	struct fetch_settings s = { .edns_size = 1232, .query_timeout = 2000,
	    .max_inflight = 100, .randomize_case = 0 };
	const char *err;

	memset(w, 0, sizeof(*w));
	memset(&got, 0, sizeof(got));
	testnet_init(&w->net, 1000000);
	ck_assert_int_eq(config_defaults(&w->conf), 0);
	/* No hosts file: nothing of this host's in the test. */
	ck_assert_int_eq(config_add_hosts_file(&w->conf, CONFIG_NONE), 0);
	/* The default allow (loopback), ready for the client check. */
	ck_assert_int_eq(acl_compile(&w->conf.allow.acl), 0);
	ck_assert_int_eq(acl_compile(&w->conf.exempt_clients.acl), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &w->up, &err), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5302", 53, &w->client, &err),
	    0);
	w->fw.zone = "example.";
	w->fw.upstreams = &w->up;
	w->fw.n_upstreams = 1;
	w->conf.forwards = &w->fw;
	w->conf.n_forwards = 1;
	s.max_waiters = w->conf.max_waiters = max_waiters;
	ck_assert_ptr_nonnull(w->reg = upstream_registry_new(50, 2000));
	ck_assert_ptr_nonnull(w->ctx.base = event_base_new());
	w->ctx.conf = &w->conf;
	ck_assert_ptr_nonnull(w->ctx.zones = zone_table_new(w->reg,
	    &w->conf));
	ck_assert_ptr_nonnull(w->ctx.cache = cache_new(1 << 20, &lim));
	ck_assert_ptr_nonnull(w->rl = ratelimit_new(w->conf.ratelimit_size));
	ck_assert_ptr_nonnull(w->ctx.admit = admit_new(w->rl));
	ck_assert_ptr_nonnull(w->ctx.local = localbuild_table(&w->conf));
	ck_assert_ptr_nonnull(w->ctx.fetches = fetch_ctx_new_on(&w->net.t,
	    &s, query_fetch_done, &w->ctx));
	LIST_INIT(&w->ctx.answering);
	/* No loop probe: one query out, the one under test. */
	zone_at(w->ctx.zones, 0)->upstreams[0]->loop_checked = 1;
}

/* Told by the index that a key landed: at once (the daemon posts it). */
static void
landed(void *arg, const struct cache_key *key)
{
	struct world *w = arg;

	fetch_landed(w->ctx.fetches, key, w->net.now);
}

/* The world's ctx is worker 1 of two, whose worker 0 the test plays. */
static void
world_share(struct world *w)
{
	ck_assert_ptr_nonnull(w->index = inflight_new(2));
	fetch_ctx_share(w->ctx.fetches, w->index, 1);
	inflight_notify(w->index, 1, landed, w);
	w->ctx.cache_shared = 1;
}

/* The key of a.example. A, as ask() asks it. */
static struct cache_key
a_key(struct world *w)
{
	struct testpkt q = testpkt_query("a.example.", LDNS_RR_TYPE_A,
	    LDNS_RD, 1232, 0);
	struct cache_key key;
	struct msg_query mq;

	ck_assert_int_eq(msg_parse_query(q.wire, q.len, &mq), MSG_PARSE_OK);
	cache_key_make(w->ctx.cache, &mq.q, mq.edns.do_bit,
	    (mq.flags & MSG_FLAG_CD) != 0, &key);
	testpkt_free(&q);
	return key;
}

static void
world_free(struct world *w)
{
	if (w->index != NULL)
		inflight_notify(w->index, 1, NULL, NULL);
	fetch_ctx_free(w->ctx.fetches);
	inflight_free(w->index);
	query_cancel(&w->ctx);
	ck_assert_int_eq(got.held, 0);
	zone_table_unref(w->ctx.zones);
	upstream_registry_free(w->reg);
	cache_free(w->ctx.cache);
	admit_free(w->ctx.admit);
	ratelimit_free(w->rl);
	localzone_table_unref(w->ctx.local);
	event_base_free(w->ctx.base);
	w->conf.forwards = NULL;	/* not the config's to free */
	w->conf.n_forwards = 0;
	config_free(&w->conf);
}

/*
 * Client id asks name A over UDP; the status query_handle gives, with the
 * rcode of an answer given at once in *rcode and, if stale is not NULL,
 * in *stale whether that answer was stale (its TTL the stale-answer-ttl,
 * 30 s, where the zone's is 300).
 */
static enum query_status
ask_name(struct world *w, const char *name, uint16_t id, unsigned *rcode,
    int *stale)
{
	struct testpkt t = testpkt_query(name, LDNS_RR_TYPE_A, LDNS_RD, 1232,
	    0);
	ldns_pkt *p;
	struct client c;
	uint8_t out[QUERY_ANSWER_MAX];
	enum query_status st;
	size_t len;

	memset(&c, 0, sizeof(c));
	c.ops = &ops;
	c.transport = CLIENT_UDP;
	c.peer = w->client;
	wire_wr16(t.wire, id);
	st = query_handle(&w->ctx, t.wire, t.len, &c, w->net.now, out,
	    sizeof(out), &len);
	if (st == QUERY_ANSWERED)
		*rcode = MSG_RCODE(wire_rd16(out + 2));
	if (st == QUERY_ANSWERED && stale != NULL) {
		p = testpkt_parse(out, len);
		*stale = ldns_pkt_ancount(p) > 0 &&
		    testpkt_ttl(p, LDNS_SECTION_ANSWER, 0) == 30;
		ldns_pkt_free(p);
	}
	testpkt_free(&t);
	return st;
}

static enum query_status
ask(struct world *w, uint16_t id, unsigned *rcode)
{
	return ask_name(w, "a.example.", id, rcode, NULL);
}

/*
 * The upstream answers query i of those sent, for name: A 192.0.2.1,
 * TTL 300, or with rcode (no records) if it is not NOERROR.
 */
static void
upstream_replies(struct world *w, size_t i, const char *name, int rcode)
{
	char rr[128];
	struct testpkt t;

	snprintf(rr, sizeof(rr), "an|%s 300 IN A 192.0.2.1", name);
	t = rcode != 0 ? testpkt_response(name, LDNS_RR_TYPE_A,
	    (ldns_pkt_rcode)rcode, 1232, NULL) : testpkt_response(name,
	    LDNS_RR_TYPE_A, 0, 1232, rr, NULL);
	ck_assert_uint_lt(i, w->net.n_sent);
	memcpy(t.wire, w->net.sent[i].msg, 2);		/* its ID */
	testnet_deliver(&w->net.sent[i], t.wire, t.len);
	testpkt_free(&t);
}

/* The upstream answers the one query sent: A 192.0.2.1, TTL 300. */
static void
upstream_answers(struct world *w)
{
	ck_assert_uint_eq(w->net.n_sent, 1);
	upstream_replies(w, 0, "a.example.", 0);
}

/*
 * 350 clients wait on one resolution. When it ends, QUERY_BATCH = 100
 * are answered in the callback, and then at most 100 per turn of the
 * event loop (350 = 100 + 100 + 100 + 50), never all at once; the answer
 * is in the cache from the start, for the clients that come meanwhile.
 */
START_TEST(waiters_answered_over_turns)
{
	struct world w;
	struct cache_result res;
	struct cache_key key;
	unsigned turns[8], before, rcode, i, n = 350;
	struct testpkt q;
	struct msg_query mq;
	size_t t = 0;

	world_new(&w, 1000);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(ask(&w, (uint16_t)i, &rcode), QUERY_PENDING);
	ck_assert_int_eq(got.held, (int)n);
	upstream_answers(&w);
	ck_assert_uint_eq(got.sent, QUERY_BATCH);
	q = testpkt_query("a.example.", LDNS_RR_TYPE_A, LDNS_RD, 1232, 0);
	ck_assert_int_eq(msg_parse_query(q.wire, q.len, &mq), MSG_PARSE_OK);
	cache_key_make(w.ctx.cache, &mq.q, 0, 0, &key);
	cache_lookup(w.ctx.cache, &key, &mq, NULL, w.net.now, NULL, 0, &res);
	ck_assert_int_eq(res.state, CACHE_FRESH);
	testpkt_free(&q);
	while (got.sent < n && t < 8) {
		before = got.sent;
		ck_assert_int_eq(event_base_loop(w.ctx.base, EVLOOP_ONCE |
		    EVLOOP_NONBLOCK), 0);
		turns[t++] = got.sent - before;
	}
	ck_assert_uint_eq(got.sent, n);
	ck_assert_uint_eq(t, 3);
	ck_assert_uint_eq(turns[0], QUERY_BATCH);
	ck_assert_uint_eq(turns[1], QUERY_BATCH);
	ck_assert_uint_eq(turns[2], 50);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(got.rcode[i], MSG_RCODE_NOERROR + 1);
	ck_assert_int_eq(got.held, 0);
	world_free(&w);
}
END_TEST

/*
 * A failed resolution too: every waiter gets SERVFAIL (nothing stale to
 * give), a batch per turn.
 */
START_TEST(failure_answered_over_turns)
{
	struct world w;
	unsigned rcode, i, n = 250;

	world_new(&w, 1000);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(ask(&w, (uint16_t)i, &rcode), QUERY_PENDING);
	testnet_pass(&w.net, 2000);		/* query-timeout */
	ck_assert_uint_eq(got.sent, QUERY_BATCH);
	ck_assert_int_eq(event_base_loop(w.ctx.base, EVLOOP_ONCE |
	    EVLOOP_NONBLOCK), 0);
	ck_assert_uint_eq(got.sent, 2 * QUERY_BATCH);
	ck_assert_int_eq(event_base_loop(w.ctx.base, EVLOOP_ONCE |
	    EVLOOP_NONBLOCK), 0);
	ck_assert_uint_eq(got.sent, n);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(got.rcode[i], MSG_RCODE_SERVFAIL + 1);
	world_free(&w);
}
END_TEST

/*
 * max-waiters 10: the 11th and later clients do not wait; with nothing
 * in the cache they get SERVFAIL at once. The 10 get the answer.
 */
START_TEST(max_waiters_servfail_at_once)
{
	struct world w;
	struct fetch_stats fs;
	unsigned rcode, i;

	world_new(&w, 10);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(ask(&w, (uint16_t)i, &rcode), QUERY_PENDING);
	for (i = 10; i < 15; i++) {
		ck_assert_int_eq(ask(&w, (uint16_t)i, &rcode), QUERY_ANSWERED);
		ck_assert_uint_eq(rcode, MSG_RCODE_SERVFAIL);
	}
	fetch_stats(w.ctx.fetches, &fs);
	ck_assert_uint_eq(fs.waiters_refused, 5);
	ck_assert_uint_eq(fs.coalesced, 9);
	upstream_answers(&w);
	ck_assert_uint_eq(got.sent, 10);
	for (i = 0; i < 10; i++)
		ck_assert_uint_eq(got.rcode[i], MSG_RCODE_NOERROR + 1);
	world_free(&w);
}
END_TEST

/*
 * The upstream answers b.example. (asked by client id); 1 ms later client
 * id + 1 asks a.example., which waits for a resolution that is sent, and
 * gets its answer.
 */
static void
answered_elsewhere_then_resolved(struct world *w, uint16_t id)
{
	size_t sent = w->net.n_sent;
	unsigned rcode;

	ck_assert_int_eq(ask_name(w, "b.example.", id, &rcode, NULL),
	    QUERY_PENDING);
	upstream_replies(w, sent, "b.example.", 0);
	ck_assert_uint_eq(got.rcode[id], MSG_RCODE_NOERROR + 1);
	testnet_pass(&w->net, 1);
	ck_assert_int_eq(ask(w, id + 1, &rcode), QUERY_PENDING);
	ck_assert_uint_eq(w->net.n_sent, sent + 2);
	upstream_replies(w, sent + 1, "a.example.", 0);
	ck_assert_uint_eq(got.rcode[id + 1], MSG_RCODE_NOERROR + 1);
}

/*
 * RFC 9520: a.example.'s resolution fails by query-timeout (2 s: at
 * 400 ms, then 1200 ms, the lone upstream's timeouts, and no answer), and
 * the failure is cached for failure-ttl (5 s): a query 1 ms later is
 * answered SERVFAIL at once, with nothing sent. The upstream then answers
 * b.example.: the failure is over before its 5 s, and a.example. is
 * resolved again.
 */
START_TEST(cached_failure_ends_with_any_answer)
{
	struct world w;
	unsigned rcode;
	size_t sent;

	world_new(&w, 1000);
	ck_assert_int_eq(ask(&w, 1, &rcode), QUERY_PENDING);
	testnet_pass(&w.net, 2000);
	ck_assert_uint_eq(got.rcode[1], MSG_RCODE_SERVFAIL + 1);
	sent = w.net.n_sent;
	ck_assert_uint_eq(sent, 3);
	testnet_pass(&w.net, 1);
	ck_assert_int_eq(ask(&w, 2, &rcode), QUERY_ANSWERED);
	ck_assert_uint_eq(rcode, MSG_RCODE_SERVFAIL);
	ck_assert_uint_eq(w.net.n_sent, sent);
	answered_elsewhere_then_resolved(&w, 3);
	world_free(&w);
}
END_TEST

/*
 * RFC 8767 §5: a.example. (TTL 300) expired; its refresh meets SERVFAIL
 * five times (the lone upstream asked again 4 times) and fails: the client
 * that waited gets the stale answer, and within its failure recheck time
 * (stale-refresh-interval 30 s times [3/4, 5/4)) the next query is
 * answered stale at once, nothing sent. Then the upstream answers
 * b.example.: a good answer for any name ends the wait, and the next
 * query of a.example. waits for a refresh, which is sent.
 */
START_TEST(stale_ends_with_any_answer)
{
	struct world w;
	unsigned rcode;
	size_t sent;
	int stale;

	world_new(&w, 1000);
	ck_assert_int_eq(ask(&w, 1, &rcode), QUERY_PENDING);
	upstream_answers(&w);
	testnet_pass(&w.net, 300000);
	ck_assert_int_eq(ask(&w, 2, &rcode), QUERY_PENDING);
	for (sent = 1; sent <= 5; sent++) {
		ck_assert_uint_eq(got.rcode[2], 0);
		upstream_replies(&w, sent, "a.example.", LDNS_RCODE_SERVFAIL);
	}
	testnet_pass(&w.net, 0);
	ck_assert_uint_eq(got.rcode[2], MSG_RCODE_NOERROR + 1);
	sent = w.net.n_sent;
	ck_assert_uint_eq(sent, 6);
	testnet_pass(&w.net, 22499);
	ck_assert_int_eq(ask_name(&w, "a.example.", 3, &rcode, &stale),
	    QUERY_ANSWERED);
	ck_assert(stale);
	ck_assert_uint_eq(w.net.n_sent, sent);
	answered_elsewhere_then_resolved(&w, 4);
	world_free(&w);
}
END_TEST

/*
 * With other workers on the cache, the answer is in it before the first
 * waiter is sent it (so that none of theirs misses what one of ours has);
 * alone, a worker stores it after answering, from the same entry.
 */
START_TEST(stored_before_answered_when_shared)
{
	struct world w;
	unsigned rcode;
	int shared, asked;

	for (shared = 0; shared <= 1; shared++) {
		world_new(&w, 1000);
		w.ctx.cache_shared = shared;
		got.cache = w.ctx.cache;
		got.at_first = CACHE_ABSENT;
		ck_assert_int_eq(ask(&w, 1, &rcode), QUERY_PENDING);
		upstream_answers(&w);
		ck_assert_uint_eq(got.sent, 1);
		ck_assert_int_eq(got.at_first, shared ? CACHE_FRESH :
		    CACHE_ABSENT);
		/* a client waited for it: SRV target prefetch may fetch it */
		ck_assert_int_eq(cached_asked(w.ctx.cache, w.net.now, &asked),
		    CACHE_FRESH);
		ck_assert(asked);
		got.cache = NULL;
		world_free(&w);
	}
}
END_TEST

/*
 * A world of two workers where worker 0 (the test) has claimed a.example.
 * A and our clients 0..4 ask it: they wait, nothing is sent. Its key.
 */
static struct cache_key
parked(struct world *w)
{
	struct cache_key key;
	unsigned rcode, i;

	world_new(w, 1000);
	world_share(w);
	key = a_key(w);
	ck_assert_int_eq(inflight_claim(w->index, &key, 0, 1, w->net.now),
	    INFLIGHT_OWNER);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(ask(w, (uint16_t)i, &rcode), QUERY_PENDING);
	ck_assert_uint_eq(w->net.n_sent, 0);
	ck_assert_uint_eq(got.sent, 0);
	return key;
}

/*
 * Worker 0 (the test) resolves a.example.: our clients do not ask the
 * upstream, they wait; when worker 0 has stored the answer and released
 * the key, each is answered from the cache, NOERROR.
 */
START_TEST(waiters_of_another_worker_answered_from_the_cache)
{
	struct testpkt t = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0,
	    1232, "an|a.example. 300 IN A 192.0.2.1", NULL);
	struct cache_entry *e;
	struct msg_response r;
	struct cache_key key;
	struct world w;
	unsigned i;

	key = parked(&w);
	/* worker 0's answer, stored as its query_fetch_done would */
	ck_assert_int_eq(msg_response_parse(t.wire, t.len, &r), 0);
	ck_assert_ptr_nonnull(e = cache_entry_new(w.ctx.cache, &r, w.net.now));
	ck_assert_int_eq(cache_insert(w.ctx.cache, &key, e), 0);
	msg_response_free(&r);
	testpkt_free(&t);
	inflight_release(w.index, &key, 0);
	ck_assert_uint_eq(got.sent, 5);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(got.rcode[i], MSG_RCODE_NOERROR + 1);
	ck_assert_uint_eq(w.net.n_sent, 0);
	world_free(&w);
}
END_TEST

/*
 * Worker 0's resolution left nothing in the cache (an answer not to be
 * stored, or no query sent): our waiters are resolved here, once, with
 * one upstream query for all of them.
 */
START_TEST(waiters_of_another_worker_resolved_here_if_nothing_landed)
{
	struct cache_key key;
	struct world w;
	unsigned i;

	key = parked(&w);
	inflight_release(w.index, &key, 0);
	ck_assert_uint_eq(got.sent, 0);
	upstream_answers(&w);			/* the one query sent */
	ck_assert_uint_eq(got.sent, 5);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(got.rcode[i], MSG_RCODE_NOERROR + 1);
	world_free(&w);
}
END_TEST

static Suite *
query_suite(void)
{
	Suite *s = suite_create("query");
	TCase *tc = tcase_create("waiters");

	tcase_add_test(tc, waiters_answered_over_turns);
	tcase_add_test(tc, failure_answered_over_turns);
	tcase_add_test(tc, max_waiters_servfail_at_once);
	tcase_add_test(tc, cached_failure_ends_with_any_answer);
	tcase_add_test(tc, stale_ends_with_any_answer);
	tcase_add_test(tc, stored_before_answered_when_shared);
	tcase_add_test(tc, waiters_of_another_worker_answered_from_the_cache);
	tcase_add_test(tc,
	    waiters_of_another_worker_resolved_here_if_nothing_landed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(query_suite());
}
