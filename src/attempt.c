/* attempt.c: one query to one upstream, over UDP and after TC=1 over TCP. */
#include "autoconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempt.h"
#include "csprng.h"
#include "dnstap.h"
#include "log.h"

enum match {
	MATCH_NONE,
	MATCH_CASE_ONLY,	/* the same name, but not the case we sent */
	MATCH_EXACT
};

static void attempt_response(void *, const uint8_t *, size_t, uint64_t);
static void attempt_error(void *, const char *, uint64_t);

static const struct transport_conn_cb conn_cb = {
	attempt_response, attempt_error
};

/* 1 if a's messages go over a stream (TCP, TLS): no one else can send
 * on it, and a response need not fit a datagram. */
static int
stream(const struct attempt *a)
{
	return a->tcp || a->tls;
}

/* Send a's query over UDP or TCP (proto), or over TLS only if its
 * upstream is a TLS one (RFC 8310 §5: never in clear text). */
static struct transport_conn *
attempt_open(struct attempt *a, enum transport_proto proto)
{
	const struct transport *t = a->aq->t;

	if (!a->tls)
		return t->ops->open(t->env, proto, &a->up->addr, a->wire,
		    a->wire_len, &conn_cb, a);
	if (t->ops->open_tls == NULL) {
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	return t->ops->open_tls(t->env, a->up->tls, a->wire, a->wire_len,
	    a->rto, &conn_cb, a);
}

/* a's dnstap output, or NULL: a hook's one check when it is off. */
static inline struct dnstap_worker *
tap_of(const struct attempt *a)
{
	return a->aq->tap != NULL ? *a->aq->tap : NULL;
}

/* How question rq, read from a response, matches a's. */
static enum match
same_question(const struct attempt *a, const struct msg_question *rq)
{
	const struct msg_question *q = &a->aq->q.q;

	if (rq->qtype != q->qtype || rq->qclass != q->qclass ||
	    !msg_name_equal(rq->qname, rq->qname_len, a->qname,
	    q->qname_len))
		return MATCH_NONE;
	/* With 0x20, the case echoed back is part of what must match. */
	if (a->cased && memcmp(rq->qname, a->qname, q->qname_len) != 0)
		return MATCH_CASE_ONLY;
	return MATCH_EXACT;
}

/* With -v: what happened to attempt a, e.g. "answered SERVFAIL". */
static void
attempt_log(const struct attempt *a, const char *what)
{
	char name[1024];

	if (log_get_level() < LOG_LEVEL_DEBUG)
		return;
	log_debug("upstream %s, %s type %u: %s", a->up->name,
	    msg_name_to_str(a->qname, a->aq->q.q.qname_len, name,
	    sizeof(name)), a->aq->q.q.qtype, what);
}

/*
 * The upstream failed us, silently (unreachable) or with an answer that
 * is a failure: count it, and it counts to being down; except for a loop
 * probe, whose made-up name a healthy upstream may refuse.
 */
static void
count_failure(struct attempt *a, int answered, uint64_t now)
{
	if (!a->aq->health)
		return;
	metrics_add_shared(&a->st->failures, 1);
	if (answered)
		upstream_answered_failure(a->up, a->aq->clients_q, now);
	else
		upstream_failed(a->up, a->aq->clients_q, now);
}

/* a ended without a usable answer: this upstream is out for the fetch,
 * or asked again if it answered and is the only one left. */
static void
attempt_failed(struct attempt *a, const char *why, int answered,
    uint64_t now)
{
	attempt_log(a, why);
	count_failure(a, answered, now);
	a->answered_failure = answered;
	attempt_close(a);
	a->aq->owner->failed(a->aq->arg, a, now);
}

static void
attempt_error(void *arg, const char *why, uint64_t now)
{
	attempt_failed(arg, why, 0, now);
}

/*
 * a's query could not go out (errno says why). Out of descriptors or
 * memory is this host's trouble, not the upstream's: counted apart, and
 * said at most once a minute, never a step to marking the upstream down.
 */
static void
send_failed(struct attempt *a, uint64_t now)
{
	/* Static: one warning a minute for the whole process, whichever
	 * fetch (of whichever worker thread) meets the host's trouble;
	 * log_limit_due is lock-free. */
	static struct log_limit said;
	int err = errno;
	uint64_t held;

	attempt_log(a, strerror(err));
	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM) {
		count_failure(a, 0, now);
		return;
	}
	metrics_add(&a->aq->counts->local, 1);
	if (log_limit_due(&said, now, LOG_LIMIT_MINUTE, &held))
		log_warnx("upstream %s: query not sent: %s; not counted against "
		    "it (and %llu more since the last such message)",
		    a->up->name, strerror(err), (unsigned long long)held);
}

