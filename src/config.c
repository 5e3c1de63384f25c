/* config.c: a configuration: defaults, load, validation, resolv.conf, free. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "config.h"
#include "lex.h"
#include "parse.h"
#include "resolvconf.h"

/* The file named in messages about what no file said. */
#define CONFIG_BUILTIN	"(defaults)"

/* Two directives, stored in the same unit, whose values must be lo <= hi. */
static const struct config_order {
	const char	*lo;
	const char	*lo_label;	/* for the message */
	const char	*hi;
} config_orders[] = {
	{ "min-ttl", "min-ttl", "max-ttl" },
	{ "upstream-timeout", "upstream-timeout minimum", "query-timeout" },
};

/* Report an order violated at the later of the two directives given. */
static void
config_check_order(const struct config *conf, struct parse_run *run,
    const struct config_order *o)
{
	const struct parse_directive *lo, *hi;
	const struct parse_seen *at, *at_hi;
	char lo_buf[32], hi_buf[32];
	uint64_t lo_v, hi_v;

	lo = parse_lookup(parse_top, o->lo);
	hi = parse_lookup(parse_top, o->hi);
	lo_v = parse_get(lo, conf, lo->offset);
	hi_v = parse_get(hi, conf, hi->offset);
	if (lo_v <= hi_v)
		return;
	at = parse_seen(run, o->lo);
	at_hi = parse_seen(run, o->hi);
	if (at_hi->order > at->order)
		at = at_hi;
	parse_error(run, at->line > 0 ? at->file : conf->source, at->line,
	    "%s %s is greater than %s %s", o->lo_label,
	    parse_format(lo, lo_v, lo_buf, sizeof(lo_buf)), o->hi,
	    parse_format(hi, hi_v, hi_buf, sizeof(hi_buf)));
}

/* An upstream that is one of our own listen addresses is a loop. */
static void
config_check_loop(const struct config *conf, const struct config_forward *fw,
    struct parse_run *run)
{
	const struct addr *mine;
	const char *why;
	char up[ADDR_STRLEN], me[ADDR_STRLEN];
	size_t i;

	for (i = 0; i < fw->n_upstreams; i++) {
		why = resolvconf_self(&fw->upstreams[i], conf->listen,
		    conf->n_listen, &mine);
		if (why == NULL)
			continue;
		parse_error(run, fw->where.file, fw->where.line,
		    "forward \"%s\": upstream %s would loop: %s %s", fw->zone,
		    addr_format(&fw->upstreams[i], up, sizeof(up)), why,
		    addr_format(mine, me, sizeof(me)));
	}
}

/*
 * Zone budgets must fit in max-inflight, leaving at least one for each
 * zone without its own, so that no zone can take another's share.
 */
static void
config_check_budgets(const struct config *conf, struct parse_run *run)
{
	const struct config_forward *fw;
	const struct parse_seen *at;
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
		parse_error(run, fw->where.file, fw->where.line,
		    "forward \"%s\": max-inflight %u: the zones would need "
		    "%llu of max-inflight %u", fw->zone, fw->max_inflight,
		    (unsigned long long)(sum + shared), conf->max_inflight);
		return;
	}
	at = parse_seen(run, "max-inflight");
	if (sum + shared > conf->max_inflight)
		parse_error(run, at->line > 0 ? at->file : conf->source !=
		    NULL ? conf->source : CONFIG_BUILTIN, at->line,
		    "max-inflight %u leaves less than 1 for each of the %zu "
		    "zones without their own", conf->max_inflight, shared);
}

/* Replace *field with its canonical spelling, as -t -v prints it. */
static void
config_canonical(char **field, const char *canonical, struct parse_run *run)
{
	char *copy;

	if ((copy = strdup(canonical)) == NULL) {
		parse_error(run, CONFIG_BUILTIN, 0, "out of memory");
		return;
	}
	free(*field);
	*field = copy;
}

/* control-mode: octal permissions of the socket, at most 0777. */
static void
config_check_mode(struct config *conf, struct parse_run *run)
{
	const struct parse_seen *at = parse_seen(run, "control-mode");
	char *end, canonical[8];
	unsigned long v;

	v = strtoul(conf->control_mode_str, &end, 8);
	if (conf->control_mode_str[0] >= '0' &&
	    conf->control_mode_str[0] <= '7' && *end == '\0' && v <= 0777) {
		conf->control_mode = (unsigned)v;
		snprintf(canonical, sizeof(canonical), "%04lo", v);
		config_canonical(&conf->control_mode_str, canonical, run);
		return;
	}
	parse_error(run, at->line > 0 ? at->file : CONFIG_BUILTIN, at->line,
	    "control-mode: \"%s\" is not an octal mode from 0 to 0777",
	    conf->control_mode_str);
}

