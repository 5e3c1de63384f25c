/* check_config.c: unit tests of config, parse, printconf and resolvconf. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "addr.h"
#include "check_main.h"
#include "config.h"
#include "directive.h"
#include "log.h"
#include "parse.h"
#include "printconf.h"
#include "resolvconf.h"
#include "testutil.h"

static struct testutil_workdir test_dir;

/*
 * Each test runs in a fresh directory, so file names in messages are short.
 * A failing test skips teardown and leaves its directory for inspection.
 */
static void
setup(void)
{
	log_init("check_config", LOG_LEVEL_WARN);
	testutil_workdir_enter(&test_dir);
}

static void
teardown(void)
{
	testutil_workdir_leave(&test_dir);
}

/* Load the file path; returns parse_load's result, its errors in *errs. */
static int
load_file(const char *path, struct config *conf, char **errs)
{
	struct testutil_capture c;
	int r;

	testutil_capture_start(&c);
	r = parse_load(path, conf, c.fp);
	testutil_capture_end(&c);
	*errs = c.text;
	return r;
}

/* text must load without any error. */
static void
load_ok(const char *text, struct config *conf)
{
	char *errs;

	testutil_write(NULL, "x.conf", text);
	ck_assert_int_eq(load_file("x.conf", conf, &errs), 0);
	ck_assert_str_eq(errs, "");
	free(errs);
}

/* text must fail to load with exactly the error lines expected. */
static void
load_fails(const char *text, const char *expected)
{
	struct config conf;
	char *errs;

	testutil_write(NULL, "x.conf", text);
	ck_assert_int_eq(load_file("x.conf", &conf, &errs), -1);
	ck_assert_str_eq(errs, expected);
	/* A failed load leaves nothing behind (valgrind checks the rest). */
	ck_assert_ptr_null(conf.listen);
	ck_assert_ptr_null(conf.forwards);
	ck_assert_ptr_null(conf.resolv_conf);
	ck_assert_ptr_null(conf.source);
	free(errs);
}

static void
assert_addr(const struct addr *a, const char *expected)
{
	char buf[ADDR_STRLEN];

	ck_assert_str_eq(addr_format(a, buf, sizeof(buf)), expected);
}

static const struct config_forward *
find_forward(const struct config *conf, const char *zone)
{
	size_t i;

	for (i = 0; i < conf->n_forwards; i++)
		if (strcmp(conf->forwards[i].zone, zone) == 0)
			return &conf->forwards[i];
	ck_abort_msg("no forward for %s", zone);
	return NULL;
}

/* Every scalar of a directive table equal in a and b (structs of it). */
static void
assert_scalars_equal(const struct directive *table, const void *a,
    const void *b)
{
	const struct directive *d;

	for (d = table; d->name != NULL; d++) {
		if (d->kind == DIRECTIVE_SPECIAL)
			continue;
		if (d->kind == DIRECTIVE_STRING) {
			ck_assert_str_eq(*(char *const *)((const char *)a +
			    d->offset), *(char *const *)((const char *)b +
			    d->offset));
			continue;
		}
		ck_assert_msg(directive_get(d, a, d->offset) ==
		    directive_get(d, b, d->offset), "%s differs", d->name);
		if (d->flags & DIRECTIVE_PAIR)
			ck_assert_msg(directive_get(d, a, d->offset_max) ==
			    directive_get(d, b, d->offset_max),
			    "%s max differs", d->name);
	}
}

/* The same networks, in the same order. */
static void
assert_acl_equal(const struct acl *a, const struct acl *b)
{
	size_t i;

	ck_assert_uint_eq(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		ck_assert_int_eq(a->prefixes[i].family, b->prefixes[i].family);
		ck_assert_uint_eq(a->prefixes[i].len, b->prefixes[i].len);
		ck_assert_mem_eq(a->prefixes[i].net, b->prefixes[i].net, 16);
	}
}

/* Equal as configurations: where things were read is not compared. */
static void
assert_config_equal(const struct config *a, const struct config *b)
{
	const struct config_forward *fa, *fb;
	size_t i, j;

	assert_scalars_equal(parse_top, a, b);
	assert_acl_equal(&a->allow.acl, &b->allow.acl);
	assert_acl_equal(&a->exempt_clients.acl, &b->exempt_clients.acl);
	ck_assert_uint_eq(a->n_listen, b->n_listen);
	for (i = 0; i < a->n_listen; i++)
		ck_assert(addr_equal(&a->listen[i], &b->listen[i]));
	ck_assert_uint_eq(a->n_hosts_files, b->n_hosts_files);
	for (i = 0; i < a->n_hosts_files; i++)
		ck_assert_str_eq(a->hosts_files[i], b->hosts_files[i]);
	ck_assert_uint_eq(a->n_local_zones, b->n_local_zones);
	for (i = 0; i < a->n_local_zones; i++) {
		ck_assert_str_eq(a->local_zones[i].zone, b->local_zones[i].zone);
		ck_assert_int_eq(a->local_zones[i].type, b->local_zones[i].type);
	}
	ck_assert_uint_eq(a->n_local_data, b->n_local_data);
	for (i = 0; i < a->n_local_data; i++) {
		ck_assert_str_eq(a->local_data[i].rr, b->local_data[i].rr);
		ck_assert_str_eq(a->local_data[i].owner,
		    b->local_data[i].owner);
		ck_assert_uint_eq(a->local_data[i].type, b->local_data[i].type);
	}
	ck_assert_uint_eq(a->n_forwards, b->n_forwards);
	for (i = 0; i < a->n_forwards; i++) {
		fa = &a->forwards[i];
		fb = &b->forwards[i];
		ck_assert_str_eq(fa->zone, fb->zone);
		assert_scalars_equal(parse_forward_block, fa, fb);
		ck_assert_int_eq(fa->use_resolv_conf, fb->use_resolv_conf);
		ck_assert_uint_eq(fa->n_upstreams, fb->n_upstreams);
		for (j = 0; j < fa->n_upstreams; j++)
			ck_assert(addr_equal(&fa->upstreams[j],
			    &fb->upstreams[j]));
	}
}

START_TEST(test_defaults)
{
	struct config conf;

	ck_assert_int_eq(config_defaults(&conf), 0);
	ck_assert_uint_eq(conf.n_listen, 0);
	ck_assert_uint_eq(conf.n_forwards, 0);
	ck_assert_int_eq(config_implicit(&conf, CONFIG_BUILTIN), 0);
	ck_assert_ptr_null(conf.source);
	ck_assert_str_eq(conf.resolv_conf, "/etc/resolv.conf");
	ck_assert_uint_eq(conf.cache_size, 64 * 1024 * 1024);
	ck_assert_uint_eq(conf.max_ttl, 86400);
	ck_assert_uint_eq(conf.min_ttl, 0);
	ck_assert_uint_eq(conf.max_negative_ttl, 3600);
	ck_assert_uint_eq(conf.failure_ttl, 5);
	ck_assert_uint_eq(conf.edns_buffer_size, 1232);
	ck_assert_uint_eq(conf.upstream_timeout_min, 50);
	ck_assert_uint_eq(conf.upstream_timeout_max, 2000);
	ck_assert_uint_eq(conf.query_timeout, 4000);
	ck_assert_uint_eq(conf.tcp_clients, 256);
	ck_assert_uint_eq(conf.tcp_idle_timeout, 10000);
	ck_assert_uint_eq(conf.tcp_initial_timeout, 3000);
	ck_assert_uint_eq(conf.max_inflight, 1024);
	ck_assert_uint_eq(conf.max_waiters, 1000);
	ck_assert_uint_eq(conf.control_clients, 16);
	ck_assert_uint_eq(conf.metrics_clients, 16);
	ck_assert_int_eq(conf.randomize_case, 1);
	ck_assert_uint_eq(conf.n_listen, 2);
	assert_addr(&conf.listen[0], "127.0.0.1:53");
	assert_addr(&conf.listen[1], "[::1]:53");
	ck_assert_uint_eq(conf.n_forwards, 1);
	ck_assert_str_eq(conf.forwards[0].zone, ".");
	ck_assert_int_eq(conf.forwards[0].use_resolv_conf, 1);
	ck_assert_uint_eq(conf.forwards[0].n_upstreams, 0);
	ck_assert_int_eq(conf.forwards[0].policy, CONFIG_POLICY_ORDER);
	ck_assert_str_eq(conf.forwards[0].where.file, "(defaults)");
	ck_assert_int_eq(conf.forwards[0].where.line, 0);
	/* Loopback clients only, none rate limited, by default. */
	ck_assert_int_eq(conf.allow.builtin, 1);
	ck_assert_uint_eq(conf.allow.acl.n, 2);
	ck_assert_int_eq(conf.exempt_clients.builtin, 1);
	ck_assert_uint_eq(conf.exempt_clients.acl.n, 2);
	ck_assert_uint_eq(conf.ratelimit, 0);
	ck_assert_uint_eq(conf.ratelimit_slip, 2);
	ck_assert_uint_eq(conf.ratelimit_size, 10000);
	ck_assert_uint_eq(conf.n_hosts_files, 1);
	ck_assert_str_eq(conf.hosts_files[0], "/etc/hosts");
	ck_assert_uint_eq(conf.n_local_zones, 0);
	ck_assert_uint_eq(conf.n_local_data, 0);
	config_free(&conf);
	ck_assert_ptr_null(conf.listen);
}
END_TEST

/* An empty file is the defaults, with resolv.conf expanded. */
START_TEST(test_empty_file)
{
	struct config conf;

	testutil_write(NULL, "resolv.conf", "nameserver 192.0.2.1\n");
	load_ok("resolv-conf resolv.conf\n", &conf);
	ck_assert_str_eq(conf.source, "x.conf");
	ck_assert_uint_eq(conf.n_listen, 2);
	ck_assert_uint_eq(conf.n_forwards, 1);
	ck_assert_str_eq(conf.forwards[0].where.file, "x.conf");
	ck_assert_int_eq(conf.forwards[0].where.line, 0);
	ck_assert_uint_eq(conf.forwards[0].n_upstreams, 1);
	assert_addr(&conf.forwards[0].upstreams[0], "192.0.2.1:53");
	config_free(&conf);
}
END_TEST

