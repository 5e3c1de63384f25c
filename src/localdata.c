/* localdata.c: answers from the table of local zones and records. */
#include "autoconf.h"

#include <string.h>

#include "localdata.h"
#include "msg.h"
#include "wire.h"

#define POINTER_MAX	0x3fff	/* the furthest a compression pointer
				 * reaches (RFC 1035 §4.1.4) */

/* An answer being written into a template. */
struct answer {
	uint8_t		*wire;
	size_t		 len;
	size_t		 cap;
	uint16_t	 counts[4];	/* per enum msg_section */
};

/*
 * Where the answer's last name was found not to exist, or to lack the
 * type: the qname, or a CNAME chain's end (RFC 2308 §2.1, §2.2).
 */
struct negative {
	enum localzone_verdict		 verdict; /* NODATA, NXDOMAIN, or
						  * another: none */
	const struct localzone_zone	*zone;	/* whose SOA goes with it */
	size_t				 owner;	/* offset of the zone's name
						 * in the answer */
};

/*
 * The records of rs at the name at offset owner (a compression pointer to
 * it) into section sec; as many as fit. Returns the offset of the last
 * record's rdata, or 0 if none fit.
 */
static size_t
put_rrset(struct answer *a, size_t owner, const struct localzone_rrset *rs,
    enum msg_section sec)
{
	size_t off, rdlen, last = 0;

	for (off = 0; off < rs->rdata_len; off += 2 + rdlen) {
		rdlen = wire_rd16(rs->rdata + off);
		if (a->len + 2 + MSG_RR_FIXED_LEN + rdlen > a->cap)
			break;
		a->len += wire_wr16(a->wire + a->len, (uint16_t)(0xc000 |
		    owner));
		a->len += wire_wr16(a->wire + a->len, rs->type);
		a->len += wire_wr16(a->wire + a->len, MSG_CLASS_IN);
		a->len += wire_wr32(a->wire + a->len, rs->ttl);
		a->len += wire_wr16(a->wire + a->len, (uint16_t)rdlen);
		last = a->len;
		memcpy(a->wire + a->len, rs->rdata + off + 2, rdlen);
		a->len += rdlen;
		a->counts[sec]++;
	}
	return last;
}

/* Whether name (folded, len octets) is one of seen[0..n). */
static int
seen_before(uint8_t seen[][MSG_NAME_MAX], const size_t *lens, int n,
    const uint8_t *name, size_t len)
{
	int i;

	for (i = 0; i < n; i++)
		if (lens[i] == len && memcmp(seen[i], name, len) == 0)
			return 1;
	return 0;
}

/*
 * After a CNAME whose target name is at offset target of the answer: the
 * target's records of qtype, while it is local (RFC 1034 §3.6.2), and
 * until a name comes round again: a loop (RFC 1034 §3.6.2, RFC 2181 §10.1)
 * is shown once, each CNAME in it once, for the client to see it.
 */
static void
put_chain(struct answer *a, const struct localzone_table *t, size_t target,
    uint16_t qtype, struct negative *neg)
{
	uint8_t seen[LOCALDATA_MAX_CHAIN][MSG_NAME_MAX];
	size_t lens[LOCALDATA_MAX_CHAIN];
	const struct localzone_rrset *rs;
	struct localzone_result res;
	uint8_t *name;
	int n, len;

	if ((len = name_unpack(a->wire, a->len, MSG_HEADER_LEN, seen[0])) ==
	    -1)
		return;
	msg_name_fold(seen[0], lens[0] = (size_t)len);
	for (n = 1; n < LOCALDATA_MAX_CHAIN && target > 0 &&
	    target <= POINTER_MAX; n++) {
		name = seen[n];
		if ((len = name_unpack(a->wire, a->len, target, name)) == -1)
			return;
		msg_name_fold(name, lens[n] = (size_t)len);
		if (seen_before(seen, lens, n, name, (size_t)len))
			return;
		localzone_lookup(t, name, (size_t)len, qtype, &res);
		if (res.verdict != LOCALZONE_ANSWER ||
		    (rs = res.rrset) == NULL) {
			/* RFC 2308 §3 and RFC 6604 §3: the chain's end says
			 * NXDOMAIN or NODATA, with its zone's SOA */
			neg->verdict = res.verdict;
			neg->zone = res.zone;
			neg->owner = target + res.zone_off;
			return;
		}
		target = put_rrset(a, target, rs, MSG_SECTION_ANSWER);
		if (rs->type != MSG_TYPE_CNAME)
			return;
	}
}

