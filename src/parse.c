/* parse.c: the dnsdamper.conf grammar: directive table, statements, load. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "directive.h"
#include "lex.h"
#include "parse.h"
#include "parselocal.h"
#include "parselog.h"
#include "parsenet.h"
#include "resolvconf.h"
#include "tlsctx.h"
#include "value.h"

/* Where a top-level directive was first given; line 0: not given. */
struct parse_seen {
	const char	*file;		/* borrowed from the lex */
	int		 line;
	unsigned	 order;		/* 1 for the first directive read,
					 * then increasing */
};

/* Reading one configuration: a file and its includes. */
struct parse_run {
	struct lex		 lex;		/* the files, the errors */
	struct config		*conf;		/* borrowed; being filled */
	const char		*file;		/* borrowed; the top file, or
						 * CONFIG_BUILTIN */
	struct parse_seen	*seen;		/* owned, one per entry of
						 * parse_top */
	unsigned		 order;		/* last parse_seen.order */
	struct config_report	 report;	/* for config and resolvconf */
};

static void	parse_forward(struct parse_run *,
		    const struct directive *, void *,
		    struct directive_stmt *);
static void	parse_include(struct parse_run *,
		    const struct directive *, void *,
		    struct directive_stmt *);
static int	parse_body(struct parse_run *,
		    const struct directive *, void *,
		    struct parse_seen *, const char *, int);

#define PARSE_FIELD(type, f)						\
	.offset = offsetof(type, f), .size = sizeof(((type *)0)->f)

#define PARSE_NUM(n, k, u, f, lo, hi)					\
	{ .name = (n), .kind = (k), .unit = (u),			\
	  PARSE_FIELD(struct config, f), .min = (lo), .max = (hi) }

#define PARSE_BOOL(n, f)						\
	{ .name = (n), .kind = DIRECTIVE_ENUM, PARSE_FIELD(struct config, f),\
	  .names = parse_bool_names }

#define PARSE_STR(n, f)							\
	{ .name = (n), .kind = DIRECTIVE_STRING, PARSE_FIELD(struct config, f) }

#define PARSE_SPECIAL(n, fn)						\
	{ .name = (n), .kind = DIRECTIVE_SPECIAL,			\
	  .flags = DIRECTIVE_REPEAT, .handler = (fn) }

static const struct config_name parse_bool_names[] = {
	{ "yes", 1 },
	{ "no", 0 },
	{ NULL, 0 }
};

/*
 * Scalars first, in the order printconf writes them. The defaults are
 * config_defaults'.
 */
