/* check_probe.c: which upstreams get probed, and with which question. */
#include "autoconf.h"

#include <check.h>
#include <ctype.h>
#include <string.h>

#include "check_main.h"
#include "probe.h"

static struct upstream_registry *reg;
static struct zone_table *zones;
static struct addr ups[2];

/* "." and "corp.example." forward to ups[0], "other." to ups[1]. */
static void
setup(void)
{
	struct config_forward fw[3];
	struct config conf;
	const char *err;

	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &ups[0], &err), 0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5302", 53, &ups[1], &err), 0);
	memset(fw, 0, sizeof(fw));
	fw[0].zone = ".";
	fw[1].zone = "corp.example.";
	fw[2].zone = "other.";
	fw[0].upstreams = fw[1].upstreams = &ups[0];
	fw[2].upstreams = &ups[1];
	fw[0].n_upstreams = fw[1].n_upstreams = fw[2].n_upstreams = 1;
	memset(&conf, 0, sizeof(conf));
	conf.forwards = fw;
	conf.n_forwards = 3;
	conf.max_inflight = 100;
	ck_assert_ptr_nonnull(reg = upstream_registry_new(50, 2000));
	ck_assert_ptr_nonnull(zones = zone_table_new(reg, &conf));
}

static void
teardown(void)
{
	zone_table_unref(zones);
	upstream_registry_free(reg);
}

/* What probe_down asked to send. */
struct sends {
	size_t			n;
	struct upstream		*u[4];
	struct zone		*z[4];
	struct msg_question	 q[4];
};

static void
record(void *arg, struct upstream *u, struct zone *z,
    const struct msg_question *q, uint64_t now)
{
	struct sends *s = arg;

	(void)now;
	ck_assert_uint_lt(s->n, 4);
	s->u[s->n] = u;
	s->z[s->n] = z;
	s->q[s->n++] = *q;
}

/* 16 hex digits, then suffix (wire, suffix_len octets). */
static void
assert_loop_name(const struct msg_question *q, const char *suffix,
    size_t suffix_len)
{
	size_t i;

	ck_assert_uint_eq(q->qtype, MSG_TYPE_TXT);
	ck_assert_uint_eq(q->qclass, MSG_CLASS_IN);
	ck_assert_uint_eq(q->qname_len, 1 + 16 + suffix_len);
	ck_assert_uint_eq(q->qname[0], 16);
	for (i = 1; i <= 16; i++)
		ck_assert(isxdigit(q->qname[i]));
	ck_assert_mem_eq(q->qname + 17, suffix, suffix_len);
}

START_TEST(loop_probe_once)
{
	struct zone *root = zone_at(zones, 0), *corp = zone_at(zones, 1);
	struct upstream *u = root->upstreams[0];
	struct msg_question q, q2;

	/* Under the zone, so that a forwarder behind u routes it to us. */
	ck_assert(probe_loop_due(u, corp, &q));
	assert_loop_name(&q, "\4corp\7example", 14);
	/* Once per upstream, whatever the zone... */
	ck_assert(!probe_loop_due(u, root, &q));
	/* ...until a reload lets it be checked again; for the root, under
	 * "test." (RFC 6761 §6.2), never a real name. */
	upstream_reconfigure(reg, 50, 2000);
	ck_assert(probe_loop_due(u, root, &q2));
	assert_loop_name(&q2, "\4test", 6);
	/* 64 random bits each time. */
	ck_assert(memcmp(q.qname + 1, q2.qname + 1, 16) != 0);
}
END_TEST

START_TEST(down_probes)
{
	struct msg_question www = { "\3www\4corp\7example", 18, MSG_TYPE_A,
	    MSG_CLASS_IN };
	struct zone *root = zone_at(zones, 0), *corp = zone_at(zones, 1);
	struct upstream *u = root->upstreams[0];
	struct sends s = { 0 };
	uint64_t now = 1000000;

	/* Nothing down: nothing sent. */
	probe_down(zones, now, record, &s);
	ck_assert_uint_eq(s.n, 0);
	/* UPSTREAM_DOWN_AFTER = 3 failures, the last of www.corp.example. */
	upstream_failed(u, NULL, now);
	upstream_failed(u, NULL, now);
	upstream_failed(u, &www, now);
	ck_assert(u->down);
	/* Its first probe is within 1 s (UPSTREAM_PROBE_FIRST, full jitter:
	 * check_upstream), at u->next_probe. */
	ck_assert_uint_le(u->next_probe, now + 1000);
	now = u->next_probe;
	probe_down(zones, now - 1, record, &s);
	ck_assert_uint_eq(s.n, 0);
	probe_down(zones, now, record, &s);
	/* The SOA of the first zone it is met in ("."), and the question it
	 * failed, through the zone that claims it; the other upstream, up,
	 * is left alone. */
	ck_assert_uint_eq(s.n, 2);
	ck_assert_ptr_eq(s.u[0], u);
	ck_assert_ptr_eq(s.z[0], root);
	ck_assert_uint_eq(s.q[0].qtype, MSG_TYPE_SOA);
	ck_assert_uint_eq(s.q[0].qname_len, 1);
	ck_assert_ptr_eq(s.u[1], u);
	ck_assert_ptr_eq(s.z[1], corp);
	ck_assert_uint_eq(s.q[1].qtype, MSG_TYPE_A);
	ck_assert_mem_eq(s.q[1].qname, www.qname, 18);
	/* Met again in corp.example., but probed once per back-off (up to
	 * 2 s), at a random point of it. */
	s.n = 0;
	ck_assert_uint_le(u->next_probe, now + 2000);
	probe_down(zones, u->next_probe - 1, record, &s);
	ck_assert_uint_eq(s.n, 0);
	probe_down(zones, u->next_probe, record, &s);
	ck_assert_uint_eq(s.n, 2);
}
END_TEST

START_TEST(down_probe_unclaimed_question)
{
	/* A question under other., which forwards elsewhere: not asked. */
	struct msg_question q = { "\1x\5other", 9, MSG_TYPE_A, MSG_CLASS_IN };
	struct upstream *u = zone_at(zones, 0)->upstreams[0];
	struct sends s = { 0 };

	upstream_failed(u, &q, 1);
	upstream_failed(u, &q, 1);
	upstream_failed(u, &q, 1);
	probe_down(zones, 1001, record, &s);	/* within 1 s of 1 */
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.q[0].qtype, MSG_TYPE_SOA);
}
END_TEST

static Suite *
probe_suite(void)
{
	Suite *s = suite_create("probe");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, loop_probe_once);
	tcase_add_test(tc, down_probes);
	tcase_add_test(tc, down_probe_unclaimed_question);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(probe_suite());
}
