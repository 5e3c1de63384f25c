/* admit.c: which client queries are served: allow, ratelimit, minimal ANY. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "admit.h"
#include "log.h"
#include "wire.h"

struct admit {
	struct ratelimit	*rl;		/* borrowed, shared */
};

/*
 * The process's once-a-minute lines, whichever worker's client it is
 * about (log_limit_due is lock-free): a flood spread over the workers is
 * said once, not once per worker.
 */
static struct log_limit refused_log, limited_log;

struct admit *
admit_new(struct ratelimit *rl)
{
	struct admit *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->rl = rl;
	return a;
}

void
admit_free(struct admit *a)
{
	free(a);
}

/*
 * Say what was done to a query or connection from client, but not once
 * for each of a flood: at most once every ADMIT_LOG_INTERVAL through l,
 * with how many were held back since.
 */
static void
admit_log(struct log_limit *l, const char *what, const struct addr *client,
    uint64_t now)
{
	char buf[ADDR_STRLEN], more[80] = "";
	uint64_t held;

	if (!log_limit_due(l, now, ADMIT_LOG_INTERVAL, &held))
		return;
	if (held > 0)
		snprintf(more, sizeof(more), " (and %llu more since the last "
		    "such message)", (unsigned long long)held);
	log_warnx("%s from %s%s", what, addr_format_host(client, buf,
	    sizeof(buf)), more);
}

enum admit_verdict
admit_checked(struct admit *a, const struct config *conf,
    const struct addr *client, int udp, struct metrics *m, uint64_t now)
{
	enum ratelimit_verdict v;

	if (!acl_match(&conf->allow.acl, client)) {
		metrics_add(&m->refused_queries, 1);
		admit_log(&refused_log, udp ? "not in allow: refused a UDP "
		    "query" : "not in allow: refused a TCP query", client, now);
		return ADMIT_REFUSE;
	}
	if (conf->ratelimit == 0 || !udp ||
	    acl_match(&conf->exempt_clients.acl, client))
		return ADMIT_SERVE;
	if ((v = ratelimit_check(a->rl, client, conf->ratelimit,
	    conf->ratelimit_slip, now)) == RATELIMIT_PASS)
		return ADMIT_SERVE;
	if (v == RATELIMIT_DROP)
		metrics_add(&m->ratelimit_dropped, 1);
	else
		metrics_add(&m->ratelimit_slipped, 1);
	admit_log(&limited_log, "over ratelimit: dropped or truncated a "
	    "query", client, now);
	return v == RATELIMIT_DROP ? ADMIT_DROP : ADMIT_SLIP;
}

int
admit_connection(struct admit *a, const struct config *conf,
    const struct addr *client, struct metrics *m, uint64_t now)
{
	if (acl_match(&conf->allow.acl, client))
		return 1;
	metrics_add(&m->refused_connections, 1);
	admit_log(&refused_log, "not in allow: closed a TCP connection",
	    client, now);
	return 0;
}

int
admit_minimal_any(const struct config *conf, const struct addr *client,
    int udp, const struct msg_query *q, struct metrics *m)
{
	if (!udp || q->q.qtype != MSG_TYPE_ANY || q->q.qclass != MSG_CLASS_IN ||
	    acl_match(&conf->exempt_clients.acl, client))
		return 0;
	metrics_add(&m->any_minimal, 1);
	return 1;
}

size_t
admit_write_any(const struct config *conf, const struct msg_query *q,
    const struct msg_reply_opts *opts, uint8_t *out, size_t cap)
{
	/* Owner: a pointer to the question's qname; RDATA: two
	 * <character-string>s (RFC 1035 §3.3.2), "RFC8482" and "". */
	static const uint8_t hinfo[] = { 7, 'R', 'F', 'C', '8', '4', '8',
	    '2', 0 };
	uint8_t wire[MSG_HEADER_LEN + MSG_NAME_MAX + MSG_QTYPE_QCLASS_LEN +
	    MSG_RR_MIN_LEN + 1 + sizeof(hinfo)];
	struct msg_ttl_rule rule = { 0, 0 };
	struct msg_template t;
	uint32_t ttl = conf->max_ttl < ADMIT_ANY_TTL ? conf->max_ttl :
	    ADMIT_ANY_TTL;
	size_t n = MSG_HEADER_LEN;

	memset(wire, 0, MSG_HEADER_LEN);
	wire[7] = 1;	/* ANCOUNT; NOERROR */
	memcpy(wire + n, q->q.qname, q->q.qname_len);
	n += q->q.qname_len;
	n += wire_wr16(wire + n, q->q.qtype);
	n += wire_wr16(wire + n, q->q.qclass);
	n += wire_wr16(wire + n, 0xc000 | MSG_HEADER_LEN);
	n += wire_wr16(wire + n, MSG_TYPE_HINFO);
	n += wire_wr16(wire + n, MSG_CLASS_IN);
	n += wire_wr32(wire + n, ttl);
	n += wire_wr16(wire + n, sizeof(hinfo));
	memcpy(wire + n, hinfo, sizeof(hinfo));
	n += sizeof(hinfo);
	memset(&t, 0, sizeof(t));
	t.wire = wire;
	t.len = t.additional_offset = (uint16_t)n;
	return msg_write_answer(&t, q, &rule, opts, out, cap);
}

size_t
admit_write_slip(const struct msg_query *q, const struct msg_reply_opts *opts,
    uint8_t *out, size_t cap)
{
	size_t len;

	if ((len = msg_write_error(q, MSG_RCODE_NOERROR, opts, out, cap)) > 0)
		wire_wr16(out + 2, wire_rd16(out + 2) | MSG_FLAG_TC);
	return len;
}

void
admit_stats(struct admit *a, struct ratelimit_stats *out)
{
	ratelimit_stats(a->rl, out);
}
