/* check_upstream.c: the upstream registry, per-zone counters and health. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "upstream.h"

/* Collects the upstreams upstream_each shows (all: room for 4). */
struct collected {
	const struct upstream	**all;
	size_t			 n;
};

static void
collect(const struct upstream_view *v, void *arg)
{
	struct collected *c = arg;

	if (c->all != NULL && c->n < 4)
		c->all[c->n] = v->u;
	c->n++;
}

/* How many upstreams reg has, and (if all is not NULL) which. */
static size_t
registered(struct upstream_registry *r, const struct upstream **all)
{
	struct collected c = { all, 0 };

	upstream_each(r, collect, &c);
	return c.n;
}

static struct addr ups[3];
static struct upstream_registry *reg;

static void
setup_addrs(void)
{
	const char *err;

	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &ups[0], &err), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5302", 53, &ups[1], &err), 0);
	ck_assert_int_eq(addr_parse("[::1]:5303", 53, &ups[2], &err), 0);
}

/* A wire name literal and its length, the NUL being the root label. */
#define W(s)	(s), sizeof(s)

static struct upstream *pool[3];

/* A registry with default bounds (upstream-timeout 50ms 2s) and three
 * upstreams in it, two IPv4 and one IPv6. */
static void
pool_get(void)
{
	size_t i;

	setup_addrs();
	ck_assert_ptr_nonnull(reg = upstream_registry_new(50, 2000));
	for (i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(pool[i] = upstream_get(reg, &ups[i]));
		ck_assert_uint_eq(pool[i]->refs, 1);
	}
}

static void
pool_put(void)
{
	size_t i;

	for (i = 0; i < 3; i++)
		upstream_unref(pool[i]);
	ck_assert_uint_eq(registered(reg, NULL), 0);
	upstream_registry_free(reg);
}

static size_t
order(enum config_policy policy, const char *qname, size_t len,
    struct upstream **out)
{
	return upstream_order(pool, 3, policy, (const uint8_t *)qname, len,
	    out);
}

START_TEST(order_policies)
{
	struct upstream *out[3];
	int first[3] = { 0, 0, 0 };
	size_t i, j;

	pool_get();
	ck_assert_uint_eq(order(CONFIG_POLICY_ORDER, W("\1a"), out), 3);
	for (i = 0; i < 3; i++)
		ck_assert_ptr_eq(out[i], pool[i]);
	for (i = 0; i < 300; i++) {
		order(CONFIG_POLICY_RANDOM, W("\1a"), out);
		for (j = 0; j < 3; j++)
			if (out[0] == pool[j])
				first[j]++;
	}
	/* 300 draws, p = 1/3 each: all three lead at least once except
	 * with probability about 3 * (2/3)^300. */
	for (j = 0; j < 3; j++)
		ck_assert_int_gt(first[j], 0);
	pool_put();
}
END_TEST

/*
 * u's next probe, scheduled at *now, is within [*now, *now + backoff]
 * ms: not due a millisecond before it, due at it; *now becomes it.
 */
static void
probe_walk(struct upstream *u, uint64_t *now, uint64_t backoff)
{
	uint64_t at = u->next_probe;

	ck_assert_uint_ge(at, *now);
	ck_assert_uint_le(at, *now + backoff);
	ck_assert(at == *now || !upstream_probe_due(u, at - 1));
	ck_assert(upstream_probe_due(u, at));
	*now = at;
}

