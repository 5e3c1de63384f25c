/* metrics.c: counters, histograms, and their Prometheus and JSON forms. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "metrics.h"

static const uint64_t bucket_ms[METRICS_BUCKETS] = {
	1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000, 5000
};
static const char *const bucket_le[METRICS_BUCKETS + 1] = {
	"0.001", "0.002", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
	"0.5", "1", "2", "5", "+Inf"
};

/* The qtypes worth a label of their own; everything else is "other". */
static const struct {
	uint16_t	 type;
	const char	*name;
} qtypes[METRICS_QTYPES - 1] = {
	{ 1, "A" }, { 28, "AAAA" }, { 33, "SRV" }, { 12, "PTR" },
	{ 5, "CNAME" }, { 15, "MX" }, { 16, "TXT" }, { 2, "NS" },
	{ 6, "SOA" }, { 35, "NAPTR" }, { 64, "SVCB" }, { 65, "HTTPS" },
	{ 43, "DS" }, { 48, "DNSKEY" }, { 255, "ANY" }
};
static const char *const rcodes[METRICS_RCODES] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
	"other"
};
static const char *const sources[METRICS_SOURCES] = {
	"cache", "stale", "upstream", "local", "error"
};
static const char *const transports[METRICS_TRANSPORTS] = { "udp", "tcp" };

void
metrics_accumulate(void *dst, const void *src, size_t size)
{
	uint64_t *d = dst;
	const uint64_t *s = src;
	size_t i;

	for (i = 0; i < size / sizeof(uint64_t); i++)
		d[i] += metrics_read(&s[i]);
}

/* The bucket of an observation of ms milliseconds. */
static inline size_t
bucket_of(uint64_t ms)
{
	size_t i;

	for (i = 0; i < METRICS_BUCKETS && ms > bucket_ms[i]; i++)
		;
	return i;
}

/* metrics_observe, inline for metrics_count_answer: every answer. */
static inline void
observe(struct metrics_histogram *h, uint64_t ms)
{
	metrics_add(&h->bucket[bucket_of(ms)], 1);
	metrics_add(&h->count, 1);
	metrics_add(&h->sum_ms, ms);
}

void
metrics_observe(struct metrics_histogram *h, uint64_t ms)
{
	observe(h, ms);
}

void
metrics_observe_shared(struct metrics_histogram *h, uint64_t ms)
{
	metrics_add_shared(&h->bucket[bucket_of(ms)], 1);
	metrics_add_shared(&h->count, 1);
	metrics_add_shared(&h->sum_ms, ms);
}

void
metrics_count_query(struct metrics *m, enum metrics_transport t,
    uint16_t qtype)
{
	size_t i;

	for (i = 0; i < METRICS_QTYPES - 1 && qtypes[i].type != qtype; i++)
		;
	metrics_add(&m->queries[t][i], 1);
}

void
metrics_count_answer(struct metrics *m, enum metrics_source source,
    unsigned rcode, uint64_t latency_ms)
{
	metrics_add(&m->answers[source][rcode < METRICS_RCODES - 1 ? rcode :
	    METRICS_RCODES - 1], 1);
	observe(&m->answer_latency, latency_ms);
}

const char *
metrics_qtype_name(size_t i)
{
	return i < METRICS_QTYPES - 1 ? qtypes[i].name : "other";
}

const char *
metrics_rcode_name(size_t i)
{
	return rcodes[i];
}

const char *
metrics_source_name(size_t i)
{
	return sources[i];
}

const char *
metrics_transport_name(size_t i)
{
	return transports[i];
}

/* Prometheus: label values escape \, " and newline (exposition 0.0.4). */
static void
prom_labels(struct evbuffer *b, const char *const *labels, size_t n,
    const char *extra_name, const char *extra_value)
{
	const char *p;
	size_t i;

	if (n == 0 && extra_name == NULL)
		return;
	evbuffer_add(b, "{", 1);
	for (i = 0; i < n; i++) {
		evbuffer_add_printf(b, "%s%s=\"", i > 0 ? "," : "",
		    labels[2 * i]);
		for (p = labels[2 * i + 1]; *p != '\0'; p++) {
			if (*p == '\\' || *p == '"')
				evbuffer_add_printf(b, "\\%c", *p);
			else if (*p == '\n')
				evbuffer_add(b, "\\n", 2);
			else
				evbuffer_add(b, p, 1);
		}
		evbuffer_add(b, "\"", 1);
	}
	if (extra_name != NULL)
		evbuffer_add_printf(b, "%s%s=\"%s\"", n > 0 ? "," : "",
		    extra_name, extra_value);
	evbuffer_add(b, "}", 1);
}

