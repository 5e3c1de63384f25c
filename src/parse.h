/* parse.h: the dnsdamper.conf grammar and the table of its directives. */
#ifndef DNSDAMPER_PARSE_H
#define DNSDAMPER_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "lex.h"

/* The value syntax of a directive. */
enum parse_kind {
	PARSE_DURATION,	/* digits with optional ms, s, m, h, d; bare
			 * digits are seconds */
	PARSE_SIZE,	/* digits with optional k, m, g (any case), binary
			 * multiples; bare digits are bytes */
	PARSE_NUMBER,	/* digits */
	PARSE_ENUM,	/* one of names[] (yes/no for booleans) */
	PARSE_STRING,	/* one word or quoted string, owned char * */
	PARSE_SPECIAL	/* own syntax, parsed and stored by handler */
};

/* The unit a numeric directive is stored, ranged and defaulted in. */
enum parse_unit {
	PARSE_UNIT_NONE,	/* a plain count */
	PARSE_UNIT_BYTES,	/* PARSE_SIZE */
	PARSE_UNIT_S,		/* PARSE_DURATION in whole seconds */
	PARSE_UNIT_MS		/* PARSE_DURATION in milliseconds */
};

/* Flags of a directive. */
#define PARSE_REPEAT	0x01	/* may be given more than once */
#define PARSE_PAIR	0x02	/* MIN [MAX]: a second value goes to
				 * offset_max, one value sets both */

/* One word of a PARSE_ENUM and the value stored for it. */
struct parse_name {
	const char	*name;
	int		 value;
};

struct parse_run;	/* reading one configuration */
struct parse_stmt;	/* one directive with its arguments; private */

/*
 * One directive of one scope (top level: fields of struct config; forward
 * block: fields of struct config_forward). Adding a directive is adding one
 * entry; only a new syntax needs a handler.
 */
struct parse_directive {
	const char	*name;
	enum parse_kind	 kind;
	enum parse_unit	 unit;
	int		 flags;		/* PARSE_REPEAT, PARSE_PAIR */
	size_t		 offset;	/* of the field in the scope's struct */
	size_t		 size;		/* of that field: 2, 4 or 8 bytes for
					 * numbers and enums */
	size_t		 offset_max;	/* PARSE_PAIR: of the MAX field */
	uint64_t	 min, max;	/* valid range, in unit */
	uint64_t	 def, def_max;	/* defaults, in unit */
	const char	*def_str;	/* PARSE_STRING default */
	const struct parse_name *names;	/* PARSE_ENUM; ends with NULL */
	/* PARSE_SPECIAL: parse st into base, reporting its own errors. */
	void		(*handler)(struct parse_run *run,
			    const struct parse_directive *d, void *base,
			    struct parse_stmt *st);
};

/* The top-level directives, in canonical order; ends with a NULL name. */
extern const struct parse_directive parse_top[];

/* The directives of a forward block; ends with a NULL name. */
extern const struct parse_directive parse_forward_block[];

/* Where a directive was first given, for messages; line 0: not given. */
struct parse_seen {
	const char	*file;		/* borrowed from the parse_run */
	int		 line;
	unsigned	 order;		/* 1 for the first directive read,
					 * then increasing */
};

/* The state of reading one configuration (a file and its includes). */
struct parse_run {
	struct lex		 lex;		/* the files, the errors */
	struct config		*conf;		/* borrowed; being filled */
	struct parse_seen	*seen;		/* owned, one per entry of
						 * parse_top */
	unsigned		 order;		/* last parse_seen.order */
};

/*
 * parse_run_init: start a run whose errors go to errs (borrowed).
 * Returns 0, or -1 if out of memory.
 */
int	parse_run_init(struct parse_run *run, FILE *errs);

/* parse_run_free: release what run owns, the file names it lent too. */
void	parse_run_free(struct parse_run *run);

/*
 * parse_file: read the file at path and its includes into conf, which holds
 * the defaults (parse_defaults) and may already hold directives. Every
 * error is written to run->errs and counted in run->n_errors; reading goes
 * on after an error. Nothing is validated across directives.
 */
void	parse_file(struct parse_run *run, const char *path,
	    struct config *conf);

/*
 * parse_error: write `file:line: message` to run->errs (`file: message` when
 * line is 0) and count it.
 */
void	parse_error(struct parse_run *run, const char *file, int line,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * parse_seen: where the top-level directive name was first given in run
 * (line 0 if it was not); NULL if no such directive exists.
 */
const struct parse_seen *parse_seen(const struct parse_run *run,
	    const char *name);

/* parse_lookup: the entry of table named name, or NULL. */
const struct parse_directive *parse_lookup(
	    const struct parse_directive *table, const char *name);

/*
 * parse_defaults: store the default of every entry of table into base (the
 * scope's struct). PARSE_STRING defaults are copied. Returns 0, or -1 if
 * out of memory (then the strings set so far are still to be freed by
 * parse_clear).
 */
int	parse_defaults(const struct parse_directive *table, void *base);

/* parse_clear: free the PARSE_STRING fields of table in base. */
void	parse_clear(const struct parse_directive *table, void *base);

/*
 * parse_implicit: add what the language implies when a configuration does
 * not say it: listen on 127.0.0.1:53 and [::1]:53 when conf has no listen
 * address, and `forward . { upstream resolv.conf }` when no forward is for
 * the root; that forward's where is file (copied) at line 0.
 * Returns 0, or -1 if out of memory.
 */
int	parse_implicit(struct config *conf, const char *file);

/* parse_forward_free: release what *fw owns. */
void	parse_forward_free(struct config_forward *fw);

/*
 * parse_get: the number or enum value of entry d stored at offset (d->offset
 * or d->offset_max) in base, in d's unit.
 */
uint64_t parse_get(const struct parse_directive *d, const void *base,
	    size_t offset);

/*
 * parse_format: write value v of entry d to buf (size len) in the syntax
 * parse_file reads: an enum's name, or a number in its largest exact unit
 * ("64m", "1d", "1500ms", "0s"). Returns buf.
 */
char	*parse_format(const struct parse_directive *d, uint64_t v, char *buf,
	    size_t len);

#endif
