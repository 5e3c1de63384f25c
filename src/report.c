/* report.c: metrics, upstream state and explanations, for the control
 * socket. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <ldns/ldns.h>

#include "admit.h"
#include "clock.h"
#include "dnstap.h"
#include "fetch.h"
#include "lkgreport.h"
#include "localzone.h"
#include "report.h"
#include "reporttls.h"
#include "restore.h"
#include "upstream.h"
#include "worker.h"
#include "zone.h"

/* A family with one unlabelled sample. */
static void
scalar(const struct metrics_writer *w, const char *name, const char *type,
    const char *help, double value)
{
	w->family(w->ctx, name, type, help);
	w->sample(w->ctx, name, NULL, 0, value);
	w->end_family(w->ctx);
}

static double
query_count(const struct metrics *m, size_t i, size_t j)
{
	return (double)m->queries[i][j];
}

static double
answer_count(const struct metrics *m, size_t i, size_t j)
{
	return (double)m->answers[i][j];
}

/* A family with two labels: one series per pair of their values. */
static void
grid(const struct metrics_writer *w, const struct metrics *m,
    const char *name, const char *help,
    const char *l1, const char *(*v1)(size_t), size_t n1,
    const char *l2, const char *(*v2)(size_t), size_t n2,
    double (*value)(const struct metrics *, size_t, size_t))
{
	const char *labels[4] = { l1, NULL, l2, NULL };
	size_t i, j;

	w->family(w->ctx, name, "counter", help);
	for (i = 0; i < n1; i++)
		for (j = 0; j < n2; j++) {
			labels[1] = v1(i);
			labels[3] = v2(j);
			w->sample(w->ctx, name, labels, 2, value(m, i, j));
		}
	w->end_family(w->ctx);
}

static void
report_traffic(const struct metrics *m, const struct metrics_writer *w)
{
	grid(w, m, "dnsdamper_queries_total",
	    "Client queries received, by transport and qtype.",
	    "transport", metrics_transport_name, METRICS_TRANSPORTS,
	    "qtype", metrics_qtype_name, METRICS_QTYPES, query_count);
	grid(w, m, "dnsdamper_answers_total",
	    "Answers sent to clients, by where they came from and rcode.",
	    "source", metrics_source_name, METRICS_SOURCES,
	    "rcode", metrics_rcode_name, METRICS_RCODES, answer_count);
	w->family(w->ctx, "dnsdamper_answer_duration_seconds", "histogram",
	    "Time from a query's arrival to its answer.");
	w->histogram(w->ctx, "dnsdamper_answer_duration_seconds", NULL, 0,
	    &m->answer_latency);
	w->end_family(w->ctx);
}

static double
stale_answers(const struct metrics *m)
{
	uint64_t n = 0;
	size_t j;

	for (j = 0; j < METRICS_RCODES; j++)
		n += m->answers[METRICS_FROM_STALE][j];
	return (double)n;
}

/*
 * Evictions by the queue they left (lruhash.h): probationary ones are of
 * entries never asked again since stored, and a flood of one-off names
 * shows there; main ones are of entries clients asked again.
 */
static void
report_evictions(const struct metrics_writer *w, const struct cache_stats *cs)
{
	const char *probationary[2] = { "class", "probationary" };
	const char *main_class[2] = { "class", "main" };

	w->family(w->ctx, "dnsdamper_cache_evictions_total", "counter",
	    "Entries evicted to stay within cache-size, by the queue they "
	    "left.");
	w->sample(w->ctx, "dnsdamper_cache_evictions_total", probationary, 1,
	    (double)cs->evictions_probation);
	w->sample(w->ctx, "dnsdamper_cache_evictions_total", main_class, 1,
	    (double)cs->evictions_main);
	w->end_family(w->ctx);
}

