/*
 * control.h: the control socket, a unix stream socket speaking HTTP/1.1
 * (libevent's evhttp), so that `curl --unix-socket` and dnsdamperctl work:
 *   GET  /metrics    Prometheus text exposition 0.0.4
 *   GET  /stats      the same figures as JSON
 *   GET  /upstreams  each upstream's state, RTT, failures (JSON)
 *   GET  /explain?name=N[&type=T]   how N would be answered now (JSON)
 *   GET  /cache      the cache, one RR per line, streamed slice by slice
 *   GET  /monitor[?name=SUFFIX][&client=ADDR][&rcode=RCODE]   answered
 *                    queries as they happen, one JSON line each (monitor.h)
 *   POST /flush[?name=N[&type=T] | ?zone=Z]   drop cache entries
 *   POST /reload     reread the configuration, as SIGHUP does
 *   GET  /forward    the forward zones, configured and runtime
 *   POST /forward/add?zone=Z&upstream=A[&upstream=B...][&policy=P]
 *                    [&owner=O][&lifetime=D]   a runtime forward zone
 *   POST /forward/remove?zone=Z[&owner=O] | ?owner=O   runtime zones gone
 *   GET  /lkg        last known good: held names and zones (lkgreport.h)
 *   POST /lkg/release?zone=Z   end zone Z's hold (lkg_release)
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

/* What a /forward request asks (the parameters borrowed from the request). */
enum control_forward_op {
	CONTROL_FORWARD_LIST,
	CONTROL_FORWARD_ADD,
	CONTROL_FORWARD_REMOVE
};

#define CONTROL_FORWARD_UPSTREAMS	16	/* upstream= kept at most */

struct control_forward_req {
	enum control_forward_op	 op;
	const char		*zone;		/* NULL: not given */
	const char		*policy;
	const char		*owner;
	const char		*lifetime;
	const char		*upstreams[CONTROL_FORWARD_UPSTREAMS];
	size_t			 n_upstreams;	/* given; may be more than
						 * those kept */
	const char		*unknown;	/* a parameter not of op's */
	int			 text;		/* ?format=text */
};

/*
 * Carries out a /forward request: the body of the reply appended to out,
 * JSON or (req->text) text; returns the HTTP status (200, or 4xx with the
 * reason in out).
 */
typedef int (*control_forward_fn)(void *arg,
	    const struct control_forward_req *req, struct evbuffer *out);

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

/*
 * control_set_forward: serve /forward through fn (with arg); the changes
 * (POST) only for a peer (SO_PEERCRED, SO_PEERGROUPS) that is root, our
 * own user, or of group (the control socket's group: primary or
 * supplementary); any other gets 403.
 */
void	control_set_forward(struct control *c, control_forward_fn fn,
	    void *arg, gid_t group);

/* control_free: close the sockets and connections. NULL is allowed. */
void	control_free(struct control *c);

#endif
