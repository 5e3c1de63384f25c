/* check_lkg.c: last known good: holds, deletions, collapses, at exact instants. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "check_main.h"
#include "lkg.h"
#include "zone.h"

#define ZONE	"svc.example."
#define HOLD	60000		/* ms: last-known-good-hold's default */
#define T0	1000000		/* ms: any instant well past 0 */
/* A positive answer servable a day on: fresh, or stale within
 * stale-max-age (the caller works that out from the cache). */
#define SERVABLE	(T0 + 86400000ULL)

/* The key of NAME.svc.example. with qtype (plain: DO and CD clear). */
static struct cache_key
key_of(const char *name, uint16_t qtype)
{
	struct msg_question q;
	struct cache_key key;
	char full[256];
	size_t len;

	snprintf(full, sizeof(full), "%s.%s", name, ZONE);
	memset(&q, 0, sizeof(q));
	ck_assert_int_eq(zone_name_to_wire(full, q.qname, &len), 0);
	q.qname_len = (uint8_t)len;
	q.qtype = qtype;
	q.qclass = MSG_CLASS_IN;
	cachekey_fill(&q, 0, 0, &key);
	/* lkg compares the hash first: any spread of values does. */
	key.hash = (uint64_t)len * 0x9e3779b97f4a7c15ULL + name[0] + qtype;
	return key;
}

/* n names of the zone answered positively at now: name0, name1... */
static void
in_use(struct lkg *l, unsigned n, uint64_t now)
{
	struct cache_key k;
	char name[32];
	unsigned i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "name%u", i);
		k = key_of(name, MSG_TYPE_SRV);
		lkg_positive(l, ZONE, &k, now);
	}
}

static enum lkg_verdict
neg(struct lkg *l, const struct cache_key *k, uint64_t servable,
    uint64_t now)
{
	return lkg_negative(l, ZONE, HOLD, k, LKG_NXDOMAIN, servable, now);
}

static uint64_t
zones_held(struct lkg *l)
{
	struct lkg_stats st;

	lkg_stats(l, &st);
	return st.zones_held;
}

/*
 * One name of twenty in use turns NXDOMAIN at T0: held (1 of 20 is below
 * both thresholds: no collapse) for exactly the hold, 60 s; the negative
 * seen at T0 + 59.999 s is still held, the one at T0 + 60 s goes through
 * (a deletion, RFC 2308 caching from then on is the cache's).
 */
START_TEST(single_deletion_accepted_after_hold)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k = key_of("name7", MSG_TYPE_SRV);
	struct lkg_stats st;

	in_use(l, 20, T0 - 5000);
	ck_assert_int_eq(neg(l, &k, SERVABLE, T0), LKG_HOLD);
	ck_assert_str_eq(lkg_text(l, &k),
	    "upstream NXDOMAIN held: last known good");
	ck_assert_int_eq(neg(l, &k, SERVABLE, T0 + 30000), LKG_HOLD);
	ck_assert_int_eq(neg(l, &k, SERVABLE, T0 + HOLD - 1), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 0);
	ck_assert_int_eq(neg(l, &k, SERVABLE, T0 + HOLD), LKG_PASS);
	ck_assert_ptr_null(lkg_text(l, &k));
	lkg_stats(l, &st);
	ck_assert_uint_eq(st.held, 0);
	ck_assert_uint_eq(st.deletions, 1);
	lkg_free(l);
}
END_TEST

/*
 * Ten names in use; three turn NXDOMAIN within one hold (3 >= 3, and 3 of
 * 10 = 30 % >= 20 %): the zone is held, and none of the three is taken as
 * deleted at T0 + 60 s, nor at ten holds on; a fourth that turns negative
 * later is held with them. The hold of each shows as 0 (no end).
 */