const struct directive parse_top[] = {
	PARSE_STR("resolv-conf", resolv_conf),
	PARSE_NUM("cache-size", DIRECTIVE_SIZE, VALUE_UNIT_BYTES, cache_size,
	    64 * VALUE_KIB, 1024 * VALUE_GIB),
	/* 0: one per CPU we may run on, at most 4; the in-flight index's
	 * bitmask of waiting workers bounds it at 64. */
	PARSE_NUM("threads", DIRECTIVE_NUMBER, VALUE_UNIT_NONE, threads, 0, 64),
	/* RFC 2181 §8: a TTL is at most 2^31 - 1 seconds. */
	PARSE_NUM("max-ttl", DIRECTIVE_DURATION, VALUE_UNIT_S, max_ttl,
	    1, INT32_MAX),
	{ .name = "min-ttl", .kind = DIRECTIVE_DURATION, .unit = VALUE_UNIT_S,
	  PARSE_FIELD(struct config, min_ttl), .min = 0, .max = VALUE_HOUR,
	  .at_most = "max-ttl" },
	/* RFC 2308 §5: a day at most. */
	PARSE_NUM("max-negative-ttl", DIRECTIVE_DURATION, VALUE_UNIT_S,
	    max_negative_ttl, 0, VALUE_DAY),
	/* RFC 9520 §3.2: at least 1 s, at most 5 min. */
	PARSE_NUM("failure-ttl", DIRECTIVE_DURATION, VALUE_UNIT_S, failure_ttl,
	    1, 5 * VALUE_MINUTE),
	/* RFC 6891 §6.2.5: below 512 is treated as 512. */
	PARSE_NUM("edns-buffer-size", DIRECTIVE_SIZE, VALUE_UNIT_BYTES,
	    edns_buffer_size, 512, 4096),
	{ .name = "upstream-timeout", .kind = DIRECTIVE_DURATION,
	  .unit = VALUE_UNIT_MS, .flags = DIRECTIVE_PAIR,
	  PARSE_FIELD(struct config, upstream_timeout_min),
	  .offset_max = offsetof(struct config, upstream_timeout_max),
	  .min = 10, .max = 60000, .at_most = "query-timeout" },
	PARSE_NUM("query-timeout", DIRECTIVE_DURATION, VALUE_UNIT_MS,
	    query_timeout, 100, 60000),
	PARSE_NUM("tcp-clients", DIRECTIVE_NUMBER, VALUE_UNIT_NONE, tcp_clients,
	    1, 100000),
	/* RFC 7766 §6.2.3: idle timeouts of seconds, not minutes. */
	PARSE_NUM("tcp-idle-timeout", DIRECTIVE_DURATION, VALUE_UNIT_MS,
	    tcp_idle_timeout, 1000, 3600000),
	PARSE_NUM("tcp-initial-timeout", DIRECTIVE_DURATION, VALUE_UNIT_MS,
	    tcp_initial_timeout, 100, 3600000),
	PARSE_NUM("max-inflight", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    max_inflight, 1, 1000000),
	PARSE_NUM("max-waiters", DIRECTIVE_NUMBER, VALUE_UNIT_NONE, max_waiters,
	    1, 1000000),
	/* Percent of first queries; 0 with retry-budget-min 0: no retries. */
	PARSE_NUM("retry-budget", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    retry_budget, 0, 100),
	PARSE_NUM("retry-budget-min", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    retry_budget_min, 0, 100000),
	/* 0: off. */
	PARSE_NUM("ratelimit", DIRECTIVE_NUMBER, VALUE_UNIT_NONE, ratelimit,
	    0, 1000000),
	/* BIND's RRL range; 0: every query over the limit dropped. */
	PARSE_NUM("ratelimit-slip", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    ratelimit_slip, 0, 10),
	PARSE_NUM("ratelimit-size", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    ratelimit_size, 1, 1000000),
	PARSE_BOOL("randomize-case", randomize_case),
	PARSE_BOOL("serve-stale", serve_stale),
	PARSE_NUM("stale-max-age", DIRECTIVE_DURATION, VALUE_UNIT_S,
	    stale_max_age, 0, 30 * VALUE_DAY),
	PARSE_NUM("stale-answer-ttl", DIRECTIVE_DURATION, VALUE_UNIT_S,
	    stale_answer_ttl, 1, VALUE_HOUR),
	PARSE_NUM("client-timeout", DIRECTIVE_DURATION, VALUE_UNIT_MS,
	    client_timeout, 0, 60000),
	PARSE_NUM("stale-refresh-interval", DIRECTIVE_DURATION, VALUE_UNIT_S,
	    stale_refresh_interval, 1, VALUE_HOUR),
	PARSE_BOOL("prefetch", prefetch),
	PARSE_BOOL("srv-prefetch-targets", srv_prefetch_targets),
	PARSE_BOOL("last-known-good", last_known_good),
	PARSE_NUM("last-known-good-hold", DIRECTIVE_DURATION, VALUE_UNIT_S,
	    last_known_good_hold, 1, VALUE_DAY),
	PARSE_STR("control", control),
	PARSE_STR("control-mode", control_mode_str),
	PARSE_STR("control-group", control_group),
	PARSE_NUM("control-clients", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    control_clients, 1, 1024),
	PARSE_STR("metrics-listen", metrics_listen_str),
	PARSE_NUM("metrics-clients", DIRECTIVE_NUMBER, VALUE_UNIT_NONE,
	    metrics_clients, 1, 1024),
	PARSE_STR("cache-file", cache_file),
	PARSE_STR("user", user),
	{ .name = "log", .kind = DIRECTIVE_ENUM,
	  PARSE_FIELD(struct config, log), .names = config_log_names },
	PARSE_STR("dnstap", dnstap),
	PARSE_STR("dnstap-identity", dnstap_identity),
	PARSE_STR("dnstap-version", dnstap_version),
	{ .name = "dnstap-messages", .kind = DIRECTIVE_SPECIAL,
	  .names = config_dnstap_message_names,
	  .handler = parselog_dnstap_messages },
	{ .name = "log-queries", .kind = DIRECTIVE_SPECIAL,
	  .handler = parselog_log_queries },
	PARSE_SPECIAL("listen", parsenet_listen),
	{ .name = "allow", .kind = DIRECTIVE_SPECIAL, .flags = DIRECTIVE_REPEAT,
	  PARSE_FIELD(struct config, allow), .handler = parsenet_nets },
	{ .name = "exempt-clients", .kind = DIRECTIVE_SPECIAL,
	  .flags = DIRECTIVE_NONE, PARSE_FIELD(struct config, exempt_clients),
	  .handler = parsenet_nets },
	PARSE_SPECIAL("hosts-file", parselocal_hosts_file),
	{ .name = "local-zone", .kind = DIRECTIVE_SPECIAL,
	  .flags = DIRECTIVE_REPEAT, .names = config_local_type_names,
	  .handler = parselocal_zone },
	PARSE_SPECIAL("local-data", parselocal_data),
	PARSE_SPECIAL("forward", parse_forward),
	PARSE_SPECIAL("include", parse_include),
	{ .name = NULL }
};