/* a's query, with ID a->id, the qname as sent, an OPT if edns. */
static void
attempt_write(struct attempt *a, int edns)
{
	const struct attempt_query *aq = a->aq;

	a->edns = edns;
	a->wire_len = msg_write_query(&aq->q, a->id, a->qname,
	    edns ? aq->edns_size : 0, a->wire, sizeof(a->wire));
}

/*
 * Send a's query again, over TCP or UDP, at now; failing to ends the
 * attempt (send_failed says whose failure that is).
 */
static void
attempt_resend(struct attempt *a, uint64_t now)
{
	metrics_add_shared(&a->st->queries, 1);
	a->sent = now;
	if (tap_of(a) != NULL)
		dnstap_forwarder_query(tap_of(a), &a->up->addr, stream(a),
		    a->wire, a->wire_len);
	if ((a->conn = attempt_open(a, a->tcp ? TRANSPORT_TCP :
	    TRANSPORT_UDP)) == NULL) {
		send_failed(a, now);
		a->aq->owner->failed(a->aq->arg, a, now);
	}
}

/* RFC 7766 §5: a truncated UDP answer is asked again over TCP. */
static void
attempt_tcp_start(struct attempt *a, uint64_t now)
{
	attempt_close(a);
	a->tcp = 1;
	a->aq->owner->tcp(a->aq->arg, a);
	metrics_add_shared(&a->st->tc_retries, 1);
	attempt_log(a, "truncated (TC); asking again over TCP");
	attempt_resend(a, now);
}

/*
 * RFC 6891 §7: an upstream that does not speak EDNS answers a query with
 * an OPT record FORMERR (or NOTIMP): ask it again, once, without, under a
 * new ID. That is no failure of the upstream; only if the plain query
 * fails too does the attempt.
 */
static void
attempt_plain_retry(struct attempt *a, uint64_t now)
{
	attempt_close(a);
	a->plain_retry = 1;
	a->id = (uint16_t)csprng_u32();
	attempt_write(a, 0);
	metrics_add_shared(&a->st->edns_fallbacks, 1);
	attempt_log(a, "FORMERR or NOTIMP to EDNS; asking again without it "
	    "(RFC 6891 §7)");
	attempt_resend(a, now);
}

/* 1 if r refuses a's OPT record rather than its question. */
static int
refuses_edns(const struct attempt *a, const struct msg_response *r)
{
	return a->edns && (r->rcode == MSG_RCODE_FORMERR ||
	    r->rcode == MSG_RCODE_NOTIMP);
}

/*
 * Why r, which matches a, is no answer to pass on (counted if it is for
 * no other reason than its CNAME chain); NULL if it is one.
 */
static const char *
unusable(struct attempt *a, const struct msg_response *r)
{
	if (r->long_chain) {
		metrics_add(&a->aq->counts->long_chain, 1);
		return "answered with a CNAME chain too long to follow";
	}
	if (r->class == MSG_CLASS_FAILURE)
		return "answered with a failure rcode";
	if (r->class == MSG_CLASS_REFERRAL)
		return "answered with a referral (not recursive?)";
	if (r->opt_index != -1 && (size_t)r->opt_index != r->n_rrs - 1)
		return "answered with an OPT record that is not last";
	return NULL;
}

/* a's response r is a usable answer: count it, and pass it on. */
static void
attempt_answered(struct attempt *a, const struct msg_response *r,
    uint64_t now)
{
	metrics_add_shared(&a->st->answers, 1);
	metrics_observe_shared(&a->st->latency, now - a->sent);
	upstream_answered(a->up, (uint32_t)(now - a->sent), now);
	if (a->plain_retry)
		upstream_no_edns(a->up, now);
	a->aq->owner->answered(a->aq->arg, a, r, now);
}

/*
 * A response a will not use, counted in *counter: over UDP it is ignored
 * and a waits on (anyone can send a datagram, RFC 5452 §9.1); over TCP,
 * where the connection carried only our query, a has failed.
 */
static void
refuse(struct attempt *a, uint64_t *counter, const char *what, uint64_t now)
{
	char why[128];

	metrics_add(counter, 1);
	if (stream(a)) {
		attempt_failed(a, what, 1, now);
		return;
	}
	snprintf(why, sizeof(why), "ignored %s", what);
	attempt_log(a, why);
}

/*
 * A response arrived for attempt a. Before the cost of parsing it whole:
 * over UDP, one larger than the payload size the query offered (512
 * octets without an OPT) is dropped (RFC 6891 §6.2.3); then its ID and
 * question must be those sent (RFC 5452 §9.1), the connected socket
 * having checked its source address and port.
 */
