/* cache.c: what a DNS answer may be cached as, for how long, and as what. */
#include "autoconf.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "name.h"
#include "wire.h"

/* Shards spread lock contention; each must still hold large answers. */
#define CACHE_SHARDS		16
#define CACHE_SHARD_MIN		(256 * 1024)

struct cache {
	struct lruhash		*table;
	uint64_t		 size;		/* bytes, cache-size */
	struct cache_limits	 lim;		/* read with LIM */
};

/*
 * A limit, as every worker thread reads it while a reload may change it:
 * each is a relaxed atomic (cache_set_limits), so a reader sees its old
 * or its new value; they are independent bounds, never read as a set.
 */
#define LIM(c, f)	__atomic_load_n(&(c)->lim.f, __ATOMIC_RELAXED)

/*
 * One allocation per entry: the table's node, these few fields, then the
 * message as it is answered from: header, question (its qname folded:
 * that, qtype and qclass are the key but for its last octet, bits) and
 * records up to any OPT, each TTL field holding the TTL the record was
 * stored with; then, at the next even offset, where each of those TTL
 * fields is (16 bits each, one per RR the header counts). A failure holds
 * the header and question only.
 */
struct cache_entry {
	struct lruhash_node	 node;
	uint64_t		 stored;	/* ms */
	uint64_t		 refresh_failed; /* ms; 0: no failure since */
	uint32_t		 ttl;		/* s, lifetime when stored */
	uint16_t		 len;		/* of the message, octets */
	uint16_t		 additional_offset; /* first additional RR */
	uint8_t			 kind;		/* enum cache_kind */
	uint8_t			 bits;		/* CACHEKEY_DO, CACHEKEY_CD */
	uint8_t			 flags;		/* ENTRY_ASKED, ... */
	uint16_t		 jitter;	/* random, drawn when stored:
						 * low octet the prefetch point,
						 * high octet the recheck's */
	uint8_t			 wire[];	/* the message, the offsets */
};

#define ENTRY_ASKED		1	/* a client asked for it */
#define ENTRY_AFTER_FAILURE	2	/* it replaced a failure, or an
					 * entry whose refresh had failed */

/* What an entry costs beyond what it asked malloc for: its chunk header
 * and rounding, about (glibc: 8 octets, and up to 15 to round to 16). */
#define ENTRY_MALLOC_OVERHEAD	16

#define ENTRY_OF(n)	((struct cache_entry *)(void *)((char *)(n) - \
			    offsetof(struct cache_entry, node)))

/* The RRs a message counts: every one has a TTL (no OPT is kept). */
static size_t
wire_rrs(const uint8_t *wire)
{
	return (size_t)wire_rd16(wire + 6) + wire_rd16(wire + 8) +
	    wire_rd16(wire + 10);
}

/* Where the TTL offsets of e's message, len octets, start. */
static size_t
offsets_at(size_t len)
{
	return (len + 1) & ~(size_t)1;
}

static const uint16_t *
entry_offsets(const struct cache_entry *e)
{
	return (const uint16_t *)(const void *)(e->wire + offsets_at(e->len));
}

/* The octets an entry with a message of len octets, n RRs, takes. */
static size_t
entry_alloc_size(size_t len, size_t n)
{
	return offsetof(struct cache_entry, wire) + offsets_at(len) +
	    n * sizeof(uint16_t);
}

static size_t
entry_size(const struct cache_entry *e)
{
	return entry_alloc_size(e->len, wire_rrs(e->wire)) +
	    ENTRY_MALLOC_OVERHEAD;
}

static uint64_t
entry_expire(const struct cache_entry *e)
{
	return e->stored + (uint64_t)e->ttl * 1000;
}

/* The length of the qname of e's question. */
static size_t
entry_qname_len(const struct cache_entry *e)
{
	const uint8_t *q = e->wire + MSG_HEADER_LEN;
	size_t n = 0;

	/* Checked when stored: uncompressed, within the message. */
	while (q[n] != 0)
		n += (size_t)q[n] + 1;
	return n + 1;
}

/* The key of the entry holding n is key: its question and bits. */
static int
entry_match(const struct lruhash_node *n, const void *key, size_t keylen)
{
	const struct cache_entry *e = ENTRY_OF(n);
	const uint8_t *k = key;

	/* Wire names are prefix-free: the question compares equal to the
	 * key's for keylen - 1 octets only if it is the key's. */
	return e->bits == k[keylen - 1] &&
	    e->len >= MSG_HEADER_LEN + keylen - 1 &&
	    memcmp(e->wire + MSG_HEADER_LEN, k, keylen - 1) == 0;
}

