/* control.c: the HTTP/1.1 control socket and the metrics listener. */
#include "autoconf.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <ldns/ldns.h>

#include "accept.h"
#include "cache.h"
#include "cachedump.h"
#include "clock.h"
#include "control.h"
#include "ctlconn.h"
#include "lkg.h"
#include "lkgreport.h"
#include "log.h"
#include "metrics.h"
#include "msg.h"
#include "monitor.h"
#include "zone.h"

#define PROMETHEUS_TYPE	"text/plain; version=0.0.4; charset=utf-8"
#define JSON_TYPE	"application/json"
#define TEXT_TYPE	"text/plain; charset=utf-8"
/*
 * A request's line and headers, and its body, at most: ours are a path
 * with a query string of a name or two and no body, and without a bound
 * evhttp would buffer (and rescan) a header line as long as it is sent.
 */
#define CONTROL_HEADERS_MAX	8192
#define CONTROL_BODY_MAX	4096

struct census;

struct control {
	struct evhttp		*http;		/* the unix socket */
	struct evhttp		*metrics;	/* metrics-listen, or NULL */
	struct ctlconn_set	*http_conns;	/* their connections */
	struct ctlconn_set	*metrics_conns;
	struct event_base	*base;
	struct report		 report;
	control_reload_fn	 reload;
	void			*reload_arg;
	control_forward_fn	 forward;	/* or NULL */
	void			*forward_arg;
	gid_t			 forward_group;
	LIST_HEAD(, census)	 censuses;	/* in progress */
};

/*
 * A GET /metrics or /stats waiting for its count of stale entries, taken
 * one cache slice per turn of the event loop: a walk of a large cache at
 * once would hold up every query for milliseconds. If the client goes
 * away meanwhile, libevent keeps req until our reply frees it.
 */
struct census {
	struct control		*c;
	struct evhttp_request	*req;
	int			 prometheus;	/* /metrics, not /stats */
	struct event		*ev;
	uint64_t		 now;		/* ms, one instant for all */
	uint64_t		 stale;
	unsigned		 slice;
	LIST_ENTRY(census)	 entry;
};

/* A GET /cache in progress: one slice per chunk. */
struct dump {
	struct control		*c;
	struct evhttp_request	*req;
	unsigned		 slice;
};

static int
stale_socket(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, in_use;

	if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode))
		return 0;
	/* A socket nobody accepts on is left over from a crash. */
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	in_use = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return !in_use;
}

/*
 * Bind fd to sun with the socket file made with mode (on Linux only the
 * umask sets a unix socket's mode: fchmod on the descriptor does not) and,
 * if we may act as gid (root may), group gid: nothing is done by path
 * after it exists, where whoever can write in its directory could have
 * put another file. *grouped says whether it got gid.
 */
static int
bind_made_as(int fd, const struct sockaddr_un *sun, mode_t mode, gid_t gid,
    int *grouped)
{
	mode_t mask = umask(~mode & 0777);
	gid_t egid = getegid();
	int rc, saved;

	*grouped = gid == (gid_t)-1 || setegid(gid) == 0;
	rc = bind(fd, (const struct sockaddr *)sun, sizeof(*sun));
	saved = errno;
	if (gid != (gid_t)-1 && *grouped && setegid(egid) == -1)
		fatal("setegid back to %u", (unsigned)egid);
	umask(mask);
	errno = saved;
	return rc;
}

int
control_open_unix(const char *path, mode_t mode, gid_t gid)
{
	struct sockaddr_un sun;
	int fd, saved, grouped;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		log_warn("control %s", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if (stale_socket(path))
		(void)unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		goto fail;
	if (bind_made_as(fd, &sun, mode, gid, &grouped) == -1)
		goto fail;
	/*
	 * Not root, but maybe a member of gid (supplementary groups are not
	 * enough for setegid): then we can change only files of our own,
	 * and never through a symbolic link. Without the group, the owner
	 * still can connect.
	 */
	if (!grouped && fchownat(AT_FDCWD, path, (uid_t)-1, gid,
	    AT_SYMLINK_NOFOLLOW) == -1)
		log_warn("control %s: control-group not applied", path);
	if (listen(fd, 16) == -1) {
		saved = errno;
		(void)unlink(path);
		errno = saved;
		goto fail;
	}
	return fd;
fail:
	saved = errno;
	log_warn("control %s", path);
	if (fd != -1)
		close(fd);
	errno = saved;
	return -1;
}

int
control_open_tcp(const struct addr *a)
{
	char name[ADDR_STRLEN];
	int fd, one = 1, saved;

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd != -1 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) == 0 && bind(fd, (const struct sockaddr *)&a->ss,
	    a->len) == 0 && listen(fd, 16) == 0)
		return fd;
	saved = errno;
	log_err("metrics-listen %s", addr_format(a, name, sizeof(name)));
	if (fd != -1)
		close(fd);
	errno = saved;
	return -1;
}

