/*
 * metrics.h: counters and fixed-bucket histograms, one block per worker
 * (in its struct query_ctx, written by that worker alone and summed by
 * whoever reports them), and their rendering as the Prometheus text
 * exposition format (version 0.0.4) or as JSON, from one walk over the
 * same figures. Label values are bounded: qtypes and rcodes fold into
 * fixed sets, and never is a qname a label.
 */
#ifndef DNSDAMPER_METRICS_H
#define DNSDAMPER_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

/* Upper bounds of the latency buckets, in ms; +Inf is implied. */
#define METRICS_BUCKETS	12

struct metrics_histogram {
	uint64_t	bucket[METRICS_BUCKETS + 1];	/* not cumulative */
	uint64_t	count;
	uint64_t	sum_ms;
};

/*
 * A counter is written by one thread (its worker) and read by another (the
 * control socket's, summing every worker's): metrics_add is a relaxed
 * atomic store of the loaded value plus n, a plain load, add and store on
 * the usual targets, so the reader never sees a torn value and the query
 * path takes no lock and no locked instruction. metrics_read is the
 * reader's relaxed load. A counter written by several threads at once
 * (struct upstream_stats: every worker's attempts count into it) is
 * added to with metrics_add_shared, a relaxed atomic fetch-and-add.
 */
static inline void
metrics_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
	    __ATOMIC_RELAXED);
}

/* metrics_sub: a gauge (one writer, as metrics_add) goes down by n. */
static inline void
metrics_sub(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) - n,
	    __ATOMIC_RELAXED);
}

static inline void
metrics_add_shared(uint64_t *c, uint64_t n)
{
	(void)__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static inline uint64_t
metrics_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/*
 * metrics_accumulate: add to dst the counters of src, both size bytes of
 * nothing but uint64_t (struct metrics, struct fetch_stats, a histogram),
 * each read from src with metrics_read: what a reader on another thread
 * sums workers' blocks with.
 */
void	metrics_accumulate(void *dst, const void *src, size_t size);

/* metrics_observe: count one observation of ms milliseconds (one writer,
 * metrics_add). */
void	metrics_observe(struct metrics_histogram *h, uint64_t ms);

/* metrics_observe_shared: the same into a histogram several threads
 * observe into (metrics_add_shared). */
void	metrics_observe_shared(struct metrics_histogram *h, uint64_t ms);

enum metrics_transport { METRICS_UDP, METRICS_TCP, METRICS_TRANSPORTS };

/* Where an answer came from. */
enum metrics_source {
	METRICS_FROM_CACHE,	/* a fresh entry */
	METRICS_FROM_STALE,	/* an expired entry, RFC 8767 */
	METRICS_FROM_UPSTREAM,	/* a resolution that just ended */
	METRICS_FROM_LOCAL,	/* local data */
	METRICS_FROM_ERROR,	/* made up: FORMERR, SERVFAIL, REFUSED... */
	METRICS_SOURCES
};

#define METRICS_QTYPES	16	/* see metrics.c: A ... other */
#define METRICS_RCODES	7	/* NOERROR ... REFUSED, other */

/* One worker's counters. */
struct metrics {
	uint64_t	queries[METRICS_TRANSPORTS][METRICS_QTYPES];
	uint64_t	answers[METRICS_SOURCES][METRICS_RCODES];
	uint64_t	cache_hits;	/* fresh, stale or failure entries */
	uint64_t	cache_misses;
	uint64_t	prefetches;	/* background refreshes started */
	uint64_t	dropped;	/* unanswerable client messages */
	uint64_t	tcp_accepted;
	uint64_t	tcp_refused;	/* over tcp-clients, or no memory */
	uint64_t	tcp_evicted;	/* closed for a new one at the cap */
	uint64_t	tcp_open;	/* gauge: connections open now */
	uint64_t	refused_queries; /* client not in allow */
	uint64_t	refused_connections; /* TCP, closed at accept */
	uint64_t	ratelimit_dropped; /* over ratelimit, unanswered */
	uint64_t	ratelimit_slipped; /* over ratelimit, TC=1 */
	uint64_t	any_minimal;	/* ANY over UDP, RFC 8482 §4.2 */
	struct metrics_histogram answer_latency;
};

/* metrics_count_query: a query of qtype (host order) arrived. */
void	metrics_count_query(struct metrics *m, enum metrics_transport t,
	    uint16_t qtype);

/* metrics_count_answer: an answer with header rcode (4 bits) was sent
 * from source, latency_ms after its query arrived. */
void	metrics_count_answer(struct metrics *m, enum metrics_source source,
	    unsigned rcode, uint64_t latency_ms);

/*
 * A metrics writer: the walk calls family once per metric, then sample or
 * histogram for each labelled series of it. labels are n (name, value)
 * pairs: labels[2 * i] names, labels[2 * i + 1] values.
 */
struct metrics_writer {
	void	(*family)(void *ctx, const char *name, const char *type,
		    const char *help);
	void	(*sample)(void *ctx, const char *name,
		    const char *const *labels, size_t n, double value);
	void	(*histogram)(void *ctx, const char *name,
		    const char *const *labels, size_t n,
		    const struct metrics_histogram *h);
	void	(*end_family)(void *ctx);
	void	*ctx;
};

/* metrics_prometheus_writer: a writer appending text format 0.0.4 to buf. */
void	metrics_prometheus_writer(struct metrics_writer *w,
	    struct evbuffer *buf);

/* The state of a JSON writer, owned by the caller. */
struct metrics_json {
	struct evbuffer	*buf;
	int		 families;	/* written so far */
	int		 series;	/* in the current family */
};

/*
 * metrics_json_writer: a writer appending one JSON object to buf,
 * {"name": [{"labels": {...}, "value": v}, ...], ...}, where a histogram
 * series has "count", "sum" (seconds) and cumulative "buckets" by "le";
 * metrics_json_finish closes it.
 */
void	metrics_json_writer(struct metrics_writer *w, struct metrics_json *j,
	    struct evbuffer *buf);
void	metrics_json_finish(struct metrics_json *j);

/*
 * metrics_text_writer: a writer for people: one line per non-zero series,
 * "name{labels} value", histograms as their count and mean in ms.
 */
void	metrics_text_writer(struct metrics_writer *w, struct evbuffer *buf);

/* metrics_json_string: append s as a JSON string, quoted and escaped. */
void	metrics_json_string(struct evbuffer *b, const char *s);

/* The value names of the folded label sets, for the walk. */
const char *metrics_qtype_name(size_t i);
const char *metrics_rcode_name(size_t i);
const char *metrics_source_name(size_t i);
const char *metrics_transport_name(size_t i);

#endif
