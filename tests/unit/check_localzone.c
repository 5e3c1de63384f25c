/*
 * check_localzone.c: the table of local zones and records: the zones
 * served by default (RFC 6761, RFC 6303 §4, RFC 7793, RFC 8375, RFC 7686),
 * and which rule wins for a name: local-zone, forward, default zone,
 * hosts-file and local-data records, longest suffix first.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "config.h"
#include "localbuild.h"
#include "localzone.h"
#include "log.h"
#include "parse.h"
#include "testutil.h"
#include "wire.h"
#include "zone.h"

static struct testutil_workdir test_dir;

static void
setup(void)
{
	log_init("check_localzone", LOG_LEVEL_ERR);
	testutil_workdir_enter(&test_dir);
}

static void
teardown(void)
{
	testutil_workdir_leave(&test_dir);
}

/*
 * The table of a configuration: text (its forward . added, and
 * `hosts-file none` unless it names one), read from x.conf. The
 * configuration is freed before the table is used: the table keeps
 * nothing of it.
 */
static struct localzone_table *
table_of(const char *text)
{
	struct localzone_table *t;
	struct config conf;
	struct testutil_capture c;
	char full[4096];

	snprintf(full, sizeof(full), "%s%sforward . { upstream 192.0.2.1 }\n",
	    strstr(text, "hosts-file") != NULL ? "" : "hosts-file none\n",
	    text);
	testutil_write(NULL, "x.conf", full);
	testutil_capture_start(&c);
	ck_assert_int_eq(parse_load("x.conf", &conf, c.fp), 0);
	ck_assert_str_eq(testutil_capture_end(&c), "");
	testutil_capture_free(&c);
	ck_assert_ptr_nonnull(t = localbuild_table(&conf));
	config_free(&conf);
	return t;
}

/* What t says about name (presentation) and qtype. */
static struct localzone_result
ask(const struct localzone_table *t, const char *name, uint16_t qtype)
{
	struct localzone_result res;
	uint8_t wire[MSG_NAME_MAX];
	size_t len;

	ck_assert_int_eq(zone_name_to_wire(name, wire, &len), 0);
	localzone_lookup(t, wire, len, qtype, &res);
	return res;
}

/* The verdict for name and qtype is v, decided by zone (NULL: none). */
static void
assert_verdict(const struct localzone_table *t, const char *name,
    uint16_t qtype, enum localzone_verdict v, const char *zone)
{
	struct localzone_result res = ask(t, name, qtype);

	ck_assert_msg(res.verdict == v, "%s %u: %s, want %s", name, qtype,
	    localzone_verdict_name(res.verdict), localzone_verdict_name(v));
	if (zone == NULL)
		ck_assert_msg(res.zone == NULL, "%s: zone %s, want none", name,
		    res.zone->name);
	else {
		ck_assert_msg(res.zone != NULL, "%s: no zone, want %s", name,
		    zone);
		ck_assert_str_eq(res.zone->name, zone);
	}
}

/* The first record of the answer to name: rdata of rdlen octets. */
static void
assert_rdata(const struct localzone_table *t, const char *name,
    uint16_t qtype, const void *rdata, size_t rdlen)
{
	struct localzone_result res = ask(t, name, qtype);

	ck_assert_int_eq(res.verdict, LOCALZONE_ANSWER);
	ck_assert_ptr_nonnull(res.rrset);
	ck_assert_uint_eq(wire_rd16(res.rrset->rdata), rdlen);
	ck_assert_mem_eq(res.rrset->rdata + 2, rdata, rdlen);
}

/*
 * Every zone of RFC 6303 §4, RFC 7793, RFC 6761 §6.4, RFC 8375 and RFC
 * 7686 is served empty: NXDOMAIN below the zone's name, SOA and NS at it.
 * The edges of each range are checked: 172.16/12 is 16 to 31, not 15 or
 * 32; 100.64/10 is 64 to 127; fe80::/10 is fe8 to feb, not fec.
 */
