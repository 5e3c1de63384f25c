/* queryinfo.c: what happened to one client query, as a JSON line. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "queryinfo.h"

/* In the order of enum queryinfo_source. */
static const char *const source_names[QUERYINFO_SOURCES] = {
	"cache",
	"stale",
	"last-known-good",
	"upstream",
	"local",
	"refused",
	"error",
};

const char *
queryinfo_source_name(enum queryinfo_source s)
{
	return (unsigned)s < QUERYINFO_SOURCES ? source_names[s] : "?";
}

/* Output into a fixed buffer; past its end, the rest is not written. */
struct out {
	char	*buf;
	size_t	 cap;
	size_t	 len;
	int	 full;
};

static void __attribute__((format(printf, 2, 3)))
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->full = 1;
		o->buf[o->len] = '\0';
		return;
	}
	o->len += (size_t)n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * tabs and newlines (ldns's separators) as one space. */
static void
put_string(struct out *o, const char *s)
{
	put(o, "\"");
	for (; *s != '\0' && !o->full; s++) {
		if (*s == '\t')
			put(o, " ");
		else if (*s == '\n')
			;
		else if (*s == '"' || *s == '\\')
			put(o, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			put(o, "\\u%04x", (unsigned)(unsigned char)*s);
		else
			put(o, "%c", *s);
	}
	put(o, "\"");
}

static void
put_time(struct out *o, int64_t wall_ms)
{
	time_t sec = (time_t)(wall_ms / 1000);
	char buf[32];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	put(o, "\"time\":\"%s.%03dZ\"", buf, (int)(wall_ms % 1000));
}

static void
put_question(struct out *o, const struct msg_question *q)
{
	const ldns_rr_descriptor *d = ldns_rr_descript(q->qtype);
	ldns_lookup_table *c = ldns_lookup_by_id(ldns_rr_classes, q->qclass);
	char name[1024];

	put(o, ",\"name\":");
	put_string(o, msg_name_to_str(q->qname, q->qname_len, name,
	    sizeof(name)));
	if (d != NULL && d->_name != NULL)
		put(o, ",\"type\":\"%s\"", d->_name);
	else
		put(o, ",\"type\":\"TYPE%u\"", q->qtype);
	if (c != NULL)
		put(o, ",\"class\":\"%s\"", c->name);
	else
		put(o, ",\"class\":\"CLASS%u\"", q->qclass);
}

/* The rcode and the answer section's records, in presentation format. */
static void
put_answer(struct out *o, const uint8_t *wire, size_t len, size_t room)
{
	ldns_lookup_table *rc;
	ldns_rr_list *rrs;
	ldns_pkt *pkt = NULL;
	size_t i, mark;
	char *s;

	if (len < 4)
		return;
	rc = ldns_lookup_by_id(ldns_rcodes, wire[3] & 0xf);
	if (rc != NULL)
		put(o, ",\"rcode\":\"%s\"", rc->name);
	else
		put(o, ",\"rcode\":\"RCODE%u\"", wire[3] & 0xf);
	put(o, ",\"answer\":[");
	if (ldns_wire2pkt(&pkt, wire, len) == LDNS_STATUS_OK) {
		rrs = ldns_pkt_answer(pkt);
		for (i = 0; i < ldns_rr_list_rr_count(rrs); i++) {
			if ((s = ldns_rr2str(ldns_rr_list_rr(rrs, i))) == NULL)
				break;
			mark = o->len;
			put(o, "%s", i > 0 ? "," : "");
			put_string(o, s);
			free(s);
			/* Keep room for what follows the list. */
			if (o->full || o->len + room >= o->cap) {
				o->full = 0;
				o->len = mark;
				o->buf[o->len] = '\0';
				put(o, "%s\"...\"", i > 0 ? "," : "");
				break;
			}
		}
		ldns_pkt_free(pkt);
	}
	put(o, "]");
}

size_t
queryinfo_json(const struct queryinfo *qi, int64_t wall_ms, char *buf,
    size_t cap)
{
	struct out o = { buf, cap, 0, 0 };
	char host[ADDR_STRLEN];

	buf[0] = '\0';
	put(&o, "{");
	put_time(&o, wall_ms);
	put(&o, ",\"client\":\"%s\",\"port\":%u,\"protocol\":\"%s\"",
	    addr_format_host(qi->client, host, sizeof(host)),
	    addr_port(qi->client), qi->tcp ? "tcp" : "udp");
	if (qi->q != NULL && qi->q->q.qname_len > 0)
		put_question(&o, &qi->q->q);
	/* 256: the source, an upstream's name and the latency after. */
	put_answer(&o, qi->answer, qi->answer_len, 256);
	put(&o, ",\"source\":\"%s\"", queryinfo_source_name(qi->source));
	if (qi->upstream != NULL) {
		put(&o, ",\"upstream\":");
		put_string(&o, qi->upstream);
	}
	put(&o, ",\"latency_ms\":%llu}", (unsigned long long)(qi->now >
	    qi->arrived ? qi->now - qi->arrived : 0));
	return o.len;
}
