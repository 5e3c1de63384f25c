/*
 * ctlconn.h: the connections of one evhttp server (the control socket or
 * metrics-listen), counted and capped, which libevent 2.1's evhttp does
 * not do by itself. Every connection evhttp accepts is counted until
 * evhttp frees it; one accepted with the cap reached is refused: closed
 * unanswered at the loop's next turn, or answered 503 if a request of it
 * arrived first. So a local user cannot hold more than the cap's worth
 * of descriptors and buffers with connections that never finish.
 */
#ifndef DNSDAMPER_CTLCONN_H
#define DNSDAMPER_CTLCONN_H

#include <stdint.h>

#include <event2/event.h>
#include <event2/http.h>

struct ctlconn_set;

/*
 * ctlconn_set_new: count and cap at max the connections of http (which
 * must outlive the set until ctlconn_set_free), in base. Takes over
 * evhttp_set_bevcb and the close callback of every connection. Returns
 * NULL if out of memory.
 */
struct ctlconn_set *ctlconn_set_new(struct event_base *base,
	    struct evhttp *http, unsigned max);

/*
 * ctlconn_set_free: after evhttp_free of its server, release what is left
 * of s. NULL is fine.
 */
void	ctlconn_set_free(struct ctlconn_set *s);

/*
 * ctlconn_refused: 1 if req came over a connection accepted beyond the
 * cap: the caller answers it 503 and the connection is closed after that
 * answer. Else 0.
 */
int	ctlconn_refused(struct ctlconn_set *s, struct evhttp_request *req);

/*
 * ctlconn_on_close: when req's connection closes, for whatever reason,
 * call fn(arg) once, before evhttp frees what it still owns of it (for
 * a reply streamed over several turns). Returns 0, or -1 if the
 * connection is not counted (it was accepted while out of memory).
 */
int	ctlconn_on_close(struct ctlconn_set *s, struct evhttp_request *req,
	    void (*fn)(void *), void *arg);

/* ctlconn_open: connections of s open now, refused ones not counted. */
unsigned ctlconn_open(const struct ctlconn_set *s);

/* ctlconn_refused_total: connections s has refused since it was made. */
uint64_t ctlconn_refused_total(const struct ctlconn_set *s);

#endif
