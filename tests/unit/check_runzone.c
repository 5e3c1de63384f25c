/* check_runzone.c: runtime forward zones: precedence, flush scope, lifetime,
 * the state file's format, the cap, owners. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "check_main.h"
#include "config.h"
#include "runzone.h"
#include "upstream.h"
#include "zone.h"

static struct addr ups[3];
static struct upstream_registry *reg;
static struct runzone_set set;

static void
setup(void)
{
	const char *err;

	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &ups[0], &err), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5302", 53, &ups[1], &err), 0);
	ck_assert_int_eq(addr_parse("[::1]:5303", 53, &ups[2], &err), 0);
	ck_assert_ptr_nonnull(reg = upstream_registry_new(50, 2000));
	runzone_set_init(&set);
}

static void
teardown(void)
{
	runzone_set_free(&set);
	upstream_registry_free(reg);
}

/* Add zone to the set forwarding to ups[u], with owner and lifetime s
 * (0: none) at now ms. Returns runzone_add's result. */
static int
add(const char *zone, size_t u, const char *owner, uint64_t life,
    uint64_t now, int *replaced)
{
	struct runzone rz;

	memset(&rz, 0, sizeof(rz));
	config_forward_defaults(&rz.fw);
	ck_assert_ptr_nonnull(rz.fw.zone = runzone_name(zone));
	ck_assert_int_eq(config_add_addr(&rz.fw.upstreams, &rz.fw.n_upstreams,
	    &ups[u]), 0);
	snprintf(rz.owner, sizeof(rz.owner), "%s", owner);
	rz.lifetime = life;
	rz.expires = life > 0 ? now + life * 1000 : RUNZONE_NEVER;
	return runzone_add(&set, &rz, replaced);
}

/* A configuration of `.` to ups[0] and corp.example. to ups[0], with
 * max-inflight 100. */
static struct config_forward conf_fw[2];
static struct config conf;

static void
make_conf(void)
{
	memset(&conf, 0, sizeof(conf));
	memset(conf_fw, 0, sizeof(conf_fw));
	conf_fw[0].zone = (char *)".";
	conf_fw[1].zone = (char *)"corp.example.";
	conf_fw[0].upstreams = conf_fw[1].upstreams = &ups[0];
	conf_fw[0].n_upstreams = conf_fw[1].n_upstreams = 1;
	conf.forwards = conf_fw;
	conf.n_forwards = 2;
	conf.max_inflight = 100;
}

static struct zone_table *
merged_table(void)
{
	struct zone_table *t;
	struct config m;

	ck_assert_int_eq(runzone_merge(&set, &conf, &m), 0);
	ck_assert_ptr_nonnull(t = zone_table_new(reg, &m));
	runzone_merge_free(&m);
	return t;
}

#define W(s)	(const uint8_t *)(s), sizeof(s)

static const struct zone *
find(const struct zone_table *t, const uint8_t *w, size_t len)
{
	return zone_find(t, w, len, MSG_TYPE_A);
}

/* A runtime zone of a configured name takes its place; the others stay,
 * and the budgets of the configured ones are not thinned. */
START_TEST(precedence)
{
	struct zone_table *before, *after;
	const struct zone *z;
	int replaced;

	make_conf();
	before = merged_table();
	ck_assert_int_eq(add("Corp.Example", 1, "tun0", 0, 0, &replaced), 0);
	ck_assert_int_eq(add("consul", 2, "agent", 0, 0, &replaced), 0);
	after = merged_table();
	ck_assert_uint_eq(zone_count(after), 3);
	z = find(after, W("\3www\4corp\7example"));
	ck_assert_str_eq(z->name_str, "corp.example.");
	ck_assert_uint_eq(z->n_upstreams, 1);
	ck_assert(addr_equal(&z->upstreams[0]->addr, &ups[1]));
	z = find(after, W("\3web\6consul"));
	ck_assert(addr_equal(&z->upstreams[0]->addr, &ups[2]));
	z = find(after, W("\3com"));
	ck_assert_str_eq(z->name_str, ".");
	/* 100 shared by the two configured zones: 50 each, runtime too. */
	ck_assert_uint_eq(find(before, W("\3com"))->max_inflight, 50);
	ck_assert_uint_eq(z->max_inflight, 50);
	ck_assert_uint_eq(find(after, W("\3web\6consul"))->max_inflight, 50);
	zone_table_unref(before);
	zone_table_unref(after);

	/* Removed: the configured zone again. */
	ck_assert_int_eq(runzone_remove(&set, "corp.example.", NULL, NULL,
	    NULL), 0);
	after = merged_table();
	z = find(after, W("\3www\4corp\7example"));
	ck_assert(addr_equal(&z->upstreams[0]->addr, &ups[0]));
	zone_table_unref(after);
}
END_TEST

/* Only the names under a touched zone that go elsewhere now are flushed:
 * not those of a configured zone below it, not those elsewhere. */
