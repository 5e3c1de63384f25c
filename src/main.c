/* main.c: command line, start-up order, signals, reload and shutdown. */
#include "autoconf.h"

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "cache.h"
#include "cachefile.h"
#include "clock.h"
#include "config.h"
#include "control.h"
#include "dnstap.h"
#include "inflight.h"
#include "lkg.h"
#include "listen.h"
#include "localbuild.h"
#include "localzone.h"
#include "log.h"
#include "monitor.h"
#include "parse.h"
#include "printconf.h"
#include "priv.h"
#include "ratelimit.h"
#include "rebuild.h"
#include "report.h"
#include "runforward.h"
#include "restore.h"
#include "snapshot.h"
#include "systemd.h"
#include "upstream.h"
#include "worker.h"
#include "zone.h"

#define DEFAULT_CONFIG	SYSCONFDIR "/dnsdamper/dnsdamper.conf"
#define STATUS_SEC	5		/* STATUS= refresh under systemd */
/*
 * How often the hosts files are looked at (one stat(2) each): an edit is
 * served within this. No jitter is needed: nothing goes on the network.
 */
#define HOSTS_CHECK_SEC	1
/* Workers when `threads 0`: one per CPU we may run on, at most this many. */
#define THREADS_AUTO_MAX	4
/*
 * How long main waits for every worker to serve a new snapshot before a
 * reload says it is done: a loop turns in microseconds; one that takes
 * longer is busy with a burst, and takes the snapshot after it. Main's
 * loop answers meanwhile: it looks again every SERVE_POLL_MS.
 */
#define SERVE_WAIT_MS	2000
#define SERVE_POLL_MS	1
/*
 * A worker whose 1 s tick is this late is stuck: the watchdog is pinged
 * no more, and the service manager restarts us.
 */
#define WORKER_LATE_MS	3000

/* A POST /reload waiting for a build. */
struct reload_waiter {
	TAILQ_ENTRY(reload_waiter) entry;
	struct control_reload	*r;
};
TAILQ_HEAD(reload_waiters, reload_waiter);

struct daemon {
	const char		*config_given;	/* -c, or NULL */
	const char		*config_path;	/* NULL: defaults only */
	struct config		 conf;		/* until start moves it into
						 * snap */
	struct snapshot		*snap;		/* what the workers serve */
	struct cache		*cache;
	struct upstream_registry *upstreams;
	struct worker_shared	 shared;	/* the workers' */
	struct listen_set	 listeners;
	int			 control_fd;	/* until control_new */
	int			 metrics_fd;
	char			*control_path;	/* to remove at exit */
	char			*cache_file;	/* as at start, or NULL */
	struct restore		*restore;	/* its reading, or NULL */
	int			 started;	/* serving: worth a cache file */
	struct event_base	*base;		/* main's, and worker 0's */
	struct worker		**workers;
	unsigned		 n_workers;
	struct control		*control;
	gid_t			 control_gid;	/* the control socket's */
	struct runforward	*runforward;	/* runtime forward zones */
	struct event		*events[7];	/* signals and timers */
	/*
	 * Reloads and hosts files are built off the loop (rebuild.h), one
	 * at a time; what it made is published in the loop, and the build
	 * is over once every worker serves it (settling).
	 */
	struct rebuild		*rebuild;
	int			 reload_asked;	/* a reload to build next */
	struct reload_waiters	 asked;		/* POST /reload of that one */
	struct reload_waiters	 building;	/* of the build running */
	int			 building_reload; /* it is a reload */
	struct event		*settle_ev;	/* polls the workers */
	int			 settling;	/* published, not served yet */
	uint64_t		 settle_start;	/* ms */
	struct snapshot		*retiring;	/* the one replaced */
	struct zone_table	*flush_old;	/* a reload's routes before it:
						 * flushed once settled */
	struct log_limit	 late_log;	/* a stuck worker, said */
	int64_t			 start_time;	/* Unix seconds */
};

static void __attribute__((noreturn))
usage(FILE *out, int status)
{
	fprintf(out, "usage: dnsdamper [-htVv] [-c file]\n");
	exit(status);
}

/* Without -c: the default file if it exists (now), else the defaults. */
static const char *
config_path(const char *given)
{
	if (given != NULL)
		return given;
	return access(DEFAULT_CONFIG, F_OK) == 0 ? DEFAULT_CONFIG : NULL;
}

static void
cache_limits_of(const struct config *conf, struct cache_limits *lim)
{
	lim->min_ttl = conf->min_ttl;
	lim->max_ttl = conf->max_ttl;
	lim->max_negative_ttl = conf->max_negative_ttl;
	lim->failure_ttl = conf->failure_ttl;
	lim->stale_max_age = conf->serve_stale ? conf->stale_max_age : 0;
	lim->stale_answer_ttl = conf->stale_answer_ttl;
	lim->stale_refresh_interval = conf->stale_refresh_interval;
}

