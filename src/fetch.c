/* fetch.c: the fetches in flight: coalescing, waiters, retries, budgets. */
#include "autoconf.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "attempt.h"
#include "fetch.h"
#include "inflight.h"
#include "probe.h"
#include "transport.h"

#define FETCH_BUCKETS		4096	/* in-flight table, power of two */
#define FETCH_MAX_ATTEMPTS	8	/* sends per fetch: bounds sockets */
/*
 * Times the last upstream left to a fetch is asked again after it
 * answered SERVFAIL or REFUSED, 5 tries in all as Unbound's default
 * outbound-msg-retry: a flaky one answering 30 % of queries that way
 * fails 5 in a row 0.24 % of the time (3 in a row 2.7 %).
 */
#define FETCH_SAME_RETRIES	4
/*
 * How much longer than query-timeout queries waiting for another worker's
 * resolution wait at most: it ends by its own deadline, and the word of
 * it comes at once; this bounds the wait if that word is lost (no
 * memory for it) or slow (that worker's loop busy): they then look in
 * the cache, and resolve it here if it is not there.
 */
#define FETCH_REMOTE_SLACK	1000	/* ms */

/* Why a fetch runs: only resolutions are coalesced, budgeted, reported. */
enum fetch_kind {
	FETCH_RESOLVE,		/* for clients or the cache */
	FETCH_PROBE,		/* is a down upstream back? */
	FETCH_LOOP_PROBE,	/* does this upstream send queries back to us? */
	FETCH_REMOTE		/* another worker resolves it: its waiters here
				 * wait for fetch_landed */
};

struct fetch {
	struct fetch_ctx	*ctx;
	enum fetch_kind		 kind;
	struct fetch		*hnext;		/* in-flight table, or the list
						 * of probes */
	struct cache_key	 key;
	struct attempt_query	 aq;		/* the question, qname folded */
	struct zone_table	*zones;		/* referenced */
	struct zone		*zone;
	struct upstream		**order;	/* try order, n_order long */
	uint8_t			*dead;		/* failed for good, per slot */
	size_t			 n_order;
	size_t			 next;		/* next slot to send to */
	unsigned		 n_sent;
	unsigned		 same_retries;	/* FETCH_SAME_RETRIES spent */
	int			 reached;	/* a query went out */
	struct attempt		*attempts;	/* newest first */
	struct transport_timer	*retry;		/* RTO of the newest attempt */
	struct transport_timer	*deadline;
	int			 n_timers;	/* made of the two */
	uint64_t		 started;	/* ms */
	TAILQ_HEAD(, fetch_waiter) waiters;
	uint32_t		 n_waiters;
	int			 claimed;	/* its key in ctx->index */
	int			 first_used;	/* first holds an attempt */
	const char		*answered_by;	/* the upstream's name */
	struct attempt		 first;		/* that of most fetches */
	/* The timers, order and dead: one allocation for the fetch. */
	_Alignas(max_align_t) unsigned char mem[];
};

struct fetch_ctx {
	const struct transport	*t;
	struct transport	*own_t;		/* made by fetch_ctx_new */
	struct fetch_settings	 s;
	fetch_done_fn		 done;
	void			*arg;
	struct fetch		*buckets[FETCH_BUCKETS];
	struct fetch		*probes;	/* running, chained by hnext */
	struct inflight		*index;		/* shared with the other
						 * workers, or NULL */
	unsigned		 worker;	/* our number in it */
	struct fetch_stats	 stats;		/* ours: metrics_add */
	struct attempt_counts	 responses;	/* refused, into stats */
	struct upstream_stats	 stats_lost;	/* when a zone's counters
						 * could not be had */
	struct dnstap_worker	*tap;		/* or NULL */
};

static void fetch_send_next(struct fetch *, uint64_t);
static int fetch_send_to(struct fetch *, size_t, uint64_t);
static void start_probe(struct fetch_ctx *, enum fetch_kind,
    struct upstream *, struct zone_table *, struct zone *,
    const struct msg_question *, uint64_t);

