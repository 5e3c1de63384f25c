/*
 * rebuild.h: the slow parts of a reload and of a changed hosts file,
 * done on a thread of their own so that main's loop (worker 0's too)
 * answers meanwhile: the configuration read (parse_load) and the local
 * zones built (localbuild_table, which reads the hosts files: 100,000
 * lines take tens of milliseconds). The result is posted back to main's
 * loop, which makes the snapshot of it and publishes it as before. The
 * same thread drops the snapshots main retires, so that a large table is
 * freed off the loop too. One build at a time.
 */
#ifndef DNSDAMPER_REBUILD_H
#define DNSDAMPER_REBUILD_H

#include "config.h"
#include "localzone.h"
#include "snapshot.h"

struct event_base;
struct rebuild;

/* What a build made, handed to main's loop. */
struct rebuild_result {
	int			 reload;	/* 1: the configuration was read
						 * anew; 0: only the hosts files
						 * of snap's */
	int			 rc;		/* 0, or -1: nothing to use */
	struct config		 conf;		/* reload, rc 0: what was read;
						 * the receiver's to keep (move
						 * it out) or free */
	struct localzone_table	*local;		/* rc 0: one reference, the
						 * receiver's */
	struct snapshot		*snap;		/* hosts only: the snapshot
						 * whose configuration was built
						 * from, one reference, the
						 * receiver's */
	char			*errors;	/* reload, rc -1: the reasons,
						 * one per line (each also
						 * logged), or NULL; malloc'd,
						 * the receiver's */
};

/*
 * Called in base's loop with each finished build: r is the callee's,
 * to free with rebuild_result_free once it took what it keeps.
 */
typedef void (*rebuild_done_fn)(void *arg, struct rebuild_result *r);

/*
 * rebuild_new: the builder's thread (all signals blocked), whose results
 * go to done(arg, result) in base's loop (borrowed). NULL, errno set, on
 * failure (memory, descriptors, threads).
 */
struct rebuild *rebuild_new(struct event_base *base, rebuild_done_fn done,
	    void *arg);

/*
 * rebuild_reload: read the configuration at path (NULL: the built-in
 * defaults, config_defaults) and build its local zones. rebuild_hosts:
 * build the local zones of snap's configuration again (its hosts files
 * changed); snap is referenced until the result is handed over. Each
 * returns 0 (done is called later, exactly once, unless rebuild_free
 * comes first), or -1 with errno EBUSY while a build runs (one at a
 * time: its result is not handed over yet) or ENOMEM.
 */
int	rebuild_reload(struct rebuild *b, const char *path);
int	rebuild_hosts(struct rebuild *b, struct snapshot *snap);

/* rebuild_busy: 1 from a build's start until its done() returned. */
int	rebuild_busy(const struct rebuild *b);

/*
 * rebuild_release: drop snap's reference (taken over) on the builder's
 * thread, after the build running if any: the last one frees the
 * snapshot there instead of in the caller's loop. Then then(arg) is
 * called in base's loop (not if rebuild_free comes first), so that what
 * the snapshot held (its upstreams, in every report) is known gone. Out
 * of memory, snap is dropped and then(arg) called at once.
 */
void	rebuild_release(struct rebuild *b, struct snapshot *snap,
	    void (*then)(void *arg), void *arg);

/* rebuild_result_free: what r still holds, and r. NULL is fine. */
void	rebuild_result_free(struct rebuild_result *r);

/*
 * rebuild_free: stop the thread once it finished what it is doing (a
 * build's result not yet handed over is freed, its done never called),
 * dropping the snapshots still to release; from base's loop's thread.
 * NULL is fine.
 */
void	rebuild_free(struct rebuild *b);

#endif