static void
prom_family(void *ctx, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(ctx, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

static void
prom_sample(void *ctx, const char *name, const char *const *labels,
    size_t n, double value)
{
	evbuffer_add_printf(ctx, "%s", name);
	prom_labels(ctx, labels, n, NULL, NULL);
	evbuffer_add_printf(ctx, " %.9g\n", value);
}

static void
prom_histogram(void *ctx, const char *name, const char *const *labels,
    size_t n, const struct metrics_histogram *h)
{
	uint64_t cumulative = 0;
	size_t i;

	for (i = 0; i <= METRICS_BUCKETS; i++) {
		cumulative += h->bucket[i];
		evbuffer_add_printf(ctx, "%s_bucket", name);
		prom_labels(ctx, labels, n, "le", bucket_le[i]);
		evbuffer_add_printf(ctx, " %llu\n",
		    (unsigned long long)cumulative);
	}
	evbuffer_add_printf(ctx, "%s_sum", name);
	prom_labels(ctx, labels, n, NULL, NULL);
	evbuffer_add_printf(ctx, " %.3f\n", (double)h->sum_ms / 1000);
	evbuffer_add_printf(ctx, "%s_count", name);
	prom_labels(ctx, labels, n, NULL, NULL);
	evbuffer_add_printf(ctx, " %llu\n", (unsigned long long)h->count);
}

static void
prom_end(void *ctx)
{
	(void)ctx;
}

void
metrics_prometheus_writer(struct metrics_writer *w, struct evbuffer *buf)
{
	w->family = prom_family;
	w->sample = prom_sample;
	w->histogram = prom_histogram;
	w->end_family = prom_end;
	w->ctx = buf;
}

/* Label values are addresses and zone names: escape them as JSON. */
void
metrics_json_string(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			evbuffer_add_printf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			evbuffer_add_printf(b, "\\u%04x", (unsigned char)*s);
		else
			evbuffer_add(b, s, 1);
	}
	evbuffer_add(b, "\"", 1);
}

static void
json_family(void *ctx, const char *name, const char *type, const char *help)
{
	struct metrics_json *j = ctx;

	(void)type;
	(void)help;
	evbuffer_add_printf(j->buf, "%s", j->families++ > 0 ? ",\n" : "{\n");
	metrics_json_string(j->buf, name);
	evbuffer_add_printf(j->buf, ": [");
	j->series = 0;
}

static void
json_series(struct metrics_json *j, const char *const *labels, size_t n)
{
	size_t i;

	evbuffer_add_printf(j->buf, "%s{\"labels\": {",
	    j->series++ > 0 ? ", " : "");
	for (i = 0; i < n; i++) {
		if (i > 0)
			evbuffer_add_printf(j->buf, ", ");
		metrics_json_string(j->buf, labels[2 * i]);
		evbuffer_add_printf(j->buf, ": ");
		metrics_json_string(j->buf, labels[2 * i + 1]);
	}
	evbuffer_add_printf(j->buf, "}");
}

static void
json_sample(void *ctx, const char *name, const char *const *labels,
    size_t n, double value)
{
	struct metrics_json *j = ctx;

	(void)name;
	json_series(j, labels, n);
	evbuffer_add_printf(j->buf, ", \"value\": %.9g}", value);
}

static void
json_histogram(void *ctx, const char *name, const char *const *labels,
    size_t n, const struct metrics_histogram *h)
{
	struct metrics_json *j = ctx;
	uint64_t cumulative = 0;
	size_t i;

	(void)name;
	json_series(j, labels, n);
	evbuffer_add_printf(j->buf, ", \"count\": %llu, \"sum\": %.3f, "
	    "\"buckets\": {", (unsigned long long)h->count,
	    (double)h->sum_ms / 1000);
	for (i = 0; i <= METRICS_BUCKETS; i++) {
		cumulative += h->bucket[i];
		evbuffer_add_printf(j->buf, "%s\"%s\": %llu", i > 0 ? ", " :
		    "", bucket_le[i], (unsigned long long)cumulative);
	}
	evbuffer_add_printf(j->buf, "}}");
}

static void
json_end(void *ctx)
{
	struct metrics_json *j = ctx;

	evbuffer_add_printf(j->buf, "]");
}

void
metrics_json_writer(struct metrics_writer *w, struct metrics_json *j,
    struct evbuffer *buf)
{
	j->buf = buf;
	j->families = 0;
	j->series = 0;
	w->family = json_family;
	w->sample = json_sample;
	w->histogram = json_histogram;
	w->end_family = json_end;
	w->ctx = j;
}

void
metrics_json_finish(struct metrics_json *j)
{
	evbuffer_add_printf(j->buf, "%s", j->families > 0 ? "\n}\n" : "{}\n");
}

static void
text_family(void *ctx, const char *name, const char *type, const char *help)
{
	(void)ctx;
	(void)name;
	(void)type;
	(void)help;
}

static void
text_series(struct evbuffer *b, const char *name, const char *const *labels,
    size_t n)
{
	size_t i;

	evbuffer_add_printf(b, "%s", name);
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "%s%s=%s", i == 0 ? "{" : ",",
		    labels[2 * i], labels[2 * i + 1]);
	evbuffer_add_printf(b, "%s", n > 0 ? "}" : "");
}

static void
text_sample(void *ctx, const char *name, const char *const *labels, size_t n,
    double value)
{
	if (value == 0)
		return;
	text_series(ctx, name, labels, n);
	evbuffer_add_printf(ctx, " %.9g\n", value);
}

static void
text_histogram(void *ctx, const char *name, const char *const *labels,
    size_t n, const struct metrics_histogram *h)
{
	if (h->count == 0)
		return;
	text_series(ctx, name, labels, n);
	evbuffer_add_printf(ctx, " count %llu, mean %.1f ms\n",
	    (unsigned long long)h->count, (double)h->sum_ms / (double)h->count);
}

void
metrics_text_writer(struct metrics_writer *w, struct evbuffer *buf)
{
	w->family = text_family;
	w->sample = text_sample;
	w->histogram = text_histogram;
	w->end_family = prom_end;
	w->ctx = buf;
}