static struct fetch **
bucket(struct fetch_ctx *ctx, const struct cache_key *key)
{
	return &ctx->buckets[key->hash & (FETCH_BUCKETS - 1)];
}

static struct fetch *
table_find(struct fetch_ctx *ctx, const struct cache_key *key)
{
	struct fetch *f;

	for (f = *bucket(ctx, key); f != NULL; f = f->hnext)
		if (f->key.hash == key->hash && f->key.len == key->len &&
		    memcmp(f->key.data, key->data, key->len) == 0)
			return f;
	return NULL;
}

static void
table_remove(struct fetch_ctx *ctx, struct fetch *f)
{
	struct fetch **pp;

	pp = f->kind == FETCH_PROBE || f->kind == FETCH_LOOP_PROBE ?
	    &ctx->probes : bucket(ctx, &f->key);
	for (; *pp != NULL; pp = &(*pp)->hnext)
		if (*pp == f) {
			*pp = f->hnext;
			break;
		}
	if (f->kind == FETCH_RESOLVE) {
		metrics_sub(&ctx->stats.inflight, 1);
		zone_refund(f->zone);
	}
}

static void
fetch_free(struct fetch *f)
{
	const struct transport_ops *ops = f->ctx->t->ops;
	struct attempt *a, *next;
	struct fetch_waiter *w;

	for (a = f->attempts; a != NULL; a = next) {
		next = a->next;
		if (a == &f->first)
			attempt_close(a);
		else
			attempt_free(a);
	}
	while ((w = fetch_take_waiter(f)) != NULL)
		;
	if (f->n_timers > 0)
		ops->timer_fini(f->retry);
	if (f->n_timers > 1)
		ops->timer_fini(f->deadline);
	if (f->kind == FETCH_LOOP_PROBE && f->n_order > 0)
		upstream_loop_probe_end(f->order[0], f->aq.q.q.qname,
		    f->aq.q.q.qname_len);
	zone_table_unref(f->zones);
	free(f);
}

/*
 * The one way a fetch ends: report to the owner (who stores the outcome
 * in the cache), then let the other workers waiting for the key look
 * there, then free it.
 */
static void
fetch_end(struct fetch *f, enum fetch_outcome outcome,
    const struct msg_response *r, uint64_t now)
{
	struct fetch_result res = { outcome, r, &f->key, now,
	    outcome == FETCH_FAILED && !f->reached, f->n_waiters, f->zones,
	    f->zone, f->answered_by };

	table_remove(f->ctx, f);
	if (f->kind == FETCH_RESOLVE || f->kind == FETCH_REMOTE)
		f->ctx->done(f, &res, f->ctx->arg);
	if (f->claimed)
		inflight_release(f->ctx->index, &f->key, f->ctx->worker);
	fetch_free(f);
}

/* Fail from the event loop, never from inside fetch_join's caller. */
static void
fetch_fail_soon(struct fetch *f)
{
	f->ctx->t->ops->timer_set(f->deadline, 0);
}

static void
deadline_cb(void *arg, uint64_t now)
{
	struct fetch *f = arg;

	/* Waiting for another worker: look in the cache now, word or not. */
	fetch_end(f, f->kind == FETCH_REMOTE ? FETCH_LANDED : FETCH_FAILED,
	    NULL, now);
}

/* Tell the waiters of f of a timeout or failure (fetch_waiter.setback). */
static void
fetch_setback(struct fetch *f)
{
	struct fetch_waiter *w, *next;

	for (w = TAILQ_FIRST(&f->waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->setback != NULL)
			w->setback(w, f->zone);
	}
}

/*
 * Whether f may send a query beyond its first at now: not while every
 * upstream of its zone is down (the probes find out when one is back;
 * asking again meanwhile only adds to the load of a dead server), and
 * only within the retry and hedge budget. Probes send one query each.
 */
