/* upstream.c: the registry of upstream servers, their health and order. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "log.h"
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

struct upstream_registry {
	struct upstream	*list;		/* chained by next */
	unsigned	 n_down;	/* of them marked down */
	uint32_t	 timeout_min;	/* ms, bounds of every RTO */
	uint32_t	 timeout_max;
	struct budget	 budget;
};

struct upstream_registry *
upstream_registry_new(uint32_t min_ms, uint32_t max_ms)
{
	struct upstream_registry *reg;

	if ((reg = calloc(1, sizeof(*reg))) == NULL)
		return NULL;
	reg->timeout_min = min_ms;
	reg->timeout_max = max_ms;
	reg->budget.percent = 10;
	reg->budget.min = 20;
	return reg;
}

void
upstream_registry_free(struct upstream_registry *reg)
{
	free(reg);
}

struct upstream *
upstream_get(struct upstream_registry *reg, const struct addr *a)
{
	struct upstream *u;

	for (u = reg->list; u != NULL; u = u->next)
		if (addr_equal(&u->addr, a)) {
			u->refs++;
			return u;
		}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	u->reg = reg;
	u->addr = *a;
	addr_format(a, u->name, sizeof(u->name));
	u->refs = 1;
	rtt_init(&u->rtt, reg->timeout_min, reg->timeout_max);
	u->next = reg->list;
	reg->list = u;
	return u;
}

void
upstream_unref(struct upstream *u)
{
	struct upstream_stats *st;
	struct upstream **pp;

	if (u == NULL || --u->refs > 0)
		return;
	for (pp = &u->reg->list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	u->reg->n_down -= u->down;
	while ((st = u->stats) != NULL) {
		u->stats = st->next;
		free(st->zone);
		free(st);
	}
	free(u);
}

void
upstream_reconfigure(struct upstream_registry *reg, uint32_t min_ms,
    uint32_t max_ms)
{
	struct upstream *u;

	reg->timeout_min = min_ms;
	reg->timeout_max = max_ms;
	for (u = reg->list; u != NULL; u = u->next) {
		rtt_clamp(&u->rtt, min_ms, max_ms);
		u->loop = u->loop_checked = 0;
	}
}

struct upstream_stats *
upstream_stats_for(struct upstream *u, const char *zone)
{
	struct upstream_stats **pp, *st;

	for (pp = &u->stats; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->zone, zone) == 0)
			return *pp;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	if ((st->zone = strdup(zone)) == NULL) {
		free(st);
		return NULL;
	}
	*pp = st;
	return st;
}

struct upstream *
upstream_first(const struct upstream_registry *reg)
{
	return reg->list;
}

uint32_t
upstream_rto(const struct upstream *u)
{
	return u->rtt.rto;
}

void
upstream_answered(struct upstream *u, uint32_t rtt_ms, uint64_t now)
{
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
		u->reg->n_down--;
		log_info("upstream %s is up again", u->name);
	}
}

/* Full jitter: a uniformly random point of [now, now + backoff]. */
static uint64_t
jittered(uint64_t now, uint32_t backoff)
{
	return now + arc4random_uniform(backoff + 1);
}

/* One more failure in a row, silent or not; enough of them mark u
 * down. */
static void
count_failure(struct upstream *u, int silent, uint64_t now)
{
	u->fails++;
	u->silent = silent ? u->silent + 1 : 0;
	if (u->down || (u->silent < UPSTREAM_DOWN_AFTER &&
	    u->fails < UPSTREAM_DOWN_AFTER_ANSWERS))
		return;
	u->down = 1;
	u->reg->n_down++;
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
	if (q != NULL)
		u->failed_q = *q;
	count_failure(u, silent, now);
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
	rtt_timeout(&u->rtt, used_ms, u->reg->timeout_min,
	    u->reg->timeout_max);
	if (q != NULL)
		u->failed_q = *q;
	if (u->last_answer < sent)
		count_failure(u, 1, now);
}

int
upstream_answered_since(struct upstream *const *pool, size_t n,
    uint64_t since)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!pool[i]->loop && pool[i]->last_answer > since)
			return 1;
	return 0;
}

