/*
 * snapshot.h: what the workers serve with, as main builds it at start,
 * at each reload and each change of a hosts file: the configuration, the
 * forward zones and the local zones, together. Immutable once made and
 * shared by reference: main posts one to every worker, which swaps to it
 * in its own thread and drops the one it had; the last reference frees
 * it. The count is atomic, so any thread may drop one.
 */
#ifndef DNSDAMPER_SNAPSHOT_H
#define DNSDAMPER_SNAPSHOT_H

#include "config.h"
#include "localzone.h"
#include "zone.h"

struct dnstap;
struct snapshot_config;

struct snapshot {
	const struct config	*conf;		/* the box's */
	struct zone_table	*zones;		/* referenced */
	struct localzone_table	*local;		/* referenced */
	struct dnstap		*tap;		/* the box's: dnstap output
						 * of conf, or NULL */
	/* Private. */
	unsigned		 refs;
	struct snapshot_config	*box;		/* conf, shared with the
						 * snapshots made from this
						 * one by snapshot_with_local */
};

/*
 * snapshot_new: a snapshot of *conf (moved in: *conf is left zeroed, not
 * to be freed by the caller), zones and local (their references taken
 * over), with one reference. Returns NULL if out of memory, having freed
 * all three.
 */
struct snapshot *snapshot_new(struct config *conf, struct zone_table *zones,
	    struct localzone_table *local);

/*
 * snapshot_with_local: a snapshot of s's configuration and zones with the
 * local zones local (its reference taken over): a hosts file read again.
 * Returns it with one reference, or NULL if out of memory, having
 * dropped local.
 */
struct snapshot *snapshot_with_local(const struct snapshot *s,
	    struct localzone_table *local);

/*
 * snapshot_with_zones: a snapshot of s's configuration and local zones
 * with the forward zones zones (its reference taken over): a runtime
 * forward zone added or removed. Returns it with one reference, or NULL
 * if out of memory, having dropped zones.
 */
struct snapshot *snapshot_with_zones(const struct snapshot *s,
	    struct zone_table *zones);

/*
 * snapshot_set_tap: s's dnstap output is tap (owned from now on, freed
 * with the configuration, e.g. after a reload once no worker writes to
 * it; NULL is fine). Only before s is shared with a worker.
 */
void	snapshot_set_tap(struct snapshot *s, struct dnstap *tap);

/* snapshot_ref / snapshot_unref: share s; the last unref frees it and
 * what it holds. unref(NULL) is fine. */
struct snapshot *snapshot_ref(struct snapshot *s);
void	snapshot_unref(struct snapshot *s);

#endif
