/* monitor.c: the live stream of answered queries over the control socket. */
#include "autoconf.h"

#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <ldns/ldns.h>

#include "clock.h"
#include "mailbox.h"
#include "monitor.h"

struct monitor_watcher {
	struct monitor		*m;
	struct evhttp_request	*req;
	struct monitor_filter	 f;
	uint64_t		 lost;		/* lines it missed */
	uint64_t		 said;		/* of them, said in its stream */
	uint64_t		 dropped_seen;	/* m->dropped when it came */
	LIST_ENTRY(monitor_watcher) entry;
};

struct monitor {
	struct mailbox		*mb;
	struct evbuffer		*chunk;		/* scratch for a line */
	unsigned		 watching;	/* atomic: watchers */
	unsigned		 pending;	/* atomic: lines posted, not
						 * handed out */
	uint64_t		 dropped;	/* atomic: lines lost before
						 * any filter: queue full, or
						 * no memory */
	LIST_HEAD(, monitor_watcher) watchers;	/* main's */
};

/* One answer, formatted by a worker, on its way to main's loop. */
struct monitor_line {
	struct mailbox_msg	 msg;
	uint8_t			 host[16];	/* the client's */
	int			 family;
	int			 rcode;		/* header rcode, or -1 */
	char			 name[1024];	/* lower case, or "" */
	size_t			 len;
	char			 json[];	/* len octets and "\n" */
};

