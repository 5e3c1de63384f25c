/*
 * msg.h: hot-path DNS wire helpers (RFC 1035 §4): bounds-checked parsing
 * of queries and responses, names, case folding and 0x20, answers with
 * rewritten TTLs, EDNS0 OPT (RFC 6891), TC truncation, error replies.
 * All multi-byte fields in structs here are in host byte order; buffers
 * hold wire format. Nothing here allocates except msg_response_parse, for
 * a response of more than MSG_RRS_INLINE records.
 */
#ifndef DNSDAMPER_MSG_H
#define DNSDAMPER_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "name.h"

#define MSG_HEADER_LEN	12
#define MSG_NAME_MAX	NAME_WIRE_MAX	/* 255 octets, RFC 1035 §3.1 */
#define MSG_UDP_MIN	512	/* RFC 1035 §4.2.1 */
#define MSG_MAX_LEN	65535	/* TCP length prefix limit, RFC 1035 §4.2.2 */
#define MSG_QTYPE_QCLASS_LEN	4	/* after a question's name */
#define MSG_RR_FIXED_LEN	10	/* type, class, TTL, rdlength: what
					 * follows an RR's owner name */
#define MSG_RR_MIN_LEN	(1 + MSG_RR_FIXED_LEN)	/* with the root as
						 * owner */
#define MSG_OPT_LEN	11	/* OPT RR without options, RFC 6891 §6.1.2 */
#define MSG_EDE_OPTION_LEN	6	/* EDE without text, RFC 8914 §2 */
/* CNAMEs followed from the qname, at most: longer chains are a failure
 * (RFC 1034 §3.6.2 counsels a bound, for loops; BIND's is 16 too). */
#define MSG_CHAIN_MAX	16
/* The longest query msg_write_query writes: header, question, OPT. */
#define MSG_QUERY_MAX_LEN	(MSG_HEADER_LEN + MSG_NAME_MAX + \
				    MSG_QTYPE_QCLASS_LEN + MSG_OPT_LEN)
/* The longest reply without records: what msg_write_error writes at most,
 * and msg_write_answer when no record fits. */
#define MSG_ERROR_MAX_LEN	(MSG_QUERY_MAX_LEN + MSG_EDE_OPTION_LEN)

/* Bits of the 16-bit flags word (second header field). */
#define MSG_FLAG_QR	0x8000
#define MSG_FLAG_AA	0x0400
#define MSG_FLAG_TC	0x0200
#define MSG_FLAG_RD	0x0100
#define MSG_FLAG_RA	0x0080
#define MSG_FLAG_AD	0x0020
#define MSG_FLAG_CD	0x0010
#define MSG_OPCODE(flags)	(((flags) >> 11) & 0xf)
#define MSG_RCODE(flags)	((flags) & 0xf)

#define MSG_OPCODE_QUERY	0

#define MSG_RCODE_NOERROR	0
#define MSG_RCODE_FORMERR	1
#define MSG_RCODE_SERVFAIL	2
#define MSG_RCODE_NXDOMAIN	3
#define MSG_RCODE_NOTIMP	4
#define MSG_RCODE_REFUSED	5
#define MSG_RCODE_BADVERS	16	/* extended, RFC 6891 §6.1.3 */

#define MSG_TYPE_A	1
#define MSG_TYPE_NS	2
#define MSG_TYPE_CNAME	5
#define MSG_TYPE_SOA	6
#define MSG_TYPE_PTR	12
#define MSG_TYPE_HINFO	13
#define MSG_TYPE_MX	15
#define MSG_TYPE_TXT	16
#define MSG_TYPE_AAAA	28
#define MSG_TYPE_SRV	33
#define MSG_TYPE_NAPTR	35
#define MSG_TYPE_DNAME	39
#define MSG_TYPE_OPT	41
#define MSG_TYPE_DS	43
#define MSG_TYPE_RRSIG	46
#define MSG_TYPE_IXFR	251
#define MSG_TYPE_AXFR	252
#define MSG_TYPE_ANY	255

#define MSG_CLASS_IN	1

#define MSG_EDNS_DO	0x8000	/* in the OPT TTL's low 16 bits */
#define MSG_EDE_STALE	3	/* RFC 8914 §4.4 "Stale Answer" */

