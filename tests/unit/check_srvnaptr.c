/* check_srvnaptr.c: RFC 3958 S-NAPTR: tags, flags, order, pinning, walk. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "dnsdamper/srvnaptr.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

START_TEST(services_field)
{
	/* §6.5: service-parms = [ [app-service] *(":" app-protocol) ],
	 * tags compared without regard to case */
	ck_assert_int_eq(srvnaptr_offers("EM:ProtA:ProtB", "em", "protb"), 1);
	ck_assert_int_eq(srvnaptr_offers("EM:ProtA:ProtB", "EM", "ProtA"), 1);
	ck_assert_int_eq(srvnaptr_offers("EM:ProtA:ProtB", "EM", "ProtC"), 0);
	ck_assert_int_eq(srvnaptr_offers("EM:ProtA", "WP", "ProtA"), 0);
	/* the service is the first tag only, never a protocol */
	ck_assert_int_eq(srvnaptr_offers("ProtA:EM", "EM", "ProtA"), 0);
	/* no protocol listed: nothing a client can use */
	ck_assert_int_eq(srvnaptr_offers("EM", "EM", "EM"), 0);
	/* grammar: empty tags, a leading digit, SYM in a registered
	 * protocol, more than 32 octets: the field offers nothing */
	ck_assert_int_eq(srvnaptr_offers("", "EM", "ProtA"), 0);
	ck_assert_int_eq(srvnaptr_offers("EM::ProtA", "EM", "ProtA"), 0);
	ck_assert_int_eq(srvnaptr_offers("EM:ProtA:", "EM", "ProtA"), 0);
	ck_assert_int_eq(srvnaptr_offers("1EM:ProtA", "1EM", "ProtA"), 0);
	ck_assert_int_eq(srvnaptr_offers("EM:Prot+A", "EM", "Prot+A"), 0);
	ck_assert_int_eq(srvnaptr_offers("E+M:ProtA", "E+M", "ProtA"), 1);
	/* experimental "x-" tags may carry SYM in both places */
	ck_assert_int_eq(srvnaptr_offers("x-lab:x-tcp.v2", "X-LAB",
	    "x-tcp.v2"), 1);
	/* "x-" needs more after it to be experimental; as a registered
	 * protocol tag its "-" is not allowed */
	ck_assert_int_eq(srvnaptr_offers("EM:x-", "EM", "x-"), 0);
	/* 32 octets is the longest tag */
	ck_assert_int_eq(srvnaptr_offers(
	    "EM:P2345678901234567890123456789012", "EM",
	    "P2345678901234567890123456789012"), 1);
	ck_assert_int_eq(srvnaptr_offers(
	    "EM:P23456789012345678901234567890123", "EM",
	    "P23456789012345678901234567890123"), 0);
}
END_TEST

static struct srvnaptr_rr
rr(uint16_t order, uint16_t pref, const char *flags, const char *services,
    const char *replacement)
{
	struct srvnaptr_rr r = { order, pref, flags, services, "",
	    replacement };

	return r;
}

START_TEST(flags)
{
	/* §2.2.3, §6.4: "" non-terminal, "S" and "A" terminal; nothing
	 * else, and no regexp (§6.6), and a replacement to look up */
	struct srvnaptr_rr r = rr(1, 1, "", "EM:ProtA", "x.example.");

	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_NAPTR);
	r.flags = "S";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_SRV);
	r.flags = "s";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_SRV);
	r.flags = "A";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_ADDRESS);
	r.flags = "a";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_ADDRESS);
	r.flags = "U";			/* RFC 3404's URI flag */
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_SKIP);
	r.flags = "SA";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_SKIP);
	r.flags = "S";
	r.regexp = "!^.*$!sip:x@example.com!";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_SKIP);
	r.regexp = "";
	r.replacement = ".";
	ck_assert_int_eq(srvnaptr_step(&r), SRVNAPTR_SKIP);
}
END_TEST

START_TEST(order_then_preference)
{
	/* §2.2.1: ORDER ascending, PREFERENCE ascending within it; from
	 * any arrival order the same result */
	struct srvnaptr_rr set[4], want[4];
	size_t shift, i;

	want[0] = rr(10, 5, "S", "EM:ProtA", "a.example.");
	want[1] = rr(10, 50, "S", "EM:ProtA", "b.example.");
	want[2] = rr(20, 1, "S", "EM:ProtA", "c.example.");
	want[3] = rr(20, 1, "S", "EM:ProtA", "d.example.");
	for (shift = 0; shift < 4; shift++) {
		for (i = 0; i < 4; i++)
			set[i] = want[(4 - i + shift) % 4];
		srvnaptr_order(set, 4);
		for (i = 0; i < 4; i++)
			ck_assert_str_eq(set[i].replacement,
			    want[i].replacement);
	}
}
END_TEST