/*
 * Whether u, back from an outage, may take one more refresh of a name
 * that failed during it, at now: UPSTREAM_RECOVERY_FIRST in the first
 * second, doubling each second, at most UPSTREAM_RECOVERY_MAX a second.
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

	for (i = 0; i < n; i++) {
		if (pool[i]->loop || pool[i]->last_answer <= failed_at)
			continue;
		if (pool[i]->back_at <= failed_at ||
		    recovery_admit(pool[i], now))
			return 1;
	}
	return 0;
}

uint64_t
upstream_back_at(const struct upstream *u)
{
	return u->back_at;
}

int
upstream_probe_due(struct upstream *u, uint64_t now)
{
	if (!u->down || u->loop || now < u->next_probe)
		return 0;
	u->probe_backoff = u->probe_backoff >= UPSTREAM_PROBE_MAX / 2 ?
	    UPSTREAM_PROBE_MAX : u->probe_backoff * 2;
	u->next_probe = jittered(now, u->probe_backoff);
	return 1;
}

void
upstream_budget_set(struct upstream_registry *reg, uint32_t percent,
    uint32_t min)
{
	reg->budget.percent = percent;
	reg->budget.min = min;
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

	budget_advance(b, now);
	b->first[b->sec % UPSTREAM_BUDGET_SLOTS]++;
}

int
upstream_budget_extra(struct upstream_registry *reg, uint64_t now)
{
	struct budget *b = &reg->budget;
	uint64_t first, extra;

	budget_advance(b, now);
	budget_sums(b, &first, &extra);
	if (extra >= b->min && extra * 100 >= first * b->percent) {
		b->denied_total++;
		return 0;
	}
	b->extra[b->sec % UPSTREAM_BUDGET_SLOTS]++;
	b->extra_total++;
	return 1;
}

void
upstream_budget_stats(struct upstream_registry *reg, uint64_t now,
    struct upstream_budget_stats *out)
{
	budget_advance(&reg->budget, now);
	budget_sums(&reg->budget, &out->first, &out->extra);
	out->extra_total = reg->budget.extra_total;
	out->denied_total = reg->budget.denied_total;
}

int
upstream_any_down(const struct upstream_registry *reg)
{
	return reg->n_down > 0;
}

void
upstream_no_case(struct upstream *u)
{
	if (!u->no_case)
		log_warnx("upstream %s does not preserve the case of "
		    "questions; not using 0x20 with it", u->name);
	u->no_case = 1;
}

int
upstream_edns(struct upstream *u, uint64_t now)
{
	if (u->no_edns && now >= u->edns_retest) {
		u->no_edns = 0;
		log_info("upstream %s: trying EDNS again", u->name);
	}
	return !u->no_edns;
}

void
upstream_no_edns(struct upstream *u, uint64_t now)
{
	if (!u->no_edns)
		log_warnx("upstream %s does not speak EDNS (RFC 6891 §7): "
		    "sending it queries without OPT, so without DO, for "
		    "%u minutes", u->name, UPSTREAM_EDNS_RETEST / 60000);
	u->no_edns = 1;
	u->edns_retest = now + UPSTREAM_EDNS_RETEST -
	    arc4random_uniform(UPSTREAM_EDNS_RETEST / 4);
}

void
upstream_loop(struct upstream *u)
{
	if (!u->loop)
		log_errx("upstream %s sends our queries back to us (a "
		    "forwarding loop); not using it until reload", u->name);
	u->loop = 1;
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

	if (n > sizeof(r) / sizeof(r[0]) &&
	    (rp = calloc(n, sizeof(*rp))) == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (pool[i]->loop)
			continue;
		rp[k].u = pool[i];
		rp[k].pos = i;
		/* The top bit puts every down upstream after the up ones. */
		rp[k].key = sort_key(pool[i], policy, qname, qname_len, i) >>
		    1 | (uint64_t)pool[i]->down << 63;
		up += !pool[i]->down;
		k++;
	}
	qsort(rp, k, sizeof(*rp), policy == CONFIG_POLICY_HASH ?
	    ranked_cmp_hash : ranked_cmp);
	/* An unmeasured leader is already being explored: leave it first. */
	if (policy == CONFIG_POLICY_FASTEST && up > 1 &&
	    rp[0].u->rtt.measured && arc4random_uniform(FASTEST_EXPLORE) == 0) {
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

	for (i = 0; i < n; i++)
		if (!pool[i]->down && !pool[i]->loop)
			return 0;
	return 1;
}

uint32_t
upstream_best_rto(struct upstream *const *pool, size_t n)
{
	uint32_t best = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (!pool[i]->down && (best == 0 ||
		    upstream_rto(pool[i]) < best))
			best = upstream_rto(pool[i]);
	return best;
}
