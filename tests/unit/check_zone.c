/* check_zone.c: forward zones: longest-suffix matching, sharing, budgets. */
#include "autoconf.h"

#include <check.h>
#include <string.h>

#include "check_main.h"
#include "config.h"
#include "upstream.h"
#include "zone.h"

static struct addr ups[3];
static struct upstream_registry *reg;

/* Each test: three upstream addresses and an empty registry. */
static void
setup(void)
{
	const char *err;

	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &ups[0], &err), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5302", 53, &ups[1], &err), 0);
	ck_assert_int_eq(addr_parse("[::1]:5303", 53, &ups[2], &err), 0);
	ck_assert_ptr_nonnull(reg = upstream_registry_new(50, 2000));
}

static void
count(const struct upstream_view *v, void *arg)
{
	(void)v;
	(*(size_t *)arg)++;
}

/* Every table freed has given its upstreams back. */
static void
teardown(void)
{
	size_t n = 0;

	upstream_each(reg, count, &n);
	ck_assert_uint_eq(n, 0);
	upstream_registry_free(reg);
}

/* A config with the given zones, each forwarding to ups[i % 3]. */
static struct zone_table *
table_of(const char *const *zones, size_t n)
{
	struct config_forward fw[8];
	struct config conf;
	struct zone_table *t;
	size_t i;

	memset(&conf, 0, sizeof(conf));
	memset(fw, 0, sizeof(fw));
	for (i = 0; i < n; i++) {
		fw[i].zone = (char *)zones[i];
		fw[i].upstreams = &ups[i % 3];
		fw[i].n_upstreams = 1;
	}
	conf.forwards = fw;
	conf.n_forwards = n;
	ck_assert_ptr_nonnull(t = zone_table_new(reg, &conf));
	return t;
}

/* A wire name literal and its length, the NUL being the root label. */
#define W(s)	(s), sizeof(s)

/* The zone a question for qtype at wire name (len octets) goes to. */
static const char *
find_type(const struct zone_table *t, uint16_t qtype, const char *wire,
    size_t len)
{
	const struct zone *z = zone_find(t, (const uint8_t *)wire, len, qtype);

	return z == NULL ? NULL : z->name_str;
}

#define find(t, w)	find_type((t), MSG_TYPE_A, w)

START_TEST(longest_suffix)
{
	static const char *const zones[] = { ".", "example.", "corp.example.",
	    "consul." };
	struct zone_table *t;

	t = table_of(zones, 4);
	ck_assert_str_eq(find(t, W("\3www\4corp\7example")), "corp.example.");
	ck_assert_str_eq(find(t, W("\4corp\7example")), "corp.example.");
	/* Label-wise: "xcorp" is not under "corp". */
	ck_assert_str_eq(find(t, W("\5xcorp\7example")), "example.");
	ck_assert_str_eq(find(t, W("\7example")), "example.");
	ck_assert_str_eq(find(t, W("\3web\6consul")), "consul.");
	ck_assert_str_eq(find(t, W("\3com")), ".");
	ck_assert_str_eq(find(t, W("")), ".");
	zone_table_unref(t);
}
END_TEST

START_TEST(no_root)
{
	static const char *const zones[] = { "Example." };
	struct zone_table *t;

	t = table_of(zones, 1);
	/* Zone names are folded when built; qnames arrive folded. */
	ck_assert_str_eq(find(t, W("\3www\7example")), "Example.");
	ck_assert_ptr_null(find(t, W("\3www\7example\3org")));
	zone_table_unref(t);
}
END_TEST

/*
 * RFC 4034 §5, RFC 4035 §5: the DS RRset of a zone cut is in the parent
 * zone, so DS at a forward zone's own name goes to the zone of the
 * parent name; below the apex, and every other type, stays put.
 */
START_TEST(ds_at_apex)
{
	static const char *const zones[] = { ".", "example.", "corp.example.",
	    "lab.corp.example." };
	struct zone_table *t;

	t = table_of(zones, 4);
	ck_assert_str_eq(find_type(t, MSG_TYPE_DS, W("corpexample")),
	    "example.");
	ck_assert_str_eq(find_type(t, MSG_TYPE_DS,
	    W("labcorpexample")), "corp.example.");
	ck_assert_str_eq(find_type(t, MSG_TYPE_DS, W("example")), ".");
	/* The parent name need not be a zone: its closest enclosing one. */
	ck_assert_str_eq(find_type(t, MSG_TYPE_DS, W("wwwcorpexample")),
	    "corp.example.");
	ck_assert_str_eq(find_type(t, MSG_TYPE_SOA, W("corpexample")),
	    "corp.example.");
	ck_assert_str_eq(find_type(t, MSG_TYPE_DNAME, W("corpexample")),
	    "corp.example.");
	/* The root has no parent: its DS stays with it. */
	ck_assert_str_eq(find_type(t, MSG_TYPE_DS, W("")), ".");
	zone_table_unref(t);
	/* Nothing encloses the parent: the zone itself is all there is. */
	t = table_of(zones + 2, 1);
	ck_assert_str_eq(find_type(t, MSG_TYPE_DS, W("corpexample")),
	    "corp.example.");
	zone_table_unref(t);
}
END_TEST