static void
report_cache(const struct report *r, uint64_t stale_entries,
    const struct metrics *m, const struct metrics_writer *w)
{
	struct cache_stats cs;
	struct restore_state rs;

	cache_stats(r->cache, &cs);
	scalar(w, "dnsdamper_cache_hits_total", "counter",
	    "Queries answered from a cache entry (fresh, stale or failure).",
	    (double)m->cache_hits);
	scalar(w, "dnsdamper_cache_misses_total", "counter",
	    "Queries that found no usable cache entry.",
	    (double)m->cache_misses);
	scalar(w, "dnsdamper_cache_entries", "gauge",
	    "Entries in the cache.", (double)cs.entries);
	scalar(w, "dnsdamper_cache_stale_entries", "gauge",
	    "Expired entries still servable as stale (RFC 8767).",
	    (double)stale_entries);
	scalar(w, "dnsdamper_cache_bytes", "gauge",
	    "Bytes charged to the cache.", (double)cs.bytes);
	scalar(w, "dnsdamper_cache_max_bytes", "gauge",
	    "The cache-size bound.", (double)cs.max_bytes);
	report_evictions(w, &cs);
	restore_state(r->restore, &rs);
	scalar(w, "dnsdamper_cache_restore_entries", "gauge",
	    "Entries restored from the cache file so far.",
	    (double)rs.entries);
	scalar(w, "dnsdamper_cache_restore_file_entries", "gauge",
	    "Entries in the cache file being restored (0 until checked).",
	    (double)rs.total);
	scalar(w, "dnsdamper_cache_restore_done", "gauge",
	    "1 once the cache file has been read (or there was none).",
	    rs.done ? 1.0 : 0.0);
	scalar(w, "dnsdamper_stale_answers_total", "counter",
	    "Stale answers served (RFC 8767).", stale_answers(m));
	scalar(w, "dnsdamper_prefetches_total", "counter",
	    "Background refreshes started before expiry or for SRV targets.",
	    (double)m->prefetches);
}

/* Every worker's fetch counters, summed. */
static void
fetch_totals(const struct report *r, struct fetch_stats *total)
{
	struct fetch_stats fs;
	size_t i;

	memset(total, 0, sizeof(*total));
	for (i = 0; i < r->n_workers; i++) {
		fetch_stats(worker_context(r->workers[i])->fetches, &fs);
		metrics_accumulate(total, &fs, sizeof(fs));
	}
}

static void
report_fetches(const struct report *r, const struct metrics *m,
    const struct metrics_writer *w)
{
	struct upstream_budget_stats bs;
	struct fetch_stats fs;

	fetch_totals(r, &fs);
	upstream_budget_stats(r->upstreams, clock_now_ms(), &bs);
	scalar(w, "dnsdamper_resolutions_total", "counter",
	    "Resolutions started (cache misses, refreshes, prefetches).",
	    (double)fs.started);
	scalar(w, "dnsdamper_coalesced_queries_total", "counter",
	    "Queries that joined a resolution already in flight.",
	    (double)fs.coalesced);
	scalar(w, "dnsdamper_coalesced_across_workers_total", "counter",
	    "Of those, queries that waited for another worker thread's "
	    "resolution, then were answered from the cache.",
	    (double)fs.across);
	scalar(w, "dnsdamper_resolutions_inflight", "gauge",
	    "Resolutions waiting for upstreams now.", (double)fs.inflight);
	scalar(w, "dnsdamper_resolutions_over_budget_total", "counter",
	    "Resolutions refused by max-inflight or a zone's budget.",
	    (double)fs.over_budget);
	scalar(w, "dnsdamper_waiters_refused_total", "counter",
	    "Queries not queued on a resolution with max-waiters waiting.",
	    (double)fs.waiters_refused);
	scalar(w, "dnsdamper_upstream_retries_total", "counter",
	    "Queries beyond a resolution's first (hedges, retries) sent.",
	    (double)bs.extra_total);
	scalar(w, "dnsdamper_upstream_retries_denied_total", "counter",
	    "Queries beyond a resolution's first not sent: over retry-budget.",
	    (double)bs.denied_total);
	scalar(w, "dnsdamper_upstream_mismatched_total", "counter",
	    "Upstream responses ignored: not the ID or question sent.",
	    (double)fs.mismatched);
	scalar(w, "dnsdamper_upstream_malformed_total", "counter",
	    "Upstream responses with our ID and question that do not parse.",
	    (double)fs.malformed);
	scalar(w, "dnsdamper_upstream_oversized_total", "counter",
	    "UDP responses larger than the payload size offered, dropped.",
	    (double)fs.oversized);
	scalar(w, "dnsdamper_upstream_local_errors_total", "counter",
	    "Queries not sent for want of descriptors or memory here.",
	    (double)fs.local_errors);
	scalar(w, "dnsdamper_upstream_long_chains_total", "counter",
	    "Upstream answers with a CNAME chain over 16 (or a loop).",
	    (double)fs.long_chain);
	scalar(w, "dnsdamper_dropped_total", "counter",
	    "Client messages dropped unanswered (malformed or not queries).",
	    (double)m->dropped);
	scalar(w, "dnsdamper_tcp_connections_total", "counter",
	    "Client TCP connections accepted.", (double)m->tcp_accepted);
	scalar(w, "dnsdamper_tcp_connections", "gauge",
	    "Client TCP connections open.", (double)m->tcp_open);
	scalar(w, "dnsdamper_tcp_refused_total", "counter",
	    "Client TCP connections closed at once (over tcp-clients).",
	    (double)m->tcp_refused);
	scalar(w, "dnsdamper_tcp_evicted_total", "counter",
	    "Idle client TCP connections closed for new ones at tcp-clients.",
	    (double)m->tcp_evicted);
}

