/* msg.c: bounds-checked DNS wire parsing and answer writing (RFC 1035 §4). */
#include "autoconf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csprng.h"
#include "msg.h"
#include "name.h"
#include "wire.h"

#define EDE_OPTION_CODE	15	/* RFC 8914 §2 */

/*
 * Parse the question at off: an uncompressed name (no earlier name exists
 * for a pointer to refer to), qtype and qclass. Returns the offset after
 * it, or -1.
 */
static long
read_question(const uint8_t *pkt, size_t len, size_t off,
    struct msg_question *q)
{
	size_t n;
	long end;

	/* A name with a pointer is 2 octets in place plus its labels, never
	 * as long as itself: no name is 2 octets long. */
	if ((end = name_walk(pkt, len, off, NAME_UNPACK, q->qname, &n)) == -1 ||
	    (size_t)end - off != n ||
	    (size_t)end + MSG_QTYPE_QCLASS_LEN > len)
		return -1;
	q->qname_len = (uint8_t)n;
	q->qtype = wire_rd16(pkt + end);
	q->qclass = wire_rd16(pkt + end + 2);
	return end + MSG_QTYPE_QCLASS_LEN;
}

static uint8_t
ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

int
msg_name_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t i;

	if (alen != blen)
		return 0;
	/* Length octets are below 64 and never letters, so fold them too. */
	for (i = 0; i < alen; i++)
		if (ascii_lower(a[i]) != ascii_lower(b[i]))
			return 0;
	return 1;
}

/*
 * 0x80 in each of the eight octets of w that lies in [lo, hi], both
 * below 0x80, and 0 in the others (SWAR: eight octets a step). Bit 7 of
 * an octet's low 7 bits plus 0x80 - lo is set if it is lo or more, plus
 * 0x7f - hi if it is above hi; neither sum carries into the next octet.
 * Octets of 0x80 and up are never in range.
 */
static uint64_t
in_range8(uint64_t w, uint8_t lo, uint8_t hi)
{
	const uint64_t ones = 0x0101010101010101ULL;
	uint64_t low7 = w & 0x7f * ones;

	return ((low7 + (uint64_t)(0x80 - lo) * ones) ^
	    (low7 + (uint64_t)(0x7f - hi) * ones)) & ~w & 0x80 * ones;
}

/* w with 'A'..'Z' lower-cased: 0x20 added to each. */
static uint64_t
fold8(uint64_t w)
{
	return w | in_range8(w, 'A', 'Z') >> 2;
}

/*
 * w with each letter lower-cased, then made upper case by one random bit:
 * probability 1/2 each, independently (0x20). The eight bits are bits 5
 * and 6 of the four octets of one 32-bit draw, each moved to bit 5 of
 * its octet of w.
 */
static uint64_t
randomize8(uint64_t w)
{
	uint64_t letters = (in_range8(w, 'A', 'Z') | in_range8(w, 'a', 'z')) >>
	    2;
	uint32_t bits = csprng_u32();
	uint64_t r = (uint64_t)(bits >> 1) << 32 | bits;

	return fold8(w) ^ (letters & r);
}

/* name (len octets) through step, 8 octets at a time: whole words with
 * fixed-size copies, which compile to a load and a store, then the rest
 * padded with zeros (no letters). */
static void
each8(uint8_t *name, size_t len, uint64_t (*step)(uint64_t))
{
	uint64_t w;
	size_t i;

	for (i = 0; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, name + i, sizeof(w));
		w = step(w);
		memcpy(name + i, &w, sizeof(w));
	}
	if (i < len) {
		w = 0;
		memcpy(&w, name + i, len - i);
		w = step(w);
		memcpy(name + i, &w, len - i);
	}
}

void
msg_name_fold(uint8_t *name, size_t len)
{
	/* The hot path folds every qname it looks up. */
	each8(name, len, fold8);
}

void
msg_name_randomize_case(uint8_t *name, size_t len)
{
	each8(name, len, randomize8);
}

