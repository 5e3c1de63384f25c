/* config.c: a configuration's defaults, the checks across directives, free. */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "config.h"

#define CONFIG_TYPE_CNAME	5	/* RFC 1035 §3.2.2 */

const struct config_name config_policy_names[] = {
	{ "order", CONFIG_POLICY_ORDER },
	{ "random", CONFIG_POLICY_RANDOM },
	{ "fastest", CONFIG_POLICY_FASTEST },
	{ "hash", CONFIG_POLICY_HASH },
	{ NULL, 0 }
};

const struct config_name config_tls_auth_names[] = {
	{ "strict", CONFIG_TLS_AUTH_STRICT },
	{ "none", CONFIG_TLS_AUTH_NONE },
	{ NULL, 0 }
};

const struct config_name config_log_names[] = {
	{ "stderr", CONFIG_LOG_STDERR },
	{ "syslog", CONFIG_LOG_SYSLOG },
	{ NULL, 0 }
};

const struct config_name config_local_type_names[] = {
	{ "static", CONFIG_LOCAL_STATIC },
	{ "nxdomain", CONFIG_LOCAL_NXDOMAIN },
	{ "refuse", CONFIG_LOCAL_REFUSE },
	{ "transparent", CONFIG_LOCAL_TRANSPARENT },
	{ "nodefault", CONFIG_LOCAL_NODEFAULT },
	{ NULL, 0 }
};

const struct config_name config_dnstap_message_names[] = {
	{ "client-query", CONFIG_DNSTAP_CLIENT_QUERY },
	{ "client-response", CONFIG_DNSTAP_CLIENT_RESPONSE },
	{ "forwarder-query", CONFIG_DNSTAP_FORWARDER_QUERY },
	{ "forwarder-response", CONFIG_DNSTAP_FORWARDER_RESPONSE },
	{ NULL, 0 }
};

