/* cache.c: what a DNS answer may be cached as, for how long, and as what. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "cache.h"

/* Shards spread lock contention; each must still hold large answers. */
#define CACHE_SHARDS		16
#define CACHE_SHARD_MIN		(256 * 1024)

struct cache {
	struct lruhash		*table;
	struct cache_limits	 lim;
};

struct cache_entry {
	enum cache_kind		 kind;
	uint64_t		 stored;	/* ms */
	uint64_t		 expire;	/* ms */
	uint32_t		 ttl;		/* seconds, lifetime when stored */
	uint64_t		 refresh_failed; /* ms; 0: no failure since */
	struct msg_template	 tmpl;
	/* struct msg_ttl_slot[n_ttls] and the wire follow */
};

static void
entry_free_value(void *value)
{
	free(value);
}

struct cache *
cache_new(uint64_t size_bytes, const struct cache_limits *lim)
{
	struct cache *c;
	unsigned shards = CACHE_SHARDS;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	while (shards > 1 && size_bytes / shards < CACHE_SHARD_MIN)
		shards /= 2;
	if ((c->table = lruhash_new(shards, size_bytes, entry_free_value)) ==
	    NULL) {
		free(c);
		return NULL;
	}
	c->lim = *lim;
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
	c->lim = *lim;
}

void
cache_key_make(const struct cache *c, const struct msg_question *q,
    int do_bit, int cd_bit, struct cache_key *key)
{
	size_t n = q->qname_len;

	memcpy(key->data, q->qname, n);
	msg_name_fold(key->data, n);
	key->data[n] = q->qtype >> 8;
	key->data[n + 1] = q->qtype & 0xff;
	key->data[n + 2] = q->qclass >> 8;
	key->data[n + 3] = q->qclass & 0xff;
	key->data[n + 4] = (do_bit ? 1 : 0) | (cd_bit ? 2 : 0);
	key->len = n + 5;
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
		return min32(min32(ttl, c->lim.max_negative_ttl),
		    c->lim.max_ttl);
	}
	if (ttl < c->lim.min_ttl && kind == CACHE_POSITIVE)
		ttl = c->lim.min_ttl;
	return min32(ttl, c->lim.max_ttl);
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

