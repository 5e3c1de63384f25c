/*
 * observe.h: an answered client query told to whatever watches answers:
 * dnstap (CLIENT_RESPONSE), `dnsdamperctl monitor` and log-queries.
 * What a worker tells them with is a struct observe in its query_ctx;
 * with nothing watching, observe_wanted is false and the query path
 * builds nothing.
 */
#ifndef DNSDAMPER_OBSERVE_H
#define DNSDAMPER_OBSERVE_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "queryinfo.h"
#include "querylog.h"

struct dnstap_worker;
struct monitor;

/* A worker's outputs; each NULL (or off) when not configured. */
struct observe {
	struct dnstap_worker	*tap;		/* its snapshot's, or NULL */
	struct monitor		*monitor;	/* main's, or NULL */
	const unsigned		*watching;	/* its watchers (atomic), or
						 * NULL */
	struct querylog		 log;		/* log-queries, the worker's
						 * sampling */
};

/* observe_watched: 1 if someone watches the monitor of o, else 0. */
static inline int
observe_watched(const struct observe *o)
{
	return o->watching != NULL &&
	    __atomic_load_n(o->watching, __ATOMIC_RELAXED) != 0;
}

/* observe_wanted: 1 if anything wants the queries of o, else 0. */
static inline int
observe_wanted(const struct observe *o)
{
	return o->tap != NULL || observe_watched(o) || querylog_on(&o->log);
}

/*
 * observe_answer: tell o's outputs of the answer buf (len octets, as
 * sent) to client over tcp or UDP, for query q (NULL or qname_len 0:
 * not parsed), from source (held: 1 for a stale answer that is a last
 * known good one, lkg.h; upstream: the name of the upstream that
 * answered, or NULL), for a query that arrived at arrived, sent now (ms,
 * monotonic). Everything borrowed for the call.
 */
void	observe_answer(struct observe *o, const struct addr *client,
	    int tcp, const struct msg_query *q, const uint8_t *buf,
	    size_t len, enum metrics_source source, int held,
	    const char *upstream, uint64_t arrived, uint64_t now);

/*
 * observe_query: tell o's outputs of a query pkt (len octets) just
 * received from client over tcp or UDP (dnstap's CLIENT_QUERY).
 */
void	observe_query(const struct observe *o, const struct addr *client,
	    int tcp, const uint8_t *pkt, size_t len);

#endif