enum msg_section {
	MSG_SECTION_ANSWER = 1,
	MSG_SECTION_AUTHORITY = 2,
	MSG_SECTION_ADDITIONAL = 3
};

struct msg_question {
	uint8_t		qname[MSG_NAME_MAX];	/* uncompressed wire, case kept */
	uint8_t		qname_len;		/* octets incl. the root label */
	uint16_t	qtype;
	uint16_t	qclass;
};

struct msg_edns {
	int		present;	/* an OPT RR was in the message */
	uint16_t	udp_size;	/* advertised payload size, bytes */
	uint8_t		version;
	uint8_t		ext_rcode;	/* upper 8 bits of the 12-bit rcode */
	int		do_bit;		/* DNSSEC OK, RFC 3225 */
};

/* A client's query as parsed by msg_parse_query. */
struct msg_query {
	uint16_t		id;
	uint16_t		flags;
	struct msg_question	q;
	struct msg_edns		edns;
};

enum msg_parse_result {
	MSG_PARSE_OK,
	MSG_PARSE_DROP,		/* not answerable: short header or QR=1 */
	MSG_PARSE_FORMERR,	/* header read; answer FORMERR */
	MSG_PARSE_NOTIMP,	/* opcode other than QUERY */
	MSG_PARSE_BADVERS	/* EDNS version > 0, RFC 6891 §6.1.3 */
};

/*
 * msg_parse_query: parse a client query of len octets at pkt (borrowed)
 * into *q (RFC 1035 §4.1). Accepts exactly one question without
 * compression, no answer or authority records, and at most one OPT (root
 * owner, RFC 6891 §6.1.1) among the additional records. Returns
 * MSG_PARSE_OK, or the reason it is not; for every result but DROP, q->id
 * and q->flags are set, and q->q is set when the question itself parsed
 * (q->q.qname_len > 0).
 */
enum msg_parse_result msg_parse_query(const uint8_t *pkt, size_t len,
	    struct msg_query *q);

/* msg_name_equal: 1 if uncompressed wire names a (alen octets) and b (blen
 * octets) are equal ignoring ASCII case (RFC 4343), else 0. */
int	msg_name_equal(const uint8_t *a, size_t alen, const uint8_t *b,
	    size_t blen);

/* msg_name_fold: lower-case the ASCII letters of wire name name (len
 * octets) in place (RFC 4343). */
void	msg_name_fold(uint8_t *name, size_t len);

/*
 * msg_name_randomize_case: flip the case of each ASCII letter of wire name
 * name (len octets) with probability 1/2 (draft-vixie-dnsext-dns0x20), in
 * place, with csprng_u32.
 */
void	msg_name_randomize_case(uint8_t *name, size_t len);

/*
 * msg_name_to_str: uncompressed wire name name (namelen octets) in
 * presentation format ("www.example.", RFC 1035 §5.1), with "." and "\"
 * escaped and non-printable octets as \DDD, written to buf (size len >= 1;
 * 1024 always suffices, or the text is cut short at a label). Returns buf.
 */
char	*msg_name_to_str(const uint8_t *name, size_t namelen, char *buf,
	    size_t len);

/* One resource record located inside a message. */
struct msg_rr {
	uint16_t	offset;		/* owner name */
	uint16_t	ttl_offset;	/* the 32-bit TTL field */
	uint16_t	rdata_offset;
	uint16_t	rdlength;
	uint16_t	end;		/* one past the last rdata octet */
	uint16_t	type;
	uint16_t	rclass;
	uint32_t	ttl;		/* seconds, as on the wire */
	uint8_t		section;	/* enum msg_section */
};

/* How an upstream response answers the question (RFC 2308 §2). */
enum msg_class {
	MSG_CLASS_ANSWER,	/* RRset of qtype, possibly via CNAMEs */
	MSG_CLASS_NXDOMAIN,	/* name error, RFC 2308 §2.1 */
	MSG_CLASS_NODATA,	/* no RRset of qtype, RFC 2308 §2.2 */
	MSG_CLASS_REFERRAL,	/* delegation: the upstream did not recurse */
	MSG_CLASS_FAILURE,	/* SERVFAIL, REFUSED, FORMERR, NOTIMP, an
				 * extended rcode, or answer records that
				 * do not answer the question */
	MSG_CLASS_OTHER		/* any other rcode: passed on, not cached */
};