const char *const config_default_local_zones[] = {
	"localhost.",				/* RFC 6761 §6.3 */
	/* RFC 6303 §4.1: RFC 1918 */
	"10.in-addr.arpa.",
	"16.172.in-addr.arpa.", "17.172.in-addr.arpa.",
	"18.172.in-addr.arpa.", "19.172.in-addr.arpa.",
	"20.172.in-addr.arpa.", "21.172.in-addr.arpa.",
	"22.172.in-addr.arpa.", "23.172.in-addr.arpa.",
	"24.172.in-addr.arpa.", "25.172.in-addr.arpa.",
	"26.172.in-addr.arpa.", "27.172.in-addr.arpa.",
	"28.172.in-addr.arpa.", "29.172.in-addr.arpa.",
	"30.172.in-addr.arpa.", "31.172.in-addr.arpa.",
	"168.192.in-addr.arpa.",
	/* RFC 6303 §4.2: "this" network, loopback, link-local,
	 * TEST-NET-1, -2 and -3 (RFC 5737), broadcast */
	"0.in-addr.arpa.",
	"127.in-addr.arpa.",
	"254.169.in-addr.arpa.",
	"2.0.192.in-addr.arpa.",
	"100.51.198.in-addr.arpa.",
	"113.0.203.in-addr.arpa.",
	"255.255.255.255.in-addr.arpa.",
	/* RFC 7793: shared address space 100.64.0.0/10 (RFC 6598) */
	"64.100.in-addr.arpa.", "65.100.in-addr.arpa.",
	"66.100.in-addr.arpa.", "67.100.in-addr.arpa.",
	"68.100.in-addr.arpa.", "69.100.in-addr.arpa.",
	"70.100.in-addr.arpa.", "71.100.in-addr.arpa.",
	"72.100.in-addr.arpa.", "73.100.in-addr.arpa.",
	"74.100.in-addr.arpa.", "75.100.in-addr.arpa.",
	"76.100.in-addr.arpa.", "77.100.in-addr.arpa.",
	"78.100.in-addr.arpa.", "79.100.in-addr.arpa.",
	"80.100.in-addr.arpa.", "81.100.in-addr.arpa.",
	"82.100.in-addr.arpa.", "83.100.in-addr.arpa.",
	"84.100.in-addr.arpa.", "85.100.in-addr.arpa.",
	"86.100.in-addr.arpa.", "87.100.in-addr.arpa.",
	"88.100.in-addr.arpa.", "89.100.in-addr.arpa.",
	"90.100.in-addr.arpa.", "91.100.in-addr.arpa.",
	"92.100.in-addr.arpa.", "93.100.in-addr.arpa.",
	"94.100.in-addr.arpa.", "95.100.in-addr.arpa.",
	"96.100.in-addr.arpa.", "97.100.in-addr.arpa.",
	"98.100.in-addr.arpa.", "99.100.in-addr.arpa.",
	"100.100.in-addr.arpa.", "101.100.in-addr.arpa.",
	"102.100.in-addr.arpa.", "103.100.in-addr.arpa.",
	"104.100.in-addr.arpa.", "105.100.in-addr.arpa.",
	"106.100.in-addr.arpa.", "107.100.in-addr.arpa.",
	"108.100.in-addr.arpa.", "109.100.in-addr.arpa.",
	"110.100.in-addr.arpa.", "111.100.in-addr.arpa.",
	"112.100.in-addr.arpa.", "113.100.in-addr.arpa.",
	"114.100.in-addr.arpa.", "115.100.in-addr.arpa.",
	"116.100.in-addr.arpa.", "117.100.in-addr.arpa.",
	"118.100.in-addr.arpa.", "119.100.in-addr.arpa.",
	"120.100.in-addr.arpa.", "121.100.in-addr.arpa.",
	"122.100.in-addr.arpa.", "123.100.in-addr.arpa.",
	"124.100.in-addr.arpa.", "125.100.in-addr.arpa.",
	"126.100.in-addr.arpa.", "127.100.in-addr.arpa.",
	/* RFC 6303 §4.3: the unspecified and the loopback address */
	"0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
	    "ip6.arpa.",
	"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
	    "ip6.arpa.",
	"d.f.ip6.arpa.",			/* RFC 6303 §4.4: fd00::/8 */
	/* RFC 6303 §4.5: link-local fe80::/10 */
	"8.e.f.ip6.arpa.", "9.e.f.ip6.arpa.", "a.e.f.ip6.arpa.",
	"b.e.f.ip6.arpa.",
	"8.b.d.0.1.0.0.2.ip6.arpa.",		/* RFC 6303 §4.6: 2001:db8::/32 */
	"invalid.",				/* RFC 6761 §6.4 */
	"home.arpa.",				/* RFC 8375 §7 */
	"onion.",				/* RFC 7686 §2 */
	NULL
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
		{ &conf->dnstap, CONFIG_NONE },
		{ &conf->dnstap_identity, CONFIG_NONE },
		{ &conf->dnstap_version, CONFIG_NONE },
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
	conf->threads = 0;	/* one per CPU we may run on, at most 4 */
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
	conf->retry_budget = 10;
	conf->retry_budget_min = 20;
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
	/* Off: holding an upstream's negative answer is a policy the
	 * operator chooses per zone (dnsdamper.conf(5) says why). */
	conf->last_known_good = 0;
	conf->last_known_good_hold = 60;
	/* dnsdamperctl and a scrape or two at a time, with room to spare. */
	conf->control_clients = 16;
	conf->metrics_clients = 16;
	conf->log = CONFIG_LOG_STDERR;
	/* What reached clients and what upstreams said: the answers. */
	conf->dnstap_messages = CONFIG_DNSTAP_CLIENT_RESPONSE |
	    CONFIG_DNSTAP_FORWARDER_RESPONSE;
	conf->log_queries_num = 0;
	conf->log_queries_den = 0;
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
	if (config_reset_strings(conf, 1) == -1 ||
	    config_add_hosts_file(conf, CONFIG_HOSTS_FILE) == -1)
		return -1;
	conf->hosts_file_default = 1;
	return 0;
}

void
config_forward_defaults(struct config_forward *fw)
{
	memset(fw, 0, sizeof(*fw));
	fw->policy = CONFIG_POLICY_ORDER;
	fw->max_inflight = 0;
	/*
	 * 32 queries waiting on one connection before a second opens: a
	 * host's burst of misses rides one handshake, while one slow answer
	 * delays few others (answers come in any order anyway).
	 */
	fw->tls_max_inflight = 32;
	/* Below the providers' own limit of about 10 s (unbound#1271). */
	fw->tls_idle_timeout = 10000;
	fw->last_known_good = -1;
	fw->last_known_good_hold = 0;
}

/*
 * Append a copy of the size octets at elem to the array at *arrp (a
 * pointer to any object type) of *n elements. Returns 0, or -1 if out of
 * memory (the array intact).
 */