static void
attempt_response(void *arg, const uint8_t *pkt, size_t len, uint64_t now)
{
	struct attempt *a = arg;
	struct attempt_counts *counts = a->aq->counts;
	struct msg_question q;
	struct msg_response r;
	enum match match;
	const char *why;
	uint16_t id;

	/* Whatever it is: what came from the upstream's address. */
	if (tap_of(a) != NULL)
		dnstap_forwarder_response(tap_of(a), &a->up->addr, stream(a),
		    pkt, len, a->sent, now);
	if (!stream(a) && len > (a->edns ? a->aq->edns_size : MSG_UDP_MIN)) {
		refuse(a, &counts->oversized, "a response larger than our "
		    "payload size", now);
		return;
	}
	if (msg_response_question(pkt, len, &id, &q) == -1 || id != a->id ||
	    (match = same_question(a, &q)) == MATCH_NONE ||
	    (match == MATCH_CASE_ONLY && stream(a))) {
		refuse(a, &counts->mismatched, "a response that does not "
		    "match (RFC 5452)", now);
		return;
	}
	if (match == MATCH_CASE_ONLY) {
		/*
		 * Over UDP, ignored like any mismatch: it may be forged, and
		 * the real answer may be on its way. Only if none comes by
		 * the timeout does the upstream lose 0x20 (see the fetch's
		 * retry).
		 */
		metrics_add(&counts->mismatched, 1);
		a->case_only = 1;
		attempt_log(a, "ignored a response in another case (0x20)");
		return;
	}
	if (msg_response_parse(pkt, len, &r) == -1) {
		refuse(a, &counts->malformed, "a malformed response", now);
		return;
	}
	if (refuses_edns(a, &r)) {
		msg_response_free(&r);
		attempt_plain_retry(a, now);
		return;
	}
	if ((r.flags & MSG_FLAG_TC) && !stream(a)) {
		msg_response_free(&r);
		attempt_tcp_start(a, now);
		return;
	}
	/* Truncated even over TCP or TLS: not an answer (RFC 7766 §8). */
	why = r.flags & MSG_FLAG_TC ? "truncated over TCP" : unusable(a, &r);
	if (why != NULL)
		attempt_failed(a, why, 1, now);
	else
		attempt_answered(a, &r, now);
	msg_response_free(&r);
}

void
attempt_init(struct attempt *a, const struct attempt_query *aq,
    struct upstream *up, struct upstream_stats *st, size_t idx)
{
	memset(a, 0, offsetof(struct attempt, qname));
	a->aq = aq;
	a->up = up;
	a->st = st;
	a->idx = idx;
	a->tls = up->tls != NULL;
	a->id = (uint16_t)csprng_u32();
	memcpy(a->qname, aq->q.q.qname, aq->q.q.qname_len);
	if (aq->randomize_case && upstream_echoes_case(up)) {
		msg_name_randomize_case(a->qname, aq->q.q.qname_len);
		a->cased = 1;
	}
}

struct attempt *
attempt_new(const struct attempt_query *aq, struct upstream *up,
    struct upstream_stats *st, size_t idx)
{
	struct attempt *a;

	if ((a = malloc(sizeof(*a))) != NULL)
		attempt_init(a, aq, up, st, idx);
	return a;
}

int
attempt_send(struct attempt *a, uint64_t now)
{
	attempt_write(a, upstream_edns(a->up, now));
	a->sent = now;
	a->rto = upstream_rto(a->up);
	metrics_add_shared(&a->st->queries, 1);
	if (tap_of(a) != NULL)
		dnstap_forwarder_query(tap_of(a), &a->up->addr, stream(a),
		    a->wire, a->wire_len);
	if ((a->conn = attempt_open(a, TRANSPORT_UDP)) == NULL) {
		send_failed(a, now);
		return -1;
	}
	return 0;
}

void
attempt_timed_out(struct attempt *a, uint64_t now)
{
	if (!a->aq->health)
		return;
	attempt_log(a, "no answer within its timeout; asking the next");
	metrics_add_shared(&a->st->timeouts, 1);
	upstream_timed_out(a->up, a->aq->clients_q, a->rto, a->sent, now);
}

void
attempt_close(struct attempt *a)
{
	if (a->conn != NULL)
		a->aq->t->ops->close(a->conn);
	a->conn = NULL;
}

void
attempt_free(struct attempt *a)
{
	if (a == NULL)
		return;
	attempt_close(a);
	free(a);
}