static void
entry_free_node(struct lruhash_node *n)
{
	free(ENTRY_OF(n));
}

static const struct lruhash_type entry_type = { entry_match, entry_free_node };

struct cache *
cache_new(uint64_t size_bytes, const struct cache_limits *lim)
{
	struct cache *c;
	unsigned shards = CACHE_SHARDS;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	while (shards > 1 && size_bytes / shards < CACHE_SHARD_MIN)
		shards /= 2;
	if ((c->table = lruhash_new(shards, size_bytes, &entry_type)) ==
	    NULL) {
		free(c);
		return NULL;
	}
	c->lim = *lim;
	c->size = size_bytes;
	return c;
}

void
cache_free(struct cache *c)
{
	if (c == NULL)
		return;
	lruhash_free(c->table);
	free(c);
}

void
cache_set_limits(struct cache *c, const struct cache_limits *lim)
{
#define SET_LIM(f)	__atomic_store_n(&c->lim.f, lim->f, __ATOMIC_RELAXED)
	SET_LIM(min_ttl);
	SET_LIM(max_ttl);
	SET_LIM(max_negative_ttl);
	SET_LIM(failure_ttl);
	SET_LIM(stale_max_age);
	SET_LIM(stale_answer_ttl);
	SET_LIM(stale_refresh_interval);
#undef SET_LIM
}

void
cache_key_make(const struct cache *c, const struct msg_question *q,
    int do_bit, int cd_bit, struct cache_key *key)
{
	cachekey_fill(q, do_bit, cd_bit, key);
	key->hash = lruhash_hash(c->table, key->data, key->len);
}

static enum cache_kind
kind_of(const struct msg_response *r)
{
	switch (r->class) {
	case MSG_CLASS_ANSWER:
		return CACHE_POSITIVE;
	case MSG_CLASS_NXDOMAIN:
		return r->soa_index != -1 ? CACHE_NXDOMAIN : CACHE_UNCACHEABLE;
	case MSG_CLASS_NODATA:
		return r->soa_index != -1 ? CACHE_NODATA : CACHE_UNCACHEABLE;
	default:
		return CACHE_UNCACHEABLE;
	}
}

static uint32_t
min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * The TTL an RR is stored with. RFC 2308 §5: the negative TTL is the SOA's
 * own TTL or its MINIMUM, whichever is less, and a negative answer as a
 * whole lives no longer than max-negative-ttl.
 */
static uint32_t
stored_ttl(const struct cache *c, enum cache_kind kind,
    const struct msg_response *r, size_t i)
{
	const struct msg_rr *rr = &r->rrs[i];
	uint32_t ttl = rr->ttl;
	long minimum;

	if (kind == CACHE_NXDOMAIN || kind == CACHE_NODATA) {
		if ((long)i == r->soa_index) {
			minimum = msg_soa_minimum(r->pkt, r->len, rr);
			if (minimum >= 0)
				ttl = min32(ttl, (uint32_t)minimum);
		}
		return min32(min32(ttl, LIM(c, max_negative_ttl)),
		    LIM(c, max_ttl));
	}
	if (ttl < LIM(c, min_ttl) && kind == CACHE_POSITIVE)
		ttl = LIM(c, min_ttl);
	return min32(ttl, LIM(c, max_ttl));
}

/*
 * The stored wire is the message up to its OPT, which must be the last RR:
 * every common server puts it there (only TSIG may follow), and cutting
 * it from the middle would shift compression targets behind it.
 */
static long
wire_end(const struct msg_response *r)
{
	if (r->opt_index == -1)
		return r->n_rrs > 0 ? r->rrs[r->n_rrs - 1].end :
		    (long)r->question_end;
	if ((size_t)r->opt_index != r->n_rrs - 1)
		return -1;
	return r->rrs[r->opt_index].offset;
}

/*
 * The stored TTL of each RR, by the rules of stored_ttl, and never above
 * was[i] (its TTL when it was stored before, for an entry restored; NULL
 * for one new), written into e's message; sets the entry's lifetime, and
 * makes it uncacheable if an answer or authority TTL is 0.
 */