START_TEST(default_zones)
{
	static const char *const local[][2] = {
		{ "1.0.0.10.in-addr.arpa.", "10.in-addr.arpa." },
		{ "4.5.16.172.in-addr.arpa.", "16.172.in-addr.arpa." },
		{ "4.5.31.172.in-addr.arpa.", "31.172.in-addr.arpa." },
		{ "1.1.168.192.in-addr.arpa.", "168.192.in-addr.arpa." },
		{ "1.0.0.0.in-addr.arpa.", "0.in-addr.arpa." },
		{ "2.0.0.127.in-addr.arpa.", "127.in-addr.arpa." },
		{ "1.1.254.169.in-addr.arpa.", "254.169.in-addr.arpa." },
		{ "7.2.0.192.in-addr.arpa.", "2.0.192.in-addr.arpa." },
		{ "7.100.51.198.in-addr.arpa.", "100.51.198.in-addr.arpa." },
		{ "7.113.0.203.in-addr.arpa.", "113.0.203.in-addr.arpa." },
		{ "255.255.255.255.in-addr.arpa.",
		  "255.255.255.255.in-addr.arpa." },
		{ "1.0.64.100.in-addr.arpa.", "64.100.in-addr.arpa." },
		{ "1.0.127.100.in-addr.arpa.", "127.100.in-addr.arpa." },
		/* fd00::1 */
		{ "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
		  "d.f.ip6.arpa.", "d.f.ip6.arpa." },
		/* fe80::1, febf::1 */
		{ "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8."
		  "e.f.ip6.arpa.", "8.e.f.ip6.arpa." },
		{ "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.f.b."
		  "e.f.ip6.arpa.", "b.e.f.ip6.arpa." },
		{ "1.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
		  "8.b.d.0.1.0.0.2.ip6.arpa." },
		{ "x.invalid.", "invalid." },
		{ "printer.home.arpa.", "home.arpa." },
		{ "abcdefghijklmnop.onion.", "onion." },
	};
	static const char *const not_local[] = {
		"4.5.15.172.in-addr.arpa.", "4.5.32.172.in-addr.arpa.",
		"1.1.167.192.in-addr.arpa.", "1.0.63.100.in-addr.arpa.",
		"1.0.128.100.in-addr.arpa.", "1.0.0.11.in-addr.arpa.",
		"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.c."
		"e.f.ip6.arpa.", "in-addr.arpa.", "arpa.", "www.example.",
		"test.", ".",
	};
	struct localzone_table *t = table_of("");
	const char *const *z;
	size_t i;

	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		assert_verdict(t, local[i][0], MSG_TYPE_PTR,
		    strcmp(local[i][0], local[i][1]) == 0 ? LOCALZONE_NODATA :
		    LOCALZONE_NXDOMAIN, local[i][1]);
	for (i = 0; i < sizeof(not_local) / sizeof(not_local[0]); i++)
		assert_verdict(t, not_local[i], MSG_TYPE_PTR, LOCALZONE_NONE,
		    NULL);
	/* Each default zone's name: its SOA and NS (RFC 6303 §3). */
	for (z = config_default_local_zones; *z != NULL; z++) {
		assert_verdict(t, *z, MSG_TYPE_SOA, LOCALZONE_ANSWER, *z);
		assert_verdict(t, *z, MSG_TYPE_NS, LOCALZONE_ANSWER, *z);
		ck_assert_int_eq(ask(t, *z, MSG_TYPE_NS).zone->rule,
		    LOCALZONE_DEFAULT);
	}
	localzone_table_unref(t);
}
END_TEST

/* RFC 6761 §6.3: localhost. and every name below it are the loopback. */
START_TEST(localhost)
{
	static const uint8_t v4[4] = { 127, 0, 0, 1 }, v6[16] = { [15] = 1 };
	struct localzone_table *t = table_of("");

	assert_rdata(t, "localhost.", MSG_TYPE_A, v4, 4);
	assert_rdata(t, "localhost.", MSG_TYPE_AAAA, v6, 16);
	assert_rdata(t, "www.localhost.", MSG_TYPE_A, v4, 4);
	assert_rdata(t, "a.b.localhost.", MSG_TYPE_AAAA, v6, 16);
	assert_verdict(t, "a.localhost.", MSG_TYPE_MX, LOCALZONE_NODATA,
	    "localhost.");
	/* and back, as Unbound does */
	assert_rdata(t, "1.0.0.127.in-addr.arpa.", MSG_TYPE_PTR,
	    "\11localhost", 11);
	assert_rdata(t, "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
	    "0.0.0.0.0.ip6.arpa.", MSG_TYPE_PTR, "\11localhost", 11);
	assert_verdict(t, "localhostx.", MSG_TYPE_A, LOCALZONE_NONE, NULL);
	localzone_table_unref(t);
}
END_TEST

/*
 * A forward zone or local-zone at a default zone's name replaces it; one
 * below it wins for its names only; nodefault removes it; the longest
 * suffix decides.
 */
