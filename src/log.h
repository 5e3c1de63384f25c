/* log.h: the one logging API of the daemon; a sink set by main says where. */
#ifndef DNSDAMPER_LOG_H
#define DNSDAMPER_LOG_H

#include <stdarg.h>
#include <stdint.h>

enum log_level {
	LOG_LEVEL_ERR = 0,	/* stops a start, a reload or an upstream */
	LOG_LEVEL_WARN = 1,	/* trouble worked around: always shown */
	LOG_LEVEL_INFO = 2,	/* start, stop, reload, state changes */
	LOG_LEVEL_DEBUG = 3	/* one line per event worth tracing */
};

/*
 * log_init: set the name prefixed to messages (borrowed, must outlive all
 * logging) and the highest level printed. Messages go to log_sink_stderr
 * until log_set_sink says otherwise.
 */
void	log_init(const char *progname, enum log_level level);

/*
 * log_set_sink: send messages to sink from now on (NULL: log_sink_stderr).
 * The sink gets each message of a level being printed: msg is the text as
 * formatted, with ": strerror(errno)" appended for log_err, log_warn and
 * fatal, without a newline, at most 1199 bytes, borrowed for the call; it
 * must not log itself. Changing to or from log_sink_syslog opens or closes
 * the connection to syslog(3).
 */
void	log_set_sink(void (*sink)(enum log_level level, const char *msg));

/*
 * log_sink_stderr: one line "dnsdamper: warning: msg" on standard error,
 * in one fprintf so that concurrent threads do not interleave; while the
 * level printed is DEBUG (-v) prefixed with the local time of day to the
 * millisecond ("12:34:56.789 ").
 */
void	log_sink_stderr(enum log_level level, const char *msg);

/*
 * log_sink_syslog: syslog(3), facility daemon, priority
 * log_priority(level), identity the name given to log_init, with the PID.
 */
void	log_sink_syslog(enum log_level level, const char *msg);

/* log_priority: the syslog(3) priority of level: LOG_ERR to LOG_DEBUG. */
int	log_priority(enum log_level level);

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
 * At most one message a while about events that may come in a flood (a
 * client refused, one over its rate limit), with a count of those held
 * back; zeroed, it lets the first one through. One may be shared by
 * several threads (log_limit_due is lock-free).
 */
struct log_limit {
	uint64_t	next;		/* ms: the next may go out from then */
	uint64_t	held;		/* held back since the last one */
};

/* The interval of warnings about this host's own trouble (out of
 * descriptors or memory, tcp-clients reached): one a minute, in ms. */
#define LOG_LIMIT_MINUTE	60000

/*
 * log_limit_due: an event at now (ms, monotonic): 1 if its message may
 * go out, with *held set to how many were held back since the last one
 * (the next then waits interval ms); 0 if it is held back (and counted).
 */
int	log_limit_due(struct log_limit *l, uint64_t now, uint64_t interval,
	    uint64_t *held);

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