START_TEST(test_every_directive)
{
	struct config conf;
	const struct config_forward *fw;

	load_ok("# every directive, none at its default\n"
	    "listen 127.0.0.1:5300 [::1]:5300\n"
	    "listen 127.0.0.2\n"
	    "resolv-conf \"my resolv.conf\"\n"
	    "cache-size 1G\n"
	    "max-ttl 2d\n"
	    "min-ttl 90\n"
	    "max-negative-ttl 15m\n"
	    "failure-ttl 30s\n"
	    "edns-buffer-size 4k\n"
	    "upstream-timeout 20ms 5s\n"
	    "query-timeout 1500ms\n"
	    "tcp-clients 100000\n"
	    "tcp-idle-timeout 1h\n"
	    "tcp-initial-timeout 500ms\n"
	    "max-inflight 7\n"
	    "max-waiters 1\n"
	    "randomize-case no\n"
	    "serve-stale no\n"
	    "stale-max-age 3d\n"
	    "stale-answer-ttl 10s\n"
	    "client-timeout 0\n"
	    "stale-refresh-interval 1m\n"
	    "prefetch no\n"
	    "srv-prefetch-targets no\n"
	    "control \"/tmp/my control.sock\"\n"
	    "control-mode 0600\n"
	    "control-group nogroup\n"
	    "control-clients 1\n"
	    "metrics-listen 127.0.0.1:9153\n"
	    "metrics-clients 1024\n"
	    "cache-file none\n"
	    "user nobody\n"
	    "log syslog\n"
	    "allow 10.0.0.0/8\n"
	    "allow 2001:db8::/32 192.0.2.1\n"
	    "exempt-clients none\n"
	    "ratelimit 50\n"
	    "ratelimit-slip 3\n"
	    "ratelimit-size 100\n"
	    "forward . { upstream 192.0.2.1 policy hash max-inflight 5 }\n"
	    "hosts-file /etc/hosts.local\n"
	    "hosts-file \"/etc/more hosts\"\n"
	    "local-zone Corp.Example static\n"
	    "local-zone 10.in-addr.arpa. nodefault\n"
	    "local-data \"WWW.corp.example. 300 IN A 10.1.2.3\"\n"
	    "local-data \"txt.corp.example. TXT \\\"a \\\\\\\" b\\\"\"\n",
	    &conf);
	ck_assert_uint_eq(conf.n_listen, 3);
	assert_addr(&conf.listen[0], "127.0.0.1:5300");
	assert_addr(&conf.listen[1], "[::1]:5300");
	assert_addr(&conf.listen[2], "127.0.0.2:53");
	ck_assert_str_eq(conf.resolv_conf, "my resolv.conf");
	ck_assert_uint_eq(conf.cache_size, 1024ULL * 1024 * 1024);
	ck_assert_uint_eq(conf.max_ttl, 2 * 86400);
	ck_assert_uint_eq(conf.min_ttl, 90);
	ck_assert_uint_eq(conf.max_negative_ttl, 900);
	ck_assert_uint_eq(conf.failure_ttl, 30);
	ck_assert_uint_eq(conf.edns_buffer_size, 4096);
	ck_assert_uint_eq(conf.upstream_timeout_min, 20);
	ck_assert_uint_eq(conf.upstream_timeout_max, 5000);
	ck_assert_uint_eq(conf.query_timeout, 1500);
	ck_assert_uint_eq(conf.tcp_clients, 100000);
	ck_assert_uint_eq(conf.tcp_idle_timeout, 3600 * 1000);
	ck_assert_uint_eq(conf.tcp_initial_timeout, 500);
	ck_assert_uint_eq(conf.max_inflight, 7);
	ck_assert_uint_eq(conf.max_waiters, 1);
	ck_assert_uint_eq(conf.control_clients, 1);
	ck_assert_uint_eq(conf.metrics_clients, 1024);
	ck_assert_int_eq(conf.randomize_case, 0);
	ck_assert_int_eq(conf.serve_stale, 0);
	ck_assert_uint_eq(conf.stale_max_age, 3 * 86400);
	ck_assert_uint_eq(conf.stale_answer_ttl, 10);
	ck_assert_uint_eq(conf.client_timeout, 0);
	ck_assert_uint_eq(conf.stale_refresh_interval, 60);
	ck_assert_int_eq(conf.prefetch, 0);
	ck_assert_int_eq(conf.srv_prefetch_targets, 0);
	ck_assert_str_eq(conf.control, "/tmp/my control.sock");
	ck_assert_uint_eq(conf.control_mode, 0600);
	ck_assert_str_eq(conf.control_group, "nogroup");
	assert_addr(&conf.metrics_listen, "127.0.0.1:9153");
	ck_assert_str_eq(conf.cache_file, "none");
	ck_assert_str_eq(conf.user, "nobody");
	ck_assert_int_eq(conf.log, CONFIG_LOG_SYSLOG);
	/* The first allow replaced loopback; the second added to it. */
	ck_assert_int_eq(conf.allow.builtin, 0);
	ck_assert_uint_eq(conf.allow.acl.n, 3);
	ck_assert_uint_eq(conf.allow.acl.n_ranges[ACL_V4], 2);
	ck_assert_uint_eq(conf.allow.acl.n_ranges[ACL_V6], 1);
	ck_assert_int_eq(conf.allow.acl.loopback, 0);
	ck_assert_uint_eq(conf.exempt_clients.acl.n, 0);
	ck_assert_uint_eq(conf.ratelimit, 50);
	ck_assert_uint_eq(conf.ratelimit_slip, 3);
	ck_assert_uint_eq(conf.ratelimit_size, 100);
	ck_assert_uint_eq(conf.n_forwards, 1);
	fw = &conf.forwards[0];
	ck_assert_int_eq(fw->use_resolv_conf, 0);
	ck_assert_int_eq(fw->policy, CONFIG_POLICY_HASH);
	ck_assert_uint_eq(fw->max_inflight, 5);
	ck_assert_str_eq(fw->where.file, "x.conf");
	ck_assert_int_eq(fw->where.line, 41);
	/* The first hosts-file replaces /etc/hosts, the next adds to it. */
	ck_assert_uint_eq(conf.n_hosts_files, 2);
	ck_assert_str_eq(conf.hosts_files[0], "/etc/hosts.local");
	ck_assert_str_eq(conf.hosts_files[1], "/etc/more hosts");
	ck_assert_uint_eq(conf.n_local_zones, 2);
	ck_assert_str_eq(conf.local_zones[0].zone, "corp.example.");
	ck_assert_int_eq(conf.local_zones[0].type, CONFIG_LOCAL_STATIC);
	ck_assert_int_eq(conf.local_zones[0].where.line, 44);
	ck_assert_str_eq(conf.local_zones[1].zone, "10.in-addr.arpa.");
	ck_assert_int_eq(conf.local_zones[1].type, CONFIG_LOCAL_NODEFAULT);
	ck_assert_uint_eq(conf.n_local_data, 2);
	/* ldns's presentation format, the owner as written, the name of
	 * the owner folded for lookups. */
	ck_assert_str_eq(conf.local_data[0].rr,
	    "WWW.corp.example. 300 IN A 10.1.2.3");
	ck_assert_str_eq(conf.local_data[0].owner, "www.corp.example.");
	ck_assert_uint_eq(conf.local_data[0].type, 1);
	ck_assert_int_eq(conf.local_data[0].where.line, 46);
	/* \" for a quote in TXT data, \\ for a backslash; no TTL: 3600 s,
	 * no class: IN. */
	ck_assert_str_eq(conf.local_data[1].rr,
	    "txt.corp.example. 3600 IN TXT \"a \\\" b\"");
	ck_assert_uint_eq(conf.local_data[1].type, 16);
	config_free(&conf);
	load_ok("hosts-file none\nforward . { upstream 192.0.2.1 }\n", &conf);
	ck_assert_uint_eq(conf.n_hosts_files, 0);
	config_free(&conf);
}
END_TEST

/* Range ends are valid; one upstream-timeout value sets both. */
START_TEST(test_range_ends)
{
	struct config conf;

	load_ok("cache-size 64k\n"
	    "max-ttl 2147483647\n"
	    "min-ttl 1h\n"
	    "max-negative-ttl 0\n"
	    "failure-ttl 5m\n"
	    "edns-buffer-size 512\n"
	    "upstream-timeout 60s\n"
	    "query-timeout 1m\n"
	    "tcp-idle-timeout 1000ms\n"
	    "forward . { upstream 192.0.2.1 }\n", &conf);
	ck_assert_uint_eq(conf.cache_size, 65536);
	ck_assert_uint_eq(conf.max_ttl, 2147483647);
	ck_assert_uint_eq(conf.min_ttl, 3600);
	ck_assert_uint_eq(conf.max_negative_ttl, 0);
	ck_assert_uint_eq(conf.failure_ttl, 300);
	ck_assert_uint_eq(conf.edns_buffer_size, 512);
	ck_assert_uint_eq(conf.upstream_timeout_min, 60000);
	ck_assert_uint_eq(conf.upstream_timeout_max, 60000);
	ck_assert_uint_eq(conf.query_timeout, 60000);
	ck_assert_uint_eq(conf.tcp_idle_timeout, 1000);
	config_free(&conf);
	load_ok("cache-size 1024g\nforward . { upstream 192.0.2.1 }\n",
	    &conf);
	ck_assert_uint_eq(conf.cache_size, 1ULL << 40);
	config_free(&conf);
}
END_TEST

START_TEST(test_forward_one_line)
{
	struct config conf;
	const struct config_forward *fw;

	load_ok("forward corp.example { upstream 10.0.0.53 10.0.1.53:5353  "
	    "policy order }\n"
	    "forward B.example{upstream [2001:db8::1]:5353;policy random}\n"
	    "forward . { upstream 192.0.2.1 }\n", &conf);
	ck_assert_uint_eq(conf.n_forwards, 3);
	fw = &conf.forwards[0];
	ck_assert_str_eq(fw->zone, "corp.example.");
	ck_assert_int_eq(fw->where.line, 1);
	ck_assert_uint_eq(fw->n_upstreams, 2);
	assert_addr(&fw->upstreams[0], "10.0.0.53:53");
	assert_addr(&fw->upstreams[1], "10.0.1.53:5353");
	ck_assert_int_eq(fw->policy, CONFIG_POLICY_ORDER);
	fw = &conf.forwards[1];
	ck_assert_str_eq(fw->zone, "b.example.");
	ck_assert_uint_eq(fw->n_upstreams, 1);
	assert_addr(&fw->upstreams[0], "[2001:db8::1]:5353");
	ck_assert_int_eq(fw->policy, CONFIG_POLICY_RANDOM);
	config_free(&conf);
}
END_TEST

