/* restore.c: the cache file read back in a thread while the workers serve. */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cachefile.h"
#include "clock.h"
#include "log.h"
#include "restore.h"

/*
 * A file up to this size is read before the first query, as a start did
 * before the restore had a thread: a few milliseconds, and every query
 * finds its name there (even with every upstream down). 1 MiB is some
 * 8,000 entries.
 */
#define RESTORE_INLINE_MAX	(1 << 20)

struct restore {
	pthread_t		 thread;
	struct cache		*cache;
	struct zone_table	*zones;		/* a reference */
	char			*path;
	struct cachefile_progress progress;
	int			 done;		/* atomic: the thread ended */
	int			 joined;	/* main's only */
};

static void *
restore_main(void *arg)
{
	struct restore *r = arg;

	(void)cachefile_read_progress(r->cache, r->zones, r->path,
	    clock_now_ms(), &r->progress);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct restore *
restore_start(struct cache *c, struct zone_table *zones, const char *path)
{
	struct restore *r;
	struct stat st;
	sigset_t all, old;
	int rc;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->path = strdup(path)) == NULL) {
		free(r);
		log_err("cache-file %s: not restored", path);
		return NULL;
	}
	r->cache = c;
	r->zones = zone_table_ref(zones);
	/* cachefile_read_progress makes the checks that count (no link,
	 * its owner and mode): this only picks the way to read. */
	if (lstat(path, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size <= RESTORE_INLINE_MAX) {
		restore_main(r);
		r->joined = 1;
		zone_table_unref(r->zones);
		r->zones = NULL;
		return r;
	}
	/* The thread inherits the mask: every signal is main's loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&r->thread, NULL, restore_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		log_err("cache-file %s: not restored: no thread", path);
		zone_table_unref(r->zones);
		free(r->path);
		free(r);
		return NULL;
	}
	return r;
}

int
restore_stop(struct restore *r)
{
	int whole;

	if (r == NULL || r->joined)
		return 1;
	__atomic_store_n(&r->progress.stop, 1, __ATOMIC_RELEASE);
	pthread_join(r->thread, NULL);
	r->joined = 1;
	whole = !__atomic_load_n(&r->progress.cut, __ATOMIC_RELAXED);
	/* The zones' upstreams are main's to free: let go of them here. */
	zone_table_unref(r->zones);
	r->zones = NULL;
	return whole;
}

void
restore_state(const struct restore *r, struct restore_state *out)
{
	memset(out, 0, sizeof(*out));
	out->done = 1;
	if (r == NULL)
		return;
	out->entries = __atomic_load_n(&r->progress.stored, __ATOMIC_RELAXED);
	out->total = __atomic_load_n(&r->progress.total, __ATOMIC_RELAXED);
	out->done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

void
restore_free(struct restore *r)
{
	if (r == NULL)
		return;
	(void)restore_stop(r);
	free(r->path);
	free(r);
}