const struct directive parse_forward_block[] = {
	PARSE_SPECIAL("upstream", parsenet_upstream),
	{ .name = "policy", .kind = DIRECTIVE_ENUM,
	  PARSE_FIELD(struct config_forward, policy),
	  .names = config_policy_names },
	/* 0: an even share of what the other zones leave of max-inflight. */
	{ .name = "max-inflight", .kind = DIRECTIVE_NUMBER,
	  PARSE_FIELD(struct config_forward, max_inflight),
	  .min = 0, .max = 1000000 },
	{ .name = "last-known-good", .kind = DIRECTIVE_ENUM,
	  PARSE_FIELD(struct config_forward, last_known_good),
	  .names = parse_bool_names },
	{ .name = "last-known-good-hold", .kind = DIRECTIVE_DURATION,
	  .unit = VALUE_UNIT_S,
	  PARSE_FIELD(struct config_forward, last_known_good_hold),
	  .min = 1, .max = VALUE_DAY },
	{ .name = "tls-auth", .kind = DIRECTIVE_ENUM,
	  PARSE_FIELD(struct config_forward, tls_auth),
	  .names = config_tls_auth_names },
	{ .name = "tls-max-inflight", .kind = DIRECTIVE_NUMBER,
	  PARSE_FIELD(struct config_forward, tls_max_inflight),
	  .min = 1, .max = 65535 },
	/* RFC 7766 §6.2.3 leaves it to the client; an hour at most. */
	{ .name = "tls-idle-timeout", .kind = DIRECTIVE_DURATION,
	  .unit = VALUE_UNIT_MS,
	  PARSE_FIELD(struct config_forward, tls_idle_timeout),
	  .min = 100, .max = VALUE_HOUR * 1000 },
	{ .name = "tls-ca", .kind = DIRECTIVE_SPECIAL,
	  .handler = parsenet_tls_ca },
	PARSE_SPECIAL("tls-pin", parsenet_tls_pin),
	{ .name = NULL }
};

static void
parse_stmt_free(struct directive_stmt *st)
{
	size_t i;

	for (i = 0; i < st->n_args; i++)
		free(st->args[i].text);
	free(st->args);
}