START_TEST(test_forward_multi_line)
{
	struct config conf;
	const struct config_forward *fw;

	testutil_write(NULL, "resolv.conf", "nameserver 192.0.2.53\n");
	load_ok("forward Corp.Example.   # the brace may come later\n"
	    "\n"
	    "{\n"
	    "\tupstream 10.0.0.53\n"
	    "\tupstream 10.0.1.53:5353 10.0.2.53\n"
	    "\tpolicy random\n"
	    "}\n"
	    "forward consul {\n"
	    "\tupstream 127.0.0.1:8600\n"
	    "}\n"
	    "forward . {\n"
	    "\tupstream resolv.conf\n"
	    "}\n"
	    "resolv-conf resolv.conf\n", &conf);
	fw = find_forward(&conf, "corp.example.");
	ck_assert_int_eq(fw->where.line, 1);
	ck_assert_uint_eq(fw->n_upstreams, 3);
	assert_addr(&fw->upstreams[2], "10.0.2.53:53");
	ck_assert_int_eq(fw->policy, CONFIG_POLICY_RANDOM);
	fw = find_forward(&conf, "consul.");
	ck_assert_int_eq(fw->policy, CONFIG_POLICY_ORDER);
	fw = find_forward(&conf, ".");
	ck_assert_int_eq(fw->use_resolv_conf, 1);
	ck_assert_int_eq(fw->where.line, 11);
	ck_assert_uint_eq(fw->n_upstreams, 1);
	assert_addr(&fw->upstreams[0], "192.0.2.53:53");
	ck_assert_uint_eq(conf.n_forwards, 3);
	config_free(&conf);
}
END_TEST