START_TEST(collapse_held_past_hold)
{
	struct lkg *l = lkg_new(0);
	struct cache_key a = key_of("name1", MSG_TYPE_SRV);
	struct cache_key b = key_of("name2", MSG_TYPE_SRV);
	struct cache_key c = key_of("name3", MSG_TYPE_SRV);
	struct cache_key d = key_of("name4", MSG_TYPE_SRV);
	struct lkg_view v;

	in_use(l, 10, T0 - 5000);
	ck_assert_int_eq(neg(l, &a, SERVABLE, T0), LKG_HOLD);
	ck_assert_int_eq(neg(l, &b, SERVABLE, T0 + 100), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 0);
	ck_assert_int_eq(neg(l, &c, SERVABLE, T0 + 200), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 1);
	ck_assert_int_eq(neg(l, &a, SERVABLE, T0 + HOLD), LKG_HOLD);
	ck_assert_int_eq(neg(l, &b, SERVABLE, T0 + 10 * HOLD), LKG_HOLD);
	ck_assert_int_eq(neg(l, &d, SERVABLE, T0 + 10 * HOLD), LKG_HOLD);
	ck_assert_int_eq(neg(l, &d, SERVABLE, T0 + 12 * HOLD), LKG_HOLD);
	ck_assert_int_eq(lkg_find(l, &c, &v), 1);
	ck_assert_uint_eq(v.hold_ends, 0);
	ck_assert_uint_eq(v.since, T0 + 200);
	ck_assert_str_eq(v.zone, ZONE);
	lkg_free(l);
}
END_TEST

/*
 * Two names of a hundred turning negative together are 2 % and fewer than
 * three: a deletion of two, not a collapse. Three of a hundred are 3 %:
 * below 20 %, still deletions.
 */
START_TEST(few_of_many_are_deletions)
{
	struct lkg *l = lkg_new(0);
	struct cache_key a = key_of("name1", MSG_TYPE_SRV);
	struct cache_key b = key_of("name2", MSG_TYPE_SRV);
	struct cache_key c = key_of("name3", MSG_TYPE_SRV);

	in_use(l, 100, T0 - 5000);
	ck_assert_int_eq(neg(l, &a, SERVABLE, T0), LKG_HOLD);
	ck_assert_int_eq(neg(l, &b, SERVABLE, T0), LKG_HOLD);
	ck_assert_int_eq(neg(l, &c, SERVABLE, T0), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 0);
	ck_assert_int_eq(neg(l, &a, SERVABLE, T0 + HOLD), LKG_PASS);
	ck_assert_int_eq(neg(l, &b, SERVABLE, T0 + HOLD), LKG_PASS);
	ck_assert_int_eq(neg(l, &c, SERVABLE, T0 + HOLD), LKG_PASS);
	lkg_free(l);
}
END_TEST

/*
 * A positive answer ends a question's hold at once; with the last held
 * question of a held zone positive again, the zone's hold ends too, and a
 * negative answer after that starts a new hold of its own.
 */
START_TEST(positive_ends_hold)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k[3];
	unsigned i;

	k[0] = key_of("name0", MSG_TYPE_A);
	k[1] = key_of("name1", MSG_TYPE_A);
	k[2] = key_of("name2", MSG_TYPE_A);
	in_use(l, 5, T0 - 5000);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(neg(l, &k[i], SERVABLE, T0), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 1);
	lkg_positive(l, ZONE, &k[0], T0 + 3 * HOLD);
	ck_assert_ptr_null(lkg_text(l, &k[0]));
	ck_assert_uint_eq(zones_held(l), 1);
	lkg_positive(l, ZONE, &k[1], T0 + 3 * HOLD);
	lkg_positive(l, ZONE, &k[2], T0 + 3 * HOLD);
	ck_assert_uint_eq(zones_held(l), 0);
	/* a new hold, from its own first negative */
	ck_assert_int_eq(neg(l, &k[0], SERVABLE, T0 + 4 * HOLD), LKG_HOLD);
	ck_assert_int_eq(neg(l, &k[0], SERVABLE, T0 + 5 * HOLD - 1),
	    LKG_HOLD);
	ck_assert_int_eq(neg(l, &k[0], SERVABLE, T0 + 5 * HOLD), LKG_PASS);
	lkg_free(l);
}
END_TEST

/*
 * Nothing is made up: a question with no positive answer in the cache
 * (servable_until 0), or one past stale-max-age (servable_until not after
 * now), gets the negative answer at once, even in a held zone; a held
 * question whose positive answer ends stale is let go.
 */