static int
fetch_may_send_more(struct fetch *f, uint64_t now)
{
	if (f->n_sent == 0)
		return 1;
	if (f->kind != FETCH_RESOLVE || f->n_sent >= FETCH_MAX_ATTEMPTS ||
	    upstream_all_down(f->zone->upstreams, f->zone->n_upstreams))
		return 0;
	return upstream_budget_extra(zone_table_registry(f->zones), now);
}

/*
 * Upstream u (NULL: any) has answered after a run of silent failures or
 * a time down: every other resolution whose latest query to it went out
 * before that, timed out and still waits asks it again at once (within
 * the budget), rather than waiting out its deadline.
 */
static void
fetch_resume(struct fetch_ctx *ctx, const struct fetch *skip,
    struct upstream *u, uint64_t now)
{
	struct attempt *a;
	struct fetch *g;
	size_t i;

	for (i = 0; i < FETCH_BUCKETS; i++)
		for (g = ctx->buckets[i]; g != NULL; g = g->hnext) {
			for (a = g->attempts; a != NULL && u != NULL &&
			    a->up != u; a = a->next)
				;
			if (g == skip || a == NULL || a->conn == NULL ||
			    a->tcp || now - a->sent < a->rto ||
			    upstream_back_at(a->up) <= a->sent)
				continue;
			if (fetch_may_send_more(g, now))
				(void)fetch_send_to(g, a->idx, now);
		}
}

void
fetch_resume_back(struct fetch_ctx *ctx, uint64_t now)
{
	fetch_resume(ctx, NULL, NULL, now);
}

static void
attempt_answered(void *arg, struct attempt *a, const struct msg_response *r,
    uint64_t now)
{
	struct fetch *f = arg;

	if (upstream_back_at(a->up) == now) {
		fetch_resume(f->ctx, f, a->up, now);
		if (f->ctx->index != NULL)
			inflight_resume(f->ctx->index, f->ctx->worker);
	}
	f->answered_by = a->up->name;
	fetch_end(f, FETCH_ANSWER, r, now);
}

/* 1 if every slot of f but i has failed for good. */
static int
fetch_only_left(const struct fetch *f, size_t i)
{
	size_t j;

	for (j = 0; j < f->n_order; j++)
		if (j != i && !f->dead[j])
			return 0;
	return 1;
}

/*
 * An attempt ended without a usable answer: this upstream is out, unless
 * it answered (SERVFAIL, REFUSED...) and is the only one left, which is
 * asked again up to FETCH_SAME_RETRIES times: flaky is not down. The
 * fetch goes on (it ends, if at all, from the event loop), then waiters
 * hear of it.
 */
static void
attempt_failed(void *arg, struct attempt *a, uint64_t now)
{
	struct fetch *f = arg;

	if (a->answered_failure && fetch_only_left(f, a->idx) &&
	    f->same_retries < FETCH_SAME_RETRIES) {
		f->same_retries++;
		f->next = a->idx;
	} else
		f->dead[a->idx] = 1;
	fetch_send_next(f, now);
	fetch_setback(f);
}

/* Over TCP, the newest attempt gets until the deadline. */
static void
attempt_tcp(void *arg, struct attempt *a)
{
	struct fetch *f = arg;

	if (f->attempts == a)
		f->ctx->t->ops->timer_stop(f->retry);
}

static const struct attempt_owner owner = {
	attempt_answered, attempt_failed, attempt_tcp
};

/* The counters of upstream u for f's zone. */
static struct upstream_stats *
stats_of(struct fetch *f, struct upstream *u)
{
	struct upstream_stats *st = upstream_stats_for(u, f->zone->name_str);

	return st != NULL ? st : &f->ctx->stats_lost;
}

/*
 * Send a new attempt to slot i and arm the retry timer with its RTO. The
 * first time a resolution uses an upstream, it gets a loop probe first.
 */