static void
fill_ttls(const struct cache *c, struct cache_entry *e,
    const struct msg_response *r, const uint32_t *was)
{
	const uint16_t *offsets = entry_offsets(e);
	uint32_t lifetime = UINT32_MAX, ttl;
	size_t i, n = 0;
	int zero = 0;

	for (i = 0; i < r->n_rrs; i++) {
		if ((long)i == r->opt_index)
			continue;
		ttl = stored_ttl(c, e->kind, r, i);
		if (was != NULL)
			ttl = min32(ttl, was[n]);
		wire_wr32(e->wire + offsets[n++], ttl);
		/* Glue ages out on its own (to 0) without ending the answer. */
		if (r->rrs[i].section == MSG_SECTION_ADDITIONAL)
			continue;
		zero |= r->rrs[i].ttl == 0;
		lifetime = min32(lifetime, ttl);
	}
	/* RFC 1035 §3.2.1: a zero TTL means use once, do not cache. */
	if (zero || lifetime == 0 || lifetime == UINT32_MAX)
		e->kind = CACHE_UNCACHEABLE;
	e->ttl = lifetime == UINT32_MAX ? 0 : lifetime;
}

static uint16_t
additional_offset(const struct msg_response *r, size_t end)
{
	size_t i;

	for (i = 0; i < r->n_rrs; i++)
		if (r->rrs[i].section == MSG_SECTION_ADDITIONAL)
			return r->rrs[i].offset;
	return (uint16_t)end;
}

/*
 * An entry of kind with the header and question of wire (its qname,
 * qname_len octets, folded: the key), len octets of message in all (the
 * caller's to fill past the question) and n TTL offsets; no refresh
 * failed yet. NULL if out of memory.
 */
static struct cache_entry *
entry_make(enum cache_kind kind, const uint8_t *wire, size_t qname_len,
    size_t len, size_t n, int bits)
{
	struct cache_entry *e;
	size_t question = MSG_HEADER_LEN + qname_len + MSG_QTYPE_QCLASS_LEN;

	if ((e = malloc(entry_alloc_size(len, n))) == NULL)
		return NULL;
	e->refresh_failed = 0;
	e->jitter = (uint16_t)arc4random();
	e->flags = 0;
	e->len = (uint16_t)len;
	e->additional_offset = (uint16_t)len;
	e->kind = (uint8_t)kind;
	e->bits = (uint8_t)bits;
	memcpy(e->wire, wire, question);
	msg_name_fold(e->wire + MSG_HEADER_LEN, qname_len);
	return e;
}

/*
 * An entry holding r's message up to its OPT (which must be last), with
 * a TTL offset for each RR but the OPT; the TTL values, kind and times
 * are the caller's to set. NULL if r's OPT is not last or out of memory.
 */
static struct cache_entry *
entry_alloc(const struct msg_response *r)
{
	struct cache_entry *e;
	uint16_t *offsets;
	long end;
	size_t i, n = r->n_rrs - (r->opt_index != -1), q;

	if ((end = wire_end(r)) == -1 || (e = entry_make(CACHE_UNCACHEABLE,
	    r->pkt, r->q.qname_len, (size_t)end, n, 0)) == NULL)
		return NULL;
	q = r->question_end;
	memcpy(e->wire + q, r->pkt + q, (size_t)end - q);
	offsets = (uint16_t *)(void *)(e->wire + offsets_at(e->len));
	for (i = 0, n = 0; i < r->n_rrs; i++)
		if ((long)i != r->opt_index)
			offsets[n++] = r->rrs[i].ttl_offset;
	e->additional_offset = additional_offset(r, (size_t)end);
	/* Without the OPT, the stored message must count one RR less in
	 * ARCOUNT, the header's last field (RFC 1035 §4.1.1). */
	wire_wr16(e->wire + 10, (uint16_t)(r->counts[MSG_SECTION_ADDITIONAL] -
	    (r->opt_index != -1)));
	return e;
}

struct cache_entry *
cache_entry_new(const struct cache *c, const struct msg_response *r,
    uint64_t now)
{
	struct cache_entry *e;

	if ((e = entry_alloc(r)) == NULL)
		return NULL;
	e->kind = (uint8_t)kind_of(r);
	e->stored = now;
	fill_ttls(c, e, r, NULL);
	return e;
}

enum cache_kind
cache_entry_kind(const struct cache_entry *e)
{
	return e->kind;
}

void
cache_entry_set_asked(struct cache_entry *e)
{
	e->flags |= ENTRY_ASKED;
}

