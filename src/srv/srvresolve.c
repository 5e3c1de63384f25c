/* srvresolve.c: SRV and S-NAPTR lookups down to the candidates' addresses. */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "dnsdamper/srv.h"
#include "dnsdamper/srvnaptr.h"
#include "dnsdamper/srvresolve.h"
#include "srvanswer.h"
#include "srvexchange.h"

/* A NAPTR RRset already looked up in this walk. */
struct memo {
	ldns_rdf		*qname;
	enum srvnaptr_lookup	 status;
	struct srvnaptr_rr	*rrs;
	size_t			 n;
};

/* A terminal S-NAPTR record, in the order the walk met them. */
struct terminal {
	enum srvnaptr_step	 step;
	ldns_rdf		*replacement;
	char			*protocol;
};

/* One resolution's working memory, all of it freed at its end. */
struct work {
	const struct srvresolve_options	*o;
	struct srvresolve_result	*res;
	/* per candidate: the SRV answer, for its additional section */
	const ldns_pkt			*srcpkt[SRVRESOLVE_CANDIDATES_MAX];
	ldns_pkt			**pkts;		/* answers kept */
	size_t				 npkts;
	void				**blocks;	/* record strings */
	size_t				 nblocks;
	struct memo			 memo[SRVNAPTR_LOOKUPS_MAX];
	size_t				 nmemo;
	struct terminal			 term[SRVNAPTR_LOOKUPS_MAX];
	size_t				 nterm;
	int				 failed;	/* a lookup failed */
	int				 error;		/* errno of a failure in
							   a callback */
	int				 unavailable;	/* met a lone "." */
};

static int
keep_block(struct work *w, void *block)
{
	void **blocks;

	if ((blocks = realloc(w->blocks, (w->nblocks + 1) * sizeof(*blocks))) ==
	    NULL) {
		free(block);
		return -1;
	}
	w->blocks = blocks;
	w->blocks[w->nblocks++] = block;
	return 0;
}

/*
 * Ask the questions q[0..n) at once. Their answers stay in q[i].answer,
 * owned by w from now on.
 */