/* Each bad file and the exact lines it must produce. */
static const struct error_case {
	const char	*conf;
	const char	*errs;
} error_cases[] = {
	{ "cahce-size 64m\n",
	  "x.conf:1: unknown directive \"cahce-size\"\n" },
	{ "cache-size 12q\n",
	  "x.conf:1: cache-size: \"12q\" is not a size (digits with optional "
	  "k, m or g)\n" },
	{ "cache-size 32k\n",
	  "x.conf:1: cache-size: 32k is out of range (64k to 1024g)\n" },
	{ "cache-size -1\n",
	  "x.conf:1: cache-size: \"-1\" is not a size (digits with optional "
	  "k, m or g)\n" },
	{ "\n\nmax-ttl 0s\n",
	  "x.conf:3: max-ttl: 0s is out of range (1s to 2147483647s)\n" },
	{ "max-ttl 2147483648\n",
	  "x.conf:1: max-ttl: 2147483648 is out of range (1s to "
	  "2147483647s)\n" },
	/* 2^64 ms does not fit: an overflow is out of range too. */
	{ "max-ttl 99999999999999999999\n",
	  "x.conf:1: max-ttl: 99999999999999999999 is out of range (1s to "
	  "2147483647s)\n" },
	{ "max-ttl 213503982335d\n",
	  "x.conf:1: max-ttl: 213503982335d is out of range (1s to "
	  "2147483647s)\n" },
	{ "max-ttl 1x\n",
	  "x.conf:1: max-ttl: \"1x\" is not a duration (digits with optional "
	  "ms, s, m, h or d)\n" },
	{ "max-ttl 1S\n",
	  "x.conf:1: max-ttl: \"1S\" is not a duration (digits with optional "
	  "ms, s, m, h or d)\n" },
	{ "max-ttl 1500ms\n",
	  "x.conf:1: max-ttl: 1500ms is not a whole number of seconds\n" },
	{ "max-ttl\n",
	  "x.conf:1: max-ttl: missing value\n" },
	{ "max-ttl 1s 2s\n",
	  "x.conf:1: max-ttl: unexpected \"2s\"\n" },
	{ "min-ttl 2h\n",
	  "x.conf:1: min-ttl: 2h is out of range (0s to 1h)\n" },
	{ "max-negative-ttl 25h\n",
	  "x.conf:1: max-negative-ttl: 25h is out of range (0s to 1d)\n" },
	{ "failure-ttl 0\n",
	  "x.conf:1: failure-ttl: 0 is out of range (1s to 5m)\n" },
	{ "edns-buffer-size 511\n",
	  "x.conf:1: edns-buffer-size: 511 is out of range (512 to 4k)\n" },
	{ "upstream-timeout 5ms\n",
	  "x.conf:1: upstream-timeout: 5ms is out of range (10ms to 1m)\n" },
	{ "upstream-timeout 3s 1s\n",
	  "x.conf:1: upstream-timeout: minimum 3s is greater than maximum "
	  "1s\n" },
	{ "upstream-timeout 1s 2s 3s\n",
	  "x.conf:1: upstream-timeout: unexpected \"3s\"\n" },
	{ "query-timeout 99ms\n",
	  "x.conf:1: query-timeout: 99ms is out of range (100ms to 1m)\n" },
	{ "tcp-clients ten\n",
	  "x.conf:1: tcp-clients: \"ten\" is not a number\n" },
	{ "tcp-clients 1k\n",
	  "x.conf:1: tcp-clients: \"1k\" is not a number\n" },
	{ "tcp-clients 0\n",
	  "x.conf:1: tcp-clients: 0 is out of range (1 to 100000)\n" },
	{ "tcp-idle-timeout 2h\n",
	  "x.conf:1: tcp-idle-timeout: 2h is out of range (1s to 1h)\n" },
	{ "tcp-initial-timeout 50ms\n",
	  "x.conf:1: tcp-initial-timeout: 50ms is out of range (100ms to "
	  "1h)\n" },
	{ "max-inflight 1000001\n",
	  "x.conf:1: max-inflight: 1000001 is out of range (1 to 1000000)\n" },
	{ "max-waiters 0\n",
	  "x.conf:1: max-waiters: 0 is out of range (1 to 1000000)\n" },
	{ "metrics-clients 1025\n",
	  "x.conf:1: metrics-clients: 1025 is out of range (1 to 1024)\n" },
	{ "randomize-case maybe\n",
	  "x.conf:1: randomize-case: \"maybe\" is not yes or no\n" },
	{ "resolv-conf \"\"\n",
	  "x.conf:1: resolv-conf: empty value\n" },
	{ "resolv-conf\n",
	  "x.conf:1: resolv-conf: missing value\n" },
	{ "cache-size 1m\n# again:\ncache-size 2m\n",
	  "x.conf:3: duplicate directive \"cache-size\" (first at "
	  "x.conf:1)\n" },
	{ "listen 300.1.1.1:53\n",
	  "x.conf:1: listen: \"300.1.1.1:53\" is not an address: not a "
	  "numeric IPv4 or IPv6 address\n" },
	{ "listen 127.0.0.1:0\n",
	  "x.conf:1: listen: \"127.0.0.1:0\" is not an address: port must be "
	  "a number from 1 to 65535\n" },
	{ "listen\n",
	  "x.conf:1: listen: missing address\n" },
	{ "listen 127.0.0.1\nlisten ::1 127.0.0.1:53\n",
	  "x.conf:2: listen: duplicate address 127.0.0.1:53\n" },
	{ "forward corp.example {\n}\n",
	  "x.conf:1: forward \"corp.example.\": no upstream\n" },
	{ "forward corp.example { policy random }\n",
	  "x.conf:1: forward \"corp.example.\": no upstream\n" },
	{ "forward { upstream 192.0.2.1 }\n",
	  "x.conf:1: forward: missing zone\n" },
	{ "forward a b { upstream 192.0.2.1 }\n",
	  "x.conf:1: forward: unexpected \"b\"\n" },
	{ "forward a..b { upstream 192.0.2.1 }\n",
	  "x.conf:1: forward: \"a..b\" is not a domain name\n" },
	{ "forward \"\" { upstream 192.0.2.1 }\n",
	  "x.conf:1: forward: \"\" is not a domain name\n" },
	{ "forward corp.example\nmax-ttl 1h\n",
	  "x.conf:1: forward \"corp.example.\": missing \"{\"\n" },
	{ "forward A { upstream 192.0.2.1 }\nforward a. { upstream "
	  "192.0.2.2 }\n",
	  "x.conf:2: forward \"a.\": duplicate zone (first at x.conf:1)\n" },
	{ "forward a {\n  upstream 192.0.2.1\n  polcy order\n}\n",
	  "x.conf:3: unknown directive \"polcy\" in forward block\n" },
	{ "forward a { upstream 192.0.2.1; policy fastes }\n",
	  "x.conf:1: policy: \"fastes\" is not order, random, fastest or "
	  "hash\n" },
	{ "client-timeout 61s\n",
	  "x.conf:1: client-timeout: 61s is out of range (0s to 1m)\n" },
	{ "stale-max-age 31d\n",
	  "x.conf:1: stale-max-age: 31d is out of range (0s to 30d)\n" },
	{ "stale-answer-ttl 0\n",
	  "x.conf:1: stale-answer-ttl: 0 is out of range (1s to 1h)\n" },
	{ "serve-stale maybe\n",
	  "x.conf:1: serve-stale: \"maybe\" is not yes or no\n" },
	{ "last-known-good maybe\n",
	  "x.conf:1: last-known-good: \"maybe\" is not yes or no\n" },
	{ "last-known-good-hold 0\n",
	  "x.conf:1: last-known-good-hold: 0 is out of range (1s to 1d)\n" },
	{ "forward b { upstream 192.0.2.1\n last-known-good-hold 2d }\n",
	  "x.conf:2: last-known-good-hold: 2d is out of range (1s to 1d)\n" },
	{ "forward b { upstream 192.0.2.1\n last-known-good perhaps }\n",
	  "x.conf:2: last-known-good: \"perhaps\" is not yes or no\n" },
	{ "control-mode 0999\n",
	  "x.conf:1: control-mode: \"0999\" is not an octal mode from 0 to "
	  "0777\n" },
	{ "control-mode rw\n",
	  "x.conf:1: control-mode: \"rw\" is not an octal mode from 0 to "
	  "0777\n" },
	{ "metrics-listen 300.1.1.1\n",
	  "x.conf:1: metrics-listen: \"300.1.1.1\" is not an address: not a "
	  "numeric IPv4 or IPv6 address\n" },
	{ "log journal\n",
	  "x.conf:1: log: \"journal\" is not stderr or syslog\n" },
	{ "forward b { upstream 192.0.2.1; max-inflight 2000000 }\n",
	  "x.conf:1: max-inflight: 2000000 is out of range (0 to 1000000)\n" },
	{ "max-inflight 100\n"
	  "forward a { upstream 192.0.2.1 max-inflight 60 }\n"
	  "forward b { upstream 192.0.2.1 max-inflight 50 }\n"
	  "forward . { upstream 192.0.2.1 }\n",
	  "x.conf:3: forward \"b.\": max-inflight 50: the zones would need "
	  "110 of max-inflight 100\n" },
	{ "max-inflight 100\n"
	  "forward a { upstream 192.0.2.1 max-inflight 100 }\n"
	  "forward . { upstream 192.0.2.1 }\n",
	  "x.conf:1: max-inflight 100 leaves less than 1 for each of the 1 "
	  "zones without their own\n" },
	{ "forward a {\n upstream 192.0.2.1\n policy order\n"
	  " policy random\n}\n",
	  "x.conf:4: duplicate directive \"policy\" (first at x.conf:3)\n" },
	{ "forward a { upstream }\n",
	  "x.conf:1: upstream: missing address\n" },
	{ "forward a { upstream nameserver1 }\n",
	  "x.conf:1: upstream: \"nameserver1\" is not an address: not a "
	  "numeric IPv4 or IPv6 address\n" },
	{ "forward a { upstream 192.0.2.1 192.0.2.1:53 }\n",
	  "x.conf:1: upstream: duplicate address 192.0.2.1:53\n" },
	{ "forward a { upstream 192.0.2.1 resolv.conf }\n",
	  "x.conf:1: upstream: resolv.conf cannot be combined with "
	  "addresses\n" },
	{ "forward a {\n upstream resolv.conf\n upstream 192.0.2.1\n}\n",
	  "x.conf:3: upstream: resolv.conf cannot be combined with "
	  "addresses\n" },
	{ "forward a { upstream resolv.conf resolv.conf }\n",
	  "x.conf:1: upstream: duplicate resolv.conf\n" },
	{ "forward a {\n  upstream 192.0.2.1\n",
	  "x.conf:2: missing \"}\" for forward block opened at line 1\n" },
	{ "max-ttl 1h\n}\n",
	  "x.conf:2: unexpected \"}\"\n" },
	{ "{ max-ttl 1h }\n",
	  "x.conf:1: unexpected \"{\"\n" },
	{ "max-ttl 1h {\n  max-ttl 2h\n}\n",
	  "x.conf:1: unexpected \"{\"\n" },
	/* An unknown block is one error, not one per line inside it. */
	{ "server {\n  port 53\n}\nmax-ttl 1h\n",
	  "x.conf:1: unknown directive \"server\"\n" },
	{ "cache-size \"64m\nmax-ttl 1h\n",
	  "x.conf:1: unterminated string\n" },
	{ "min-ttl 1h\nmax-ttl 30m\n",
	  "x.conf:2: min-ttl 1h is greater than max-ttl 30m\n" },
	{ "max-ttl 30m\nmin-ttl 1h\n",
	  "x.conf:2: min-ttl 1h is greater than max-ttl 30m\n" },
	{ "query-timeout 1s\nupstream-timeout 2s 3s\n",
	  "x.conf:2: upstream-timeout minimum 2s is greater than "
	  "query-timeout 1s\n" },
	{ "upstream-timeout 5s 10s\n",
	  "x.conf:1: upstream-timeout minimum 5s is greater than "
	  "query-timeout 4s\n" },
	{ "include\n",
	  "x.conf:1: include: missing pattern\n" },
	{ "hosts-file\n",
	  "x.conf:1: hosts-file: missing path\n" },
	{ "hosts-file etc/hosts\n",
	  "x.conf:1: hosts-file: \"etc/hosts\" is not an absolute path\n" },
	{ "hosts-file /a /b\n",
	  "x.conf:1: hosts-file: unexpected \"/b\"\n" },
	{ "hosts-file /a\nhosts-file /a\n",
	  "x.conf:2: hosts-file: duplicate file \"/a\"\n" },
	{ "hosts-file none\nhosts-file /a\n",
	  "x.conf:2: hosts-file: none cannot be combined with files\n" },
	{ "hosts-file /a\nhosts-file none\n",
	  "x.conf:2: hosts-file: none cannot be combined with files\n" },
	{ "local-zone\n",
	  "x.conf:1: local-zone: missing zone\n" },
	{ "local-zone corp.example\n",
	  "x.conf:1: local-zone: missing type\n" },
	{ "local-zone corp.example static nxdomain\n",
	  "x.conf:1: local-zone: unexpected \"nxdomain\"\n" },
	{ "local-zone a..b static\n",
	  "x.conf:1: local-zone: \"a..b\" is not a domain name\n" },
	{ "local-zone corp.example always_nxdomain\n",
	  "x.conf:1: local-zone: \"always_nxdomain\" is not static, nxdomain, "
	  "refuse, transparent or nodefault\n" },
	{ "local-zone Corp.Example static\nlocal-zone corp.example. refuse\n",
	  "x.conf:2: local-zone \"corp.example.\": duplicate zone (first at "
	  "x.conf:1)\n" },
	/* 11/8 is no private range: there is no default to remove. */
	{ "local-zone 11.in-addr.arpa nodefault\n",
	  "x.conf:1: local-zone \"11.in-addr.arpa.\": nodefault: not a zone "
	  "served by default\n" },
	{ "local-data\n",
	  "x.conf:1: local-data: missing record\n" },
	{ "local-data a.example. A 192.0.2.1\n",
	  "x.conf:1: local-data: unexpected \"A\"\n" },
	{ "\nlocal-data \"www.example. 300 IN A 300.1.1.1\"\n",
	  "x.conf:2: local-data: \"www.example. 300 IN A 300.1.1.1\" is not a "
	  "resource record: Syntax error, could not parse the RR's rdata\n" },
	{ "local-data \"www.example. 300 IN BOGUS 1\"\n",
	  "x.conf:1: local-data: \"www.example. 300 IN BOGUS 1\" is not a "
	  "resource record: Syntax error, could not parse the RR's rdata\n" },
	{ "local-data \"www.example. 300 CH TXT \\\"x\\\"\"\n",
	  "x.conf:1: local-data: class CH is not IN\n" },
	/* ldns, without an origin, reads "@" as the root and $ORIGIN as a
	 * name "$ORIGIN." of type 0 (reserved, RFC 6895 §3.1) */
	{ "local-data \"@ A 192.0.2.1\"\n",
	  "x.conf:1: local-data: \"@\": there is no origin; give the record's "
	  "name\n" },
	{ "local-data \" $ORIGIN example.\"\n",
	  "x.conf:1: local-data: \"$ORIGIN\" is a zone file directive, not a "
	  "record\n" },
	{ "local-data \"x.example. TYPE0 \\# 0\"\n",
	  "x.conf:1: local-data: type TYPE0 is not data (RFC 6895 section "
	  "3.1)\n" },
	/* RFC 2181 §10.1: a CNAME and nothing else at its name, whichever
	 * comes first; one CNAME at most. */
	{ "local-data \"x.example. CNAME y.example.\"\n"
	  "local-data \"y.example. A 192.0.2.1\"\n"
	  "local-data \"X.Example. A 192.0.2.1\"\n",
	  "x.conf:3: local-data \"x.example.\": a CNAME and other data (RFC "
	  "2181 section 10.1); first at x.conf:1\n" },
	{ "local-data \"x.example. TXT hello\"\n"
	  "local-data \"x.example. CNAME y.example.\"\n",
	  "x.conf:2: local-data \"x.example.\": a CNAME and other data (RFC "
	  "2181 section 10.1); first at x.conf:1\n" },
	{ "local-data \"x.example. CNAME y.example.\"\n"
	  "local-data \"x.example. CNAME z.example.\"\n",
	  "x.conf:2: local-data \"x.example.\": a CNAME and other data (RFC "
	  "2181 section 10.1); first at x.conf:1\n" },
	{ "include a.conf b.conf\n",
	  "x.conf:1: include: unexpected \"b.conf\"\n" },
	{ "include missing.conf\n",
	  "x.conf:1: include: cannot open \"missing.conf\": No such file or "
	  "directory\n" },
	{ "include .\n",
	  "x.conf:1: include: cannot open \".\": Is a directory\n" },
	{ "allow\n",
	  "x.conf:1: allow: missing network\n" },
	{ "allow 10.0.0.0/8 foo\n",
	  "x.conf:1: allow: \"foo\" is not a network: not an IPv4 or IPv6 "
	  "address\n" },
	{ "allow 10.0.0.0/33\n",
	  "x.conf:1: allow: \"10.0.0.0/33\" is not a network: the prefix "
	  "length is not a number from 0 to 32\n" },
	{ "allow 2001:db8::/129\n",
	  "x.conf:1: allow: \"2001:db8::/129\" is not a network: the prefix "
	  "length is not a number from 0 to 128\n" },
	{ "allow 10.0.0.1/8\n",
	  "x.conf:1: allow: \"10.0.0.1/8\" is not a network: bits are set "
	  "past the prefix length (10.0.0.0/8?)\n" },
	{ "allow none\n",
	  "x.conf:1: allow: \"none\" is not a network: not an IPv4 or IPv6 "
	  "address\n" },
	{ "exempt-clients\n",
	  "x.conf:1: exempt-clients: missing network\n" },
	{ "exempt-clients none 127.0.0.1\n",
	  "x.conf:1: exempt-clients: none cannot be combined with networks\n" },
	{ "exempt-clients 127.0.0.1/24\n",
	  "x.conf:1: exempt-clients: \"127.0.0.1/24\" is not a network: bits "
	  "are set past the prefix length (127.0.0.0/24?)\n" },
	{ "exempt-clients ::1\nexempt-clients 127.0.0.1\n",
	  "x.conf:2: duplicate directive \"exempt-clients\" (first at "
	  "x.conf:1)\n" },
	{ "ratelimit 1000001\n",
	  "x.conf:1: ratelimit: 1000001 is out of range (0 to 1000000)\n" },
	{ "ratelimit lots\n",
	  "x.conf:1: ratelimit: \"lots\" is not a number\n" },
	{ "ratelimit-slip 11\n",
	  "x.conf:1: ratelimit-slip: 11 is out of range (0 to 10)\n" },
	{ "ratelimit-size 0\n",
	  "x.conf:1: ratelimit-size: 0 is out of range (1 to 1000000)\n" },
	{ "ratelimit-size 1000001\n",
	  "x.conf:1: ratelimit-size: 1000001 is out of range (1 to "
	  "1000000)\n" },
	/* Beyond loopback, an allow must say for whom: at the line of the
	 * first listen address beyond loopback, also in an include. */
	{ "listen 127.0.0.1\nlisten 0.0.0.0:5353 [::]:5353\n",
	  "x.conf:2: listen 0.0.0.0:5353 is not a loopback address, but no "
	  "\"allow\" line admits a client beyond loopback: add \"allow "
	  "NETWORK/LEN\" for the clients it serves\n" },
	{ "listen [::]\nallow 127.0.0.1 ::1\n",
	  "x.conf:1: listen [::]:53 is not a loopback address, but no "
	  "\"allow\" line admits a client beyond loopback: add \"allow "
	  "NETWORK/LEN\" for the clients it serves\n" },
	{ "allow 127.0.0.0/8\n\nlisten 192.0.2.1:53\n",
	  "x.conf:3: listen 192.0.2.1:53 is not a loopback address, but no "
	  "\"allow\" line admits a client beyond loopback: add \"allow "
	  "NETWORK/LEN\" for the clients it serves\n" },
	/* RFC 8310 strict: a TLS upstream needs a name or a pin. */
	{ "forward . { upstream tls://192.0.2.1 }\n",
	  "x.conf:1: forward \".\": upstream tls://192.0.2.1:853 has neither "
	  "a name (#NAME) nor a tls-pin to authenticate it by (RFC 8310: "
	  "\"tls://ADDRESS#NAME\", with no blank before #; or say tls-auth "
	  "none)\n" },
	/* After a blank, # starts a comment, and so is all after it. */
	{ "forward . {\nupstream tls://192.0.2.1 #dns.example\n}\n",
	  "x.conf:1: forward \".\": upstream tls://192.0.2.1:853 has neither "
	  "a name (#NAME) nor a tls-pin to authenticate it by (RFC 8310: "
	  "\"tls://ADDRESS#NAME\", with no blank before #; or say tls-auth "
	  "none)\n" },
	{ "forward . {\nupstream \"tls://192.0.2.1#dns.example\"\n"
	  "tls-ca missing.pem\n}\n",
	  "x.conf:1: forward \".\": tls-ca missing.pem: holds no CA "
	  "certificate, or cannot be read\n" },
	{ "forward . {\nupstream \"tls://192.0.2.1#dns.example\"\n"
	  "tls-ca empty.pem\n}\n",
	  "x.conf:1: forward \".\": tls-ca empty.pem: holds no CA "
	  "certificate, or cannot be read\n" },
	{ "forward . {\nupstream \"tls://192.0.2.1#\"\n}\n",
	  "x.conf:2: upstream: \"\" is not a domain name\n" },
	/* The port after the name would make it one no certificate has. */
	{ "forward . {\nupstream tls://192.0.2.1#dns.example:853\n}\n",
	  "x.conf:2: upstream: \"tls://192.0.2.1#dns.example:853\": a port "
	  "goes before the name: tls://ADDRESS:PORT#NAME\n" },
	{ "forward . {\nupstream \"tls://192.0.2.1#.\"\n}\n",
	  "x.conf:2: upstream: \"tls://192.0.2.1#.\": the name after # cannot "
	  "be the root\n" },
	{ "forward . {\nupstream tls://192.0.2.1:853 192.0.2.1:853\n"
	  "tls-auth none\n}\n",
	  "x.conf:2: upstream: duplicate address 192.0.2.1:853\n" },
	{ "forward . {\nupstream tls://192.0.2.1\ntls-pin sha256/abc\n}\n",
	  "x.conf:3: tls-pin: \"sha256/abc\" is not sha256/ and the base64 of "
	  "32 octets (RFC 7469)\n" },
	{ "forward . {\nupstream tls://192.0.2.1\ntls-pin "
	  "md5/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n}\n",
	  "x.conf:3: tls-pin: \"md5/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"
	  "=\" is not sha256/ and the base64 of 32 octets (RFC 7469)\n" },
	{ "forward . {\nupstream tls://192.0.2.1\ntls-pin "
	  "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= "
	  "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n}\n",
	  "x.conf:3: tls-pin: duplicate pin "
	  "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n" },
	{ "forward . {\nupstream 192.0.2.1\ntls-pin "
	  "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n}\n",
	  "x.conf:1: forward \".\": tls-pin without a tls:// upstream\n" },
	{ "forward . {\nupstream 192.0.2.1\ntls-ca /etc/ssl/x.pem\n}\n",
	  "x.conf:1: forward \".\": tls-ca without a tls:// upstream\n" },
	{ "forward . {\nupstream tls://192.0.2.1\ntls-auth maybe\n}\n",
	  "x.conf:3: tls-auth: \"maybe\" is not strict or none\n" },
	{ "forward . {\nupstream tls://192.0.2.1\ntls-auth none\n"
	  "tls-max-inflight 0\ntls-idle-timeout 50ms\n}\n",
	  "x.conf:4: tls-max-inflight: 0 is out of range (1 to 65535)\n"
	  "x.conf:5: tls-idle-timeout: 50ms is out of range (100ms to 1h)\n" },
	/* One TLS upstream, one set of TLS settings, whichever block. */
	{ "forward a.example {\nupstream \"tls://192.0.2.1#dns.example\"\n"
	  "tls-pin sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n}\n"
	  "forward . {\nupstream \"tls://192.0.2.1#dns.example\"\n"
	  "tls-auth none\n}\n",
	  "x.conf:5: forward \".\": upstream tls://192.0.2.1:853 has other "
	  "TLS settings (tls-ca, tls-pin, tls-auth, tls-max-inflight, "
	  "tls-idle-timeout) in forward \"a.example.\" at x.conf:1: one "
	  "upstream has one set\n" },
	{ "dnstap tap.sock\n",
	  "x.conf:1: dnstap: \"tap.sock\" is not an absolute path\n" },
	{ "dnstap file:tap\n",
	  "x.conf:1: dnstap: \"tap\" is not an absolute path\n" },
	/* sun_path: 108 octets with the NUL. */
	{ "dnstap /" "0123456789012345678901234567890123456789"
	  "0123456789012345678901234567890123456789"
	  "012345678901234567890123456\n",
	  "x.conf:1: dnstap: \"/" "0123456789012345678901234567890123456789"
	  "0123456789012345678901234567890123456789"
	  "012345678901234567890123456\" is longer than a unix socket path "
	  "can be (107 octets)\n" },
	{ "dnstap-messages\n",
	  "x.conf:1: dnstap-messages: missing message type\n" },
	{ "dnstap-messages client-query resolver-query\n",
	  "x.conf:1: dnstap-messages: \"resolver-query\" is not "
	  "client-query, client-response, forwarder-query or "
	  "forwarder-response\n" },
	{ "dnstap-messages client-query client-query\n",
	  "x.conf:1: dnstap-messages: client-query given twice\n" },
	{ "log-queries\n",
	  "x.conf:1: log-queries: missing yes, no or N/M\n" },
	{ "log-queries 1/0\n",
	  "x.conf:1: log-queries: \"1/0\" is not yes, no or a fraction N/M "
	  "of queries (1 <= N <= M <= 1000000)\n" },
	{ "log-queries 2/1\n",
	  "x.conf:1: log-queries: \"2/1\" is not yes, no or a fraction N/M "
	  "of queries (1 <= N <= M <= 1000000)\n" },
	{ "log-queries 1/2000000\n",
	  "x.conf:1: log-queries: \"1/2000000\" is not yes, no or a fraction "
	  "N/M of queries (1 <= N <= M <= 1000000)\n" },
	/* Three errors: three lines, reading goes on after each. */
	{ "cahce-size 1m\ncache-size 12q\nmax-ttl 0s\nmin-ttl 1m\n",
	  "x.conf:1: unknown directive \"cahce-size\"\n"
	  "x.conf:2: cache-size: \"12q\" is not a size (digits with optional "
	  "k, m or g)\n"
	  "x.conf:3: max-ttl: 0s is out of range (1s to 2147483647s)\n" },
};