static int
configured(const char *value)
{
	return strcmp(value, CONFIG_NONE) != 0;
}

/*
 * The workers to run for `threads n`: n, or for 0 one per CPU we may run
 * on, at most THREADS_AUTO_MAX (more rarely pays on a host whose DNS is
 * local). The CPUs of our affinity (taskset, a cgroup's cpuset), not all
 * those online: two threads on one CPU cost more per query than one, in
 * smaller batches and context switches.
 */
static unsigned
threads_of(const struct config *conf)
{
	cpu_set_t set;
	long cpus;

	if (conf->threads > 0)
		return conf->threads;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		cpus = CPU_COUNT(&set);
	else
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : cpus > THREADS_AUTO_MAX ? THREADS_AUTO_MAX :
	    (unsigned)cpus;
}

/* One line per listen address: its halves, and its sockets. */
static void
log_listeners(const struct daemon *d)
{
	const struct listen_set *set = &d->listeners;
	char addr[ADDR_STRLEN], socks[64] = "";
	size_t i, j, n;
	int udp, tcp;

	for (i = 0; i < set->n; i++) {
		for (j = 0; j < i; j++)
			if (addr_equal(&set->socks[j].addr,
			    &set->socks[i].addr))
				break;
		if (j < i)
			continue;	/* said with its first */
		udp = tcp = 0;
		for (j = i; j < set->n; j++)
			if (addr_equal(&set->socks[j].addr,
			    &set->socks[i].addr)) {
				udp |= set->socks[j].udp_fd != -1;
				tcp |= set->socks[j].tcp_fd != -1;
			}
		n = listen_count(set, &set->socks[i].addr);
		/* A socket unit's are shared by every worker. */
		if (d->n_workers > 1 && !set->activated)
			snprintf(socks, sizeof(socks), " (%zu socket%s for %u "
			    "workers)", n, n > 1 ? "s" : "", d->n_workers);
		log_info("listening on %s%s%s%s%s",
		    addr_format(&set->socks[i].addr, addr, sizeof(addr)),
		    udp ? ", UDP" : "", tcp ? ", TCP" : "", socks,
		    set->activated ? " (socket activation)" : "");
	}
}

/* What is being served, for the log: where from, where, and to whom. */
static void
log_serving(const struct daemon *d)
{
	const struct zone *z;
	char ups[512];
	size_t i, j, o;

	log_info("configuration: %s", d->config_path != NULL ?
	    d->config_path : "none, built-in defaults");
	for (i = 0; i < zone_count(d->snap->zones); i++) {
		z = zone_at(d->snap->zones, i);
		for (j = 0, o = 0; j < z->n_upstreams && o < sizeof(ups); j++)
			o += (size_t)snprintf(ups + o, sizeof(ups) - o, "%s%s",
			    j > 0 ? " " : "", z->upstreams[j]->name);
		log_info("forward %s to %s (policy %s)", z->name_str,
		    z->n_upstreams > 0 ? ups : "nothing",
		    config_policy_name(z->policy));
	}
	log_info("local answers: %zu names from hosts-file and local-data",
	    localzone_table_names(d->snap->local));
	log_listeners(d);
}

struct routing {
	struct zone_table	*old;
	struct zone_table	*new;
};

/* An entry stays if its question is forwarded as before: same zone, same
 * upstreams. */
static int
routing_unchanged(const uint8_t *qname, size_t len, uint16_t qtype,
    void *arg)
{
	const struct routing *r = arg;

	return zone_route_kept(r->new, r->old, zone_find(r->old, qname, len,
	    qtype), qname, len, qtype);
}

static void
choose_log(const struct config *conf)
{
	if (conf->log == CONFIG_LOG_SYSLOG)
		log_set_sink(log_sink_syslog);
	else if (systemd_journal_attached())
		log_set_sink(systemd_journal_sink);
	else
		log_set_sink(log_sink_stderr);
}

/* Restart-only settings that changed are said so, not silently ignored:
 * conf is the new one, old the running one. */
static void
warn_restart_only(const struct daemon *d, const struct config *conf,
    const struct config *old)
{
	if (!listen_same(conf, &d->listeners) && !d->listeners.activated)
		log_warnx("listen addresses changed: they take effect at "
		    "restart");
	if (conf->cache_size != old->cache_size)
		log_warnx("cache-size changed: it takes effect at restart");
	if (conf->threads != old->threads)
		log_warnx("threads changed: it takes effect at restart");
	if (strcmp(conf->control, old->control) != 0 ||
	    conf->control_mode != old->control_mode ||
	    strcmp(conf->control_group, old->control_group) != 0 ||
	    conf->control_clients != old->control_clients ||
	    strcmp(conf->metrics_listen_str, old->metrics_listen_str) != 0 ||
	    conf->metrics_clients != old->metrics_clients ||
	    strcmp(conf->cache_file, old->cache_file) != 0 ||
	    strcmp(conf->user, old->user) != 0)
		log_warnx("control, control-mode, control-group, "
		    "control-clients, metrics-listen, metrics-clients, "
		    "cache-file and user take effect at restart");
}

