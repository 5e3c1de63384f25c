/*
 * lkg.h: last known good: the rule that holds an upstream's NXDOMAIN or
 * NODATA for a question whose positive answer is in the cache, and its
 * state: the held questions, per forward zone the names in use and the
 * collapse detection, the hold timers. Shared by every worker (one
 * mutex); every time argument is monotonic milliseconds (clock_now_ms),
 * so the rule is tested at exact instants.
 *
 * The rule (doc/lkg.md says why):
 * - a negative answer for a question with no servable positive answer in
 *   the cache goes through at once (nothing is ever made up);
 * - otherwise it is held: the cached positive answer stands and is served
 *   stale, and the question is re-checked at a bounded, jittered rate;
 * - a question negative for a whole hold (last-known-good-hold) while its
 *   zone is not held is a deletion: its negative answer goes through;
 * - a zone where, within one hold, at least LKG_COLLAPSE_MIN questions
 *   turned negative and they are at least LKG_COLLAPSE_PERCENT % of the
 *   zone's names answered positively in the last hour, is held as a
 *   whole: none of its questions is taken as deleted until the upstream
 *   answers positively for them, their positive answer ends stale
 *   (stale-max-age), or an operator releases the zone;
 * - a positive answer ends the hold of its question at any time.
 */
#ifndef DNSDAMPER_LKG_H
#define DNSDAMPER_LKG_H

#include <stddef.h>
#include <stdint.h>

#include "cachekey.h"

/* Held questions, all zones together (the bound of the state). */
#define LKG_HELD_MAX		4096
/* Forward zones tracked; a zone beyond them is never held. */
#define LKG_ZONES_MAX		1024
/* A zone-wide collapse: this many questions, and this share of the
 * zone's names in use, negative within one hold. */
#define LKG_COLLAPSE_MIN	3
#define LKG_COLLAPSE_PERCENT	20
/* Names in use: answered positively within this long (two halves). */
#define LKG_IN_USE_MS		(3600 * 1000)
/* Re-checks of a held question: hold / 8 within these bounds, times a
 * factor uniform in [1/2, 3/2). */
#define LKG_RECHECK_MIN_MS	1000
#define LKG_RECHECK_MAX_MS	10000
/* The EDE extra text is at most this long (RFC 8914 §2: UTF-8). */
#define LKG_TEXT_MAX		48

enum lkg_verdict {
	LKG_PASS,	/* the negative answer goes through, cached */
	LKG_HOLD	/* held: the cached positive answer stands */
};

enum lkg_negative {
	LKG_NXDOMAIN,	/* RFC 2308 §2.1 */
	LKG_NODATA	/* RFC 2308 §2.2: an empty RRset, SRV or address */
};

struct lkg;

/*
 * lkg_new: empty state holding at most max_held questions (at most
 * LKG_HELD_MAX; 0 means LKG_HELD_MAX). Returns NULL if out of memory.
 * lkg_free: free it; NULL is allowed.
 */
struct lkg *lkg_new(size_t max_held);
void	lkg_free(struct lkg *l);

/*
 * lkg_positive: the upstream answered key (a question of forward zone
 * zone, its name in presentation format, borrowed) positively at now:
 * the name counts as in use in its zone for LKG_IN_USE_MS, and a hold of
 * key ends (and with the last of its zone's, the zone's hold, logged).
 */
void	lkg_positive(struct lkg *l, const char *zone,
	    const struct cache_key *key, uint64_t now);

/*
 * lkg_negative: the upstream answered key (of zone, whose
 * last-known-good-hold is hold ms) negatively (what) at now; the cache
 * has a positive answer for key servable until servable_until (ms: its
 * expiry plus stale-max-age), or 0 if it has none. Returns LKG_HOLD if
 * the negative answer is to be held (not cached, not sent), LKG_PASS if
 * it goes through: no positive answer, a deletion accepted after the
 * hold, a question of a released zone, or no room left to hold it (the
 * state's bound; counted in lkg_stats.overflow). Logs a zone's collapse
 * once, when it is detected.
 */
