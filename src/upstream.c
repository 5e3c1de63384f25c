/* upstream.c: the registry of upstream servers, their health and order. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "log.h"
#include "tlsctx.h"
#include "upstream.h"

/* Probability 1/EXPLORE that `fastest` tries another upstream first. */
#define FASTEST_EXPLORE	16

/* The retry and hedge budget: per-second slots of a sliding window. */
struct budget {
	uint32_t	 percent;	/* of first queries */
	uint32_t	 min;		/* allowed in any window */
	uint64_t	 sec;		/* the second slot sec % SLOTS counts */
	uint32_t	 first[UPSTREAM_BUDGET_SLOTS];
	uint32_t	 extra[UPSTREAM_BUDGET_SLOTS];
	uint64_t	 extra_total;
	uint64_t	 denied_total;
};

/* A loop probe running: its upstream and the name it asks (folded). */
struct loop_probe {
	struct loop_probe	*next;
	struct upstream		*u;
	uint8_t			 qname[MSG_NAME_MAX];
	size_t			 qname_len;
};

struct upstream_registry {
	pthread_mutex_t	 lock;		/* all below and every upstream's
					 * state, once shared */
	int		 shared;	/* by threads: lock */
	struct upstream	*list;		/* chained by next */
	unsigned	 n_down;	/* of them marked down; read without
					 * the lock (atomic) */
	uint32_t	 timeout_min;	/* ms, bounds of every RTO */
	uint32_t	 timeout_max;
	struct loop_probe *loop_probes;	/* running */
	unsigned	 n_loop_probes;	/* of them; read without the lock
					 * (atomic) */
	struct budget	 budget;
};

static void
lock(struct upstream_registry *reg)
{
	if (reg->shared)
		pthread_mutex_lock(&reg->lock);
}

static void
unlock(struct upstream_registry *reg)
{
	if (reg->shared)
		pthread_mutex_unlock(&reg->lock);
}

/* n_down and n_loop_probes change under the lock, are read without. */
static void
count_change(unsigned *n, int by)
{
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) +
	    (unsigned)by, __ATOMIC_RELAXED);
}

struct upstream_registry *
upstream_registry_new(uint32_t min_ms, uint32_t max_ms)
{
	struct upstream_registry *reg;

	if ((reg = calloc(1, sizeof(*reg))) == NULL)
		return NULL;
	if (pthread_mutex_init(&reg->lock, NULL) != 0) {
		free(reg);
		return NULL;
	}
	reg->timeout_min = min_ms;
	reg->timeout_max = max_ms;
	reg->budget.percent = 10;
	reg->budget.min = 20;
	return reg;
}

void
upstream_registry_share(struct upstream_registry *reg)
{
	reg->shared = 1;
}