/* The reload's POST /reload waiters answered: ok, or not with errors. */
static void
answer_waiters(struct reload_waiters *list, int ok, const char *errors)
{
	struct reload_waiter *rw;

	while ((rw = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, rw, entry);
		control_reload_done(rw->r, ok, errors);
		free(rw);
	}
}

static void	next_build(struct daemon *);

/*
 * The snapshot replaced is freed (what it held, such as the upstreams a
 * reload removed, is gone from every report): the reload or the hosts
 * file change is done.
 */
static void
settle_end(void *arg)
{
	struct daemon *d = arg;

	d->settling = 0;
	if (d->building_reload) {
		choose_log(d->snap->conf);
		log_serving(d);
		log_info("reloaded");
		systemd_ready("reloaded");
		answer_waiters(&d->building, 1, NULL);
	} else
		log_info("hosts-file changed: %zu local names now",
		    localzone_table_names(d->snap->local));
	next_build(d);
}

/* Whether every worker serves d->snap; said for each late one at the
 * deadline (late 1), as it will after what it is busy with. */
static int
all_served(const struct daemon *d, int late)
{
	unsigned i;
	int all = 1;

	for (i = 0; i < d->n_workers; i++)
		if (worker_wait_served(d->workers[i], 0) == -1) {
			all = 0;
			if (late)
				log_warnx("worker %u has not taken the new "
				    "configuration within %u ms: it will after "
				    "what it is busy with", i, SERVE_WAIT_MS);
		}
	return all;
}

/*
 * A reload's cached names whose forwarding changed, flushed once every
 * worker serves the new routes: until it swapped, a worker stored what it
 * resolved under the old ones; after, it stores nothing whose route
 * changed while it was fetched (query_fetch_done).
 */
static void
flush_rerouted(struct daemon *d)
{
	struct routing routing;
	uint64_t flushed;

	routing.old = d->flush_old;
	routing.new = d->snap->zones;
	flushed = cache_flush_if(d->cache, routing_unchanged, &routing);
	zone_table_unref(d->flush_old);
	d->flush_old = NULL;
	if (flushed > 0)
		log_info("flushed %llu cached entries whose forwarding changed",
		    (unsigned long long)flushed);
}

static void
settle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct timeval tv = clock_ms_to_tv(SERVE_POLL_MS);
	struct daemon *d = arg;
	struct snapshot *snap;
	int late;

	(void)fd;
	(void)what;
	late = clock_now_ms() - d->settle_start >= SERVE_WAIT_MS;
	if (!all_served(d, late) && !late) {
		event_add(d->settle_ev, &tv);
		return;
	}
	if (d->flush_old != NULL)
		flush_rerouted(d);
	/* Every worker serves the new one (or one is late): the one it
	 * replaced is freed on the builder's thread (a table of 100,000
	 * names takes milliseconds to free), settle_end after. */
	snap = d->retiring;
	d->retiring = NULL;
	rebuild_release(d->rebuild, snap, settle_end, d);
}

/*
 * Every worker serves snap (a reference taken over) from now on, main too
 * (worker 0 at once, on this loop); settle_end follows once each has
 * taken it, without holding up this loop meanwhile.
 */
static void
publish(struct daemon *d, struct snapshot *snap)
{
	unsigned i;

	d->retiring = d->snap;
	d->snap = snap;
	d->settling = 1;
	d->settle_start = clock_now_ms();
	for (i = 0; i < d->n_workers; i++)
		worker_serve(d->workers[i], snap);
	settle_cb(-1, 0, d);
}

/* The shared rate limit table sized as conf says (a reload); its rate
 * and slip are each worker's, from the snapshot it serves with. */
static void
ratelimit_reconfigure(const struct daemon *d, const struct config *conf)
{
	if (ratelimit_resize(d->shared.ratelimit, conf->ratelimit_size) == -1)
		log_warnx("ratelimit-size %u: out of memory; keeping the "
		    "previous table", conf->ratelimit_size);
}

/* A reload that failed: the daemon keeps serving with what it had. */
static void
reload_failed(struct daemon *d, const char *errors)
{
	log_errx("reload failed; still running the previous configuration");
	systemd_ready("reload failed; running the previous configuration");
	answer_waiters(&d->building, 0, errors);
	next_build(d);
}