enum lkg_verdict lkg_negative(struct lkg *l, const char *zone, uint64_t hold,
	    const struct cache_key *key, enum lkg_negative what,
	    uint64_t servable_until, uint64_t now);

/*
 * lkg_forget: key is held no more, whatever the rule says: its zone no
 * longer has last-known-good (a reload turned it off). Costs one atomic
 * load while nothing is held.
 */
void	lkg_forget(struct lkg *l, const struct cache_key *key, uint64_t now);

/*
 * lkg_may_refresh: 0 if key is held and its next re-check is not due at
 * now, else 1. A 1 for a held key takes the re-check: the next one is
 * due an interval later (the rate stays bounded however many clients
 * ask). Costs one atomic load while nothing is held.
 */
int	lkg_may_refresh(struct lkg *l, const struct cache_key *key,
	    uint64_t now);

/*
 * lkg_text: the EDE extra text (RFC 8914 §2) of a last known good answer
 * to key, a static string of at most LKG_TEXT_MAX octets, or NULL if key
 * is not held. Costs one atomic load while nothing is held.
 */
const char *lkg_text(struct lkg *l, const struct cache_key *key);

/* lkg_count_answer: a last known good answer to key went to a client
 * (dnsdamper_lkg_answers_total of its zone). */
void	lkg_count_answer(struct lkg *l, const struct cache_key *key);

/*
 * lkg_release: an operator releases zone (presentation format, lower
 * case, absolute) at now: its hold ends, logged, and the negative answer
 * of each of its held questions goes through at the next re-check, which
 * is due at once. Returns how many questions that releases, or -1 if the
 * zone is not known here.
 */
long	lkg_release(struct lkg *l, const char *zone, uint64_t now);

/* A held question, as lkg_walk shows it. */
struct lkg_view {
	const char		*zone;
	const struct cache_key	*key;
	enum lkg_negative	 what;		/* what the upstream says now */
	uint64_t		 since;		/* ms: its first negative */
	uint64_t		 last;		/* ms: its latest negative */
	uint64_t		 hold_ends;	/* ms; 0 while its zone is held
						 * (until positive, stale-max-age
						 * or a release) */
	uint64_t		 servable_until; /* ms: the positive answer's
						 * stale-max-age end */
	int			 released;	/* its zone was released */
};

/* A zone, as lkg_walk_zones shows it. */
struct lkg_zone_view {
	const char	*zone;
	int		 held;		/* the zone is held */
	uint64_t	 held_since;	/* ms, when held */
	size_t		 n_held;	/* its held questions */
	uint64_t	 in_use;	/* names in use (estimated) */
	uint64_t	 answers;	/* last known good answers sent */
};

/*
 * lkg_walk, lkg_walk_zones: call fn(view, arg) for each held question,
 * or each zone seen, in no set order, at now (questions past their
 * servable_until are dropped first). The view is valid during the call
 * only; fn must not call back into l.
 */
void	lkg_walk(struct lkg *l, uint64_t now,
	    void (*fn)(const struct lkg_view *v, void *arg), void *arg);
void	lkg_walk_zones(struct lkg *l, uint64_t now,
	    void (*fn)(const struct lkg_zone_view *v, void *arg), void *arg);

/*
 * lkg_find: the view of key if it is held (into *v, its pointers valid
 * until the next call into l), 1; else 0.
 */
int	lkg_find(struct lkg *l, const struct cache_key *key,
	    struct lkg_view *v);

struct lkg_stats {
	uint64_t	held;		/* questions held now */
	uint64_t	zones_held;	/* zones held now */
	uint64_t	deletions;	/* negatives accepted after a hold */
	uint64_t	overflow;	/* negatives passed: no room */
};

/* lkg_stats: the figures above. */
void	lkg_stats(struct lkg *l, struct lkg_stats *out);

/* lkg_negative_name: "NXDOMAIN" or "NODATA". */
const char *lkg_negative_name(enum lkg_negative what);

#endif
