/* hosts.c: the hosts file read line by line, and its change stamp. */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"
#include "lex.h"

#define HOSTS_BLANKS	" \t\r\f\v"
#define HOSTS_LABEL_MAX	63	/* octets, RFC 1035 §2.3.4 */
#define HOSTS_NAME_MAX	255	/* octets in wire format, RFC 1035 §2.3.4 */

/* The reading of one file. */
struct hosts_reader {
	const char	*path;
	int		 line;
	hosts_line_fn	 on_line;
	hosts_warn_fn	 warn;
	void		*arg;
	unsigned	 broken;	/* broken lines so far */
};

static void __attribute__((format(printf, 2, 3)))
hosts_warn(struct hosts_reader *r, const char *fmt, ...)
{
	char msg[1024];
	int n = 0;
	va_list ap;

	/* A file of junk must not flood the log at every change. */
	if (r->line > 0 && ++r->broken > HOSTS_WARN_MAX)
		return;
	if (r->line > 0)
		n = snprintf(msg, sizeof(msg), "%s:%d: ", r->path, r->line);
	else
		n = snprintf(msg, sizeof(msg), "%s: ", r->path);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(msg))
		vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->warn(r->arg, msg);
}

/*
 * 1 if name is a host name we serve: labels of 1 to 63 printable ASCII
 * characters other than "\", at most HOSTS_NAME_MAX octets as a wire
 * name; one final "." allowed.
 */
static int
hosts_name_valid(const char *name)
{
	size_t label = 0, wire = 1;	/* the root label */
	const char *p;

	for (p = name; *p != '\0'; p++) {
		if (*p == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (*p < '!' || *p > '~' || *p == '\\' ||
		    ++label > HOSTS_LABEL_MAX)
			return 0;
		wire += label == 1 ? 2 : 1;
	}
	return p != name && wire <= HOSTS_NAME_MAX;
}

/* The address word into l; 0, or -1 if it is neither IPv4 nor IPv6. */
static int
hosts_address(const char *word, struct hosts_line *l)
{
	if (inet_pton(AF_INET, word, l->addr) == 1)
		l->family = AF_INET;
	else if (inet_pton(AF_INET6, word, l->addr) == 1)
		l->family = AF_INET6;
	else
		return -1;
	return 0;
}

/* One line, its comment cut off (in place): a valid one goes on. */
static int
hosts_line(struct hosts_reader *r, char *text)
{
	struct hosts_line l;
	char *word, *save, *addr;

	text[strcspn(text, "#")] = '\0';
	if ((addr = strtok_r(text, HOSTS_BLANKS, &save)) == NULL)
		return 0;
	memset(&l, 0, sizeof(l));
	l.file = r->path;
	l.line = r->line;
	if (hosts_address(addr, &l) == -1) {
		hosts_warn(r, "\"%s\" is not an IPv4 or IPv6 address; line "
		    "skipped", addr);
		return 0;
	}
	while ((word = strtok_r(NULL, HOSTS_BLANKS, &save)) != NULL) {
		if (!hosts_name_valid(word)) {
			hosts_warn(r, "\"%s\" is not a host name; line skipped",
			    word);
			return 0;
		}
		if (l.n_names == HOSTS_MAX_NAMES) {
			hosts_warn(r, "more than %d names; line skipped",
			    HOSTS_MAX_NAMES);
			return 0;
		}
		l.names[l.n_names++] = word;
	}
	if (l.n_names == 0) {
		hosts_warn(r, "no host name after %s; line skipped", addr);
		return 0;
	}
	r->on_line(r->arg, &l);
	return 1;
}

/* The stamp of the open file sb describes. */
static void
hosts_stamp_of(const struct stat *sb, struct hosts_stamp *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	stamp->dev = sb->st_dev;
	stamp->ino = sb->st_ino;
	stamp->size = sb->st_size;
	stamp->mtime = sb->st_mtim;
	stamp->ctime = sb->st_ctim;
}

/* What hosts_getline read. */
enum hosts_got {
	HOSTS_GOT_END,		/* the end of the file */
	HOSTS_GOT_LINE,
	HOSTS_GOT_LONG,		/* over HOSTS_LINE_MAX octets: not kept */
	HOSTS_GOT_NUL		/* a NUL octet in it: not kept */
};

/*
 * The next line of fp into text (HOSTS_LINE_MAX + 1 octets), without its
 * newline, NUL-terminated. A line too long or with a NUL octet is read
 * to its end but not kept, so that memory stays bounded whatever the
 * file holds (a file of junk without a newline included).
 */
static enum hosts_got
hosts_getline(FILE *fp, char *text)
{
	enum hosts_got got = HOSTS_GOT_LINE;
	size_t len = 0;
	int c, any = 0;

	while ((c = getc_unlocked(fp)) != EOF && c != '\n') {
		any = 1;
		if (c == '\0')
			got = HOSTS_GOT_NUL;
		else if (len == HOSTS_LINE_MAX && got == HOSTS_GOT_LINE)
			got = HOSTS_GOT_LONG;
		else if (len < HOSTS_LINE_MAX)
			text[len++] = (char)c;
	}
	text[len] = '\0';
	return c == EOF && !any ? HOSTS_GOT_END : got;
}

long
hosts_read(const char *path, struct hosts_stamp *stamp, hosts_line_fn line,
    hosts_warn_fn warn, void *arg)
{
	struct hosts_reader r = { path, 0, line, warn, arg, 0 };
	char text[HOSTS_LINE_MAX + 1];
	enum hosts_got got;
	struct stat sb;
	long n = 0;
	FILE *fp;

	if ((fp = lex_fopen(path)) == NULL) {
		hosts_warn(&r, "cannot open: %s", lex_strerror(errno));
		/* What stat says, so that a directory or an unreadable file
		 * left as it is does not look changed at every look. */
		hosts_stamp_get(path, stamp);
		return -1;
	}
	if (fstat(fileno(fp), &sb) == 0)
		hosts_stamp_of(&sb, stamp);
	else
		hosts_stamp_get(path, stamp);
	for (r.line = 1; (got = hosts_getline(fp, text)) != HOSTS_GOT_END;
	    r.line++)
		if (got == HOSTS_GOT_LINE)
			n += hosts_line(&r, text);
		else if (got == HOSTS_GOT_LONG)
			hosts_warn(&r, "longer than %d octets; line skipped",
			    HOSTS_LINE_MAX);
		else
			hosts_warn(&r, "a NUL octet; line skipped");
	r.line = 0;
	if (r.broken > HOSTS_WARN_MAX)
		hosts_warn(&r, "%u more broken lines skipped", r.broken -
		    HOSTS_WARN_MAX);
	if (ferror(fp)) {
		hosts_warn(&r, "cannot read: %s", strerror(errno));
		n = -1;
	}
	fclose(fp);
	return n;
}

void
hosts_stamp_get(const char *path, struct hosts_stamp *stamp)
{
	struct stat sb;

	if (stat(path, &sb) == 0) {
		hosts_stamp_of(&sb, stamp);
		return;
	}
	memset(stamp, 0, sizeof(*stamp));
	stamp->err = errno;
}

int
hosts_stamp_same(const struct hosts_stamp *a, const struct hosts_stamp *b)
{
	return a->err == b->err && a->dev == b->dev && a->ino == b->ino &&
	    a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	    a->mtime.tv_nsec == b->mtime.tv_nsec &&
	    a->ctime.tv_sec == b->ctime.tv_sec &&
	    a->ctime.tv_nsec == b->ctime.tv_nsec;
}