char *
msg_name_to_str(const uint8_t *name, size_t namelen, char *buf, size_t len)
{
	size_t i = 0, o = 0, end;
	uint8_t c;

	buf[0] = '\0';
	if (namelen == 0 || name[0] == 0)
		return snprintf(buf, len, "."), buf;
	while (i < namelen && name[i] != 0) {
		end = i + 1 + name[i];
		for (i++; i < end && i < namelen; i++) {
			c = name[i];
			if (o + 5 >= len)
				return buf;
			if (c == '.' || c == '\\')
				o += snprintf(buf + o, len - o, "\\%c", c);
			else if (c <= 0x20 || c >= 0x7f)
				o += snprintf(buf + o, len - o, "\\%03u", c);
			else
				buf[o++] = (char)c;
		}
		if (o + 2 >= len)
			return buf;
		buf[o++] = '.';
		buf[o] = '\0';
	}
	return buf;
}

/*
 * One RR header at off: owner, type, class, TTL, rdata bounds. With
 * rewritten (a response), the owner is checked whole, pointers followed,
 * never through what rewritten marks (name_validate_marked), for the cost
 * of one walk; without (a query), only skipped.
 */
static long
read_rr(const uint8_t *pkt, size_t len, size_t off,
    const uint8_t *rewritten, struct msg_rr *rr)
{
	long p;
	size_t rd;

	p = rewritten != NULL ? name_validate_marked(pkt, len, off,
	    rewritten) : name_walk(pkt, len, off, NAME_SKIP, NULL, NULL);
	if (p == -1 ||
	    (size_t)p + MSG_RR_FIXED_LEN > len)
		return -1;
	rr->offset = (uint16_t)off;
	rr->type = wire_rd16(pkt + p);
	rr->rclass = wire_rd16(pkt + p + 2);
	rr->ttl_offset = (uint16_t)(p + 4);
	rr->ttl = wire_rd32(pkt + p + 4);
	/*
	 * RFC 2181 §8: a TTL with the top bit set is treated as zero. An
	 * OPT's "TTL" is no TTL but its extended rcode, version and flags
	 * (RFC 6891 §6.1.3): an extended rcode of 128 or more sets that bit.
	 */
	if ((rr->ttl & 0x80000000U) && rr->type != MSG_TYPE_OPT)
		rr->ttl = 0;
	rr->rdlength = wire_rd16(pkt + p + 8);
	rd = (size_t)p + MSG_RR_FIXED_LEN;
	if (rd + rr->rdlength > len)
		return -1;
	rr->rdata_offset = (uint16_t)rd;
	rr->end = (uint16_t)(rd + rr->rdlength);
	return (long)rr->end;
}

/* The name at off in rdata of rr decompresses (never through what
 * rewritten marks, see name_validate_marked) and ends, in place, at or
 * before the rdata's end, which *next gets. */
static int
rdata_name(const uint8_t *pkt, size_t len, const struct msg_rr *rr,
    size_t off, long *next, const uint8_t *rewritten)
{
	*next = name_validate_marked(pkt, len, off, rewritten);
	return *next != -1 && (size_t)*next <= rr->end ? 0 : -1;
}

/*
 * The names in the rdata of rr (its owner validated by read_rr) decompress
 * (no loops, no forward pointers, nothing read through what rewritten
 * marks) and, for the types this cache reads or that carry names (RFC
 * 1035 §3.3), the rdata has exactly the layout of its type. Other types
 * are opaque here.
 */
static int
rr_valid(const uint8_t *pkt, size_t len, const struct msg_rr *rr,
    const uint8_t *rewritten)
{
	long next;

	if (rr->rclass != MSG_CLASS_IN)
		return 1;	/* other classes lay rdata out their way */
	switch (rr->type) {
	case MSG_TYPE_A:
		return rr->rdlength == 4;
	case MSG_TYPE_AAAA:
		return rr->rdlength == 16;
	case MSG_TYPE_NS:
	case MSG_TYPE_CNAME:
	case MSG_TYPE_DNAME:
	case MSG_TYPE_PTR:
		return rdata_name(pkt, len, rr, rr->rdata_offset, &next,
		    rewritten) == 0 && (size_t)next == rr->end;
	case MSG_TYPE_MX:
		return rr->rdlength > 2 && rdata_name(pkt, len, rr,
		    rr->rdata_offset + 2, &next, rewritten) == 0 &&
		    (size_t)next == rr->end;
	case MSG_TYPE_SRV:
		return rr->rdlength > 6 && rdata_name(pkt, len, rr,
		    rr->rdata_offset + 6, &next, rewritten) == 0 &&
		    (size_t)next == rr->end;
	case MSG_TYPE_SOA:
		return rdata_name(pkt, len, rr, rr->rdata_offset, &next,
		    rewritten) == 0 &&
		    rdata_name(pkt, len, rr, (size_t)next, &next,
		    rewritten) == 0 &&
		    (size_t)next + 20 == rr->end;
	default:
		return 1;
	}
}