struct monitor *
monitor_new(struct event_base *base)
{
	struct monitor *m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	LIST_INIT(&m->watchers);
	if ((m->chunk = evbuffer_new()) == NULL ||
	    (m->mb = mailbox_new(base, m)) == NULL) {
		monitor_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void
monitor_free(struct monitor *m)
{
	if (m == NULL)
		return;
	mailbox_free(m->mb);
	if (m->chunk != NULL)
		evbuffer_free(m->chunk);
	free(m);
}

const unsigned *
monitor_watching(const struct monitor *m)
{
	return &m->watching;
}

/* name (presentation format) matches suffix: equal, or below it. */
static int
name_match(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	if (suffix[0] == '\0' || strcmp(suffix, ".") == 0)
		return 1;
	if (n < s || strcmp(name + n - s, suffix) != 0)
		return 0;
	return n == s || name[n - s - 1] == '.';
}

static int
matches(const struct monitor_filter *f, const struct monitor_line *l)
{
	uint8_t host[16];
	int family;

	if (f->rcode != -1 && f->rcode != l->rcode)
		return 0;
	if (f->name[0] != '\0' && !name_match(l->name, f->name))
		return 0;
	if (f->client.len > 0) {
		family = addr_host(&f->client, host);
		if (family != l->family || memcmp(host, l->host,
		    family == AF_INET ? 4 : 16) != 0)
			return 0;
	}
	return 1;
}

/* Octets w's connection holds that its reader has not taken yet. */
static size_t
unsent(const struct monitor_watcher *w)
{
	struct evhttp_connection *evcon;
	struct bufferevent *bev;

	if ((evcon = evhttp_request_get_connection(w->req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(bev));
}

static void
deliver(struct monitor *m, struct monitor_watcher *w,
    const struct monitor_line *l)
{
	uint64_t dropped = __atomic_load_n(&m->dropped, __ATOMIC_RELAXED);

	/* Lost before any filter: this watcher's share is all of them. */
	w->lost += dropped - w->dropped_seen;
	w->dropped_seen = dropped;
	if (!matches(&w->f, l))
		return;
	if (unsent(w) >= MONITOR_BUFFER_MAX) {
		w->lost++;
		return;
	}
	if (w->lost > w->said) {
		evbuffer_add_printf(m->chunk, "{\"lost\":%llu}\n",
		    (unsigned long long)(w->lost - w->said));
		w->said = w->lost;
	}
	evbuffer_add(m->chunk, l->json, l->len + 1);
	evhttp_send_reply_chunk(w->req, m->chunk);
	evbuffer_drain(m->chunk, evbuffer_get_length(m->chunk));
}

/* In main's loop: hand line to every watcher it is for. */
static void
line_cb(struct mailbox_msg *msg, void *arg, int cancelled)
{
	struct monitor_line *l = (struct monitor_line *)msg;
	struct monitor *m = arg;
	struct monitor_watcher *w;

	(void)__atomic_sub_fetch(&m->pending, 1, __ATOMIC_RELAXED);
	if (!cancelled)
		LIST_FOREACH(w, &m->watchers, entry)
			deliver(m, w, l);
	free(l);
}

void
monitor_post(struct monitor *m, const struct queryinfo *qi)
{
	char json[QUERYINFO_JSON_MAX];
	struct monitor_line *l;
	size_t len, i;

	if (__atomic_add_fetch(&m->pending, 1, __ATOMIC_RELAXED) >
	    MONITOR_PENDING_MAX)
		goto drop;
	len = queryinfo_json(qi, clock_wall_ms(), json, sizeof(json));
	if ((l = malloc(sizeof(*l) + len + 1)) == NULL)
		goto drop;
	memcpy(l->json, json, len);
	l->json[len] = '\n';
	l->len = len;
	l->family = addr_host(qi->client, l->host);
	l->rcode = qi->answer_len >= 4 ? qi->answer[3] & 0xf : -1;
	l->name[0] = '\0';
	if (qi->q != NULL && qi->q->q.qname_len > 0) {
		msg_name_to_str(qi->q->q.qname, qi->q->q.qname_len, l->name,
		    sizeof(l->name));
		for (i = 0; l->name[i] != '\0'; i++)
			l->name[i] = (char)tolower((unsigned char)l->name[i]);
	}
	l->msg.fn = line_cb;
	mailbox_post(m->mb, &l->msg);
	return;
drop:
	(void)__atomic_sub_fetch(&m->pending, 1, __ATOMIC_RELAXED);
	(void)__atomic_add_fetch(&m->dropped, 1, __ATOMIC_RELAXED);
}

int
monitor_filter_parse(const char *name, const char *client, const char *rcode,
    struct monitor_filter *f, const char **why)
{
	ldns_lookup_table *lt;
	ldns_rdf *rdf = NULL;
	char *s, *end;
	size_t i;
	long v;

	memset(f, 0, sizeof(*f));
	f->rcode = -1;
	if (name != NULL) {
		if (ldns_str2rdf_dname(&rdf, name) != LDNS_STATUS_OK ||
		    (s = ldns_rdf2str(rdf)) == NULL) {
			ldns_rdf_deep_free(rdf);
			*why = "name: not a domain name";
			return -1;
		}
		snprintf(f->name, sizeof(f->name), "%s", s);
		for (i = 0; f->name[i] != '\0'; i++)
			f->name[i] = (char)tolower((unsigned char)f->name[i]);
		free(s);
		ldns_rdf_deep_free(rdf);
	}
	if (client != NULL && addr_parse(client, 0, &f->client, why) == -1) {
		*why = "client: not an address";
		return -1;
	}
	if (rcode != NULL) {
		v = strtol(rcode, &end, 10);
		if (rcode[0] >= '0' && rcode[0] <= '9' && *end == '\0' &&
		    v <= 15)
			f->rcode = (int)v;
		else if ((lt = ldns_lookup_by_name(ldns_rcodes, rcode)) !=
		    NULL && lt->id <= 15)
			f->rcode = lt->id;
		else {
			*why = "rcode: not an rcode (NOERROR, NXDOMAIN, "
			    "SERVFAIL, REFUSED, ... or 0 to 15)";
			return -1;
		}
	}
	return 0;
}

/*
 * A stream may be quiet for hours: no read timeout (the request was
 * read whole); a write timeout only runs while output waits, so it
 * closes a reader that stopped taking it.
 */
static void
stream_timeouts(struct evhttp_request *req)
{
	struct timeval stall = { MONITOR_STALL_S, 0 };
	struct evhttp_connection *evcon;
	struct bufferevent *bev;

	if ((evcon = evhttp_request_get_connection(req)) != NULL &&
	    (bev = evhttp_connection_get_bufferevent(evcon)) != NULL)
		bufferevent_set_timeouts(bev, NULL, &stall);
}

struct monitor_watcher *
monitor_watch(struct monitor *m, struct evhttp_request *req,
    const struct monitor_filter *f)
{
	struct monitor_watcher *w;

	if (m->watching >= MONITOR_WATCHERS_MAX ||
	    (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->m = m;
	w->req = req;
	w->f = *f;
	w->dropped_seen = __atomic_load_n(&m->dropped, __ATOMIC_RELAXED);
	LIST_INSERT_HEAD(&m->watchers, w, entry);
	__atomic_store_n(&m->watching, m->watching + 1, __ATOMIC_RELAXED);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/x-ndjson");
	evhttp_send_reply_start(req, HTTP_OK, "OK");
	stream_timeouts(req);
	return w;
}

void
monitor_unwatch(void *arg)
{
	struct monitor_watcher *w = arg;
	struct monitor *m = w->m;

	LIST_REMOVE(w, entry);
	__atomic_store_n(&m->watching, m->watching - 1, __ATOMIC_RELAXED);
	/* The client left mid-stream: the request is ours to free. */
	if (evhttp_request_get_connection(w->req) == NULL)
		evhttp_request_free(w->req);
	free(w);
}
