/* systemd.c: sd_notify, socket activation, fd store and journal, or stubs. */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif

#include "log.h"
#include "systemd.h"

#ifdef HAVE_SYSTEMD

int
systemd_listen_fds(int **fds, char ***names)
{
	int n, i;

	*fds = NULL;
	*names = NULL;
	if ((n = sd_listen_fds_with_names(1, names)) <= 0) {
		if (n == 0)
			return 0;
		log_warnx("LISTEN_FDS: %s", strerror(-n));
		return -1;
	}
	if ((*fds = calloc((size_t)n, sizeof(**fds))) == NULL) {
		log_warnx("LISTEN_FDS: %s", strerror(ENOMEM));
		systemd_listen_free(NULL, *names, n);
		*names = NULL;
		return -1;
	}
	for (i = 0; i < n; i++)
		(*fds)[i] = SD_LISTEN_FDS_START + i;
	return n;
}

void
systemd_listen_free(int *fds, char **names, int n)
{
	int i;

	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
	free(fds);
}

static int
notify(const char *state, const int *fds, size_t n)
{
	int rc;

	if (getenv("NOTIFY_SOCKET") == NULL)
		return 0;
	rc = fds != NULL ? sd_pid_notify_with_fds(0, 0, state, fds,
	    (unsigned)n) : sd_notify(0, state);
	if (rc < 0)
		log_warnx("sd_notify %.*s: %s", (int)strcspn(state, "\n"),
		    state, strerror(-rc));
	return rc;
}

void
systemd_store_remove(const char *name)
{
	char buf[300];

	snprintf(buf, sizeof(buf), "FDSTOREREMOVE=1\nFDNAME=%s", name);
	notify(buf, NULL, 0);
}

void
systemd_store_fd(int fd, const char *name)
{
	char buf[300];

	snprintf(buf, sizeof(buf), "FDSTORE=1\nFDNAME=%s", name);
	notify(buf, &fd, 1);
}

void
systemd_ready(const char *status)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "READY=1\nSTATUS=%s", status);
	if (notify(buf, NULL, 0) < 0)
		fatalx("cannot tell the service manager we are ready");
}

void
systemd_reloading(void)
{
	struct timespec ts;
	char buf[128];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, sizeof(buf), "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000 +
	    (unsigned long long)ts.tv_nsec / 1000);
	notify(buf, NULL, 0);
}

void
systemd_stopping(void)
{
	notify("STOPPING=1", NULL, 0);
}

void
systemd_status(const char *status)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "STATUS=%s", status);
	notify(buf, NULL, 0);
}

uint64_t
systemd_watchdog_ms(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec / 1000 : 0;
}

void
systemd_watchdog(void)
{
	notify("WATCHDOG=1", NULL, 0);
}

int
systemd_journal_attached(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) == -1)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

void
systemd_journal_sink(enum log_level level, const char *msg)
{
	sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", log_priority(level),
	    "SYSLOG_IDENTIFIER=dnsdamper", NULL);
}

#else	/* !HAVE_SYSTEMD */

int
systemd_listen_fds(int **fds, char ***names)
{
	*fds = NULL;
	*names = NULL;
	return 0;
}

void
systemd_listen_free(int *fds, char **names, int n)
{
	(void)n;
	free(fds);
	free(names);
}

void
systemd_store_remove(const char *name)
{
	(void)name;
}

void
systemd_store_fd(int fd, const char *name)
{
	(void)fd;
	(void)name;
}

void
systemd_ready(const char *status)
{
	(void)status;
}

void
systemd_reloading(void)
{
}

void
systemd_stopping(void)
{
}

void
systemd_status(const char *status)
{
	(void)status;
}

uint64_t
systemd_watchdog_ms(void)
{
	return 0;
}

void
systemd_watchdog(void)
{
}

int
systemd_journal_attached(void)
{
	return 0;
}

void
systemd_journal_sink(enum log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

#endif