static int
fetch_send_to(struct fetch *f, size_t i, uint64_t now)
{
	struct upstream *u = f->order[i];
	struct msg_question lq;
	struct attempt *a;

	if (!f->first_used) {
		a = &f->first;
		attempt_init(a, &f->aq, u, stats_of(f, u), i);
		f->first_used = 1;
	} else if ((a = attempt_new(&f->aq, u, stats_of(f, u), i)) == NULL)
		return -1;
	a->next = f->attempts;
	f->attempts = a;
	if (f->kind == FETCH_RESOLVE && probe_loop_due(u, f->zone, &lq))
		start_probe(f->ctx, FETCH_LOOP_PROBE, u, f->zones, f->zone,
		    &lq, now);
	f->n_sent++;
	if (attempt_send(a, now) == -1)
		return -1;
	f->reached = 1;
	f->ctx->t->ops->timer_set(f->retry, a->rto);
	return 0;
}

/* 1 if some attempt of f still listens for an answer. */
static int
fetch_listening(const struct fetch *f)
{
	const struct attempt *a;

	for (a = f->attempts; a != NULL; a = a->next)
		if (a->conn != NULL)
			return 1;
	return 0;
}

/*
 * Send to the next upstream not known to have failed, cycling through the
 * order again for retransmissions. With nothing left to send and nothing
 * to wait for, the fetch has failed.
 */
static void
fetch_send_next(struct fetch *f, uint64_t now)
{
	/* A probe is one query: its back-off is the probing's business. */
	unsigned max = f->kind == FETCH_RESOLVE ? FETCH_MAX_ATTEMPTS : 1;
	size_t tries, i;
	int allowed = -1;

	for (tries = 0; tries < f->n_order && f->n_sent < max; tries++) {
		i = f->next++ % f->n_order;
		if (f->dead[i])
			continue;
		/* One look at the budget for the one query this sends. */
		if (allowed == -1)
			allowed = fetch_may_send_more(f, now);
		if (!allowed)
			break;
		if (fetch_send_to(f, i, now) == 0)
			return;
		f->dead[i] = 1;
	}
	if (!fetch_listening(f))
		fetch_fail_soon(f);
}

/* The newest attempt's RTO passed without an answer: try the next one,
 * and keep listening for the late answer meanwhile. */
static void
retry_cb(void *arg, uint64_t now)
{
	struct fetch *f = arg;
	struct attempt *a = f->attempts;

	if (a != NULL && a->conn != NULL && !a->tcp && a->case_only) {
		/*
		 * Only answers in another case came, never ours: this upstream
		 * does not echo case. Ask it again, and from now on, without
		 * 0x20 rather than never getting an answer.
		 */
		upstream_no_case(a->up);
		attempt_close(a);
		if (fetch_send_to(f, a->idx, now) == 0)
			return;
	}
	if (a != NULL && a->conn != NULL && !a->tcp)
		attempt_timed_out(a, now);
	fetch_send_next(f, now);
	fetch_setback(f);
}

/*
 * A fetch with room for n upstreams, its timers made: one allocation
 * holding the fetch, its timers (each timer_size, rounded up to keep
 * max_align_t), its order and its dead flags. NULL if out of memory.
 */
static struct fetch *
fetch_alloc(struct fetch_ctx *ctx, size_t n)
{
	const struct transport_ops *ops = ctx->t->ops;
	size_t ts = (ops->timer_size(ctx->t->env) + _Alignof(max_align_t) -
	    1) & ~(_Alignof(max_align_t) - 1);
	struct fetch *f;

	if ((f = calloc(1, sizeof(*f) + 2 * ts + n * (sizeof(*f->order) +
	    1))) == NULL)
		return NULL;
	f->ctx = ctx;
	f->retry = (struct transport_timer *)(void *)f->mem;
	f->deadline = (struct transport_timer *)(void *)(f->mem + ts);
	f->order = (struct upstream **)(void *)(f->mem + 2 * ts);
	f->dead = (uint8_t *)(f->order + n);
	TAILQ_INIT(&f->waiters);
	if (ops->timer_init(ctx->t->env, f->retry, retry_cb, f) == 0 &&
	    ++f->n_timers == 1 &&
	    ops->timer_init(ctx->t->env, f->deadline, deadline_cb, f) == 0 &&
	    ++f->n_timers == 2)
		return f;
	fetch_free(f);
	return NULL;
}

