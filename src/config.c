/* config.c: a configuration's defaults, the checks across directives, free. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "config.h"

const struct config_name config_policy_names[] = {
	{ "order", CONFIG_POLICY_ORDER },
	{ "random", CONFIG_POLICY_RANDOM },
	{ "fastest", CONFIG_POLICY_FASTEST },
	{ "hash", CONFIG_POLICY_HASH },
	{ NULL, 0 }
};

const struct config_name config_log_names[] = {
	{ "stderr", CONFIG_LOG_STDERR },
	{ "syslog", CONFIG_LOG_SYSLOG },
	{ NULL, 0 }
};

void
config_error(const struct config_report *r, const struct config_where *where,
    const char *directive, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->error(r->arg, where, directive, fmt, ap);
	va_end(ap);
}

/*
 * Free the string directives of conf and, with_defaults, copy in their
 * defaults: one list for both, so that a string added is freed too.
 * Returns 0, or -1 if out of memory.
 */
static int
config_reset_strings(struct config *conf, int with_defaults)
{
	const struct {
		char		**field;
		const char	 *def;
	} strs[] = {
		{ &conf->resolv_conf, "/etc/resolv.conf" },
		{ &conf->control, "/run/dnsdamper/control.sock" },
		{ &conf->control_mode_str, "0660" },
		{ &conf->control_group, CONFIG_NONE },
		{ &conf->metrics_listen_str, CONFIG_NONE },
		{ &conf->cache_file, "/var/lib/dnsdamper/cache.dump" },
		{ &conf->user, "dnsdamper" },
	};
	size_t i;

	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		free(*strs[i].field);
		*strs[i].field = NULL;
		if (with_defaults &&
		    (*strs[i].field = strdup(strs[i].def)) == NULL)
			return -1;
	}
	return 0;
}

int
config_defaults(struct config *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->cache_size = 64 * 1024 * 1024;
	conf->max_ttl = 86400;
	conf->min_ttl = 0;
	/* RFC 2308 §5: a day at most, hours usual. */
	conf->max_negative_ttl = 3600;
	/* RFC 9520 §3.2: at least 1 s; a few spare a dead upstream. */
	conf->failure_ttl = 5;
	/* RFC 6891; 1232 bytes avoid fragmentation (DNS flag day 2020). */
	conf->edns_buffer_size = 1232;
	conf->upstream_timeout_min = 50;
	conf->upstream_timeout_max = 2000;
	conf->query_timeout = 4000;
	conf->tcp_clients = 256;
	/* RFC 7766 §6.2.3: idle timeouts of seconds, not minutes. */
	conf->tcp_idle_timeout = 10000;
	/* A client that connects has its query ready: seconds are ample. */
	conf->tcp_initial_timeout = 3000;
	conf->max_inflight = 1024;
	/* Clients coalesced on one resolution: more than a host has. */
	conf->max_waiters = 1000;
	/* draft-vixie-dnsext-dns0x20 */
	conf->randomize_case = 1;
	/* RFC 8767 §5: serve stale data, 1 to 3 days of it. */
	conf->serve_stale = 1;
	conf->stale_max_age = 86400;
	/* RFC 8767 §4: stale answers carry a TTL of 30 s. */
	conf->stale_answer_ttl = 30;
	/* RFC 8767 §5: the client response timer, 1.8 s. */
	conf->client_timeout = 1800;
	/* RFC 8767 §5: the failure recheck timer, 30 s. */
	conf->stale_refresh_interval = 30;
	conf->prefetch = 1;
	conf->srv_prefetch_targets = 1;
	/* dnsdamperctl and a scrape or two at a time, with room to spare. */
	conf->control_clients = 16;
	conf->metrics_clients = 16;
	conf->log = CONFIG_LOG_STDERR;
	/* Off: a per-host daemon's clients are its own. */
	conf->ratelimit = 0;
	/* BIND's RRL slip: every other query over the limit truncated. */
	conf->ratelimit_slip = 2;
	conf->ratelimit_size = 10000;
	/* Loopback only: never an open resolver unless told to be. */
	conf->allow.builtin = conf->exempt_clients.builtin = 1;
	if (acl_add_loopback(&conf->allow.acl) == -1 ||
	    acl_add_loopback(&conf->exempt_clients.acl) == -1)
		return -1;
	return config_reset_strings(conf, 1);
}

void
config_forward_defaults(struct config_forward *fw)
{
	memset(fw, 0, sizeof(*fw));
	fw->policy = CONFIG_POLICY_ORDER;
	fw->max_inflight = 0;
}

int
config_add_addr(struct addr **arr, size_t *n, const struct addr *a)
{
	struct addr *na;

	if ((na = reallocarray(*arr, *n + 1, sizeof(*na))) == NULL)
		return -1;
	na[(*n)++] = *a;
	*arr = na;
	return 0;
}

int
config_add_forward(struct config *conf, const struct config_forward *fw)
{
	struct config_forward *n;

	n = reallocarray(conf->forwards, conf->n_forwards + 1, sizeof(*n));
	if (n == NULL)
		return -1;
	n[conf->n_forwards++] = *fw;
	conf->forwards = n;
	return 0;
}

int
config_implicit(struct config *conf, const char *file)
{
	static const char *const listen[] = { "127.0.0.1", "::1" };
	struct config_forward fw;
	struct addr a;
	const char *errstr;
	size_t i, n_listen = conf->n_listen;

	conf->listen_default = n_listen == 0;
	for (i = 0; n_listen == 0 && i < sizeof(listen) / sizeof(listen[0]);
	    i++)
		if (addr_parse(listen[i], CONFIG_DEFAULT_PORT, &a,
		    &errstr) == -1 ||
		    config_add_addr(&conf->listen, &conf->n_listen, &a) == -1)
			return -1;
	for (i = 0; i < conf->n_forwards; i++)
		if (strcmp(conf->forwards[i].zone, ".") == 0)
			return 0;
	config_forward_defaults(&fw);
	fw.use_resolv_conf = 1;
	if ((fw.zone = strdup(".")) == NULL ||
	    (fw.where.file = strdup(file)) == NULL ||
	    config_add_forward(conf, &fw) == -1) {
		config_forward_free(&fw);
		return -1;
	}
	return 0;
}