START_TEST(shared_upstreams)
{
	static const char *const zones[] = { "a.", "b.", "c.", "d." };
	struct zone_table *t, *t2;

	t = table_of(zones, 4);
	ck_assert_ptr_eq(zone_table_registry(t), reg);
	/* a. and d. both forward to ups[0]: one shared object. */
	ck_assert_ptr_eq(zone_at(t, 0)->upstreams[0],
	    zone_at(t, 3)->upstreams[0]);
	ck_assert_uint_eq(zone_at(t, 0)->upstreams[0]->refs, 2);
	ck_assert(zone_same_upstreams(zone_at(t, 0), zone_at(t, 3)));
	ck_assert(!zone_same_upstreams(zone_at(t, 0), zone_at(t, 1)));
	ck_assert(zone_uses(zone_at(t, 3), zone_at(t, 0)->upstreams[0]));
	ck_assert(!zone_uses(zone_at(t, 1), zone_at(t, 0)->upstreams[0]));
	/* A second table (a reload) shares them and their state. */
	t2 = table_of(zones, 4);
	ck_assert_ptr_eq(zone_at(t, 1)->upstreams[0],
	    zone_at(t2, 1)->upstreams[0]);
	zone_table_unref(t);
	ck_assert_uint_eq(zone_at(t2, 0)->upstreams[0]->refs, 2);
	zone_table_unref(t2);
}
END_TEST

/* zone_route_kept for a question of type A at wire name w, sent through
 * the zone of table was that it went to. */
#define kept(now, was, w)	zone_route_kept((now), (was),		\
	    zone_find((was), (const uint8_t *)(w), sizeof(w), MSG_TYPE_A),	\
	    (const uint8_t *)(w), sizeof(w), MSG_TYPE_A)

/*
 * Whether a resolution's result may be cached once the routing changed
 * under it: only if its question still goes to a zone of the same name
 * with the same upstreams. Zone i of each table forwards to ups[i % 3].
 */
START_TEST(route_kept)
{
	static const char *const before[] = { ".", "example." };
	static const char *const swapped[] = { "example.", "." };
	static const char *const deeper[] = { ".", "example.",
	    "corp.example." };
	static const char *const root_only[] = { "." };
	struct zone_table *t, *same, *sw, *deep, *root;

	t = table_of(before, 2);	/* . ups[0], example. ups[1] */
	same = table_of(before, 2);
	sw = table_of(swapped, 2);	/* example. ups[0], . ups[1] */
	deep = table_of(deeper, 3);	/* and corp.example. ups[2] */
	root = table_of(root_only, 1);
	/* the same table (no change since): kept, no lookup needed */
	ck_assert(kept(t, t, "\3www\7example"));
	/* another table routing the same way (a reload of the same file) */
	ck_assert(kept(same, t, "\3www\7example"));
	ck_assert(kept(same, t, "\3www\3org"));
	/* the same zone names, other upstreams */
	ck_assert(!kept(sw, t, "\3www\7example"));
	ck_assert(!kept(sw, t, "\3www\3org"));
	/* a zone added below: only the names under it move */
	ck_assert(kept(deep, t, "\3www\7example"));
	ck_assert(!kept(deep, t, "\3www\4corp\7example"));
	/* a zone removed: its names go to ., another zone */
	ck_assert(!kept(root, t, "\3www\7example"));
	ck_assert(kept(root, t, "\3www\3org"));
	/* nothing routed at all */
	ck_assert(!zone_route_kept(root, t, NULL, (const uint8_t *)"", 1,
	    MSG_TYPE_A));
	zone_table_unref(t);
	zone_table_unref(same);
	zone_table_unref(sw);
	zone_table_unref(deep);
	zone_table_unref(root);
}
END_TEST

START_TEST(zone_budgets)
{
	static const char *const zones[] = { "a.", "b.", "." };
	struct config_forward fw[3];
	struct config conf;
	struct zone_table *t;
	size_t i;

	memset(&conf, 0, sizeof(conf));
	memset(fw, 0, sizeof(fw));
	for (i = 0; i < 3; i++) {
		fw[i].zone = (char *)zones[i];
		fw[i].upstreams = &ups[0];
		fw[i].n_upstreams = 1;
	}
	fw[0].max_inflight = 100;
	conf.forwards = fw;
	conf.n_forwards = 3;
	conf.max_inflight = 1024;
	t = zone_table_new(reg, &conf);
	/* a. has its own 100; b. and . share 1024 - 100 = 924: 462 each. */
	ck_assert_uint_eq(zone_at(t, 0)->max_inflight, 100);
	ck_assert_uint_eq(zone_at(t, 1)->max_inflight, 462);
	ck_assert_uint_eq(zone_at(t, 2)->max_inflight, 462);
	zone_table_unref(t);
}
END_TEST

static Suite *
zone_suite(void)
{
	Suite *s = suite_create("zone");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);

	tcase_add_test(tc, longest_suffix);
	tcase_add_test(tc, no_root);
	tcase_add_test(tc, ds_at_apex);
	tcase_add_test(tc, shared_upstreams);
	tcase_add_test(tc, route_kept);
	tcase_add_test(tc, zone_budgets);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(zone_suite());
}
