/*
 * runforward.h: runtime forward zones at work in the daemon: each request
 * of the control socket checked as the configuration would be, each change
 * served from the next query on (a new snapshot for every worker, as a
 * reload makes), the cached names it reroutes flushed, the set saved in
 * its state file and the change logged with its owner; expiry on main's
 * tick. Main's thread only.
 */
#ifndef DNSDAMPER_RUNFORWARD_H
#define DNSDAMPER_RUNFORWARD_H

#include <stdint.h>

#include <event2/buffer.h>

#include "cache.h"
#include "config.h"
#include "control.h"
#include "snapshot.h"
#include "upstream.h"
#include "zone.h"

/* The state file's name, in the directory of cache-file. */
#define RUNFORWARD_STATE_FILE	"forward-zones"

struct runforward;

/* What the workers serve now (borrowed), and a new snapshot for them all
 * (its reference taken over). */
typedef struct snapshot *(*runforward_current_fn)(void *arg);
typedef void (*runforward_publish_fn)(void *arg, struct snapshot *snap);

/*
 * runforward_new: no runtime zone yet; upstreams from reg, names flushed
 * from cache (both borrowed, to outlive it); saved beside cache_file
 * (RUNFORWARD_STATE_FILE in its directory; NULL: not saved, so the zones
 * last until the daemon stops). current and publish are called with arg.
 * Returns NULL if out of memory.
 */
struct runforward *runforward_new(struct upstream_registry *reg,
	    struct cache *cache, const char *cache_file,
	    runforward_current_fn current, runforward_publish_fn publish,
	    void *arg);

/* runforward_free: every runtime zone forgotten (the file stays). NULL
 * is fine. */
void	runforward_free(struct runforward *rf);

/*
 * runforward_load: the zones of the state file (at start), each checked
 * (statefile_read: ours alone; runzone_parse: every field); what is
 * wrong is logged and left out, never fatal. now: monotonic ms.
 */
void	runforward_load(struct runforward *rf, uint64_t now);

/*
 * runforward_zones: the forward zones of conf with the runtime zones over
 * them (runzone_merge), for start and reload. A runtime zone whose
 * upstream would loop to one of conf's listen addresses does not fit the
 * new configuration: with strict (reload), NULL with errno EINVAL and one
 * line per such zone appended to errors (may be NULL), so that the reload
 * is refused and nothing changes; without (start), it is removed, logged
 * as an error. NULL with errno ENOMEM if out of memory. The table comes
 * with one reference.
 */
struct zone_table *runforward_zones(struct runforward *rf,
	    const struct config *conf, struct evbuffer *errors, int strict);

/*
 * runforward_save: the set into the state file now if it changed since
 * last written (at stop; else the tick writes it, at most once a second,
 * so that a burst of changes costs one fsync). A failure is logged.
 */
void	runforward_save(struct runforward *rf);

/*
 * runforward_tick: the zones whose lifetime ran out at now (monotonic ms)
 * removed, as a remove would; the state file written if the set changed.
 */
void	runforward_tick(struct runforward *rf, uint64_t now);

/*
 * runforward_control: a control_forward_fn (arg: the struct runforward):
 * list, add (zone, 1 to 16 upstreams as the upstream directive takes
 * them, none of them one of our listen addresses, policy, owner,
 * lifetime as a duration of 1 s to 366 d; at most RUNZONE_MAX zones),
 * remove (a zone, of owner only if given; or every zone of owner). The
 * state file follows at the next tick (runforward_save).
 * Returns the HTTP status; 400 with why, 404 for a zone that is not a
 * runtime zone, 403 for another owner's, 507 at the cap.
 */
int	runforward_control(void *arg, const struct control_forward_req *req,
	    struct evbuffer *out);

/* runforward_count: how many runtime zones there are. */
size_t	runforward_count(const struct runforward *rf);

#endif