static void
reply(struct evhttp_request *req, int code, const char *reason,
    const char *type, struct evbuffer *body)
{
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", type);
	evhttp_send_reply(req, code, reason, body);
}

/* A short JSON error: {"error": "why"}. */
static void
reply_error(struct evhttp_request *req, int code, const char *reason,
    const char *why)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	evbuffer_add_printf(b, "{\"error\": ");
	metrics_json_string(b, why);
	evbuffer_add_printf(b, "}\n");
	reply(req, code, reason, JSON_TYPE, b);
	evbuffer_free(b);
}

/* The parameters of req's query string into kv (free with
 * evhttp_clear_headers). Returns 0, or -1 if it does not parse. */
static int
params(struct evhttp_request *req, struct evkeyvalq *kv)
{
	const char *q = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));

	TAILQ_INIT(kv);
	return q == NULL ? 0 : evhttp_parse_query_str(q, kv);
}

/* ?format=text asks for what people read; JSON otherwise. */
static enum report_format
format_of(struct evhttp_request *req)
{
	struct evkeyvalq kv;
	const char *f;
	enum report_format format = REPORT_JSON;

	if (params(req, &kv) == 0 && (f = evhttp_find_header(&kv, "format")) !=
	    NULL && strcmp(f, "text") == 0)
		format = REPORT_TEXT;
	evhttp_clear_headers(&kv);
	return format;
}

static const char *
content_type(enum report_format f)
{
	return f == REPORT_TEXT ? TEXT_TYPE : JSON_TYPE;
}

/* The connections of the control socket and metrics-listen. */
static void
connections_report(const struct control *c, const struct metrics_writer *w)
{
	const struct ctlconn_set *sets[2] = { c->http_conns, c->metrics_conns };
	const char *labels[2] = { "listener", NULL };
	const char *names[2] = { "control", "metrics" };
	size_t i;

	w->family(w->ctx, "dnsdamper_control_connections", "gauge",
	    "HTTP connections open on the control socket or metrics-listen.");
	for (i = 0; i < 2; i++)
		if (sets[i] != NULL) {
			labels[1] = names[i];
			w->sample(w->ctx, "dnsdamper_control_connections",
			    labels, 1, ctlconn_open(sets[i]));
		}
	w->end_family(w->ctx);
	w->family(w->ctx, "dnsdamper_control_refused_total", "counter",
	    "HTTP connections refused: control-clients or metrics-clients "
	    "were open.");
	for (i = 0; i < 2; i++)
		if (sets[i] != NULL) {
			labels[1] = names[i];
			w->sample(w->ctx, "dnsdamper_control_refused_total",
			    labels, 1, (double)ctlconn_refused_total(sets[i]));
		}
	w->end_family(w->ctx);
}

/*
 * Every figure, once the census is done: the Prometheus exposition for
 * /metrics; for /stats, JSON or (?format=text) text.
 */
static void
figures_reply(struct census *cs)
{
	enum report_format f = format_of(cs->req);
	struct metrics_writer w;
	struct metrics_json j;
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(cs->req, HTTP_INTERNAL, NULL);
		return;
	}
	if (cs->prometheus)
		metrics_prometheus_writer(&w, b);
	else if (f == REPORT_TEXT)
		metrics_text_writer(&w, b);
	else
		metrics_json_writer(&w, &j, b);
	report_metrics(&cs->c->report, cs->stale, &w);
	connections_report(cs->c, &w);
	if (!cs->prometheus && f == REPORT_JSON)
		metrics_json_finish(&j);
	reply(cs->req, HTTP_OK, "OK", cs->prometheus ? PROMETHEUS_TYPE :
	    content_type(f), b);
	evbuffer_free(b);
}