START_TEST(flush_scope)
{
	static struct config_forward fw[3];
	struct runzone_reroute r;
	uint8_t wire[1][MSG_NAME_MAX];
	size_t len[1];
	int replaced;

	make_conf();
	memcpy(fw, conf_fw, sizeof(conf_fw));
	fw[2].zone = (char *)"lab.corp.example.";
	fw[2].upstreams = &ups[2];
	fw[2].n_upstreams = 1;
	conf.forwards = fw;
	conf.n_forwards = 3;
	memset(&r, 0, sizeof(r));
	r.old = merged_table();
	ck_assert_int_eq(add("corp.example.", 1, "", 0, 0, &replaced), 0);
	r.new = merged_table();
	ck_assert_int_eq(zone_name_to_wire("corp.example.", wire[0], &len[0]),
	    0);
	r.wire = wire;
	r.len = len;
	r.n = 1;
	/* Flushed: the zone's names, its apex. */
	ck_assert_int_eq(runzone_keep(W("\3www\4corp\7example"), MSG_TYPE_A,
	    &r), 0);
	ck_assert_int_eq(runzone_keep(W("\4corp\7example"), MSG_TYPE_SOA, &r),
	    0);
	/* Kept: a zone of its own below it, the parent's DS, elsewhere. */
	ck_assert_int_eq(runzone_keep(W("\3www\3lab\4corp\7example"),
	    MSG_TYPE_A, &r), 1);
	ck_assert_int_eq(runzone_keep(W("\4corp\7example"), MSG_TYPE_DS, &r),
	    1);
	ck_assert_int_eq(runzone_keep(W("\3www\7example"), MSG_TYPE_A, &r), 1);
	ck_assert_int_eq(runzone_keep(W("\5xcorp\7example"), MSG_TYPE_A, &r),
	    1);
	/* Out of memory for the list: every name is compared, no more. */
	r.all = 1;
	ck_assert_int_eq(runzone_keep(W("\3www\7example"), MSG_TYPE_A, &r), 1);
	ck_assert_int_eq(runzone_keep(W("\3www\4corp\7example"), MSG_TYPE_A,
	    &r), 0);
	zone_table_unref((struct zone_table *)r.old);
	zone_table_unref((struct zone_table *)r.new);
}
END_TEST

static void
count_fn(const struct runzone *rz, void *arg)
{
	(void)rz;
	(*(int *)arg)++;
}

/* A lifetime ends at its millisecond; an add again renews it. */
START_TEST(lifetime)
{
	int replaced, seen = 0;

	ck_assert_int_eq(add("a.test", 0, "", 60, 1000, &replaced), 0);
	ck_assert_int_eq(add("b.test", 0, "", 0, 1000, &replaced), 0);
	ck_assert_uint_eq(runzone_next_expiry(&set), 61000);
	ck_assert_int_eq(runzone_time_left(runzone_find(&set, "a.test."),
	    1001), 60);
	ck_assert_int_eq(runzone_time_left(runzone_find(&set, "b.test."),
	    1001), -1);
	ck_assert_uint_eq(runzone_expire(&set, 60999, count_fn, &seen), 0);
	/* Renewed at 50 s: now until 110 s. */
	ck_assert_int_eq(add("a.test", 0, "", 60, 50000, &replaced), 0);
	ck_assert_int_eq(replaced, 1);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_uint_eq(runzone_expire(&set, 61000, count_fn, &seen), 0);
	ck_assert_uint_eq(runzone_expire(&set, 110000, count_fn, &seen), 1);
	ck_assert_int_eq(seen, 1);
	ck_assert_ptr_null(runzone_find(&set, "a.test."));
	ck_assert_ptr_nonnull(runzone_find(&set, "b.test."));
	ck_assert_uint_eq(runzone_next_expiry(&set), RUNZONE_NEVER);
}
END_TEST