static void
report_access(const struct report *r, const struct metrics *m,
    const struct metrics_writer *w)
{
	const char *action[2] = { "action", NULL };
	struct ratelimit_stats rs;

	admit_stats(worker_context(r->workers[0])->admit, &rs);
	scalar(w, "dnsdamper_refused_queries_total", "counter",
	    "Queries answered REFUSED because their client is not in allow.",
	    (double)m->refused_queries);
	scalar(w, "dnsdamper_refused_connections_total", "counter",
	    "TCP connections closed at accept because their client is not in "
	    "allow.", (double)m->refused_connections);
	w->family(w->ctx, "dnsdamper_ratelimited_total", "counter",
	    "UDP queries over ratelimit: dropped, or slipped (answered empty "
	    "with TC=1).");
	action[1] = "dropped";
	w->sample(w->ctx, "dnsdamper_ratelimited_total", action, 1,
	    (double)m->ratelimit_dropped);
	action[1] = "slipped";
	w->sample(w->ctx, "dnsdamper_ratelimited_total", action, 1,
	    (double)m->ratelimit_slipped);
	w->end_family(w->ctx);
	scalar(w, "dnsdamper_ratelimit_clients", "gauge",
	    "Client addresses the rate limit tracks (at most ratelimit-size).",
	    (double)rs.tracked);
	scalar(w, "dnsdamper_ratelimit_evictions_total", "counter",
	    "Client addresses the rate limit forgot to make room for another.",
	    (double)rs.evictions);
	scalar(w, "dnsdamper_any_minimal_total", "counter",
	    "ANY queries over UDP answered with a synthesized HINFO "
	    "(RFC 8482 section 4.2).", (double)m->any_minimal);
}

/* Per (upstream, zone) counter families, one field each. */
static const struct {
	const char	*name;
	const char	*help;
	size_t		 offset;
} upstream_counters[] = {
	{ "dnsdamper_upstream_queries_total", "Queries sent to an upstream.",
	  offsetof(struct upstream_stats, queries) },
	{ "dnsdamper_upstream_answers_total",
	  "Usable answers from an upstream.",
	  offsetof(struct upstream_stats, answers) },
	{ "dnsdamper_upstream_timeouts_total",
	  "Queries to an upstream that timed out.",
	  offsetof(struct upstream_stats, timeouts) },
	{ "dnsdamper_upstream_failures_total", "Failures of an upstream: "
	  "SERVFAIL, REFUSED, referrals, unreachable, broken TCP.",
	  offsetof(struct upstream_stats, failures) },
	{ "dnsdamper_upstream_tc_retries_total",
	  "Truncated upstream answers asked again over TCP.",
	  offsetof(struct upstream_stats, tc_retries) },
	{ "dnsdamper_upstream_edns_fallbacks_total",
	  "Queries asked again without EDNS after FORMERR or NOTIMP "
	  "(RFC 6891 section 7).",
	  offsetof(struct upstream_stats, edns_fallbacks) },
};