/*
 * The arguments of st->key, up to the end of the line or a ";"; before a
 * brace or, in a block, before an unquoted keyword of the block.
 */
static void
parse_collect(struct parse_run *run, const struct directive *table,
    int in_block, struct directive_stmt *st)
{
	struct lex_token t, *n;

	for (;;) {
		lex_next(&run->lex, &t);
		if (t.type == LEX_NEWLINE || t.type == LEX_SEMI)
			return;
		if (t.type != LEX_WORD || (in_block && !t.quoted &&
		    directive_lookup(table, t.text) != NULL)) {
			lex_unget(&run->lex, &t);
			return;
		}
		st->bad |= t.bad;
		n = reallocarray(st->args, st->n_args + 1, sizeof(*n));
		if (n == NULL) {
			lex_error(&run->lex, t.line, "out of memory");
			free(t.text);
			st->bad = 1;
			continue;
		}
		n[st->n_args++] = t;
		st->args = n;
	}
}

/* Skip to the "}" matching one already read. */
static void
parse_skip_block(struct parse_run *run)
{
	struct lex_token t;
	int depth = 1;

	while (depth > 0) {
		lex_next(&run->lex, &t);
		free(t.text);
		if (t.type == LEX_EOF)
			return;
		if (t.type == LEX_LBRACE)
			depth++;
		else if (t.type == LEX_RBRACE)
			depth--;
	}
}

static void
parse_dispatch(struct parse_run *run, const struct directive *table,
    void *base, struct parse_seen *seen, const char *block,
    struct directive_stmt *st)
{
	const struct directive *d;
	struct parse_seen *first;
	int line = st->key.line;

	if ((d = directive_lookup(table, st->key.text)) == NULL) {
		if (block == NULL)
			lex_error(&run->lex, line, "unknown directive \"%s\"",
			    st->key.text);
		else
			lex_error(&run->lex, line, "unknown directive "
			    "\"%s\" in %s block", st->key.text, block);
		return;
	}
	first = &seen[d - table];
	if (first->line != 0 && !(d->flags & DIRECTIVE_REPEAT)) {
		lex_error(&run->lex, line, "duplicate directive \"%s\" (first "
		    "at %s:%d)", d->name, first->file, first->line);
		return;
	}
	if (first->line == 0) {
		first->file = lex_path(&run->lex);
		first->line = line;
		first->order = ++run->order;
	}
	if (d->handler != NULL)
		d->handler(run, d, base, st);
	else
		directive_scalar(d, base, st);
}

/* One directive whose keyword key has been read. */
static void
parse_statement(struct parse_run *run, const struct directive *table,
    void *base, struct parse_seen *seen, const char *block,
    struct lex_token *key)
{
	struct directive_stmt st;
	struct lex_token t;
	int errors = run->lex.n_errors;

	memset(&st, 0, sizeof(st));
	st.lex = &run->lex;
	st.key = *key;
	st.bad = key->bad;
	parse_collect(run, table, block != NULL, &st);
	if (!st.bad)
		parse_dispatch(run, table, base, seen, block, &st);
	parse_stmt_free(&st);
	/* A block after a directive that takes none: skip it whole. */
	lex_next(&run->lex, &t);
	if (t.type == LEX_LBRACE) {
		if (run->lex.n_errors == errors)
			lex_error(&run->lex, t.line, "unexpected \"{\"");
		parse_skip_block(run);
	} else
		lex_unget(&run->lex, &t);
}

/*
 * Directives of table into base up to the "}" closing the block named
 * block opened at open_line, or up to the end of the file when block is
 * NULL. Returns 0, or -1 when a block is not closed.
 */