/* e's answer, as msg_write_answer takes it, with rule for its TTLs. */
static size_t
entry_write(const struct cache_entry *e, const struct msg_query *q,
    const struct msg_ttl_rule *rule, const struct msg_reply_opts *opts,
    uint8_t *out, size_t cap)
{
	struct msg_template t;

	t.wire = e->wire;
	t.len = e->len;
	t.additional_offset = e->additional_offset;
	t.ttl_offsets = entry_offsets(e);
	t.n_ttls = (uint16_t)wire_rrs(e->wire);
	return msg_write_answer(&t, q, rule, opts, out, cap);
}

size_t
cache_entry_answer(const struct cache_entry *e, const struct msg_query *q,
    const struct msg_reply_opts *opts, uint64_t now, uint8_t *out, size_t cap)
{
	struct msg_ttl_rule rule;

	/* Whole seconds elapsed: a TTL counts down once per second. */
	rule.elapsed = now > e->stored ? (uint32_t)((now - e->stored) / 1000) :
	    0;
	rule.fixed = 0;
	return entry_write(e, q, &rule, opts, out, cap);
}

void
cache_entry_free(struct cache_entry *e)
{
	free(e);
}

/*
 * A new answer replaces the old, and keeps knowing whether a client asked
 * for it (for SRV target prefetch) and whether it ends a failure or a
 * failed refresh (an outage's end: see cache_result.after_failure).
 */
static int
answer_replace(const struct lruhash_node *old, struct lruhash_node *new)
{
	const struct cache_entry *o = ENTRY_OF(old);
	struct cache_entry *n = ENTRY_OF(new);

	n->flags |= o->flags & ENTRY_ASKED;
	if (o->refresh_failed != 0 || o->kind == CACHE_FAILURE)
		n->flags |= ENTRY_AFTER_FAILURE;
	return 1;
}

/* cache_insert, with replace deciding over an entry already there. */
static int
cache_insert_as(struct cache *c, const struct cache_key *key,
    struct cache_entry *e, lruhash_replace_fn replace)
{
	if (e->kind == CACHE_UNCACHEABLE) {
		free(e);
		return -1;
	}
	e->bits = key->data[key->len - 1];
	/* The key is the entry's own question: one copy of it, and the
	 * only one lookups compare. */
	if (!entry_match(&e->node, key->data, key->len)) {
		free(e);
		return -1;
	}
	return lruhash_insert(c->table, key->hash, key->data, key->len,
	    &e->node, entry_size(e), replace);
}

int
cache_insert(struct cache *c, const struct cache_key *key,
    struct cache_entry *e)
{
	return cache_insert_as(c, key, e, answer_replace);
}

/* A failure may only displace another failure (RFC 9520 §3.2). */
static int
failure_may_replace(const struct lruhash_node *old, struct lruhash_node *new)
{
	(void)new;
	return ENTRY_OF(old)->kind == CACHE_FAILURE;
}

/*
 * Whether e is past all use at now (ms): expired longer ago than
 * stale-max-age (RFC 8767 §5), or, for a failure, expired at all.
 */
static int
past_stale(const struct cache *c, const struct cache_entry *e, uint64_t now)
{
	return now >= entry_expire(e) + (e->kind == CACHE_FAILURE ? 0 :
	    (uint64_t)LIM(c, stale_max_age) * 1000);
}

struct mark_arg {
	const struct cache	*c;
	uint64_t		 now;
	int			 kept;
};

static enum lruhash_verdict
mark_visit(struct lruhash_node *n, void *arg)
{
	struct cache_entry *e = ENTRY_OF(n);
	struct mark_arg *a = arg;

	if (e->kind == CACHE_FAILURE)
		return LRUHASH_KEEP;	/* the new failure replaces it */
	if (past_stale(a->c, e, a->now))
		return LRUHASH_REMOVE;
	e->refresh_failed = a->now;
	a->kept = 1;
	return LRUHASH_KEEP;
}