#define N_UPSTREAM_COUNTERS \
	(sizeof(upstream_counters) / sizeof(upstream_counters[0]))
#define UPSTREAM_LATENCY	"dnsdamper_upstream_response_seconds"

/*
 * Family c's series for (upstream, zone) st: counter c, or past the
 * counters the latency histogram; read atomically, other threads add.
 */
static void
upstream_series(const struct metrics_writer *w, size_t c,
    const struct upstream_stats *st, const char *const *labels)
{
	struct metrics_histogram h;

	if (c < N_UPSTREAM_COUNTERS) {
		w->sample(w->ctx, upstream_counters[c].name, labels, 2,
		    (double)metrics_read((const uint64_t *)(const void *)
		    ((const char *)st + upstream_counters[c].offset)));
		return;
	}
	memset(&h, 0, sizeof(h));
	metrics_accumulate(&h, &st->latency, sizeof(h));
	w->histogram(w->ctx, UPSTREAM_LATENCY, labels, 2, &h);
}

static void
report_upstream_stats(const struct report *r, const struct metrics_writer *w)
{
	struct zone_table *zt = worker_context(r->workers[0])->zones;
	const struct upstream_stats *st;
	const char *labels[4];
	struct zone *z;
	size_t c, i, j;

	for (c = 0; c <= N_UPSTREAM_COUNTERS; c++) {
		if (c < N_UPSTREAM_COUNTERS)
			w->family(w->ctx, upstream_counters[c].name, "counter",
			    upstream_counters[c].help);
		else
			w->family(w->ctx, UPSTREAM_LATENCY, "histogram",
			    "Time until an upstream's usable answer.");
		for (i = 0; i < zone_count(zt); i++) {
			z = zone_at(zt, i);
			for (j = 0; j < z->n_upstreams; j++) {
				st = upstream_stats_for(z->upstreams[j],
				    z->name_str);
				if (st == NULL)
					continue;
				labels[0] = "upstream";
				labels[1] = z->upstreams[j]->name;
				labels[2] = "zone";
				labels[3] = z->name_str;
				upstream_series(w, c, st, labels);
			}
		}
		w->end_family(w->ctx);
	}
}

/* One gauge of every upstream: its value, or none if has is 0. */
struct gauge {
	const struct metrics_writer *w;
	const char	*name;
	double		(*value)(const struct upstream_view *, int *has);
};

static void
gauge_sample(const struct upstream_view *v, void *arg)
{
	const struct gauge *g = arg;
	const char *labels[2] = { "upstream", v->u->name };
	double value;
	int has = 1;

	value = g->value(v, &has);
	if (has)
		g->w->sample(g->w->ctx, g->name, labels, 1, value);
}

/* A gauge with one series per upstream. */
static void
upstream_gauge(const struct report *r, const struct metrics_writer *w,
    const char *name, const char *help,
    double (*value)(const struct upstream_view *, int *))
{
	struct gauge g = { w, name, value };

	w->family(w->ctx, name, "gauge", help);
	upstream_each(r->upstreams, gauge_sample, &g);
	w->end_family(w->ctx);
}

static double
upstream_is_up(const struct upstream_view *v, int *has)
{
	(void)has;
	return !v->down && !v->loop;
}

static double
upstream_speaks_edns(const struct upstream_view *v, int *has)
{
	(void)has;
	return !v->no_edns;
}

static double
upstream_srtt(const struct upstream_view *v, int *has)
{
	*has = v->rtt.measured;
	return v->rtt.srtt / 1000.0;
}