/*
 * What of rr an answer to a client has changed (its TTL, aged and capped;
 * an OPT, ours instead), marked in rewritten for name_validate_marked.
 */
static void
mark_rewritten(uint8_t *rewritten, const struct msg_rr *rr)
{
	size_t i, from = rr->ttl_offset, to = from + 4;

	if (rr->type == MSG_TYPE_OPT) {
		from = rr->offset;
		to = rr->end;
	}
	for (i = from; i < to; i++)
		rewritten[i / 8] |= (uint8_t)(1U << (i % 8));
}

/* Read an OPT RR (RFC 6891 §6.1.2) into *e; -1 if its owner is not root. */
static int
read_opt(const uint8_t *pkt, const struct msg_rr *rr, struct msg_edns *e)
{
	if (pkt[rr->offset] != 0)
		return -1;
	e->present = 1;
	e->udp_size = rr->rclass;
	e->ext_rcode = (uint8_t)(rr->ttl >> 24);
	e->version = (uint8_t)(rr->ttl >> 16);
	e->do_bit = (rr->ttl & MSG_EDNS_DO) != 0;
	return 0;
}

enum msg_parse_result
msg_parse_query(const uint8_t *pkt, size_t len, struct msg_query *q)
{
	struct msg_rr rr;
	long off;
	uint16_t qdcount, arcount, i;
	int qparsed;

	q->q.qname_len = 0;
	q->edns.present = 0;
	q->edns.do_bit = 0;
	q->edns.udp_size = 0;
	q->edns.version = 0;
	if (len < MSG_HEADER_LEN)
		return MSG_PARSE_DROP;
	q->id = wire_rd16(pkt);
	q->flags = wire_rd16(pkt + 2);
	/* Never answer a response: that is how reflection loops start. */
	if (q->flags & MSG_FLAG_QR)
		return MSG_PARSE_DROP;
	qdcount = wire_rd16(pkt + 4);
	arcount = wire_rd16(pkt + 10);
	off = qdcount == 1 ? read_question(pkt, len, MSG_HEADER_LEN, &q->q) :
	    -1;
	qparsed = off != -1;
	if (!qparsed)
		q->q.qname_len = 0;
	if (MSG_OPCODE(q->flags) != MSG_OPCODE_QUERY)
		return MSG_PARSE_NOTIMP;
	if (!qparsed || wire_rd16(pkt + 6) != 0 || wire_rd16(pkt + 8) != 0)
		return MSG_PARSE_FORMERR;
	for (i = 0; i < arcount; i++) {
		if ((off = read_rr(pkt, len, (size_t)off, NULL, &rr)) ==
		    -1)
			return MSG_PARSE_FORMERR;
		if (rr.type != MSG_TYPE_OPT)
			continue;
		/* RFC 6891 §6.1.1: more than one OPT is FORMERR. */
		if (q->edns.present || read_opt(pkt, &rr, &q->edns) == -1)
			return MSG_PARSE_FORMERR;
	}
	if (q->edns.present && q->edns.version != 0)
		return MSG_PARSE_BADVERS;
	return MSG_PARSE_OK;
}

/* The first authority RR of type in r, or -1. */
static long
find_authority(const struct msg_response *r, uint16_t type)
{
	size_t i;

	for (i = 0; i < r->n_rrs; i++)
		if (r->rrs[i].section == MSG_SECTION_AUTHORITY &&
		    r->rrs[i].type == type)
			return (long)i;
	return -1;
}

/*
 * Whether rr's owner is sname (slen octets, the qname itself if qname),
 * in any case (RFC 4343); owner is room to unpack it. An owner that is a
 * pointer to the question's qname is the qname: no unpacking needed, and
 * that is how nearly every answer names its records (RFC 1035 §4.1.4).
 */
