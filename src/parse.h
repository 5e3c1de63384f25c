/* parse.h: the dnsdamper.conf grammar and the table of its directives. */
#ifndef DNSDAMPER_PARSE_H
#define DNSDAMPER_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "value.h"

/* The value syntax of a directive. */
enum parse_kind {
	PARSE_DURATION,	/* VALUE_DURATION */
	PARSE_SIZE,	/* VALUE_SIZE */
	PARSE_NUMBER,	/* VALUE_NUMBER */
	PARSE_ENUM,	/* one of names[] (yes/no for booleans) */
	PARSE_STRING,	/* one word or quoted string, owned char * */
	PARSE_SPECIAL	/* own syntax, parsed and stored by handler */
};

/* Flags of a directive. */
#define PARSE_REPEAT	0x01	/* may be given more than once */
#define PARSE_PAIR	0x02	/* MIN [MAX]: a second value goes to
				 * offset_max, one value sets both */
#define PARSE_NONE	0x04	/* a list that "none" may leave empty */

struct parse_run;	/* reading one configuration; private to parse.c */
struct parse_stmt;	/* one directive with its arguments; private */

/*
 * One directive of one scope (top level: fields of struct config; forward
 * block: fields of struct config_forward). Its default is set by
 * config_defaults or config_forward_defaults; only a new syntax needs a
 * handler.
 */
struct parse_directive {
	const char	*name;
	enum parse_kind	 kind;
	enum value_unit	 unit;		/* numbers: stored and ranged in */
	int		 flags;		/* PARSE_REPEAT, PARSE_PAIR */
	size_t		 offset;	/* of the field in the scope's struct
					 * (PARSE_SPECIAL: if it has one) */
	size_t		 size;		/* of that field: 2, 4 or 8 bytes for
					 * numbers and enums */
	size_t		 offset_max;	/* PARSE_PAIR: of the MAX field */
	uint64_t	 min, max;	/* valid range, in unit */
	const char	*at_most;	/* top level: the directive, stored in
					 * the same unit, whose value this one
					 * (a pair's MIN) may not exceed */
	const struct config_name *names; /* PARSE_ENUM; ends with NULL */
	/* PARSE_SPECIAL: parse st into base, reporting its own errors. */
	void		(*handler)(struct parse_run *run,
			    const struct parse_directive *d, void *base,
			    struct parse_stmt *st);
};

/* The top-level directives, in canonical order; ends with a NULL name. */
extern const struct parse_directive parse_top[];

/* The directives of a forward block; ends with a NULL name. */
extern const struct parse_directive parse_forward_block[];

/*
 * parse_load: read a configuration into *conf: the defaults, overridden by
 * the file at path and its includes (path NULL: defaults only), with what
 * they imply (config_implicit), checked across directives (at_most,
 * config_validate) and, when all that is without error, every forward's
 * upstreams put through resolvconf_apply. Every error is written to errs
 * (borrowed) as one line `file:line: message` (`file: message` for what
 * no line says; "(defaults)" for the file when path is NULL): all errors of
 * the run, not only the first. Returns 0 with *conf filled (the caller
 * frees it with config_free), or -1 with *conf empty.
 */
int	parse_load(const char *path, struct config *conf, FILE *errs);

/* parse_lookup: the entry of table named name, or NULL. */
const struct parse_directive *parse_lookup(
	    const struct parse_directive *table, const char *name);

/*
 * parse_get: the number or enum value of entry d stored at offset (d->offset
 * or d->offset_max) in base, in d's unit.
 */
uint64_t parse_get(const struct parse_directive *d, const void *base,
	    size_t offset);

/*
 * parse_format: write value v of entry d to buf (size len, truncated to
 * fit) in the syntax parse_load reads: an enum's name ("?" for a value
 * without one), or a number in its largest exact unit ("64m", "1d",
 * "1500ms", "0s"). Returns buf.
 */
char	*parse_format(const struct parse_directive *d, uint64_t v, char *buf,
	    size_t len);

#endif