static void
report_upstream_state(const struct report *r, const struct metrics_writer *w)
{
	upstream_gauge(r, w, "dnsdamper_upstream_up",
	    "1 if an upstream is up, 0 if marked down or a loop.",
	    upstream_is_up);
	upstream_gauge(r, w, "dnsdamper_upstream_edns",
	    "1 if queries to an upstream carry EDNS, 0 while it is known not "
	    "to speak it (RFC 6891 section 7).", upstream_speaks_edns);
	upstream_gauge(r, w, "dnsdamper_upstream_rtt_seconds",
	    "Smoothed round-trip time of an upstream (RFC 6298).",
	    upstream_srtt);
}

void
report_metrics(const struct report *r, uint64_t stale_entries,
    const struct metrics_writer *w)
{
	const char *version[2] = { "version", PACKAGE_VERSION };
	struct metrics total, *m = &total;
	size_t i;

	/* Each worker's block, written by it alone, read atomically. */
	memset(&total, 0, sizeof(total));
	for (i = 0; i < r->n_workers; i++)
		metrics_accumulate(&total,
		    &worker_context(r->workers[i])->metrics, sizeof(total));

	w->family(w->ctx, "dnsdamper_build_info", "gauge",
	    "Always 1; the version is a label.");
	w->sample(w->ctx, "dnsdamper_build_info", version, 1, 1);
	w->end_family(w->ctx);
	scalar(w, "dnsdamper_start_time_seconds", "gauge",
	    "When the process started, in Unix time.",
	    (double)r->start_time);
	report_traffic(m, w);
	report_cache(r, stale_entries, m, w);
	report_fetches(r, m, w);
	report_access(r, m, w);
	scalar(w, "dnsdamper_dnstap_dropped_total", "counter",
	    "dnstap messages dropped: the queue to the collector full, the "
	    "collector gone or slow, or a write failed.",
	    (double)dnstap_dropped());
	report_upstream_stats(r, w);
	report_upstream_state(r, w);
	reporttls_metrics(r->upstreams, w);
	if (r->lkg != NULL)
		lkgreport_metrics(r->lkg, clock_now_ms(), w);
}

static const char *
upstream_state(const struct upstream_view *v)
{
	return v->loop ? "loop" : v->down ? "down" : "up";
}

/* "no" while u gets queries without OPT (RFC 6891 §7), else "yes". */
static const char *
upstream_edns_word(const struct upstream_view *v)
{
	return v->no_edns ? "no" : "yes";
}

/* A counter of st, read atomically: other threads add to it. */
#define ST(st, f)	((unsigned long long)metrics_read(&(st)->f))

static void
json_upstream(struct evbuffer *out, const struct upstream_view *v)
{
	const struct upstream_stats *st;

	evbuffer_add_printf(out, "{\"address\": ");
	metrics_json_string(out, v->u->name);
	evbuffer_add_printf(out, ", \"state\": \"%s\", "
	    "\"srtt_ms\": %ld, \"rttvar_ms\": %ld, \"rto_ms\": %u, "
	    "\"failures_in_a_row\": %u, \"edns\": \"%s\"", upstream_state(v),
	    v->rtt.measured ? (long)v->rtt.srtt : -1L,
	    v->rtt.measured ? (long)v->rtt.rttvar : -1L, v->rtt.rto, v->fails,
	    upstream_edns_word(v));
	evbuffer_add_printf(out, ", \"zones\": [");
	for (st = v->stats; st != NULL; st = upstream_stats_next(st)) {
		evbuffer_add_printf(out, "%s{\"zone\": ",
		    st != v->stats ? ", " : "");
		metrics_json_string(out, st->zone);
		evbuffer_add_printf(out, ", \"queries\": "
		    "%llu, \"answers\": %llu, \"timeouts\": %llu, "
		    "\"failures\": %llu, \"tc_retries\": %llu, "
		    "\"edns_fallbacks\": %llu}", ST(st, queries),
		    ST(st, answers), ST(st, timeouts), ST(st, failures),
		    ST(st, tc_retries), ST(st, edns_fallbacks));
	}
	evbuffer_add_printf(out, "]");
	reporttls_json(out, v->u);
	evbuffer_add_printf(out, "}");
}