static int
owner_is(const struct msg_response *r, const struct msg_rr *rr, int qname,
    const uint8_t *sname, int slen, uint8_t *owner)
{
	int olen;

	if (qname && wire_rd16(r->pkt + rr->offset) == (0xc000 |
	    MSG_HEADER_LEN))
		return 1;
	olen = name_unpack(r->pkt, r->len, rr->offset, owner);
	return olen != -1 && msg_name_equal(owner, (size_t)olen, sname,
	    (size_t)slen);
}

/*
 * Follow the CNAME chain from the qname through the answer section, at
 * most MSG_CHAIN_MAX CNAMEs. Returns 1 if an RRset of qtype (or any type
 * for ANY) is found at the end of the chain, else 0; sets r->has_cname if
 * a CNAME was followed, and r->long_chain if there were more to follow.
 */
static int
follow_chain(struct msg_response *r)
{
	uint8_t sname[MSG_NAME_MAX], owner[MSG_NAME_MAX];
	const struct msg_rr *rr;
	size_t i, hops;
	int slen, moved;

	memcpy(sname, r->q.qname, r->q.qname_len);
	slen = r->q.qname_len;
	/* A loop, too, ends here: RFC 1034 §3.6.2 calls it an error. */
	for (hops = 0; hops <= MSG_CHAIN_MAX; hops++) {
		moved = 0;
		for (i = 0; i < r->n_rrs && !moved; i++) {
			rr = &r->rrs[i];
			if (rr->section != MSG_SECTION_ANSWER ||
			    rr->rclass != r->q.qclass)
				continue;
			if (!owner_is(r, rr, hops == 0, sname, slen, owner))
				continue;
			if (rr->type == r->q.qtype ||
			    r->q.qtype == MSG_TYPE_ANY)
				return 1;
			if (rr->type != MSG_TYPE_CNAME)
				continue;
			if (hops == MSG_CHAIN_MAX) {
				r->long_chain = 1;
				return 0;
			}
			slen = name_unpack(r->pkt, r->len,
			    rr->rdata_offset, sname);
			if (slen == -1)
				return 0;
			r->has_cname = moved = 1;
		}
		if (!moved)
			return 0;
	}
	return 0;
}

/* RFC 2308 §2: decide what kind of answer r is. */
static enum msg_class
classify(struct msg_response *r)
{
	int answered;

	switch (r->rcode) {
	case MSG_RCODE_NOERROR:
	case MSG_RCODE_NXDOMAIN:
		break;
	case MSG_RCODE_SERVFAIL:
	case MSG_RCODE_REFUSED:
	case MSG_RCODE_FORMERR:
	case MSG_RCODE_NOTIMP:
		return MSG_CLASS_FAILURE;
	default:
		/* Extended rcodes (BADVERS...) cannot reach a client as such:
		 * they are about our query, so this upstream failed it. */
		return r->rcode > 0xf ? MSG_CLASS_FAILURE : MSG_CLASS_OTHER;
	}
	answered = follow_chain(r);
	if (r->long_chain)
		return MSG_CLASS_FAILURE;
	r->soa_index = find_authority(r, MSG_TYPE_SOA);
	if (r->rcode == MSG_RCODE_NXDOMAIN)
		return answered ? MSG_CLASS_OTHER : MSG_CLASS_NXDOMAIN;
	if (answered)
		return MSG_CLASS_ANSWER;
	if (r->counts[MSG_SECTION_ANSWER] == 0 && r->soa_index == -1 &&
	    find_authority(r, MSG_TYPE_NS) != -1)
		return MSG_CLASS_REFERRAL;
	/* Records, but none for our question: not an answer to trust. */
	if (r->counts[MSG_SECTION_ANSWER] > 0 && !r->has_cname)
		return MSG_CLASS_FAILURE;
	return MSG_CLASS_NODATA;
}

long
msg_response_question(const uint8_t *pkt, size_t len, uint16_t *id,
    struct msg_question *q)
{
	if (len < MSG_HEADER_LEN || len > MSG_MAX_LEN ||
	    !(wire_rd16(pkt + 2) & MSG_FLAG_QR) || wire_rd16(pkt + 4) != 1)
		return -1;
	*id = wire_rd16(pkt);
	return read_question(pkt, len, MSG_HEADER_LEN, q);
}