void
cache_refresh_failed(struct cache *c, const struct cache_key *key,
    uint64_t now)
{
	uint8_t header[MSG_HEADER_LEN + CACHE_KEY_MAX] = { 0 };
	struct mark_arg a = { c, now, 0 };
	struct cache_entry *e;
	size_t qlen = key->len - CACHE_KEY_TAIL;

	/* A failed refresh is no client's use of the entry. */
	lruhash_peek(c->table, key->hash, key->data, key->len, mark_visit,
	    &a);
	if (a.kept)
		return;
	/* A message of one question, no records: the key, stored once. */
	header[5] = 1;
	memcpy(header + MSG_HEADER_LEN, key->data, key->len - 1);
	if ((e = entry_make(CACHE_FAILURE, header, qlen, MSG_HEADER_LEN +
	    key->len - 1, 0, key->data[key->len - 1])) == NULL)
		return;
	e->stored = now;
	e->ttl = LIM(c, failure_ttl);
	lruhash_insert(c->table, key->hash, key->data, key->len, &e->node,
	    entry_size(e), failure_may_replace);
}

struct lookup_arg {
	const struct cache		*c;
	const struct msg_query		*q;
	const struct msg_reply_opts	*opts;
	uint64_t			 now;
	uint8_t				*out;
	size_t				 cap;
	struct cache_result		*res;
};

/* RFC 8767 §4: a stale answer's TTLs are all stale-answer-ttl. */
static size_t
stale_answer(const struct lookup_arg *a, const struct cache_entry *e)
{
	struct msg_reply_opts opts = *a->opts;
	struct msg_ttl_rule rule = { 0, LIM(a->c, stale_answer_ttl) };

	opts.ede = MSG_EDE_STALE;
	return entry_write(e, a->q, &rule, &opts, a->out, a->cap);
}

/*
 * RFC 8767 §5's failure recheck timer of e, in ms: stale-refresh-interval
 * times a factor uniform in [3/4, 5/4), drawn when e was stored, so that
 * names that failed together are not retried together.
 */
static uint64_t
recheck_ms(const struct cache *c, const struct cache_entry *e)
{
	uint64_t ms = (uint64_t)LIM(c, stale_refresh_interval) * 1000;

	return ms * 3 / 4 + (ms / 2 * (e->jitter >> 8) >> 8);
}

static enum lruhash_verdict
lookup_visit(struct lruhash_node *n, void *arg)
{
	struct cache_entry *e = ENTRY_OF(n);
	struct lookup_arg *a = arg;
	struct cache_result *res = a->res;
	uint64_t expire = entry_expire(e);

	if (past_stale(a->c, e, a->now))
		return LRUHASH_REMOVE;
	res->kind = e->kind;
	res->ttl = e->ttl;
	res->refresh_failed = e->refresh_failed != 0;
	res->failed_at = e->refresh_failed;
	res->expired_at = expire;
	res->may_refresh = e->refresh_failed == 0 ||
	    a->now >= e->refresh_failed + recheck_ms(a->c, e);
	res->prefetch_point = (uint16_t)((e->jitter & 0xff) << 8);
	res->after_failure = (e->flags & ENTRY_AFTER_FAILURE) != 0;
	/* A client's lookup writes an answer; a peek does not. */
	if (a->out != NULL)
		e->flags |= ENTRY_ASKED;
	res->asked = (e->flags & ENTRY_ASKED) != 0;
	if (e->kind == CACHE_FAILURE) {
		res->state = CACHE_FAILED;
		res->failed_at = e->stored;
		return LRUHASH_KEEP;
	}
	if (a->now < expire) {
		res->state = CACHE_FRESH;
		res->expires_in = expire - a->now;
		if (a->out != NULL)
			res->len = cache_entry_answer(e, a->q, a->opts, a->now,
			    a->out, a->cap);
		return LRUHASH_KEEP;
	}
	res->state = CACHE_STALE;
	if (a->out != NULL)
		res->len = stale_answer(a, e);
	return LRUHASH_KEEP;
}

void
cache_lookup(struct cache *c, const struct cache_key *key,
    const struct msg_query *q, const struct msg_reply_opts *opts,
    uint64_t now, uint8_t *out, size_t cap, struct cache_result *res)
{
	struct lookup_arg a = { c, q, opts, now, out, cap, res };

	memset(res, 0, sizeof(*res));
	res->state = CACHE_ABSENT;
	/* Only a client's lookup is a hit that keeps the entry (a peek for
	 * a prefetch or a report is not). */
	(out != NULL ? lruhash_lookup : lruhash_peek)(c->table, key->hash,
	    key->data, key->len, lookup_visit, &a);
}

struct stats_arg {
	const struct cache	*c;
	uint64_t		 now;
	uint64_t		 stale;
};

