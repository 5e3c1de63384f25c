/* check_srvanswer.c: reading answers: rcodes, CNAME chains, additionals. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "srvanswer.h"

/* A response with rcode and the records (presentation form, NULL-ended). */
static ldns_pkt *
response(ldns_pkt_rcode rcode, const char *const *answer,
    const char *const *additional)
{
	ldns_pkt *p;
	ldns_rr *rr;

	ck_assert_ptr_nonnull(p = ldns_pkt_new());
	ldns_pkt_set_qr(p, true);
	ldns_pkt_set_rcode(p, (uint8_t)rcode);
	for (; answer != NULL && *answer != NULL; answer++) {
		ck_assert_int_eq(ldns_rr_new_frm_str(&rr, *answer, 0, NULL,
		    NULL), LDNS_STATUS_OK);
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
	}
	for (; additional != NULL && *additional != NULL; additional++) {
		ck_assert_int_eq(ldns_rr_new_frm_str(&rr, *additional, 0, NULL,
		    NULL), LDNS_STATUS_OK);
		ldns_pkt_push_rr(p, LDNS_SECTION_ADDITIONAL, rr);
	}
	return p;
}

static ldns_rdf *
dname(const char *s)
{
	ldns_rdf *d;

	ck_assert_ptr_nonnull(d = ldns_dname_new_frm_str(s));
	return d;
}

static char *
owner_text(const ldns_rdf *owner)
{
	return ldns_rdf2str(owner);
}

START_TEST(rcodes)
{
	/* RFC 2308 §2.1 NXDOMAIN; §2.2 NODATA is NOERROR without the type;
	 * anything else, or no answer, is a failure */
	static const char *const srv[] = {
		"_x._tcp.example. 300 IN SRV 10 1 80 a.example.",
		"_x._tcp.example. 300 IN SRV 20 1 80 b.example.", NULL };
	static const char *const txt[] = {
		"_x._tcp.example. 300 IN TXT \"no\"", NULL };
	ldns_rdf *q = dname("_x._tcp.example.");
	const ldns_rdf *owner;
	ldns_rr_list *rrs;
	ldns_pkt *p;

	p = response(LDNS_RCODE_NOERROR, srv, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_SRV, &owner, &rrs),
	    SRVANSWER_OK);
	ck_assert_uint_eq(ldns_rr_list_rr_count(rrs), 2);
	ck_assert_ptr_eq(owner, q);
	ldns_rr_list_free(rrs);
	ldns_pkt_free(p);

	p = response(LDNS_RCODE_NOERROR, txt, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_SRV, &owner, &rrs),
	    SRVANSWER_NODATA);
	ck_assert_ptr_null(rrs);
	ldns_pkt_free(p);

	p = response(LDNS_RCODE_NXDOMAIN, NULL, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_SRV, &owner, &rrs),
	    SRVANSWER_NXDOMAIN);
	ldns_pkt_free(p);

	p = response(LDNS_RCODE_SERVFAIL, NULL, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_SRV, &owner, &rrs),
	    SRVANSWER_FAILED);
	ldns_pkt_free(p);
	p = response(LDNS_RCODE_REFUSED, srv, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_SRV, &owner, &rrs),
	    SRVANSWER_FAILED);
	ck_assert_ptr_null(rrs);
	ldns_pkt_free(p);
	ck_assert_int_eq(srvanswer_read(NULL, q, LDNS_RR_TYPE_SRV, &owner,
	    &rrs), SRVANSWER_FAILED);
	ldns_rdf_deep_free(q);
}
END_TEST

START_TEST(cname_chain)
{
	/* RFC 1034 §4.3.2: the chain from the qname, followed within the
	 * answer: alias -> mid -> real, whose A is the answer. Records of
	 * other owners, and of class CH, are not. The owner says where the
	 * chain ended: the caller can tell that the target was an alias. */
	static const char *const chain[] = {
		"Alias.example. 300 IN CNAME mid.example.",
		"mid.example. 300 IN CNAME real.example.",
		"real.example. 300 IN A 192.0.2.1",
		"other.example. 300 IN A 192.0.2.99",
		"real.example. 300 CH A 192.0.2.98", NULL };
	static const char *const loop[] = {
		"a.example. 300 IN CNAME b.example.",
		"b.example. 300 IN CNAME a.example.", NULL };
	ldns_rdf *q = dname("alias.EXAMPLE.");
	const ldns_rdf *owner;
	ldns_rr_list *rrs;
	ldns_pkt *p;
	char *s;

	p = response(LDNS_RCODE_NOERROR, chain, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_A, &owner, &rrs),
	    SRVANSWER_OK);
	ck_assert_str_eq(s = owner_text(owner), "real.example.");
	free(s);
	ck_assert_uint_eq(ldns_rr_list_rr_count(rrs), 1);
	ck_assert_str_eq(s = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(rrs,
	    0), 0)), "192.0.2.1");
	free(s);
	ldns_rr_list_free(rrs);
	/* asked for the CNAME itself, it is the answer */
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_CNAME, &owner,
	    &rrs), SRVANSWER_OK);
	ck_assert_ptr_eq(owner, q);
	ldns_rr_list_free(rrs);
	ldns_pkt_free(p);
	ldns_rdf_deep_free(q);

	/* a loop ends after SRVANSWER_CHAIN_MAX links, with no data */
	q = dname("a.example.");
	p = response(LDNS_RCODE_NOERROR, loop, NULL);
	ck_assert_int_eq(srvanswer_read(p, q, LDNS_RR_TYPE_A, &owner, &rrs),
	    SRVANSWER_NODATA);
	ldns_pkt_free(p);
	ldns_rdf_deep_free(q);
}
END_TEST