START_TEST(filter)
{
	/* §2.2.2: only records for the service with the protocol, usable,
	 * in the order they were in */
	struct srvnaptr_rr set[] = {
		rr(1, 1, "S", "EM:ProtA", "keep1."),
		rr(1, 2, "S", "WP:ProtA", "other-service."),
		rr(1, 3, "S", "EM:ProtB", "other-protocol."),
		rr(1, 4, "U", "EM:ProtA", "bad-flag."),
		rr(1, 5, "", "EM:ProtB:ProtA", "keep2."),
	};

	ck_assert_uint_eq(srvnaptr_filter(set, NELEM(set), "EM", "ProtA"), 2);
	ck_assert_str_eq(set[0].replacement, "keep1.");
	ck_assert_str_eq(set[1].replacement, "keep2.");
}
END_TEST

START_TEST(protocol_choice)
{
	/* §2.2.5: the client's order of preference, but only protocols the
	 * first NAPTR RRset lists for the service */
	struct srvnaptr_rr first[] = {
		rr(1, 1, "S", "EM:ProtA", "a."),
		rr(2, 1, "", "EM:ProtC", "c."),
		rr(3, 1, "S", "WP:ProtB", "b."),	/* another service */
	};
	const char *wanted[] = { "ProtB", "ProtC", "ProtA" };
	const char *out[3];

	ck_assert_uint_eq(srvnaptr_protocols(first, 3, "EM", wanted, 3, out),
	    2);
	ck_assert_str_eq(out[0], "ProtC");
	ck_assert_str_eq(out[1], "ProtA");
}
END_TEST

/* --- the walk, over a made-up DNS ----------------------------------------- */

/* One name's NAPTR RRset, or its failure. */
struct fake_name {
	const char		*qname;
	enum srvnaptr_lookup	 status;
	struct srvnaptr_rr	 rrs[40];
	size_t			 n;
};

struct fake {
	struct fake_name	*names;
	size_t			 nnames;
	char			 log[4096];	/* "qname " per lookup */
	char			 out[4096];	/* "F replacement/protocol " */
	int			 fail_terminal;
};

static enum srvnaptr_lookup
fake_lookup(void *arg, const char *qname, const struct srvnaptr_rr **rrs,
    size_t *n)
{
	struct fake *f = arg;
	size_t i;

	strcat(f->log, qname);
	strcat(f->log, " ");
	for (i = 0; i < f->nnames; i++)
		if (strcmp(f->names[i].qname, qname) == 0) {
			*rrs = f->names[i].rrs;
			*n = f->names[i].n;
			return f->names[i].status;
		}
	return SRVNAPTR_NXDOMAIN;
}

static int
fake_terminal(void *arg, const struct srvnaptr_rr *r, enum srvnaptr_step step,
    const char *protocol)
{
	struct fake *f = arg;
	char buf[256];

	if (f->fail_terminal) {
		errno = EIO;
		return -1;
	}
	snprintf(buf, sizeof(buf), "%c %s/%s ", step == SRVNAPTR_SRV ? 'S' :
	    'A', r->replacement, protocol);
	strcat(f->out, buf);
	return 0;
}

static void
walk_init(struct srvnaptr_walk *w, struct fake *f, const char *service,
    const char *const *protocols, size_t n)
{
	memset(w, 0, sizeof(*w));
	w->service = service;
	w->protocols = protocols;
	w->nprotocols = n;
	w->lookup = fake_lookup;
	w->terminal = fake_terminal;
	w->arg = f;
}

START_TEST(walk_orders_and_descends)
{
	/* RFC 3958 §2.2: the records of the first RRset in ORDER: 5 is for
	 * another service (not followed); 10 "" means "look up NAPTR at
	 * n1", whose "S" records come in its own order (PREFERENCE 10
	 * before 20; a ProtB record left out); then 20 "S" and 30 "A". */
	static struct fake_name names[] = {
		{ "d.example.", SRVNAPTR_FOUND, {
			{ 30, 10, "A", "EM:ProtA", "", "host3.example." },
			{ 20, 10, "S", "EM:ProtA", "", "_s2.example." },
			{ 10, 10, "", "EM:ProtA", "", "n1.example." },
			{ 5, 10, "S", "WP:ProtA", "", "_x.example." },
		}, 4 },
		{ "n1.example.", SRVNAPTR_FOUND, {
			{ 10, 20, "S", "EM:ProtA", "", "_s1b.example." },
			{ 10, 10, "S", "EM:ProtA", "", "_s1a.example." },
			{ 10, 5, "S", "EM:ProtB", "", "_pb.example." },
		}, 3 },
	};
	const char *protocols[] = { "ProtA" };
	struct srvnaptr_walk w;
	struct fake f = { names, NELEM(names), "", "", 0 };

	walk_init(&w, &f, "EM", protocols, 1);
	ck_assert_int_eq(srvnaptr_walk(&w, "d.example."), SRVNAPTR_FOUND);
	ck_assert_str_eq(f.out, "S _s1a.example./ProtA S _s1b.example./ProtA "
	    "S _s2.example./ProtA A host3.example./ProtA ");
	ck_assert_str_eq(f.log, "d.example. n1.example. ");
	ck_assert_uint_eq(w.lookups, 2);
}
END_TEST