START_TEST(health_down_up_probe)
{
	struct upstream *out[3];
	uint64_t now = 1000000;

	pool_get();
	/* UPSTREAM_DOWN_AFTER = 3 failures in a row mark it down. */
	upstream_failed(pool[0], NULL, now);
	upstream_timed_out(pool[0], NULL, 400, now - 400, now);
	ck_assert(!pool[0]->down);
	ck_assert(!upstream_any_down(reg));
	upstream_failed(pool[0], NULL, now);
	ck_assert(pool[0]->down);
	ck_assert(upstream_any_down(reg));
	/* Down ones go last, whatever the policy. */
	order(CONFIG_POLICY_ORDER, W("\1a"), out);
	ck_assert_ptr_eq(out[0], pool[1]);
	ck_assert_ptr_eq(out[1], pool[2]);
	ck_assert_ptr_eq(out[2], pool[0]);
	/* Probes: within 1 s, then back-offs of 2 s, 4 s, 8 s, then 12 s
	 * (UPSTREAM_PROBE_MAX), each probe at a random point of [0,
	 * back-off] after the one before (full jitter; its distribution is
	 * probe_full_jitter's). */
	probe_walk(pool[0], &now, 1000);
	probe_walk(pool[0], &now, 2000);
	probe_walk(pool[0], &now, 4000);
	probe_walk(pool[0], &now, 8000);
	probe_walk(pool[0], &now, 12000);
	probe_walk(pool[0], &now, 12000);
	/* A timeout doubled the RTO it was sent with: 400 -> 800 ms. */
	ck_assert_uint_eq(upstream_rto(pool[0]), 800);
	/* Only an answer brings it back. */
	upstream_answered(pool[0], 10, now);
	ck_assert(!pool[0]->down);
	ck_assert(!upstream_any_down(reg));
	ck_assert_uint_eq(pool[0]->fails, 0);
	ck_assert(!upstream_probe_due(pool[0], now + 1000000));
	ck_assert(!upstream_all_down(pool, 3));
	pool_put();
}
END_TEST

START_TEST(late_is_not_down)
{
	uint64_t now = 1000000;

	pool_get();
	/* Answers keep coming (to other queries) while these time out:
	 * the upstream is late, not down; only the RTO backs off. */
	upstream_answered(pool[0], 100, now);
	upstream_timed_out(pool[0], NULL, 300, now - 300, now + 1);
	upstream_timed_out(pool[0], NULL, 300, now - 200, now + 2);
	upstream_timed_out(pool[0], NULL, 300, now - 100, now + 3);
	ck_assert(!pool[0]->down);
	ck_assert_uint_eq(pool[0]->fails, 0);
	ck_assert_uint_eq(upstream_rto(pool[0]), 600);
	/* Silence since they were sent: three of those do mark it down. */
	upstream_timed_out(pool[0], NULL, 600, now + 10, now + 700);
	upstream_timed_out(pool[0], NULL, 600, now + 20, now + 710);
	upstream_timed_out(pool[0], NULL, 600, now + 30, now + 720);
	ck_assert(pool[0]->down);
	/* Up again at now + 5000: what failed before then may be retried. */
	ck_assert(upstream_answered_since(pool, 1, now - 1));
	ck_assert(!upstream_answered_since(pool, 1, now));
	upstream_answered(pool[0], 100, now + 5000);
	ck_assert(upstream_answered_since(pool, 1, now + 4999));
	ck_assert(!upstream_answered_since(pool, 1, now + 5000));
	ck_assert_uint_eq(upstream_back_at(pool[0]), now + 5000);
	pool_put();
}
END_TEST

/*
 * Full jitter: the first probe of an upstream marked down comes at a
 * uniformly random point of [0, 1000] ms. Over 4,000 upstreams marked
 * down at the same instant (hosts that saw the same outage), the mean of
 * those points is 500 ms (its standard error 4.6 ms: 1000 / sqrt(12 *
 * 4000)), and each tenth of the second gets 400 of them (sd 19):
 * bounds of 6 and 9 standard deviations cannot fail by chance.
 */
START_TEST(probe_full_jitter)
{
	uint64_t now = 1000000, sum = 0, at;
	unsigned tenths[10] = { 0 };
	struct upstream *u;
	int i, j;

	pool_get();
	u = pool[0];
	for (i = 0; i < 4000; i++) {
		for (j = 0; j < UPSTREAM_DOWN_AFTER; j++)
			upstream_failed(u, NULL, now);
		ck_assert(u->down);
		at = u->next_probe - now;
		ck_assert_uint_le(at, UPSTREAM_PROBE_FIRST);
		sum += at;
		tenths[at * 10 / (UPSTREAM_PROBE_FIRST + 1)]++;
		upstream_answered(u, 10, now);
	}
	ck_assert_uint_ge(sum / 4000, 500 - 28);
	ck_assert_uint_le(sum / 4000, 500 + 28);
	for (i = 0; i < 10; i++) {
		ck_assert_uint_ge(tenths[i], 400 - 170);
		ck_assert_uint_le(tenths[i], 400 + 170);
	}
	pool_put();
}
END_TEST

