/* cachedump.c: the /cache dump, one RR per line with its entry's state. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <ldns/ldns.h>

#include "cachedump.h"

struct dump {
	struct evbuffer	*out;
	uint64_t	 n;
	uint8_t		 wire[MSG_MAX_LEN];
};

/* "nxdomain" or "nodata" for a negative entry, else NULL. */
static const char *
negative(enum cache_kind kind)
{
	return kind == CACHE_NXDOMAIN ? "nxdomain" : kind == CACHE_NODATA ?
	    "nodata" : NULL;
}

/*
 * The RRs of l, each with its stored TTL (rec's *i-th, *i counting across
 * sections) less elapsed s, floored at 0.
 */
static void
dump_rrs(struct evbuffer *out, ldns_rr_list *l,
    const struct cache_record *rec, uint32_t elapsed, size_t *i,
    const char *state)
{
	ldns_rr *rr;
	char *text;
	size_t j, n;

	for (j = 0; j < ldns_rr_list_rr_count(l) && *i < rec->n_ttls;
	    j++, (*i)++) {
		rr = ldns_rr_list_rr(l, j);
		ldns_rr_set_ttl(rr, rec->ttls[*i] > elapsed ?
		    rec->ttls[*i] - elapsed : 0);
		if ((text = ldns_rr2str(rr)) == NULL)
			continue;
		n = strlen(text);
		while (n > 0 && text[n - 1] == '\n')
			n--;
		evbuffer_add_printf(out, "%.*s\t; %s\n", (int)n, text, state);
		free(text);
	}
}

/*
 * The message of rec with its TTLs aged by elapsed s. Its question gets
 * the key's folded qname, as an answer to a client asking in lower case
 * would: names compressed to it then read in lower case too.
 */
static void
dump_message(struct dump *d, const struct cache_record *rec,
    const struct msg_question *q, uint32_t elapsed, const char *state)
{
	ldns_pkt *p;
	size_t i = 0;

	if (rec->wire_len > sizeof(d->wire) ||
	    rec->wire_len < MSG_HEADER_LEN + (size_t)q->qname_len)
		return;
	memcpy(d->wire, rec->wire, rec->wire_len);
	memcpy(d->wire + MSG_HEADER_LEN, q->qname, q->qname_len);
	if (ldns_wire2pkt(&p, d->wire, rec->wire_len) != LDNS_STATUS_OK)
		return;
	dump_rrs(d->out, ldns_pkt_answer(p), rec, elapsed, &i, state);
	dump_rrs(d->out, ldns_pkt_authority(p), rec, elapsed, &i, state);
	dump_rrs(d->out, ldns_pkt_additional(p), rec, elapsed, &i, state);
	ldns_pkt_free(p);
}

static void
dump_record(const struct cache_record *rec, void *arg)
{
	struct dump *d = arg;
	uint64_t life = (uint64_t)rec->ttl * 1000;
	const char *neg = negative(rec->kind);
	char name[1024], state[1200];
	struct msg_question q;
	char *type;

	d->n++;
	cachekey_question(rec->key, &q);
	msg_name_to_str(q.qname, q.qname_len, name, sizeof(name));
	if ((type = ldns_rr_type2str(q.qtype)) == NULL)
		return;
	if (rec->kind == CACHE_FAILURE)
		evbuffer_add_printf(d->out, "; failure %s %s %llus\n", name,
		    type, (unsigned long long)((life - rec->age) / 1000));
	else if (rec->age < life) {
		snprintf(state, sizeof(state), "%s, %s %s",
		    neg != NULL ? neg : "fresh", name, type);
		dump_message(d, rec, &q, (uint32_t)(rec->age / 1000), state);
	} else {
		snprintf(state, sizeof(state), "%s%sstale %llus, %s %s",
		    neg != NULL ? neg : "", neg != NULL ? " " : "",
		    (unsigned long long)((rec->age - life) / 1000), name, type);
		dump_message(d, rec, &q, UINT32_MAX, state);
	}
	free(type);
}

uint64_t
cachedump_slice(struct cache *c, unsigned i, uint64_t now,
    struct evbuffer *out)
{
	struct dump *d;
	uint64_t n;

	if ((d = malloc(sizeof(*d))) == NULL)
		return 0;
	d->out = out;
	d->n = 0;
	cache_walk_slice(c, i, now, dump_record, d);
	n = d->n;
	free(d);
	return n;
}
