/* dnstap.c: dnstap messages of client and forwarder traffic, encoded. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnstap.h"
#include "dnstap.pb-c.h"
#include "dnstapio.h"
#include "log.h"

struct dnstap {
	struct dnstapio		*io;
	char			*identity;	/* NULL: not sent */
	char			*version;	/* NULL: not sent */
	unsigned		 n_workers;
	struct dnstap_worker	*workers;
};

/* One end of a message: an address, its family and port. */
struct tap_end {
	uint8_t		host[16];
	size_t		len;	/* 0: unknown */
	int		family;	/* AF_INET, AF_INET6 */
	uint32_t	port;
};

static char *
optional_copy(const char *s, int *failed)
{
	char *copy;

	if (strcmp(s, CONFIG_NONE) == 0)
		return NULL;
	if ((copy = strdup(s)) == NULL)
		*failed = 1;
	return copy;
}

struct dnstap *
dnstap_new(const struct config *conf, unsigned n_workers)
{
	struct dnstap *tap;
	int failed = 0;
	unsigned i;

	if (strcmp(conf->dnstap, CONFIG_NONE) == 0)
		return NULL;
	if ((tap = calloc(1, sizeof(*tap))) == NULL)
		goto fail;
	tap->n_workers = n_workers > 0 ? n_workers : 1;
	tap->identity = optional_copy(conf->dnstap_identity, &failed);
	tap->version = optional_copy(conf->dnstap_version, &failed);
	if (failed || (tap->workers = calloc(tap->n_workers,
	    sizeof(*tap->workers))) == NULL ||
	    (tap->io = dnstapio_new(conf->dnstap, tap->n_workers)) == NULL)
		goto fail;
	for (i = 0; i < tap->n_workers; i++) {
		tap->workers[i].tap = tap;
		tap->workers[i].queue = i;
		tap->workers[i].messages = conf->dnstap_messages;
	}
	return tap;
fail:
	log_err("dnstap %s: not written", conf->dnstap);
	dnstap_free(tap);
	return NULL;
}

void
dnstap_free(struct dnstap *tap)
{
	if (tap == NULL)
		return;
	dnstapio_free(tap->io);
	free(tap->workers);
	free(tap->identity);
	free(tap->version);
	free(tap);
}

struct dnstap_worker *
dnstap_worker(struct dnstap *tap, unsigned id)
{
	if (tap == NULL || id >= tap->n_workers)
		return NULL;
	return &tap->workers[id];
}

uint64_t
dnstap_dropped(void)
{
	return dnstapio_dropped();
}

static void
end_of(const struct addr *a, struct tap_end *e)
{
	e->family = addr_host(a, e->host);
	e->len = e->family == AF_INET ? 4 : e->family == AF_INET6 ? 16 : 0;
	e->port = addr_port(a);
}

/* The wall clock ago_ms before now. */
static void
wall_time(const struct timespec *now, uint64_t ago_ms, uint64_t *sec,
    uint32_t *nsec)
{
	int64_t ns = (int64_t)now->tv_sec * 1000000000 + now->tv_nsec -
	    (int64_t)ago_ms * 1000000;

	*sec = (uint64_t)(ns / 1000000000);
	*nsec = (uint32_t)(ns % 1000000000);
}

/* m's transport, and its initiator (query_end) or responder. */
static void
set_transport(Dnstap__Message *m, int tcp, const struct tap_end *e,
    int initiator)
{
	m->has_socket_protocol = 1;
	m->socket_protocol = tcp ? DNSTAP__SOCKET_PROTOCOL__TCP :
	    DNSTAP__SOCKET_PROTOCOL__UDP;
	if (e->len == 0)
		return;
	m->has_socket_family = 1;
	m->socket_family = e->family == AF_INET ? DNSTAP__SOCKET_FAMILY__INET :
	    DNSTAP__SOCKET_FAMILY__INET6;
	if (initiator) {
		m->has_query_address = m->has_query_port = 1;
		m->query_address.data = (uint8_t *)(uintptr_t)e->host;
		m->query_address.len = e->len;
		m->query_port = e->port;
	} else {
		m->has_response_address = m->has_response_port = 1;
		m->response_address.data = (uint8_t *)(uintptr_t)e->host;
		m->response_address.len = e->len;
		m->response_port = e->port;
	}
}

static void
set_query(Dnstap__Message *m, const uint8_t *msg, size_t len,
    const struct timespec *now, uint64_t ago_ms)
{
	m->has_query_time_sec = m->has_query_time_nsec = 1;
	wall_time(now, ago_ms, &m->query_time_sec, &m->query_time_nsec);
	if (msg != NULL) {
		m->has_query_message = 1;
		m->query_message.data = (uint8_t *)(uintptr_t)msg;
		m->query_message.len = len;
	}
}