/*
 * Flaky is not down: answers that are failures (SERVFAIL, REFUSED) mark
 * an upstream down only at UPSTREAM_DOWN_AFTER_ANSWERS (10) in a row;
 * silent failures (timeouts, unreachable) at UPSTREAM_DOWN_AFTER (3), and
 * a failed answer breaks a silent run.
 */
START_TEST(answered_failures_are_not_down)
{
	uint64_t now = 1000000;
	int i;

	pool_get();
	for (i = 0; i < UPSTREAM_DOWN_AFTER_ANSWERS - 1; i++)
		upstream_answered_failure(pool[0], NULL, now);
	ck_assert(!pool[0]->down);
	ck_assert_uint_eq(pool[0]->fails, 9);
	upstream_answered_failure(pool[0], NULL, now);
	ck_assert(pool[0]->down);
	/* Silent, silent, answered, silent, silent: no 3 silent in a row
	 * and 5 failures in all. */
	upstream_failed(pool[1], NULL, now);
	upstream_failed(pool[1], NULL, now);
	upstream_answered_failure(pool[1], NULL, now);
	upstream_failed(pool[1], NULL, now);
	upstream_failed(pool[1], NULL, now);
	ck_assert(!pool[1]->down);
	upstream_failed(pool[1], NULL, now);
	ck_assert(pool[1]->down);
	/* 7 answered, then 3 silent: 10 in a row, and 3 silent too. */
	for (i = 0; i < 7; i++)
		upstream_answered_failure(pool[2], NULL, now);
	upstream_failed(pool[2], NULL, now);
	upstream_failed(pool[2], NULL, now);
	ck_assert(!pool[2]->down);
	upstream_failed(pool[2], NULL, now);
	ck_assert(pool[2]->down);
	/* An answer after only failed answers ends no outage: back_at is
	 * when silence or a time down ended. */
	upstream_answered(pool[0], 10, now + 100);
	ck_assert_uint_eq(upstream_back_at(pool[0]), now + 100);
	upstream_answered_failure(pool[0], NULL, now + 200);
	upstream_answered(pool[0], 10, now + 300);
	ck_assert_uint_eq(upstream_back_at(pool[0]), now + 100);
	pool_put();
}
END_TEST

/*
 * upstream_refresh_allowed: a refresh that failed at F may go again once
 * an upstream has answered after F. If that answer ended an outage
 * (back_at B > F), at most 16 in the first second after B, 32 in the
 * next, then 64, 128 and 256 a second from the fifth on; a refresh that
 * failed after B is not counted.
 */
START_TEST(recovery_rate)
{
	static const unsigned per_second[] = { 16, 32, 64, 128, 256, 256 };
	uint64_t now = 1000000, back = now + 30000, t;
	unsigned s, n;
	int i;

	pool_get();
	for (i = 0; i < UPSTREAM_DOWN_AFTER; i++)
		upstream_failed(pool[0], NULL, now);
	ck_assert(pool[0]->down);
	/* Nothing answered since the failure at now + 10. */
	ck_assert(!upstream_refresh_allowed(pool, 1, now + 10, now + 20));
	upstream_answered(pool[0], 10, back);
	ck_assert_uint_eq(upstream_back_at(pool[0]), back);
	for (s = 0; s < 6; s++) {
		t = back + s * 1000;
		for (n = 0; n < per_second[s]; n++)
			ck_assert(upstream_refresh_allowed(pool, 1, now + 10,
			    t + n % 1000));
		ck_assert(!upstream_refresh_allowed(pool, 1, now + 10,
		    t + 999));
	}
	/* Failed after the return: no outage to recover from. */
	upstream_answered(pool[0], 10, back + 5500);
	ck_assert(upstream_refresh_allowed(pool, 1, back + 5100, back + 5999));
	/* Answered since, but not after the failure at back + 5500. */
	ck_assert(!upstream_refresh_allowed(pool, 1, back + 5500,
	    back + 5999));
	/* UPSTREAM_RECOVERY_SPAN after the return, no bound. */
	for (n = 0; n < 1000; n++)
		ck_assert(upstream_refresh_allowed(pool, 1, now + 10,
		    back + UPSTREAM_RECOVERY_SPAN));
	pool_put();
}
END_TEST