static void
census_free(struct census *cs)
{
	LIST_REMOVE(cs, entry);
	event_free(cs->ev);
	free(cs);
}

static void
census_step(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval next_turn = { 0, 0 };
	struct census *cs = arg;
	struct cache *cache = cs->c->report.cache;

	(void)fd;
	(void)what;
	if (cs->slice < cache_slices(cache)) {
		cs->stale += cache_stale_slice(cache, cs->slice++, cs->now);
		/* A timer, not event_active: I/O is polled between slices. */
		evtimer_add(cs->ev, &next_turn);
		return;
	}
	figures_reply(cs);
	census_free(cs);
}

/* Count the stale entries, then reply to req with every figure. */
static void
census_start(struct control *c, struct evhttp_request *req, int prometheus)
{
	struct census *cs;

	if ((cs = calloc(1, sizeof(*cs))) == NULL ||
	    (cs->ev = evtimer_new(c->base, census_step, cs)) == NULL) {
		free(cs);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	cs->c = c;
	cs->req = req;
	cs->prometheus = prometheus;
	cs->now = clock_now_ms();
	LIST_INSERT_HEAD(&c->censuses, cs, entry);
	census_step(-1, 0, cs);
}

static void
get_metrics(struct control *c, struct evhttp_request *req)
{
	census_start(c, req, 1);
}

static void
get_stats(struct control *c, struct evhttp_request *req)
{
	census_start(c, req, 0);
}

static void
get_upstreams(struct control *c, struct evhttp_request *req)
{
	enum report_format f = format_of(req);
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	report_upstreams(&c->report, f, b);
	reply(req, HTTP_OK, "OK", content_type(f), b);
	evbuffer_free(b);
}

/* The qtype parameter: 0 if absent, -1 if not a known type mnemonic. */
static int
param_type(struct evkeyvalq *kv)
{
	const char *t = evhttp_find_header(kv, "type");
	ldns_rr_type type;

	if (t == NULL)
		return 0;
	type = ldns_get_rr_type_by_name(t);
	return type == 0 ? -1 : (int)type;
}

static void
get_explain(struct control *c, struct evhttp_request *req)
{
	struct evkeyvalq kv;
	struct evbuffer *b;
	const char *name;
	int type;

	if (params(req, &kv) == -1 ||
	    (name = evhttp_find_header(&kv, "name")) == NULL ||
	    (type = param_type(&kv)) == -1) {
		evhttp_clear_headers(&kv);
		reply_error(req, HTTP_BADREQUEST, "Bad Request",
		    "usage: /explain?name=NAME[&type=TYPE]");
		return;
	}
	if ((b = evbuffer_new()) == NULL ||
	    report_explain(&c->report, name, type == 0 ? MSG_TYPE_A :
	    (uint16_t)type, clock_now_ms(), format_of(req), b) == -1)
		reply_error(req, HTTP_BADREQUEST, "Bad Request",
		    "not a domain name");
	else
		reply(req, HTTP_OK, "OK", content_type(format_of(req)), b);
	if (b != NULL)
		evbuffer_free(b);
	evhttp_clear_headers(&kv);
}

static void
get_lkg(struct control *c, struct evhttp_request *req)
{
	enum report_format f = format_of(req);
	struct evbuffer *b;

	if (c->report.lkg == NULL || (b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	lkgreport_list(c->report.lkg, clock_now_ms(), f, b);
	reply(req, HTTP_OK, "OK", content_type(f), b);
	evbuffer_free(b);
}

/* An operator's word: ZONE's last known good answers end (lkg.h). */
static void
post_lkg_release(struct control *c, struct evhttp_request *req)
{
	uint8_t wire[MSG_NAME_MAX];
	char name[1024];
	struct evkeyvalq kv;
	struct evbuffer *b;
	const char *zone;
	size_t len;
	long n;

	if (params(req, &kv) == -1 ||
	    (zone = evhttp_find_header(&kv, "zone")) == NULL ||
	    zone_name_to_wire(zone, wire, &len) == -1) {
		evhttp_clear_headers(&kv);
		reply_error(req, HTTP_BADREQUEST, "Bad Request",
		    "usage: /lkg/release?zone=ZONE");
		return;
	}
	evhttp_clear_headers(&kv);
	/* the zone as forward blocks name it: lower case, absolute */
	msg_name_to_str(wire, len, name, sizeof(name));
	if (c->report.lkg == NULL ||
	    (n = lkg_release(c->report.lkg, name, clock_now_ms())) < 0) {
		reply_error(req, HTTP_NOTFOUND, "Not Found",
		    "no last known good state for that zone");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	evbuffer_add_printf(b, format_of(req) == REPORT_TEXT ?
	    "released %s: %ld held names\n" :
	    "{\"zone\": \"%s\", \"released\": %ld}\n", name, n);
	reply(req, HTTP_OK, "OK", content_type(format_of(req)), b);
	evbuffer_free(b);
}

static void
post_flush(struct control *c, struct evhttp_request *req)
{
	uint8_t wire[MSG_NAME_MAX];
	const char *name, *zone;
	struct evkeyvalq kv;
	struct evbuffer *b;
	uint64_t n;
	size_t len = 0;
	int type;

	if (params(req, &kv) == -1 || (type = param_type(&kv)) == -1)
		goto bad;
	name = evhttp_find_header(&kv, "name");
	zone = evhttp_find_header(&kv, "zone");
	if ((name != NULL && zone != NULL) || (zone != NULL && type != 0) ||
	    (name == NULL && zone == NULL && type != 0) ||
	    ((name != NULL || zone != NULL) &&
	    zone_name_to_wire(name != NULL ? name : zone, wire, &len) == -1))
		goto bad;
	n = cache_flush(c->report.cache, name != NULL || zone != NULL ?
	    wire : NULL, len, (uint16_t)type, zone != NULL);
	evhttp_clear_headers(&kv);
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	evbuffer_add_printf(b, format_of(req) == REPORT_TEXT ?
	    "flushed %llu entries\n" : "{\"flushed\": %llu}\n",
	    (unsigned long long)n);
	reply(req, HTTP_OK, "OK", content_type(format_of(req)), b);
	evbuffer_free(b);
	return;
bad:
	evhttp_clear_headers(&kv);
	reply_error(req, HTTP_BADREQUEST, "Bad Request",
	    "usage: /flush, /flush?name=NAME[&type=TYPE] or /flush?zone=ZONE");
}

/* A POST /reload waiting for its reload: libevent keeps req until our
 * reply frees it, even if the client went away meanwhile. */
struct control_reload {
	struct evhttp_request	*req;
	enum report_format	 format;
};

static void
post_reload(struct control *c, struct evhttp_request *req)
{
	struct control_reload *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	r->req = req;
	r->format = format_of(req);
	c->reload(c->reload_arg, r);
}

void
control_reload_done(struct control_reload *r, int ok, const char *errors)
{
	struct evbuffer *b = evbuffer_new();
	struct evhttp_request *req = r->req;
	enum report_format f = r->format;

	free(r);
	if (b == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	if (errors == NULL)
		errors = "";
	if (ok) {
		evbuffer_add_printf(b, f == REPORT_TEXT ? "reloaded\n" :
		    "{\"reloaded\": true}\n");
		reply(req, HTTP_OK, "OK", content_type(f), b);
	} else if (f == REPORT_TEXT) {
		evbuffer_add_printf(b, "reload failed; still running the "
		    "previous configuration:\n%s", errors);
		reply(req, HTTP_INTERNAL, "Reload Failed", TEXT_TYPE, b);
	} else {
		evbuffer_add_printf(b, "{\"reloaded\": false, \"errors\": ");
		metrics_json_string(b, errors);
		evbuffer_add_printf(b, "}\n");
		reply(req, HTTP_INTERNAL, "Reload Failed", JSON_TYPE, b);
	}
	evbuffer_free(b);
}

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS	59	/* Linux 4.13; older headers lack it */
#endif

/*
 * 1 if the peer of req may change forwarding: root, our own user, or a
 * member of the socket's group. The credentials are the kernel's, taken
 * at connect(2): a socket handed to another process keeps them.
 */
static int
peer_may_change(const struct control *c, struct evhttp_request *req)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	struct bufferevent *bev;
	struct ucred cred;
	gid_t groups[256];
	socklen_t len = sizeof(cred);
	size_t i;
	int fd;

	if (conn == NULL || (bev = evhttp_connection_get_bufferevent(conn)) ==
	    NULL || (fd = bufferevent_getfd(bev)) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return 0;
	if (cred.uid == 0 || cred.uid == geteuid() ||
	    cred.gid == c->forward_group)
		return 1;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1)
		return 0;
	for (i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == c->forward_group)
			return 1;
	return 0;
}

/* The parameters of a /forward request into fr (borrowed from kv). */
static void
forward_params(struct evkeyvalq *kv, struct control_forward_req *fr)
{
	struct evkeyval *p;

	TAILQ_FOREACH(p, kv, next) {
		if (strcmp(p->key, "format") == 0)
			fr->text = strcmp(p->value, "text") == 0;
		else if (strcmp(p->key, "zone") == 0 && fr->zone == NULL)
			fr->zone = p->value;
		else if (strcmp(p->key, "owner") == 0 && fr->owner == NULL &&
		    fr->op != CONTROL_FORWARD_LIST)
			fr->owner = p->value;
		else if (strcmp(p->key, "policy") == 0 && fr->policy == NULL &&
		    fr->op == CONTROL_FORWARD_ADD)
			fr->policy = p->value;
		else if (strcmp(p->key, "lifetime") == 0 &&
		    fr->lifetime == NULL && fr->op == CONTROL_FORWARD_ADD)
			fr->lifetime = p->value;
		else if (strcmp(p->key, "upstream") == 0 &&
		    fr->op == CONTROL_FORWARD_ADD) {
			if (fr->n_upstreams < CONTROL_FORWARD_UPSTREAMS)
				fr->upstreams[fr->n_upstreams] = p->value;
			fr->n_upstreams++;
		} else if (fr->unknown == NULL)
			fr->unknown = p->key;
	}
}

static void
forward(struct control *c, struct evhttp_request *req,
    enum control_forward_op op)
{
	struct control_forward_req fr;
	struct evkeyvalq kv;
	struct evbuffer *b;
	int status;

	if (c->forward == NULL) {
		reply_error(req, HTTP_NOTFOUND, "Not Found", "no such resource");
		return;
	}
	if (op != CONTROL_FORWARD_LIST && !peer_may_change(c, req)) {
		reply_error(req, 403, "Forbidden", "only root, the daemon's "
		    "user and the control socket's group may change "
		    "forwarding");
		return;
	}
	memset(&fr, 0, sizeof(fr));
	fr.op = op;
	if (params(req, &kv) == -1 || (b = evbuffer_new()) == NULL) {
		evhttp_clear_headers(&kv);
		reply_error(req, HTTP_BADREQUEST, "Bad Request",
		    "the query string does not parse");
		return;
	}
	forward_params(&kv, &fr);
	status = c->forward(c->forward_arg, &fr, b);
	reply(req, status, status == HTTP_OK ? "OK" : status == 403 ?
	    "Forbidden" : status == HTTP_NOTFOUND ? "Not Found" :
	    status == 507 ? "Insufficient Storage" : status == HTTP_INTERNAL ?
	    "Internal Server Error" : "Bad Request", fr.text ? TEXT_TYPE :
	    JSON_TYPE, b);
	evbuffer_free(b);
	evhttp_clear_headers(&kv);
}

static void
get_forward(struct control *c, struct evhttp_request *req)
{
	forward(c, req, CONTROL_FORWARD_LIST);
}

static void
post_forward_add(struct control *c, struct evhttp_request *req)
{
	forward(c, req, CONTROL_FORWARD_ADD);
}

static void
post_forward_remove(struct control *c, struct evhttp_request *req)
{
	forward(c, req, CONTROL_FORWARD_REMOVE);
}

static void dump_next(struct evhttp_connection *, void *);

/*
 * The client left mid-dump: libevent has handed req back to us (it frees
 * only the requests it still holds, which it does itself at evhttp_free).
 */
static void
dump_closed(void *arg)
{
	struct dump *d = arg;

	if (evhttp_request_get_connection(d->req) == NULL)
		evhttp_request_free(d->req);
	free(d);
}

/* Send the next non-empty slice; after the last one, end the reply. */
static void
dump_next(struct evhttp_connection *evcon, void *arg)
{
	struct dump *d = arg;
	struct cache *cache = d->c->report.cache;
	struct evbuffer *b = evbuffer_new();

	while (b != NULL && evbuffer_get_length(b) == 0 &&
	    d->slice < cache_slices(cache))
		cachedump_slice(cache, d->slice++, clock_now_ms(), b);
	if (b == NULL || evbuffer_get_length(b) == 0) {
		(void)ctlconn_on_close(d->c->http_conns, d->req, NULL, NULL);
		evhttp_send_reply_end(d->req);
		free(d);
	} else
		evhttp_send_reply_chunk_with_cb(d->req, b, dump_next, d);
	if (b != NULL)
		evbuffer_free(b);
}

static void
get_cache(struct control *c, struct evhttp_request *req)
{
	struct dump *d;

	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    ctlconn_on_close(c->http_conns, req, dump_closed, d) == -1) {
		free(d);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	d->c = c;
	d->req = req;
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", TEXT_TYPE);
	evhttp_send_reply_start(req, HTTP_OK, "OK");
	dump_next(evhttp_request_get_connection(req), d);
}

/*
 * GET /monitor[?name=SUFFIX][&client=ADDR][&rcode=RCODE]: the stream of
 * answered queries (monitor.h), until the client goes.
 */
static void
get_monitor(struct control *c, struct evhttp_request *req)
{
	struct monitor_watcher *w;
	struct monitor_filter f;
	struct evkeyvalq kv;
	const char *why = "bad query string";
	int rc;

	rc = params(req, &kv);
	if (rc == 0)
		rc = monitor_filter_parse(evhttp_find_header(&kv, "name"),
		    evhttp_find_header(&kv, "client"),
		    evhttp_find_header(&kv, "rcode"), &f, &why);
	evhttp_clear_headers(&kv);
	if (rc == -1) {
		reply_error(req, HTTP_BADREQUEST, "Bad Request", why);
		return;
	}
	if (c->report.monitor == NULL ||
	    (w = monitor_watch(c->report.monitor, req, &f)) == NULL) {
		reply_error(req, 503, "Service Unavailable",
		    "too many monitors at once");
		return;
	}
	if (ctlconn_on_close(c->http_conns, req, monitor_unwatch, w) == -1) {
		monitor_unwatch(w);
		evhttp_send_reply_end(req);
	}
}

static const struct route {
	const char		*path;
	enum evhttp_cmd_type	 method;
	void			(*fn)(struct control *, struct evhttp_request *);
} routes[] = {
	{ "/metrics", EVHTTP_REQ_GET, get_metrics },
	{ "/stats", EVHTTP_REQ_GET, get_stats },
	{ "/upstreams", EVHTTP_REQ_GET, get_upstreams },
	{ "/explain", EVHTTP_REQ_GET, get_explain },
	{ "/cache", EVHTTP_REQ_GET, get_cache },
	{ "/monitor", EVHTTP_REQ_GET, get_monitor },
	{ "/flush", EVHTTP_REQ_POST, post_flush },
	{ "/lkg", EVHTTP_REQ_GET, get_lkg },
	{ "/lkg/release", EVHTTP_REQ_POST, post_lkg_release },
	{ "/reload", EVHTTP_REQ_POST, post_reload },
	{ "/forward", EVHTTP_REQ_GET, get_forward },
	{ "/forward/add", EVHTTP_REQ_POST, post_forward_add },
	{ "/forward/remove", EVHTTP_REQ_POST, post_forward_remove },
};

static void
dispatch(struct control *c, struct ctlconn_set *conns,
    struct evhttp_request *req, size_t n_routes)
{
	const char *path = evhttp_uri_get_path(
	    evhttp_request_get_evhttp_uri(req));
	size_t i;

	if (ctlconn_refused(conns, req)) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		reply_error(req, 503, "Service Unavailable",
		    "too many connections");
		return;
	}
	for (i = 0; path != NULL && i < n_routes; i++) {
		if (strcmp(path, routes[i].path) != 0)
			continue;
		if (evhttp_request_get_command(req) != routes[i].method) {
			evhttp_add_header(evhttp_request_get_output_headers(req),
			    "Allow", routes[i].method == EVHTTP_REQ_GET ?
			    "GET" : "POST");
			reply_error(req, 405, "Method Not Allowed",
			    routes[i].method == EVHTTP_REQ_GET ? "use GET" :
			    "use POST");
			return;
		}
		routes[i].fn(c, req);
		return;
	}
	reply_error(req, HTTP_NOTFOUND, "Not Found", "no such resource");
}

static void
control_cb(struct evhttp_request *req, void *arg)
{
	struct control *c = arg;

	dispatch(c, c->http_conns, req, sizeof(routes) / sizeof(routes[0]));
}

/* metrics-listen serves the first route alone: /metrics. */
static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct control *c = arg;

	dispatch(c, c->metrics_conns, req, 1);
}

/*
 * An evhttp on listening socket fd, which it owns (closed on error), with
 * at most max connections at once, counted in *conns.
 */
static struct evhttp *
serve(struct event_base *base, int fd, unsigned max,
    struct ctlconn_set **conns, void (*cb)(struct evhttp_request *, void *),
    void *arg)
{
	struct evconnlistener *l = NULL;
	struct evhttp *http;

	if ((http = evhttp_new(base)) == NULL ||
	    (*conns = ctlconn_set_new(base, http, max)) == NULL ||
	    (l = evconnlistener_new(base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE,
	    -1, fd)) == NULL || evhttp_bind_listener(http, l) == NULL) {
		if (l != NULL)
			evconnlistener_free(l);
		else
			close(fd);
		if (http != NULL)
			evhttp_free(http);
		ctlconn_set_free(*conns);
		*conns = NULL;
		return NULL;
	}
	accept_pause_on_error(l);
	evhttp_set_max_headers_size(http, CONTROL_HEADERS_MAX);
	evhttp_set_max_body_size(http, CONTROL_BODY_MAX);
	/* Every method reaches dispatch, which says 405 and what to use. */
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_timeout(http, 30);
	evhttp_set_gencb(http, cb, arg);
	return http;
}

struct control *
control_new(struct event_base *base, int unix_fd, int tcp_fd,
    const struct control_limits *lim, const struct report *report,
    control_reload_fn reload, void *arg)
{
	struct control *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		if (unix_fd != -1)
			close(unix_fd);
		if (tcp_fd != -1)
			close(tcp_fd);
		return NULL;
	}
	c->base = base;
	c->report = *report;
	c->reload = reload;
	c->reload_arg = arg;
	LIST_INIT(&c->censuses);
	if (unix_fd != -1)
		c->http = serve(base, unix_fd, lim->control_clients,
		    &c->http_conns, control_cb, c);
	if (tcp_fd != -1)
		c->metrics = serve(base, tcp_fd, lim->metrics_clients,
		    &c->metrics_conns, metrics_cb, c);
	if ((unix_fd != -1 && c->http == NULL) ||
	    (tcp_fd != -1 && c->metrics == NULL)) {
		control_free(c);
		return NULL;
	}
	return c;
}

void
control_set_forward(struct control *c, control_forward_fn fn, void *arg,
    gid_t group)
{
	c->forward = fn;
	c->forward_arg = arg;
	c->forward_group = group;
}

void
control_free(struct control *c)
{
	if (c == NULL)
		return;
	/* Unanswered: evhttp_free below frees their requests. */
	while (!LIST_EMPTY(&c->censuses))
		census_free(LIST_FIRST(&c->censuses));
	if (c->http != NULL)
		evhttp_free(c->http);
	if (c->metrics != NULL)
		evhttp_free(c->metrics);
	ctlconn_set_free(c->http_conns);
	ctlconn_set_free(c->metrics_conns);
	free(c);
}