START_TEST(walk_pins_the_protocol)
{
	/* §2.2.5: one whole resolution per protocol, never switching in
	 * the middle: the client prefers ProtB, then ProtA. d offers both
	 * through one non-terminal record; n1 has an "S" for each. The
	 * ProtB resolution finds only _b, then the ProtA one only _a. ProtC,
	 * which only n1 lists, is never pursued: it is not in the first
	 * RRset. */
	static struct fake_name names[] = {
		{ "d.", SRVNAPTR_FOUND, {
			{ 10, 10, "", "EM:ProtA:ProtB", "", "n1." },
		}, 1 },
		{ "n1.", SRVNAPTR_FOUND, {
			{ 10, 10, "S", "EM:ProtA", "", "_a." },
			{ 20, 10, "S", "EM:ProtB", "", "_b." },
			{ 5, 10, "S", "EM:ProtC", "", "_c." },
		}, 3 },
	};
	const char *protocols[] = { "ProtC", "ProtB", "ProtA" };
	struct srvnaptr_walk w;
	struct fake f = { names, NELEM(names), "", "", 0 };

	walk_init(&w, &f, "EM", protocols, 3);
	ck_assert_int_eq(srvnaptr_walk(&w, "d."), SRVNAPTR_FOUND);
	ck_assert_str_eq(f.out, "S _b./ProtB S _a./ProtA ");
	/* and none at all when the first RRset lists none of them */
	memset(f.out, 0, sizeof(f.out));
	memset(f.log, 0, sizeof(f.log));
	walk_init(&w, &f, "EM", protocols, 1);
	ck_assert_int_eq(srvnaptr_walk(&w, "d."), SRVNAPTR_NODATA);
	ck_assert_str_eq(f.out, "");
	ck_assert_str_eq(f.log, "d. ");
}
END_TEST

START_TEST(walk_backtracks)
{
	/* §2.2.4: a later lookup that fails, finds no such name, or finds
	 * nothing for the service, is a configuration error the client
	 * backtracks from, to the next record in order. */
	static struct fake_name names[] = {
		{ "d.", SRVNAPTR_FOUND, {
			{ 10, 1, "", "EM:ProtA", "", "servfail." },
			{ 20, 1, "", "EM:ProtA", "", "nosuch." },
			{ 30, 1, "", "EM:ProtA", "", "other." },
			{ 40, 1, "S", "EM:ProtA", "", "_ok." },
		}, 4 },
		{ "servfail.", SRVNAPTR_FAILED, { { 0 } }, 0 },
		{ "other.", SRVNAPTR_FOUND, {
			{ 10, 1, "S", "WP:ProtA", "", "_wp." },
		}, 1 },
	};
	const char *protocols[] = { "ProtA" };
	struct srvnaptr_walk w;
	struct fake f = { names, NELEM(names), "", "", 0 };

	walk_init(&w, &f, "EM", protocols, 1);
	ck_assert_int_eq(srvnaptr_walk(&w, "d."), SRVNAPTR_FOUND);
	ck_assert_str_eq(f.out, "S _ok./ProtA ");
	ck_assert_str_eq(f.log, "d. servfail. nosuch. other. ");
	ck_assert_uint_eq(w.failed, 3);
	/* the first lookup's own failures are the answer */
	ck_assert_int_eq(srvnaptr_walk(&w, "servfail."), SRVNAPTR_FAILED);
	ck_assert_int_eq(srvnaptr_walk(&w, "nosuch."), SRVNAPTR_NXDOMAIN);
	ck_assert_int_eq(srvnaptr_walk(&w, "other."), SRVNAPTR_NODATA);
}
END_TEST

