/* localdata.c: the localhost names of RFC 6761 §6.3, answered locally. */
#include "autoconf.h"

#include <string.h>

#include "localdata.h"
#include "wire.h"

static const uint8_t localhost[] = "\11localhost";	/* + root label */
#define LOCALHOST_LEN	sizeof(localhost)		/* 11 octets */
/* The one record of an answer: an SOA, 2 + 10 + 2 + 16 + 20 = 50 octets,
 * is the longest. */
#define RECORD_ROOM	64

/* The offset of "localhost." in qname if it is or ends in it, else -1. */
static long
localhost_offset(const struct msg_question *q)
{
	size_t off = 0;
	uint8_t folded[MSG_NAME_MAX];

	if (q->qclass != MSG_CLASS_IN || q->qname_len < LOCALHOST_LEN)
		return -1;
	memcpy(folded, q->qname, q->qname_len);
	msg_name_fold(folded, q->qname_len);
	/* Label by label, so that "notlocalhost." does not count. */
	while (q->qname_len - off > LOCALHOST_LEN && folded[off] != 0)
		off += (size_t)folded[off] + 1;
	if (q->qname_len - off != LOCALHOST_LEN ||
	    memcmp(folded + off, localhost, LOCALHOST_LEN) != 0)
		return -1;
	return (long)off;
}

/* An RR header at p: owner (a pointer to off), type, class, TTL. */
static size_t
rr_header(uint8_t *p, size_t off, uint16_t type, struct msg_ttl_slot *slot,
    size_t at)
{
	size_t n = wire_wr16(p, (uint16_t)(0xc000 | off));

	n += wire_wr16(p + n, type);
	n += wire_wr16(p + n, MSG_CLASS_IN);
	slot->offset = (uint16_t)(at + n);
	slot->ttl = LOCALDATA_TTL;
	n += wire_wr32(p + n, LOCALDATA_TTL);
	return n;
}

size_t
localdata_answer(const struct msg_query *q, const struct msg_reply_opts *opts,
    uint8_t *out, size_t cap)
{
	static const uint8_t v4[4] = { 127, 0, 0, 1 };
	static const uint8_t v6[16] = { [15] = 1 };
	static const uint8_t rname[] = "\6nobody\7invalid";
	uint8_t wire[MSG_HEADER_LEN + MSG_NAME_MAX + MSG_QTYPE_QCLASS_LEN +
	    RECORD_ROOM];
	struct msg_ttl_rule rule = { 0, 0 };
	struct msg_ttl_slot slot;
	struct msg_template t;
	size_t n, apex;
	long off;

	if ((off = localhost_offset(&q->q)) == -1)
		return 0;
	memset(&t, 0, sizeof(t));
	memset(wire, 0, MSG_HEADER_LEN);
	n = MSG_HEADER_LEN;
	memcpy(wire + n, q->q.qname, q->q.qname_len);
	n += q->q.qname_len;
	n += wire_wr16(wire + n, q->q.qtype);
	n += wire_wr16(wire + n, q->q.qclass);
	t.additional_offset = 0;
	apex = MSG_HEADER_LEN + (size_t)off;
	if (q->q.qtype == MSG_TYPE_A || q->q.qtype == MSG_TYPE_AAAA) {
		n += rr_header(wire + n, MSG_HEADER_LEN, q->q.qtype, &slot, n);
		n += wire_wr16(wire + n, q->q.qtype == MSG_TYPE_A ? 4 : 16);
		memcpy(wire + n, q->q.qtype == MSG_TYPE_A ? v4 : v6,
		    q->q.qtype == MSG_TYPE_A ? 4 : 16);
		n += q->q.qtype == MSG_TYPE_A ? 4 : 16;
		t.counts[MSG_SECTION_ANSWER] = 1;
	} else {
		/* NODATA: the zone's SOA, mname the apex itself. */
		n += rr_header(wire + n, apex, MSG_TYPE_SOA, &slot, n);
		n += wire_wr16(wire + n, 2 + sizeof(rname) + 20);
		n += wire_wr16(wire + n, (uint16_t)(0xc000 | apex));
		memcpy(wire + n, rname, sizeof(rname));
		n += sizeof(rname);
		n += wire_wr32(wire + n, 1);		/* serial */
		n += wire_wr32(wire + n, 3600);		/* refresh */
		n += wire_wr32(wire + n, 1200);		/* retry */
		n += wire_wr32(wire + n, 604800);		/* expire */
		n += wire_wr32(wire + n, LOCALDATA_TTL);	/* minimum */
		t.counts[MSG_SECTION_AUTHORITY] = 1;
	}
	t.wire = wire;
	t.len = (uint16_t)n;
	t.additional_offset = (uint16_t)n;
	t.ttls = &slot;
	t.n_ttls = 1;
	t.rcode = MSG_RCODE_NOERROR;
	return msg_write_answer(&t, q, &rule, opts, out, cap);
}