static enum lruhash_verdict
stats_visit(struct lruhash_node *n, void *arg)
{
	const struct cache_entry *e = ENTRY_OF(n);
	struct stats_arg *a = arg;

	/* (a failure is never stale: it is past use once expired) */
	if (a->now >= entry_expire(e) && !past_stale(a->c, e, a->now))
		a->stale++;
	return LRUHASH_KEEP;
}

uint64_t
cache_stale_slice(struct cache *c, unsigned i, uint64_t now)
{
	struct stats_arg a = { c, now, 0 };

	lruhash_walk_slice(c->table, i, stats_visit, &a);
	return a.stale;
}

void
cache_stats(struct cache *c, struct cache_stats *out)
{
	struct lruhash_stats ls;

	lruhash_stats(c->table, &ls);
	out->entries = ls.entries;
	out->bytes = ls.bytes;
	out->evictions = ls.evictions;
	out->evictions_probation = ls.evictions_probation;
	out->evictions_main = ls.evictions_main;
	out->max_bytes = c->size;
}

/* Whether qname (qlen octets) is name or, with subtree, below it. */
static int
name_matches(const uint8_t *qname, size_t qlen, const uint8_t *name,
    size_t name_len, int subtree)
{
	size_t off = 0;

	if (!subtree)
		return qlen == name_len && memcmp(qname, name, qlen) == 0;
	/* Label by label, so that "xexample." is not below "example.". */
	for (;;) {
		if (qlen - off == name_len &&
		    memcmp(qname + off, name, name_len) == 0)
			return 1;
		if (qname[off] == 0)
			return 0;
		off += (size_t)qname[off] + 1;
	}
}

struct flush_arg {
	const uint8_t	*name;
	size_t		 name_len;
	uint16_t	 qtype;
	int		 subtree;
	int		(*keep)(const uint8_t *, size_t, uint16_t, void *);
	void		*keep_arg;
};

static enum lruhash_verdict
flush_visit(struct lruhash_node *n, void *arg)
{
	const struct cache_entry *e = ENTRY_OF(n);
	const uint8_t *k = e->wire + MSG_HEADER_LEN;
	struct flush_arg *a = arg;
	size_t qlen = entry_qname_len(e);

	if (a->keep != NULL)
		return a->keep(k, qlen, cachekey_raw_qtype(k, qlen), a->keep_arg) ?
		    LRUHASH_KEEP : LRUHASH_REMOVE;
	if (a->name == NULL)
		return LRUHASH_REMOVE;
	if (!name_matches(k, qlen, a->name, a->name_len, a->subtree) ||
	    (a->qtype != 0 && cachekey_raw_qtype(k, qlen) != a->qtype))
		return LRUHASH_KEEP;
	return LRUHASH_REMOVE;
}

uint64_t
cache_flush(struct cache *c, const uint8_t *name, size_t name_len,
    uint16_t qtype, int subtree)
{
	struct flush_arg a = { name, name_len, qtype, subtree, NULL, NULL };

	return lruhash_walk(c->table, flush_visit, &a);
}

uint64_t
cache_flush_if(struct cache *c,
    int (*keep)(const uint8_t *qname, size_t len, uint16_t qtype, void *arg),
    void *arg)
{
	struct flush_arg a = { NULL, 0, 0, 0, keep, arg };

	return lruhash_walk(c->table, flush_visit, &a);
}

unsigned
cache_slices(const struct cache *c)
{
	return lruhash_slices(c->table);
}

int
cache_key_load(const struct cache *c, const uint8_t *raw, size_t len,
    struct cache_key *key)
{
	uint8_t name[MSG_NAME_MAX];

	/* Starting at 0, no compression pointer can be followed. */
	if (len <= CACHE_KEY_TAIL || len > CACHE_KEY_MAX ||
	    name_unpack(raw, len - CACHE_KEY_TAIL, 0, name) !=
	    (int)(len - CACHE_KEY_TAIL))
		return -1;
	memcpy(key->data, raw, len);
	key->len = len;
	key->hash = lruhash_hash(c->table, key->data, key->len);
	return 0;
}

struct walk_arg {
	const struct cache	*c;
	uint64_t		 now;
	void			(*fn)(const struct cache_record *, void *);
	void			*arg;
	struct cache_key	 key;
	uint32_t		 ttls[UINT16_MAX];	/* n_ttls is 16 bits */
};

/* The key of entry e into *key: its question, then its bits. */
static void
entry_key(const struct cache *c, const struct cache_entry *e,
    struct cache_key *key)
{
	size_t n = entry_qname_len(e) + MSG_QTYPE_QCLASS_LEN;

