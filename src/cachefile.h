/*
 * cachefile.h: the cache written to a file at a clean stop and read back
 * at start (in the background: restore.h), with ages moved by the
 * wall-clock time that passed, so that a restart or upgrade does not send
 * every host's queries upstream at once.
 */
#ifndef DNSDAMPER_CACHEFILE_H
#define DNSDAMPER_CACHEFILE_H

#include <stdint.h>

#include "cache.h"
#include "zone.h"

/*
 * cachefile_write: every servable entry of c as of now (monotonic ms) into
 * path, atomically (a new temporary file, never one found there, renamed
 * over it), with the forward zones of zones and the upstreams each
 * forwards to; only if the directory of path is owned by us or root and
 * writable by no one else. Returns the number of entries written, or -1
 * (logged).
 */
long	cachefile_write(struct cache *c, struct zone_table *zones,
	    const char *path, uint64_t now);

/*
 * cachefile_read: the entries of path into c, each aged by the time since
 * it was written; entries past stale-max-age (or expired, without
 * serve-stale) are dropped, and so are those whose name is now forwarded
 * differently (another zone of zones, or other upstreams), as a reload
 * would flush them; every entry is checked again as cache_import does. A
 * missing file is not an error; a damaged or foreign one, one owned by
 * another user than us or root or writable by others, a link, or one
 * larger than the cache could have written, is ignored whole with a
 * warning. Returns the number of entries stored, or -1 if the file was
 * unusable.
 */
long	cachefile_read(struct cache *c, struct zone_table *zones,
	    const char *path, uint64_t now);

/*
 * How far a cachefile_read_progress has got, for another thread to watch
 * and to stop it. Every field is read and written with __atomic builtins;
 * zero it before the read.
 */
struct cachefile_progress {
	uint64_t	total;		/* records in the file, once checked */
	uint64_t	stored;		/* of them stored so far */
	int		stop;		/* set by another thread: end early */
	int		cut;		/* set by the read: it ended early */
};

/*
 * cachefile_read_progress: cachefile_read, safe while other threads use
 * c and zones (entries go in through cache_import's locking, and one
 * already there stays if it is newer), saying in *p (which it does not
 * keep) how far it got, and ending early, after at most a few hundred
 * more records, once p->stop is set: then p->cut is set and the return
 * is the entries stored until then. p may be NULL.
 */
long	cachefile_read_progress(struct cache *c, struct zone_table *zones,
	    const char *path, uint64_t now, struct cachefile_progress *p);

#endif