START_TEST(additional)
{
	/* RFC 2782: the additional section may carry the targets' A and
	 * AAAA; only the target's own, of the type asked, count */
	static const char *const srv[] = {
		"_x._tcp.example. 300 IN SRV 10 1 80 a.example.", NULL };
	static const char *const add[] = {
		"a.example. 300 IN A 192.0.2.1",
		"a.example. 300 IN A 192.0.2.2",
		"b.example. 300 IN AAAA 2001:db8::2",
		"A.EXAMPLE. 300 IN AAAA 2001:db8::1", NULL };
	ldns_rdf *a = dname("a.example."), *c = dname("c.example.");
	ldns_rr_list *l;
	ldns_pkt *p = response(LDNS_RCODE_NOERROR, srv, add);

	ck_assert_ptr_nonnull(l = srvanswer_additional(p, a, LDNS_RR_TYPE_A));
	ck_assert_uint_eq(ldns_rr_list_rr_count(l), 2);
	ldns_rr_list_free(l);
	ck_assert_ptr_nonnull(l = srvanswer_additional(p, a,
	    LDNS_RR_TYPE_AAAA));
	ck_assert_uint_eq(ldns_rr_list_rr_count(l), 1);
	ldns_rr_list_free(l);
	ck_assert_ptr_null(srvanswer_additional(p, c, LDNS_RR_TYPE_A));
	ldns_pkt_free(p);
	ldns_rdf_deep_free(a);
	ldns_rdf_deep_free(c);
}
END_TEST

static ldns_rr *
rr_of(const char *text)
{
	ldns_rr *rr;

	ck_assert_int_eq(ldns_rr_new_frm_str(&rr, text, 0, NULL, NULL),
	    LDNS_STATUS_OK);
	return rr;
}

START_TEST(conversions)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct srvnaptr_rr n;
	struct srv_rr s;
	socklen_t len;
	ldns_rr *rr;
	void *block;
	char buf[INET6_ADDRSTRLEN];

	rr = rr_of("_x._tcp.example. 300 IN SRV 10 65535 8080 Host.example.");
	ck_assert_ptr_nonnull(block = srvanswer_srv(rr, &s));
	ck_assert_uint_eq(s.priority, 10);
	ck_assert_uint_eq(s.weight, 65535);
	ck_assert_uint_eq(s.port, 8080);
	ck_assert_str_eq(s.target, "Host.example.");
	free(block);
	errno = 0;
	ck_assert_ptr_null(srvanswer_naptr(rr, &n));
	ck_assert_int_eq(errno, EINVAL);
	ldns_rr_free(rr);

	rr = rr_of("_x._tcp.example. 300 IN SRV 0 0 0 .");
	ck_assert_ptr_nonnull(block = srvanswer_srv(rr, &s));
	ck_assert_str_eq(s.target, ".");
	free(block);
	ldns_rr_free(rr);

	rr = rr_of("example. 300 IN NAPTR 100 10 \"S\" \"EM:ProtA\" \"\" "
	    "_em._tcp.example.");
	ck_assert_ptr_nonnull(block = srvanswer_naptr(rr, &n));
	ck_assert_uint_eq(n.order, 100);
	ck_assert_uint_eq(n.preference, 10);
	ck_assert_str_eq(n.flags, "S");
	ck_assert_str_eq(n.services, "EM:ProtA");
	ck_assert_str_eq(n.regexp, "");
	ck_assert_str_eq(n.replacement, "_em._tcp.example.");
	free(block);
	ldns_rr_free(rr);

	/* a NUL inside a character-string cannot be a C string: refused */
	rr = rr_of("example. 300 IN NAPTR 100 10 \"S\\000\" \"EM:ProtA\" \"\" "
	    "_em._tcp.example.");
	errno = 0;
	ck_assert_ptr_null(srvanswer_naptr(rr, &n));
	ck_assert_int_eq(errno, EINVAL);
	ldns_rr_free(rr);

	rr = rr_of("a.example. 300 IN AAAA 2001:db8::1");
	ck_assert_int_eq(srvanswer_address(rr, 443, &ss, &len), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_uint_eq(len, sizeof(*sin6));
	ck_assert_uint_eq(ntohs(sin6->sin6_port), 443);
	ck_assert_str_eq(inet_ntop(AF_INET6, &sin6->sin6_addr, buf,
	    sizeof(buf)), "2001:db8::1");
	ldns_rr_free(rr);
	rr = rr_of("a.example. 300 IN A 192.0.2.7");
	ck_assert_int_eq(srvanswer_address(rr, 80, &ss, &len), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(ntohs(sin->sin_port), 80);
	ck_assert_str_eq(inet_ntop(AF_INET, &sin->sin_addr, buf,
	    sizeof(buf)), "192.0.2.7");
	ldns_rr_free(rr);
	rr = rr_of("a.example. 300 IN TXT \"x\"");
	ck_assert_int_eq(srvanswer_address(rr, 80, &ss, &len), -1);
	ldns_rr_free(rr);
}
END_TEST

static Suite *
srvanswer_suite(void)
{
	Suite *s = suite_create("srvanswer");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, rcodes);
	tcase_add_test(tc, cname_chain);
	tcase_add_test(tc, additional);
	tcase_add_test(tc, conversions);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(srvanswer_suite());
}
