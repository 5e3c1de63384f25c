/*
 * cachefile.h: the cache written to a file at a clean stop and read back
 * at start, with ages moved by the wall-clock time that passed, so that a
 * restart or upgrade does not send every host's queries upstream at once.
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

#endif