/*
 * A reload's build is back: the configuration was parsed completely and
 * its local zones built before the running one is touched; on any error
 * the daemon keeps serving with what it had, cache included. Cached
 * names whose forwarding changed are flushed.
 */
static void
reload_built(struct daemon *d, struct rebuild_result *r)
{
	const struct config *conf;
	struct cache_limits lim;
	struct zone_table *zones;
	struct snapshot *snap;
	struct evbuffer *errors;
	char *text;

	if (r->rc == -1) {
		reload_failed(d, r->errors);
		return;
	}
	/* Runtime zones go over the new configuration, or it is refused. */
	if ((errors = evbuffer_new()) == NULL) {
		log_err("reload");
		reload_failed(d, "out of memory");
		return;
	}
	if ((zones = runforward_zones(d->runforward, &r->conf, errors, 1)) ==
	    NULL) {
		if (errno != EINVAL)
			log_err("reload");
		evbuffer_add(errors, "", 1);
		text = (char *)evbuffer_pullup(errors, -1);
		reload_failed(d, errno == EINVAL && text != NULL ? text :
		    "out of memory");
		evbuffer_free(errors);
		return;
	}
	evbuffer_free(errors);
	snap = snapshot_new(&r->conf, zones, r->local);
	r->local = NULL;		/* moved into snap, or freed */
	if (snap == NULL) {
		log_err("reload");
		reload_failed(d, "out of memory");
		return;
	}
	/* A new output: a file is opened anew (rotation). */
	snapshot_set_tap(snap, dnstap_new(snap->conf, d->n_workers));
	conf = snap->conf;
	warn_restart_only(d, conf, d->snap->conf);
	/* What it would still restore is checked against the old zones, and
	 * the flush at settle_cb would miss it: the rest of the file is given
	 * up (and at stop the cache is written as usual). */
	if (!restore_stop(d->restore))
		log_info("cache-file %s: the rest of it is not restored: "
		    "reloaded while it was read", d->cache_file);
	cache_limits_of(conf, &lim);
	cache_set_limits(d->cache, &lim);
	upstream_reconfigure(d->upstreams, conf->upstream_timeout_min,
	    conf->upstream_timeout_max);
	upstream_budget_set(d->upstreams, conf->retry_budget,
	    conf->retry_budget_min);
	ratelimit_reconfigure(d, conf);
	d->flush_old = zone_table_ref(d->snap->zones);
	publish(d, snap);
}

/* A hosts file's build is back: served with the same configuration. */
static void
hosts_built(struct daemon *d, struct rebuild_result *r)
{
	struct snapshot *snap;

	/* Built from what is still served (builds come one at a time). */
	if (r->rc == -1 || r->snap != d->snap ||
	    (snap = snapshot_with_local(d->snap, r->local)) == NULL) {
		r->local = NULL;
		log_warn("hosts-file changed, but cannot be read again; "
		    "serving it as it was");
		next_build(d);
		return;
	}
	r->local = NULL;		/* moved into snap */
	publish(d, snap);
}

/* rebuild's done: in main's loop. */
static void
build_done(void *arg, struct rebuild_result *r)
{
	struct daemon *d = arg;

	if (r->reload)
		reload_built(d, r);
	else
		hosts_built(d, r);
	rebuild_result_free(r);
}

/*
 * The reload asked for, if any, started now unless a build is running
 * or settling (it is started when that one ends): the file is read after
 * the request, so that a POST /reload gets the file as it was then.
 */
static void
next_build(struct daemon *d)
{
	if (!d->reload_asked || d->settling || rebuild_busy(d->rebuild))
		return;
	d->reload_asked = 0;
	TAILQ_CONCAT(&d->building, &d->asked, entry);
	d->building_reload = 1;
	systemd_reloading();
	d->config_path = config_path(d->config_given);
	log_info("reloading %s", d->config_path ? d->config_path :
	    "the built-in defaults");
	if (rebuild_reload(d->rebuild, d->config_path) == -1) {
		log_err("reload");
		reload_failed(d, "out of memory");
	}
}

/* A reload asked for by SIGHUP (r NULL) or POST /reload (r). */
static void
reload_ask(struct daemon *d, struct control_reload *r)
{
	struct reload_waiter *rw;

	if (r != NULL) {
		if ((rw = malloc(sizeof(*rw))) == NULL) {
			control_reload_done(r, 0, "out of memory");
			return;
		}
		rw->r = r;
		TAILQ_INSERT_TAIL(&d->asked, rw, entry);
	}
	d->reload_asked = 1;
	next_build(d);
}

static void
control_reload(void *arg, struct control_reload *r)
{
	reload_ask(arg, r);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	if (sig == SIGHUP) {
		reload_ask(d, NULL);
		return;
	}
	log_info("exiting on signal %d", (int)sig);
	event_base_loopexit(d->base, NULL);
}

