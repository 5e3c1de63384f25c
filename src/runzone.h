/*
 * runzone.h: runtime forward zones, the overlay over the configured ones:
 * the set of zones added and removed at run time (over the control socket,
 * by VPN clients, agents and network scripts), each with its upstreams,
 * policy, owner and expiry; and the forwards the workers serve, the set
 * laid over the configuration's. Pure: no clock, no I/O, no locks (main's
 * thread alone keeps the set); time is a parameter.
 */
#ifndef DNSDAMPER_RUNZONE_H
#define DNSDAMPER_RUNZONE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "config.h"
#include "msg.h"
#include "zone.h"

/* Runtime forward zones at most, all owners together: what bounds memory. */
#define RUNZONE_MAX		1024
/* Upstreams of one runtime zone at most. */
#define RUNZONE_UPSTREAMS_MAX	16
/* The longest owner name, and its characters: no space, no quote. */
#define RUNZONE_OWNER_MAX	64
#define RUNZONE_OWNER_CHARS	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop" \
				"qrstuvwxyz0123456789._:@+-_"
/* The longest --lifetime, in seconds: a year. */
#define RUNZONE_LIFETIME_MAX	(366ULL * 24 * 3600)
/* expires of a zone without a lifetime. */
#define RUNZONE_NEVER		UINT64_MAX

/* One runtime forward zone. */
struct runzone {
	struct config_forward	 fw;		/* owned: zone (canonical,
						 * absolute), upstreams,
						 * policy; max_inflight 0 */
	char			 owner[RUNZONE_OWNER_MAX + 1]; /* "" none */
	uint64_t		 lifetime;	/* s; 0: none */
	uint64_t		 expires;	/* monotonic ms, or
						 * RUNZONE_NEVER */
};

/* The runtime zones, in the order they were first added. */
struct runzone_set {
	struct runzone		*zones;		/* owned array */
	size_t			 n;
	size_t			 cap;
};

/* Called with each zone a removal takes away, before it is freed. */
typedef void (*runzone_fn)(const struct runzone *rz, void *arg);

/* runzone_set_init / runzone_set_free: an empty set; everything freed. */
void	runzone_set_init(struct runzone_set *set);
void	runzone_set_free(struct runzone_set *set);

/* runzone_free: release what rz owns (its forward). */
void	runzone_free(struct runzone *rz);

/*
 * runzone_owner_ok: 1 if owner is a name an owner may have: 1 to
 * RUNZONE_OWNER_MAX characters of RUNZONE_OWNER_CHARS; else 0.
 */
int	runzone_owner_ok(const char *owner);

/*
 * runzone_name: str (presentation format) as a zone name in canonical
 * form: lower case, absolute (directive_canonical_name), malloc'd; NULL
 * if str is not a domain name or out of memory.
 */
char	*runzone_name(const char *str);

/*
 * runzone_policy: the policy named word (the `policy` directive's words:
 * order, random, fastest, hash) into *policy. Returns 0, or -1 if word
 * names none (*policy untouched).
 */
int	runzone_policy(const char *word, enum config_policy *policy);

/*
 * runzone_find: the runtime zone named zone (canonical, as
 * directive_canonical_name writes it: lower case, absolute), or NULL.
 * Borrowed: valid until the set changes.
 */
struct runzone *runzone_find(const struct runzone_set *set, const char *zone);

/*
 * runzone_add: put *rz (moved in: what it owns is the set's from now on,
 * also on error, when it is freed) into set, in place of a zone of the
 * same name (*replaced then 1, else 0): the last add wins, whoever owned
 * the zone. Returns 0, or -1 with errno ENOSPC (RUNZONE_MAX zones already,
 * none replaced) or ENOMEM.
 */
int	runzone_add(struct runzone_set *set, struct runzone *rz,
	    int *replaced);

/*
 * runzone_same_routing: 1 if a and b forward the same way (the same
 * upstreams in the same order, the same policy), else 0: adding b over
 * a is then a renewal, and nothing cached moves.
 */
