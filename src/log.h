/* log.h: the one logging API of the daemon (stderr, syslog or journal). */
#ifndef DNSDAMPER_LOG_H
#define DNSDAMPER_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERR = 0,	/* what stops a start, a reload or an upstream */
	LOG_LEVEL_WARN = 1,	/* trouble worked around: always shown */
	LOG_LEVEL_INFO = 2,	/* start, stop, reload, state changes */
	LOG_LEVEL_DEBUG = 3	/* one line per event worth tracing */
};

/*
 * log_init: set the name prefixed to messages (borrowed, must outlive all
 * logging) and the highest level printed. Messages go to stderr.
 */
void	log_init(const char *progname, enum log_level level);

/* Where messages go. */
enum log_dest {
	LOG_DEST_STDERR,	/* "dnsdamper: level: message" lines */
	LOG_DEST_SYSLOG,	/* syslog(3), facility daemon */
	LOG_DEST_JOURNAL	/* the systemd journal, structured fields */
};

/* log_set_destination: send messages to dest from now on. */
void	log_set_destination(enum log_dest dest);

/* log_set_level: change the highest level printed (e.g. from -v). */
void	log_set_level(enum log_level level);

/* log_get_level: the highest level currently printed. */
enum log_level log_get_level(void);

/*
 * log_err / log_errx: an error (syslog and journal priority 3), with /
 * without ": strerror(errno)" appended: the start-up or reload fails, or
 * something is disabled until an operator acts.
 */
void	log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_errx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_warn: a warning with ": strerror(errno)" appended. */
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_warnx: a warning without errno. */
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_at: a message at a level the caller chooses, without errno. */
void	log_at(enum log_level level, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* log_info: an informational message, shown from level INFO. */
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_debug: a debugging message, shown from level DEBUG. */
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * fatal / fatalx: log an error (with / without errno) and exit(1). Only
 * for start-up errors and broken internal invariants, never on the query
 * path.
 */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