/*
 * Zone budgets must fit in max-inflight, leaving at least one for each
 * zone without its own, so that no zone can take another's share.
 */
static void
config_check_budgets(const struct config *conf, const struct config_report *r)
{
	const struct config_forward *fw;
	uint64_t sum = 0;
	size_t i, shared = 0;

	for (i = 0; i < conf->n_forwards; i++) {
		fw = &conf->forwards[i];
		if (fw->max_inflight == 0) {
			shared++;
			continue;
		}
		sum += fw->max_inflight;
		if (sum + shared <= conf->max_inflight)
			continue;
		config_error(r, &fw->where, NULL, "forward \"%s\": "
		    "max-inflight %u: the zones would need %llu of "
		    "max-inflight %u", fw->zone, fw->max_inflight,
		    (unsigned long long)(sum + shared), conf->max_inflight);
		return;
	}
	if (sum + shared > conf->max_inflight)
		config_error(r, NULL, "max-inflight", "max-inflight %u leaves "
		    "less than 1 for each of the %zu zones without their own",
		    conf->max_inflight, shared);
}

/* Replace *field of directive with its canonical spelling. */
static void
config_canonical(char **field, const char *canonical, const char *directive,
    const struct config_report *r)
{
	char *copy;

	if ((copy = strdup(canonical)) == NULL) {
		config_error(r, NULL, directive, "out of memory");
		return;
	}
	free(*field);
	*field = copy;
}

/* control-mode: octal permissions of the socket, at most 0777. */
static void
config_check_mode(struct config *conf, const struct config_report *r)
{
	const char *str = conf->control_mode_str;
	char *end, canonical[8];
	unsigned long v;

	v = strtoul(str, &end, 8);
	if (str[0] >= '0' && str[0] <= '7' && *end == '\0' && v <= 0777) {
		conf->control_mode = (unsigned)v;
		snprintf(canonical, sizeof(canonical), "%04lo", v);
		config_canonical(&conf->control_mode_str, canonical,
		    "control-mode", r);
		return;
	}
	config_error(r, NULL, "control-mode", "control-mode: \"%s\" is not an "
	    "octal mode from 0 to 0777", str);
}

/* metrics-listen: "none" or one address, port required in effect. */
static void
config_check_metrics_listen(struct config *conf,
    const struct config_report *r)
{
	char buf[ADDR_STRLEN];
	const char *errstr;

	memset(&conf->metrics_listen, 0, sizeof(conf->metrics_listen));
	if (strcmp(conf->metrics_listen_str, CONFIG_NONE) == 0)
		return;
	if (addr_parse(conf->metrics_listen_str, 9153, &conf->metrics_listen,
	    &errstr) == -1)
		config_error(r, NULL, "metrics-listen", "metrics-listen: "
		    "\"%s\" is not an address: %s", conf->metrics_listen_str,
		    errstr);
	else
		config_canonical(&conf->metrics_listen_str,
		    addr_format(&conf->metrics_listen, buf, sizeof(buf)),
		    "metrics-listen", r);
}

/*
 * The client lists as ranges, and no listener beyond loopback without an
 * allow that says who beyond loopback it is for: a forwarder open to
 * everyone who can reach it is an amplifier for anyone.
 */
static void
config_check_access(struct config *conf, const struct config_report *r)
{
	char buf[ADDR_STRLEN];
	size_t i;

	if (acl_compile(&conf->allow.acl) == -1 ||
	    acl_compile(&conf->exempt_clients.acl) == -1) {
		config_error(r, NULL, "allow", "out of memory");
		return;
	}
	if (conf->allow.acl.beyond_loopback)
		return;
	for (i = 0; i < conf->n_listen; i++) {
		if (addr_is_loopback(&conf->listen[i]))
			continue;
		config_error(r, conf->listen_nonlocal.line > 0 ?
		    &conf->listen_nonlocal : NULL, "listen", "listen %s is "
		    "not a loopback address, but no \"allow\" line admits a "
		    "client beyond loopback: add \"allow NETWORK/LEN\" for "
		    "the clients it serves",
		    addr_format(&conf->listen[i], buf, sizeof(buf)));
		return;
	}
}

void
config_validate(struct config *conf, const struct config_report *r)
{
	config_check_budgets(conf, r);
	config_check_mode(conf, r);
	config_check_metrics_listen(conf, r);
	config_check_access(conf, r);
}

void
config_forward_free(struct config_forward *fw)
{
	free(fw->zone);
	free(fw->upstreams);
	free(fw->where.file);
	memset(fw, 0, sizeof(*fw));
}

void
config_free(struct config *conf)
{
	size_t i;

	for (i = 0; i < conf->n_forwards; i++)
		config_forward_free(&conf->forwards[i]);
	free(conf->forwards);
	free(conf->listen);
	free(conf->listen_nonlocal.file);
	acl_clear(&conf->allow.acl);
	acl_clear(&conf->exempt_clients.acl);
	free(conf->source);
	(void)config_reset_strings(conf, 0);
	memset(conf, 0, sizeof(*conf));
}

const char *
config_policy_name(enum config_policy policy)
{
	const struct config_name *n;

	for (n = config_policy_names; n->name != NULL; n++)
		if (n->value == (int)policy)
			return n->name;
	return "?";
}
