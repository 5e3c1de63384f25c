/* log.c: leveled messages, formatted once and handed to the sink main set. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

/*
 * Static: a process has one log, which every file writes to without a
 * context to carry it in; main sets it up (log_init, log_set_sink,
 * log_set_level) from the configuration, on reload too, and the rest
 * only reads it. The level and the sink are read by every worker thread
 * while main may change them: atomics, so that a reader sees the old
 * value or the new.
 */
static const char *log_progname = "dnsdamper";
static enum log_level log_level = LOG_LEVEL_INFO;
static void (*log_sink)(enum log_level, const char *) = log_sink_stderr;

void
log_init(const char *progname, enum log_level level)
{
	log_progname = progname;
	log_set_level(level);
}

void
log_set_sink(void (*sink)(enum log_level, const char *))
{
	void (*old)(enum log_level, const char *);

	old = __atomic_load_n(&log_sink, __ATOMIC_ACQUIRE);
	if (sink == NULL)
		sink = log_sink_stderr;
	if (sink == log_sink_syslog && old != log_sink_syslog)
		openlog(log_progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	__atomic_store_n(&log_sink, sink, __ATOMIC_RELEASE);
	/* syslog(3) reopens by itself if a thread still writes to it. */
	if (sink != log_sink_syslog && old == log_sink_syslog)
		closelog();
}

void
log_set_level(enum log_level level)
{
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

enum log_level
log_get_level(void)
{
	return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

int
log_priority(enum log_level level)
{
	static const int priorities[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
	    LOG_DEBUG };

	return priorities[level];
}

/* "12:34:56.789 " in local time, into buf. */
static void
stamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%02d:%02d:%02d.%03ld ", tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ts.tv_nsec / 1000000);
}

void
log_sink_stderr(enum log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warning", "info",
	    "debug" };
	char stamp_buf[32] = "";

	/* With -v, times, so that a trace can be laid beside a capture. */
	if (log_get_level() == LOG_LEVEL_DEBUG)
		stamp(stamp_buf, sizeof(stamp_buf));
	fprintf(stderr, "%s%s: %s: %s\n", stamp_buf, log_progname,
	    names[level], msg);
}

void
log_sink_syslog(enum log_level level, const char *msg)
{
	syslog(log_priority(level), "%s", msg);
}

static void	log_vwrite(enum log_level, const char *, const char *,
		    va_list) __attribute__((format(printf, 3, 0)));

static void
log_vwrite(enum log_level level, const char *errstr, const char *fmt,
    va_list ap)
{
	char msg[1024], full[1200];

	void (*sink)(enum log_level, const char *);

	if (level > log_get_level())
		return;
	sink = __atomic_load_n(&log_sink, __ATOMIC_ACQUIRE);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errstr == NULL) {
		sink(level, msg);
		return;
	}
	snprintf(full, sizeof(full), "%s: %s", msg, errstr);
	sink(level, full);
}

void
log_err(const char *fmt, ...)
{
	const char *errstr = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERR, errstr, fmt, ap);
	va_end(ap);
}

void
log_errx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERR, NULL, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	const char *errstr = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, errstr, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, NULL, fmt, ap);
	va_end(ap);
}

void
log_at(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, NULL, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_INFO, NULL, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	const char *errstr = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERR, errstr, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERR, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}

int
log_limit_due(struct log_limit *l, uint64_t now, uint64_t interval,
    uint64_t *held)
{
	uint64_t next = __atomic_load_n(&l->next, __ATOMIC_RELAXED);

	/* Lock-free: one limit may be shared by every worker thread. Of
	 * threads due at once, the one that moves next on says it. */
	if (now < next || !__atomic_compare_exchange_n(&l->next, &next,
	    now + interval, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		(void)__atomic_fetch_add(&l->held, 1, __ATOMIC_RELAXED);
		return 0;
	}
	*held = __atomic_exchange_n(&l->held, 0, __ATOMIC_RELAXED);
	return 1;
}