START_TEST(test_errors)
{
	testutil_write(NULL, "empty.pem", "");
	load_fails(error_cases[_i].conf, error_cases[_i].errs);
}
END_TEST

/*
 * tls://ADDRESS[:PORT][#NAME]: port 853 by default (RFC 7858 §3.1), the
 * name kept without its final dot (the SNI's form, RFC 6066 §3); the
 * pin's 32 octets are SHA-256's of nothing, e3b0c442... in base64. A #
 * inside a word is part of it: quoted or not, #NAME is read.
 */
START_TEST(test_forward_tls)
{
	static const uint8_t empty_sha256[CONFIG_TLS_PIN_LEN] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb,
		0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4,
		0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52,
		0xb8, 0x55
	};
	struct config conf;
	const struct config_forward *fw;
	struct testutil_capture c;

	load_ok("forward b.example {\n"
	    "\tupstream \"tls://192.0.2.1#dns.example\"\n"
	    "\ttls-pin sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
	    "\ttls-max-inflight 8\n"
	    "\ttls-idle-timeout 5s\n"
	    "}\n"
	    "forward . {\n"
	    "\tupstream tls://192.0.2.1#DNS.Example. 192.0.2.2\n"
	    "\tupstream tls://[2001:db8::1]:8853\n"
	    "\ttls-pin sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
	    "\ttls-max-inflight 8\n"
	    "\ttls-idle-timeout 5s\n"
	    "}\n", &conf);
	fw = &conf.forwards[1];
	ck_assert_uint_eq(fw->n_upstreams, 3);
	ck_assert_uint_eq(fw->n_tls, 2);
	assert_addr(&fw->upstreams[0], "192.0.2.1:853");
	assert_addr(&fw->upstreams[1], "192.0.2.2:53");
	assert_addr(&fw->upstreams[2], "[2001:db8::1]:8853");
	ck_assert_str_eq(fw->tls[0].name, "dns.example");
	ck_assert_ptr_null(fw->tls[1].name);
	ck_assert_ptr_null(config_tls_upstream(fw, &fw->upstreams[1]));
	ck_assert_ptr_eq(config_tls_upstream(fw, &fw->upstreams[2]),
	    &fw->tls[1]);
	ck_assert_uint_eq(fw->n_tls_pins, 1);
	ck_assert_mem_eq(fw->tls_pins[0], empty_sha256, CONFIG_TLS_PIN_LEN);
	ck_assert_int_eq(fw->tls_auth, CONFIG_TLS_AUTH_STRICT);
	ck_assert_uint_eq(fw->tls_max_inflight, 8);
	ck_assert_uint_eq(fw->tls_idle_timeout, 5000);
	testutil_capture_start(&c);
	printconf_write(&conf, c.fp);
	ck_assert_ptr_nonnull(strstr(testutil_capture_end(&c),
	    "forward . {\n"
	    "\tupstream tls://192.0.2.1:853#dns.example 192.0.2.2:53 "
	    "tls://[2001:db8::1]:8853\n"
	    "\tpolicy order\n"
	    "\tmax-inflight 0\n"
	    "\tlast-known-good no\n"
	    "\tlast-known-good-hold 1m\n"
	    "\ttls-auth strict\n"
	    "\ttls-max-inflight 8\n"
	    "\ttls-idle-timeout 5s\n"
	    "\ttls-pin sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
	    "}\n"));
	testutil_capture_free(&c);
	config_free(&conf);
}
END_TEST

