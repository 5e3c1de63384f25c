/* worker.c: one event loop with its sockets, fetches, counters, thread. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admit.h"
#include "clock.h"
#include "dnstap.h"
#include "listen.h"
#include "log.h"
#include "mailbox.h"
#include "monitor.h"
#include "query.h"
#include "tcpconn.h"
#include "udp.h"
#include "worker.h"

struct worker {
	struct query_ctx	 ctx;		/* passed down by pointer */
	unsigned		 id;
	struct worker_shared	*shared;
	struct snapshot		*snap;		/* what ctx serves */
	struct event_base	*own_base;	/* a thread's, or NULL */
	pthread_t		 thread;
	int			 started;	/* the thread runs */
	struct mailbox		*mailbox;
	struct mailbox_msg	 exit_msg;	/* worker_stop's, never freed */
	struct udp_server	**udp;
	struct tcp_server	**tcp;
	size_t			 n_socks;
	struct event		*tick;		/* probes, heartbeat */
	uint64_t		 heartbeat;	/* ms, atomic */
	/* Main waits for a snapshot to be served (worker_wait_served). */
	pthread_mutex_t		 lock;
	pthread_cond_t		 served_cond;
	uint64_t		 posted;	/* serial of the latest sent */
	uint64_t		 served;	/* of the one served: lock */
};

/* A snapshot for a worker's thread to swap to. */
struct serve_msg {
	struct mailbox_msg	 m;
	struct snapshot		*snap;
	uint64_t		 serial;
};

/* A key another worker's resolution of has landed in the cache. */
struct landed_msg {
	struct mailbox_msg	 m;
	int			 resume;	/* an upstream is back, not
						 * a key landed */
	struct cache_key	 key;
};

/*
 * Once a second: the heartbeat main's watchdog looks at, and while some
 * upstream is down, the probes that are due.
 */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	uint64_t now = clock_now_ms();

	(void)fd;
	(void)what;
	__atomic_store_n(&w->heartbeat, now, __ATOMIC_RELAXED);
	querylog_tick();
	fetch_probe_down(w->ctx.fetches, w->ctx.zones, now);
}

static void
fetch_settings_of(const struct config *conf, struct fetch_settings *s)
{
	s->edns_size = conf->edns_buffer_size;
	s->query_timeout = conf->query_timeout;
	s->max_inflight = conf->max_inflight;
	s->max_waiters = conf->max_waiters;
	s->randomize_case = conf->randomize_case;
}

/* Serve snap (a reference taken), dropping the old; in w's thread. */
static void
apply(struct worker *w, struct snapshot *snap)
{
	struct fetch_settings s;
	struct snapshot *old = w->snap;

	w->snap = snapshot_ref(snap);
	w->ctx.conf = snap->conf;
	w->ctx.zones = snap->zones;
	w->ctx.local = snap->local;
	w->ctx.observe.tap = dnstap_worker(snap->tap, w->id);
	querylog_configure(&w->ctx.observe.log, snap->conf->log_queries_num,
	    snap->conf->log_queries_den);
	fetch_settings_of(snap->conf, &s);
	if (w->ctx.fetches != NULL) {
		fetch_ctx_configure(w->ctx.fetches, &s);
		fetch_ctx_tap(w->ctx.fetches, w->ctx.observe.tap);
	}
	snapshot_unref(old);
}

static void
serve_cb(struct mailbox_msg *m, void *arg, int cancelled)
{
	struct serve_msg *sm = (struct serve_msg *)m;
	struct worker *w = arg;

	if (!cancelled) {
		apply(w, sm->snap);
		pthread_mutex_lock(&w->lock);
		w->served = sm->serial;
		pthread_cond_broadcast(&w->served_cond);
		pthread_mutex_unlock(&w->lock);
	}
	snapshot_unref(sm->snap);
	free(sm);
}

