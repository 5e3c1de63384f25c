/*
 * monitor.h: the live stream of answered queries behind `dnsdamperctl
 * monitor` (GET /monitor on the control socket): one JSON object per
 * line (queryinfo_json), in an HTTP/1.1 chunked reply that stays open,
 * each line sent as it happens, filtered per watcher by qname suffix,
 * client address and rcode. While nobody watches, workers build
 * nothing (observe_wanted reads one atomic count). With watchers, a
 * worker formats each answer and posts it to main's loop through a
 * bounded mailbox (MONITOR_PENDING_MAX lines; beyond, lost); main hands
 * each line to the watchers whose filters match, and a watcher whose
 * connection holds MONITOR_BUFFER_MAX octets unread loses lines instead:
 * nobody waits for a reader. Lines lost are counted, and said in the
 * stream as {"lost":N} before the next line that goes out.
 */
#ifndef DNSDAMPER_MONITOR_H
#define DNSDAMPER_MONITOR_H

#include <stdint.h>

#include "addr.h"
#include "queryinfo.h"

struct event_base;
struct evhttp_request;
struct monitor;
struct monitor_watcher;

/* Watchers at once; one more is answered 503. */
#define MONITOR_WATCHERS_MAX	4
/* Lines posted by workers and not yet handed to the watchers. */
#define MONITOR_PENDING_MAX	4096
/* Octets a watcher's connection may hold unsent before it loses lines. */
#define MONITOR_BUFFER_MAX	(256 * 1024)
/*
 * Seconds a watcher's connection may hold output without taking any of
 * it before it is closed (its place freed); an idle stream, with nothing
 * to send, is never closed (the control socket's 30 s timeout is lifted
 * for it).
 */
#define MONITOR_STALL_S		60

/* What one watcher wants to see; every part optional. */
struct monitor_filter {
	char		name[1024];	/* a suffix, lower case, absolute
					 * ("example.com."); "": any */
	struct addr	client;		/* len 0: any; the port ignored */
	int		rcode;		/* -1: any */
};

/*
 * monitor_new: the monitor of main's loop base (borrowed). Returns NULL
 * (errno set) if out of memory or descriptors.
 */
struct monitor *monitor_new(struct event_base *base);

/* monitor_free: with its loop stopped, or from it once no watcher is
 * left and no worker posts any more. NULL is fine. */
void	monitor_free(struct monitor *m);

/*
 * monitor_watching: the count of watchers, for observe_wanted to read
 * (relaxed atomic load) from any thread; stays put while m lives.
 */
const unsigned *monitor_watching(const struct monitor *m);

/*
 * monitor_post: from any worker thread: qi (borrowed for the call)
 * formatted and queued for main's loop; dropped and counted if
 * MONITOR_PENDING_MAX lines are queued, or out of memory.
 */
void	monitor_post(struct monitor *m, const struct queryinfo *qi);

/*
 * monitor_filter_parse: fill *f from the query parameters of GET
 * /monitor: name (a domain name), client (an address), rcode (a name
 * such as NXDOMAIN, or a number 0 to 15), each NULL if not given.
 * Returns 0, or -1 with *why (static) saying which is not valid.
 */
int	monitor_filter_parse(const char *name, const char *client,
	    const char *rcode, struct monitor_filter *f, const char **why);

/*
 * monitor_watch: stream to req (answered 200 with a chunked body that
 * starts now) every line matching f (copied), from main's loop. Returns
 * the watcher, for monitor_unwatch when req's connection closes, or NULL
 * when MONITOR_WATCHERS_MAX watch already or out of memory (req is then
 * still the caller's to answer).
 */
struct monitor_watcher *monitor_watch(struct monitor *m,
	    struct evhttp_request *req, const struct monitor_filter *f);

/* monitor_unwatch: w's connection closed (a ctlconn_on_close callback,
 * arg the watcher): w is forgotten and freed. */
void	monitor_unwatch(void *w);

#endif
