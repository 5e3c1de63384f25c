/* log.c: leveled messages to stderr. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "systemd.h"

static const char *log_progname = "dnsdamper";
static enum log_level log_level = LOG_LEVEL_INFO;
static enum log_dest log_dest = LOG_DEST_STDERR;

void
log_set_destination(enum log_dest dest)
{
	if (dest == LOG_DEST_SYSLOG && log_dest != LOG_DEST_SYSLOG)
		openlog(log_progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	if (dest != LOG_DEST_SYSLOG && log_dest == LOG_DEST_SYSLOG)
		closelog();
	log_dest = dest;
}

void
log_init(const char *progname, enum log_level level)
{
	log_progname = progname;
	log_level = level;
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level
log_get_level(void)
{
	return log_level;
}

static void
log_vwrite(enum log_level level, const char *errstr, const char *fmt,
    va_list ap)
{
	static const char *const names[] = { "warning", "info", "debug" };
	static const int priorities[] = { LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[1024], full[1200];

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_dest != LOG_DEST_STDERR) {
		if (errstr != NULL)
			snprintf(full, sizeof(full), "%s: %s", msg, errstr);
		else
			snprintf(full, sizeof(full), "%s", msg);
		if (log_dest == LOG_DEST_SYSLOG)
			syslog(priorities[level], "%s", full);
		else
			systemd_journal_write(priorities[level], full);
		return;
	}
	/* One fprintf per message so concurrent threads do not interleave. */
	if (errstr != NULL)
		fprintf(stderr, "%s: %s: %s: %s\n", log_progname,
		    names[level], msg, errstr);
	else
		fprintf(stderr, "%s: %s: %s\n", log_progname, names[level],
		    msg);
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
	log_vwrite(LOG_LEVEL_WARN, errstr, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