static int
parse_body(struct parse_run *run, const struct directive *table,
    void *base, struct parse_seen *seen, const char *block, int open_line)
{
	struct lex_token t;

	for (;;) {
		lex_next(&run->lex, &t);
		switch (t.type) {
		case LEX_NEWLINE:
		case LEX_SEMI:
			break;
		case LEX_EOF:
			if (block == NULL)
				return 0;
			lex_error(&run->lex, t.line, "missing \"}\" for %s "
			    "block opened at line %d", block, open_line);
			return -1;
		case LEX_RBRACE:
			if (block != NULL)
				return 0;
			lex_error(&run->lex, t.line, "unexpected \"}\"");
			break;
		case LEX_LBRACE:
			lex_error(&run->lex, t.line, "unexpected \"{\"");
			parse_skip_block(run);
			break;
		case LEX_WORD:
			parse_statement(run, table, base, seen, block, &t);
			free(t.text);
			break;
		}
	}
}

/* The zone of a forward directive, normalized; NULL after an error. */
static char *
parse_zone(struct parse_run *run, const struct directive *d,
    struct directive_stmt *st)
{
	static const char *const what[] = { "zone" };

	if (!directive_nargs(d, st, 1, what))
		return NULL;
	return directive_name(&run->lex, d, st->key.line, st->args[0].text);
}

/*
 * The "{" of a block, possibly on a later line. Returns its line, or 0
 * after reporting it missing (report: not already reported otherwise).
 */
static int
parse_open(struct parse_run *run, const struct directive *d,
    const char *zone, int line)
{
	struct lex_token t;

	do
		lex_next(&run->lex, &t);
	while (t.type == LEX_NEWLINE);
	if (t.type == LEX_LBRACE)
		return t.line;
	if (zone != NULL)
		lex_error(&run->lex, line, "%s \"%s\": missing \"{\"", d->name,
		    zone);
	lex_unget(&run->lex, &t);
	return 0;
}

/*
 * The TLS upstreams of forward block fw: RFC 8310 strict (unless tls-auth
 * none) needs a name or a pin for each, and without pins a CA store that
 * holds a certificate: never a silent skip of the check.
 */
static int
parse_tls_check(struct parse_run *run, const struct directive *d,
    const struct config_forward *fw, int line)
{
	const char *why;
	char buf[ADDR_STRLEN];
	size_t i;

	if (fw->n_tls == 0) {
		if (fw->tls_ca == NULL && fw->n_tls_pins == 0)
			return 0;
		lex_error(&run->lex, line, "%s \"%s\": %s without a tls:// "
		    "upstream", d->name, fw->zone, fw->tls_ca != NULL ?
		    "tls-ca" : "tls-pin");
		return -1;
	}
	if (fw->tls_auth == CONFIG_TLS_AUTH_NONE)
		return 0;
	for (i = 0; i < fw->n_tls; i++) {
		if (fw->tls[i].name != NULL || fw->n_tls_pins > 0)
			continue;
		lex_error(&run->lex, line, "%s \"%s\": upstream tls://%s has "
		    "neither a name (#NAME) nor a tls-pin to authenticate it "
		    "by (RFC 8310: \"tls://ADDRESS#NAME\", with no blank "
		    "before #; or say tls-auth none)", d->name,
		    fw->zone, addr_format(&fw->tls[i].addr, buf, sizeof(buf)));
		return -1;
	}
	if (fw->n_tls_pins == 0 && tlsctx_store_check(fw->tls_ca, &why) ==
	    -1) {
		if (fw->tls_ca != NULL)
			lex_error(&run->lex, line, "%s \"%s\": tls-ca %s: %s",
			    d->name, fw->zone, fw->tls_ca, why);
		else
			lex_error(&run->lex, line, "%s \"%s\": %s", d->name,
			    fw->zone, why);
		return -1;
	}
	return 0;
}

/* 1 if forward blocks a and b reach their TLS upstreams alike. */
static int
parse_same_tls(const struct config_forward *a, const struct config_forward *b)
{
	return a->tls_auth == b->tls_auth &&
	    a->tls_max_inflight == b->tls_max_inflight &&
	    a->tls_idle_timeout == b->tls_idle_timeout &&
	    (a->tls_ca == NULL ? b->tls_ca == NULL : b->tls_ca != NULL &&
	    strcmp(a->tls_ca, b->tls_ca) == 0) &&
	    a->n_tls_pins == b->n_tls_pins && (a->n_tls_pins == 0 ||
	    memcmp(a->tls_pins, b->tls_pins, a->n_tls_pins *
	    sizeof(*a->tls_pins)) == 0);
}