/* A one-line summary for systemd's STATUS=. */
static void
status_line(const struct daemon *d, char *buf, size_t len)
{
	const struct zone *z, *degraded = NULL;
	struct zone_table *zones = d->snap->zones;
	uint64_t hits = 0, asked = 0;
	size_t i, j, up = 0, all = 0;
	const struct metrics *m;
	struct restore_state rs;
	size_t o;

	for (i = 0; i < d->n_workers; i++) {
		m = &worker_context(d->workers[i])->metrics;
		hits += metrics_read(&m->cache_hits);
		asked += metrics_read(&m->cache_hits) +
		    metrics_read(&m->cache_misses);
	}
	for (i = 0; i < zone_count(zones); i++) {
		z = zone_at(zones, i);
		for (j = 0; j < z->n_upstreams; j++) {
			all++;
			up += upstream_up(z->upstreams[j]);
		}
		if (degraded == NULL &&
		    upstream_all_down(z->upstreams, z->n_upstreams))
			degraded = z;
	}
	o = (size_t)snprintf(buf, len, "%s%s%s%llu queries, %.1f%% from cache, "
	    "%zu/%zu upstreams up", degraded != NULL ?
	    "degraded: every upstream of " : "", degraded != NULL ?
	    degraded->name_str : "", degraded != NULL ?
	    " is down, serving stale; " : "", (unsigned long long)asked,
	    asked > 0 ? 100.0 * (double)hits / (double)asked : 0.0, up, all);
	restore_state(d->restore, &rs);
	if (!rs.done && o < len)
		snprintf(buf + o, len - o, "; restoring the cache file: %llu "
		    "of %llu entries", (unsigned long long)rs.entries,
		    (unsigned long long)rs.total);
}

static void
status_cb(evutil_socket_t fd, short what, void *arg)
{
	char buf[256];

	(void)fd;
	(void)what;
	status_line(arg, buf, sizeof(buf));
	systemd_status(buf);
}

/*
 * A hosts file changed: the local answers are built again from it, off
 * the loop. Not while another build runs or a reload waits: that one
 * reads the hosts files too, or the next look sees the change.
 */
static void
hosts_check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	if (d->reload_asked || d->settling || rebuild_busy(d->rebuild) ||
	    !localzone_table_changed(d->snap->local))
		return;
	d->building_reload = 0;
	if (rebuild_hosts(d->rebuild, d->snap) == -1)
		log_warn("hosts-file changed, but cannot be read again; "
		    "serving it as it was");
}

/* Runtime forward zones whose lifetime ran out are removed. */
static void
forward_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	runforward_tick(d->runforward, clock_now_ms());
}

/* What the workers serve now, for runforward. */
static struct snapshot *
current_snapshot(void *arg)
{
	struct daemon *d = arg;

	return d->snap;
}

/*
 * A runtime forward zone's change, published and waited for here:
 * runforward flushes what it rerouted as soon as this returns, and a
 * worker still on the old routes would store under them after that flush.
 * Each worker takes a snapshot within microseconds unless busy;
 * SERVE_WAIT_MS bounds the wait. A reload settling meanwhile ends once
 * every worker serves this one.
 */
static void
publish_snapshot(void *arg, struct snapshot *snap)
{
	struct daemon *d = arg;
	struct snapshot *old = d->snap;
	unsigned i;

	d->snap = snap;
	for (i = 0; i < d->n_workers; i++)
		worker_serve(d->workers[i], snap);
	for (i = 0; i < d->n_workers; i++)
		if (worker_wait_served(d->workers[i], SERVE_WAIT_MS) == -1)
			log_warnx("worker %u has not taken the new forward "
			    "zones within %u ms: it will after what it is busy "
			    "with", i, SERVE_WAIT_MS);
	snapshot_unref(old);
}

/*
 * Pinged from main's loop, and only while every worker's loop ticks: a
 * stuck loop, main's or a worker's, gets us restarted.
 */
static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	uint64_t now = clock_now_ms(), beat, held;
	unsigned i;

	(void)fd;
	(void)what;
	for (i = 0; i < d->n_workers; i++) {
		beat = worker_heartbeat(d->workers[i]);
		if (now > beat && now - beat > WORKER_LATE_MS) {
			if (log_limit_due(&d->late_log, now, 60000, &held))
				log_errx("worker %u has not run its loop for "
				    "%llu ms: not telling the watchdog we "
				    "are alive", i,
				    (unsigned long long)(now - beat));
			return;
		}
	}
	systemd_watchdog();
}

/* One descriptor per upstream attempt: take all the kernel allows. */
static void
raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * A socket unit may listen beyond loopback, which no config check could
 * see: allow alone then says who is answered, and here that it is no one
 * beyond loopback.
 */
