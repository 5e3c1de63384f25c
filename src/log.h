/* log.h: the one logging API of the daemon (stderr, syslog or journal). */
#ifndef DNSDAMPER_LOG_H
#define DNSDAMPER_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_WARN = 0,	/* errors and warnings: always shown */
	LOG_LEVEL_INFO = 1,	/* start, stop, reload, state changes */
	LOG_LEVEL_DEBUG = 2	/* one line per event worth tracing */
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

/* log_warn: a warning with ": strerror(errno)" appended. */
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_warnx: a warning without errno. */
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_info: an informational message, shown from level INFO. */
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_debug: a debugging message, shown from level DEBUG. */
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * fatal / fatalx: log (with / without errno) and exit(1). Only for start-up
 * errors and broken internal invariants, never on the query path.
 */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