int
msg_response_parse(const uint8_t *pkt, size_t len, struct msg_response *r)
{
	uint8_t rewritten[MSG_MAX_LEN / 8 + 1];	/* octets we change */
	size_t total, i, sec_end[4];
	long off;
	int sec;

	memset(r, 0, offsetof(struct msg_response, inline_rrs));
	r->opt_index = r->soa_index = -1;
	if ((off = msg_response_question(pkt, len, &r->id, &r->q)) == -1)
		return -1;
	memset(rewritten, 0, (len + 7) / 8);
	r->pkt = pkt;
	r->len = len;
	r->flags = wire_rd16(pkt + 2);
	r->question_end = (size_t)off;
	r->counts[1] = wire_rd16(pkt + 6);
	r->counts[2] = wire_rd16(pkt + 8);
	r->counts[3] = wire_rd16(pkt + 10);
	total = r->counts[1] + r->counts[2] + r->counts[3];
	/* More RRs than could fit: refuse before allocating for them. */
	if (total > (len - r->question_end) / MSG_RR_MIN_LEN)
		return -1;
	r->rrs = r->inline_rrs;
	if (total > MSG_RRS_INLINE &&
	    (r->rrs = calloc(total, sizeof(*r->rrs))) == NULL)
		return -1;
	sec_end[1] = r->counts[1];
	sec_end[2] = sec_end[1] + r->counts[2];
	sec_end[3] = total;
	for (i = 0, sec = 1; i < total; i++) {
		while (i >= sec_end[sec])
			sec++;
		/* its owner cannot reach its own TTL: a pointer leads
		 * only below itself */
		if ((off = read_rr(pkt, len, (size_t)off, rewritten,
		    &r->rrs[i])) == -1)
			goto bad;
		mark_rewritten(rewritten, &r->rrs[i]);
		if (!rr_valid(pkt, len, &r->rrs[i], rewritten))
			goto bad;
		r->rrs[i].section = (uint8_t)sec;
		if (r->rrs[i].type != MSG_TYPE_OPT)
			continue;
		if (sec != MSG_SECTION_ADDITIONAL || r->opt_index != -1 ||
		    pkt[r->rrs[i].offset] != 0)
			goto bad;
		r->opt_index = (long)i;
	}
	r->n_rrs = total;
	r->rcode = MSG_RCODE(r->flags);
	if (r->opt_index != -1)
		r->rcode |= (uint16_t)((r->rrs[r->opt_index].ttl >> 24) << 4);
	r->class = classify(r);
	return 0;
bad:
	msg_response_free(r);
	return -1;
}

void
msg_response_free(struct msg_response *r)
{
	if (r->rrs != r->inline_rrs)
		free(r->rrs);
	r->rrs = NULL;
	r->n_rrs = 0;
}

long
msg_soa_minimum(const uint8_t *pkt, size_t len, const struct msg_rr *rr)
{
	size_t end = rr->end;
	long off;

	if (end > len)
		return -1;
	/* Names in rdata may point outside it; skipping never follows. */
	off = name_walk(pkt, end, rr->rdata_offset, NAME_SKIP, NULL, NULL);
	if (off != -1)
		off = name_walk(pkt, end, (size_t)off, NAME_SKIP, NULL, NULL);
	if (off == -1 || (size_t)off + 20 != end)
		return -1;
	return (long)wire_rd32(pkt + off + 16);
}

/* Octets of the EXTRA-TEXT of opts's EDE. */
static size_t
ede_text_len(const struct msg_reply_opts *opts)
{
	if (opts->ede < 0 || opts->ede_text == NULL)
		return 0;
	return strnlen(opts->ede_text, MSG_EDE_TEXT_MAX);
}

static size_t
opt_len(const struct msg_reply_opts *opts)
{
	return MSG_OPT_LEN + (opts->ede >= 0 ? MSG_EDE_OPTION_LEN : 0) +
	    ede_text_len(opts);
}