static void
warn_activated_beyond_loopback(const struct daemon *d)
{
	const struct listen_set *set = &d->listeners;
	char buf[ADDR_STRLEN];
	size_t i;

	for (i = 0; set->activated && !d->conf.allow.acl.beyond_loopback &&
	    i < set->n; i++)
		if (!addr_is_loopback(&set->socks[i].addr))
			log_warnx("socket activation: %s is not a loopback "
			    "address, but no \"allow\" line admits a client "
			    "beyond loopback: only loopback clients are "
			    "answered", addr_format(&set->socks[i].addr, buf,
			    sizeof(buf)));
}

/* The listening sockets: passed in by systemd, or bound here. */
static int
open_listeners(struct daemon *d)
{
	char **names;
	int *fds, n;

	if ((n = systemd_listen_fds(&fds, &names)) < 0)
		return -1;
	if (listen_open(&d->conf, d->n_workers, fds, names, n,
	    &d->listeners) == -1) {
		systemd_listen_free(fds, names, n);
		return -1;
	}
	systemd_listen_free(fds, names, n);
	if (d->listeners.n == 0) {
		log_errx("no address to listen on");
		return -1;
	}
	warn_activated_beyond_loopback(d);
	return 0;
}

/*
 * Everything that may need root, in order, then root given up: listening
 * sockets, the control socket (a failure there is only a warning: DNS is
 * what matters), metrics-listen, the cache file's directory.
 */
static int
open_privileged(struct daemon *d, struct priv_user *u)
{
	const struct config *conf = &d->conf;
	struct stat st;
	gid_t gid;

	if (priv_lookup(conf->user, u, LOG_LEVEL_ERR) == -1 ||
	    open_listeners(d) == -1)
		return -1;
	if (configured(conf->control) &&
	    priv_prepare_dir(conf->control, u) == 0 &&
	    priv_group(conf->control_group, &gid) == 0 &&
	    (d->control_fd = control_open_unix(conf->control,
	    conf->control_mode, gid)) != -1) {
		if ((d->control_path = strdup(conf->control)) == NULL)
			return -1;
		/* Whoever may change forwarding: the socket file's group. */
		d->control_gid = stat(conf->control, &st) == 0 ? st.st_gid :
		    (gid_t)-1;
	} else if (configured(conf->control))
		log_warnx("running without the control socket");
	if (conf->metrics_listen.len > 0 &&
	    (d->metrics_fd = control_open_tcp(&conf->metrics_listen)) == -1)
		return -1;
	if (configured(conf->cache_file) &&
	    priv_prepare_dir(conf->cache_file, u) == 0 &&
	    (d->cache_file = strdup(conf->cache_file)) == NULL)
		return -1;
	priv_drop(u);
	return 0;
}

static int
start_events(struct daemon *d)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	struct timeval tv = { STATUS_SEC, 0 }, hosts = { HOSTS_CHECK_SEC, 0 };
	uint64_t wd = systemd_watchdog_ms();
	size_t i;

	for (i = 0; i < 3; i++)
		if ((d->events[i] = evsignal_new(d->base, sigs[i], signal_cb,
		    d)) == NULL || evsignal_add(d->events[i], NULL) == -1)
			return -1;
	if (getenv("NOTIFY_SOCKET") != NULL &&
	    ((d->events[3] = event_new(d->base, -1, EV_PERSIST, status_cb,
	    d)) == NULL || event_add(d->events[3], &tv) == -1))
		return -1;
	if ((d->events[5] = event_new(d->base, -1, EV_PERSIST, hosts_check_cb,
	    d)) == NULL || event_add(d->events[5], &hosts) == -1)
		return -1;
	/* Lifetimes are whole seconds: a second's tick ends them on time. */
	if ((d->events[6] = event_new(d->base, -1, EV_PERSIST,
	    forward_tick_cb, d)) == NULL || event_add(d->events[6],
	    &hosts) == -1)
		return -1;
	if ((d->settle_ev = event_new(d->base, -1, 0, settle_cb, d)) == NULL ||
	    (d->rebuild = rebuild_new(d->base, build_done, d)) == NULL)
		return -1;
	/* Pinged from the loop itself: a stuck loop gets us killed. */
	if (wd > 0) {
		tv = clock_ms_to_tv(wd / 2);
		if ((d->events[4] = event_new(d->base, -1, EV_PERSIST,
		    watchdog_cb, d)) == NULL ||
		    event_add(d->events[4], &tv) == -1)
			return -1;
	}
	return 0;
}

/*
 * The shared state and what the workers first serve: the cache, the
 * upstreams, the snapshot (d->conf moved into it), the rate limit table,
 * with several workers the in-flight index. -1 (logged) on error.
 */