START_TEST(never_positive_negative_at_once)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k[3], never = key_of("never", MSG_TYPE_SRV);
	struct cache_key old = key_of("old", MSG_TYPE_SRV);
	struct lkg_stats st;
	unsigned i;

	ck_assert_int_eq(neg(l, &never, 0, T0), LKG_PASS);
	k[0] = key_of("name0", MSG_TYPE_A);
	k[1] = key_of("name1", MSG_TYPE_A);
	k[2] = key_of("name2", MSG_TYPE_A);
	in_use(l, 3, T0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(neg(l, &k[i], T0 + 10000, T0), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 1);
	ck_assert_int_eq(neg(l, &never, 0, T0 + 1), LKG_PASS);
	ck_assert_int_eq(neg(l, &old, T0 + 1, T0 + 1), LKG_PASS);
	/* at T0 + 10 s their answers end stale: held no more */
	ck_assert_int_eq(neg(l, &k[0], 0, T0 + 10000), LKG_PASS);
	lkg_stats(l, &st);
	ck_assert_uint_le(st.held, 2);
	lkg_free(l);
}
END_TEST

/*
 * A set that shrinks (an SRV RRset of fewer targets, fewer addresses) is
 * an answer: the caller sees class ANSWER and calls lkg_positive, which
 * holds nothing and ends a hold; only NXDOMAIN and NODATA are ever held.
 */
START_TEST(shrinking_set_passes)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k = key_of("name0", MSG_TYPE_SRV);
	struct lkg_stats st;

	in_use(l, 10, T0);
	lkg_positive(l, ZONE, &k, T0 + 1000);	/* two targets, then one */
	ck_assert_ptr_null(lkg_text(l, &k));
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0 + 1000), 1);
	ck_assert_int_eq(lkg_negative(l, ZONE, HOLD, &k, LKG_NODATA,
	    SERVABLE, T0 + 2000), LKG_HOLD);	/* none: NODATA, held */
	ck_assert_str_eq(lkg_text(l, &k),
	    "upstream NODATA held: last known good");
	lkg_positive(l, ZONE, &k, T0 + 3000);	/* one again */
	lkg_stats(l, &st);
	ck_assert_uint_eq(st.held, 0);
	lkg_free(l);
}
END_TEST

/*
 * A prefetch's refresh of a fresh entry that comes back negative follows
 * the same rule (the caller passes the fresh entry's servable end): held,
 * its re-checks paced, taken as a deletion at the hold's end. Re-checks:
 * the first may go in [T0 + 3.75 s, T0 + 11.25 s) (60 s / 8 = 7.5 s times
 * [1/2, 3/2)); a check taken pushes the next one on, so that no more than
 * one refresh a re-check interval goes out however many clients ask; the
 * last one before the hold's end is due at the end exactly.
 */
START_TEST(prefetch_negative_follows_rule)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k = key_of("name3", MSG_TYPE_AAAA);
	uint64_t t, granted = 0, last = 0;

	in_use(l, 20, T0 - 1000);
	ck_assert_int_eq(lkg_negative(l, ZONE, HOLD, &k, LKG_NODATA,
	    T0 + 20000 + 86400000ULL, T0), LKG_HOLD);
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0), 0);
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0 + 3749), 0);
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0 + 11250), 1);
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0 + 11251), 0);
	/* one client query every 100 ms up to the hold's end */
	for (t = T0 + 11300; t <= T0 + HOLD; t += 100)
		if (lkg_may_refresh(l, &k, t)) {
			ck_assert(t == T0 + HOLD ||
			    t - (last ? last : T0 + 11250) >= 3750);
			last = t;
			granted++;
		}
	ck_assert_uint_le(granted, (HOLD - 11250) / 3750 + 1);
	ck_assert_uint_eq(last, T0 + HOLD);
	ck_assert_int_eq(lkg_negative(l, ZONE, HOLD, &k, LKG_NODATA,
	    T0 + 20000 + 86400000ULL, T0 + HOLD), LKG_PASS);
	lkg_free(l);
}
END_TEST

/*
 * An operator's release ends a held zone's hold: each held question's
 * re-check is due at once and its negative answer goes through.
 */
