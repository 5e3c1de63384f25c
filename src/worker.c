/* worker.c: one event loop with its sockets, fetches and counters. */
#include "autoconf.h"

#include <stdlib.h>

#include "admit.h"
#include "clock.h"
#include "listen.h"
#include "log.h"
#include "query.h"
#include "tcpconn.h"
#include "udp.h"
#include "worker.h"

struct worker {
	struct query_ctx	 ctx;		/* passed down by pointer */
	struct udp_server	**udp;
	struct tcp_server	**tcp;
	size_t			 n_socks;
	struct event		*probe_tick;	/* re-checks down upstreams */
};

/* Once a second, while some upstream is down, probe those that are due. */
static void
probe_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct query_ctx *ctx = arg;

	(void)fd;
	(void)what;
	fetch_probe_down(ctx->fetches, ctx->zones, clock_now_ms());
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

struct worker *
worker_new(struct event_base *base, const struct config *conf,
    struct zone_table *zones, struct localzone_table *local,
    struct cache *cache, const struct listen_socket *socks, size_t n)
{
	struct timeval second = { 1, 0 };
	struct fetch_settings s;
	struct worker *w;
	size_t i;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->ctx.base = base;
	w->ctx.conf = conf;
	w->ctx.zones = zone_table_ref(zones);
	w->ctx.local = localzone_table_ref(local);
	w->ctx.cache = cache;
	LIST_INIT(&w->ctx.answering);
	TAILQ_INIT(&w->ctx.tcp_conns);
	fetch_settings_of(conf, &s);
	w->ctx.fetches = fetch_ctx_new(base, &s, query_fetch_done, &w->ctx);
	w->ctx.admit = admit_new(conf);
	w->udp = calloc(n, sizeof(*w->udp));
	w->tcp = calloc(n, sizeof(*w->tcp));
	w->probe_tick = event_new(base, -1, EV_PERSIST, probe_tick_cb,
	    &w->ctx);
	if (w->ctx.fetches == NULL || w->ctx.admit == NULL ||
	    w->udp == NULL || w->tcp == NULL || w->probe_tick == NULL ||
	    event_add(w->probe_tick, &second) == -1)
		goto fail;
	w->n_socks = n;
	for (i = 0; i < n; i++)
		if (serve_socket(w, &socks[i], i) == -1)
			goto fail;
	return w;
fail:
	log_errx("cannot start the worker: out of memory or descriptors");
	worker_free(w);
	return NULL;
}

void
worker_reconfigure(struct worker *w, const struct config *conf,
    struct zone_table *zones, struct localzone_table *local)
{
	struct fetch_settings s;

	w->ctx.conf = conf;
	zone_table_unref(w->ctx.zones);
	w->ctx.zones = zone_table_ref(zones);
	localzone_table_unref(w->ctx.local);
	w->ctx.local = localzone_table_ref(local);
	fetch_settings_of(conf, &s);
	fetch_ctx_configure(w->ctx.fetches, &s);
	(void)admit_configure(w->ctx.admit, conf);
}

void
worker_free(struct worker *w)
{
	size_t i;

	if (w == NULL)
		return;
	if (w->probe_tick != NULL)
		event_free(w->probe_tick);
	/* Fetches first: their waiters hold references on TCP clients. */
	fetch_ctx_free(w->ctx.fetches);
	query_cancel(&w->ctx);
	for (i = 0; i < w->n_socks; i++) {
		udp_server_free(w->udp[i]);
		tcpconn_server_free(w->tcp[i]);
	}
	free(w->udp);
	free(w->tcp);
	admit_free(w->ctx.admit);
	zone_table_unref(w->ctx.zones);
	localzone_table_unref(w->ctx.local);
	free(w);
}

const struct query_ctx *
worker_context(const struct worker *w)
{
	return &w->ctx;
}