static void
text_upstream_header(struct evbuffer *out)
{
	evbuffer_add_printf(out, "%-28s %-5s %-4s %8s %8s %6s  %-20s %9s %9s "
	    "%9s %9s\n", "UPSTREAM", "STATE", "EDNS", "SRTT", "RTO", "FAILS",
	    "ZONE", "QUERIES", "ANSWERS", "TIMEOUTS", "FAILURES");
}

/* One line per zone the upstream serves (one line if none yet). */
static void
text_upstream(const struct upstream_view *v, void *arg)
{
	const struct upstream_stats *st = v->stats;
	struct evbuffer *out = arg;
	char srtt[16];

	if (v->rtt.measured)
		snprintf(srtt, sizeof(srtt), "%ums", v->rtt.srtt);
	else
		snprintf(srtt, sizeof(srtt), "-");
	do {
		evbuffer_add_printf(out, "%-28s %-5s %-4s %8s %6ums %6u  ",
		    v->u->name, upstream_state(v), upstream_edns_word(v), srtt,
		    v->rtt.rto, v->fails);
		if (st == NULL) {
			evbuffer_add_printf(out, "%-20s\n", "-");
			break;
		}
		evbuffer_add_printf(out, "%-20s %9llu %9llu %9llu %9llu\n",
		    st->zone, ST(st, queries), ST(st, answers),
		    ST(st, timeouts), ST(st, failures));
	} while ((st = upstream_stats_next(st)) != NULL);
	reporttls_text(out, v->u);
}

/* The JSON array being written: whether an element came yet. */
struct json_list {
	struct evbuffer	*out;
	int		 first;
};

static void
json_list_upstream(const struct upstream_view *v, void *arg)
{
	struct json_list *l = arg;

	evbuffer_add_printf(l->out, "%s\n  ", l->first ? "" : ",");
	json_upstream(l->out, v);
	l->first = 0;
}

void
report_upstreams(const struct report *r, enum report_format f,
    struct evbuffer *out)
{
	struct json_list l = { out, 1 };

	if (f == REPORT_TEXT) {
		text_upstream_header(out);
		upstream_each(r->upstreams, text_upstream, out);
		return;
	}
	evbuffer_add_printf(out, "[");
	upstream_each(r->upstreams, json_list_upstream, &l);
	evbuffer_add_printf(out, "\n]\n");
}

/* The name as a query for qtype, folded; -1 if it is not a name. */
static int
explain_query(const char *name, uint16_t qtype, struct msg_query *q)
{
	size_t len;

	memset(q, 0, sizeof(*q));
	if (zone_name_to_wire(name, q->q.qname, &len) == -1)
		return -1;
	q->q.qname_len = (uint8_t)len;
	q->q.qtype = qtype;
	q->q.qclass = MSG_CLASS_IN;
	return 0;
}

static const char *const cache_states[] = { "absent", "fresh", "stale",
    "failure" };
static const char *const cache_kinds[] = { "positive", "nxdomain", "nodata",
    "failure", "uncacheable" };

static void
explain_cache(const struct report *r, const struct msg_query *q,
    uint64_t now, enum report_format f, struct evbuffer *out)
{
	struct cache_result res;
	struct cache_key key;

	cache_key_make(r->cache, &q->q, 0, 0, &key);
	cache_lookup(r->cache, &key, q, NULL, now, NULL, 0, &res);
	if (f == REPORT_TEXT) {
		evbuffer_add_printf(out, "cache      %s", cache_states[res.state]);
		if (res.state != CACHE_ABSENT)
			evbuffer_add_printf(out, ", %s, stored with TTL %u s%s",
			    cache_kinds[res.kind], res.ttl, res.refresh_failed ?
			    ", its last refresh failed" : "");
		if (res.state == CACHE_FRESH)
			evbuffer_add_printf(out, ", %llu s left",
			    (unsigned long long)(res.expires_in / 1000));
		evbuffer_add_printf(out, "\n");
		return;
	}
	evbuffer_add_printf(out, "\"cache\": {\"state\": \"%s\"",
	    cache_states[res.state]);
	if (res.state != CACHE_ABSENT)
		evbuffer_add_printf(out, ", \"kind\": \"%s\", \"ttl\": %u, "
		    "\"last_refresh_failed\": %s", cache_kinds[res.kind],
		    res.ttl, res.refresh_failed ? "true" : "false");
	if (res.state == CACHE_FRESH)
		evbuffer_add_printf(out, ", \"expires_in_ms\": %llu",
		    (unsigned long long)res.expires_in);
	evbuffer_add_printf(out, "}");
}