START_TEST(release_lets_negatives_through)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k[3];
	unsigned i;

	in_use(l, 4, T0);
	k[0] = key_of("name0", MSG_TYPE_SRV);
	k[1] = key_of("name1", MSG_TYPE_SRV);
	k[2] = key_of("name2", MSG_TYPE_SRV);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(neg(l, &k[i], SERVABLE, T0), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 1);
	ck_assert_int_eq(lkg_release(l, "other.example.", T0 + 1), -1);
	ck_assert_int_eq(lkg_release(l, ZONE, T0 + 1), 3);
	ck_assert_uint_eq(zones_held(l), 0);
	ck_assert_int_eq(lkg_may_refresh(l, &k[0], T0 + 1), 1);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(neg(l, &k[i], SERVABLE, T0 + 2), LKG_PASS);
	lkg_free(l);
}
END_TEST

/*
 * The state is bounded: with room for 4 questions, the fifth negative
 * goes through (counted), and no more than 4 are ever held; once one is
 * let go, there is room again.
 */
START_TEST(held_questions_bounded)
{
	struct lkg *l = lkg_new(4);
	struct cache_key k;
	struct lkg_stats st;
	char name[32];
	unsigned i;

	in_use(l, 1000, T0);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "name%u", i);
		k = key_of(name, MSG_TYPE_SRV);
		ck_assert_int_eq(neg(l, &k, SERVABLE, T0),
		    i < 4 ? LKG_HOLD : LKG_PASS);
	}
	lkg_stats(l, &st);
	ck_assert_uint_eq(st.held, 4);
	ck_assert_uint_eq(st.overflow, 6);
	k = key_of("name0", MSG_TYPE_SRV);
	lkg_positive(l, ZONE, &k, T0 + 1);
	k = key_of("name9", MSG_TYPE_SRV);
	ck_assert_int_eq(neg(l, &k, SERVABLE, T0 + 1), LKG_HOLD);
	lkg_free(l);
}
END_TEST

/* A zone whose last-known-good a reload turned off forgets its held
 * questions: no more text, no pacing of their refreshes. */
START_TEST(forget_when_turned_off)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k = key_of("name0", MSG_TYPE_A);
	struct lkg_stats st;

	in_use(l, 20, T0);
	ck_assert_int_eq(neg(l, &k, SERVABLE, T0), LKG_HOLD);
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0), 0);
	lkg_forget(l, &k, T0 + 1);
	ck_assert_ptr_null(lkg_text(l, &k));
	ck_assert_int_eq(lkg_may_refresh(l, &k, T0 + 1), 1);
	lkg_stats(l, &st);
	ck_assert_uint_eq(st.held, 0);
	lkg_free(l);
}
END_TEST

/* Names in use are those answered positively within the last hour:
 * after two hours of silence, three negatives in a zone are a collapse
 * only by the minimum (3 of 3 known). */
START_TEST(names_in_use_age_out)
{
	struct lkg *l = lkg_new(0);
	struct cache_key k[3];
	unsigned i;

	in_use(l, 100, T0);
	k[0] = key_of("name0", MSG_TYPE_SRV);
	k[1] = key_of("name1", MSG_TYPE_SRV);
	k[2] = key_of("name2", MSG_TYPE_SRV);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(neg(l, &k[i], SERVABLE + 3 * LKG_IN_USE_MS,
		    T0 + 2 * LKG_IN_USE_MS), LKG_HOLD);
	ck_assert_uint_eq(zones_held(l), 1);
	lkg_free(l);
}
END_TEST

static Suite *
lkg_suite(void)
{
	Suite *s = suite_create("lkg");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, single_deletion_accepted_after_hold);
	tcase_add_test(tc, collapse_held_past_hold);
	tcase_add_test(tc, few_of_many_are_deletions);
	tcase_add_test(tc, positive_ends_hold);
	tcase_add_test(tc, never_positive_negative_at_once);
	tcase_add_test(tc, shrinking_set_passes);
	tcase_add_test(tc, prefetch_negative_follows_rule);
	tcase_add_test(tc, release_lets_negatives_through);
	tcase_add_test(tc, held_questions_bounded);
	tcase_add_test(tc, names_in_use_age_out);
	tcase_add_test(tc, forget_when_turned_off);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(lkg_suite());
}
