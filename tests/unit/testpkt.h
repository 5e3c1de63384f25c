/*
 * testpkt.h: DNS messages for unit tests, built with ldns from records in
 * presentation format, so that expected values are readable in the test.
 */
#ifndef DNSDAMPER_TESTPKT_H
#define DNSDAMPER_TESTPKT_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <ldns/ldns.h>

/* A message in wire format, as ldns_pkt2wire made it (owned). */
struct testpkt {
	uint8_t	*wire;
	size_t	 len;
};

/*
 * testpkt_response: a response to (qname, qtype) with rcode and the given
 * records, each "section|record", section one of "an", "ns", "ar"; the
 * list ends with NULL. edns_size > 0 adds an OPT with that payload size.
 */
static inline struct testpkt
testpkt_response(const char *qname, ldns_rr_type qtype, int rcode,
    unsigned edns_size, ...)
{
	struct testpkt out;
	ldns_pkt *p;
	ldns_rr *rr;
	const char *spec;
	ldns_pkt_section sec;
	va_list ap;

	ck_assert_int_eq(ldns_pkt_query_new_frm_str(&p, qname, qtype,
	    LDNS_RR_CLASS_IN, LDNS_RD), LDNS_STATUS_OK);
	ldns_pkt_set_qr(p, 1);
	ldns_pkt_set_ra(p, 1);
	ldns_pkt_set_id(p, 0x1234);
	ldns_pkt_set_rcode(p, (uint8_t)rcode);
	va_start(ap, edns_size);
	while ((spec = va_arg(ap, const char *)) != NULL) {
		sec = strncmp(spec, "an|", 3) == 0 ? LDNS_SECTION_ANSWER :
		    strncmp(spec, "ns|", 3) == 0 ? LDNS_SECTION_AUTHORITY :
		    LDNS_SECTION_ADDITIONAL;
		ck_assert_msg(ldns_rr_new_frm_str(&rr, spec + 3, 3600, NULL,
		    NULL) == LDNS_STATUS_OK, "bad record %s", spec);
		ck_assert(ldns_pkt_push_rr(p, sec, rr));
	}
	va_end(ap);
	if (edns_size > 0)
		ldns_pkt_set_edns_udp_size(p, (uint16_t)edns_size);
	ck_assert_int_eq(ldns_pkt2wire(&out.wire, p, &out.len),
	    LDNS_STATUS_OK);
	ldns_pkt_free(p);
	return out;
}

/*
 * testpkt_query: a query for (qname, qtype) with flags (LDNS_RD...) and,
 * if edns_size > 0, an OPT with that size and the DO bit if do_bit.
 */
static inline struct testpkt
testpkt_query(const char *qname, ldns_rr_type qtype, uint16_t flags,
    uint16_t edns_size, int do_bit)
{
	struct testpkt out;
	ldns_pkt *p;

	ck_assert_int_eq(ldns_pkt_query_new_frm_str(&p, qname, qtype,
	    LDNS_RR_CLASS_IN, flags), LDNS_STATUS_OK);
	ldns_pkt_set_id(p, 0xbeef);
	if (edns_size > 0) {
		ldns_pkt_set_edns_udp_size(p, edns_size);
		ldns_pkt_set_edns_do(p, do_bit);
	}
	ck_assert_int_eq(ldns_pkt2wire(&out.wire, p, &out.len),
	    LDNS_STATUS_OK);
	ldns_pkt_free(p);
	return out;
}

/* testpkt_parse: wire back to an ldns packet, for checking answers. */
static inline ldns_pkt *
testpkt_parse(const uint8_t *wire, size_t len)
{
	ldns_pkt *p;

	ck_assert_int_eq(ldns_wire2pkt(&p, wire, len), LDNS_STATUS_OK);
	return p;
}

/* testpkt_ttl: the TTL of record i of section sec of p. */
static inline uint32_t
testpkt_ttl(ldns_pkt *p, ldns_pkt_section sec, size_t i)
{
	ldns_rr_list *l = ldns_pkt_get_section_clone(p, sec);
	uint32_t ttl;

	ck_assert_uint_lt(i, ldns_rr_list_rr_count(l));
	ttl = ldns_rr_ttl(ldns_rr_list_rr(l, i));
	ldns_rr_list_deep_free(l);
	return ttl;
}

/* One record of testpkt_chain: owner a pointer to owner, type, IN, TTL
 * 300, rdlength 4; the rdata is the caller's. Returns its length. */
static inline size_t
testpkt_link(uint8_t *out, size_t owner, uint8_t type)
{
	const uint8_t rr[] = { (uint8_t)(0xc0 | owner >> 8), (uint8_t)owner,
	    0, type, 0, 1, 0, 0, 1, 0x2c, 0, 4 };

	memcpy(out, rr, sizeof(rr));
	return sizeof(rr);
}

/*
 * testpkt_chain: append to the response in out, whose header and question
 * (qname at offset 12) are qend octets, n CNAMEs from the qname, each to
 * "x." before the name it aliases, and at the end of the chain an A
 * 192.0.2.1, all TTL 300 and compressed (RFC 1035 §4.1.4); ANCOUNT
 * becomes n + 1. Returns the message's length.
 */
static inline size_t
testpkt_chain(uint8_t *out, size_t qend, int n)
{
	size_t len = qend, name = 12;
	int i;

	for (i = 0; i < n; i++) {
		len += testpkt_link(out + len, name, 5);	/* CNAME */
		/* the target: "x." and a pointer to the name it aliases */
		out[len] = 1;
		out[len + 1] = 'x';
		out[len + 2] = (uint8_t)(0xc0 | name >> 8);
		out[len + 3] = (uint8_t)name;
		name = len;
		len += 4;
	}
	len += testpkt_link(out + len, name, 1);		/* A */
	memcpy(out + len, "\300\0\2\1", 4);
	out[6] = (uint8_t)((n + 1) >> 8);
	out[7] = (uint8_t)(n + 1);
	return len + 4;
}

static inline void
testpkt_free(struct testpkt *t)
{
	LDNS_FREE(t->wire);
	t->wire = NULL;
}

#endif
