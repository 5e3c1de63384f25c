/*
 * control.h: the control socket, a unix stream socket speaking HTTP/1.1
 * (libevent's evhttp), so that `curl --unix-socket` and dnsdamperctl work:
 *   GET  /metrics    Prometheus text exposition 0.0.4
 *   GET  /stats      the same figures as JSON
 *   GET  /upstreams  each upstream's state, RTT, failures (JSON)
 *   GET  /explain?name=N[&type=T]   how N would be answered now (JSON)
 *   GET  /cache      the cache, one RR per line, streamed slice by slice
 *   POST /flush[?name=N[&type=T] | ?zone=Z]   drop cache entries
 *   POST /reload     reread the configuration, as SIGHUP does
 * (all but /metrics and /cache as text instead of JSON with ?format=text)
 * and the optional metrics-listen TCP socket, serving GET /metrics only.
 */
#ifndef DNSDAMPER_CONTROL_H
#define DNSDAMPER_CONTROL_H

#include <sys/types.h>

#include <event2/event.h>

#include "addr.h"
#include "report.h"

struct evbuffer;
struct control;

/* A POST /reload waiting for the reload it started to end. */
struct control_reload;

/*
 * Starts a reload of the configuration for POST /reload. The reload may
 * take a while (it is built off the loop): whoever is called ends r with
 * control_reload_done, now or later, in the control's loop and before
 * control_free; the reply goes out then.
 */
typedef void (*control_reload_fn)(void *arg, struct control_reload *r);

/*
 * control_reload_done: the reload of r is over: ok 1 (serving the new
 * configuration), or 0, refused, with the reasons in errors (one per
 * line, borrowed; NULL: none to say). Replies to the client (if it went
 * away, libevent frees its request now) and frees r.
 */
void	control_reload_done(struct control_reload *r, int ok,
	    const char *errors);

/*
 * control_open_unix: a listening unix stream socket at path, replacing a
 * stale socket file there, made with permissions mode and, if gid is not
 * (gid_t)-1, that group (as root: set as bind() makes the file, so that
 * nothing is done by path to a file someone could swap in after). Returns
 * the descriptor, or -1 with errno set (after logging why).
 */
int	control_open_unix(const char *path, mode_t mode, gid_t gid);

/* control_open_tcp: a listening TCP socket at a; -1 with errno set. */
int	control_open_tcp(const struct addr *a);

/* How many HTTP connections each listener may have open at once. */
struct control_limits {
	unsigned	control_clients;	/* the unix socket */
	unsigned	metrics_clients;	/* metrics-listen */
};

/*
 * control_new: serve the control API on unix_fd and /metrics on tcp_fd
 * (either may be -1) in base; the descriptors pass to the control. A
 * request's line and headers may take 8 KiB, its body 4 KiB (beyond:
 * an error, and the connection closed); connections beyond lim's (read
 * now) are refused. report is copied; reload is called with arg. Returns
 * NULL on error.
 */
struct control *control_new(struct event_base *base, int unix_fd, int tcp_fd,
	    const struct control_limits *lim, const struct report *report,
	    control_reload_fn reload, void *arg);

/* control_free: close the sockets and connections. NULL is allowed. */
void	control_free(struct control *c);

#endif