/*
 * The retry and hedge budget: further queries while fewer than 10 % of
 * the first ones of the last 10 s, or fewer than retry-budget-min (here
 * 2) in that window; the window slides one second at a time.
 */
START_TEST(retry_budget)
{
	struct upstream_budget_stats st;
	uint64_t now = 5000000;
	int i;

	pool_get();
	upstream_budget_set(reg, 10, 2);
	/* A quiet host: no first query, still 2 retries in the window. */
	ck_assert(upstream_budget_extra(reg, now));
	ck_assert(upstream_budget_extra(reg, now + 9000));
	ck_assert(!upstream_budget_extra(reg, now + 9999));
	/* The first slid out at now + 10000. */
	ck_assert(upstream_budget_extra(reg, now + 10000));
	ck_assert(!upstream_budget_extra(reg, now + 10000));
	/* 50 first queries at now + 10 s: 10 % is 5 in the window (2
	 * spent). */
	for (i = 0; i < 50; i++)
		upstream_budget_first(reg, now + 10000);
	for (i = 0; i < 3; i++)
		ck_assert(upstream_budget_extra(reg, now + 10500));
	ck_assert(!upstream_budget_extra(reg, now + 10500));
	upstream_budget_stats(reg, now + 10500, &st);
	ck_assert_uint_eq(st.first, 50);
	ck_assert_uint_eq(st.extra, 5);
	ck_assert_uint_eq(st.extra_total, 6);
	ck_assert_uint_eq(st.denied_total, 3);
	/* 20 s later the window is empty: only the floor. */
	upstream_budget_stats(reg, now + 30000, &st);
	ck_assert_uint_eq(st.first + st.extra, 0);
	/* retry-budget 0, retry-budget-min 0: never. */
	upstream_budget_set(reg, 0, 0);
	upstream_budget_first(reg, now + 30000);
	ck_assert(!upstream_budget_extra(reg, now + 30000));
	pool_put();
}
END_TEST

START_TEST(failed_question_kept_for_probes)
{
	struct msg_question a = { "\1a\4test", 8, MSG_TYPE_A, MSG_CLASS_IN };
	struct msg_question srv = { "\4_svc\4_tcp\4test", 16, MSG_TYPE_SRV,
	    MSG_CLASS_IN };
	uint64_t now = 1000000;

	pool_get();
	ck_assert_uint_eq(pool[0]->failed_q.qname_len, 0);
	upstream_failed(pool[0], &a, now);
	ck_assert_mem_eq(pool[0]->failed_q.qname, a.qname, 8);
	/* The latest one; a probe's own failure (NULL) changes nothing. */
	upstream_timed_out(pool[0], &srv, 400, now - 400, now);
	upstream_failed(pool[0], NULL, now);
	ck_assert_uint_eq(pool[0]->failed_q.qname_len, 16);
	ck_assert_uint_eq(pool[0]->failed_q.qtype, MSG_TYPE_SRV);
	ck_assert_mem_eq(pool[0]->failed_q.qname, srv.qname, 16);
	pool_put();
}
END_TEST

START_TEST(loops_excluded)
{
	struct upstream *out[3];

	pool_get();
	upstream_loop(pool[1]);
	ck_assert_uint_eq(order(CONFIG_POLICY_ORDER, W("\1a"), out), 2);
	ck_assert_ptr_eq(out[0], pool[0]);
	ck_assert_ptr_eq(out[1], pool[2]);
	upstream_loop(pool[0]);
	upstream_loop(pool[2]);
	ck_assert(upstream_all_down(pool, 3));
	ck_assert_uint_eq(order(CONFIG_POLICY_HASH, W("\1a"), out), 0);
	/* A reload lets them be checked again. */
	upstream_reconfigure(reg, 50, 2000);
	ck_assert_uint_eq(order(CONFIG_POLICY_ORDER, W("\1a"), out), 3);
	pool_put();
}
END_TEST