START_TEST(test_cannot_open_top)
{
	struct config conf;
	char *errs;

	ck_assert_int_eq(load_file("nope.conf", &conf, &errs), -1);
	ck_assert_str_eq(errs, "nope.conf: cannot open: No such file or "
	    "directory\n");
	free(errs);
}
END_TEST

START_TEST(test_include_glob)
{
	struct config conf;

	testutil_mkdir(NULL, "conf.d");
	testutil_write("conf.d", "b.conf", "listen 127.0.0.1:1002\n");
	testutil_write("conf.d", "a.conf", "listen 127.0.0.1:1001\n");
	testutil_write("conf.d", "c.txt", "listen 127.0.0.1:1003\n");
	load_ok("listen 127.0.0.1:1000\n"
	    "include conf.d/*.conf\n"
	    "include nothing.d/*.conf\n"
	    "forward . { upstream 192.0.2.1 }\n", &conf);
	/* Matches are read in sorted order, at the include. */
	ck_assert_uint_eq(conf.n_listen, 3);
	assert_addr(&conf.listen[0], "127.0.0.1:1000");
	assert_addr(&conf.listen[1], "127.0.0.1:1001");
	assert_addr(&conf.listen[2], "127.0.0.1:1002");
	config_free(&conf);
}
END_TEST

/* An include is relative to the including file, not the working directory. */
START_TEST(test_include_relative)
{
	struct config conf;
	char *errs;

	testutil_mkdir(NULL, "etc");
	testutil_mkdir("etc", "sub");
	testutil_write(NULL, "inc.conf", "max-ttl 1h\n");
	testutil_write("etc", "inc.conf",
	    "max-ttl 2h\ninclude sub/deep.conf\n");
	testutil_write("etc/sub", "deep.conf", "min-ttl 1m\n");
	testutil_write("etc", "main.conf",
	    "include inc.conf\nforward . { upstream 192.0.2.1 }\n");
	ck_assert_int_eq(load_file("etc/main.conf", &conf, &errs), 0);
	ck_assert_str_eq(errs, "");
	free(errs);
	ck_assert_uint_eq(conf.max_ttl, 7200);
	ck_assert_uint_eq(conf.min_ttl, 60);
	config_free(&conf);

	/* Messages name the included file and its own lines. */
	testutil_write("etc/sub", "deep.conf", "\nmax-ttl 3h\ncahce 1\n");
	ck_assert_int_eq(load_file("etc/main.conf", &conf, &errs), -1);
	ck_assert_str_eq(errs,
	    "etc/sub/deep.conf:2: duplicate directive \"max-ttl\" (first at "
	    "etc/inc.conf:1)\n"
	    "etc/sub/deep.conf:3: unknown directive \"cahce\"\n");
	free(errs);

	/* The listen beyond loopback is where it was given; an allow in
	 * another file covers it. */
	testutil_write("etc/sub", "deep.conf", "\nlisten [::]:5353\n");
	ck_assert_int_eq(load_file("etc/main.conf", &conf, &errs), -1);
	ck_assert_str_eq(errs,
	    "etc/sub/deep.conf:2: listen [::]:5353 is not a loopback "
	    "address, but no \"allow\" line admits a client beyond loopback: "
	    "add \"allow NETWORK/LEN\" for the clients it serves\n");
	free(errs);
	testutil_write("etc", "main.conf", "include inc.conf\n"
	    "allow 2001:db8::/32\nforward . { upstream 192.0.2.1 }\n");
	ck_assert_int_eq(load_file("etc/main.conf", &conf, &errs), 0);
	free(errs);
	config_free(&conf);
}
END_TEST

START_TEST(test_include_missing)
{
	struct config conf;
	char *errs;

	testutil_mkdir(NULL, "etc");
	testutil_write("etc", "main.conf", "max-ttl 1h\n\ninclude gone.conf\n");
	ck_assert_int_eq(load_file("etc/main.conf", &conf, &errs), -1);
	ck_assert_str_eq(errs, "etc/main.conf:3: include: cannot open "
	    "\"etc/gone.conf\": No such file or directory\n");
	free(errs);
}
END_TEST

START_TEST(test_include_loop)
{
	load_fails("include x.conf\n",
	    "x.conf:1: include: nested more than 16 levels deep (an include "
	    "loop?)\n");
	/* x.conf at depth 16 is where the loop is caught. */
	testutil_write(NULL, "a.conf", "include x.conf\n");
	load_fails("\ninclude a.conf\n",
	    "x.conf:2: include: nested more than 16 levels deep (an include "
	    "loop?)\n");
}
END_TEST

/* Sixteen levels below the top file are allowed. */
START_TEST(test_include_depth)
{
	struct config conf;
	char name[32], text[64];
	int i;

	for (i = 1; i <= 16; i++) {
		snprintf(name, sizeof(name), "%d.conf", i);
		if (i < 16)
			snprintf(text, sizeof(text), "include %d.conf\n",
			    i + 1);
		else
			snprintf(text, sizeof(text), "max-inflight 16\n");
		testutil_write(NULL, name, text);
	}
	load_ok("include 1.conf\nforward . { upstream 192.0.2.1 }\n", &conf);
	ck_assert_uint_eq(conf.max_inflight, 16);
	config_free(&conf);
	testutil_write(NULL, "16.conf", "include 17.conf\n");
	testutil_write(NULL, "17.conf", "max-inflight 17\n");
	load_fails("include 1.conf\nforward . { upstream 192.0.2.1 }\n",
	    "16.conf:1: include: nested more than 16 levels deep (an include "
	    "loop?)\n");
}
END_TEST

/* The loop guard: our own listen address is not an upstream. */
START_TEST(test_resolv_conf_self)
{
	struct config conf;
	const struct config_forward *fw;

	testutil_write(NULL, "resolv.conf",
	    "# generated\n"
	    "search example.com\n"
	    "nameserver 127.0.0.1\n"
	    "nameserver 127.0.0.2\n"
	    "; another comment\n"
	    "options edns0\n");
	load_ok("listen 127.0.0.1:53\nresolv-conf resolv.conf\n", &conf);
	fw = find_forward(&conf, ".");
	ck_assert_uint_eq(fw->n_upstreams, 1);
	assert_addr(&fw->upstreams[0], "127.0.0.2:53");
	config_free(&conf);
}
END_TEST

/* The same guard for upstreams named explicitly. */
START_TEST(test_explicit_upstream_loop)
{
	load_fails("listen 127.0.0.1:5353\n"
	    "forward . { upstream 127.0.0.9:5353 127.0.0.1:5353 }\n",
	    "x.conf:2: forward \".\": upstream 127.0.0.1:5353 would loop: it "
	    "is our listen address 127.0.0.1:5353\n");
	load_fails("listen 0.0.0.0:5353\n"
	    "forward example { upstream 127.0.0.2:5353 }\n"
	    "forward . { upstream 127.0.0.1:53 }\n"
	    "allow 192.0.2.0/24\n",
	    "x.conf:2: forward \"example.\": upstream 127.0.0.2:5353 would "
	    "loop: it is a loopback address and we listen on 0.0.0.0:5353\n");
}
END_TEST

START_TEST(test_resolv_conf_no_usable)
{
	testutil_write(NULL, "resolv.conf",
	    "nameserver 127.0.0.1\nnameserver ::1\n");
	/* The implicit forward has no line: the message has none either. */
	load_fails("resolv-conf resolv.conf\n",
	    "x.conf: forward \".\": no usable nameserver in resolv.conf (all "
	    "are our own listen addresses)\n");
	load_fails("resolv-conf resolv.conf\n\nforward . {\n"
	    "\tupstream resolv.conf\n}\n",
	    "x.conf:3: forward \".\": no usable nameserver in resolv.conf (all "
	    "are our own listen addresses)\n");
	/* No nameserver line means 127.0.0.1 (resolv.conf(5)): us again. */
	testutil_write(NULL, "resolv.conf", "search example.com\n");
	load_fails("resolv-conf resolv.conf\n",
	    "x.conf: forward \".\": no usable nameserver in resolv.conf (all "
	    "are our own listen addresses)\n");
}
END_TEST

START_TEST(test_resolv_conf_missing)
{
	load_fails("resolv-conf nope.conf\n"
	    "forward a { upstream resolv.conf }\n",
	    "x.conf:2: forward \"a.\": cannot read nope.conf: No such file or "
	    "directory\n"
	    "x.conf: forward \".\": cannot read nope.conf: No such file or "
	    "directory\n");
}
END_TEST

/* A non-loopback IPv4 address of a local interface, if there is one. */
static int
local_ipv4(char *buf, size_t len)
{
	struct ifaddrs *ifa, *i;
	struct sockaddr_in *sin;
	int found = 0;

	ck_assert_int_eq(getifaddrs(&ifa), 0);
	for (i = ifa; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		sin = (struct sockaddr_in *)(void *)i->ifa_addr;
		if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127)
			continue;
		inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)len);
		found = 1;
	}
	freeifaddrs(ifa);
	return found;
}

