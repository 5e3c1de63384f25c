/*
 * lex.h: the dnsdamper.conf lexer: the files of one configuration and their
 * include stack, the tokens read from them, and `file:line: message` errors.
 */
#ifndef DNSDAMPER_LEX_H
#define DNSDAMPER_LEX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Deepest include nesting; deeper is reported as a probable include loop. */
#define LEX_MAX_DEPTH	16

enum lex_type {
	LEX_EOF,	/* end of the file being read (not of its includer) */
	LEX_NEWLINE,
	LEX_SEMI,	/* ";": ends a directive like a newline */
	LEX_LBRACE,
	LEX_RBRACE,
	LEX_WORD	/* a bare word or a double-quoted string */
};

struct lex_token {
	enum lex_type	 type;
	char		*text;		/* LEX_WORD: NUL-terminated, owned by
					 * whoever holds the token; else NULL */
	int		 quoted;	/* written in double quotes */
	int		 bad;		/* lexer error, already reported */
	int		 line;		/* where the token starts, from 1 */
};

struct lex_file;	/* one file of the include stack; private to lex.c */

/* Reading one configuration: its files, their errors. */
struct lex {
	FILE		*errs;		/* borrowed; error lines */
	int		 n_errors;	/* lines written to errs */
	char		**paths;	/* owned; every file opened, kept so
					 * that messages may borrow them */
	size_t		 n_paths;
	struct lex_file	*top;		/* the file being read (its includer
					 * below it), NULL outside lex_read */
};

/* lex_init: start reading a configuration, errors to errs (borrowed). */
void	lex_init(struct lex *lx, FILE *errs);

/* lex_free: release what lx owns, the file names lent to messages too. */
void	lex_free(struct lex *lx);

/*
 * lex_read: open the top file at path (lex_fopen), make it the file that
 * lex_next reads, and call read(arg), which reads its tokens; then close
 * it (freeing a token still pushed back). Errors are written to lx->errs
 * and counted: `path: cannot open: why`, `path: cannot read: why`,
 * `path: out of memory`; read is not called when the file does not open.
 */
void	lex_read(struct lex *lx, const char *path, void (*read)(void *arg),
	    void *arg);

/*
 * lex_include: read the files of an `include pattern` directive given at
 * line of the file being read, each as lex_read does, in the middle of it:
 * the file being read is suspended until read(arg) returns. A pattern not
 * starting with "/" is relative to the directory of the including file.
 * A pattern without *, ? or [ names one file, which must exist; a glob(3)
 * pattern may match nothing, and its matches are read in sorted order.
 * Errors, at the include's line: `include: cannot open "path": why`,
 * `include: nested more than 16 levels deep (an include loop?)` when the
 * including file is LEX_MAX_DEPTH includes below the top file, out of
 * memory.
 */
void	lex_include(struct lex *lx, const char *pattern, int line,
	    void (*read)(void *arg), void *arg);

/*
 * lex_next: the next token of the file being read into *t (only from
 * within a read callback); comments (# to the end of the line) and blanks
 * are skipped; LEX_EOF again and again at the end. A quoted string ends at its
 * closing quote on the same line (\" and \\ are escapes); a bare word at a
 * blank, newline, #, ;, {, } or ". An unterminated string is reported
 * (`file:line: unterminated string`) and returned with t->bad set. Out of
 * memory is reported and ends the file (LEX_EOF).
 */
void	lex_next(struct lex *lx, struct lex_token *t);

/*
 * lex_unget: push *t back (ownership of its text included) so that the
 * next lex_next returns it; one token at most.
 */
void	lex_unget(struct lex *lx, const struct lex_token *t);

/*
 * lex_path: the name of the file being read, as given or as made from an
 * include; borrowed, valid until lex_free.
 */
const char *lex_path(const struct lex *lx);

/* lex_error: report `file:line: message` at line of the file being read. */
void	lex_error(struct lex *lx, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * lex_error_at, lex_verror_at: write `file:line: message` to lx->errs
 * (`file: message` when line is 0) and count it.
 */
void	lex_error_at(struct lex *lx, const char *file, int line,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void	lex_verror_at(struct lex *lx, const char *file, int line,
	    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/*
 * lex_fopen: open a configuration file (or resolv.conf) for reading: a
 * regular file only, never blocking on a FIFO. Returns the stream (the
 * caller fcloses it), or NULL with errno set: open(2)'s, EISDIR for a
 * directory, EINVAL for any other file that is not regular.
 */
FILE	*lex_fopen(const char *path);

/* lex_strerror: strerror(err), but "not a regular file" for EINVAL. */
const char *lex_strerror(int err);

/*
 * lex_quote: write str to stream as one token that lex_next reads back as
 * str: bare when it can be, else double-quoted with \" and \\ escapes.
 */
void	lex_quote(const char *str, FILE *stream);

#endif