/* Whether the answer to q is a last known good one, and why. */
static void
explain_lkg(const struct report *r, const struct zone *z,
    const struct msg_query *q, uint64_t now, enum report_format f,
    struct evbuffer *out)
{
	struct cache_key key;

	if (r->lkg == NULL) {
		if (f != REPORT_TEXT)
			evbuffer_add_printf(out, "\"last_known_good\": null");
		return;
	}
	cache_key_make(r->cache, &q->q, 0, 0, &key);
	lkgreport_explain(r->lkg, z, &key, now, f, out);
}

/* "file:line", or "?" for a place not known. */
static void
place(const char *file, int line, struct evbuffer *out)
{
	if (file != NULL)
		evbuffer_add_printf(out, "%s:%d", file, line);
	else
		evbuffer_add_printf(out, "?");
}

/*
 * What made the local verdict res, in words: the source of the records
 * that made the name local, else the rule of the zone that decided.
 */
static void
local_rule_text(const struct localzone_result *res, struct evbuffer *out)
{
	const struct localzone_rrset *c = res->cause;
	const struct localzone_zone *z = res->zone;

	if (c != NULL && c->source != LOCALZONE_BUILT_IN) {
		evbuffer_add_printf(out, "%s ",
		    localzone_source_name(c->source));
		place(c->file, c->line, out);
		return;
	}
	switch (z->rule) {
	case LOCALZONE_DEFAULT:
		evbuffer_add_printf(out, "the default zone %s (%s)", z->name,
		    localzone_type_name(z->type));
		break;
	case LOCALZONE_LOCAL_ZONE:
		evbuffer_add_printf(out, "local-zone %s %s at ", z->name,
		    localzone_type_name(z->type));
		place(z->file, z->line, out);
		break;
	case LOCALZONE_NAME:
		evbuffer_add_printf(out, "the local name %s", z->name);
		break;
	case LOCALZONE_FORWARD:
		evbuffer_add_printf(out, "forward %s at ", z->name);
		place(z->file, z->line, out);
		evbuffer_add_printf(out, ", below a default zone");
		break;
	}
}

/* The local line; 1 if the name is answered locally, else 0. */
static int
explain_local_text(const struct localzone_result *res, struct evbuffer *out)
{
	if (res->zone == NULL) {
		evbuffer_add_printf(out, "local      none\n");
		return 0;
	}
	if (res->verdict == LOCALZONE_NONE)
		evbuffer_add_printf(out, "local      forwarded, through ");
	else
		evbuffer_add_printf(out, "local      %s by ",
		    localzone_verdict_name(res->verdict));
	local_rule_text(res, out);
	evbuffer_add_printf(out, "\n");
	return res->verdict != LOCALZONE_NONE;
}

/* The "local" member: null, or what answers the name and why. */
static void
explain_local_json(const struct localzone_result *res, struct evbuffer *out)
{
	const struct localzone_rrset *c = res->cause;
	const struct localzone_zone *z = res->zone;
	const char *file;
	int line;

	if (z == NULL) {
		evbuffer_add_printf(out, "\"local\": null");
		return;
	}
	evbuffer_add_printf(out, "\"local\": {\"verdict\": \"%s\", \"zone\": ",
	    res->verdict == LOCALZONE_NONE ? "forwarded" :
	    localzone_verdict_name(res->verdict));
	metrics_json_string(out, z->name);
	evbuffer_add_printf(out, ", \"zone_type\": \"%s\", \"rule\": \"%s\", "
	    "\"source\": ", localzone_type_name(z->type),
	    localzone_rule_name(z->rule));
	if (c != NULL && c->source != LOCALZONE_BUILT_IN) {
		evbuffer_add_printf(out, "\"%s\"",
		    localzone_source_name(c->source));
		file = c->file;
		line = c->line;
	} else {
		evbuffer_add_printf(out, "null");
		file = z->file;
		line = z->line;
	}
	evbuffer_add_printf(out, ", \"file\": ");
	if (file != NULL)
		metrics_json_string(out, file);
	else
		evbuffer_add_printf(out, "null");
	evbuffer_add_printf(out, ", \"line\": %d}", line);
}