static void
set_response(Dnstap__Message *m, const uint8_t *msg, size_t len,
    const struct timespec *now)
{
	m->has_response_time_sec = m->has_response_time_nsec = 1;
	wall_time(now, 0, &m->response_time_sec, &m->response_time_nsec);
	m->has_response_message = 1;
	m->response_message.data = (uint8_t *)(uintptr_t)msg;
	m->response_message.len = len;
}

static void
set_bytes(ProtobufCBinaryData *b, protobuf_c_boolean *has, const char *s)
{
	if (s == NULL)
		return;
	*has = 1;
	b->data = (uint8_t *)(uintptr_t)s;
	b->len = strlen(s);
}

/* Encode m with w's identity and version, and extra, and queue it. */
static void
tap_send(struct dnstap_worker *w, Dnstap__Message *m, const char *extra)
{
	Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
	uint8_t *buf;
	size_t len;

	/* No collector: not worth encoding, only counting. */
	if (!dnstapio_live(w->tap->io)) {
		dnstapio_drop();
		return;
	}
	d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
	d.message = m;
	set_bytes(&d.identity, &d.has_identity, w->tap->identity);
	set_bytes(&d.version, &d.has_version, w->tap->version);
	set_bytes(&d.extra, &d.has_extra, extra);
	len = dnstap__dnstap__get_packed_size(&d);
	if ((buf = malloc(len)) != NULL)
		dnstap__dnstap__pack(&d, buf);
	(void)dnstapio_submit(w->tap->io, w->queue, buf, buf != NULL ? len :
	    0);
}

/*
 * A query message of type (its bit in w->messages): msg (len octets),
 * sent or received now, between us and a (the initiator: a client; or
 * the responder: an upstream).
 */
static void
tap_query(struct dnstap_worker *w, Dnstap__Message__Type type, unsigned bit,
    const struct addr *a, int initiator, int tcp, const uint8_t *msg,
    size_t len)
{
	Dnstap__Message m = DNSTAP__MESSAGE__INIT;
	struct timespec now;
	struct tap_end e;

	if (!(w->messages & bit))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	m.type = type;
	end_of(a, &e);
	set_transport(&m, tcp, &e, initiator);
	set_query(&m, msg, len, &now, 0);
	tap_send(w, &m, NULL);
}

/* A response message, as tap_query, to a query ago_ms earlier; extra
 * annotates it, or NULL. */
static void
tap_response(struct dnstap_worker *w, Dnstap__Message__Type type,
    const struct addr *a, int initiator, int tcp, const uint8_t *msg,
    size_t len, uint64_t ago_ms, const char *extra)
{
	Dnstap__Message m = DNSTAP__MESSAGE__INIT;
	struct timespec now;
	struct tap_end e;

	clock_gettime(CLOCK_REALTIME, &now);
	m.type = type;
	end_of(a, &e);
	set_transport(&m, tcp, &e, initiator);
	set_query(&m, NULL, 0, &now, ago_ms);
	set_response(&m, msg, len, &now);
	tap_send(w, &m, extra);
}

void
dnstap_client_query(struct dnstap_worker *w, const struct addr *client,
    int tcp, const uint8_t *pkt, size_t len)
{
	tap_query(w, DNSTAP__MESSAGE__TYPE__CLIENT_QUERY,
	    CONFIG_DNSTAP_CLIENT_QUERY, client, 1, tcp, pkt, len);
}

void
dnstap_client_response(struct dnstap_worker *w, const struct queryinfo *qi)
{
	char extra[256];

	if (!(w->messages & CONFIG_DNSTAP_CLIENT_RESPONSE))
		return;
	snprintf(extra, sizeof(extra), "source=%s%s%s",
	    queryinfo_source_name(qi->source), qi->upstream != NULL ? " " : "",
	    qi->upstream != NULL ? qi->upstream : "");
	tap_response(w, DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE, qi->client, 1,
	    qi->tcp, qi->answer, qi->answer_len, qi->now > qi->arrived ?
	    qi->now - qi->arrived : 0, extra);
}

void
dnstap_forwarder_query(struct dnstap_worker *w, const struct addr *upstream,
    int tcp, const uint8_t *msg, size_t len)
{
	tap_query(w, DNSTAP__MESSAGE__TYPE__FORWARDER_QUERY,
	    CONFIG_DNSTAP_FORWARDER_QUERY, upstream, 0, tcp, msg, len);
}

void
dnstap_forwarder_response(struct dnstap_worker *w,
    const struct addr *upstream, int tcp, const uint8_t *resp, size_t rlen,
    uint64_t sent, uint64_t now_ms)
{
	if (!(w->messages & CONFIG_DNSTAP_FORWARDER_RESPONSE))
		return;
	tap_response(w, DNSTAP__MESSAGE__TYPE__FORWARDER_RESPONSE, upstream,
	    0, tcp, resp, rlen, now_ms > sent ? now_ms - sent : 0, NULL);
}