START_TEST(owners)
{
	int replaced, seen = 0;

	ck_assert_int_eq(add("a.test", 0, "tun0", 0, 0, &replaced), 0);
	ck_assert_int_eq(add("b.test", 1, "tun0", 0, 0, &replaced), 0);
	ck_assert_int_eq(add("c.test", 2, "tun1", 0, 0, &replaced), 0);
	ck_assert_int_eq(runzone_remove(&set, "c.test.", "tun0", NULL, NULL),
	    -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(runzone_remove(&set, "d.test.", NULL, NULL, NULL),
	    -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_uint_eq(runzone_remove_owner(&set, "tun0", count_fn, &seen),
	    2);
	ck_assert_int_eq(seen, 2);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.zones[0].fw.zone, "c.test.");
	ck_assert(runzone_owner_ok("NetworkManager:vpn-1@corp"));
	ck_assert(!runzone_owner_ok(""));
	ck_assert(!runzone_owner_ok("a b"));
	ck_assert(!runzone_owner_ok("a\"b"));
}
END_TEST

/* RUNZONE_MAX zones, then ENOSPC for a new one, not for a renewal. */
START_TEST(cap)
{
	char name[32];
	int i, replaced;

	for (i = 0; i < RUNZONE_MAX; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		ck_assert_int_eq(add(name, 0, "", 0, 0, &replaced), 0);
	}
	ck_assert_int_eq(add("one.more.test", 0, "", 0, 0, &replaced), -1);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_int_eq(add("z5.test", 1, "", 0, 0, &replaced), 0);
	ck_assert_int_eq(replaced, 1);
	ck_assert_uint_eq(set.n, RUNZONE_MAX);
}
END_TEST

/* Written, read back: the same zones, expiries moved by the wall clock
 * that passed; expired and broken lines left out, each said. */
START_TEST(state_format)
{
	struct evbuffer *b = evbuffer_new(), *errs = evbuffer_new();
	struct runzone_set back;
	const struct runzone *rz;
	char *text, *e;
	int replaced;

	ck_assert_int_eq(add("corp.example", 2, "tun0", 3600, 5000, &replaced),
	    0);
	set.zones[0].fw.policy = CONFIG_POLICY_HASH;
	ck_assert_int_eq(config_add_addr(&set.zones[0].fw.upstreams,
	    &set.zones[0].fw.n_upstreams, &ups[0]), 0);
	ck_assert_int_eq(add("consul", 1, "", 0, 5000, &replaced), 0);
	/* At 5 s monotonic, wall 1,700,000,000 s: 3600 s left. */
	ck_assert_int_eq(runzone_format(&set, 5000, 1700000000, b), 0);
	evbuffer_add(b, "", 1);
	text = (char *)evbuffer_pullup(b, -1);
	ck_assert_ptr_nonnull(strstr(text, "\ncorp.example. hash tun0 "
	    "1700003600 3600 [::1]:5303 127.0.0.1:5301\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nconsul. order - 0 0 "
	    "127.0.0.1:5302\n"));

	/* Read back 600 s later (wall), at 90 s monotonic. */
	runzone_set_init(&back);
	ck_assert_uint_eq(runzone_parse(&back, text, 90000, 1700000600, errs),
	    2);
	ck_assert_uint_eq(evbuffer_get_length(errs), 0);
	rz = runzone_find(&back, "corp.example.");
	ck_assert_ptr_nonnull(rz);
	ck_assert_str_eq(rz->owner, "tun0");
	ck_assert_int_eq(rz->fw.policy, CONFIG_POLICY_HASH);
	ck_assert_uint_eq(rz->fw.n_upstreams, 2);
	ck_assert(addr_equal(&rz->fw.upstreams[0], &ups[2]));
	ck_assert_uint_eq(rz->lifetime, 3600);
	ck_assert_uint_eq(rz->expires, 90000 + 3000 * 1000);
	ck_assert_uint_eq(runzone_find(&back, "consul.")->expires,
	    RUNZONE_NEVER);
	runzone_set_free(&back);

	/* After the hour: the zone with a lifetime is gone. */
	runzone_set_init(&back);
	ck_assert_uint_eq(runzone_parse(&back, text, 0, 1700003600, errs), 1);
	ck_assert_ptr_null(runzone_find(&back, "corp.example."));
	runzone_set_free(&back);
	evbuffer_drain(errs, evbuffer_get_length(errs));

	runzone_set_init(&back);
	ck_assert_uint_eq(runzone_parse(&back,
	    "# comment\n"
	    "a.test. order - 0 0\n"
	    "b.test. best - 0 0 127.0.0.1\n"
	    "c.test. order a\"b 0 0 127.0.0.1\n"
	    "d.test. order - x 0 127.0.0.1\n"
	    "e.test. order - 0 0 127.0.0.1 127.0.0.1:53\n"
	    "f.test. order - 0 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"
	    "g.test. order - 0 0 not-an-address\n"
	    "ok.test. random - 0 0 127.0.0.1\n", 0, 1700000000, errs), 1);
	evbuffer_add(errs, "", 1);
	e = (char *)evbuffer_pullup(errs, -1);
	ck_assert_str_eq(e, "line 2: too few fields\n"
	    "line 3: not a policy\n"
	    "line 4: not an owner name\n"
	    "line 5: not a time\n"
	    "line 6: an upstream twice\n"
	    "line 7: too many upstreams\n"
	    "line 8: not an address\n");
	ck_assert_int_eq(runzone_find(&back, "ok.test.")->fw.policy,
	    CONFIG_POLICY_RANDOM);
	runzone_set_free(&back);
	evbuffer_free(b);
	evbuffer_free(errs);
}
END_TEST

static Suite *
runzone_suite(void)
{
	Suite *s = suite_create("runzone");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, precedence);
	tcase_add_test(tc, flush_scope);
	tcase_add_test(tc, lifetime);
	tcase_add_test(tc, owners);
	tcase_add_test(tc, cap);
	tcase_add_test(tc, state_format);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(runzone_suite());
}