static int
ask_many(struct work *w, struct srvexchange_query *q, size_t n)
{
	ldns_pkt **pkts;
	size_t i;

	if ((pkts = realloc(w->pkts, (w->npkts + n + 1) * sizeof(*pkts))) ==
	    NULL)
		return -1;
	w->pkts = pkts;
	if (srvexchange_run(&w->o->server, w->o->server_len,
	    w->o->timeout_ms > 0 ? w->o->timeout_ms : SRVRESOLVE_TIMEOUT_MS,
	    q, n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (q[i].answer != NULL)
			w->pkts[w->npkts++] = q[i].answer;
	return 0;
}

static enum srvresolve_status
status_of(enum srvanswer_status s)
{
	switch (s) {
	case SRVANSWER_OK:
		return SRVRESOLVE_OK;
	case SRVANSWER_NXDOMAIN:
		return SRVRESOLVE_NXDOMAIN;
	case SRVANSWER_NODATA:
		return SRVRESOLVE_NODATA;
	default:
		return SRVRESOLVE_SERVFAIL;
	}
}

/*
 * The records of list converted by conv into out, room for as many
 * elements of size sz as list has; their strings are kept in w. Sets *n
 * to how many: malformed records are left out.
 */
static int
convert(struct work *w, const ldns_rr_list *list,
    void *(*conv)(const ldns_rr *, void *), size_t sz, void *out, size_t *n)
{
	size_t i;
	void *block;

	*n = 0;
	for (i = 0; list != NULL && i < ldns_rr_list_rr_count(list); i++) {
		if ((block = conv(ldns_rr_list_rr(list, i),
		    (char *)out + *n * sz)) != NULL) {
			if (keep_block(w, block) == -1)
				return -1;
			(*n)++;
		} else if (errno == ENOMEM)
			return -1;
	}
	return 0;
}

/* Room for the records of list (at least one element), zeroed. */
static void *
room(const ldns_rr_list *list, size_t sz)
{
	return calloc(list != NULL ? ldns_rr_list_rr_count(list) + 1 : 1, sz);
}

static void *
conv_srv(const ldns_rr *rr, void *out)
{
	return srvanswer_srv(rr, out);
}

static void *
conv_naptr(const ldns_rr *rr, void *out)
{
	return srvanswer_naptr(rr, out);
}

/* A new candidate, or NULL: past the bound (counted) or ENOMEM (errno). */
static struct srvresolve_candidate *
add_candidate(struct work *w, const char *target, const char *protocol,
    const ldns_pkt *srcpkt)
{
	struct srvresolve_result *res = w->res;
	struct srvresolve_candidate *c;

	if (res->ncand == SRVRESOLVE_CANDIDATES_MAX) {
		res->dropped++;
		errno = 0;
		return NULL;
	}
	if (res->cand == NULL && (res->cand = calloc(SRVRESOLVE_CANDIDATES_MAX,
	    sizeof(*res->cand))) == NULL)
		return NULL;
	w->srcpkt[res->ncand] = srcpkt;
	c = &res->cand[res->ncand++];
	if ((c->target = strdup(target)) == NULL ||
	    (protocol != NULL && (c->protocol = strdup(protocol)) == NULL))
		return NULL;
	return c;
}

/*
 * The SRV answer pkt to qname as candidates, in try order, after those
 * already there; a lone "." is noted instead. Sets *status to what the
 * answer says; returns 0, or -1 with errno.
 */
static int
add_srv_set(struct work *w, const ldns_pkt *pkt, const ldns_rdf *qname,
    const char *protocol, enum srvanswer_status *status)
{
	const ldns_rdf *owner;
	ldns_rr_list *list;
	struct srv_rr *rrs = NULL;
	const struct srv_rr *rr;
	struct srvresolve_candidate *c;
	struct srv_iter it;
	size_t n;
	int r = -1;

	if ((*status = srvanswer_read(pkt, qname, LDNS_RR_TYPE_SRV, &owner,
	    &list)) != SRVANSWER_OK)
		return 0;
	if ((rrs = room(list, sizeof(*rrs))) == NULL ||
	    convert(w, list, conv_srv, sizeof(*rrs), rrs, &n) == -1)
		goto out;
	n = srvanswer_srv_unique(rrs, n);
	if (srv_unavailable(rrs, n))
		w->unavailable = 1;
	else if (n == 0)
		*status = SRVANSWER_NODATA;	/* only malformed records */
	srv_iter_init(&it, rrs, srv_unavailable(rrs, n) ? 0 : n, w->o->rnd);
	while ((rr = srv_iter_next(&it)) != NULL) {
		if ((c = add_candidate(w, rr->target, protocol, pkt)) == NULL) {
			if (errno != 0)
				goto out;
			continue;
		}
		c->via = SRVRESOLVE_VIA_SRV;
		c->priority = rr->priority;
		c->weight = rr->weight;
		c->port = rr->port;
	}
	r = 0;
out:
	free(rrs);
	ldns_rr_list_free(list);
	return r;
}

/* One address lookup: a candidate's target and one address type. */
struct lookup {
	size_t		 ci;
	ldns_rr_type	 type;
	ldns_rdf	*target;
	ldns_rr_list	*rrs;		/* from the additional section, then
					   from the answer */
	size_t		 qi;		/* its question, when it needed one */
};

/* Fold one lookup's outcome into its candidate. */
static int
apply(struct srvresolve_candidate *c, const struct lookup *l,
    enum srvanswer_status st, const ldns_rdf *owner)
{
	struct sockaddr_storage *addrs;
	socklen_t len;
	size_t i, n = ldns_rr_list_rr_count(l->rrs);

	if (st == SRVANSWER_FAILED)
		c->lookup = SRVRESOLVE_SERVFAIL;
	else if (st == SRVANSWER_NXDOMAIN && c->lookup != SRVRESOLVE_SERVFAIL)
		c->lookup = SRVRESOLVE_NXDOMAIN;
	if (c->cname == NULL && ldns_dname_compare(owner, l->target) != 0 &&
	    (c->cname = ldns_rdf2str(owner)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (n == 0)
		return 0;
	if ((addrs = realloc(c->addrs, (c->naddrs + n) * sizeof(*addrs))) ==
	    NULL)
		return -1;
	c->addrs = addrs;
	for (i = 0; i < n; i++)
		if (srvanswer_address(ldns_rr_list_rr(l->rrs, i), c->port,
		    &c->addrs[c->naddrs], &len) == 0)
			c->naddrs++;
	return 0;
}

/* Whether addresses of type are asked for (srvresolve_options family). */
static int
wanted(int family, ldns_rr_type type)
{
	return family == AF_UNSPEC ||
	    family == (type == LDNS_RR_TYPE_A ? AF_INET : AF_INET6);
}

/* The question of an earlier lookup l[0..nl) of that name and type, or
 * SIZE_MAX: a target listed twice (other ports) is asked for once. */
static size_t
same_question(const struct lookup *l, size_t nl, const ldns_rdf *target,
    ldns_rr_type type)
{
	size_t i;

	for (i = 0; i < nl; i++)
		if (l[i].rrs == NULL && l[i].type == type &&
		    ldns_dname_compare(l[i].target, target) == 0)
			return l[i].qi;
	return SIZE_MAX;
}

/*
 * The lookups of every candidate, AAAA before A, and the questions for
 * those that the additional sections do not answer, one per name and
 * type.
 */
static int
plan_lookups(struct work *w, struct lookup *l, size_t *nl,
    struct srvexchange_query *q, size_t *nq)
{
	static const ldns_rr_type types[] = { LDNS_RR_TYPE_AAAA,
	    LDNS_RR_TYPE_A };
	struct srvresolve_candidate *c;
	size_t ci, t;

	*nl = *nq = 0;
	for (ci = 0; ci < w->res->ncand; ci++)
		for (t = 0; t < 2; t++) {
			c = &w->res->cand[ci];
			c->lookup = SRVRESOLVE_NODATA;
			if (!wanted(w->o->family, types[t]))
				continue;
			l[*nl].ci = ci;
			l[*nl].type = types[t];
			if ((l[*nl].target = ldns_dname_new_frm_str(c->target)) ==
			    NULL) {
				errno = ENOMEM;
				return -1;
			}
			if (w->srcpkt[ci] != NULL)
				l[*nl].rrs = srvanswer_additional(w->srcpkt[ci],
				    l[*nl].target, types[t]);
			if (l[*nl].rrs == NULL && (l[*nl].qi = same_question(l,
			    *nl, l[*nl].target, types[t])) == SIZE_MAX) {
				l[*nl].qi = *nq;
				q[*nq].qname = l[*nl].target;
				q[(*nq)++].qtype = types[t];
			}
			(*nl)++;
		}
	return 0;
}

/* The addresses of every candidate's target (RFC 2782: A and AAAA). */
static int
resolve_addresses(struct work *w)
{
	struct lookup *l;
	struct srvexchange_query *q;
	const ldns_rdf *owner;
	enum srvanswer_status st;
	size_t nl = 0, nq, i;
	int r = -1;

	l = calloc(2 * w->res->ncand + 1, sizeof(*l));
	q = calloc(2 * w->res->ncand + 1, sizeof(*q));
	if (l == NULL || q == NULL || plan_lookups(w, l, &nl, q, &nq) == -1 ||
	    ask_many(w, q, nq) == -1)
		goto out;
	for (i = 0; i < nl; i++) {
		owner = l[i].target;
		if (l[i].rrs != NULL)
			st = SRVANSWER_OK;
		else
			st = srvanswer_read(q[l[i].qi].answer, l[i].target,
			    l[i].type, &owner, &l[i].rrs);
		if (apply(&w->res->cand[l[i].ci], &l[i], st, owner) == -1)
			goto out;
	}
	for (i = 0; i < w->res->ncand; i++)
		if (w->res->cand[i].naddrs > 0)
			w->res->cand[i].lookup = SRVRESOLVE_OK;
	r = 0;
out:
	for (i = 0; l != NULL && i < nl; i++) {
		ldns_rr_list_free(l[i].rrs);
		ldns_rdf_deep_free(l[i].target);
	}
	free(l);
	free(q);
	return r;
}

/* The status of a result whose lookups all ran (see srvresolve.h). */
static enum srvresolve_status
final_status(const struct work *w)
{
	size_t i;
	int failed = w->failed;

	for (i = 0; i < w->res->ncand; i++) {
		if (w->res->cand[i].naddrs > 0)
			return SRVRESOLVE_OK;
		if (w->res->cand[i].lookup == SRVRESOLVE_SERVFAIL)
			failed = 1;
	}
	if (failed)
		return SRVRESOLVE_SERVFAIL;
	if (w->unavailable && w->res->ncand == 0)
		return SRVRESOLVE_UNAVAILABLE;
	return SRVRESOLVE_NODATA;
}

static void
work_init(struct work *w, const struct srvresolve_options *o,
    struct srvresolve_result *res)
{
	memset(w, 0, sizeof(*w));
	memset(res, 0, sizeof(*res));
	w->o = o;
	w->res = res;
}

/* Free w; on failure also *res, keeping errno. */
static int
work_end(struct work *w, int r)
{
	int saved = errno;
	size_t i;

	for (i = 0; i < w->npkts; i++)
		ldns_pkt_free(w->pkts[i]);
	for (i = 0; i < w->nblocks; i++)
		free(w->blocks[i]);
	for (i = 0; i < w->nmemo; i++) {
		ldns_rdf_deep_free(w->memo[i].qname);
		free(w->memo[i].rrs);
	}
	for (i = 0; i < w->nterm; i++) {
		ldns_rdf_deep_free(w->term[i].replacement);
		free(w->term[i].protocol);
	}
	free(w->pkts);
	free(w->blocks);
	if (r == -1)
		srvresolve_free(w->res);
	errno = saved;
	return r;
}

int
srvresolve_srv(const struct srvresolve_options *o, const char *qname,
    struct srvresolve_result *res)
{
	struct srvexchange_query q = { NULL, LDNS_RR_TYPE_SRV, NULL };
	enum srvanswer_status st;
	struct work w;
	ldns_rdf *name;
	int r = -1;

	work_init(&w, o, res);
	if ((name = ldns_dname_new_frm_str(qname)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	q.qname = name;
	if (ask_many(&w, &q, 1) == -1 ||
	    add_srv_set(&w, q.answer, name, NULL, &st) == -1)
		goto out;
	if (st != SRVANSWER_OK)
		res->status = status_of(st);
	else if (w.unavailable)
		res->status = SRVRESOLVE_UNAVAILABLE;
	else if (resolve_addresses(&w) == -1)
		goto out;
	else
		res->status = final_status(&w);
	r = 0;
out:
	ldns_rdf_deep_free(name);
	return work_end(&w, r);
}

/* srvnaptr_walk's lookup: a NAPTR RRset, asked once per walk. */
static enum srvnaptr_lookup
naptr_lookup(void *arg, const char *qname, const struct srvnaptr_rr **rrs,
    size_t *n)
{
	struct work *w = arg;
	struct srvexchange_query q = { NULL, LDNS_RR_TYPE_NAPTR, NULL };
	const ldns_rdf *owner;
	ldns_rr_list *list;
	struct memo *m;
	ldns_rdf *name;
	size_t i;

	if ((name = ldns_dname_new_frm_str(qname)) == NULL)
		return SRVNAPTR_FAILED;
	for (i = 0; i < w->nmemo; i++)
		if (ldns_dname_compare(w->memo[i].qname, name) == 0) {
			ldns_rdf_deep_free(name);
			m = &w->memo[i];
			goto found;
		}
	if (w->nmemo == SRVNAPTR_LOOKUPS_MAX) {	/* the walk's own bound */
		ldns_rdf_deep_free(name);
		return SRVNAPTR_FAILED;
	}
	m = &w->memo[w->nmemo++];
	m->qname = name;
	q.qname = name;
	m->status = SRVNAPTR_FAILED;
	if (ask_many(w, &q, 1) == -1) {
		w->error = errno;
		return m->status;
	}
	switch (srvanswer_read(q.answer, name, LDNS_RR_TYPE_NAPTR, &owner,
	    &list)) {
	case SRVANSWER_OK:
		m->status = SRVNAPTR_FOUND;
		break;
	case SRVANSWER_NXDOMAIN:
		m->status = SRVNAPTR_NXDOMAIN;
		break;
	case SRVANSWER_NODATA:
		m->status = SRVNAPTR_NODATA;
		break;
	default:
		break;
	}
	if ((m->rrs = room(list, sizeof(*m->rrs))) == NULL ||
	    convert(w, list, conv_naptr, sizeof(*m->rrs), m->rrs, &m->n) == -1) {
		w->error = errno;
		m->status = SRVNAPTR_FAILED;
	}
	ldns_rr_list_free(list);
	if (m->status == SRVNAPTR_FAILED)
		w->failed = 1;
found:
	*rrs = m->rrs;
	*n = m->n;
	return m->status;
}

/* srvnaptr_walk's terminal: kept, to be looked up after the walk. */
static int
naptr_terminal(void *arg, const struct srvnaptr_rr *rr,
    enum srvnaptr_step step, const char *protocol)
{
	struct work *w = arg;
	struct terminal *t;

	if (w->nterm == SRVNAPTR_LOOKUPS_MAX) {
		w->res->naptr_cut++;
		return 0;
	}
	t = &w->term[w->nterm++];
	t->step = step;
	if ((t->replacement = ldns_dname_new_frm_str(rr->replacement)) ==
	    NULL || (t->protocol = strdup(protocol)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* A candidate for an "A" record: its replacement, the default port. */
static int
add_address_terminal(struct work *w, const struct terminal *t)
{
	struct srvresolve_candidate *c;
	uint16_t port;
	char *name;

	port = w->o->default_port == NULL ? 0 :
	    w->o->default_port(w->o->default_port_arg, t->protocol);
	if (port == 0)
		return 0;
	if ((name = ldns_rdf2str(t->replacement)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if ((c = add_candidate(w, name, t->protocol, NULL)) != NULL) {
		c->via = SRVRESOLVE_VIA_NAPTR_A;
		c->port = port;
	}
	free(name);
	return c != NULL || errno == 0 ? 0 : -1;
}

/* The terminal records in order: SRV RRsets (asked at once), "A" targets. */
static int
add_terminals(struct work *w)
{
	struct srvexchange_query *q;
	enum srvanswer_status st;
	size_t i, nq = 0;
	int r = -1;

	if ((q = calloc(w->nterm + 1, sizeof(*q))) == NULL)
		return -1;
	for (i = 0; i < w->nterm; i++)
		if (w->term[i].step == SRVNAPTR_SRV) {
			q[nq].qname = w->term[i].replacement;
			q[nq++].qtype = LDNS_RR_TYPE_SRV;
		}
	if (ask_many(w, q, nq) == -1)
		goto out;
	for (i = 0, nq = 0; i < w->nterm; i++) {
		if (w->term[i].step != SRVNAPTR_SRV) {
			if (add_address_terminal(w, &w->term[i]) == -1)
				goto out;
			continue;
		}
		if (add_srv_set(w, q[nq].answer, w->term[i].replacement,
		    w->term[i].protocol, &st) == -1)
			goto out;
		nq++;
		if (st == SRVANSWER_FAILED)
			w->failed = 1;
	}
	r = 0;
out:
	free(q);
	return r;
}

int
srvresolve_naptr(const struct srvresolve_options *o, const char *domain,
    const char *service, const char *const *protocols, size_t nprotocols,
    struct srvresolve_result *res)
{
	struct srvnaptr_walk walk;
	struct work w;
	int first, r = -1;

	work_init(&w, o, res);
	memset(&walk, 0, sizeof(walk));
	walk.service = service;
	walk.protocols = protocols;
	walk.nprotocols = nprotocols;
	walk.lookup = naptr_lookup;
	walk.terminal = naptr_terminal;
	walk.arg = &w;
	if ((first = srvnaptr_walk(&walk, domain)) == -1)
		goto out;
	if (w.error != 0) {
		errno = w.error;
		goto out;
	}
	res->naptr_cut += walk.too_deep + walk.over_budget;
	/* A branch cut at a bound (a loop) did not resolve: not "no such
	 * service", should nothing else be found. */
	if (res->naptr_cut > 0)
		w.failed = 1;
	switch (first) {
	case SRVNAPTR_FOUND:
		if (add_terminals(&w) == -1 || resolve_addresses(&w) == -1)
			goto out;
		res->status = final_status(&w);
		break;
	case SRVNAPTR_NXDOMAIN:
		res->status = SRVRESOLVE_NXDOMAIN;
		break;
	case SRVNAPTR_NODATA:
		res->status = SRVRESOLVE_NODATA;
		break;
	default:
		res->status = SRVRESOLVE_SERVFAIL;
		break;
	}
	r = 0;
out:
	return work_end(&w, r);
}

void
srvresolve_free(struct srvresolve_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < res->ncand; i++) {
		free(res->cand[i].target);
		free(res->cand[i].cname);
		free(res->cand[i].protocol);
		free(res->cand[i].addrs);
	}
	free(res->cand);
	memset(res, 0, sizeof(*res));
}
