/*
 * hosts.h: the hosts file (hosts(5)): per line an IPv4 or IPv6 address,
 * its canonical host name and its aliases; "#" starts a comment. Read line
 * by line for whoever answers from it: a broken line is reported as
 * `file:line: what; line skipped` and skipped, never fatal. And a file's
 * stamp, to tell with one stat(2) whether it changed since it was read.
 */
#ifndef DNSDAMPER_HOSTS_H
#define DNSDAMPER_HOSTS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Names on one line at most (glibc reads 35 aliases; this is plenty). */
#define HOSTS_MAX_NAMES	64
/* Octets of one line at most, its newline aside: 64 names of 255. */
#define HOSTS_LINE_MAX	16384
/* Broken lines of one file named in the log, each time it is read. */
#define HOSTS_WARN_MAX	10

/* One valid line of a hosts file; everything borrowed for the call. */
struct hosts_line {
	const char	*file;		/* as given to hosts_read */
	int		 line;		/* from 1 */
	int		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 addr[16];	/* network order: 4 octets for
					 * AF_INET, 16 for AF_INET6 */
	const char	*names[HOSTS_MAX_NAMES];	/* the canonical name
					 * first, then the aliases, as written,
					 * with or without the final ".": labels
					 * of 1 to 63 printable ASCII characters
					 * but "\" (no escapes), 255 octets at
					 * most in wire format */
	size_t		 n_names;	/* at least 1 */
};

/* What a file looked like; err 0 and the rest zero when it was absent. */
struct hosts_stamp {
	int		 err;		/* 0, or stat(2)'s errno */
	dev_t		 dev;
	ino_t		 ino;
	off_t		 size;
	struct timespec	 mtime;
	struct timespec	 ctime;
};

/* Called with each valid line, and with each message about the file. */
typedef void (*hosts_line_fn)(void *arg, const struct hosts_line *l);
typedef void (*hosts_warn_fn)(void *arg, const char *msg);

/*
 * hosts_read: read the hosts file at path (a regular file, lex_fopen),
 * calling line(arg, l) for each line with an address and at least one
 * name, in file order, and warn(arg, msg) for each broken one: `path:N:
 * "X" is not an IPv4 or IPv6 address; line skipped`, `path:N: no host
 * name after X; line skipped`, `path:N: "X" is not a host name; line
 * skipped`, `path:N: more than 64 names; line skipped`, `path:N: longer
 * than 16384 octets; line skipped`, `path:N: a NUL octet; line skipped`
 * (memory stays bounded: HOSTS_LINE_MAX octets of a line are kept); only
 * the first HOSTS_WARN_MAX broken lines are named, and then `path: K more
 * broken lines skipped`, so that a file of junk cannot flood the log at
 * every change. *stamp gets the stamp of the file as it was opened (or as
 * hosts_stamp_get sees it, if it would not open). Returns the number of
 * valid lines, or -1 after warn(`path: cannot open: why` or `path: cannot
 * read: why`).
 */
long	hosts_read(const char *path, struct hosts_stamp *stamp,
	    hosts_line_fn line, hosts_warn_fn warn, void *arg);

/* hosts_stamp_get: the stamp of the file at path now, absent or not. */
void	hosts_stamp_get(const char *path, struct hosts_stamp *stamp);

/*
 * hosts_stamp_same: 1 if a and b are stamps of the same unchanged file
 * (device, inode, size, modification and change times to the nanosecond,
 * so that an edit in place and a file renamed over it both show), or both
 * of its absence for the same reason; else 0.
 */
int	hosts_stamp_same(const struct hosts_stamp *a,
	    const struct hosts_stamp *b);

#endif