/*
 * A fetch of key through zone: to `only` if given (a probe), else to the
 * zone's upstreams in the order of its policy. Not yet sending.
 */
static struct fetch *
fetch_new(struct fetch_ctx *ctx, enum fetch_kind kind,
    const struct cache_key *key, const struct msg_query *q,
    struct zone_table *zones, struct zone *zone, struct upstream *only)
{
	const struct transport_ops *ops = ctx->t->ops;
	size_t n = only != NULL ? 1 : zone->n_upstreams;
	struct fetch *f;

	if ((f = fetch_alloc(ctx, n)) == NULL)
		return NULL;
	f->kind = kind;
	f->key = *key;
	f->aq.t = ctx->t;
	f->aq.q = *q;
	msg_name_fold(f->aq.q.q.qname, f->aq.q.q.qname_len);
	/* A question clients asked that the upstream failed, for probes. */
	f->aq.clients_q = kind == FETCH_RESOLVE ? &f->aq.q.q : NULL;
	/* A loop probe's made-up name a healthy upstream may refuse. */
	f->aq.health = kind != FETCH_LOOP_PROBE;
	f->aq.randomize_case = ctx->s.randomize_case;
	f->aq.edns_size = ctx->s.edns_size;
	f->aq.counts = &ctx->responses;
	f->aq.tap = &ctx->tap;
	f->aq.owner = &owner;
	f->aq.arg = f;
	f->zones = zone_table_ref(zones);
	f->zone = zone;
	if (only != NULL)
		f->order[f->n_order++] = only;
	else
		f->n_order = upstream_order(zone->upstreams, n, zone->policy,
		    f->aq.q.q.qname, f->aq.q.q.qname_len, f->order);
	ops->timer_set(f->deadline, ctx->s.query_timeout);
	return f;
}

/*
 * Make w (if any) wait on f, in this worker: -1 (refused) if max_waiters
 * wait already, else 0. The first waiter of a fetch this worker started
 * (joined 0) is none that coalesced.
 */
static int
fetch_wait(struct fetch_ctx *ctx, struct fetch *f, struct fetch_waiter *w,
    int joined)
{
	if (w == NULL)
		return 0;
	/* A waiter more would cost memory and, at the end, one callback's
	 * time; a burst of one name is answered now. */
	if (f->n_waiters >= ctx->s.max_waiters) {
		metrics_add(&ctx->stats.waiters_refused, 1);
		return -1;
	}
	metrics_add(&ctx->stats.coalesced, joined);
	if (f->kind == FETCH_REMOTE)
		metrics_add(&ctx->stats.across, 1);
	TAILQ_INSERT_TAIL(&f->waiters, w, entry);
	w->fetch = f;
	f->n_waiters++;
	return 0;
}

/* Into ctx's in-flight table: the fetch of key from now on. */
static void
table_add(struct fetch_ctx *ctx, struct fetch *f, uint64_t now)
{
	f->hnext = *bucket(ctx, &f->key);
	*bucket(ctx, &f->key) = f;
	f->started = now;
}

/*
 * Another worker resolves key, and will tell us when it ends: w waits
 * here for that, on a fetch that sends nothing, at most query-timeout
 * and FETCH_REMOTE_SLACK. -1 if out of memory.
 */
static int
fetch_park(struct fetch_ctx *ctx, const struct cache_key *key, uint64_t now,
    struct fetch_waiter *w)
{
	struct fetch *f;

	if ((f = fetch_alloc(ctx, 0)) == NULL) {
		metrics_add(&ctx->stats.over_budget, 1);
		return -1;
	}
	f->kind = FETCH_REMOTE;
	f->key = *key;
	ctx->t->ops->timer_set(f->deadline, ctx->s.query_timeout +
	    FETCH_REMOTE_SLACK);
	table_add(ctx, f, now);
	return fetch_wait(ctx, f, w, 1);
}