static void
explain_name(const char *name, uint16_t qtype, struct evbuffer *out)
{
	char *type = ldns_rr_type2str(qtype);

	evbuffer_add_printf(out, "name       %s %s\n", name,
	    type != NULL ? type : "?");
	free(type);
}

static void
explain_text(const struct zone *z, const struct upstream_view *order,
    size_t n, struct evbuffer *out)
{
	size_t i;

	if (z == NULL) {
		evbuffer_add_printf(out, "zone       none: answered REFUSED\n");
		return;
	}
	evbuffer_add_printf(out, "zone       %s (policy %s)\n", z->name_str,
	    config_policy_name(z->policy));
	for (i = 0; i < n; i++)
		evbuffer_add_printf(out, "%s %zu. %s %s, srtt %s%ums, rto %ums, "
		    "%u failures in a row%s\n", i == 0 ? "upstreams " :
		    "          ", i + 1, order[i].u->name,
		    upstream_state(&order[i]), order[i].rtt.measured ? "" : "~",
		    order[i].rtt.srtt, order[i].rtt.rto, order[i].fails,
		    reporttls_how(order[i].u));
}

int
report_explain(const struct report *r, const char *name, uint16_t qtype,
    uint64_t now, enum report_format f, struct evbuffer *out)
{
	const struct query_ctx *ctx = worker_context(r->workers[0]);
	struct upstream_view views[64];
	struct localzone_result local;
	struct upstream *order[64];
	struct msg_query q;
	const struct zone *z;
	size_t i, n = 0;

	if (explain_query(name, qtype, &q) == -1)
		return -1;
	localzone_lookup(ctx->local, q.q.qname, q.q.qname_len, qtype, &local);
	z = zone_find(ctx->zones, q.q.qname, q.q.qname_len, qtype);
	if (z != NULL && z->n_upstreams <= sizeof(order) / sizeof(order[0]))
		n = upstream_order(z->upstreams, z->n_upstreams, z->policy,
		    q.q.qname, q.q.qname_len, order);
	for (i = 0; i < n; i++)
		upstream_view(order[i], &views[i]);
	if (f == REPORT_TEXT) {
		explain_name(name, qtype, out);
		if (explain_local_text(&local, out))
			return 0;
		explain_text(z, views, n, out);
		explain_cache(r, &q, now, f, out);
		explain_lkg(r, z, &q, now, f, out);
		return 0;
	}
	evbuffer_add_printf(out, "{\"name\": ");
	metrics_json_string(out, name);
	evbuffer_add_printf(out, ", \"qtype\": %u, \"zone\": ", qtype);
	if (z == NULL)
		evbuffer_add_printf(out, "null, \"policy\": null");
	else {
		metrics_json_string(out, z->name_str);
		evbuffer_add_printf(out, ", \"policy\": \"%s\"",
		    config_policy_name(z->policy));
	}
	evbuffer_add_printf(out, ", \"upstreams\": [");
	for (i = 0; i < n; i++) {
		evbuffer_add_printf(out, "%s", i > 0 ? ", " : "");
		json_upstream(out, &views[i]);
	}
	evbuffer_add_printf(out, "], ");
	explain_local_json(&local, out);
	evbuffer_add_printf(out, ", ");
	explain_cache(r, &q, now, f, out);
	evbuffer_add_printf(out, ", ");
	explain_lkg(r, z, &q, now, f, out);
	evbuffer_add_printf(out, "}\n");
	return 0;
}