int	runzone_same_routing(const struct runzone *a, const struct runzone *b);

/*
 * runzone_remove: take zone out of set, if its owner is owner (any owner
 * when owner is NULL); fn (may be NULL) sees it first. Returns 0, or -1
 * with errno ENOENT (no such runtime zone) or EPERM (another owner's).
 */
int	runzone_remove(struct runzone_set *set, const char *zone,
	    const char *owner, runzone_fn fn, void *arg);

/* runzone_remove_owner: take every zone of owner out; fn sees each
 * first. Returns how many. */
size_t	runzone_remove_owner(struct runzone_set *set, const char *owner,
	    runzone_fn fn, void *arg);

/*
 * runzone_expire: take out every zone whose expiry is at or before now
 * (monotonic ms); fn sees each first. Returns how many.
 */
size_t	runzone_expire(struct runzone_set *set, uint64_t now, runzone_fn fn,
	    void *arg);

/*
 * runzone_next_expiry: the earliest expiry of set (monotonic ms), or
 * RUNZONE_NEVER.
 */
uint64_t runzone_next_expiry(const struct runzone_set *set);

/*
 * runzone_merge: the forwards the workers serve: every forward of conf
 * but those a runtime zone of the same name takes precedence over, then
 * the runtime zones, into *out (a copy of *conf whose forwards array is
 * new; its forwards borrow their parts from conf and set, so free it with
 * runzone_merge_free before either changes). A forward without its own
 * max-inflight gets zone_share of conf alone: runtime zones do not thin
 * the budgets of the configured ones. Returns 0, or -1 (ENOMEM).
 */
int	runzone_merge(const struct runzone_set *set, const struct config *conf,
	    struct config *out);
void	runzone_merge_free(struct config *out);

/*
 * The state file, one zone a line after a comment line:
 *   ZONE POLICY OWNER EXPIRES LIFETIME UPSTREAM...
 * OWNER "-" for none, EXPIRES in Unix seconds (0: never), LIFETIME in
 * seconds (0: none), UPSTREAMs as addr_format writes them.
 *
 * runzone_format: set into b, expiries moved from the monotonic clock
 * (now, ms) to the wall clock (wall, Unix s). Returns 0, -1 if out of
 * memory.
 */
int	runzone_format(const struct runzone_set *set, uint64_t now,
	    int64_t wall, struct evbuffer *b);

/*
 * runzone_parse: the zones of text (NUL-terminated, as runzone_format
 * writes it) into set (added as runzone_add does), expiries moved back to
 * the monotonic clock; a zone already expired at wall is left out, a
 * line that does not parse (zone, policy, owner, numbers, addresses, at
 * most RUNZONE_UPSTREAMS_MAX, none twice) is skipped, each said in a line
 * appended to errs ("line N: why"). Returns how many zones were added.
 */
size_t	runzone_parse(struct runzone_set *set, const char *text,
	    uint64_t now, int64_t wall, struct evbuffer *errs);

/*
 * What a change of the runtime zones reroutes, for cache_flush_if: the
 * tables before and after (borrowed), the zones the change touched (wire,
 * folded; n of them), or all: every name looked at (out of memory).
 */
struct runzone_reroute {
	const struct zone_table	*old;
	const struct zone_table	*new;
	uint8_t			 (*wire)[MSG_NAME_MAX];
	size_t			*len;
	size_t			 n;
	int			 all;
};

/*
 * runzone_keep: cache_flush_if's keep for a runtime change (arg: a struct
 * runzone_reroute): 1 for a question (qname wire, folded, len octets;
 * qtype host order) that no touched zone covers, or that is forwarded as
 * before (zone_route_kept); 0 for one that goes elsewhere now, to be
 * flushed. Only the names under a touched zone are looked up.
 */
int	runzone_keep(const uint8_t *qname, size_t len, uint16_t qtype,
	    void *arg);

/*
 * runzone_time_left: seconds until rz expires at now (ms, rounded up),
 * or -1 for never.
 */
int64_t	runzone_time_left(const struct runzone *rz, uint64_t now);

#endif