/* metrics-listen: "none" or one address, port required in effect. */
static void
config_check_metrics_listen(struct config *conf, struct parse_run *run)
{
	const struct parse_seen *at = parse_seen(run, "metrics-listen");
	char buf[ADDR_STRLEN];
	const char *errstr;

	memset(&conf->metrics_listen, 0, sizeof(conf->metrics_listen));
	if (strcmp(conf->metrics_listen_str, CONFIG_NONE) == 0)
		return;
	if (addr_parse(conf->metrics_listen_str, 9153, &conf->metrics_listen,
	    &errstr) == -1)
		parse_error(run, at->file, at->line, "metrics-listen: \"%s\" "
		    "is not an address: %s", conf->metrics_listen_str, errstr);
	else
		config_canonical(&conf->metrics_listen_str,
		    addr_format(&conf->metrics_listen, buf, sizeof(buf)), run);
}

/* Append the nameservers of conf->resolv_conf to fw's upstreams. */
static void
config_expand(struct config *conf, struct config_forward *fw,
    struct parse_run *run)
{
	struct addr *ns, *n;
	size_t n_ns;

	if (resolvconf_read(conf->resolv_conf, conf->listen, conf->n_listen,
	    &ns, &n_ns) == -1) {
		parse_error(run, fw->where.file, fw->where.line,
		    "forward \"%s\": cannot read %s: %s", fw->zone,
		    conf->resolv_conf, lex_strerror(errno));
		return;
	}
	if (n_ns == 0) {
		parse_error(run, fw->where.file, fw->where.line,
		    "forward \"%s\": no usable nameserver in %s (all are our "
		    "own listen addresses)", fw->zone, conf->resolv_conf);
		return;
	}
	n = reallocarray(fw->upstreams, fw->n_upstreams + n_ns, sizeof(*n));
	if (n == NULL) {
		parse_error(run, fw->where.file, fw->where.line,
		    "out of memory");
		free(ns);
		return;
	}
	memcpy(n + fw->n_upstreams, ns, n_ns * sizeof(*ns));
	fw->upstreams = n;
	fw->n_upstreams += n_ns;
	free(ns);
}

/* Defaults, the file at path (NULL: none), and what it implies. */
static void
config_read(struct config *conf, const char *path, struct parse_run *run)
{
	const char *file = path != NULL ? path : CONFIG_BUILTIN;
	size_t i;

	if (parse_defaults(parse_top, conf) == -1 ||
	    (path != NULL && (conf->source = strdup(path)) == NULL)) {
		parse_error(run, file, 0, "out of memory");
		return;
	}
	if (path != NULL)
		parse_file(run, path, conf);
	if (parse_implicit(conf, file) == -1) {
		parse_error(run, file, 0, "out of memory");
		return;
	}
	for (i = 0; i < sizeof(config_orders) / sizeof(config_orders[0]);
	    i++)
		config_check_order(conf, run, &config_orders[i]);
	config_check_budgets(conf, run);
	config_check_mode(conf, run);
	config_check_metrics_listen(conf, run);
}

int
config_defaults(struct config *conf)
{
	memset(conf, 0, sizeof(*conf));
	if (parse_defaults(parse_top, conf) == -1 ||
	    parse_implicit(conf, CONFIG_BUILTIN) == -1) {
		config_free(conf);
		return -1;
	}
	return 0;
}

int
config_load(const char *path, struct config *conf, FILE *errs)
{
	struct parse_run run;
	size_t i;
	int errors, valid;

	memset(conf, 0, sizeof(*conf));
	if (parse_run_init(&run, errs) == -1) {
		fprintf(errs, "%s: out of memory\n",
		    path != NULL ? path : CONFIG_BUILTIN);
		return -1;
	}
	config_read(conf, path, &run);
	valid = run.lex.n_errors == 0;
	/*
	 * Which nameservers are our own depends on the listen addresses and
	 * resolv-conf being right: expand only a configuration without error.
	 */
	for (i = 0; valid && i < conf->n_forwards; i++)
		if (conf->forwards[i].use_resolv_conf)
			config_expand(conf, &conf->forwards[i], &run);
		else
			config_check_loop(conf, &conf->forwards[i], &run);
	errors = run.lex.n_errors;
	parse_run_free(&run);
	if (errors > 0) {
		config_free(conf);
		return -1;
	}
	return 0;
}

void
config_free(struct config *conf)
{
	size_t i;

	for (i = 0; i < conf->n_forwards; i++)
		parse_forward_free(&conf->forwards[i]);
	free(conf->forwards);
	free(conf->listen);
	free(conf->source);
	parse_clear(parse_top, conf);
	memset(conf, 0, sizeof(*conf));
}
