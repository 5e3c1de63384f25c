/* lex.c: the dnsdamper.conf lexer: tokens, the include stack, errors. */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lex.h"

struct lex_file {
	struct lex_file		*up;	/* the including file; NULL: top */
	FILE			*fp;
	const char		*path;	/* borrowed from lex.paths */
	int			 depth;	/* include nesting, 0: top */
	int			 line;	/* of the next character */
	int			 last_line; /* of the last one read */
	struct lex_token	 ahead;	/* pushed back by lex_unget */
	int			 has_ahead;
};

void
lex_init(struct lex *lx, FILE *errs)
{
	memset(lx, 0, sizeof(*lx));
	lx->errs = errs;
}

void
lex_free(struct lex *lx)
{
	size_t i;

	for (i = 0; i < lx->n_paths; i++)
		free(lx->paths[i]);
	free(lx->paths);
	memset(lx, 0, sizeof(*lx));
}

void
lex_verror_at(struct lex *lx, const char *file, int line, const char *fmt,
    va_list ap)
{
	if (line > 0)
		fprintf(lx->errs, "%s:%d: ", file, line);
	else
		fprintf(lx->errs, "%s: ", file);
	vfprintf(lx->errs, fmt, ap);
	fputc('\n', lx->errs);
	lx->n_errors++;
}

void
lex_error_at(struct lex *lx, const char *file, int line, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	lex_verror_at(lx, file, line, fmt, ap);
	va_end(ap);
}

void
lex_error(struct lex *lx, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lex_verror_at(lx, lx->top->path, line, fmt, ap);
	va_end(ap);
}

const char *
lex_path(const struct lex *lx)
{
	return lx->top->path;
}

static int
lex_getc(struct lex_file *f)
{
	int c;

	if ((c = getc(f->fp)) != EOF)
		f->last_line = f->line;
	if (c == '\n')
		f->line++;
	return c;
}

static int
lex_peekc(struct lex_file *f)
{
	int c = getc(f->fp);

	if (c != EOF)
		ungetc(c, f->fp);
	return c;
}

/* Space within a line. */
static int
lex_is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * A character that ends a bare word. Not #: it starts a comment only
 * where a word could start, so that "tls://ADDRESS#NAME" is one word, as
 * other resolvers' configurations write it.
 */
static int
lex_is_end(int c)
{
	return c == EOF || c == '\n' || lex_is_blank(c) ||
	    c == ';' || c == '{' || c == '}' || c == '"';
}

/* Append c to the NUL-terminated growing buffer *buf; -1 out of memory. */
static int
lex_add(char **buf, size_t *len, int c)
{
	char *n;

	if ((n = realloc(*buf, *len + 2)) == NULL)
		return -1;
	n[(*len)++] = (char)c;
	n[*len] = '\0';
	*buf = n;
	return 0;
}

/* The rest of a double-quoted string, which ends on its own line. */
static int
lex_string(struct lex *lx, struct lex_token *t, size_t *len)
{
	struct lex_file *f = lx->top;
	int c;

	t->quoted = 1;
	for (;;) {
		c = lex_peekc(f);
		if (c == '\n' || c == EOF) {
			lex_error(lx, t->line, "unterminated string");
			t->bad = 1;
			return 0;
		}
		lex_getc(f);
		if (c == '"')
			return 0;
		if (c == '\\' && (lex_peekc(f) == '"' || lex_peekc(f) == '\\'))
			c = lex_getc(f);
		if (lex_add(&t->text, len, c) == -1)
			return -1;
	}
}

static int
lex_word(struct lex_file *f, struct lex_token *t, int c, size_t *len)
{
	if (lex_add(&t->text, len, c) == -1)
		return -1;
	while (!lex_is_end(lex_peekc(f)))
		if (lex_add(&t->text, len, lex_getc(f)) == -1)
			return -1;
	return 0;
}

/* The token of one character, or LEX_WORD when c starts a word. */
static enum lex_type
lex_type_of(int c)
{
	switch (c) {
	case EOF:
		return LEX_EOF;
	case '\n':
		return LEX_NEWLINE;
	case ';':
		return LEX_SEMI;
	case '{':
		return LEX_LBRACE;
	case '}':
		return LEX_RBRACE;
	default:
		return LEX_WORD;
	}
}