/*
 * A resolution of key in this worker, claimed in the index if claimed:
 * within max-inflight and the zone's budget, or NULL (counted).
 */
static struct fetch *
fetch_start(struct fetch_ctx *ctx, const struct cache_key *key,
    const struct msg_query *q, struct zone_table *zones, struct zone *zone,
    uint64_t now, int claimed)
{
	struct fetch *f = NULL;

	/* A zone spends its own budget only: a stalled upstream of one zone
	 * cannot starve the others. */
	if (metrics_read(&ctx->stats.inflight) >= ctx->s.max_inflight ||
	    !zone_spend(zone))
		goto refused;
	if ((f = fetch_new(ctx, FETCH_RESOLVE, key, q, zones, zone,
	    NULL)) == NULL) {
		zone_refund(zone);
		goto refused;
	}
	table_add(ctx, f, now);
	metrics_add(&ctx->stats.inflight, 1);
	metrics_add(&ctx->stats.started, 1);
	f->claimed = claimed;
	upstream_budget_first(zone_table_registry(zones), now);
	fetch_send_next(f, now);
	return f;
refused:
	metrics_add(&ctx->stats.over_budget, 1);
	if (claimed)
		inflight_release(ctx->index, key, ctx->worker);
	return NULL;
}

int
fetch_join(struct fetch_ctx *ctx, const struct cache_key *key,
    const struct msg_query *q, struct zone_table *zones, struct zone *zone,
    uint64_t now, struct fetch_waiter *w)
{
	struct fetch *f;
	int claimed = 0;

	if ((f = table_find(ctx, key)) != NULL)
		return fetch_wait(ctx, f, w, 1);
	if (ctx->index != NULL) {
		switch (inflight_claim(ctx->index, key, ctx->worker,
		    w != NULL && !w->own, now)) {
		case INFLIGHT_OWNER:
			claimed = 1;
			break;
		case INFLIGHT_WAITING:
			return fetch_park(ctx, key, now, w);
		case INFLIGHT_ELSEWHERE:
			/* Refreshing: the other worker's answer does it. */
			if (w == NULL)
				return 0;
			break;
		}
	}
	if ((f = fetch_start(ctx, key, q, zones, zone, now, claimed)) == NULL)
		return -1;
	/* Not refused: max_waiters is at least 1. */
	(void)fetch_wait(ctx, f, w, 0);
	return 1;
}

void
fetch_landed(struct fetch_ctx *ctx, const struct cache_key *key,
    uint64_t now)
{
	struct fetch *f = table_find(ctx, key);

	if (f != NULL && f->kind == FETCH_REMOTE)
		fetch_end(f, FETCH_LANDED, NULL, now);
}

uint64_t
fetch_started(struct fetch_ctx *ctx, const struct cache_key *key)
{
	struct fetch *f = table_find(ctx, key);

	if (f != NULL && f->kind == FETCH_RESOLVE)
		return f->started;
	return ctx->index != NULL ? inflight_started(ctx->index, key) : 0;
}

/* A probe: question qq to upstream u alone, as for zone z of zones; not
 * coalesced, nothing reported. */
static void
start_probe(struct fetch_ctx *ctx, enum fetch_kind kind, struct upstream *u,
    struct zone_table *zones, struct zone *z, const struct msg_question *qq,
    uint64_t now)
{
	struct msg_query q;
	struct cache_key key;
	struct fetch *f;

	memset(&q, 0, sizeof(q));
	q.q = *qq;
	memset(&key, 0, sizeof(key));
	if ((f = fetch_new(ctx, kind, &key, &q, zones, z, u)) == NULL)
		return;
	/* Whichever worker's listener it comes back to sees it. */
	if (kind == FETCH_LOOP_PROBE && upstream_loop_probe_start(u,
	    f->aq.q.q.qname, f->aq.q.q.qname_len) == -1) {
		f->kind = FETCH_PROBE;	/* so that fetch_free ends nothing */
		fetch_free(f);
		return;
	}
	f->hnext = ctx->probes;
	ctx->probes = f;
	fetch_send_next(f, now);
}

