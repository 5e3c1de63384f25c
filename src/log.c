/* log.c: leveled messages to stderr. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char *log_progname = "dnsdamper";
static enum log_level log_level = LOG_LEVEL_INFO;

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
	char msg[1024];

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
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
