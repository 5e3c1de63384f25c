/*
 * fuzz_control.c: libFuzzer target of the control socket: the input is
 * what a local client writes to the control socket (one or more HTTP/1.1
 * requests, or anything else), sent over a real unix socket to the
 * control of a worker with the query path's configuration and a filled
 * cache, on a real event loop; the client reads every answer until the
 * daemon closes the connection. POST /reload succeeds, fails with an
 * error that needs quoting, or is answered at the loop's next turn, in
 * turn. An input that leaves the connection open
 * for 2 s after the client stopped writing aborts (a stuck connection).
 */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clock.h"
#include "control.h"
#include "fuzzworld.h"
#include "lkg.h"
#include "localbuild.h"
#include "parse.h"
#include "snapshot.h"
#include "report.h"
#include "upstream.h"
#include "worker.h"
#include "zone.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INPUT_MAX	(64 * 1024)

/*
 * The daemon all inputs talk to, made once (libFuzzer's entry points
 * have no argument to pass it in), and the client of the input being
 * run.
 */
static struct {
	struct fuzzworld	 w;
	struct upstream_registry *reg;
	struct worker_shared	 sh;
	struct worker		*worker;
	struct control		*control;
	struct sockaddr_un	 sun;
	unsigned		 reloads;
} d;

struct fuzz_peer {
	int		 fd;
	const uint8_t	*data;
	size_t		 left;		/* not written yet */
	int		 done;		/* read EOF or an error */
	int		 stuck;		/* the watchdog fired */
};

static void
reload_later(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	control_reload_done(arg, 1, NULL);
}

/* Done at once, refused at once, or done at the loop's next turn (as a
 * reload built off the loop is, the client perhaps gone by then). */
static void
reload(void *arg, struct control_reload *r)
{
	static const struct timeval now = { 0, 0 };

	(void)arg;
	switch (d.reloads++ % 3) {
	case 0:
		control_reload_done(r, 1, NULL);
		break;
	case 1:
		control_reload_done(r, 0,
		    "x.conf:1: \"quoted\" \\ and\ttab\n");
		break;
	default:
		ck_assert(event_base_once(d.w.ctx.base, -1, EV_TIMEOUT,
		    reload_later, r, &now) == 0);
		break;
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct control_limits lim = { 16, 16 };
	struct localzone_table *local;
	struct zone_table *zones;
	struct snapshot *snap;
	struct config conf;
	struct report r;
	char path[128];
	int fd;

	(void)argc;
	(void)argv;
	fuzzworld_init(&d.w, FUZZWORLD_CONF);
	fuzzworld_seed_cache(&d.w, clock_now_ms());
	ck_assert_ptr_nonnull(d.reg = upstream_registry_new(
	    d.w.conf.upstream_timeout_min, d.w.conf.upstream_timeout_max));
	/* The worker's own configuration, as main makes a snapshot of it. */
	fuzzworld_path(&d.w, "dnsdamper.conf", path, sizeof(path));
	ck_assert_int_eq(parse_load(path, &conf, stderr), 0);
	ck_assert_ptr_nonnull(zones = zone_table_new(d.reg, &conf));
	ck_assert_ptr_nonnull(local = localbuild_table(&conf));
	ck_assert_ptr_nonnull(snap = snapshot_new(&conf, zones, local));
	d.sh.cache = d.w.ctx.cache;
	/* /lkg and /lkg/release reach the same state the workers use */
	ck_assert_ptr_nonnull(d.sh.lkg = lkg_new(0));
	d.sh.ratelimit = d.w.rl;
	ck_assert_ptr_nonnull(d.worker = worker_new(d.w.ctx.base, 0, &d.sh,
	    snap, NULL, 0));
	snapshot_unref(snap);		/* the worker's reference stays */
	d.sun.sun_family = AF_UNIX;
	fuzzworld_path(&d.w, "control", d.sun.sun_path,
	    sizeof(d.sun.sun_path));
	ck_assert((fd = control_open_unix(d.sun.sun_path, 0600,
	    (gid_t)-1)) != -1);
	/* No monitor: GET /monitor's filters are parsed, then it is 503. */
	memset(&r, 0, sizeof(r));
	r.workers = &d.worker;
	r.n_workers = 1;
	r.cache = d.w.ctx.cache;
	r.lkg = d.sh.lkg;
	r.upstreams = d.reg;
	r.start_time = 1700000000;
	ck_assert_ptr_nonnull(d.control = control_new(d.w.ctx.base, fd, -1,
	    &lim, &r, reload, NULL));
	return 0;
}

/* The client's side: write what is left of the input, read everything. */
static void
peer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fuzz_peer *p = arg;
	uint8_t buf[16384];
	ssize_t n;

	if (what & EV_TIMEOUT) {
		p->stuck = 1;
		return;
	}
	if ((what & EV_WRITE) && p->left > 0) {
		if ((n = write(fd, p->data, p->left)) > 0) {
			p->data += n;
			p->left -= (size_t)n;
		} else if (n == -1 && errno != EAGAIN)
			p->left = 0;	/* the daemon closed: done writing */
		if (p->left == 0)
			(void)shutdown(fd, SHUT_WR);
	}
	if (what & EV_READ) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n == 0 || (n == -1 && errno != EAGAIN))
			p->done = 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct timeval two = { 2, 0 };
	struct fuzz_peer p = { -1, data, size, 0, 0 };
	struct event *ev, *watchdog;
	int i;

	if (size > INPUT_MAX)
		return 0;
	ck_assert((p.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) !=
	    -1);
	ck_assert(connect(p.fd, (struct sockaddr *)&d.sun, sizeof(d.sun)) ==
	    0);
	if (size == 0)
		(void)shutdown(p.fd, SHUT_WR);
	ck_assert_ptr_nonnull(ev = event_new(d.w.ctx.base, p.fd,
	    EV_READ | EV_WRITE | EV_PERSIST, peer_cb, &p));
	ck_assert_ptr_nonnull(watchdog = evtimer_new(d.w.ctx.base, peer_cb,
	    &p));
	ck_assert_int_eq(event_add(ev, NULL), 0);
	while (!p.done && !p.stuck) {
		if (p.left == 0 && !event_pending(watchdog, EV_TIMEOUT, NULL))
			ck_assert_int_eq(event_add(watchdog, &two), 0);
		ck_assert(event_base_loop(d.w.ctx.base, EVLOOP_ONCE) != -1);
		if (p.left == 0 && event_pending(ev, EV_WRITE, NULL)) {
			/* only reading from now on */
			event_del(ev);
			event_assign(ev, d.w.ctx.base, p.fd,
			    EV_READ | EV_PERSIST, peer_cb, &p);
			ck_assert_int_eq(event_add(ev, NULL), 0);
		}
	}
	/* A process starved of CPU (a loaded machine, nice 19) can find the
	 * watchdog due together with the events that end the connection:
	 * stuck is what turns of the loop that need not wait do not end. */
	for (i = 0; p.stuck && !p.done && i < 100; i++)
		ck_assert(event_base_loop(d.w.ctx.base, EVLOOP_NONBLOCK) != -1);
	ck_assert_msg(p.done, "the connection is still open 2 s after "
	    "the request");
	event_free(watchdog);
	event_free(ev);
	close(p.fd);
	/* What the daemon does on its side of the close. */
	(void)event_base_loop(d.w.ctx.base, EVLOOP_NONBLOCK);
	fuzzworld_reset_cache(&d.w);
	return 0;
}
