/* accept.c: listeners that pause, not spin, when accept() fails. */
#include "autoconf.h"

#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "accept.h"
#include "clock.h"
#include "log.h"

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	evconnlistener_enable(arg);
}

static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	static const struct timeval pause = { ACCEPT_PAUSE_SEC, 0 };
	/* Static: out of descriptors is the host's trouble, one warning a
	 * minute for the whole process, whichever listener (of whichever
	 * worker thread) meets it; and libevent gives this callback nothing
	 * of ours to keep it in. log_limit_due is lock-free. */
	static struct log_limit said;
	int err = errno;
	uint64_t held;

	(void)arg;
	evconnlistener_disable(l);
	/* No struct to keep the timer in: libevent gives this callback
	 * the listener and its server's argument only. */
	if (event_base_once(evconnlistener_get_base(l), -1, EV_TIMEOUT,
	    resume_cb, l, &pause) == -1)
		evconnlistener_enable(l);
	if (log_limit_due(&said, clock_now_ms(), LOG_LIMIT_MINUTE, &held))
		log_warnx("accept: %s; pausing for %d s (and %llu more pauses "
		    "since the last such message)", strerror(err),
		    ACCEPT_PAUSE_SEC, (unsigned long long)held);
}

void
accept_pause_on_error(struct evconnlistener *l)
{
	evconnlistener_set_error_cb(l, accept_error_cb);
}