/*
 * A TLS upstream (address and name) is one upstream, with one name in
 * the metrics and one set of connections: other blocks that name it must
 * give it the same TLS settings.
 */
static int
parse_tls_same_elsewhere(struct parse_run *run, const struct directive *d,
    const struct config *conf, const struct config_forward *fw, int line)
{
	const struct config_tls_upstream *mine, *theirs;
	const struct config_forward *other;
	char buf[ADDR_STRLEN];
	size_t i, j;

	for (i = 0; i < fw->n_tls; i++) {
		mine = &fw->tls[i];
		for (j = 0; j < conf->n_forwards; j++) {
			other = &conf->forwards[j];
			theirs = config_tls_upstream(other, &mine->addr);
			if (theirs == NULL || (mine->name == NULL ?
			    theirs->name != NULL : theirs->name == NULL ||
			    strcmp(mine->name, theirs->name) != 0) ||
			    parse_same_tls(fw, other))
				continue;
			lex_error(&run->lex, line, "%s \"%s\": upstream tls://%s "
			    "has other TLS settings (tls-ca, tls-pin, tls-auth, "
			    "tls-max-inflight, tls-idle-timeout) in forward "
			    "\"%s\" at %s:%d: one upstream has one set", d->name,
			    fw->zone, addr_format(&mine->addr, buf, sizeof(buf)),
			    other->zone, other->where.file, other->where.line);
			return -1;
		}
	}
	return 0;
}

/* The checks of a forward block that was read without error. */
static int
parse_forward_check(struct parse_run *run, const struct directive *d,
    const struct config *conf, const struct config_forward *fw, int line)
{
	const struct config_forward *other;
	size_t i;

	for (i = 0; i < conf->n_forwards; i++) {
		other = &conf->forwards[i];
		if (strcmp(other->zone, fw->zone) == 0) {
			lex_error(&run->lex, line, "%s \"%s\": duplicate zone "
			    "(first at %s:%d)", d->name, fw->zone,
			    other->where.file, other->where.line);
			return -1;
		}
	}
	if (fw->n_upstreams == 0 && !fw->use_resolv_conf) {
		lex_error(&run->lex, line, "%s \"%s\": no upstream", d->name,
		    fw->zone);
		return -1;
	}
	if (parse_tls_check(run, d, fw, line) == -1)
		return -1;
	return parse_tls_same_elsewhere(run, d, conf, fw, line);
}

static void
parse_forward(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	struct config *conf = base;
	struct config_forward fw;
	struct parse_seen *seen;
	int errors = run->lex.n_errors, line = st->key.line, open;

	config_forward_defaults(&fw);
	if ((seen = calloc(directive_count(parse_forward_block),
	    sizeof(*seen))) == NULL) {
		lex_error(&run->lex, line, "out of memory");
		goto done;
	}
	fw.zone = parse_zone(run, d, st);
	if ((open = parse_open(run, d, fw.zone, line)) == 0)
		goto done;
	if (parse_body(run, parse_forward_block, &fw, seen, d->name, open) ==
	    -1 || run->lex.n_errors != errors)
		goto done;
	if (parse_forward_check(run, d, conf, &fw, line) == -1)
		goto done;
	fw.where.line = line;
	if ((fw.where.file = strdup(lex_path(&run->lex))) == NULL ||
	    config_add_forward(conf, &fw) == -1) {
		lex_error(&run->lex, line, "out of memory");
		goto done;
	}
	free(seen);
	return;
done:
	free(seen);
	config_forward_free(&fw);
}

/* The body of a file being read, at the top level of the run. */
static void
parse_included(void *arg)
{
	struct parse_run *run = arg;

	parse_body(run, parse_top, run->conf, run->seen, NULL, 0);
}