START_TEST(fastest_explores)
{
	struct upstream *out[3];
	int firsts[3] = { 0, 0, 0 };
	size_t i, j;

	pool_get();
	/* Unmeasured ones first, to measure them: pool[2] has no sample. */
	upstream_answered(pool[0], 80, 1);
	upstream_answered(pool[1], 20, 1);
	for (i = 0; i < 1600; i++) {
		order(CONFIG_POLICY_FASTEST, W("\1a"), out);
		for (j = 0; j < 3; j++)
			firsts[j] += out[0] == pool[j];
	}
	/* The unmeasured one always leads: measuring it is the exploring. */
	ck_assert_int_eq(firsts[2], 1600);
	upstream_answered(pool[2], 50, 1);
	memset(firsts, 0, sizeof(firsts));
	for (i = 0; i < 1600; i++) {
		order(CONFIG_POLICY_FASTEST, W("\1a"), out);
		for (j = 0; j < 3; j++)
			firsts[j] += out[0] == pool[j];
	}
	/* SRTT 20 < 50 < 80: pool[1] leads, the others explored ~100/1600
	 * times together (binomial, mean 100, sd 9.7: bounds at 5 sd). */
	ck_assert_int_gt(firsts[1], 1400);
	ck_assert_int_gt(firsts[0], 0);
	ck_assert_int_gt(firsts[2], 0);
	ck_assert_int_lt(firsts[0] + firsts[2], 150);
	pool_put();
}
END_TEST

START_TEST(hash_rendezvous)
{
	struct upstream *out[3], *again[3], *two[3];
	char name[64];
	uint8_t wire[80];
	int count[3] = { 0, 0, 0 }, moved = 0, moved_wrongly = 0;
	size_t i, j, n;

	pool_get();
	for (i = 0; i < 1000; i++) {
		n = (size_t)snprintf(name, sizeof(name), "host%zu", i);
		wire[0] = (uint8_t)n;
		memcpy(wire + 1, name, n);
		memcpy(wire + 1 + n, "\7example\0", 9);
		n += 10;
		ck_assert_uint_eq(upstream_order(pool, 3, CONFIG_POLICY_HASH,
		    wire, n, out), 3);
		upstream_order(pool, 3, CONFIG_POLICY_HASH, wire, n, again);
		/* The same name always goes to the same upstream. */
		ck_assert_ptr_eq(out[0], again[0]);
		for (j = 0; j < 3; j++)
			count[j] += out[0] == pool[j];
		/* Without pool[2], only its names move. */
		upstream_order(pool, 2, CONFIG_POLICY_HASH, wire, n, two);
		if (two[0] != out[0]) {
			moved++;
			moved_wrongly += out[0] != pool[2];
		}
	}
	/* Even is 333.3 each; the issue asks for within 15 %: [283, 383]. */
	for (j = 0; j < 3; j++) {
		ck_assert_int_ge(count[j], 283);
		ck_assert_int_le(count[j], 383);
	}
	ck_assert_int_eq(moved, count[2]);
	ck_assert_int_eq(moved_wrongly, 0);
	pool_put();
}
END_TEST

START_TEST(registry_shares)
{
	const struct upstream *all[4];
	struct upstream *again;
	size_t i, n;

	pool_get();
	/* One object per address, its references counted. */
	ck_assert_ptr_eq(again = upstream_get(reg, &ups[0]), pool[0]);
	ck_assert_uint_eq(pool[0]->refs, 2);
	upstream_unref(again);
	ck_assert_uint_eq(pool[0]->refs, 1);
	ck_assert_uint_eq(n = registered(reg, all), 3);
	for (i = 0; i < n; i++)
		ck_assert(all[i] == pool[0] || all[i] == pool[1] ||
		    all[i] == pool[2]);
	/* The last reference takes it out of the registry. */
	upstream_unref(pool[1]);
	for (i = 0, n = registered(reg, all); i < n; i++)
		ck_assert_ptr_ne(all[i], pool[1]);
	ck_assert_ptr_nonnull(pool[1] = upstream_get(reg, &ups[1]));
	pool_put();
}
END_TEST