/* Listening on 0.0.0.0:53 also catches loopback and local addresses. */
START_TEST(test_resolv_conf_wildcard)
{
	struct config conf;
	const struct config_forward *fw;
	char local[INET_ADDRSTRLEN], text[256];
	int have_local = local_ipv4(local, sizeof(local));

	snprintf(text, sizeof(text),
	    "nameserver 127.0.0.53\n"
	    "nameserver %s\n"
	    "nameserver 192.0.2.1\n"
	    "nameserver 192.0.2.1\n"
	    "nameserver ::1\n"
	    "nameserver fe80::1%%lo\n"
	    "nameserver not-an-address\n", have_local ? local : "127.0.0.1");
	testutil_write(NULL, "resolv.conf", text);
	load_ok("listen 0.0.0.0:53\nresolv-conf resolv.conf\n"
	    "allow 192.0.2.0/24\n", &conf);
	fw = find_forward(&conf, ".");
	/* ::1 stays: we listen on IPv4 only. */
	ck_assert_uint_eq(fw->n_upstreams, 3);
	assert_addr(&fw->upstreams[0], "192.0.2.1:53");
	assert_addr(&fw->upstreams[1], "[::1]:53");
	assert_addr(&fw->upstreams[2], "[fe80::1%lo]:53");
	config_free(&conf);

	/* A wildcard on another port is not where resolv.conf points. */
	load_ok("listen 0.0.0.0:5353\nresolv-conf resolv.conf\n"
	    "allow 192.0.2.0/24\n", &conf);
	fw = find_forward(&conf, ".");
	ck_assert_uint_eq(fw->n_upstreams, 5);
	assert_addr(&fw->upstreams[0], "127.0.0.53:53");
	config_free(&conf);
}
END_TEST

