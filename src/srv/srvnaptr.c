/* srvnaptr.c: RFC 3958 S-NAPTR: tags, flags, order, and the walk. */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dnsdamper/srv.h"
#include "dnsdamper/srvnaptr.h"

static int
is_alpha(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int
is_alnum(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9');
}

static int
is_sym(int c)
{
	return c == '+' || c == '-' || c == '.';
}

/*
 * Whether tag[0..len) is a tag of §6.5: "x-" 1*30ALPHANUMSYM, or
 * ALPHA *31ALPHANUMSYM (a service) or ALPHA *31ALPHANUM (a protocol).
 */
static int
tag_valid(const char *tag, size_t len, int protocol)
{
	size_t i;

	if (len == 0 || len > SRVNAPTR_TAG_MAX || !is_alpha(tag[0]))
		return 0;
	if (len > 2 && srv_casecmp(tag, "x-", 2) == 0)
		protocol = 0;		/* experimental tags allow SYM */
	for (i = 1; i < len; i++)
		if (!is_alnum(tag[i]) && (protocol || !is_sym(tag[i])))
			return 0;
	return 1;
}

static int
tag_eq(const char *tag, size_t len, const char *want)
{
	return strlen(want) == len && srv_casecmp(tag, want, len) == 0;
}

int
srvnaptr_offers(const char *services, const char *service,
    const char *protocol)
{
	const char *tag = services, *end;
	size_t len;
	int first = 1, named = 0, listed = 0;

	for (;;) {
		end = strchr(tag, ':');
		len = end != NULL ? (size_t)(end - tag) : strlen(tag);
		if (!tag_valid(tag, len, !first))
			return 0;
		if (first)
			named = tag_eq(tag, len, service);
		else
			listed |= tag_eq(tag, len, protocol);
		if (end == NULL)
			break;
		tag = end + 1;
		first = 0;
	}
	return named && listed;
}

enum srvnaptr_step
srvnaptr_step(const struct srvnaptr_rr *rr)
{
	if (rr->regexp[0] != '\0' || srv_is_root(rr->replacement))
		return SRVNAPTR_SKIP;
	if (rr->flags[0] == '\0')
		return SRVNAPTR_NAPTR;
	if (rr->flags[1] != '\0')
		return SRVNAPTR_SKIP;
	if (rr->flags[0] == 'S' || rr->flags[0] == 's')
		return SRVNAPTR_SRV;
	if (rr->flags[0] == 'A' || rr->flags[0] == 'a')
		return SRVNAPTR_ADDRESS;
	return SRVNAPTR_SKIP;
}

static int
order_cmp(const void *va, const void *vb)
{
	const struct srvnaptr_rr *a = va, *b = vb;
	int c;

	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	if (a->preference != b->preference)
		return a->preference < b->preference ? -1 : 1;
	if ((c = srv_casecmp(a->replacement, b->replacement, SIZE_MAX)) != 0)
		return c;
	if ((c = strcmp(a->flags, b->flags)) != 0)
		return c;
	return strcmp(a->services, b->services);
}

void
srvnaptr_order(struct srvnaptr_rr *rrs, size_t n)
{
	if (n > 1)
		qsort(rrs, n, sizeof(*rrs), order_cmp);
}

static int
usable(const struct srvnaptr_rr *rr, const char *service,
    const char *protocol)
{
	return srvnaptr_step(rr) != SRVNAPTR_SKIP &&
	    srvnaptr_offers(rr->services, service, protocol);
}

size_t
srvnaptr_filter(struct srvnaptr_rr *rrs, size_t n, const char *service,
    const char *protocol)
{
	size_t i, kept = 0;

	for (i = 0; i < n; i++)
		if (usable(&rrs[i], service, protocol))
			rrs[kept++] = rrs[i];
	return kept;
}

size_t
srvnaptr_protocols(const struct srvnaptr_rr *rrs, size_t n,
    const char *service, const char *const *wanted, size_t nwanted,
    const char **out)
{
	size_t i, j, k = 0;

	for (i = 0; i < nwanted; i++)
		for (j = 0; j < n; j++)
			if (usable(&rrs[j], service, wanted[i])) {
				out[k++] = wanted[i];
				break;
			}
	return k;
}

static int	follow(struct srvnaptr_walk *, const struct srvnaptr_rr *,
		    size_t, const char *, unsigned);

/* The NAPTR lookup of a non-terminal record's replacement, depth deep. */
static int
descend(struct srvnaptr_walk *w, const char *qname, const char *protocol,
    unsigned depth)
{
	const struct srvnaptr_rr *rrs;
	size_t n;

	if (depth > SRVNAPTR_DEPTH_MAX) {
		w->too_deep++;
		return 0;
	}
	if (w->lookups >= SRVNAPTR_LOOKUPS_MAX) {
		w->over_budget++;
		return 0;
	}
	w->lookups++;
	if (w->lookup(w->arg, qname, &rrs, &n) != SRVNAPTR_FOUND) {
		w->failed++;		/* §2.2.4: backtrack */
		return 0;
	}
	return follow(w, rrs, n, protocol, depth);
}

/* Pursue the records of one RRset, found depth lookups deep, in order. */
static int
follow(struct srvnaptr_walk *w, const struct srvnaptr_rr *rrs, size_t n,
    const char *protocol, unsigned depth)
{
	struct srvnaptr_rr *set;
	enum srvnaptr_step step;
	size_t i, m;
	int r = 0;

	if ((set = calloc(n > 0 ? n : 1, sizeof(*set))) == NULL)
		return -1;
	memcpy(set, rrs, n * sizeof(*set));
	m = srvnaptr_filter(set, n, w->service, protocol);
	if (m == 0 && depth > 1)
		w->failed++;		/* nothing usable: backtrack */
	srvnaptr_order(set, m);
	for (i = 0; i < m && r == 0; i++) {
		step = srvnaptr_step(&set[i]);
		if (step == SRVNAPTR_NAPTR)
			r = descend(w, set[i].replacement, protocol, depth + 1);
		else
			r = w->terminal(w->arg, &set[i], step, protocol);
	}
	free(set);
	return r;
}

int
srvnaptr_walk(struct srvnaptr_walk *w, const char *domain)
{
	const struct srvnaptr_rr *rrs;
	const char **chosen;
	enum srvnaptr_lookup first;
	size_t n, np, i;
	int r = 0;

	w->lookups = 1;
	w->too_deep = w->over_budget = w->failed = 0;
	if ((first = w->lookup(w->arg, domain, &rrs, &n)) != SRVNAPTR_FOUND)
		return first;
	if ((chosen = calloc(w->nprotocols > 0 ? w->nprotocols : 1,
	    sizeof(*chosen))) == NULL)
		return -1;
	np = srvnaptr_protocols(rrs, n, w->service, w->protocols,
	    w->nprotocols, chosen);
	for (i = 0; i < np && r == 0; i++)
		r = follow(w, rrs, n, chosen[i], 1);
	free(chosen);
	if (r == -1)
		return -1;
	return np > 0 ? SRVNAPTR_FOUND : SRVNAPTR_NODATA;
}