static void
parse_include(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	static const char *const what[] = { "pattern" };

	(void)base;
	if (directive_nargs(d, st, 1, what))
		lex_include(&run->lex, st->args[0].text, st->key.line,
		    parse_included, run);
}

/*
 * Report through the run what config or resolvconf found: at where, or
 * where directive was first given, or at the top file.
 */
static void __attribute__((format(printf, 4, 0)))
parse_report(void *arg, const struct config_where *where,
    const char *directive, const char *fmt, va_list ap)
{
	struct parse_run *run = arg;
	const struct parse_seen *at;

	if (where != NULL) {
		lex_verror_at(&run->lex, where->file, where->line, fmt, ap);
		return;
	}
	at = &run->seen[directive_lookup(parse_top, directive) - parse_top];
	if (at->line > 0)
		lex_verror_at(&run->lex, at->file, at->line, fmt, ap);
	else
		lex_verror_at(&run->lex, run->file, 0, fmt, ap);
}

/*
 * A value (a pair's minimum) above that of the directive it may not
 * exceed; reported where the later of the two was given.
 */
static void
parse_check_at_most(struct parse_run *run, const struct directive *d)
{
	const struct directive *hi = directive_lookup(parse_top, d->at_most);
	const struct parse_seen *at = &run->seen[d - parse_top];
	const struct parse_seen *at_hi = &run->seen[hi - parse_top];
	char lo_buf[32], hi_buf[32];
	uint64_t lo_v, hi_v;

	lo_v = directive_get(d, run->conf, d->offset);
	hi_v = directive_get(hi, run->conf, hi->offset);
	if (lo_v <= hi_v)
		return;
	if (at_hi->order > at->order)
		at = at_hi;
	lex_error_at(&run->lex, at->line > 0 ? at->file : run->file, at->line,
	    "%s%s %s is greater than %s %s", d->name,
	    (d->flags & DIRECTIVE_PAIR) ? " minimum" : "",
	    directive_format(d, lo_v, lo_buf, sizeof(lo_buf)), hi->name,
	    directive_format(hi, hi_v, hi_buf, sizeof(hi_buf)));
}

/* The defaults, the file at path (NULL: none), what they imply, checked. */
static void
parse_read(struct parse_run *run, const char *path)
{
	struct config *conf = run->conf;
	const struct directive *d;

	if (config_defaults(conf) == -1 ||
	    (path != NULL && (conf->source = strdup(path)) == NULL)) {
		lex_error_at(&run->lex, run->file, 0, "out of memory");
		return;
	}
	if (path != NULL)
		lex_read(&run->lex, path, parse_included, run);
	if (config_implicit(conf, run->file) == -1) {
		lex_error_at(&run->lex, run->file, 0, "out of memory");
		return;
	}
	for (d = parse_top; d->name != NULL; d++)
		if (d->at_most != NULL)
			parse_check_at_most(run, d);
	config_validate(conf, &run->report);
}

int
parse_load(const char *path, struct config *conf, FILE *errs)
{
	struct parse_run run;
	int errors;

	memset(conf, 0, sizeof(*conf));
	memset(&run, 0, sizeof(run));
	lex_init(&run.lex, errs);
	run.conf = conf;
	run.file = path != NULL ? path : CONFIG_BUILTIN;
	run.report.error = parse_report;
	run.report.arg = &run;
	if ((run.seen = calloc(directive_count(parse_top),
	    sizeof(*run.seen))) == NULL)
		lex_error_at(&run.lex, run.file, 0, "out of memory");
	else
		parse_read(&run, path);
	/*
	 * Which nameservers are our own depends on the listen addresses and
	 * resolv-conf being right: apply only a configuration without error.
	 */
	if (run.lex.n_errors == 0)
		resolvconf_apply(conf, &run.report);
	errors = run.lex.n_errors;
	lex_free(&run.lex);
	free(run.seen);
	if (errors > 0) {
		config_free(conf);
		return -1;
	}
	return 0;
}