static void
landed_cb(struct mailbox_msg *m, void *arg, int cancelled)
{
	struct landed_msg *lm = (struct landed_msg *)m;
	struct worker *w = arg;

	if (cancelled)
		;
	else if (lm->resume)
		fetch_resume_back(w->ctx.fetches, clock_now_ms());
	else
		fetch_landed(w->ctx.fetches, &lm->key, clock_now_ms());
	free(lm);
}

/* The in-flight index's word, from the owner's thread: post it to w. */
static void
landed_notify(void *arg, const struct cache_key *key)
{
	/* Static: one warning a minute for the process, whichever worker
	 * runs out; log_limit_due is lock-free. */
	static struct log_limit said;
	struct worker *w = arg;
	struct landed_msg *lm;
	uint64_t held;

	/* Lost, its waiters here look in the cache only at their own
	 * deadline (fetch.c's FETCH_REMOTE_SLACK): a failed malloc's cost. */
	if ((lm = malloc(sizeof(*lm))) == NULL) {
		if (log_limit_due(&said, clock_now_ms(), LOG_LIMIT_MINUTE,
		    &held))
			log_warnx("out of memory: queries waiting in worker "
			    "%u for another's answer will not hear of it "
			    "(and %llu more since the last such message)",
			    w->id, (unsigned long long)held);
		return;
	}
	lm->m.fn = landed_cb;
	if ((lm->resume = key == NULL) == 0)
		lm->key = *key;
	mailbox_post(w->mailbox, &lm->m);
}

static void
exit_cb(struct mailbox_msg *m, void *arg, int cancelled)
{
	struct worker *w = arg;

	(void)m;
	if (!cancelled)
		event_base_loopbreak(w->ctx.base);
}

/* Serve listening socket s (its UDP and TCP halves) as w's i-th. */
static int
serve_socket(struct worker *w, const struct listen_socket *s, size_t i)
{
	if (s->udp_fd != -1 && (w->udp[i] = udp_server_new(&w->ctx, s->udp_fd,
	    addr_is_wildcard(&s->addr))) == NULL)
		return -1;
	if (s->tcp_fd != -1 &&
	    (w->tcp[i] = tcpconn_server_new(&w->ctx, s->tcp_fd)) == NULL)
		return -1;
	return 0;
}

/* What w's context is made of, beyond the sockets. */
static int
worker_init(struct worker *w, struct snapshot *snap)
{
	struct timeval second = { 1, 0 };
	struct fetch_settings s;

	apply(w, snap);
	w->ctx.cache = w->shared->cache;
	w->ctx.lkg = w->shared->lkg;
	w->ctx.tcp_open = &w->shared->tcp_open;
	w->ctx.cache_shared = w->shared->index != NULL;
	if ((w->ctx.observe.monitor = w->shared->monitor) != NULL)
		w->ctx.observe.watching = monitor_watching(w->shared->monitor);
	LIST_INIT(&w->ctx.answering);
	TAILQ_INIT(&w->ctx.tcp_conns);
	fetch_settings_of(snap->conf, &s);
	if ((w->ctx.fetches = fetch_ctx_new(w->ctx.base, &s, query_fetch_done,
	    &w->ctx)) == NULL ||
	    (w->ctx.admit = admit_new(w->shared->ratelimit)) == NULL ||
	    (w->mailbox = mailbox_new(w->ctx.base, w)) == NULL ||
	    (w->tick = event_new(w->ctx.base, -1, EV_PERSIST, tick_cb,
	    w)) == NULL || event_add(w->tick, &second) == -1)
		return -1;
	fetch_ctx_tap(w->ctx.fetches, w->ctx.observe.tap);
	w->heartbeat = clock_now_ms();
	if (w->shared->index != NULL) {
		fetch_ctx_share(w->ctx.fetches, w->shared->index, w->id);
		inflight_notify(w->shared->index, w->id, landed_notify, w);
	}
	return 0;
}