static int
config_append(void *arrp, size_t *n, size_t size, const void *elem)
{
	void *arr, *grown;

	memcpy(&arr, arrp, sizeof(arr));
	if ((grown = reallocarray(arr, *n + 1, size)) == NULL)
		return -1;
	memcpy((char *)grown + *n * size, elem, size);
	memcpy(arrp, &grown, sizeof(grown));
	(*n)++;
	return 0;
}

int
config_add_addr(struct addr **arr, size_t *n, const struct addr *a)
{
	return config_append(arr, n, sizeof(*a), a);
}

int
config_add_tls_upstream(struct config_forward *fw,
    const struct config_tls_upstream *tu)
{
	return config_append(&fw->tls, &fw->n_tls, sizeof(*tu), tu);
}

int
config_add_tls_pin(struct config_forward *fw,
    const uint8_t pin[CONFIG_TLS_PIN_LEN])
{
	return config_append(&fw->tls_pins, &fw->n_tls_pins,
	    sizeof(*fw->tls_pins), pin);
}

const struct config_tls_upstream *
config_tls_upstream(const struct config_forward *fw, const struct addr *a)
{
	size_t i;

	for (i = 0; i < fw->n_tls; i++)
		if (addr_equal(&fw->tls[i].addr, a))
			return &fw->tls[i];
	return NULL;
}

int
config_add_forward(struct config *conf, const struct config_forward *fw)
{
	return config_append(&conf->forwards, &conf->n_forwards, sizeof(*fw),
	    fw);
}

/* Drop the hosts files of conf. */
static void
config_free_hosts_files(struct config *conf)
{
	size_t i;

	for (i = 0; i < conf->n_hosts_files; i++)
		free(conf->hosts_files[i]);
	free(conf->hosts_files);
	conf->hosts_files = NULL;
	conf->n_hosts_files = 0;
}

int
config_add_hosts_file(struct config *conf, const char *path)
{
	char *copy;

	if (conf->hosts_file_default || strcmp(path, CONFIG_NONE) == 0) {
		config_free_hosts_files(conf);
		conf->hosts_file_default = 0;
	}
	if (strcmp(path, CONFIG_NONE) == 0)
		return 0;
	if ((copy = strdup(path)) == NULL ||
	    config_append(&conf->hosts_files, &conf->n_hosts_files,
	    sizeof(copy), &copy) == -1) {
		free(copy);
		return -1;
	}
	return 0;
}

int
config_add_local_zone(struct config *conf, const struct config_local_zone *lz)
{
	return config_append(&conf->local_zones, &conf->n_local_zones,
	    sizeof(*lz), lz);
}

int
config_add_local_data(struct config *conf, const struct config_local_data *ld)
{
	return config_append(&conf->local_data, &conf->n_local_data,
	    sizeof(*ld), ld);
}

