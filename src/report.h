/*
 * report.h: what the daemon says about itself: every metric (one walk,
 * rendered by a metrics_writer as Prometheus text or JSON), the state of
 * its upstreams, and how it would answer a name right now.
 */
#ifndef DNSDAMPER_REPORT_H
#define DNSDAMPER_REPORT_H

#include <stdint.h>

#include "cache.h"
#include "metrics.h"

struct evbuffer;
struct lkg;
struct restore;
struct worker;

enum report_format {
	REPORT_JSON,
	REPORT_TEXT		/* aligned columns, for dnsdamperctl */
};

/*
 * What a report reads; all borrowed. Every worker's figures are summed;
 * names are explained as worker 0 would answer them (it runs on the
 * report's thread, main's).
 */
struct monitor;

struct report {
	struct worker	*const *workers;
	size_t		 n_workers;
	struct cache	*cache;
	struct lkg	*lkg;		/* last known good (lkg.h) */
	struct upstream_registry *upstreams;	/* what /upstreams lists */
	int64_t		 start_time;	/* Unix seconds */
	struct monitor	*monitor;	/* what GET /monitor watches */
	const struct restore *restore;	/* the cache file's, or NULL */
};

/*
 * report_metrics: every metric as of now, through writer w; the gauge of
 * stale entries is stale_entries, which the caller counted with
 * cache_stale_slice (a walk it may spread over turns of the event loop).
 */
void	report_metrics(const struct report *r, uint64_t stale_entries,
	    const struct metrics_writer *w);

/*
 * report_upstreams: every upstream of r->upstreams (those of the current
 * zones) into out. JSON: an array of address, state ("up", "down",
 * "loop"), smoothed RTT and RTT variance (ms, -1 unmeasured), timeout
 * (ms), consecutive failures, EDNS state, and the counters per zone.
 * REPORT_TEXT: a table, a line per upstream and zone: address, state,
 * EDNS, smoothed RTT ("-" unmeasured), timeout, failures, zone, and the
 * queries, answers, timeouts and failures there.
 */
void	report_upstreams(const struct report *r, enum report_format f,
	    struct evbuffer *out);

/*
 * report_explain: how name (presentation format) with qtype (host order)
 * would be answered at now, as a JSON object or text: whether it is
 * answered locally and by which rule (a hosts-file or local-data line, a
 * default or configured local zone; "local": null when no local zone
 * encloses it), the forward zone (for DS at its name, the parent's), its
 * upstreams in the order a resolution would try them with their state,
 * and the cache entry (state fresh/stale/negative/failure/absent, TTL
 * left or age past expiry), for the plain key (DO and CD clear). The text
 * stops after the local line when the name is answered locally.
 * Returns 0, or -1 if name is not a domain name.
 */
int	report_explain(const struct report *r, const char *name,
	    uint16_t qtype, uint64_t now, enum report_format f,
	    struct evbuffer *out);

#endif
