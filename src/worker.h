/*
 * worker.h: one event loop: its listeners, its TCP clients, and the
 * struct query_ctx its queries are served with (its fetches, its counters,
 * the configuration and zones it currently serves, the shared cache).
 */
#ifndef DNSDAMPER_WORKER_H
#define DNSDAMPER_WORKER_H

#include <stddef.h>

#include <event2/event.h>

#include "cache.h"
#include "config.h"
#include "listen.h"
#include "localzone.h"
#include "query.h"
#include "zone.h"

struct worker;

/*
 * worker_new: a worker on base serving socks (borrowed; n of them) with
 * conf (borrowed: the caller keeps it alive until the next
 * worker_reconfigure or worker_free), zones and local (referenced) and
 * cache (borrowed, shared). Returns NULL on error, after logging it.
 */
struct worker *worker_new(struct event_base *base, const struct config *conf,
	    struct zone_table *zones, struct localzone_table *local,
	    struct cache *cache, const struct listen_socket *socks, size_t n);

/* worker_reconfigure: serve conf, zones and local (as in worker_new) from
 * now on; fetches in flight finish with what they started with. */
void	worker_reconfigure(struct worker *w, const struct config *conf,
	    struct zone_table *zones, struct localzone_table *local);

/* worker_free: cancel fetches, close clients, free. NULL is allowed. */
void	worker_free(struct worker *w);

/*
 * worker_context: what w serves with, for reading its figures (metrics,
 * fetch counters, current zones); valid until worker_free.
 */
const struct query_ctx *worker_context(const struct worker *w);

#endif
