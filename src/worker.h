/*
 * worker.h: one event loop: its listeners, its TCP clients, its fetches,
 * its counters, and the configuration and zones it currently serves.
 */
#ifndef DNSDAMPER_WORKER_H
#define DNSDAMPER_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "cache.h"
#include "config.h"
#include "fetch.h"
#include "listen.h"
#include "metrics.h"
#include "msg.h"
#include "zone.h"

#define WORKER_SCRATCH_LEN	(MSG_MAX_LEN + 64)

struct worker;

/*
 * worker_new: a worker on base serving socks (borrowed; n of them) with
 * conf (borrowed: the caller keeps it alive until the next
 * worker_reconfigure or worker_free), zones (referenced) and cache
 * (borrowed, shared). Returns NULL on error, after logging it.
 */
struct worker *worker_new(struct event_base *base, const struct config *conf,
	    struct zone_table *zones, struct cache *cache,
	    const struct listen_socket *socks, size_t n);

/* worker_reconfigure: serve conf and zones (as in worker_new) from now on;
 * fetches in flight finish with what they started with. */
void	worker_reconfigure(struct worker *w, const struct config *conf,
	    struct zone_table *zones);

/* worker_free: cancel fetches, close clients, free. NULL is allowed. */
void	worker_free(struct worker *w);

/* Accessors for the files that serve a worker's sockets. */
struct event_base *worker_base(struct worker *w);
const struct config *worker_config(const struct worker *w);
struct zone_table *worker_zones(struct worker *w);
struct cache *worker_cache(struct worker *w);
struct fetch_ctx *worker_fetches(struct worker *w);
uint8_t	*worker_scratch(struct worker *w);
struct metrics *worker_metrics(struct worker *w);

#endif
