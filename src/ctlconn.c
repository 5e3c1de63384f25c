/* ctlconn.c: the connections of an evhttp server, counted and capped. */
#include "autoconf.h"

#include <sys/queue.h>

#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/http.h>

#include "ctlconn.h"

/*
 * One connection. evhttp says nothing when it accepts one beyond asking
 * us for its bufferevent, and when it frees one it tells only a close
 * callback set on its evhttp_connection, which does not exist yet then.
 * So the bufferevent is made here and held (a reference) until the next
 * turn of the loop, or a request of it, whichever comes first, when
 * evhttp has wired it to its connection (the connection is then the
 * bufferevent's callback argument) and the close callback can be set.
 */
struct tracked {
	struct ctlconn_set	*set;
	struct bufferevent	*bev;		/* referenced until adopted */
	struct evhttp_connection *evcon;	/* once adopted */
	int			 refused;	/* beyond the cap */
	int			 answered;	/* 503 on its way: evhttp
						 * closes it after */
	void			(*closed)(void *);
	void			*closed_arg;
	LIST_ENTRY(tracked)	 entry;
};

struct ctlconn_set {
	unsigned		 max;
	unsigned		 open;
	uint64_t		 refused;
	struct event		*adopt;		/* the next turn */
	LIST_HEAD(, tracked)	 conns;
};

static void
gone(struct tracked *t)
{
	LIST_REMOVE(t, entry);
	if (!t->refused)
		t->set->open--;
	free(t);
}

static void
closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct tracked *t = arg;

	(void)evcon;
	if (t->closed != NULL)
		t->closed(t->closed_arg);
	gone(t);
}

/*
 * Find t's connection, or learn that evhttp is done with it already (it
 * cleared the callbacks when it freed it), and drop the reference.
 */
static void
adopt(struct tracked *t)
{
	struct bufferevent *bev = t->bev;
	bufferevent_event_cb eventcb;
	void *arg;

	t->bev = NULL;
	bufferevent_getcb(bev, NULL, NULL, &eventcb, &arg);
	if (eventcb != NULL && arg != NULL &&
	    evhttp_connection_get_bufferevent(arg) == bev) {
		t->evcon = arg;
		evhttp_connection_set_closecb(t->evcon, closed_cb, t);
	} else
		gone(t);
	bufferevent_decref(bev);
}

static void
adopt_all(struct ctlconn_set *s)
{
	struct tracked *t, *next;

	for (t = LIST_FIRST(&s->conns); t != NULL; t = next) {
		next = LIST_NEXT(t, entry);
		if (t->bev != NULL)
			adopt(t);
	}
}

/* The next turn: every connection adopted; those refused and not
 * being answered, closed. */
static void
adopt_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctlconn_set *s = arg;
	struct tracked *t, *next;

	(void)fd;
	(void)what;
	adopt_all(s);
	for (t = LIST_FIRST(&s->conns); t != NULL; t = next) {
		next = LIST_NEXT(t, entry);
		if (t->refused && !t->answered)
			evhttp_connection_free(t->evcon);	/* gone() */
	}
}

/* evhttp's bevcb: a connection was accepted. */
static struct bufferevent *
new_bev(struct event_base *base, void *arg)
{
	static const struct timeval next_turn = { 0, 0 };
	struct ctlconn_set *s = arg;
	struct bufferevent *bev;
	struct tracked *t;

	if ((bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL)
		return NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return bev;	/* served, but neither counted nor capped */
	t->set = s;
	t->bev = bev;
	bufferevent_incref(bev);
	if (s->open >= s->max) {
		t->refused = 1;
		s->refused++;
	} else
		s->open++;
	LIST_INSERT_HEAD(&s->conns, t, entry);
	evtimer_add(s->adopt, &next_turn);
	return bev;
}

/* The tracked connection of req, adopting every new one first. */
static struct tracked *
find(struct ctlconn_set *s, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct tracked *t;

	adopt_all(s);
	LIST_FOREACH(t, &s->conns, entry)
		if (t->evcon == evcon)
			return t;
	return NULL;
}

struct ctlconn_set *
ctlconn_set_new(struct event_base *base, struct evhttp *http, unsigned max)
{
	struct ctlconn_set *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->adopt = evtimer_new(base, adopt_cb, s)) == NULL) {
		free(s);
		return NULL;
	}
	s->max = max;
	LIST_INIT(&s->conns);
	evhttp_set_bevcb(http, new_bev, s);
	return s;
}

void
ctlconn_set_free(struct ctlconn_set *s)
{
	struct tracked *t;

	if (s == NULL)
		return;
	/* evhttp_free closed the adopted ones; these it has let go of. */
	while ((t = LIST_FIRST(&s->conns)) != NULL) {
		if (t->bev != NULL)
			bufferevent_decref(t->bev);
		gone(t);
	}
	event_free(s->adopt);
	free(s);
}

int
ctlconn_refused(struct ctlconn_set *s, struct evhttp_request *req)
{
	struct tracked *t = find(s, req);

	if (t == NULL || !t->refused)
		return 0;
	t->answered = 1;
	return 1;
}

int
ctlconn_on_close(struct ctlconn_set *s, struct evhttp_request *req,
    void (*fn)(void *), void *arg)
{
	struct tracked *t = find(s, req);

	if (t == NULL)
		return -1;
	t->closed = fn;
	t->closed_arg = arg;
	return 0;
}

unsigned
ctlconn_open(const struct ctlconn_set *s)
{
	return s->open;
}

uint64_t
ctlconn_refused_total(const struct ctlconn_set *s)
{
	return s->refused;
}
