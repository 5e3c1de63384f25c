/*
 * directive.h: one directive of the dnsdamper.conf grammar: its table
 * entry, the statement read for it, and the checks of its values that
 * every handler shares (argument counts, numbers in their unit and range,
 * enum words, domain names).
 */
#ifndef DNSDAMPER_DIRECTIVE_H
#define DNSDAMPER_DIRECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include <ldns/ldns.h>

#include "config.h"
#include "lex.h"
#include "value.h"

/* The value syntax of a directive. */
enum directive_kind {
	DIRECTIVE_DURATION,	/* VALUE_DURATION */
	DIRECTIVE_SIZE,		/* VALUE_SIZE */
	DIRECTIVE_NUMBER,	/* VALUE_NUMBER */
	DIRECTIVE_ENUM,		/* one of names[] (yes/no for booleans) */
	DIRECTIVE_STRING,	/* one word or quoted string, owned char * */
	DIRECTIVE_SPECIAL	/* own syntax, parsed and stored by handler */
};

/* Flags of a directive. */
#define DIRECTIVE_REPEAT	0x01	/* may be given more than once */
#define DIRECTIVE_PAIR		0x02	/* MIN [MAX]: a second value goes
					 * to offset_max, one value sets
					 * both */
#define DIRECTIVE_NONE		0x04	/* a list that "none" may leave
					 * empty */

/*
 * The grammar's reading of one configuration, private to parse.c: only
 * the handlers of blocks and includes, which are parse.c's, use it.
 */
struct parse_run;

/* One directive with its arguments, as the grammar read it. */
struct directive_stmt {
	struct lex		*lex;	/* borrowed: the reader, for errors
					 * and the file's name */
	struct lex_token	 key;	/* borrowed */
	struct lex_token	*args;	/* owned, texts too */
	size_t			 n_args;
	int			 bad;	/* a token had a lexer error */
};

/*
 * One directive of one scope (top level: fields of struct config; forward
 * block: fields of struct config_forward). Its default is set by
 * config_defaults or config_forward_defaults; only a new syntax needs a
 * handler.
 */
struct directive {
	const char		*name;
	enum directive_kind	 kind;
	enum value_unit		 unit;		/* numbers: stored and ranged
						 * in */
	int			 flags;		/* DIRECTIVE_REPEAT, ... */
	size_t			 offset;	/* of the field in the scope's
						 * struct (DIRECTIVE_SPECIAL:
						 * if it has one) */
	size_t			 size;		/* of that field: 2, 4 or 8
						 * bytes for numbers, enums */
	size_t			 offset_max;	/* DIRECTIVE_PAIR: of the MAX
						 * field */
	uint64_t		 min, max;	/* valid range, in unit */
	const char		*at_most;	/* top level: the directive,
						 * stored in the same unit,
						 * whose value this one (a
						 * pair's MIN) may not
						 * exceed */
	const struct config_name *names;	/* DIRECTIVE_ENUM; ends with
						 * NULL */
	/* DIRECTIVE_SPECIAL: parse st into base, reporting its own errors. */
	void			(*handler)(struct parse_run *run,
				    const struct directive *d, void *base,
				    struct directive_stmt *st);
};

/* directive_count: the number of entries of table, before its NULL name. */
size_t	directive_count(const struct directive *table);

/* directive_lookup: the entry of table named name, or NULL. */
const struct directive *directive_lookup(const struct directive *table,
	    const char *name);

/*
 * directive_get: the number or enum value of entry d stored at offset
 * (d->offset or d->offset_max) in base, in d's unit.
 */
uint64_t directive_get(const struct directive *d, const void *base,
	    size_t offset);

/*
 * directive_format: write value v of entry d to buf (size len, truncated
 * to fit) in the syntax parse_load reads: an enum's name ("?" for a value
 * without one), or a number in its largest exact unit ("64m", "1d",
 * "1500ms", "0s"). Returns buf.
 */
char	*directive_format(const struct directive *d, uint64_t v, char *buf,
	    size_t len);

/*
 * directive_scalar: store st, a directive of entry d without a handler,
 * into base: one value, or a pair's one or two (DIRECTIVE_PAIR), in d's
 * unit and range; a string copied (the old one freed). Errors, reported
 * through st->lex at st's line: missing value, unexpected argument, not a
 * duration, size or number, a fraction of a second, out of range, an
 * enum word not among d->names, a minimum above the maximum, an empty
 * string, out of memory; base is left as it was.
 */
void	directive_scalar(const struct directive *d, void *base,
	    struct directive_stmt *st);

/*
 * directive_enum: the value of the word str among d->names into *out.
 * Returns 0, or -1 after reporting `NAME: "str" is not a, b or c` at line
 * through lex.
 */
int	directive_enum(struct lex *lex, const struct directive *d, int line,
	    const char *str, uint64_t *out);

/*
 * directive_nargs: whether st has exactly n arguments (what: their names,
 * for "missing"): 1, or 0 after reporting too few or too many.
 */
int	directive_nargs(const struct directive *d,
	    const struct directive_stmt *st, size_t n,
	    const char *const *what);

/*
 * directive_canonical_name: the domain name rdf in lower case, as ldns
 * writes it (with its final dot), in memory the caller frees; NULL when
 * out of memory.
 */
char	*directive_canonical_name(const ldns_rdf *rdf);

/*
 * directive_name: str, an argument of directive d at line, as a domain
 * name in canonical form (directive_canonical_name), owned by the caller.
 * Returns NULL after reporting through lex that it is not a domain name,
 * or out of memory.
 */
char	*directive_name(struct lex *lex, const struct directive *d, int line,
	    const char *str);

#endif