START_TEST(test_resolvconf_read)
{
	struct addr self, *out;
	const char *errstr;
	size_t n;

	ck_assert_int_eq(resolvconf_read("nope", NULL, 0, &out, &n), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(resolvconf_read(".", NULL, 0, &out, &n), -1);
	ck_assert_int_eq(errno, EISDIR);

	testutil_write(NULL, "r.conf", "nameserver 192.0.2.1 # comment\n"
	    "  nameserver\t2001:db8::53\n#nameserver 192.0.2.9\n"
	    "nameserver\n");
	ck_assert_int_eq(resolvconf_read("r.conf", NULL, 0, &out, &n), 0);
	ck_assert_uint_eq(n, 2);
	assert_addr(&out[0], "192.0.2.1:53");
	assert_addr(&out[1], "[2001:db8::53]:53");
	free(out);

	ck_assert_int_eq(addr_parse("[2001:db8::53]:53", 53, &self, &errstr),
	    0);
	ck_assert_int_eq(resolvconf_read("r.conf", &self, 1, &out, &n), 0);
	ck_assert_uint_eq(n, 1);
	assert_addr(&out[0], "192.0.2.1:53");
	free(out);
}
END_TEST

/* The canonical form, every value explicit, in the largest exact unit. */
START_TEST(test_print_canonical)
{
	struct config conf;
	struct testutil_capture c;

	testutil_write(NULL, "resolv.conf", "nameserver 192.0.2.1\n"
	    "nameserver 192.0.2.2\n");
	load_ok("forward Consul { upstream 127.0.0.1:8600 }\n"
	    "upstream-timeout 1500ms\n"
	    "min-ttl 120\n"
	    "max-ttl 86400s\n"
	    "cache-size 1536k\n"
	    "resolv-conf resolv.conf\n"
	    "listen [::1]:5300\n", &conf);
	testutil_capture_start(&c);
	printconf_write(&conf, c.fp);
	ck_assert_str_eq(testutil_capture_end(&c),
	    "resolv-conf resolv.conf\n"
	    "cache-size 1536k\n"
	    "threads 0\n"
	    "max-ttl 1d\n"
	    "min-ttl 2m\n"
	    "max-negative-ttl 1h\n"
	    "failure-ttl 5s\n"
	    "edns-buffer-size 1232\n"
	    "upstream-timeout 1500ms\n"
	    "query-timeout 4s\n"
	    "tcp-clients 256\n"
	    "tcp-idle-timeout 10s\n"
	    "tcp-initial-timeout 3s\n"
	    "max-inflight 1024\n"
	    "max-waiters 1000\n"
	    "retry-budget 10\n"
	    "retry-budget-min 20\n"
	    "ratelimit 0\n"
	    "ratelimit-slip 2\n"
	    "ratelimit-size 10000\n"
	    "randomize-case yes\n"
	    "serve-stale yes\n"
	    "stale-max-age 1d\n"
	    "stale-answer-ttl 30s\n"
	    "client-timeout 1800ms\n"
	    "stale-refresh-interval 30s\n"
	    "prefetch yes\n"
	    "srv-prefetch-targets yes\n"
	    "last-known-good no\n"
	    "last-known-good-hold 1m\n"
	    "control /run/dnsdamper/control.sock\n"
	    "control-mode 0660\n"
	    "control-group none\n"
	    "control-clients 16\n"
	    "metrics-listen none\n"
	    "metrics-clients 16\n"
	    "cache-file /var/lib/dnsdamper/cache.dump\n"
	    "user dnsdamper\n"
	    "log stderr\n"
	    "dnstap none\n"
	    "dnstap-identity none\n"
	    "dnstap-version none\n"
	    "dnstap-messages client-response forwarder-response\n"
	    "log-queries no\n"
	    "allow 127.0.0.0/8 ::1/128\n"
	    "exempt-clients 127.0.0.0/8 ::1/128\n"
	    "listen [::1]:5300\n"
	    "hosts-file /etc/hosts\n"
	    "\n"
	    "forward consul. {\n"
	    "\tupstream 127.0.0.1:8600\n"
	    "\tpolicy order\n"
	    "\tmax-inflight 0\n"
	    "\tlast-known-good no\n"
	    "\tlast-known-good-hold 1m\n"
	    "}\n"
	    "\n"
	    "forward . {\n"
	    "\tupstream resolv.conf\n"
	    "\t# from resolv.conf: 192.0.2.1:53 192.0.2.2:53\n"
	    "\tpolicy order\n"
	    "\tmax-inflight 0\n"
	    "\tlast-known-good no\n"
	    "\tlast-known-good-hold 1m\n"
	    "}\n");
	testutil_capture_free(&c);
	config_free(&conf);
}
END_TEST

/* Printed, read back, printed again: the same config and the same text. */
START_TEST(test_print_round_trip)
{
	struct config a, b;
	struct testutil_capture c1, c2;
	char *errs;

	testutil_write(NULL, "resolv conf", "nameserver 192.0.2.1\n"
	    "nameserver fe80::1%lo\n");
	load_ok("listen 127.0.0.1:5300 [::1]:5300 0.0.0.0:5353\n"
	    "allow 192.0.2.0/24 ::ffff:10.0.0.0/104\n"
	    "allow 2001:db8::/32 127.0.0.1\n"
	    "exempt-clients none\n"
	    "ratelimit 1000000\n"
	    "ratelimit-slip 0\n"
	    "ratelimit-size 1\n"
	    "resolv-conf \"resolv conf\"\n"
	    "cache-size 1g\n"
	    "max-ttl 2147483647\n"
	    "min-ttl 0\n"
	    "max-negative-ttl 0\n"
	    "failure-ttl 300\n"
	    "edns-buffer-size 4096\n"
	    "upstream-timeout 10ms 60s\n"
	    "query-timeout 100ms\n"
	    "tcp-clients 1\n"
	    "tcp-idle-timeout 3599999ms\n"
	    "max-inflight 1000000\n"
	    "randomize-case no\n"
	    "serve-stale no\n"
	    "stale-max-age 0\n"
	    "stale-answer-ttl 1h\n"
	    "client-timeout 1ms\n"
	    "stale-refresh-interval 1s\n"
	    "prefetch no\n"
	    "srv-prefetch-targets no\n"
	    "dnstap \"file:/var/log/dns tap\"\n"
	    "dnstap-identity \"host 1\"\n"
	    "dnstap-version v9\n"
	    "dnstap-messages forwarder-query client-query\n"
	    "log-queries 3/1000\n"
	    "forward corp.example { upstream 10.0.0.53 10.0.1.53:5353 "
	    "policy fastest max-inflight 10 }\n"
	    "forward 10.in-addr.arpa { upstream [2001:db8::1]:53 }\n"
	    "forward Lab.Corp.Example. { upstream resolv.conf }\n"
	    "hosts-file none\n"
	    "local-zone \"my zone.example\" transparent\n"
	    "local-zone 168.192.in-addr.arpa nodefault\n"
	    "local-data \"_sip._tcp.example. SRV 10 20 5060 sip.example.\"\n"
	    "local-data \"txt.example. 0 TXT \\\"a;b#c \\\\\\\"q\\\" x\"\n",
	    &a);
	testutil_capture_start(&c1);
	printconf_write(&a, c1.fp);
	testutil_write(NULL, "printed.conf", testutil_capture_end(&c1));
	ck_assert_int_eq(load_file("printed.conf", &b, &errs), 0);
	ck_assert_str_eq(errs, "");
	free(errs);
	assert_config_equal(&a, &b);
	testutil_capture_start(&c2);
	printconf_write(&b, c2.fp);
	ck_assert_str_eq(testutil_capture_end(&c2), c1.text);
	testutil_capture_free(&c1);
	testutil_capture_free(&c2);
	config_free(&a);
	config_free(&b);

	/* The defaults round-trip too. */
	testutil_write(NULL, "resolv.conf", "nameserver 192.0.2.1\n");
	load_ok("resolv-conf resolv.conf\n", &a);
	testutil_capture_start(&c1);
	printconf_write(&a, c1.fp);
	testutil_write(NULL, "printed.conf", testutil_capture_end(&c1));
	testutil_capture_free(&c1);
	ck_assert_int_eq(load_file("printed.conf", &b, &errs), 0);
	free(errs);
	assert_config_equal(&a, &b);
	config_free(&a);
	config_free(&b);
}
END_TEST

/* Quoting: #, ; and braces are literal inside double quotes. */
START_TEST(test_quoted_strings)
{
	struct config conf;

	testutil_write(NULL, "a#b;{c}\"d\\", "nameserver 192.0.2.1\n");
	load_ok("resolv-conf \"a#b;{c}\\\"d\\\\\" # a comment\n", &conf);
	ck_assert_str_eq(conf.resolv_conf, "a#b;{c}\"d\\");
	ck_assert_uint_eq(conf.forwards[0].n_upstreams, 1);
	config_free(&conf);
}
END_TEST

/* Every default is a value its directive's table entry accepts. */
static void
assert_defaults_valid(const struct directive *table, const void *base)
{
	const struct directive *d;
	const struct config_name *n;
	const char *str;
	uint64_t v;

	for (d = table; d->name != NULL; d++) {
		if (d->kind == DIRECTIVE_SPECIAL)
			continue;
		if (d->kind == DIRECTIVE_STRING) {
			str = *(char *const *)((const char *)base + d->offset);
			ck_assert_msg(str != NULL && *str != '\0',
			    "%s has no default", d->name);
			continue;
		}
		v = directive_get(d, base, d->offset);
		if (d->kind == DIRECTIVE_ENUM) {
			for (n = d->names; n->name != NULL; n++)
				if ((uint64_t)n->value == v)
					break;
			ck_assert_msg(n->name != NULL, "%s: %llu has no name",
			    d->name, (unsigned long long)v);
			continue;
		}
		ck_assert_msg(v >= d->min && v <= d->max, "%s: %llu is out of "
		    "range", d->name, (unsigned long long)v);
		if (d->flags & DIRECTIVE_PAIR)
			ck_assert_msg(directive_get(d, base, d->offset_max) >=
			    v && directive_get(d, base, d->offset_max) <=
			    d->max, "%s: maximum out of range", d->name);
	}
}

/*
 * last-known-good and its hold: a forward block that does not say gets
 * the top level's, wherever in the file that is given; one that says
 * keeps its own.
 */
START_TEST(test_last_known_good_inherited)
{
	struct config conf;

	load_ok("forward svc.example { upstream 192.0.2.1 }\n"
	    "forward other.example { upstream 192.0.2.1\n"
	    "  last-known-good no\n  last-known-good-hold 5s }\n"
	    "forward held.example { upstream 192.0.2.1\n"
	    "  last-known-good-hold 2m }\n"
	    "last-known-good yes\n"
	    "last-known-good-hold 90s\n", &conf);
	ck_assert_int_eq(conf.last_known_good, 1);
	ck_assert_uint_eq(conf.last_known_good_hold, 90);
	ck_assert_uint_eq(conf.n_forwards, 4);
	ck_assert_int_eq(conf.forwards[0].last_known_good, 1);
	ck_assert_uint_eq(conf.forwards[0].last_known_good_hold, 90);
	ck_assert_int_eq(conf.forwards[1].last_known_good, 0);
	ck_assert_uint_eq(conf.forwards[1].last_known_good_hold, 5);
	ck_assert_int_eq(conf.forwards[2].last_known_good, 1);
	ck_assert_uint_eq(conf.forwards[2].last_known_good_hold, 120);
	/* the implied forward . too */
	ck_assert_int_eq(conf.forwards[3].last_known_good, 1);
	config_free(&conf);
}
END_TEST

/* The defaults live in config.c, the ranges in parse.c: they agree. */
START_TEST(test_defaults_in_range)
{
	struct config conf;
	struct config_forward fw;
	uint32_t hold;
	int lkg;

	ck_assert_int_eq(config_defaults(&conf), 0);
	assert_defaults_valid(parse_top, &conf);
	lkg = conf.last_known_good;
	hold = conf.last_known_good_hold;
	config_free(&conf);
	config_forward_defaults(&fw);
	/* not given: config_validate gives them the top level's */
	ck_assert_int_eq(fw.last_known_good, -1);
	ck_assert_uint_eq(fw.last_known_good_hold, 0);
	fw.last_known_good = lkg;
	fw.last_known_good_hold = hold;
	assert_defaults_valid(parse_forward_block, &fw);
	config_forward_free(&fw);
}
END_TEST

/* A report that writes "file:line msg" or "[directive] msg" lines. */
static void __attribute__((format(printf, 4, 0)))
record_error(void *arg, const struct config_where *where,
    const char *directive, const char *fmt, va_list ap)
{
	FILE *fp = arg;

	if (where != NULL)
		fprintf(fp, "%s:%d ", where->file, where->line);
	else {
		/* The reader looks the name up in its table. */
		ck_assert_ptr_nonnull(directive_lookup(parse_top, directive));
		fprintf(fp, "[%s] ", directive);
	}
	vfprintf(fp, fmt, ap);
	fputc('\n', fp);
}

/* Report into c: r as a reader would fill it, recording what it gets. */
static void
record_start(struct testutil_capture *c, struct config_report *r)
{
	testutil_capture_start(c);
	r->error = record_error;
	r->arg = c->fp;
}

/* A forward for zone at t.conf:line, its upstreams from addrs (or none). */
static void
add_forward(struct config *conf, const char *zone, int line,
    const char *const *addrs, uint32_t max_inflight)
{
	struct config_forward fw;
	struct addr a;
	const char *errstr;

	config_forward_defaults(&fw);
	ck_assert_ptr_nonnull(fw.zone = strdup(zone));
	ck_assert_ptr_nonnull(fw.where.file = strdup("t.conf"));
	fw.where.line = line;
	fw.max_inflight = max_inflight;
	fw.use_resolv_conf = addrs == NULL;
	for (; addrs != NULL && *addrs != NULL; addrs++) {
		ck_assert_int_eq(addr_parse(*addrs, 53, &a, &errstr), 0);
		ck_assert_int_eq(config_add_addr(&fw.upstreams,
		    &fw.n_upstreams, &a), 0);
	}
	ck_assert_int_eq(config_add_forward(conf, &fw), 0);
}

/* Replace a string directive's value, as a reader would. */
static void
set_str(char **field, const char *value)
{
	free(*field);
	ck_assert_ptr_nonnull(*field = strdup(value));
}

/*
 * config_validate without the parser: it names the forward's where or the
 * directive, and the reader places the message.
 */
START_TEST(test_validate_report)
{
	static const char *const up[] = { "192.0.2.1", NULL };
	struct config conf;
	struct config_report r;
	struct testutil_capture c;

	ck_assert_int_eq(config_defaults(&conf), 0);
	conf.max_inflight = 10;
	add_forward(&conf, "a.", 4, up, 6);
	add_forward(&conf, "b.", 7, up, 5);
	ck_assert_int_eq(config_implicit(&conf, "t.conf"), 0);
	set_str(&conf.control_mode_str, "0999");
	set_str(&conf.metrics_listen_str, "::1");
	record_start(&c, &r);
	config_validate(&conf, &r);
	/* At b., 6 + 5 is more than 10, before "." (implied, last) counts. */
	ck_assert_str_eq(testutil_capture_end(&c),
	    "t.conf:7 forward \"b.\": max-inflight 5: the zones would need "
	    "11 of max-inflight 10\n"
	    "[control-mode] control-mode: \"0999\" is not an octal mode from "
	    "0 to 0777\n");
	testutil_capture_free(&c);
	/* A valid value is stored, and its string made canonical. */
	assert_addr(&conf.metrics_listen, "[::1]:9153");
	ck_assert_str_eq(conf.metrics_listen_str, "[::1]:9153");

	/* 6 + 3 leaves 1 for ".". */
	set_str(&conf.control_mode_str, "600");
	conf.forwards[1].max_inflight = 3;
	record_start(&c, &r);
	config_validate(&conf, &r);
	ck_assert_str_eq(testutil_capture_end(&c), "");
	testutil_capture_free(&c);
	ck_assert_uint_eq(conf.control_mode, 0600);
	ck_assert_str_eq(conf.control_mode_str, "0600");
	config_free(&conf);
}
END_TEST

/* resolvconf_apply without the parser: errors at the forward's where. */
START_TEST(test_resolvconf_apply)
{
	static const char *const loop[] = { "192.0.2.1", "127.0.0.1", NULL };
	struct config conf;
	struct config_report r;
	struct testutil_capture c;
	const struct config_forward *fw;

	testutil_write(NULL, "resolv.conf", "nameserver 127.0.0.1\n"
	    "nameserver 192.0.2.53\n");
	ck_assert_int_eq(config_defaults(&conf), 0);
	set_str(&conf.resolv_conf, "resolv.conf");
	add_forward(&conf, "a.", 2, loop, 0);
	ck_assert_int_eq(config_implicit(&conf, "t.conf"), 0);
	record_start(&c, &r);
	resolvconf_apply(&conf, &r);
	ck_assert_str_eq(testutil_capture_end(&c),
	    "t.conf:2 forward \"a.\": upstream 127.0.0.1:53 would loop: it "
	    "is our listen address 127.0.0.1:53\n");
	testutil_capture_free(&c);
	/* The implied forward got resolv.conf's nameservers but our own. */
	fw = find_forward(&conf, ".");
	ck_assert_uint_eq(fw->n_upstreams, 1);
	assert_addr(&fw->upstreams[0], "192.0.2.53:53");

	/* Again with "." as it was, and resolv.conf gone. */
	set_str(&conf.resolv_conf, "nope.conf");
	conf.forwards[1].n_upstreams = 0;
	record_start(&c, &r);
	resolvconf_apply(&conf, &r);
	ck_assert_str_eq(testutil_capture_end(&c),
	    "t.conf:2 forward \"a.\": upstream 127.0.0.1:53 would loop: it "
	    "is our listen address 127.0.0.1:53\n"
	    "t.conf:0 forward \".\": cannot read nope.conf: No such file or "
	    "directory\n");
	testutil_capture_free(&c);
	config_free(&conf);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_empty_file);
	tcase_add_test(tc, test_every_directive);
	tcase_add_test(tc, test_range_ends);
	tcase_add_test(tc, test_forward_one_line);
	tcase_add_test(tc, test_forward_multi_line);
	tcase_add_loop_test(tc, test_errors, 0,
	    (int)(sizeof(error_cases) / sizeof(error_cases[0])));
	tcase_add_test(tc, test_forward_tls);
	tcase_add_test(tc, test_cannot_open_top);
	tcase_add_test(tc, test_include_glob);
	tcase_add_test(tc, test_include_relative);
	tcase_add_test(tc, test_include_missing);
	tcase_add_test(tc, test_include_loop);
	tcase_add_test(tc, test_include_depth);
	tcase_add_test(tc, test_resolv_conf_self);
	tcase_add_test(tc, test_explicit_upstream_loop);
	tcase_add_test(tc, test_resolv_conf_no_usable);
	tcase_add_test(tc, test_resolv_conf_missing);
	tcase_add_test(tc, test_resolv_conf_wildcard);
	tcase_add_test(tc, test_resolvconf_read);
	tcase_add_test(tc, test_print_canonical);
	tcase_add_test(tc, test_print_round_trip);
	tcase_add_test(tc, test_quoted_strings);
	tcase_add_test(tc, test_defaults_in_range);
	tcase_add_test(tc, test_last_known_good_inherited);
	tcase_add_test(tc, test_validate_report);
	tcase_add_test(tc, test_resolvconf_apply);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(config_suite());
}