START_TEST(walk_depth_bound)
{
	/* l1 and l2 send each other round for ever. The chain is cut at
	 * SRVNAPTR_DEPTH_MAX lookups (d, then l1, l2, l1, ... : 8 in all),
	 * and the walk goes on with d's next record. */
	static struct fake_name names[] = {
		{ "d.", SRVNAPTR_FOUND, {
			{ 10, 1, "", "EM:ProtA", "", "l1." },
			{ 20, 1, "S", "EM:ProtA", "", "_after." },
		}, 2 },
		{ "l1.", SRVNAPTR_FOUND, {
			{ 10, 1, "", "EM:ProtA", "", "l2." },
		}, 1 },
		{ "l2.", SRVNAPTR_FOUND, {
			{ 10, 1, "", "EM:ProtA", "", "l1." },
		}, 1 },
	};
	const char *protocols[] = { "ProtA" };
	struct srvnaptr_walk w;
	struct fake f = { names, NELEM(names), "", "", 0 };

	walk_init(&w, &f, "EM", protocols, 1);
	ck_assert_int_eq(srvnaptr_walk(&w, "d."), SRVNAPTR_FOUND);
	ck_assert_uint_eq(SRVNAPTR_DEPTH_MAX, 8);
	ck_assert_str_eq(f.log, "d. l1. l2. l1. l2. l1. l2. l1. ");
	ck_assert_uint_eq(w.lookups, SRVNAPTR_DEPTH_MAX);
	ck_assert_uint_eq(w.too_deep, 1);
	ck_assert_str_eq(f.out, "S _after./ProtA ");
}
END_TEST

START_TEST(walk_lookup_bound)
{
	/* A wide tree: d has 40 non-terminal records, each to a name with
	 * one "S" record. At most SRVNAPTR_LOOKUPS_MAX = 32 lookups in
	 * all: d and 31 of them; the other 9 are counted, not made. */
	static struct fake_name names[41];
	static char qnames[40][16], srvs[40][16];
	const char *protocols[] = { "ProtA" };
	struct srvnaptr_walk w;
	struct fake f = { names, NELEM(names), "", "", 0 };
	size_t i;

	names[0].qname = "d.";
	names[0].status = SRVNAPTR_FOUND;
	names[0].n = 40;
	for (i = 0; i < 40; i++) {
		snprintf(qnames[i], sizeof(qnames[i]), "n%02zu.", i);
		snprintf(srvs[i], sizeof(srvs[i]), "_s%02zu.", i);
		names[0].rrs[i] = rr((uint16_t)i, 1, "", "EM:ProtA",
		    qnames[i]);
		names[i + 1].qname = qnames[i];
		names[i + 1].status = SRVNAPTR_FOUND;
		names[i + 1].rrs[0] = rr(1, 1, "S", "EM:ProtA", srvs[i]);
		names[i + 1].n = 1;
	}
	walk_init(&w, &f, "EM", protocols, 1);
	ck_assert_int_eq(srvnaptr_walk(&w, "d."), SRVNAPTR_FOUND);
	ck_assert_uint_eq(w.lookups, SRVNAPTR_LOOKUPS_MAX);
	ck_assert_uint_eq(w.over_budget, 40 - (SRVNAPTR_LOOKUPS_MAX - 1));
	ck_assert_ptr_nonnull(strstr(f.out, "S _s30./ProtA "));
	ck_assert_ptr_null(strstr(f.out, "_s31."));
}
END_TEST

START_TEST(walk_stops_on_terminal_error)
{
	static struct fake_name names[] = {
		{ "d.", SRVNAPTR_FOUND, {
			{ 10, 1, "S", "EM:ProtA", "", "_a." },
		}, 1 },
	};
	const char *protocols[] = { "ProtA" };
	struct srvnaptr_walk w;
	struct fake f = { names, NELEM(names), "", "", 1 };

	walk_init(&w, &f, "EM", protocols, 1);
	errno = 0;
	ck_assert_int_eq(srvnaptr_walk(&w, "d."), -1);
	ck_assert_int_eq(errno, EIO);
}
END_TEST

static Suite *
srvnaptr_suite(void)
{
	Suite *s = suite_create("srvnaptr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, services_field);
	tcase_add_test(tc, flags);
	tcase_add_test(tc, order_then_preference);
	tcase_add_test(tc, filter);
	tcase_add_test(tc, protocol_choice);
	tcase_add_test(tc, walk_orders_and_descends);
	tcase_add_test(tc, walk_pins_the_protocol);
	tcase_add_test(tc, walk_backtracks);
	tcase_add_test(tc, walk_depth_bound);
	tcase_add_test(tc, walk_lookup_bound);
	tcase_add_test(tc, walk_stops_on_terminal_error);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(srvnaptr_suite());
}