/* RRs of a response held in the struct itself: most answers have fewer,
 * and need no allocation. */
#define MSG_RRS_INLINE	16

/* An upstream response, parsed and classified by msg_response_parse. */
struct msg_response {
	const uint8_t	*pkt;		/* borrowed */
	size_t		 len;
	uint16_t	 id;
	uint16_t	 flags;
	uint16_t	 rcode;		/* 12 bits: header and OPT combined */
	struct msg_question q;		/* the question, case kept */
	size_t		 question_end;	/* offset of the first RR */
	struct msg_rr	*rrs;		/* owned, in message order: inline_rrs
					 * or allocated; never copy the
					 * struct */
	size_t		 n_rrs;
	size_t		 counts[4];	/* RRs per enum msg_section */
	long		 opt_index;	/* index into rrs of the OPT, or -1 */
	long		 soa_index;	/* authority SOA, or -1 */
	enum msg_class	 class;
	int		 has_cname;	/* the answer followed a CNAME chain */
	int		 long_chain;	/* more than MSG_CHAIN_MAX CNAMEs:
					 * class FAILURE */
	struct msg_rr	 inline_rrs[MSG_RRS_INLINE];
};

/*
 * msg_response_question: read only the header and question of the
 * response at pkt (len octets, borrowed), the part that says which query
 * it answers (RFC 5452 §9.1), so that a response to another query is
 * refused before the cost of parsing the rest. Requires len within
 * [MSG_HEADER_LEN, MSG_MAX_LEN], QR=1 and QDCOUNT=1. Returns the offset
 * of the first RR, with the ID (host order) in *id and the question in
 * *q, or -1 if those are malformed.
 */
long	msg_response_question(const uint8_t *pkt, size_t len, uint16_t *id,
	    struct msg_question *q);

/*
 * msg_response_parse: parse every section of the response at pkt (len
 * octets, borrowed; must outlive *r; RFC 1035 §4.1) and classify it
 * against its own question (RFC 2308 §2, CNAME chains RFC 1034 §3.6.2, at
 * most MSG_CHAIN_MAX CNAMEs long). Requires what msg_response_question
 * does, at most one OPT (in the additional section, RFC 6891 §6.1.1),
 * names without loops or forward pointers and records within len, with
 * the layout of their type where it is known (RFC 1035 §3.3). TTLs with
 * the top bit set read as 0 (RFC 2181 §8), but for the OPT, whose TTL
 * field holds its extended rcode, version and flags (RFC 6891 §6.1.3).
 * Returns 0 and fills *r (free it with msg_response_free; *r must stay
 * where it is, not be copied), or -1 if malformed or out of memory (*r
 * then needs no free, though freeing it is harmless).
 */
int	msg_response_parse(const uint8_t *pkt, size_t len,
	    struct msg_response *r);

/* msg_response_free: release what msg_response_parse allocated in r;
 * calling it again is harmless. */
void	msg_response_free(struct msg_response *r);

/*
 * msg_soa_minimum: the MINIMUM field (seconds) of the SOA record rr in the
 * message pkt (len octets), RFC 1035 §3.3.13, or -1 if its rdata is
 * malformed.
 */
long	msg_soa_minimum(const uint8_t *pkt, size_t len,
	    const struct msg_rr *rr);

/*
 * A stored answer: header, question and records without any OPT, with
 * the TTL positions needed to age it; each TTL field there holds the TTL
 * (seconds) the record had when stored. Of the header, the rcode and AD
 * (upstream set it) of its flags and its counts are used; its ID and the
 * rest of its flags are not. The question's qname has the same length as
 * every query that maps to it, so it can be overwritten with the client's
 * case.
 */
struct msg_template {
	const uint8_t		*wire;
	uint16_t		 len;
	uint16_t		 additional_offset; /* first additional RR */
	const uint16_t		*ttl_offsets;	/* of each TTL field in wire,
						 * n_ttls of them (0: none
						 * aged) */
	uint16_t		 n_ttls;
};

