/* parse.c: the dnsdamper.conf grammar: directive table, statements, load. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "acl.h"
#include "addr.h"
#include "config.h"
#include "lex.h"
#include "parse.h"
#include "resolvconf.h"
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

struct parse_stmt {
	struct lex_token	 key;	/* borrowed */
	struct lex_token	*args;	/* owned, texts too */
	size_t			 n_args;
	int			 bad;	/* a token had a lexer error */
};

static void	parse_listen(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_forward(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_nets(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_include(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_upstream(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_hosts_file(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_local_zone(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static void	parse_local_data(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_stmt *);
static int	parse_body(struct parse_run *,
		    const struct parse_directive *, void *,
		    struct parse_seen *, const char *, int);

#define PARSE_FIELD(type, f)						\
	.offset = offsetof(type, f), .size = sizeof(((type *)0)->f)

#define PARSE_NUM(n, k, u, f, lo, hi)					\
	{ .name = (n), .kind = (k), .unit = (u),			\
	  PARSE_FIELD(struct config, f), .min = (lo), .max = (hi) }

#define PARSE_BOOL(n, f)						\
	{ .name = (n), .kind = PARSE_ENUM, PARSE_FIELD(struct config, f),\
	  .names = parse_bool_names }

#define PARSE_STR(n, f)							\
	{ .name = (n), .kind = PARSE_STRING, PARSE_FIELD(struct config, f) }

#define PARSE_SPECIAL(n, fn)						\
	{ .name = (n), .kind = PARSE_SPECIAL, .flags = PARSE_REPEAT,	\
	  .handler = (fn) }

static const struct config_name parse_bool_names[] = {
	{ "yes", 1 },
	{ "no", 0 },
	{ NULL, 0 }
};

/*
 * Scalars first, in the order printconf writes them. The defaults are
 * config_defaults'.
 */
const struct parse_directive parse_top[] = {
	PARSE_STR("resolv-conf", resolv_conf),
	PARSE_NUM("cache-size", PARSE_SIZE, VALUE_UNIT_BYTES, cache_size,
	    64 * VALUE_KIB, 1024 * VALUE_GIB),
	/* RFC 2181 §8: a TTL is at most 2^31 - 1 seconds. */
	PARSE_NUM("max-ttl", PARSE_DURATION, VALUE_UNIT_S, max_ttl,
	    1, INT32_MAX),
	{ .name = "min-ttl", .kind = PARSE_DURATION, .unit = VALUE_UNIT_S,
	  PARSE_FIELD(struct config, min_ttl), .min = 0, .max = VALUE_HOUR,
	  .at_most = "max-ttl" },
	/* RFC 2308 §5: a day at most. */
	PARSE_NUM("max-negative-ttl", PARSE_DURATION, VALUE_UNIT_S,
	    max_negative_ttl, 0, VALUE_DAY),
	/* RFC 9520 §3.2: at least 1 s, at most 5 min. */
	PARSE_NUM("failure-ttl", PARSE_DURATION, VALUE_UNIT_S, failure_ttl,
	    1, 5 * VALUE_MINUTE),
	/* RFC 6891 §6.2.5: below 512 is treated as 512. */
	PARSE_NUM("edns-buffer-size", PARSE_SIZE, VALUE_UNIT_BYTES,
	    edns_buffer_size, 512, 4096),
	{ .name = "upstream-timeout", .kind = PARSE_DURATION,
	  .unit = VALUE_UNIT_MS, .flags = PARSE_PAIR,
	  PARSE_FIELD(struct config, upstream_timeout_min),
	  .offset_max = offsetof(struct config, upstream_timeout_max),
	  .min = 10, .max = 60000, .at_most = "query-timeout" },
	PARSE_NUM("query-timeout", PARSE_DURATION, VALUE_UNIT_MS,
	    query_timeout, 100, 60000),
	PARSE_NUM("tcp-clients", PARSE_NUMBER, VALUE_UNIT_NONE, tcp_clients,
	    1, 100000),
	/* RFC 7766 §6.2.3: idle timeouts of seconds, not minutes. */
	PARSE_NUM("tcp-idle-timeout", PARSE_DURATION, VALUE_UNIT_MS,
	    tcp_idle_timeout, 1000, 3600000),
	PARSE_NUM("tcp-initial-timeout", PARSE_DURATION, VALUE_UNIT_MS,
	    tcp_initial_timeout, 100, 3600000),
	PARSE_NUM("max-inflight", PARSE_NUMBER, VALUE_UNIT_NONE, max_inflight,
	    1, 1000000),
	PARSE_NUM("max-waiters", PARSE_NUMBER, VALUE_UNIT_NONE, max_waiters,
	    1, 1000000),
	/* Percent of first queries; 0 with retry-budget-min 0: no retries. */
	PARSE_NUM("retry-budget", PARSE_NUMBER, VALUE_UNIT_NONE, retry_budget,
	    0, 100),
	PARSE_NUM("retry-budget-min", PARSE_NUMBER, VALUE_UNIT_NONE,
	    retry_budget_min, 0, 100000),
	/* 0: off. */
	PARSE_NUM("ratelimit", PARSE_NUMBER, VALUE_UNIT_NONE, ratelimit,
	    0, 1000000),
	/* BIND's RRL range; 0: every query over the limit dropped. */
	PARSE_NUM("ratelimit-slip", PARSE_NUMBER, VALUE_UNIT_NONE,
	    ratelimit_slip, 0, 10),
	PARSE_NUM("ratelimit-size", PARSE_NUMBER, VALUE_UNIT_NONE,
	    ratelimit_size, 1, 1000000),
	PARSE_BOOL("randomize-case", randomize_case),
	PARSE_BOOL("serve-stale", serve_stale),
	PARSE_NUM("stale-max-age", PARSE_DURATION, VALUE_UNIT_S,
	    stale_max_age, 0, 30 * VALUE_DAY),
	PARSE_NUM("stale-answer-ttl", PARSE_DURATION, VALUE_UNIT_S,
	    stale_answer_ttl, 1, VALUE_HOUR),
	PARSE_NUM("client-timeout", PARSE_DURATION, VALUE_UNIT_MS,
	    client_timeout, 0, 60000),
	PARSE_NUM("stale-refresh-interval", PARSE_DURATION, VALUE_UNIT_S,
	    stale_refresh_interval, 1, VALUE_HOUR),
	PARSE_BOOL("prefetch", prefetch),
	PARSE_BOOL("srv-prefetch-targets", srv_prefetch_targets),
	PARSE_STR("control", control),
	PARSE_STR("control-mode", control_mode_str),
	PARSE_STR("control-group", control_group),
	PARSE_NUM("control-clients", PARSE_NUMBER, VALUE_UNIT_NONE,
	    control_clients, 1, 1024),
	PARSE_STR("metrics-listen", metrics_listen_str),
	PARSE_NUM("metrics-clients", PARSE_NUMBER, VALUE_UNIT_NONE,
	    metrics_clients, 1, 1024),
	PARSE_STR("cache-file", cache_file),
	PARSE_STR("user", user),
	{ .name = "log", .kind = PARSE_ENUM, PARSE_FIELD(struct config, log),
	  .names = config_log_names },
	PARSE_SPECIAL("listen", parse_listen),
	{ .name = "allow", .kind = PARSE_SPECIAL, .flags = PARSE_REPEAT,
	  PARSE_FIELD(struct config, allow), .handler = parse_nets },
	{ .name = "exempt-clients", .kind = PARSE_SPECIAL, .flags = PARSE_NONE,
	  PARSE_FIELD(struct config, exempt_clients), .handler = parse_nets },
	PARSE_SPECIAL("hosts-file", parse_hosts_file),
	{ .name = "local-zone", .kind = PARSE_SPECIAL, .flags = PARSE_REPEAT,
	  .names = config_local_type_names, .handler = parse_local_zone },
	PARSE_SPECIAL("local-data", parse_local_data),
	PARSE_SPECIAL("forward", parse_forward),
	PARSE_SPECIAL("include", parse_include),
	{ .name = NULL }
};

const struct parse_directive parse_forward_block[] = {
	PARSE_SPECIAL("upstream", parse_upstream),
	{ .name = "policy", .kind = PARSE_ENUM,
	  PARSE_FIELD(struct config_forward, policy),
	  .names = config_policy_names },
	/* 0: an even share of what the other zones leave of max-inflight. */
	{ .name = "max-inflight", .kind = PARSE_NUMBER,
	  PARSE_FIELD(struct config_forward, max_inflight),
	  .min = 0, .max = 1000000 },
	{ .name = NULL }
};

static size_t
parse_count(const struct parse_directive *table)
{
	size_t n = 0;

	while (table[n].name != NULL)
		n++;
	return n;
}

const struct parse_directive *
parse_lookup(const struct parse_directive *table, const char *name)
{
	for (; table->name != NULL; table++)
		if (strcmp(table->name, name) == 0)
			return table;
	return NULL;
}

/* The value syntax of a numeric kind. */
static enum value_syntax
parse_syntax_of(enum parse_kind kind)
{
	if (kind == PARSE_DURATION)
		return VALUE_DURATION;
	if (kind == PARSE_SIZE)
		return VALUE_SIZE;
	return VALUE_NUMBER;
}

uint64_t
parse_get(const struct parse_directive *d, const void *base, size_t offset)
{
	const char *p = (const char *)base + offset;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (d->size) {
	case sizeof(v16):
		memcpy(&v16, p, sizeof(v16));
		return v16;
	case sizeof(v32):
		memcpy(&v32, p, sizeof(v32));
		return v32;
	default:
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
}

/* Store v; the directive's range guarantees that it fits the field. */
static void
parse_put(const struct parse_directive *d, void *base, size_t offset,
    uint64_t v)
{
	char *p = (char *)base + offset;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (d->size) {
	case sizeof(v16):
		memcpy(p, &v16, sizeof(v16));
		break;
	case sizeof(v32):
		memcpy(p, &v32, sizeof(v32));
		break;
	default:
		memcpy(p, &v, sizeof(v));
		break;
	}
}

char *
parse_format(const struct parse_directive *d, uint64_t v, char *buf,
    size_t len)
{
	if (d->kind != PARSE_ENUM)
		return value_format(parse_syntax_of(d->kind), d->unit, v, buf,
		    len);
	snprintf(buf, len, "%s", v > INT32_MAX ? "?" :
	    config_name_word(d->names, (int)v));
	return buf;
}

/* "a, b or c" from names, into buf. */
static char *
parse_names_join(const struct config_name *names, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; names[i].name != NULL && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i == 0 ? "" : names[i + 1].name == NULL ? " or " : ", ",
		    names[i].name);
	return buf;
}

static int
parse_enum(struct parse_run *run, const struct parse_directive *d, int line,
    const char *str, uint64_t *out)
{
	const struct config_name *n;
	char buf[256];

	for (n = d->names; n->name != NULL; n++) {
		if (strcmp(n->name, str) == 0) {
			*out = (uint64_t)n->value;
			return 0;
		}
	}
	lex_error(&run->lex, line, "%s: \"%s\" is not %s", d->name, str,
	    parse_names_join(d->names, buf, sizeof(buf)));
	return -1;
}

/* One value of a numeric or enum directive, in its unit and range. */
static int
parse_value(struct parse_run *run, const struct parse_directive *d, int line,
    const char *str, uint64_t *out)
{
	enum value_syntax syntax = parse_syntax_of(d->kind);
	enum value_result r;
	char lo[32], hi[32];
	uint64_t v = 0;

	if (d->kind == PARSE_ENUM)
		return parse_enum(run, d, line, str, out);
	if ((r = value_scan(str, syntax, d->unit, &v)) == VALUE_SYNTAX) {
		lex_error(&run->lex, line, "%s: \"%s\" is not %s", d->name, str,
		    value_what(syntax));
		return -1;
	}
	if (r == VALUE_FRACTION) {
		lex_error(&run->lex, line, "%s: %s is not a whole number of "
		    "seconds", d->name, str);
		return -1;
	}
	if (r == VALUE_OVERFLOW || v < d->min || v > d->max) {
		lex_error(&run->lex, line, "%s: %s is out of range (%s to %s)",
		    d->name, str, parse_format(d, d->min, lo, sizeof(lo)),
		    parse_format(d, d->max, hi, sizeof(hi)));
		return -1;
	}
	*out = v;
	return 0;
}

static void
parse_string(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	char **field = (char **)(void *)((char *)base + d->offset);
	char *copy;

	if (st->args[0].text[0] == '\0') {
		lex_error(&run->lex, st->key.line, "%s: empty value", d->name);
		return;
	}
	if ((copy = strdup(st->args[0].text)) == NULL) {
		lex_error(&run->lex, st->key.line, "out of memory");
		return;
	}
	free(*field);
	*field = copy;
}

/* A directive of a table entry without a handler: one value or a pair. */
static void
parse_scalar(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	size_t i, max_args = (d->flags & PARSE_PAIR) ? 2 : 1;
	int line = st->key.line;
	uint64_t v[2];

	if (st->n_args == 0) {
		lex_error(&run->lex, line, "%s: missing value", d->name);
		return;
	}
	if (st->n_args > max_args) {
		lex_error(&run->lex, line, "%s: unexpected \"%s\"", d->name,
		    st->args[max_args].text);
		return;
	}
	if (d->kind == PARSE_STRING) {
		parse_string(run, d, base, st);
		return;
	}
	for (i = 0; i < st->n_args; i++)
		if (parse_value(run, d, line, st->args[i].text, &v[i]) == -1)
			return;
	v[1] = v[st->n_args - 1];
	if (v[0] > v[1]) {
		lex_error(&run->lex, line, "%s: minimum %s is greater than "
		    "maximum %s", d->name, st->args[0].text, st->args[1].text);
		return;
	}
	parse_put(d, base, d->offset, v[0]);
	if (d->flags & PARSE_PAIR)
		parse_put(d, base, d->offset_max, v[1]);
}

static void
parse_stmt_free(struct parse_stmt *st)
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
parse_collect(struct parse_run *run, const struct parse_directive *table,
    int in_block, struct parse_stmt *st)
{
	struct lex_token t, *n;

	for (;;) {
		lex_next(&run->lex, &t);
		if (t.type == LEX_NEWLINE || t.type == LEX_SEMI)
			return;
		if (t.type != LEX_WORD || (in_block && !t.quoted &&
		    parse_lookup(table, t.text) != NULL)) {
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
parse_dispatch(struct parse_run *run, const struct parse_directive *table,
    void *base, struct parse_seen *seen, const char *block,
    struct parse_stmt *st)
{
	const struct parse_directive *d;
	struct parse_seen *first;
	int line = st->key.line;

	if ((d = parse_lookup(table, st->key.text)) == NULL) {
		if (block == NULL)
			lex_error(&run->lex, line, "unknown directive \"%s\"",
			    st->key.text);
		else
			lex_error(&run->lex, line, "unknown directive "
			    "\"%s\" in %s block", st->key.text, block);
		return;
	}
	first = &seen[d - table];
	if (first->line != 0 && !(d->flags & PARSE_REPEAT)) {
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
		parse_scalar(run, d, base, st);
}

/* One directive whose keyword key has been read. */
static void
parse_statement(struct parse_run *run, const struct parse_directive *table,
    void *base, struct parse_seen *seen, const char *block,
    struct lex_token *key)
{
	struct parse_stmt st;
	struct lex_token t;
	int errors = run->lex.n_errors;

	memset(&st, 0, sizeof(st));
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
parse_body(struct parse_run *run, const struct parse_directive *table,
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

/*
 * Parse str as an address of directive d and append it unless known.
 * Returns 0 if appended, -1 after reporting why not.
 */
static int
parse_addr(struct parse_run *run, const struct parse_directive *d, int line,
    const char *str, struct addr **arr, size_t *n)
{
	struct addr a;
	const char *errstr;
	char buf[ADDR_STRLEN];
	size_t i;

	if (addr_parse(str, CONFIG_DEFAULT_PORT, &a, &errstr) == -1) {
		lex_error(&run->lex, line, "%s: \"%s\" is not an address: %s",
		    d->name, str, errstr);
		return -1;
	}
	for (i = 0; i < *n; i++) {
		if (addr_equal(&(*arr)[i], &a)) {
			lex_error(&run->lex, line, "%s: duplicate address %s",
			    d->name, addr_format(&a, buf, sizeof(buf)));
			return -1;
		}
	}
	if (config_add_addr(arr, n, &a) == -1) {
		lex_error(&run->lex, line, "out of memory");
		return -1;
	}
	return 0;
}

/* Remember where the first address beyond loopback was: allow's check. */
static void
parse_listen(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	struct config *conf = base;
	struct config_where *w = &conf->listen_nonlocal;
	int line = st->key.line;
	size_t i;

	if (st->n_args == 0)
		lex_error(&run->lex, line, "%s: missing address", d->name);
	for (i = 0; i < st->n_args; i++) {
		if (parse_addr(run, d, line, st->args[i].text, &conf->listen,
		    &conf->n_listen) == -1 || w->line > 0 ||
		    addr_is_loopback(&conf->listen[conf->n_listen - 1]))
			continue;
		if ((w->file = strdup(lex_path(&run->lex))) == NULL)
			lex_error(&run->lex, line, "out of memory");
		else
			w->line = line;
	}
}

/* One network of directive d into acl. */
static void
parse_net(struct parse_run *run, const struct parse_directive *d, int line,
    const char *str, struct acl *acl)
{
	char buf[ACL_PREFIX_STRLEN];
	struct acl_prefix p;
	const char *errstr;

	if (acl_prefix_parse(str, &p, &errstr) == 0) {
		if (acl_add(acl, &p) == -1)
			lex_error(&run->lex, line, "out of memory");
	} else if (p.family == 0)
		lex_error(&run->lex, line, "%s: \"%s\" is not a network: %s",
		    d->name, str, errstr);
	else
		lex_error(&run->lex, line, "%s: \"%s\" is not a network: %s "
		    "(%s?)", d->name, str, errstr,
		    acl_prefix_format(&p, buf, sizeof(buf)));
}

/*
 * allow, exempt-clients: networks, on one line or (PARSE_REPEAT) more;
 * the first replaces the built-in list, "none" (PARSE_NONE) empties it.
 */
static void
parse_nets(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	struct config_nets *nets = (void *)((char *)base + d->offset);
	int line = st->key.line;
	size_t i;

	if (st->n_args == 0) {
		lex_error(&run->lex, line, "%s: missing network", d->name);
		return;
	}
	if (nets->builtin) {
		acl_clear(&nets->acl);
		nets->builtin = 0;
	}
	for (i = 0; i < st->n_args; i++) {
		if (!(d->flags & PARSE_NONE) ||
		    strcmp(st->args[i].text, CONFIG_NONE) != 0)
			parse_net(run, d, line, st->args[i].text, &nets->acl);
		else if (st->n_args > 1) {
			lex_error(&run->lex, line, "%s: none cannot be "
			    "combined with networks", d->name);
			return;
		}
	}
}

/* `upstream resolv.conf` stands for a whole list, so it stands alone. */
static void
parse_upstream(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	struct config_forward *fw = base;
	int line = st->key.line, resolv;
	size_t i;

	if (st->n_args == 0)
		lex_error(&run->lex, line, "%s: missing address", d->name);
	for (i = 0; i < st->n_args; i++) {
		resolv = strcmp(st->args[i].text, "resolv.conf") == 0;
		if (resolv && fw->use_resolv_conf)
			lex_error(&run->lex, line, "%s: duplicate resolv.conf",
			    d->name);
		else if (resolv ? fw->n_upstreams > 0 : fw->use_resolv_conf)
			lex_error(&run->lex, line, "%s: resolv.conf cannot be "
			    "combined with addresses", d->name);
		else if (resolv)
			fw->use_resolv_conf = 1;
		else
			parse_addr(run, d, line, st->args[i].text,
			    &fw->upstreams, &fw->n_upstreams);
	}
}

/* A domain name, in lower case, as ldns writes it; NULL with rdf NULL. */
static char *
parse_canonical_name(const ldns_rdf *rdf)
{
	ldns_rdf *copy;
	char *name;

	if ((copy = ldns_rdf_clone(rdf)) == NULL)
		return NULL;
	ldns_dname2canonical(copy);
	name = ldns_rdf2str(copy);
	ldns_rdf_deep_free(copy);
	return name;
}

/* str as a domain name of directive d, normalized; NULL after an error. */
static char *
parse_name(struct parse_run *run, const struct parse_directive *d, int line,
    const char *str)
{
	ldns_rdf *rdf;
	char *name;

	if (str[0] == '\0' || (rdf = ldns_dname_new_frm_str(str)) == NULL) {
		lex_error(&run->lex, line, "%s: \"%s\" is not a domain name",
		    d->name, str);
		return NULL;
	}
	name = parse_canonical_name(rdf);
	ldns_rdf_deep_free(rdf);
	if (name == NULL)
		lex_error(&run->lex, line, "out of memory");
	return name;
}

/*
 * The arguments of a directive that takes n of them (what: their names,
 * for "missing"): 0 after reporting too few or too many, else 1.
 */
static int
parse_nargs(struct parse_run *run, const struct parse_directive *d,
    const struct parse_stmt *st, size_t n, const char *const *what)
{
	if (st->n_args < n) {
		lex_error(&run->lex, st->key.line, "%s: missing %s", d->name,
		    what[st->n_args]);
		return 0;
	}
	if (st->n_args > n) {
		lex_error(&run->lex, st->key.line, "%s: unexpected \"%s\"",
		    d->name, st->args[n].text);
		return 0;
	}
	return 1;
}

/* The zone of a forward directive, normalized; NULL after an error. */
static char *
parse_zone(struct parse_run *run, const struct parse_directive *d,
    struct parse_stmt *st)
{
	static const char *const what[] = { "zone" };

	if (!parse_nargs(run, d, st, 1, what))
		return NULL;
	return parse_name(run, d, st->key.line, st->args[0].text);
}

/*
 * The "{" of a block, possibly on a later line. Returns its line, or 0
 * after reporting it missing (report: not already reported otherwise).
 */
static int
parse_open(struct parse_run *run, const struct parse_directive *d,
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

/* The checks of a forward block that was read without error. */
static int
parse_forward_check(struct parse_run *run, const struct parse_directive *d,
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
	return 0;
}

static void
parse_forward(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	struct config *conf = base;
	struct config_forward fw;
	struct parse_seen *seen;
	int errors = run->lex.n_errors, line = st->key.line, open;

	config_forward_defaults(&fw);
	if ((seen = calloc(parse_count(parse_forward_block),
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

/* `hosts-file PATH`, or `none`: absolute paths, none alone. */
static void
parse_hosts_file(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	static const char *const what[] = { "path" };
	struct config *conf = base;
	const char *path;
	int line = st->key.line, none;
	size_t i;

	if (!parse_nargs(run, d, st, 1, what))
		return;
	path = st->args[0].text;
	none = strcmp(path, CONFIG_NONE) == 0;
	if (!conf->hosts_file_default && (none ? conf->n_hosts_files > 0 :
	    conf->n_hosts_files == 0)) {
		lex_error(&run->lex, line, "%s: none cannot be combined with "
		    "files", d->name);
		return;
	}
	if (!none && path[0] != '/') {
		lex_error(&run->lex, line, "%s: \"%s\" is not an absolute path",
		    d->name, path);
		return;
	}
	for (i = 0; !conf->hosts_file_default && i < conf->n_hosts_files;
	    i++)
		if (strcmp(conf->hosts_files[i], path) == 0) {
			lex_error(&run->lex, line, "%s: duplicate file \"%s\"",
			    d->name, path);
			return;
		}
	if (config_add_hosts_file(conf, path) == -1)
		lex_error(&run->lex, line, "out of memory");
}

/* The checks of a local-zone whose name and type are read. */
static int
parse_local_zone_check(struct parse_run *run, const struct parse_directive *d,
    const struct config *conf, const struct config_local_zone *lz, int line)
{
	const struct config_local_zone *other;
	size_t i;

	for (i = 0; i < conf->n_local_zones; i++) {
		other = &conf->local_zones[i];
		if (strcmp(other->zone, lz->zone) == 0) {
			lex_error(&run->lex, line, "%s \"%s\": duplicate zone "
			    "(first at %s:%d)", d->name, lz->zone,
			    other->where.file, other->where.line);
			return -1;
		}
	}
	if (lz->type == CONFIG_LOCAL_NODEFAULT &&
	    !config_is_default_local_zone(lz->zone)) {
		lex_error(&run->lex, line, "%s \"%s\": nodefault: not a zone "
		    "served by default", d->name, lz->zone);
		return -1;
	}
	return 0;
}

/* `local-zone ZONE TYPE`. */
static void
parse_local_zone(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	static const char *const what[] = { "zone", "type" };
	struct config_local_zone lz;
	uint64_t type;
	int line = st->key.line;

	memset(&lz, 0, sizeof(lz));
	if (!parse_nargs(run, d, st, 2, what) ||
	    (lz.zone = parse_name(run, d, line, st->args[0].text)) == NULL ||
	    parse_enum(run, d, line, st->args[1].text, &type) == -1)
		goto done;
	lz.type = (enum config_local_type)type;
	if (parse_local_zone_check(run, d, base, &lz, line) == -1)
		goto done;
	lz.where.line = line;
	if ((lz.where.file = strdup(lex_path(&run->lex))) == NULL ||
	    config_add_local_zone(base, &lz) == -1) {
		lex_error(&run->lex, line, "out of memory");
		goto done;
	}
	return;
done:
	config_local_zone_free(&lz);
}

/*
 * Whether rr can be served as local data: class IN only, and no meta type
 * (RFC 6895 §3.1: OPT, TKEY, TSIG, IXFR, AXFR, MAILB, MAILA, ANY), none
 * of which is data. Returns 0, or -1 after reporting why not.
 */
static int
parse_rr_servable(struct parse_run *run, const struct parse_directive *d,
    int line, const ldns_rr *rr)
{
	ldns_rr_type type = ldns_rr_get_type(rr);
	char *word;

	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
		word = ldns_rr_class2str(ldns_rr_get_class(rr));
		lex_error(&run->lex, line, "%s: class %s is not IN", d->name,
		    word != NULL ? word : "?");
		free(word);
		return -1;
	}
	if (type == LDNS_RR_TYPE_OPT || (type >= LDNS_RR_TYPE_TKEY &&
	    type <= LDNS_RR_TYPE_ANY)) {
		word = ldns_rr_type2str(type);
		lex_error(&run->lex, line, "%s: type %s is not data (RFC 6895 "
		    "section 3.1)", d->name, word != NULL ? word : "?");
		free(word);
		return -1;
	}
	return 0;
}

/* rr in presentation format on one line, without its newline. */
static char *
parse_rr_text(const ldns_rr *rr)
{
	char *text, *p;
	size_t len;

	if ((text = ldns_rr2str(rr)) == NULL)
		return NULL;
	/* ldns separates fields with tabs (one in the data is \009). */
	for (p = text; *p != '\0'; p++)
		if (*p == '\t')
			*p = ' ';
	len = strlen(text);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	return text;
}

/* `local-data "NAME [TTL] [CLASS] TYPE RDATA"`, read with ldns. */
static void
parse_local_data(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	static const char *const what[] = { "record" };
	struct config_local_data ld;
	ldns_rr *rr = NULL;
	ldns_status status;
	int line = st->key.line;

	memset(&ld, 0, sizeof(ld));
	if (!parse_nargs(run, d, st, 1, what))
		return;
	/* No origin: every name is absolute (RFC 1035 §5.1's default TTL
	 * aside, ldns's 3600 s when none is given). */
	status = ldns_rr_new_frm_str(&rr, st->args[0].text, LDNS_DEFAULT_TTL,
	    NULL, NULL);
	if (status != LDNS_STATUS_OK) {
		lex_error(&run->lex, line, "%s: \"%s\" is not a resource "
		    "record: %s", d->name, st->args[0].text,
		    ldns_get_errorstr_by_id(status));
		return;
	}
	if (parse_rr_servable(run, d, line, rr) == -1)
		goto done;
	ld.type = (uint16_t)ldns_rr_get_type(rr);
	ld.where.line = line;
	if ((ld.rr = parse_rr_text(rr)) == NULL ||
	    (ld.owner = parse_canonical_name(ldns_rr_owner(rr))) == NULL ||
	    (ld.where.file = strdup(lex_path(&run->lex))) == NULL ||
	    config_add_local_data(base, &ld) == -1) {
		lex_error(&run->lex, line, "out of memory");
		goto done;
	}
	ldns_rr_free(rr);
	return;
done:
	ldns_rr_free(rr);
	config_local_data_free(&ld);
}

/* The body of a file being read, at the top level of the run. */
static void
parse_included(void *arg)
{
	struct parse_run *run = arg;

	parse_body(run, parse_top, run->conf, run->seen, NULL, 0);
}

static void
parse_include(struct parse_run *run, const struct parse_directive *d,
    void *base, struct parse_stmt *st)
{
	static const char *const what[] = { "pattern" };

	(void)base;
	if (parse_nargs(run, d, st, 1, what))
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
	at = &run->seen[parse_lookup(parse_top, directive) - parse_top];
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
parse_check_at_most(struct parse_run *run, const struct parse_directive *d)
{
	const struct parse_directive *hi = parse_lookup(parse_top, d->at_most);
	const struct parse_seen *at = &run->seen[d - parse_top];
	const struct parse_seen *at_hi = &run->seen[hi - parse_top];
	char lo_buf[32], hi_buf[32];
	uint64_t lo_v, hi_v;

	lo_v = parse_get(d, run->conf, d->offset);
	hi_v = parse_get(hi, run->conf, hi->offset);
	if (lo_v <= hi_v)
		return;
	if (at_hi->order > at->order)
		at = at_hi;
	lex_error_at(&run->lex, at->line > 0 ? at->file : run->file, at->line,
	    "%s%s %s is greater than %s %s", d->name,
	    (d->flags & PARSE_PAIR) ? " minimum" : "",
	    parse_format(d, lo_v, lo_buf, sizeof(lo_buf)), hi->name,
	    parse_format(hi, hi_v, hi_buf, sizeof(hi_buf)));
}

/* The defaults, the file at path (NULL: none), what they imply, checked. */
static void
parse_read(struct parse_run *run, const char *path)
{
	struct config *conf = run->conf;
	const struct parse_directive *d;

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
	if ((run.seen = calloc(parse_count(parse_top),
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
