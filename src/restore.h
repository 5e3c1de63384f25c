/*
 * restore.h: the cache file read back in a thread of its own while the
 * workers already answer, so that a restart answers from its first moment
 * whatever the size of the cache; names not yet restored go upstream as
 * usual, and what they fetch is never replaced by the older copy in the
 * file (cache_import).
 */
#ifndef DNSDAMPER_RESTORE_H
#define DNSDAMPER_RESTORE_H

#include <stdint.h>

#include "cache.h"
#include "zone.h"

struct restore;

/*
 * restore_start: read the cache file at path (copied) into c (borrowed:
 * it must outlive restore_stop) in a new thread, checking each entry's
 * forwarding against zones (a reference taken), as cachefile_read does;
 * a file of at most 1 MiB (or none) is read before it returns, as quick
 * as starting a thread, and then every first query finds its name.
 * Returns the restore, or NULL if out of memory or the thread could not
 * start (logged; the daemon then runs with an empty cache).
 */
struct restore *restore_start(struct cache *c, struct zone_table *zones,
	    const char *path);

/*
 * restore_stop: end the restore if it still runs (after at most a few
 * hundred more entries) and wait for its thread. Returns 1 if the file was
 * read to its end (or was missing or unusable) or an earlier call had
 * already stopped it; 0 if this call cut it short, so that the cache lacks
 * the rest of the file. NULL is allowed (returns 1).
 */
int	restore_stop(struct restore *r);

/* How far a restore has got; any thread may ask, at any time. */
struct restore_state {
	uint64_t	entries;	/* stored in the cache so far */
	uint64_t	total;		/* records in the file (0 until the
					 * file has been checked) */
	int		done;		/* 1: the thread has ended */
};

/* restore_state: r's progress into *out; r NULL: done, nothing stored. */
void	restore_state(const struct restore *r, struct restore_state *out);

/* restore_free: stop r (restore_stop) and free it. NULL is allowed. */
void	restore_free(struct restore *r);

#endif