static void
fill_ttls(const struct cache *c, struct cache_entry *e,
    const struct msg_response *r, struct msg_ttl_slot *slots)
{
	uint32_t lifetime = UINT32_MAX, ttl;
	size_t i, n = 0;
	int zero = 0;

	for (i = 0; i < r->n_rrs; i++) {
		if ((long)i == r->opt_index)
			continue;
		ttl = stored_ttl(c, e->kind, r, i);
		slots[n].offset = r->rrs[i].ttl_offset;
		slots[n++].ttl = ttl;
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
	e->tmpl.n_ttls = (uint16_t)n;
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

struct cache_entry *
cache_entry_new(const struct cache *c, const struct msg_response *r,
    uint64_t now)
{
	struct cache_entry *e;
	struct msg_ttl_slot *slots;
	uint8_t *wire;
	long end;
	size_t n = r->n_rrs - (r->opt_index != -1);

	if ((end = wire_end(r)) == -1)
		return NULL;
	e = malloc(sizeof(*e) + n * sizeof(*slots) + (size_t)end);
	if (e == NULL)
		return NULL;
	slots = (struct msg_ttl_slot *)(e + 1);
	wire = (uint8_t *)(slots + n);
	memcpy(wire, r->pkt, (size_t)end);
	e->kind = kind_of(r);
	e->stored = now;
	e->refresh_failed = 0;
	fill_ttls(c, e, r, slots);
	e->expire = now + (uint64_t)e->ttl * 1000;
	e->tmpl.wire = wire;
	e->tmpl.len = (uint16_t)end;
	e->tmpl.additional_offset = additional_offset(r, (size_t)end);
	memcpy(e->tmpl.counts, (uint16_t[4]){ 0, (uint16_t)r->counts[1],
	    (uint16_t)r->counts[2], (uint16_t)(r->counts[3] -
	    (r->opt_index != -1)) }, sizeof(e->tmpl.counts));
	e->tmpl.ttls = slots;
	e->tmpl.rcode = r->rcode & 0xf;
	e->tmpl.ad = (r->flags & MSG_FLAG_AD) != 0;
	return e;
}

enum cache_kind
cache_entry_kind(const struct cache_entry *e)
{
	return e->kind;
}

uint32_t
cache_entry_ttl(const struct cache_entry *e)
{
	return e->ttl;
}

static size_t
entry_size(const struct cache_entry *e)
{
	return sizeof(*e) + e->tmpl.n_ttls * sizeof(struct msg_ttl_slot) +
	    e->tmpl.len;
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
	return msg_write_answer(&e->tmpl, q, &rule, opts, out, cap);
}

void
cache_entry_free(struct cache_entry *e)
{
	free(e);
}

int
cache_insert(struct cache *c, const struct cache_key *key,
    struct cache_entry *e)
{
	if (e->kind == CACHE_UNCACHEABLE) {
		free(e);
		return -1;
	}
	return lruhash_insert(c->table, key->hash, key->data, key->len, e,
	    entry_size(e), NULL);
}

/* A failure may only displace another failure (RFC 9520 §3.2). */
static int
failure_may_replace(const void *old, const void *new)
{
	(void)new;
	return ((const struct cache_entry *)old)->kind == CACHE_FAILURE;
}

/* ms past expiry during which e may still be served (RFC 8767 §5). */
static uint64_t
stale_window(const struct cache *c, const struct cache_entry *e)
{
	return e->kind == CACHE_FAILURE ? 0 :
	    (uint64_t)c->lim.stale_max_age * 1000;
}

struct mark_arg {
	const struct cache	*c;
	uint64_t		 now;
	int			 kept;
};

static enum lruhash_verdict
mark_visit(const void *key, size_t keylen, void *value, void *arg)
{
	struct cache_entry *e = value;
	struct mark_arg *a = arg;

	(void)key;
	(void)keylen;
	if (e->kind == CACHE_FAILURE)
		return LRUHASH_KEEP;	/* the new failure replaces it */
	if (a->now >= e->expire + stale_window(a->c, e))
		return LRUHASH_REMOVE;
	e->refresh_failed = a->now;
	a->kept = 1;
	return LRUHASH_KEEP;
}

void
cache_refresh_failed(struct cache *c, const struct cache_key *key,
    uint64_t now)
{
	struct mark_arg a = { c, now, 0 };
	struct cache_entry *e;

	lruhash_lookup(c->table, key->hash, key->data, key->len, mark_visit,
	    &a);
	if (a.kept || (e = calloc(1, sizeof(*e))) == NULL)
		return;
	e->kind = CACHE_FAILURE;
	e->stored = now;
	e->ttl = c->lim.failure_ttl;
	e->expire = now + (uint64_t)e->ttl * 1000;
	lruhash_insert(c->table, key->hash, key->data, key->len, e,
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
	struct msg_ttl_rule rule = { 0, a->c->lim.stale_answer_ttl };

	opts.ede = MSG_EDE_STALE;
	return msg_write_answer(&e->tmpl, a->q, &rule, &opts, a->out, a->cap);
}

static enum lruhash_verdict
lookup_visit(const void *key, size_t keylen, void *value, void *arg)
{
	struct cache_entry *e = value;
	struct lookup_arg *a = arg;
	struct cache_result *res = a->res;

	(void)key;
	(void)keylen;
	if (a->now >= e->expire + stale_window(a->c, e))
		return LRUHASH_REMOVE;
	res->kind = e->kind;
	res->ttl = e->ttl;
	res->refresh_failed = e->refresh_failed != 0;
	res->may_refresh = e->refresh_failed == 0 || a->now >=
	    e->refresh_failed + (uint64_t)a->c->lim.stale_refresh_interval *
	    1000;
	if (e->kind == CACHE_FAILURE) {
		res->state = CACHE_FAILED;
		return LRUHASH_KEEP;
	}
	if (a->now < e->expire) {
		res->state = CACHE_FRESH;
		res->expires_in = e->expire - a->now;
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
	lruhash_lookup(c->table, key->hash, key->data, key->len, lookup_visit,
	    &a);
}

void
cache_stats(struct cache *c, struct lruhash_stats *out)
{
	lruhash_stats(c->table, out);
}