	memcpy(key->data, e->wire + MSG_HEADER_LEN, n);
	key->data[n] = e->bits;
	key->len = n + 1;
	key->hash = lruhash_hash(c->table, key->data, key->len);
}

static enum lruhash_verdict
walk_visit(struct lruhash_node *node, void *arg)
{
	const struct cache_entry *e = ENTRY_OF(node);
	const uint16_t *offsets = entry_offsets(e);
	struct walk_arg *a = arg;
	struct cache_record rec;
	size_t i, n = wire_rrs(e->wire);

	if (past_stale(a->c, e, a->now))
		return LRUHASH_KEEP;	/* gone at the next lookup */
	entry_key(a->c, e, &a->key);
	for (i = 0; i < n; i++)
		a->ttls[i] = wire_rd32(e->wire + offsets[i]);
	rec.key = &a->key;
	rec.kind = e->kind;
	rec.age = a->now - e->stored;
	rec.ttl = e->ttl;
	rec.failed_age = e->refresh_failed ? a->now - e->refresh_failed : 0;
	rec.ttls = a->ttls;
	rec.n_ttls = n;
	rec.wire = e->kind == CACHE_FAILURE ? NULL : e->wire;
	rec.wire_len = e->kind == CACHE_FAILURE ? 0 : e->len;
	a->fn(&rec, a->arg);
	return LRUHASH_KEEP;
}

void
cache_walk_slice(struct cache *c, unsigned i, uint64_t now,
    void (*fn)(const struct cache_record *rec, void *arg), void *arg)
{
	struct walk_arg *a;

	if ((a = malloc(sizeof(*a))) == NULL)
		return;
	a->c = c;
	a->now = now;
	a->fn = fn;
	a->arg = arg;
	lruhash_walk_slice(c->table, i, walk_visit, a);
	free(a);
}

/*
 * rec's message must be what its key asks, of the kind its rcode and
 * records make it (RFC 2308 §2), with one TTL per RR; the key is made
 * again from the message into *key.
 */
static int
record_valid(const struct cache *c, const struct cache_record *rec,
    const struct msg_response *r, struct cache_key *key)
{
	if (r->opt_index != -1 || r->n_rrs != rec->n_ttls ||
	    rec->kind != kind_of(r) || rec->kind == CACHE_UNCACHEABLE)
		return 0;
	cache_key_make(c, &r->q, cachekey_do(rec->key),
	    cachekey_cd(rec->key), key);
	return key->len == rec->key->len &&
	    memcmp(key->data, rec->key->data, key->len) == 0;
}

/*
 * An imported entry is a copy from before the restart: it replaces only
 * an entry stored longer ago still, never one fetched since (the cache
 * file is read while the workers already answer and fetch); but it does
 * replace a failure, which holds no answer, while the copy may still be
 * served, if only as stale (RFC 8767).
 */
static int
import_replace(const struct lruhash_node *old, struct lruhash_node *new)
{
	if (ENTRY_OF(old)->stored > ENTRY_OF(new)->stored &&
	    ENTRY_OF(old)->kind != CACHE_FAILURE)
		return 0;
	return answer_replace(old, new);
}

int
cache_import(struct cache *c, const struct cache_record *rec, uint64_t now)
{
	struct msg_response r;
	struct cache_entry *e;
	struct cache_key key;
	int ok;

	if (rec->wire == NULL ||
	    msg_response_parse(rec->wire, rec->wire_len, &r) == -1)
		return -1;
	ok = record_valid(c, rec, &r, &key) && rec->age <= now &&
	    (e = entry_alloc(&r)) != NULL;
	if (ok) {
		/* Stored again as if new, under today's TTL rules (max-ttl,
		 * RFC 2308 §5...), but no longer than it had to live. */
		e->kind = (uint8_t)rec->kind;
		fill_ttls(c, e, &r, rec->ttls);
		e->stored = now - rec->age;
		if (rec->failed_age > 0 && rec->failed_age <= now)
			e->refresh_failed = now - rec->failed_age;
		/* Past stale-max-age by now: not worth a slot. */
		if (past_stale(c, e, now))
			e->kind = CACHE_UNCACHEABLE;
		ok = cache_insert_as(c, &key, e, import_replace) == 0;
	}
	msg_response_free(&r);
	return ok ? 0 : -1;
}
