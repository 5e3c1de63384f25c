/*
 * systemd.h: the only file that talks to the service manager (libsystemd):
 * readiness and status notifications, the watchdog, socket activation and
 * the file descriptor store, and the journal. Every function is a no-op
 * (or says "not under systemd") when built without libsystemd or when not
 * started by systemd.
 */
#ifndef DNSDAMPER_SYSTEMD_H
#define DNSDAMPER_SYSTEMD_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"

/* The name our listening sockets have in the file descriptor store, or
 * its prefix: listen.c adds "/WORKER/PROTO/ADDRESS". */
#define SYSTEMD_FDNAME	"dnsdamper-listen"

/*
 * systemd_listen_fds: the descriptors passed by the service manager
 * (LISTEN_FDS: socket activation, or our own fd store after a restart),
 * with their names (FileDescriptorName=, or SYSTEMD_FDNAME). Sets *fds
 * and *names (owned by the caller; free with systemd_listen_free) and
 * returns how many, 0 when none were passed (both NULL), or -1 with both
 * NULL when LISTEN_FDS is malformed or memory runs out (logged).
 */
int	systemd_listen_fds(int **fds, char ***names);

/* systemd_listen_free: free what systemd_listen_fds returned (n of it). */
void	systemd_listen_free(int *fds, char **names, int n);

/*
 * systemd_store_remove: take the descriptors named name (FDSTOREREMOVE=1,
 * FDNAME=name) out of the file descriptor store. systemd_store_fd: put fd
 * in it, named name (FDSTORE=1; a name holds no ':', at most 255
 * characters), so that a restart gets it back and drops no query. No-ops
 * unless NOTIFY_SOCKET is set; a failed notification is logged, not
 * returned.
 */
void	systemd_store_remove(const char *name);
void	systemd_store_fd(int fd, const char *name);

/*
 * systemd_ready: READY=1 with STATUS=status. A failure to notify while
 * NOTIFY_SOCKET is set is fatal: the service manager would kill us.
 */
void	systemd_ready(const char *status);

/*
 * systemd_reloading: RELOADING=1 and MONOTONIC_USEC (CLOCK_MONOTONIC, in
 * microseconds), before a reload; systemd_ready ends the reload. These and
 * the notifications below log a failure and go on.
 */
void	systemd_reloading(void);

/* systemd_stopping: STOPPING=1. */
void	systemd_stopping(void);

/* systemd_status: STATUS=status, a one-line summary (borrowed). */
void	systemd_status(const char *status);

/*
 * systemd_watchdog_ms: the WatchdogSec= interval in ms (WATCHDOG_USEC for
 * our PID), 0 if none.
 */
uint64_t systemd_watchdog_ms(void);

/* systemd_watchdog: WATCHDOG=1, sent from the event loop. */
void	systemd_watchdog(void);

/*
 * systemd_journal_attached: 1 if standard error is connected to the
 * journal (JOURNAL_STREAM names its device and inode), else 0.
 */
int	systemd_journal_attached(void);

/*
 * systemd_journal_sink: the log sink (log_set_sink) for the journal: msg
 * (borrowed) as MESSAGE, with PRIORITY log_priority(level) and
 * SYSLOG_IDENTIFIER dnsdamper. A message the journal does not take is
 * lost, not retried.
 */
void	systemd_journal_sink(enum log_level level, const char *msg);

#endif
