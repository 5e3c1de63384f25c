/* main.c: command line, start-up order, signals, reload and shutdown. */
#include "autoconf.h"

#include <sys/resource.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cache.h"
#include "config.h"
#include "listen.h"
#include "log.h"
#include "upstream.h"
#include "worker.h"
#include "zone.h"

#define DEFAULT_CONFIG	SYSCONFDIR "/dnsdamper/dnsdamper.conf"

struct daemon {
	const char		*config_given;	/* -c, or NULL */
	const char		*config_path;	/* NULL: defaults only */
	struct config		 conf;
	struct cache		*cache;
	struct zone_table	*zones;
	struct listen_socket	*socks;
	size_t			 n_socks;
	struct event_base	*base;
	struct worker		*worker;
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

/* What is being served, for the log: where from, where, and to whom. */
static void
log_serving(const struct daemon *d)
{
	const struct zone *z;
	char addr[ADDR_STRLEN], ups[512];
	size_t i, j, o;

	log_info("configuration: %s", d->config_path != NULL ?
	    d->config_path : "none, built-in defaults");
	for (i = 0; i < zone_count(d->zones); i++) {
		z = zone_at(d->zones, i);
		for (j = 0, o = 0; j < z->n_upstreams && o < sizeof(ups); j++)
			o += (size_t)snprintf(ups + o, sizeof(ups) - o, "%s%s",
			    j > 0 ? " " : "", z->upstreams[j]->name);
		log_info("forward %s to %s (policy %s)", z->name_str,
		    z->n_upstreams > 0 ? ups : "nothing",
		    config_policy_name(z->policy));
	}
	for (i = 0; i < d->n_socks; i++)
		log_info("listening on %s, UDP and TCP",
		    addr_format(&d->socks[i].addr, addr, sizeof(addr)));
}

/* Errors of a reload go to the log line by line, not to stderr. */
static int
load_logged(const char *path, struct config *conf)
{
	char *text = NULL, *line, *save;
	size_t len = 0;
	FILE *errs;
	int rc;

	if ((errs = open_memstream(&text, &len)) == NULL)
		return -1;
	rc = config_load(path, conf, errs);
	fclose(errs);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		log_warnx("%s", line);
	free(text);
	return rc;
}

/*
 * Parse the new config completely before touching the running one; on
 * any error the daemon keeps serving with what it had, cache included.
 */
static void
reload(struct daemon *d)
{
	struct cache_limits lim;
	struct zone_table *zones;
	struct config conf;

	d->config_path = config_path(d->config_given);
	log_info("reloading %s", d->config_path ? d->config_path :
	    "the built-in defaults");
	if (load_logged(d->config_path, &conf) == -1) {
		log_warnx("reload failed; still running the previous "
		    "configuration");
		return;
	}
	if ((zones = zone_table_new(&conf)) == NULL) {
		log_warn("reload failed; still running the previous "
		    "configuration");
		config_free(&conf);
		return;
	}
	if (!listen_same(&conf, d->socks, d->n_socks))
		log_warnx("listen addresses changed: they take effect at "
		    "restart");
	if (conf.cache_size != d->conf.cache_size)
		log_warnx("cache-size changed: it takes effect at restart");
	cache_limits_of(&conf, &lim);
	cache_set_limits(d->cache, &lim);
	upstream_reconfigure(conf.upstream_timeout_min,
	    conf.upstream_timeout_max);
	zone_table_unref(d->zones);
	d->zones = zones;
	config_free(&d->conf);
	d->conf = conf;
	worker_reconfigure(d->worker, &d->conf, d->zones);
	log_serving(d);
	log_info("reloaded");
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	if (sig == SIGHUP) {
		reload(d);
		return;
	}
	log_info("exiting on signal %d", (int)sig);
	event_base_loopexit(d->base, NULL);
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

static int
start(struct daemon *d)
{
	struct cache_limits lim;

	raise_fd_limit();
	if (listen_open(&d->conf, &d->socks, &d->n_socks) == -1)
		return -1;
	if (d->n_socks == 0) {
		log_warnx("no address to listen on");
		return -1;
	}
	cache_limits_of(&d->conf, &lim);
	upstream_reconfigure(d->conf.upstream_timeout_min,
	    d->conf.upstream_timeout_max);
	if ((d->cache = cache_new(d->conf.cache_size, &lim)) == NULL ||
	    (d->zones = zone_table_new(&d->conf)) == NULL ||
	    (d->base = event_base_new()) == NULL) {
		log_warn("start-up");
		return -1;
	}
	if ((d->worker = worker_new(d->base, &d->conf, d->zones, d->cache,
	    d->socks, d->n_socks)) == NULL)
		return -1;
	return 0;
}

static void
stop(struct daemon *d)
{
	worker_free(d->worker);
	zone_table_unref(d->zones);
	cache_free(d->cache);
	if (d->socks != NULL)
		listen_close(d->socks, d->n_socks);
	if (d->base != NULL)
		event_base_free(d->base);
	config_free(&d->conf);
	libevent_global_shutdown();
}

static int
serve(struct daemon *d)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
	struct event *ev[3];
	size_t i;
	int rc = 1;

	signal(SIGPIPE, SIG_IGN);
	memset(ev, 0, sizeof(ev));
	if (start(d) == 0) {
		for (i = 0; i < 3; i++)
			if ((ev[i] = evsignal_new(d->base, sigs[i], signal_cb,
			    d)) == NULL || evsignal_add(ev[i], NULL) == -1)
				fatalx("cannot install signal handlers");
		log_serving(d);
		log_info("started");
		rc = event_base_dispatch(d->base) == -1;
		for (i = 0; i < 3; i++)
			event_free(ev[i]);
	}
	stop(d);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct daemon d;
	int ch, check = 0, verbose = 0;

	memset(&d, 0, sizeof(d));
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
	if (config_load(d.config_path, &d.conf, stderr) == -1)
		return 1;
	if (check) {
		if (verbose > 0)
			config_print(&d.conf, stdout);
		config_free(&d.conf);
		return 0;
	}
	return serve(&d);
}