static int
start_shared(struct daemon *d)
{
	struct localzone_table *local = NULL;
	struct zone_table *zones = NULL;
	struct cache_limits lim;

	cache_limits_of(&d->conf, &lim);
	if ((d->cache = cache_new(d->conf.cache_size, &lim)) == NULL ||
	    (d->shared.lkg = lkg_new(LKG_HELD_MAX)) == NULL ||
	    (d->upstreams = upstream_registry_new(d->conf.upstream_timeout_min,
	    d->conf.upstream_timeout_max)) == NULL ||
	    (d->shared.ratelimit = ratelimit_new(d->conf.ratelimit_size)) ==
	    NULL ||
	    (d->n_workers > 1 &&
	    (d->shared.index = inflight_new(d->n_workers)) == NULL) ||
	    (d->runforward = runforward_new(d->upstreams, d->cache,
	    d->cache_file, current_snapshot, publish_snapshot, d)) == NULL) {
		log_err("start-up");
		return -1;
	}
	/* Before the cache file: its entries of runtime zones stay. */
	runforward_load(d->runforward, clock_now_ms());
	if ((zones = runforward_zones(d->runforward, &d->conf, NULL, 0)) ==
	    NULL || (local = localbuild_table(&d->conf)) == NULL) {
		zone_table_unref(zones);
		log_err("start-up");
		return -1;
	}
	upstream_budget_set(d->upstreams, d->conf.retry_budget,
	    d->conf.retry_budget_min);
	if ((d->snap = snapshot_new(&d->conf, zones, local)) == NULL) {
		log_err("start-up");
		return -1;
	}
	snapshot_set_tap(d->snap, dnstap_new(d->snap->conf, d->n_workers));
	if (d->n_workers > 1)
		upstream_registry_share(d->upstreams);
	d->shared.cache = d->cache;
	return 0;
}

/* The workers, each with its sockets; 0 on main's base. */
static int
start_workers(struct daemon *d)
{
	struct listen_socket *socks;
	unsigned i;
	size_t n;

	if ((d->workers = calloc(d->n_workers, sizeof(*d->workers))) == NULL ||
	    (socks = calloc(d->listeners.n, sizeof(*socks))) == NULL) {
		log_err("start-up");
		return -1;
	}
	for (i = 0; i < d->n_workers; i++) {
		n = listen_of_worker(&d->listeners, i, socks);
		if ((d->workers[i] = worker_new(i == 0 ? d->base : NULL, i,
		    &d->shared, d->snap, socks, n)) == NULL)
			break;
	}
	free(socks);
	return i == d->n_workers ? 0 : -1;
}

static int
start(struct daemon *d)
{
	struct control_limits clim;
	struct priv_user u;
	struct report report;
	char status[256];
	unsigned i;

	raise_fd_limit();
	choose_log(&d->conf);
	d->start_time = clock_wall_s();
	d->n_workers = threads_of(&d->conf);
	if (open_privileged(d, &u) == -1 || start_shared(d) == -1)
		return -1;
	if ((d->base = event_base_new()) == NULL ||
	    (d->shared.monitor = monitor_new(d->base)) == NULL) {
		log_err("start-up");
		return -1;
	}
	if (start_workers(d) == -1)
		return -1;
	/* Read while the workers answer: a large file must not keep the
	 * adopted sockets waiting (names not yet restored go upstream). */
	if (d->cache_file != NULL)
		d->restore = restore_start(d->cache, d->snap->zones,
		    d->cache_file);
	report.workers = d->workers;
	report.n_workers = d->n_workers;
	report.cache = d->cache;
	report.lkg = d->shared.lkg;
	report.upstreams = d->upstreams;
	report.start_time = d->start_time;
	report.monitor = d->shared.monitor;
	report.restore = d->restore;
	clim.control_clients = d->snap->conf->control_clients;
	clim.metrics_clients = d->snap->conf->metrics_clients;
	if ((d->control_fd != -1 || d->metrics_fd != -1) &&
	    (d->control = control_new(d->base, d->control_fd, d->metrics_fd,
	    &clim, &report, control_reload, d)) == NULL)
		return -1;
	if (d->control != NULL)
		control_set_forward(d->control, runforward_control,
		    d->runforward, d->control_gid);
	d->control_fd = d->metrics_fd = -1;	/* the control owns them */
	if (start_events(d) == -1) {
		log_err("start-up");
		return -1;
	}
	for (i = 0; i < d->n_workers; i++)
		if (worker_start(d->workers[i]) == -1)
			return -1;
	log_serving(d);
	if (d->n_workers > 1)
		log_info("%u worker threads", d->n_workers);
	listen_store(&d->listeners);
	status_line(d, status, sizeof(status));
	systemd_ready(status);
	d->started = 1;
	log_info("started");
	return 0;
}