void
lex_next(struct lex *lx, struct lex_token *t)
{
	struct lex_file *f = lx->top;
	size_t len = 0;
	int c, r;

	if (f->has_ahead) {
		*t = f->ahead;
		f->has_ahead = 0;
		return;
	}
	memset(t, 0, sizeof(*t));
	while (lex_is_blank(c = lex_getc(f)))
		continue;
	if (c == '#')
		while ((c = lex_getc(f)) != EOF && c != '\n')
			continue;
	t->line = f->last_line;
	if ((t->type = lex_type_of(c)) != LEX_WORD)
		return;
	if ((t->text = strdup("")) == NULL)
		r = -1;
	else if (c == '"')
		r = lex_string(lx, t, &len);
	else
		r = lex_word(f, t, c, &len);
	if (r == -1) {
		/* Out of memory: stop reading this file. */
		lex_error(lx, t->line, "out of memory");
		free(t->text);
		memset(t, 0, sizeof(*t));
		t->type = LEX_EOF;
		t->line = f->last_line;
		fseek(f->fp, 0, SEEK_END);
	}
}

void
lex_unget(struct lex *lx, const struct lex_token *t)
{
	lx->top->ahead = *t;
	lx->top->has_ahead = 1;
}

void
lex_quote(const char *str, FILE *stream)
{
	const char *p;

	for (p = str; *p != '\0' && !lex_is_end((unsigned char)*p); p++)
		continue;
	if (*str != '\0' && *str != '#' && *p == '\0') {
		fputs(str, stream);
		return;
	}
	putc('"', stream);
	for (p = str; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			putc('\\', stream);
		putc(*p, stream);
	}
	putc('"', stream);
}

const char *
lex_strerror(int err)
{
	return err == EINVAL ? "not a regular file" : strerror(err);
}

FILE *
lex_fopen(const char *path)
{
	struct stat sb;
	FILE *fp;
	int fd;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		close(fd);
		return NULL;
	}
	return fp;
}

/* Remember path for as long as lx, so messages may borrow it. */
static const char *
lex_keep_path(struct lex *lx, const char *path)
{
	char **n;

	if ((n = reallocarray(lx->paths, lx->n_paths + 1,
	    sizeof(*n))) == NULL)
		return NULL;
	lx->paths = n;
	if ((n[lx->n_paths] = strdup(path)) == NULL)
		return NULL;
	return n[lx->n_paths++];
}

/*
 * Read the file at path with read(arg) on top of the stack; line: of the
 * include in the file being read, 0 for the top file.
 */
static void
lex_push(struct lex *lx, const char *path, int line,
    void (*read)(void *), void *arg)
{
	struct lex_file f;

	memset(&f, 0, sizeof(f));
	f.up = lx->top;
	f.depth = f.up == NULL ? 0 : f.up->depth + 1;
	f.line = f.last_line = 1;
	if ((f.fp = lex_fopen(path)) == NULL) {
		if (f.up == NULL)
			lex_error_at(lx, path, 0, "cannot open: %s",
			    lex_strerror(errno));
		else
			lex_error(lx, line, "include: cannot open \"%s\": %s",
			    path, lex_strerror(errno));
		return;
	}
	if ((f.path = lex_keep_path(lx, path)) == NULL)
		lex_error_at(lx, path, 0, "out of memory");
	else {
		lx->top = &f;
		read(arg);
		lx->top = f.up;
	}
	if (ferror(f.fp))
		lex_error_at(lx, path, 0, "cannot read: %s", strerror(errno));
	if (f.has_ahead)
		free(f.ahead.text);
	fclose(f.fp);
}

void
lex_read(struct lex *lx, const char *path, void (*read)(void *), void *arg)
{
	lex_push(lx, path, 0, read, arg);
}

/* pattern relative to the directory of the file from; NULL: no memory. */
static char *
lex_include_path(const char *from, const char *pattern)
{
	const char *slash = strrchr(from, '/');
	char *path;

	if (pattern[0] == '/' || slash == NULL)
		return strdup(pattern);
	if (asprintf(&path, "%.*s/%s", (int)(slash - from), from,
	    pattern) == -1)
		return NULL;
	return path;
}

void
lex_include(struct lex *lx, const char *pattern, int line,
    void (*read)(void *), void *arg)
{
	glob_t g;
	char *path;
	size_t i;

	if (lx->top->depth >= LEX_MAX_DEPTH) {
		lex_error(lx, line, "include: nested more than %d levels deep "
		    "(an include loop?)", LEX_MAX_DEPTH);
		return;
	}
	if ((path = lex_include_path(lx->top->path, pattern)) == NULL) {
		lex_error(lx, line, "out of memory");
		return;
	}
	/* A plain name must exist; a pattern may match nothing. */
	if (strpbrk(pattern, "*?[") == NULL)
		lex_push(lx, path, line, read, arg);
	else {
		memset(&g, 0, sizeof(g));
		switch (glob(path, 0, NULL, &g)) {
		case 0:
			for (i = 0; i < g.gl_pathc; i++)
				lex_push(lx, g.gl_pathv[i], line, read, arg);
			break;
		case GLOB_NOSPACE:
			lex_error(lx, line, "out of memory");
			break;
		}
		globfree(&g);
	}
	free(path);
}