/* How to write TTLs into an answer. */
struct msg_ttl_rule {
	uint32_t	elapsed;	/* seconds since the template was stored */
	uint32_t	fixed;		/* if nonzero, every TTL becomes this */
};

/* What the answer must fit into and how to finish it. */
struct msg_reply_opts {
	size_t		limit;		/* max octets: UDP size or MSG_MAX_LEN */
	uint16_t	edns_size;	/* our payload size for the OPT */
	int		ede;		/* RFC 8914 info-code, or -1 */
	const char	*ede_text;	/* its EXTRA-TEXT (RFC 8914 §2), UTF-8,
					 * at most MSG_EDE_TEXT_MAX octets
					 * used; NULL: none. Answers only */
};

/* The most of an EDE EXTRA-TEXT written: within MSG_UDP_MIN even with the
 * longest question, so that a truncated answer still carries it. */
#define MSG_EDE_TEXT_MAX	64

/*
 * msg_write_answer: build the answer to client query q from template t
 * (borrowed) into out, which has room for cap octets: the client's ID and
 * qname case, QR RA and the client's RD CD, AD only when the upstream set
 * it and the client sent DO or AD (RFC 6840 §5.8), each TTL aged by rule
 * (never below 0), and an OPT when the client sent one (RFC 6891 §7),
 * with an EDE option if opts->ede >= 0 (RFC 8914), its EXTRA-TEXT
 * opts->ede_text if there is room for it in cap. If the answer exceeds
 * opts->limit (at least MSG_UDP_MIN) or cap, the additional section is
 * dropped (RFC 2181 §9: no TC for that); over TCP (limit MSG_MAX_LEN) the
 * OPT goes next; if it still does not fit, the answer has TC=1 (RFC 1035
 * §4.2.1, RFC 7766 §5) and carries, besides header, question and OPT, as
 * many whole records as fit, in order: never part of one, nor any of a
 * section after the one that did not fit whole (RFC 2181 §9), the counts
 * in its header those kept; so a client that never asks again over TCP
 * still has what fit. cap must be at least MSG_ERROR_MAX_LEN, room for
 * the answer when no record fits. Returns the answer's length,
 * at most cap and opts->limit (so MSG_MAX_LEN octets hold any answer), or
 * 0 if cap is below MSG_ERROR_MAX_LEN.
 */
size_t	msg_write_answer(const struct msg_template *t,
	    const struct msg_query *q, const struct msg_ttl_rule *rule,
	    const struct msg_reply_opts *opts, uint8_t *out, size_t cap);

/*
 * msg_write_error: the answer to q with rcode (12 bits: above 15 it is
 * extended, e.g. BADVERS, RFC 6891 §6.1.3) and no records into out (room
 * for cap octets): the client's ID, QR RA and the client's RD CD, the
 * question if it parsed (q->q.qname_len > 0), and an OPT if the client
 * sent one or the rcode is extended, with an EDE option if opts->ede >= 0
 * (never an EXTRA-TEXT).
 * Returns the length written, at most MSG_ERROR_MAX_LEN, or 0 if cap is
 * below MSG_ERROR_MAX_LEN.
 */
size_t	msg_write_error(const struct msg_query *q, unsigned rcode,
	    const struct msg_reply_opts *opts, uint8_t *out, size_t cap);

/*
 * msg_write_query: an upstream query for q->q into out (room for cap
 * octets): ID id (host order), the qname written as in qname (q->q's
 * length; e.g. with 0x20 case applied), RD=1, AD=1 (RFC 6840 §5.7), CD
 * copied from q, and an OPT with our payload size edns_size (octets) and
 * q's DO bit (RFC 4035 §3.2.1); edns_size 0 writes no OPT, for an
 * upstream that does not speak EDNS (RFC 6891 §7). Returns the length
 * written, at most MSG_QUERY_MAX_LEN, or 0 if cap is below
 * MSG_QUERY_MAX_LEN.
 */
size_t	msg_write_query(const struct msg_query *q, uint16_t id,
	    const uint8_t *qname, uint16_t edns_size, uint8_t *out,
	    size_t cap);

#endif