/* The records res found for q: one RRset, its CNAME chain, or (ANY) all. */
static void
put_records(struct answer *a, const struct localzone_table *t,
    const struct msg_query *q, const struct localzone_result *res,
    struct negative *neg)
{
	size_t i, target;

	if (res->rrset == NULL) {
		for (i = 0; i < localzone_node_rrsets(res->node); i++)
			(void)put_rrset(a, MSG_HEADER_LEN, localzone_node_rrset(
			    res->node, i), MSG_SECTION_ANSWER);
		return;
	}
	target = put_rrset(a, MSG_HEADER_LEN, res->rrset, MSG_SECTION_ANSWER);
	if (res->rrset->type == MSG_TYPE_CNAME &&
	    q->q.qtype != MSG_TYPE_CNAME)
		put_chain(a, t, target, q->q.qtype, neg);
}

size_t
localdata_answer(const struct localzone_table *t, const struct msg_query *q,
    const uint8_t *qname, const struct msg_reply_opts *opts, uint8_t *work,
    size_t work_cap, uint8_t *out, size_t cap)
{
	struct msg_ttl_rule rule = { 0, 0 };
	struct localzone_result res;
	struct msg_template tpl;
	struct negative neg;
	struct answer a;

	if (q->q.qclass != MSG_CLASS_IN)
		return 0;
	localzone_lookup(t, qname, q->q.qname_len, q->q.qtype, &res);
	if (res.verdict == LOCALZONE_NONE)
		return 0;
	if (res.verdict == LOCALZONE_REFUSED)
		return msg_write_error(q, MSG_RCODE_REFUSED, opts, out, cap);
	memset(&a, 0, sizeof(a));
	a.wire = work;
	a.cap = work_cap;
	memset(work, 0, MSG_HEADER_LEN);
	a.len = MSG_HEADER_LEN;
	memcpy(work + a.len, q->q.qname, q->q.qname_len);
	a.len += q->q.qname_len;
	a.len += wire_wr16(work + a.len, q->q.qtype);
	a.len += wire_wr16(work + a.len, q->q.qclass);
	neg.verdict = res.verdict;
	neg.zone = res.zone;
	neg.owner = MSG_HEADER_LEN + res.zone_off;
	if (res.verdict == LOCALZONE_ANSWER)
		put_records(&a, t, q, &res, &neg);
	/* RFC 2308 §3: the SOA, for the client's negative cache */
	if ((neg.verdict == LOCALZONE_NODATA ||
	    neg.verdict == LOCALZONE_NXDOMAIN) && neg.zone->soa != NULL &&
	    neg.owner <= POINTER_MAX)
		(void)put_rrset(&a, neg.owner, neg.zone->soa,
		    MSG_SECTION_AUTHORITY);
	/* The template's header: its rcode and counts. */
	wire_wr16(work + 2, neg.verdict == LOCALZONE_NXDOMAIN ?
	    MSG_RCODE_NXDOMAIN : MSG_RCODE_NOERROR);
	wire_wr16(work + 6, a.counts[MSG_SECTION_ANSWER]);
	wire_wr16(work + 8, a.counts[MSG_SECTION_AUTHORITY]);
	wire_wr16(work + 10, a.counts[MSG_SECTION_ADDITIONAL]);
	memset(&tpl, 0, sizeof(tpl));
	tpl.wire = work;
	tpl.len = (uint16_t)a.len;
	tpl.additional_offset = (uint16_t)a.len;
	return msg_write_answer(&tpl, q, &rule, opts, out, cap);
}
