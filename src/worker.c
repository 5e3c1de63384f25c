/* worker.c: one event loop with its sockets, fetches and counters. */
#include "autoconf.h"

#include <stdlib.h>

#include "clock.h"
#include "listen.h"
#include "log.h"
#include "query.h"
#include "tcpconn.h"
#include "worker.h"

struct worker {
	struct event_base	*base;
	const struct config	*conf;
	struct zone_table	*zones;
	struct cache		*cache;
	struct fetch_ctx	*fetches;
	struct listen_udp	**udp;
	struct tcp_server	**tcp;
	size_t			 n_socks;
	struct event		*probe_tick;	/* re-checks down upstreams */
	struct metrics		 metrics;
	uint8_t			 scratch[WORKER_SCRATCH_LEN];
};

/* Once a second, while some upstream is down, probe those that are due. */
static void
probe_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)what;
	fetch_probe_down(w->fetches, w->zones, clock_now_ms());
}

static void
fetch_settings_of(const struct config *conf, struct fetch_settings *s)
{
	s->edns_size = conf->edns_buffer_size;
	s->query_timeout = conf->query_timeout;
	s->max_inflight = conf->max_inflight;
	s->randomize_case = conf->randomize_case;
}

struct worker *
worker_new(struct event_base *base, const struct config *conf,
    struct zone_table *zones, struct cache *cache,
    const struct listen_socket *socks, size_t n)
{
	struct timeval second = { 1, 0 };
	struct fetch_settings s;
	struct worker *w;
	size_t i;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->base = base;
	w->conf = conf;
	w->zones = zone_table_ref(zones);
	w->cache = cache;
	fetch_settings_of(conf, &s);
	w->fetches = fetch_ctx_new(base, &s, query_fetch_done, w);
	w->udp = calloc(n, sizeof(*w->udp));
	w->tcp = calloc(n, sizeof(*w->tcp));
	w->probe_tick = event_new(base, -1, EV_PERSIST, probe_tick_cb, w);
	if (w->fetches == NULL || w->udp == NULL || w->tcp == NULL ||
	    w->probe_tick == NULL || event_add(w->probe_tick, &second) == -1)
		goto fail;
	w->n_socks = n;
	for (i = 0; i < n; i++)
		if ((socks[i].udp_fd != -1 &&
		    (w->udp[i] = listen_udp_start(w, &socks[i])) == NULL) ||
		    (socks[i].tcp_fd != -1 &&
		    (w->tcp[i] = tcpconn_server_new(w, socks[i].tcp_fd)) ==
		    NULL))
			goto fail;
	return w;
fail:
	log_errx("cannot start the worker: out of memory or descriptors");
	worker_free(w);
	return NULL;
}

void
worker_reconfigure(struct worker *w, const struct config *conf,
    struct zone_table *zones)
{
	struct fetch_settings s;

	w->conf = conf;
	zone_table_unref(w->zones);
	w->zones = zone_table_ref(zones);
	fetch_settings_of(conf, &s);
	fetch_ctx_configure(w->fetches, &s);
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
	fetch_ctx_free(w->fetches);
	for (i = 0; i < w->n_socks; i++) {
		listen_udp_stop(w->udp[i]);
		tcpconn_server_free(w->tcp[i]);
	}
	free(w->udp);
	free(w->tcp);
	zone_table_unref(w->zones);
	free(w);
}

struct event_base *
worker_base(struct worker *w)
{
	return w->base;
}

const struct config *
worker_config(const struct worker *w)
{
	return w->conf;
}

struct zone_table *
worker_zones(struct worker *w)
{
	return w->zones;
}

struct cache *
worker_cache(struct worker *w)
{
	return w->cache;
}

struct fetch_ctx *
worker_fetches(struct worker *w)
{
	return w->fetches;
}

uint8_t *
worker_scratch(struct worker *w)
{
	return w->scratch;
}

struct metrics *
worker_metrics(struct worker *w)
{
	return &w->metrics;
}