START_TEST(registries_apart)
{
	struct upstream_registry *other;
	struct upstream *u;

	pool_get();
	ck_assert_ptr_nonnull(other = upstream_registry_new(50, 2000));
	ck_assert_ptr_nonnull(u = upstream_get(other, &ups[0]));
	/* The same address in another registry is another upstream... */
	ck_assert_ptr_ne(u, pool[0]);
	ck_assert_uint_eq(pool[0]->refs, 1);
	/* ...with health of its own: 3 failures mark u down, in other. */
	upstream_failed(u, NULL, 1000);
	upstream_failed(u, NULL, 1000);
	upstream_failed(u, NULL, 1000);
	ck_assert(u->down && !pool[0]->down);
	ck_assert(upstream_any_down(other));
	ck_assert(!upstream_any_down(reg));
	/* Freeing a down upstream leaves none down. */
	upstream_unref(u);
	ck_assert(!upstream_any_down(other));
	ck_assert_uint_eq(registered(other, NULL), 0);
	upstream_registry_free(other);
	pool_put();
}
END_TEST

START_TEST(registry_timeout_bounds)
{
	struct upstream *u;

	setup_addrs();
	/* upstream-timeout 500ms 2s: the first RTO, 400 ms (RTT_INITIAL_MS),
	 * is raised to the 500 ms floor. */
	ck_assert_ptr_nonnull(reg = upstream_registry_new(500, 2000));
	ck_assert_ptr_nonnull(u = upstream_get(reg, &ups[0]));
	ck_assert_uint_eq(upstream_rto(u), 500);
	/* A sample of 1000 ms: SRTT 1000, RTTVAR 500, RTO 1000 + 4 * 500 =
	 * 3000 (RFC 6298 §2.2), held to the 2 s ceiling. */
	upstream_answered(u, 1000, 1);
	ck_assert_uint_eq(upstream_rto(u), 2000);
	/* Reload to 50ms 300ms: re-clamped, and so is a new upstream's 400. */
	upstream_reconfigure(reg, 50, 300);
	ck_assert_uint_eq(upstream_rto(u), 300);
	upstream_unref(u);
	ck_assert_ptr_nonnull(u = upstream_get(reg, &ups[0]));
	ck_assert_uint_eq(upstream_rto(u), 300);
	upstream_unref(u);
	upstream_registry_free(reg);
}
END_TEST

START_TEST(stats_never_move)
{
	struct upstream_stats *st;
	struct upstream *u;
	char zone[32];
	size_t i;

	pool_get();
	u = pool[0];
	/* An attempt in flight holds its zone's counters by address... */
	ck_assert_ptr_nonnull(st = upstream_stats_for(u, "a.test."));
	st->queries = 1;
	/* ...while queries through other zones make theirs. */
	for (i = 0; i < 100; i++) {
		snprintf(zone, sizeof(zone), "z%zu.test.", i);
		ck_assert_ptr_nonnull(upstream_stats_for(u, zone));
	}
	/* The answer is counted where the attempt points: still a.test.'s. */
	st->answers++;
	ck_assert_ptr_eq(upstream_stats_for(u, "a.test."), st);
	ck_assert_uint_eq(upstream_stats_for(u, "a.test.")->queries, 1);
	ck_assert_uint_eq(upstream_stats_for(u, "a.test.")->answers, 1);
	pool_put();
}
END_TEST

static Suite *
upstream_suite(void)
{
	Suite *s = suite_create("upstream");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, registry_shares);
	tcase_add_test(tc, registries_apart);
	tcase_add_test(tc, registry_timeout_bounds);
	tcase_add_test(tc, stats_never_move);
	tcase_add_test(tc, order_policies);
	tcase_add_test(tc, health_down_up_probe);
	tcase_add_test(tc, late_is_not_down);
	tcase_add_test(tc, probe_full_jitter);
	tcase_add_test(tc, answered_failures_are_not_down);
	tcase_add_test(tc, recovery_rate);
	tcase_add_test(tc, retry_budget);
	tcase_add_test(tc, failed_question_kept_for_probes);
	tcase_add_test(tc, loops_excluded);
	tcase_add_test(tc, fastest_explores);
	tcase_add_test(tc, hash_rendezvous);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(upstream_suite());
}