/* Append our OPT RR at out: payload size, extended rcode, DO, EDE. */
static size_t
write_opt(uint8_t *out, const struct msg_query *q, unsigned rcode,
    const struct msg_reply_opts *opts)
{
	size_t text = ede_text_len(opts);
	uint16_t rdlen = opts->ede >= 0 ? MSG_EDE_OPTION_LEN + text : 0;

	out[0] = 0;
	wire_wr16(out + 1, MSG_TYPE_OPT);
	wire_wr16(out + 3, opts->edns_size);
	/* The client's DO: copied to its answer (RFC 3225 §3) and to our
	 * query upstream (RFC 4035 §3.2.1). */
	wire_wr32(out + 5, (uint32_t)(rcode >> 4) << 24 |
	    (q->edns.do_bit ? MSG_EDNS_DO : 0));
	wire_wr16(out + 9, rdlen);
	if (rdlen > 0) {
		wire_wr16(out + 11, EDE_OPTION_CODE);
		wire_wr16(out + 13, (uint16_t)(2 + text));
		wire_wr16(out + 15, (uint16_t)opts->ede);
		if (text > 0)
			memcpy(out + 17, opts->ede_text, text);
	}
	return MSG_OPT_LEN + rdlen;
}

/* Header flags of an answer to q: QR, RA, the client's RD and CD. */
static uint16_t
reply_flags(const struct msg_query *q, unsigned rcode)
{
	return MSG_FLAG_QR | MSG_FLAG_RA |
	    (q->flags & (MSG_FLAG_RD | MSG_FLAG_CD)) | (rcode & 0xf);
}

/* The question at out: qname (q->qname_len octets), q's qtype and qclass. */
static size_t
write_question(uint8_t *out, const uint8_t *qname,
    const struct msg_question *q)
{
	memcpy(out, qname, q->qname_len);
	wire_wr16(out + q->qname_len, q->qtype);
	wire_wr16(out + q->qname_len + 2, q->qclass);
	return q->qname_len + MSG_QTYPE_QCLASS_LEN;
}

static void
write_counts(uint8_t *out, uint16_t qd, const uint16_t *counts)
{
	wire_wr16(out + 4, qd);
	wire_wr16(out + 6, counts[1]);
	wire_wr16(out + 8, counts[2]);
	wire_wr16(out + 10, counts[3]);
}

static void
age_ttls(uint8_t *out, size_t len, const struct msg_template *t,
    const struct msg_ttl_rule *rule)
{
	uint32_t ttl;
	size_t i;

	for (i = 0; i < t->n_ttls && t->ttl_offsets[i] < len; i++) {
		ttl = wire_rd32(t->wire + t->ttl_offsets[i]);
		if (rule->fixed != 0)
			ttl = rule->fixed;
		else if (ttl > rule->elapsed)
			ttl -= rule->elapsed;
		else
			ttl = 0;
		wire_wr32(out + t->ttl_offsets[i], ttl);
	}
}

/*
 * The whole records of t from its question on (at question_end) that fit
 * in the first room octets, in message order, for an answer with TC=1
 * (RFC 2181 §9): counts[] (RRs per enum msg_section, in: t's; out: those
 * kept) cut at the first record that does not fit, every section after
 * it emptied. Only the records' lengths are read, with the one name
 * walker: t's records were checked when it was made. Returns the offset
 * just past the last record kept (question_end if none).
 */
static size_t
truncate_records(const struct msg_template *t, size_t question_end,
    size_t room, uint16_t *counts)
{
	uint16_t kept[4] = { 0, 0, 0, 0 };
	size_t off = question_end, end;
	unsigned sec;
	long rr;

	if (room > t->len)
		room = t->len;
	for (sec = MSG_SECTION_ANSWER; sec <= MSG_SECTION_ADDITIONAL; sec++)
		for (; kept[sec] < counts[sec]; kept[sec]++) {
			rr = name_walk(t->wire, room, off, NAME_SKIP, NULL,
			    NULL);
			if (rr == -1 || (size_t)rr + MSG_RR_FIXED_LEN > room)
				goto done;
			end = (size_t)rr + MSG_RR_FIXED_LEN +
			    wire_rd16(t->wire + rr + MSG_RR_FIXED_LEN - 2);
			if (end > room)
				goto done;
			off = end;
		}
done:
	memcpy(counts, kept, sizeof(kept));
	return off;
}