void
upstream_registry_free(struct upstream_registry *reg)
{
	if (reg == NULL)
		return;
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

/* 1 if u is reached with tls (NULL: in clear text). */
static int
same_tls(const struct upstream *u, const struct tlsctx *tls)
{
	if (u->tls == NULL || tls == NULL)
		return u->tls == tls;
	return tlsctx_same(u->tls, tls);
}

struct upstream *
upstream_get(struct upstream_registry *reg, const struct addr *a)
{
	return upstream_get_tls(reg, a, NULL);
}

struct upstream *
upstream_get_tls(struct upstream_registry *reg, const struct addr *a,
    struct tlsctx *tls)
{
	struct upstream *u;
	char buf[ADDR_STRLEN];

	lock(reg);
	for (u = reg->list; u != NULL; u = u->next)
		if (addr_equal(&u->addr, a) && same_tls(u, tls)) {
			u->refs++;
			goto out;
		}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		goto out;
	u->reg = reg;
	u->addr = *a;
	addr_format(a, buf, sizeof(buf));
	if (tls == NULL)
		snprintf(u->name, sizeof(u->name), "%s", buf);
	else {
		u->tls = tlsctx_ref(tls);
		snprintf(u->name, sizeof(u->name), "%s", tls->label);
	}
	u->refs = 1;
	rtt_init(&u->rtt, reg->timeout_min, reg->timeout_max);
	u->next = reg->list;
	reg->list = u;
out:
	unlock(reg);
	return u;
}

void
upstream_unref(struct upstream *u)
{
	struct upstream_registry *reg;
	struct upstream_stats *st;
	struct upstream **pp;

	if (u == NULL)
		return;
	reg = u->reg;
	lock(reg);
	if (--u->refs > 0) {
		unlock(reg);
		return;
	}
	for (pp = &reg->list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	if (u->down)
		count_change(&reg->n_down, -1);
	unlock(reg);
	while ((st = u->stats) != NULL) {
		u->stats = st->next;
		free(st->zone);
		free(st);
	}
	tlsctx_unref(u->tls);
	free(u);
}

void
upstream_reconfigure(struct upstream_registry *reg, uint32_t min_ms,
    uint32_t max_ms)
{
	struct upstream *u;

	lock(reg);
	reg->timeout_min = min_ms;
	reg->timeout_max = max_ms;
	for (u = reg->list; u != NULL; u = u->next) {
		rtt_clamp(&u->rtt, min_ms, max_ms);
		u->loop = 0;
		__atomic_store_n(&u->loop_checked, 0, __ATOMIC_RELAXED);
	}
	unlock(reg);
}

struct upstream_stats *
upstream_stats_for(struct upstream *u, const char *zone)
{
	struct upstream_stats **pp, *st;

	lock(u->reg);
	for (pp = &u->stats; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->zone, zone) == 0)
			goto out;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		goto out;
	if ((st->zone = strdup(zone)) == NULL) {
		free(st);
		goto out;
	}
	/* Whole before it is seen: readers walk the list without the lock. */
	__atomic_store_n(pp, st, __ATOMIC_RELEASE);
out:
	st = *pp;
	unlock(u->reg);
	return st;
}

const struct upstream_stats *
upstream_stats_next(const struct upstream_stats *st)
{
	return __atomic_load_n(&st->next, __ATOMIC_ACQUIRE);
}

/* The view of u; the lock held. */
static void
view_of(const struct upstream *u, struct upstream_view *v)
{
	v->u = u;
	v->down = u->down;
	v->loop = u->loop;
	v->no_edns = u->no_edns;
	v->fails = u->fails;
	v->rtt = u->rtt;
	v->stats = __atomic_load_n(&u->stats, __ATOMIC_ACQUIRE);
}

void
upstream_view(const struct upstream *u, struct upstream_view *v)
{
	lock(u->reg);
	view_of(u, v);
	unlock(u->reg);
}

void
upstream_each(struct upstream_registry *reg,
    void (*fn)(const struct upstream_view *, void *), void *arg)
{
	struct upstream_view v;
	const struct upstream *u;

	lock(reg);
	for (u = reg->list; u != NULL; u = u->next) {
		view_of(u, &v);
		fn(&v, arg);
	}
	unlock(reg);
}

int
upstream_up(const struct upstream *u)
{
	int up;

	lock(u->reg);
	up = !u->down && !u->loop;
	unlock(u->reg);
	return up;
}

uint32_t
upstream_rto(const struct upstream *u)
{
	uint32_t rto;

	lock(u->reg);
	rto = u->rtt.rto;
	unlock(u->reg);
	return rto;
}

void
upstream_answered(struct upstream *u, uint32_t rtt_ms, uint64_t now)
{
	lock(u->reg);
	rtt_sample(&u->rtt, rtt_ms, u->reg->timeout_min, u->reg->timeout_max);
	if (u->silent > 0 || u->down) {
		u->back_at = now;
		u->recovery_sec = 0;
		u->recovery_n = 0;
	}
	u->fails = u->silent = 0;
	u->last_answer = now;
	if (u->down) {
		u->down = 0;
		u->up_since = now;
		count_change(&u->reg->n_down, -1);
		log_info("upstream %s is up again", u->name);
	}
	unlock(u->reg);
}

/* Full jitter: a uniformly random point of [now, now + backoff]. */
static uint64_t
jittered(uint64_t now, uint32_t backoff)
{
	return now + arc4random_uniform(backoff + 1);
}

/* One more failure in a row, silent or not; enough of them mark u
 * down. The lock held. */
static void
count_failure(struct upstream *u, int silent, uint64_t now)
{
	u->fails++;
	u->silent = silent ? u->silent + 1 : 0;
	if (u->down || (u->silent < UPSTREAM_DOWN_AFTER &&
	    u->fails < UPSTREAM_DOWN_AFTER_ANSWERS))
		return;
	u->down = 1;
	count_change(&u->reg->n_down, 1);
	u->probe_backoff = UPSTREAM_PROBE_FIRST;
	u->next_probe = jittered(now, u->probe_backoff);
	log_warnx("upstream %s is down after %u failures in a row; probing "
	    "it", u->name, u->fails);
}

/* A failure for question q (NULL: a probe's own), silent or not. */
static void
failed(struct upstream *u, const struct msg_question *q, int silent,
    uint64_t now)
{
	lock(u->reg);
	if (q != NULL)
		u->failed_q = *q;
	count_failure(u, silent, now);
	unlock(u->reg);
}

void
upstream_failed(struct upstream *u, const struct msg_question *q,
    uint64_t now)
{
	failed(u, q, 1, now);
}

void
upstream_answered_failure(struct upstream *u, const struct msg_question *q,
    uint64_t now)
{
	failed(u, q, 0, now);
}

void
upstream_timed_out(struct upstream *u, const struct msg_question *q,
    uint32_t used_ms, uint64_t sent, uint64_t now)
{
	lock(u->reg);
	rtt_timeout(&u->rtt, used_ms, u->reg->timeout_min,
	    u->reg->timeout_max);
	if (q != NULL)
		u->failed_q = *q;
	if (u->last_answer < sent)
		count_failure(u, 1, now);
	unlock(u->reg);
}

int
upstream_failed_question(const struct upstream *u, struct msg_question *q)
{
	lock(u->reg);
	*q = u->failed_q;
	unlock(u->reg);
	return q->qname_len > 0;
}

int
upstream_answered_since(struct upstream *const *pool, size_t n,
    uint64_t since)
{
	size_t i;
	int rc = 0;

	if (n == 0)
		return 0;
	lock(pool[0]->reg);
	for (i = 0; i < n && !rc; i++)
		rc = !pool[i]->loop && pool[i]->last_answer > since;
	unlock(pool[0]->reg);
	return rc;
}

/*
 * Whether u, back from an outage, may take one more refresh of a name
 * that failed during it, at now: UPSTREAM_RECOVERY_FIRST in the first
 * second, doubling each second, at most UPSTREAM_RECOVERY_MAX a second.
 * The lock held.
 */
static int
recovery_admit(struct upstream *u, uint64_t now)
{
	uint64_t sec = (now - u->back_at) / 1000;
	uint32_t allowed = UPSTREAM_RECOVERY_MAX;

	if (now - u->back_at >= UPSTREAM_RECOVERY_SPAN)
		return 1;
	if (sec != u->recovery_sec) {
		u->recovery_sec = sec;
		u->recovery_n = 0;
	}
	/* 16, 32, 64, 128, then 256 a second. */
	if (sec < 4)
		allowed = UPSTREAM_RECOVERY_FIRST << sec;
	if (u->recovery_n >= allowed)
		return 0;
	u->recovery_n++;
	return 1;
}

int
upstream_refresh_allowed(struct upstream *const *pool, size_t n,
    uint64_t failed_at, uint64_t now)
{
	size_t i;
	int rc = 0;

	if (n == 0)
		return 0;
	lock(pool[0]->reg);
	for (i = 0; i < n && !rc; i++)
		rc = !pool[i]->loop && pool[i]->last_answer > failed_at &&
		    (pool[i]->back_at <= failed_at ||
		    recovery_admit(pool[i], now));
	unlock(pool[0]->reg);
	return rc;
}

uint64_t
upstream_back_at(const struct upstream *u)
{
	uint64_t at;

	lock(u->reg);
	at = u->back_at;
	unlock(u->reg);
	return at;
}

int
upstream_probe_due(struct upstream *u, uint64_t now)
{
	int due;

	lock(u->reg);
	if ((due = u->down && !u->loop && now >= u->next_probe)) {
		u->probe_backoff = u->probe_backoff >= UPSTREAM_PROBE_MAX / 2 ?
		    UPSTREAM_PROBE_MAX : u->probe_backoff * 2;
		u->next_probe = jittered(now, u->probe_backoff);
	}
	unlock(u->reg);
	return due;
}

void
upstream_budget_set(struct upstream_registry *reg, uint32_t percent,
    uint32_t min)
{
	lock(reg);
	reg->budget.percent = percent;
	reg->budget.min = min;
	unlock(reg);
}

/* Move b's window on to now's second, emptying the slots it passes. */
static void
budget_advance(struct budget *b, uint64_t now)
{
	uint64_t sec = now / 1000;
	size_t i;

	if (sec - b->sec >= UPSTREAM_BUDGET_SLOTS) {
		memset(b->first, 0, sizeof(b->first));
		memset(b->extra, 0, sizeof(b->extra));
		b->sec = sec;
		return;
	}
	while (b->sec < sec) {
		i = ++b->sec % UPSTREAM_BUDGET_SLOTS;
		b->first[i] = b->extra[i] = 0;
	}
}

/* The window's sums of first and further queries. */
static void
budget_sums(const struct budget *b, uint64_t *first, uint64_t *extra)
{
	size_t i;

	*first = *extra = 0;
	for (i = 0; i < UPSTREAM_BUDGET_SLOTS; i++) {
		*first += b->first[i];
		*extra += b->extra[i];
	}
}

void
upstream_budget_first(struct upstream_registry *reg, uint64_t now)
{
	struct budget *b = &reg->budget;

	lock(reg);
	budget_advance(b, now);
	b->first[b->sec % UPSTREAM_BUDGET_SLOTS]++;
	unlock(reg);
}

int
upstream_budget_extra(struct upstream_registry *reg, uint64_t now)
{
	struct budget *b = &reg->budget;
	uint64_t first, extra;
	int allowed;

	lock(reg);
	budget_advance(b, now);
	budget_sums(b, &first, &extra);
	if ((allowed = extra < b->min || extra * 100 < first * b->percent)) {
		b->extra[b->sec % UPSTREAM_BUDGET_SLOTS]++;
		b->extra_total++;
	} else
		b->denied_total++;
	unlock(reg);
	return allowed;
}

void
upstream_budget_stats(struct upstream_registry *reg, uint64_t now,
    struct upstream_budget_stats *out)
{
	lock(reg);
	budget_advance(&reg->budget, now);
	budget_sums(&reg->budget, &out->first, &out->extra);
	out->extra_total = reg->budget.extra_total;
	out->denied_total = reg->budget.denied_total;
	unlock(reg);
}

int
upstream_any_down(const struct upstream_registry *reg)
{
	return __atomic_load_n(&reg->n_down, __ATOMIC_RELAXED) > 0;
}

int
upstream_echoes_case(const struct upstream *u)
{
	int echoes;

	lock(u->reg);
	echoes = !u->no_case;
	unlock(u->reg);
	return echoes;
}

void
upstream_no_case(struct upstream *u)
{
	lock(u->reg);
	if (!u->no_case)
		log_warnx("upstream %s does not preserve the case of "
		    "questions; not using 0x20 with it", u->name);
	u->no_case = 1;
	unlock(u->reg);
}

int
upstream_edns(struct upstream *u, uint64_t now)
{
	int edns;

	lock(u->reg);
	if (u->no_edns && now >= u->edns_retest) {
		u->no_edns = 0;
		log_info("upstream %s: trying EDNS again", u->name);
	}
	edns = !u->no_edns;
	unlock(u->reg);
	return edns;
}

void
upstream_no_edns(struct upstream *u, uint64_t now)
{
	lock(u->reg);
	if (!u->no_edns)
		log_warnx("upstream %s does not speak EDNS (RFC 6891 §7): "
		    "sending it queries without OPT, so without DO, for "
		    "%u minutes", u->name, UPSTREAM_EDNS_RETEST / 60000);
	u->no_edns = 1;
	u->edns_retest = now + UPSTREAM_EDNS_RETEST -
	    arc4random_uniform(UPSTREAM_EDNS_RETEST / 4);
	unlock(u->reg);
}

/* u is a loop; the lock held. */
static void
mark_loop(struct upstream *u)
{
	if (!u->loop)
		log_errx("upstream %s sends our queries back to us (a "
		    "forwarding loop); not using it until reload", u->name);
	u->loop = 1;
}

void
upstream_loop(struct upstream *u)
{
	lock(u->reg);
	mark_loop(u);
	unlock(u->reg);
}

int
upstream_loop_unchecked(struct upstream *u)
{
	int unchecked;

	/* Every attempt asks; once checked, no lock: it is set under the
	 * lock, cleared only by a reload. */
	if (__atomic_load_n(&u->loop_checked, __ATOMIC_RELAXED))
		return 0;
	lock(u->reg);
	unchecked = !u->loop_checked;
	__atomic_store_n(&u->loop_checked, 1, __ATOMIC_RELAXED);
	unlock(u->reg);
	return unchecked;
}

int
upstream_loop_probe_start(struct upstream *u, const uint8_t *qname,
    size_t qname_len)
{
	struct loop_probe *p;

	if (qname_len > MSG_NAME_MAX || (p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	p->u = u;
	memcpy(p->qname, qname, qname_len);
	p->qname_len = qname_len;
	lock(u->reg);
	p->next = u->reg->loop_probes;
	u->reg->loop_probes = p;
	count_change(&u->reg->n_loop_probes, 1);
	unlock(u->reg);
	return 0;
}

void
upstream_loop_probe_end(struct upstream *u, const uint8_t *qname,
    size_t qname_len)
{
	struct loop_probe **pp, *p = NULL;

	lock(u->reg);
	for (pp = &u->reg->loop_probes; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->u == u && (*pp)->qname_len == qname_len &&
		    memcmp((*pp)->qname, qname, qname_len) == 0) {
			p = *pp;
			*pp = p->next;
			count_change(&u->reg->n_loop_probes, -1);
			break;
		}
	unlock(u->reg);
	free(p);
}

/* upstream_loop_probe_seen while some loop probe runs: apart, so that
 * the fast path of every query sets up no frame for the folded name. */
static int __attribute__((noinline))
loop_probe_match(struct upstream_registry *reg, const uint8_t *qname,
    size_t qname_len)
{
	uint8_t folded[MSG_NAME_MAX];
	struct loop_probe *p;
	int seen = 0;

	if (qname_len > MSG_NAME_MAX)
		return 0;
	memcpy(folded, qname, qname_len);
	msg_name_fold(folded, qname_len);
	lock(reg);
	for (p = reg->loop_probes; p != NULL && !seen; p = p->next)
		if (p->qname_len == qname_len &&
		    memcmp(p->qname, folded, qname_len) == 0) {
			mark_loop(p->u);
			seen = 1;
		}
	unlock(reg);
	return seen;
}

int
upstream_loop_probe_seen(struct upstream_registry *reg, const uint8_t *qname,
    size_t qname_len)
{
	if (__atomic_load_n(&reg->n_loop_probes, __ATOMIC_RELAXED) == 0)
		return 0;
	return loop_probe_match(reg, qname, qname_len);
}

/* A stable 64-bit mix (SplitMix64 finaliser) of FNV-1a over the bytes. */
static uint64_t
mix(uint64_t h, const uint8_t *p, size_t n)
{
	h = fnv1a64(h, p, n);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

uint64_t
upstream_rendezvous_weight(const struct upstream *u, const uint8_t *qname,
    size_t qname_len)
{
	/* No secret: the same name maps the same way on every host. */
	return mix(addr_hash(&u->addr), qname, qname_len);
}

struct ranked {
	struct upstream	*u;
	uint64_t	 key;	/* sort key, lowest first */
	size_t		 pos;	/* list position: stable ties */
	int		 measured;	/* its RTT, when ranked */
};

static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static uint64_t
sort_key(const struct upstream *u, enum config_policy policy,
    const uint8_t *qname, size_t qname_len, size_t pos)
{
	switch (policy) {
	case CONFIG_POLICY_RANDOM:
		return arc4random();
	case CONFIG_POLICY_FASTEST:
		return u->rtt.measured ? u->rtt.srtt + 1 : 0;
	case CONFIG_POLICY_HASH:
		/* Highest weight first; equal weights by address. */
		return ~upstream_rendezvous_weight(u, qname, qname_len);
	default:
		return pos;
	}
}

/* For hash ties (2^-64), order by address so every host agrees. */
static int
ranked_cmp_hash(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return memcmp(&x->u->addr.ss, &y->u->addr.ss,
	    sizeof(x->u->addr.ss));
}

size_t
upstream_order(struct upstream *const *pool, size_t n,
    enum config_policy policy, const uint8_t *qname, size_t qname_len,
    struct upstream **out)
{
	struct ranked r[64], *rp = r;
	size_t i, k = 0, up = 0, pick;
	struct ranked tmp;

	if (n == 0 || (n > sizeof(r) / sizeof(r[0]) &&
	    (rp = calloc(n, sizeof(*rp))) == NULL))
		return 0;
	lock(pool[0]->reg);
	for (i = 0; i < n; i++) {
		if (pool[i]->loop)
			continue;
		rp[k].u = pool[i];
		rp[k].pos = i;
		/* The top bit puts every down upstream after the up ones. */
		rp[k].key = sort_key(pool[i], policy, qname, qname_len, i) >>
		    1 | (uint64_t)pool[i]->down << 63;
		rp[k].measured = pool[i]->rtt.measured;
		up += !pool[i]->down;
		k++;
	}
	unlock(pool[0]->reg);
	qsort(rp, k, sizeof(*rp), policy == CONFIG_POLICY_HASH ?
	    ranked_cmp_hash : ranked_cmp);
	/* An unmeasured leader is already being explored: leave it first. */
	if (policy == CONFIG_POLICY_FASTEST && up > 1 &&
	    rp[0].measured && arc4random_uniform(FASTEST_EXPLORE) == 0) {
		pick = 1 + arc4random_uniform((uint32_t)(up - 1));
		tmp = rp[0];
		rp[0] = rp[pick];
		rp[pick] = tmp;
	}
	for (i = 0; i < k; i++)
		out[i] = rp[i].u;
	if (rp != r)
		free(rp);
	return k;
}

int
upstream_all_down(struct upstream *const *pool, size_t n)
{
	size_t i;
	int all = 1;

	if (n == 0)
		return 1;
	lock(pool[0]->reg);
	for (i = 0; i < n && all; i++)
		all = pool[i]->down || pool[i]->loop;
	unlock(pool[0]->reg);
	return all;
}

uint32_t
upstream_best_rto(struct upstream *const *pool, size_t n)
{
	uint32_t best = 0;
	size_t i;

	if (n == 0)
		return 0;
	lock(pool[0]->reg);
	for (i = 0; i < n; i++)
		if (!pool[i]->down && (best == 0 || pool[i]->rtt.rto < best))
			best = pool[i]->rtt.rto;
	unlock(pool[0]->reg);
	return best;
}