static void
stop(struct daemon *d)
{
	long n;
	unsigned i;
	int whole;

	/* From here on a signal would only cut the cache file short. */
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	systemd_stopping();
	for (i = 0; i < sizeof(d->events) / sizeof(d->events[0]); i++)
		if (d->events[i] != NULL)
			event_free(d->events[i]);
	/* A reload not yet done is not going to be. */
	answer_waiters(&d->building, 0, "shutting down");
	answer_waiters(&d->asked, 0, "shutting down");
	control_free(d->control);
	if (d->settle_ev != NULL)
		event_free(d->settle_ev);
	rebuild_free(d->rebuild);
	snapshot_unref(d->retiring);
	zone_table_unref(d->flush_old);
	/* Every thread out of its loop before any worker is freed. */
	for (i = 0; d->workers != NULL && i < d->n_workers; i++)
		if (d->workers[i] != NULL)
			worker_stop(d->workers[i]);
	for (i = 0; d->workers != NULL && i < d->n_workers; i++)
		worker_free(d->workers[i]);
	free(d->workers);
	if (d->runforward != NULL)
		runforward_save(d->runforward);
	/* No worker posts, no watcher is left (control_free closed them). */
	monitor_free(d->shared.monitor);
	/*
	 * Stopped while the file was still being read: the cache lacks its
	 * unread rest, which is worth more than what this short run fetched,
	 * so the file stays as it is (its ages move on by the wall clock).
	 */
	if (!(whole = restore_stop(d->restore)))
		log_info("cache-file %s: not written: stopped before it was "
		    "read whole; the file is kept", d->cache_file);
	restore_free(d->restore);
	/* Only a cache that served replaces the file of the last run. */
	if (d->started && whole && d->cache_file != NULL &&
	    (n = cachefile_write(d->cache, d->snap->zones, d->cache_file,
	    clock_now_ms())) >= 0)
		log_info("cache-file %s: %ld entries saved", d->cache_file, n);
	free(d->cache_file);
	if (d->control_path != NULL)
		(void)unlink(d->control_path);
	free(d->control_path);
	if (d->control_fd != -1)
		close(d->control_fd);
	if (d->metrics_fd != -1)
		close(d->metrics_fd);
	snapshot_unref(d->snap);
	runforward_free(d->runforward);
	inflight_free(d->shared.index);
	ratelimit_free(d->shared.ratelimit);
	upstream_registry_free(d->upstreams);
	cache_free(d->cache);
	lkg_free(d->shared.lkg);
	listen_close(&d->listeners);
	if (d->base != NULL)
		event_base_free(d->base);
	config_free(&d->conf);
	libevent_global_shutdown();
}

static int
serve(struct daemon *d)
{
	int rc = 1;

	signal(SIGPIPE, SIG_IGN);
	/* A SIGHUP before its handler is in place must not kill us. */
	signal(SIGHUP, SIG_IGN);
	d->control_fd = d->metrics_fd = -1;
	d->control_gid = (gid_t)-1;
	if (start(d) == 0)
		rc = event_base_dispatch(d->base) == -1;
	stop(d);
	return rc;
}

/*
 * With -t: what start-up would trip over beyond the file itself (a user
 * or group that does not exist here), as warnings: the file may be meant
 * for another host.
 */
static void
check_environment(const struct config *conf)
{
	struct priv_user u;
	gid_t gid;

	if (geteuid() == 0)
		(void)priv_lookup(conf->user, &u, LOG_LEVEL_WARN);
	if (configured(conf->control))
		(void)priv_group(conf->control_group, &gid);
}

int
main(int argc, char *argv[])
{
	struct daemon d;
	int ch, check = 0, verbose = 0;

	memset(&d, 0, sizeof(d));
	TAILQ_INIT(&d.asked);
	TAILQ_INIT(&d.building);
	log_init("dnsdamper", LOG_LEVEL_INFO);
	while ((ch = getopt(argc, argv, "c:htVv")) != -1) {
		switch (ch) {
		case 'c':
			d.config_given = optarg;
			break;
		case 'h':
			usage(stdout, 0);
		case 't':
			check = 1;
			break;
		case 'V':
			printf("dnsdamper %s\n", PACKAGE_VERSION);
			return 0;
		case 'v':
			verbose++;
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
	d.config_path = config_path(d.config_given);
	if (!check && verbose > 0)
		log_set_level(LOG_LEVEL_DEBUG);
	if (parse_load(d.config_path, &d.conf, stderr) == -1)
		return 1;
	if (check) {
		check_environment(&d.conf);
		if (verbose > 0)
			printconf_write(&d.conf, stdout);
		config_free(&d.conf);
		return 0;
	}
	return serve(&d);
}