/* What probe_down's sends go through. */
struct down_probes {
	struct fetch_ctx	*ctx;
	struct zone_table	*zones;
};

static void
start_down_probe(void *arg, struct upstream *u, struct zone *z,
    const struct msg_question *q, uint64_t now)
{
	struct down_probes *dp = arg;

	start_probe(dp->ctx, FETCH_PROBE, u, dp->zones, z, q, now);
}

void
fetch_probe_down(struct fetch_ctx *ctx, struct zone_table *zones,
    uint64_t now)
{
	struct down_probes dp = { ctx, zones };

	probe_down(zones, now, start_down_probe, &dp);
}

void
fetch_leave(struct fetch_waiter *w)
{
	if (w->fetch == NULL)
		return;
	TAILQ_REMOVE(&w->fetch->waiters, w, entry);
	w->fetch->n_waiters--;
	w->fetch = NULL;
}

struct fetch_waiter *
fetch_take_waiter(struct fetch *f)
{
	struct fetch_waiter *w;

	if ((w = TAILQ_FIRST(&f->waiters)) != NULL)
		fetch_leave(w);
	return w;
}

struct fetch_ctx *
fetch_ctx_new_on(const struct transport *t, const struct fetch_settings *s,
    fetch_done_fn done, void *arg)
{
	struct fetch_ctx *ctx;

	if ((ctx = calloc(1, sizeof(*ctx))) == NULL)
		return NULL;
	ctx->t = t;
	ctx->s = *s;
	ctx->done = done;
	ctx->arg = arg;
	return ctx;
}

void
fetch_ctx_share(struct fetch_ctx *ctx, struct inflight *index,
    unsigned worker)
{
	ctx->index = index;
	ctx->worker = worker;
}

struct fetch_ctx *
fetch_ctx_new(struct event_base *base, const struct fetch_settings *s,
    fetch_done_fn done, void *arg)
{
	struct fetch_ctx *ctx;
	struct transport *t;

	if ((t = transport_new(base)) == NULL)
		return NULL;
	if ((ctx = fetch_ctx_new_on(t, s, done, arg)) == NULL) {
		transport_free(t);
		return NULL;
	}
	ctx->own_t = t;
	return ctx;
}

void
fetch_ctx_configure(struct fetch_ctx *ctx, const struct fetch_settings *s)
{
	ctx->s = *s;
}

void
fetch_ctx_tap(struct fetch_ctx *ctx, struct dnstap_worker *tap)
{
	ctx->tap = tap;
}

void
fetch_ctx_free(struct fetch_ctx *ctx)
{
	const struct transport *t;
	size_t i;

	if (ctx == NULL)
		return;
	t = ctx->t;
	for (i = 0; i < FETCH_BUCKETS; i++)
		while (ctx->buckets[i] != NULL)
			fetch_end(ctx->buckets[i], FETCH_CANCELLED, NULL,
			    t->ops->now(t->env));
	while (ctx->probes != NULL)
		fetch_end(ctx->probes, FETCH_CANCELLED, NULL,
		    t->ops->now(t->env));
	transport_free(ctx->own_t);
	free(ctx);
}

void
fetch_stats(const struct fetch_ctx *ctx, struct fetch_stats *out)
{
	memset(out, 0, sizeof(*out));
	metrics_accumulate(out, &ctx->stats, sizeof(*out));
	out->mismatched = metrics_read(&ctx->responses.mismatched);
	out->malformed = metrics_read(&ctx->responses.malformed);
	out->oversized = metrics_read(&ctx->responses.oversized);
	out->long_chain = metrics_read(&ctx->responses.long_chain);
	out->local_errors = metrics_read(&ctx->responses.local);
}