START_TEST(precedence)
{
	struct localzone_table *t;
	struct localzone_result res;

	t = table_of("forward 10.in-addr.arpa { upstream 192.0.2.53 }\n");
	assert_verdict(t, "1.0.0.10.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NONE, NULL);
	localzone_table_unref(t);

	t = table_of("forward 5.10.in-addr.arpa { upstream 192.0.2.53 }\n");
	assert_verdict(t, "1.1.5.10.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NONE, "5.10.in-addr.arpa.");
	res = ask(t, "5.10.in-addr.arpa.", MSG_TYPE_SOA);
	ck_assert_int_eq(res.verdict, LOCALZONE_NONE);
	ck_assert_int_eq(res.zone->rule, LOCALZONE_FORWARD);
	ck_assert_int_eq(res.zone->line, 2);
	assert_verdict(t, "1.1.6.10.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NXDOMAIN, "10.in-addr.arpa.");
	/* its DS is the parent's (RFC 4035 §5): the default zone's, empty */
	assert_verdict(t, "5.10.in-addr.arpa.", MSG_TYPE_DS, LOCALZONE_NODATA,
	    "10.in-addr.arpa.");
	assert_verdict(t, "1.5.10.in-addr.arpa.", MSG_TYPE_DS, LOCALZONE_NONE,
	    "5.10.in-addr.arpa.");
	localzone_table_unref(t);

	t = table_of("local-zone 10.in-addr.arpa transparent\n"
	    "local-zone 168.192.in-addr.arpa nodefault\n"
	    "local-zone 16.172.in-addr.arpa. refuse\n"
	    "local-zone 1.17.172.in-addr.arpa static\n"
	    "local-zone corp.example nxdomain\n"
	    "forward sub.corp.example { upstream 192.0.2.53 }\n");
	assert_verdict(t, "1.0.0.10.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NONE, "10.in-addr.arpa.");
	ck_assert_int_eq(ask(t, "1.0.0.10.in-addr.arpa.", MSG_TYPE_PTR).zone->
	    rule, LOCALZONE_LOCAL_ZONE);
	assert_verdict(t, "1.1.168.192.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NONE, NULL);
	assert_verdict(t, "16.172.in-addr.arpa.", MSG_TYPE_SOA,
	    LOCALZONE_REFUSED, "16.172.in-addr.arpa.");
	assert_verdict(t, "1.1.16.172.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_REFUSED, "16.172.in-addr.arpa.");
	/* longest suffix: the local-zone inside the default zone */
	assert_verdict(t, "9.1.17.172.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NXDOMAIN, "1.17.172.in-addr.arpa.");
	assert_verdict(t, "9.2.17.172.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NXDOMAIN, "17.172.in-addr.arpa.");
	/* a configured local-zone is not overridden by a forward below */
	assert_verdict(t, "www.sub.corp.example.", MSG_TYPE_A,
	    LOCALZONE_NXDOMAIN, "corp.example.");
	assert_verdict(t, "corp.example.", MSG_TYPE_SOA, LOCALZONE_NXDOMAIN,
	    "corp.example.");
	localzone_table_unref(t);

	/* Everything: local-zone . refuse; longer zones still win. */
	t = table_of("local-zone . refuse\n");
	assert_verdict(t, "www.example.", MSG_TYPE_A, LOCALZONE_REFUSED, ".");
	assert_verdict(t, ".", MSG_TYPE_NS, LOCALZONE_REFUSED, ".");
	assert_verdict(t, "x.invalid.", MSG_TYPE_A, LOCALZONE_NXDOMAIN,
	    "invalid.");
	localzone_table_unref(t);
}
END_TEST

/*
 * local-data: in a static zone, the records; the rest NXDOMAIN, an empty
 * non-terminal NODATA (RFC 8020 §2); in a transparent zone the rest is
 * forwarded; in an nxdomain or refuse zone the records are not served;
 * outside every zone, the name alone is local.
 */
START_TEST(local_data)
{
	static const uint8_t a[4] = { 10, 1, 2, 3 };
	struct localzone_table *t;
	struct localzone_result res;

	t = table_of("local-zone corp.example static\n"
	    "local-zone lab.example transparent\n"
	    "local-zone gone.example nxdomain\n"
	    "local-zone shut.example refuse\n"
	    "local-data \"www.a.corp.example. 300 A 10.1.2.3\"\n"
	    "local-data \"alias.corp.example. CNAME www.a.corp.example.\"\n"
	    "local-data \"srv.lab.example. SRV 0 0 80 www.a.corp.example.\"\n"
	    "local-data \"x.gone.example. A 10.1.2.3\"\n"
	    "local-data \"x.shut.example. A 10.1.2.3\"\n"
	    "local-data \"WWW.Example. 60 A 10.1.2.3\"\n"
	    "local-data \"www.example. 30 TXT hello\"\n");
	assert_rdata(t, "www.a.corp.example.", MSG_TYPE_A, a, 4);
	res = ask(t, "www.a.corp.example.", MSG_TYPE_A);
	ck_assert_uint_eq(res.rrset->ttl, 300);
	ck_assert_int_eq(res.rrset->source, LOCALZONE_LOCAL_DATA);
	ck_assert_str_eq(res.rrset->file, "x.conf");
	ck_assert_int_eq(res.rrset->line, 6);
	assert_verdict(t, "www.a.corp.example.", MSG_TYPE_AAAA,
	    LOCALZONE_NODATA, "corp.example.");
	assert_verdict(t, "a.corp.example.", MSG_TYPE_A, LOCALZONE_NODATA,
	    "corp.example.");
	assert_verdict(t, "b.corp.example.", MSG_TYPE_A, LOCALZONE_NXDOMAIN,
	    "corp.example.");
	assert_verdict(t, "x.www.a.corp.example.", MSG_TYPE_A,
	    LOCALZONE_NXDOMAIN, "corp.example.");
	/* a CNAME answers every other type (RFC 1034 §3.6.2) */
	res = ask(t, "alias.corp.example.", MSG_TYPE_AAAA);
	ck_assert_int_eq(res.verdict, LOCALZONE_ANSWER);
	ck_assert_uint_eq(res.rrset->type, MSG_TYPE_CNAME);
	assert_verdict(t, "srv.lab.example.", MSG_TYPE_SRV, LOCALZONE_ANSWER,
	    "lab.example.");
	assert_verdict(t, "srv.lab.example.", MSG_TYPE_A, LOCALZONE_NODATA,
	    "lab.example.");
	assert_verdict(t, "other.lab.example.", MSG_TYPE_A, LOCALZONE_NONE,
	    "lab.example.");
	assert_verdict(t, "x.gone.example.", MSG_TYPE_A, LOCALZONE_NXDOMAIN,
	    "gone.example.");
	assert_verdict(t, "x.shut.example.", MSG_TYPE_A, LOCALZONE_REFUSED,
	    "shut.example.");
	/* a name of its own: that name only, its records' TTL for the SOA;
	 * two records of one RRset keep the smaller TTL (RFC 2181 §5.2) */
	assert_rdata(t, "www.example.", MSG_TYPE_A, a, 4);
	res = ask(t, "www.example.", MSG_TYPE_MX);
	ck_assert_int_eq(res.verdict, LOCALZONE_NODATA);
	ck_assert_int_eq(res.zone->rule, LOCALZONE_NAME);
	ck_assert_str_eq(res.zone->name, "www.example.");
	ck_assert_uint_eq(res.zone->soa->ttl, 30);
	ck_assert_ptr_nonnull(res.cause);
	assert_verdict(t, "x.www.example.", MSG_TYPE_A, LOCALZONE_NONE,
	    "www.example.");
	assert_verdict(t, "example.", MSG_TYPE_A, LOCALZONE_NONE, NULL);
	/* ANY: every RRset of the name */
	res = ask(t, "www.example.", MSG_TYPE_ANY);
	ck_assert_int_eq(res.verdict, LOCALZONE_ANSWER);
	ck_assert_ptr_null(res.rrset);
	ck_assert_uint_eq(localzone_node_rrsets(res.node), 2);
	localzone_table_unref(t);
}
END_TEST

/*
 * A hosts file: A or AAAA for every name, aliases too; PTR for every
 * address, to the first name of its first line, also inside a default
 * zone; other types NODATA; per type, its records replace a default
 * zone's own.
 */
START_TEST(hosts_file)
{
	static const uint8_t a7[4] = { 192, 0, 2, 7 }, a8[4] = { 192, 0, 2, 8 };
	static const uint8_t lo[4] = { 127, 0, 1, 1 }, v6lo[16] = { [15] = 1 };
	char conf[2 * TESTUTIL_PATH_MAX + 64];
	struct localzone_table *t;
	struct localzone_result res;
	uint8_t v6[16];

	testutil_write(NULL, "hosts", "127.0.1.1 localhost\n"
	    "192.0.2.7 Doc.Example doc\n"
	    "192.0.2.7 other.example\n"
	    "192.0.2.8 doc.example\n"
	    "192.0.2.8 doc.example\n"
	    "2001:db8::7 doc.example\n"
	    "300.0.0.1 broken.example\n");
	testutil_write(NULL, "more", "10.9.9.9 ten.example\n"
	    "192.0.2.7 late.example\n");
	snprintf(conf, sizeof(conf), "hosts-file %s/hosts\n"
	    "hosts-file %s/more\n", test_dir.dir, test_dir.dir);
	t = table_of(conf);
	/* every line's address, once each; its TTL 0 */
	assert_rdata(t, "doc.example.", MSG_TYPE_A, a7, 4);
	res = ask(t, "doc.example.", MSG_TYPE_A);
	ck_assert_uint_eq(res.rrset->n, 2);
	ck_assert_mem_eq(res.rrset->rdata + 8, a8, 4);
	ck_assert_uint_eq(res.rrset->ttl, LOCALZONE_TTL_HOSTS);
	ck_assert_int_eq(res.rrset->source, LOCALZONE_HOSTS_FILE);
	ck_assert_int_eq(res.rrset->line, 2);
	ck_assert_ptr_nonnull(strstr(res.rrset->file, "/hosts"));
	ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8::7", v6), 1);
	assert_rdata(t, "doc.example.", MSG_TYPE_AAAA, v6, 16);
	assert_rdata(t, "doc.", MSG_TYPE_A, a7, 4);
	assert_rdata(t, "other.example.", MSG_TYPE_A, a7, 4);
	assert_rdata(t, "late.example.", MSG_TYPE_A, a7, 4);
	/* other types: NODATA, with the SOA of the name's own zone */
	res = ask(t, "doc.example.", MSG_TYPE_MX);
	ck_assert_int_eq(res.verdict, LOCALZONE_NODATA);
	ck_assert_str_eq(res.zone->name, "doc.example.");
	ck_assert_uint_eq(res.zone->soa->ttl, 0);
	/* PTR: the first name of the first line, as written, inside the
	 * default zone of the documentation range */
	assert_rdata(t, "7.2.0.192.in-addr.arpa.", MSG_TYPE_PTR,
	    "\3Doc\7Example", 13);
	assert_verdict(t, "7.2.0.192.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_ANSWER, "2.0.192.in-addr.arpa.");
	ck_assert_uint_eq(ask(t, "7.2.0.192.in-addr.arpa.",
	    MSG_TYPE_PTR).rrset->n, 1);
	assert_rdata(t, "8.2.0.192.in-addr.arpa.", MSG_TYPE_PTR,
	    "\3doc\7example", 13);
	assert_rdata(t, "7.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
	    "8.b.d.0.1.0.0.2.ip6.arpa.", MSG_TYPE_PTR, "\3doc\7example", 13);
	assert_verdict(t, "7.2.0.192.in-addr.arpa.", MSG_TYPE_TXT,
	    LOCALZONE_NODATA, "2.0.192.in-addr.arpa.");
	assert_verdict(t, "9.2.0.192.in-addr.arpa.", MSG_TYPE_PTR,
	    LOCALZONE_NXDOMAIN, "2.0.192.in-addr.arpa.");
	assert_rdata(t, "9.9.9.10.in-addr.arpa.", MSG_TYPE_PTR,
	    "\3ten\7example", 13);
	assert_rdata(t, "ten.example.", MSG_TYPE_A, "\12\11\11\11", 4);
	/* per type, the hosts file's record replaces localhost's own */
	assert_rdata(t, "localhost.", MSG_TYPE_A, lo, 4);
	assert_rdata(t, "localhost.", MSG_TYPE_AAAA, v6lo, 16);
	assert_verdict(t, "broken.example.", MSG_TYPE_A, LOCALZONE_NONE,
	    NULL);
	/* edited: the table is out of date */
	ck_assert_int_eq(localzone_table_changed(t), 0);
	testutil_write(NULL, "more", "10.9.9.9 ten.example\n");
	ck_assert_int_eq(localzone_table_changed(t), 1);
	localzone_table_unref(t);
}
END_TEST

static Suite *
localzone_suite(void)
{
	Suite *s = suite_create("localzone");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, default_zones);
	tcase_add_test(tc, localhost);
	tcase_add_test(tc, precedence);
	tcase_add_test(tc, local_data);
	tcase_add_test(tc, hosts_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(localzone_suite());
}