size_t
msg_write_answer(const struct msg_template *t, const struct msg_query *q,
    const struct msg_ttl_rule *rule, const struct msg_reply_opts *opts,
    uint8_t *out, size_t cap)
{
	struct msg_reply_opts plain;
	size_t len = t->len, olen;
	size_t question_end = MSG_HEADER_LEN + q->q.qname_len +
	    MSG_QTYPE_QCLASS_LEN;
	uint16_t counts[4], flags = wire_rd16(t->wire + 2);
	unsigned rcode = MSG_RCODE(flags);

	if (cap < MSG_ERROR_MAX_LEN)
		return 0;
	/* The shortest form must still fit cap: else no text. */
	if (cap < MSG_ERROR_MAX_LEN + ede_text_len(opts)) {
		plain = *opts;
		plain.ede_text = NULL;
		opts = &plain;
	}
	olen = q->edns.present ? opt_len(opts) : 0;
	counts[0] = 0;
	counts[MSG_SECTION_ANSWER] = wire_rd16(t->wire + 6);
	counts[MSG_SECTION_AUTHORITY] = wire_rd16(t->wire + 8);
	counts[MSG_SECTION_ADDITIONAL] = wire_rd16(t->wire + 10);
	/* AD only when the upstream set it and the client asked (DO or AD,
	 * RFC 6840 §5.8). */
	flags = (flags & MSG_FLAG_AD) && (q->edns.do_bit ||
	    (q->flags & MSG_FLAG_AD)) ? MSG_FLAG_AD : 0;
	flags |= reply_flags(q, rcode);
	if (len + olen > opts->limit || len + olen > cap) {
		len = t->additional_offset;
		counts[MSG_SECTION_ADDITIONAL] = 0;
	}
	/* Over TCP, TC is useless: rather leave the OPT out (RFC 6891 §7). */
	if (len + olen > opts->limit && len <= opts->limit &&
	    opts->limit == MSG_MAX_LEN)
		olen = 0;
	/* RFC 2181 §9: TC=1 with the whole records that fit, so that a
	 * client that never asks over TCP (musl before 1.2.4) still has an
	 * answer; the common path never walks the records. */
	if (len + olen > opts->limit || len + olen > cap) {
		len = truncate_records(t, question_end, (opts->limit < cap ?
		    opts->limit : cap) - olen, counts);
		flags |= MSG_FLAG_TC;
	}
	memcpy(out, t->wire, len);
	wire_wr16(out, q->id);
	wire_wr16(out + 2, flags);
	memcpy(out + MSG_HEADER_LEN, q->q.qname, q->q.qname_len);
	age_ttls(out, len, t, rule);
	if (olen > 0) {
		len += write_opt(out + len, q, rcode, opts);
		counts[MSG_SECTION_ADDITIONAL]++;
	}
	write_counts(out, 1, counts);
	return len;
}

size_t
msg_write_error(const struct msg_query *q, unsigned rcode,
    const struct msg_reply_opts *opts, uint8_t *out, size_t cap)
{
	struct msg_reply_opts plain = *opts;
	uint16_t counts[4] = { 0, 0, 0, 0 };
	size_t len = MSG_HEADER_LEN;
	uint16_t qd = 0;

	if (cap < MSG_ERROR_MAX_LEN)
		return 0;
	wire_wr16(out, q->id);
	wire_wr16(out + 2, reply_flags(q, rcode));
	if (q->q.qname_len > 0) {
		len += write_question(out + len, q->q.qname, &q->q);
		qd = 1;
	}
	if (q->edns.present || rcode > 0xf) {
		plain.ede_text = NULL;
		len += write_opt(out + len, q, rcode, &plain);
		counts[MSG_SECTION_ADDITIONAL] = 1;
	}
	write_counts(out, qd, counts);
	return len;
}

size_t
msg_write_query(const struct msg_query *q, uint16_t id,
    const uint8_t *qname, uint16_t edns_size, uint8_t *out, size_t cap)
{
	struct msg_reply_opts opts = { 0, edns_size, -1, NULL };
	uint16_t counts[4] = { 0, 0, 0, edns_size > 0 };
	size_t len = MSG_HEADER_LEN;

	if (cap < MSG_QUERY_MAX_LEN)
		return 0;
	wire_wr16(out, id);
	/* RFC 6840 §5.7: AD=1 asks the upstream to report validation. */
	wire_wr16(out + 2, MSG_FLAG_RD | MSG_FLAG_AD |
	    (q->flags & MSG_FLAG_CD));
	write_counts(out, 1, counts);
	len += write_question(out + len, qname, &q->q);
	if (edns_size == 0)
		return len;
	return len + write_opt(out + len, q, MSG_RCODE_NOERROR, &opts);
}