struct worker *
worker_new(struct event_base *base, unsigned id, struct worker_shared *sh,
    struct snapshot *snap, const struct listen_socket *socks, size_t n)
{
	pthread_condattr_t attr;
	struct worker *w;
	size_t i;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->id = id;
	w->shared = sh;
	pthread_mutex_init(&w->lock, NULL);
	/* Waited on with a deadline on the monotonic clock: a wall-clock
	 * step must not stretch or cut a reload's wait. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->served_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (base == NULL && (base = w->own_base = event_base_new()) == NULL)
		goto fail;
	w->ctx.base = base;
	w->udp = calloc(n, sizeof(*w->udp));
	w->tcp = calloc(n, sizeof(*w->tcp));
	if (w->udp == NULL || w->tcp == NULL || worker_init(w, snap) == -1)
		goto fail;
	w->n_socks = n;
	for (i = 0; i < n; i++)
		if (serve_socket(w, &socks[i], i) == -1)
			goto fail;
	return w;
fail:
	log_errx("cannot start worker %u: out of memory or descriptors", id);
	worker_free(w);
	return NULL;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;

	if (event_base_dispatch(w->ctx.base) == -1)
		log_errx("worker %u: its event loop failed", w->id);
	return NULL;
}

int
worker_start(struct worker *w)
{
	sigset_t all, old;
	int rc;

	if (w->own_base == NULL)
		return 0;
	/* The thread inherits the mask: every signal is main's loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		log_err("worker %u: cannot start its thread", w->id);
		return -1;
	}
	w->started = 1;
	return 0;
}

void
worker_serve(struct worker *w, struct snapshot *snap)
{
	struct serve_msg *sm;

	w->posted++;
	/* Main's own loop, or a thread not yet running: at once. */
	if (w->own_base == NULL || !w->started) {
		apply(w, snap);
		w->served = w->posted;
		return;
	}
	/* A running worker cannot be changed from here: out of memory, it
	 * keeps the old snapshot (worker_wait_served says so). */
	if ((sm = malloc(sizeof(*sm))) == NULL)
		return;
	sm->m.fn = serve_cb;
	sm->snap = snapshot_ref(snap);
	sm->serial = w->posted;
	mailbox_post(w->mailbox, &sm->m);
}

int
worker_wait_served(struct worker *w, uint64_t timeout_ms)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(timeout_ms / 1000);
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&w->lock);
	while (w->served < w->posted && rc == 0)
		rc = pthread_cond_timedwait(&w->served_cond, &w->lock, &until);
	rc = w->served < w->posted ? -1 : 0;
	pthread_mutex_unlock(&w->lock);
	return rc;
}

uint64_t
worker_heartbeat(const struct worker *w)
{
	return __atomic_load_n(&w->heartbeat, __ATOMIC_RELAXED);
}

void
worker_stop(struct worker *w)
{
	if (!w->started)
		return;
	w->exit_msg.fn = exit_cb;
	mailbox_post(w->mailbox, &w->exit_msg);
	pthread_join(w->thread, NULL);
	w->started = 0;
}

void
worker_free(struct worker *w)
{
	size_t i;

	if (w == NULL)
		return;
	if (w->shared != NULL && w->shared->index != NULL)
		inflight_notify(w->shared->index, w->id, NULL, NULL);
	if (w->tick != NULL)
		event_free(w->tick);
	/* Fetches first: their waiters hold references on TCP clients. */
	fetch_ctx_free(w->ctx.fetches);
	query_cancel(&w->ctx);
	for (i = 0; i < w->n_socks; i++) {
		udp_server_free(w->udp[i]);
		tcpconn_server_free(w->tcp[i]);
	}
	free(w->udp);
	free(w->tcp);
	mailbox_free(w->mailbox);
	admit_free(w->ctx.admit);
	snapshot_unref(w->snap);
	if (w->own_base != NULL)
		event_base_free(w->own_base);
	pthread_cond_destroy(&w->served_cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

const struct query_ctx *
worker_context(const struct worker *w)
{
	return &w->ctx;
}