int
config_is_default_local_zone(const char *zone)
{
	const char *const *z;

	for (z = config_default_local_zones; *z != NULL; z++)
		if (strcmp(*z, zone) == 0)
			return 1;
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

/* qsort: local-data in owner order, then file order (their index). */
static int
config_owner_cmp(const void *a, const void *b)
{
	const struct config_local_data *const *x = a, *const *y = b;
	int c = strcmp((*x)->owner, (*y)->owner);

	if (c != 0)
		return c;
	return *x < *y ? -1 : *x > *y;
}

/*
 * The records of one owner, ld[0..n-1] in file order: with a CNAME, the
 * first of them and the one that clashes with it (RFC 2181 §10.1).
 */
static void
config_check_cname_owner(struct config_local_data *const *ld, size_t n,
    const struct config_report *r)
{
	const struct config_local_data *cname = NULL, *later;
	size_t i;

	for (i = 0; i < n && cname == NULL; i++)
		if (ld[i]->type == CONFIG_TYPE_CNAME)
			cname = ld[i];
	if (cname == NULL || n < 2)
		return;
	later = ld[0] == cname ? ld[1] : cname;
	config_error(r, &later->where, NULL, "local-data \"%s\": a CNAME and "
	    "other data (RFC 2181 section 10.1); first at %s:%d", later->owner,
	    ld[0]->where.file, ld[0]->where.line);
}

/* A name with a CNAME has nothing else (RFC 2181 §10.1). */
static void
config_check_cnames(const struct config *conf, const struct config_report *r)
{
	struct config_local_data **sorted;
	size_t i, j, n = conf->n_local_data;

	if (n < 2)
		return;
	if ((sorted = calloc(n, sizeof(*sorted))) == NULL) {
		config_error(r, NULL, "local-data", "out of memory");
		return;
	}
	for (i = 0; i < n; i++)
		sorted[i] = &conf->local_data[i];
	qsort(sorted, n, sizeof(*sorted), config_owner_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n &&
		    strcmp(sorted[i]->owner, sorted[j]->owner) == 0; j++)
			;
		config_check_cname_owner(sorted + i, j - i, r);
	}
	free(sorted);
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

/* Forward blocks that did not say get the top level's last known good. */
static void
config_inherit_lkg(struct config *conf)
{
	struct config_forward *fw;
	size_t i;

	for (i = 0; i < conf->n_forwards; i++) {
		fw = &conf->forwards[i];
		if (fw->last_known_good == -1)
			fw->last_known_good = conf->last_known_good;
		if (fw->last_known_good_hold == 0)
			fw->last_known_good_hold = conf->last_known_good_hold;
	}
}

/*
 * dnstap names a unix socket by an absolute path that fits sun_path
 * (107 octets and the NUL), or a file as file:PATH, PATH absolute.
 */
static void
config_check_dnstap(const struct config *conf, const struct config_report *r)
{
	static const char prefix[] = "file:";
	struct sockaddr_un sun;
	const char *path = conf->dnstap;
	int file;

	if (strcmp(path, CONFIG_NONE) == 0)
		return;
	if ((file = strncmp(path, prefix, sizeof(prefix) - 1) == 0))
		path += sizeof(prefix) - 1;
	if (path[0] != '/')
		config_error(r, NULL, "dnstap", "dnstap: \"%s\" is not an "
		    "absolute path", path);
	else if (!file && strlen(path) >= sizeof(sun.sun_path))
		config_error(r, NULL, "dnstap", "dnstap: \"%s\" is longer "
		    "than a unix socket path can be (%zu octets)", path,
		    sizeof(sun.sun_path) - 1);
}

void
config_validate(struct config *conf, const struct config_report *r)
{
	config_check_dnstap(conf, r);
	config_check_budgets(conf, r);
	config_check_mode(conf, r);
	config_check_metrics_listen(conf, r);
	config_check_access(conf, r);
	config_check_cnames(conf, r);
	config_inherit_lkg(conf);
}

void
config_forward_free(struct config_forward *fw)
{
	size_t i;

	free(fw->zone);
	free(fw->upstreams);
	for (i = 0; i < fw->n_tls; i++)
		free(fw->tls[i].name);
	free(fw->tls);
	free(fw->tls_ca);
	free(fw->tls_pins);
	free(fw->where.file);
	memset(fw, 0, sizeof(*fw));
}

void
config_local_zone_free(struct config_local_zone *lz)
{
	free(lz->zone);
	free(lz->where.file);
	memset(lz, 0, sizeof(*lz));
}

void
config_local_data_free(struct config_local_data *ld)
{
	free(ld->rr);
	free(ld->owner);
	free(ld->where.file);
	memset(ld, 0, sizeof(*ld));
}

void
config_free(struct config *conf)
{
	size_t i;

	for (i = 0; i < conf->n_forwards; i++)
		config_forward_free(&conf->forwards[i]);
	free(conf->forwards);
	for (i = 0; i < conf->n_local_zones; i++)
		config_local_zone_free(&conf->local_zones[i]);
	free(conf->local_zones);
	for (i = 0; i < conf->n_local_data; i++)
		config_local_data_free(&conf->local_data[i]);
	free(conf->local_data);
	config_free_hosts_files(conf);
	free(conf->listen);
	free(conf->listen_nonlocal.file);
	acl_clear(&conf->allow.acl);
	acl_clear(&conf->exempt_clients.acl);
	free(conf->source);
	(void)config_reset_strings(conf, 0);
	memset(conf, 0, sizeof(*conf));
}

const char *
config_name_word(const struct config_name *names, int value)
{
	const struct config_name *n;

	for (n = names; n->name != NULL; n++)
		if (n->value == value)
			return n->name;
	return "?";
}

const char *
config_policy_name(enum config_policy policy)
{
	return config_name_word(config_policy_names, (int)policy);
}
