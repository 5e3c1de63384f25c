/* lkg.c: last known good: which upstream negative answers are held, and for how long. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "csprng.h"
#include "lkg.h"
#include "log.h"
#include "msg.h"

/* Slots of the count of held questions by hash: most lookups are of a
 * question not held, and a zero there spares the walk of held[]. */
#define LKG_SLOTS	4096

/* Bits of each half of a zone's sketch of names in use. */
#define LKG_SKETCH_BITS	4096
#define LKG_HALF_MS	(LKG_IN_USE_MS / 2)

struct lkg_zone {
	char		*name;		/* owned, as forward's zone */
	int		 held;
	uint64_t	 held_since;	/* ms */
	size_t		 n_held;	/* its entries in held[] */
	uint64_t	 answers;
	/* Names answered positively: a bit per name hash in the half hour
	 * numbered epoch and in the one before (linear counting, close for
	 * the few hundred names a zone has in use on a host). */
	uint64_t	 epoch;
	uint8_t		 cur[LKG_SKETCH_BITS / 8];
	uint8_t		 prev[LKG_SKETCH_BITS / 8];
};

struct lkg_entry {
	struct cache_key	 key;
	size_t			 zone;		/* index into zones[] */
	enum lkg_negative	 what;
	uint64_t		 since;
	uint64_t		 last;
	uint64_t		 next_check;	/* ms: a refresh may go then */
	uint64_t		 hold;		/* ms, the zone's */
	uint64_t		 servable_until;
	int			 released;
};

struct lkg {
	pthread_mutex_t		 lock;
	size_t			 max_held;
	struct lkg_entry	**held;		/* n_held of them */
	size_t			 n_held;	/* also read without the lock
						 * (relaxed): the fast path */
	uint16_t		 slots[LKG_SLOTS]; /* held questions by hash */
	struct lkg_zone		**zones;
	size_t			 n_zones;
	uint64_t		 deletions;
	uint64_t		 overflow;
	uint64_t		 swept;		/* ms of the last sweep */
};

struct lkg *
lkg_new(size_t max_held)
{
	struct lkg *l;

	if (max_held == 0 || max_held > LKG_HELD_MAX)
		max_held = LKG_HELD_MAX;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	if ((l->held = calloc(max_held, sizeof(*l->held))) == NULL ||
	    (l->zones = calloc(LKG_ZONES_MAX, sizeof(*l->zones))) == NULL ||
	    pthread_mutex_init(&l->lock, NULL) != 0) {
		free(l->held);
		free(l->zones);
		free(l);
		return NULL;
	}
	l->max_held = max_held;
	return l;
}

void
lkg_free(struct lkg *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n_held; i++)
		free(l->held[i]);
	for (i = 0; i < l->n_zones; i++) {
		free(l->zones[i]->name);
		free(l->zones[i]);
	}
	free(l->held);
	free(l->zones);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

const char *
lkg_negative_name(enum lkg_negative what)
{
	return what == LKG_NXDOMAIN ? "NXDOMAIN" : "NODATA";
}

static size_t
held_count(struct lkg *l)
{
	return __atomic_load_n(&l->n_held, __ATOMIC_RELAXED);
}

/* The zone named name, made if new and there is room; -1 if none. */
static long
zone_get(struct lkg *l, const char *name, int make)
{
	struct lkg_zone *z;
	size_t i;

	for (i = 0; i < l->n_zones; i++)
		if (strcmp(l->zones[i]->name, name) == 0)
			return (long)i;
	if (!make || l->n_zones == LKG_ZONES_MAX ||
	    (z = calloc(1, sizeof(*z))) == NULL)
		return -1;
	if ((z->name = strdup(name)) == NULL) {
		free(z);
		return -1;
	}
	l->zones[l->n_zones] = z;
	return (long)l->n_zones++;
}

/* The index of key in held[], or -1. */
static long
entry_find(const struct lkg *l, const struct cache_key *key)
{
	size_t i;

	if (l->slots[key->hash % LKG_SLOTS] == 0)
		return -1;
	for (i = 0; i < l->n_held; i++)
		if (l->held[i]->key.hash == key->hash &&
		    l->held[i]->key.len == key->len &&
		    memcmp(l->held[i]->key.data, key->data, key->len) == 0)
			return (long)i;
	return -1;
}

/* The zone's hold ends with its last held question. */
static void
zone_settle(struct lkg *l, struct lkg_zone *z, uint64_t now, const char *why)
{
	if (!z->held || z->n_held > 0)
		return;
	z->held = 0;
	log_warnx("last-known-good: zone %s no longer held after %llu s: %s",
	    z->name, (unsigned long long)((now - z->held_since) / 1000), why);
}

/* Drop held[i]; why: for the log when that ends its zone's hold. */
static void
entry_drop(struct lkg *l, size_t i, uint64_t now, const char *why)
{
	struct lkg_zone *z = l->zones[l->held[i]->zone];

	l->slots[l->held[i]->key.hash % LKG_SLOTS]--;
	free(l->held[i]);
	l->held[i] = l->held[l->n_held - 1];
	__atomic_store_n(&l->n_held, l->n_held - 1, __ATOMIC_RELAXED);
	z->n_held--;
	zone_settle(l, z, now, why);
}

/* Questions whose positive answer is no longer servable are let go: at
 * most once a second, the walk is the length of held[]. */
static void
sweep(struct lkg *l, uint64_t now)
{
	size_t i;

	if (l->swept != 0 && now < l->swept + 1000)
		return;
	l->swept = now;
	for (i = 0; i < l->n_held; )
		if (now >= l->held[i]->servable_until)
			entry_drop(l, i, now, "its answers ended stale");
		else
			i++;
}

/* Bit of the name of key in a zone's sketch. */
static size_t
sketch_bit(const struct cache_key *key)
{
	const uint8_t *qname;
	uint64_t h = 14695981039346656037ULL;
	size_t len, i;

	/* The name, not the question: SRV, A and AAAA of one are one. */
	qname = cachekey_qname(key, &len);
	for (i = 0; i < len; i++)
		h = (h ^ qname[i]) * 1099511628211ULL;
	return (size_t)(h % LKG_SKETCH_BITS);
}

/* Age z's sketch to now's half hour. */
static void
sketch_age(struct lkg_zone *z, uint64_t now)
{
	uint64_t epoch = now / LKG_HALF_MS;

	if (epoch == z->epoch)
		return;
	if (epoch == z->epoch + 1)
		memcpy(z->prev, z->cur, sizeof(z->prev));
	else
		memset(z->prev, 0, sizeof(z->prev));
	memset(z->cur, 0, sizeof(z->cur));
	z->epoch = epoch;
}

/* Names of z answered positively in the last half hour to hour. */
static uint64_t
sketch_count(const struct lkg_zone *z)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < sizeof(z->cur); i++)
		n += (uint64_t)__builtin_popcount(z->cur[i] | z->prev[i]);
	return n;
}

/* A jittered interval to the next re-check of a question held hold ms. */
static uint64_t
recheck_in(uint64_t hold)
{
	uint64_t ms = hold / 8;

	if (ms < LKG_RECHECK_MIN_MS)
		ms = LKG_RECHECK_MIN_MS;
	if (ms > LKG_RECHECK_MAX_MS)
		ms = LKG_RECHECK_MAX_MS;
	return ms / 2 + csprng_uniform((uint32_t)ms);
}

/* When held[i] may be re-checked next: soon, but no later than the end
 * of its hold, so that a deletion is seen as soon as it is one. */
static void
entry_schedule(struct lkg *l, struct lkg_entry *e, uint64_t now)
{
	e->next_check = now + recheck_in(e->hold);
	if (!l->zones[e->zone]->held && !e->released &&
	    e->since + e->hold > now && e->next_check > e->since + e->hold)
		e->next_check = e->since + e->hold;
}

void
lkg_positive(struct lkg *l, const char *zone, const struct cache_key *key,
    uint64_t now)
{
	struct lkg_zone *z;
	size_t bit;
	long zi, i;

	pthread_mutex_lock(&l->lock);
	if ((zi = zone_get(l, zone, 1)) != -1) {
		z = l->zones[zi];
		sketch_age(z, now);
		bit = sketch_bit(key);
		z->cur[bit / 8] |= (uint8_t)(1 << (bit % 8));
	}
	if ((i = entry_find(l, key)) != -1)
		entry_drop(l, (size_t)i, now, "the upstream answers again");
	pthread_mutex_unlock(&l->lock);
}

/*
 * A question of zone zi turned negative at now: hold the zone if the
 * questions negative within one hold (not released) are a collapse.
 */
static void
collapse_check(struct lkg *l, size_t zi, const struct lkg_entry *ex,
    uint64_t now)
{
	struct lkg_zone *z = l->zones[zi];
	uint64_t recent = 0, in_use;
	char name[1024];
	const uint8_t *qname;
	size_t i, len;

	if (z->held)
		return;
	for (i = 0; i < l->n_held; i++)
		if (l->held[i]->zone == zi && !l->held[i]->released &&
		    l->held[i]->since + l->held[i]->hold > now)
			recent++;
	sketch_age(z, now);
	in_use = sketch_count(z);
	if (in_use < recent)
		in_use = recent;
	if (recent < LKG_COLLAPSE_MIN ||
	    recent * 100 < in_use * LKG_COLLAPSE_PERCENT)
		return;
	z->held = 1;
	z->held_since = now;
	for (i = 0; i < l->n_held; i++)
		if (l->held[i]->zone == zi)
			l->held[i]->released = 0;
	qname = cachekey_qname(&ex->key, &len);
	log_warnx("last-known-good: zone %s held: the upstream turned "
	    "negative for %llu of its %llu names in use within %llu s "
	    "(e.g. %s): keeping their last known good answers", z->name,
	    (unsigned long long)recent, (unsigned long long)in_use,
	    (unsigned long long)(ex->hold / 1000),
	    msg_name_to_str(qname, len, name, sizeof(name)));
}

/* A first negative answer for key: hold it, if there is room. */
static enum lkg_verdict
entry_start(struct lkg *l, const char *zone, uint64_t hold,
    const struct cache_key *key, enum lkg_negative what,
    uint64_t servable_until, uint64_t now)
{
	struct lkg_entry *e;
	long zi;

	if (l->n_held == l->max_held || (zi = zone_get(l, zone, 1)) == -1 ||
	    (e = calloc(1, sizeof(*e))) == NULL) {
		l->overflow++;
		return LKG_PASS;
	}
	e->key = *key;
	e->zone = (size_t)zi;
	e->what = what;
	e->since = e->last = now;
	e->hold = hold;
	e->servable_until = servable_until;
	l->held[l->n_held] = e;
	l->slots[key->hash % LKG_SLOTS]++;
	__atomic_store_n(&l->n_held, l->n_held + 1, __ATOMIC_RELAXED);
	l->zones[zi]->n_held++;
	collapse_check(l, (size_t)zi, e, now);
	entry_schedule(l, e, now);
	return LKG_HOLD;
}

enum lkg_verdict
lkg_negative(struct lkg *l, const char *zone, uint64_t hold,
    const struct cache_key *key, enum lkg_negative what,
    uint64_t servable_until, uint64_t now)
{
	enum lkg_verdict v = LKG_HOLD;
	struct lkg_entry *e;
	long i;

	pthread_mutex_lock(&l->lock);
	sweep(l, now);
	i = entry_find(l, key);
	if (servable_until <= now) {
		/* Never positive, or no longer: nothing to hold with. */
		if (i != -1)
			entry_drop(l, (size_t)i, now,
			    "its answers ended stale");
		v = LKG_PASS;
	} else if (i == -1)
		v = entry_start(l, zone, hold, key, what, servable_until, now);
	else {
		e = l->held[i];
		e->what = what;
		e->last = now;
		e->servable_until = servable_until;
		if (e->released || (!l->zones[e->zone]->held &&
		    now >= e->since + e->hold)) {
			if (!e->released)
				l->deletions++;
			entry_drop(l, (size_t)i, now, "a deletion");
			v = LKG_PASS;
		} else
			entry_schedule(l, e, now);
	}
	pthread_mutex_unlock(&l->lock);
	return v;
}

void
lkg_forget(struct lkg *l, const struct cache_key *key, uint64_t now)
{
	long i;

	if (held_count(l) == 0)
		return;
	pthread_mutex_lock(&l->lock);
	if ((i = entry_find(l, key)) != -1)
		entry_drop(l, (size_t)i, now, "last-known-good turned off");
	pthread_mutex_unlock(&l->lock);
}

int
lkg_may_refresh(struct lkg *l, const struct cache_key *key, uint64_t now)
{
	struct lkg_entry *e;
	int may = 1;
	long i;

	if (held_count(l) == 0)
		return 1;
	pthread_mutex_lock(&l->lock);
	if ((i = entry_find(l, key)) != -1) {
		e = l->held[i];
		if (now < e->next_check)
			may = 0;
		else
			entry_schedule(l, e, now);
	}
	pthread_mutex_unlock(&l->lock);
	return may;
}

const char *
lkg_text(struct lkg *l, const struct cache_key *key)
{
	const char *text = NULL;
	long i;

	if (l == NULL || held_count(l) == 0)
		return NULL;
	pthread_mutex_lock(&l->lock);
	if ((i = entry_find(l, key)) != -1)
		text = l->held[i]->what == LKG_NXDOMAIN ?
		    "upstream NXDOMAIN held: last known good" :
		    "upstream NODATA held: last known good";
	pthread_mutex_unlock(&l->lock);
	return text;
}

void
lkg_count_answer(struct lkg *l, const struct cache_key *key)
{
	long i;

	pthread_mutex_lock(&l->lock);
	if ((i = entry_find(l, key)) != -1)
		l->zones[l->held[i]->zone]->answers++;
	pthread_mutex_unlock(&l->lock);
}

long
lkg_release(struct lkg *l, const char *zone, uint64_t now)
{
	struct lkg_zone *z;
	long zi, n = 0;
	size_t i;

	pthread_mutex_lock(&l->lock);
	if ((zi = zone_get(l, zone, 0)) == -1) {
		pthread_mutex_unlock(&l->lock);
		return -1;
	}
	z = l->zones[zi];
	for (i = 0; i < l->n_held; i++)
		if (l->held[i]->zone == (size_t)zi) {
			l->held[i]->released = 1;
			l->held[i]->next_check = now;
			n++;
		}
	if (z->held) {
		z->held = 0;
		log_warnx("last-known-good: zone %s released by the operator "
		    "after %llu s: %ld questions go negative", z->name,
		    (unsigned long long)((now - z->held_since) / 1000), n);
	}
	pthread_mutex_unlock(&l->lock);
	return n;
}

static void
view_of(const struct lkg *l, const struct lkg_entry *e, struct lkg_view *v)
{
	const struct lkg_zone *z = l->zones[e->zone];

	v->zone = z->name;
	v->key = &e->key;
	v->what = e->what;
	v->since = e->since;
	v->last = e->last;
	v->hold_ends = z->held ? 0 : e->released ? e->last : e->since + e->hold;
	v->servable_until = e->servable_until;
	v->released = e->released;
}

void
lkg_walk(struct lkg *l, uint64_t now,
    void (*fn)(const struct lkg_view *v, void *arg), void *arg)
{
	struct lkg_view v;
	size_t i;

	pthread_mutex_lock(&l->lock);
	sweep(l, now);
	for (i = 0; i < l->n_held; i++) {
		view_of(l, l->held[i], &v);
		fn(&v, arg);
	}
	pthread_mutex_unlock(&l->lock);
}

void
lkg_walk_zones(struct lkg *l, uint64_t now,
    void (*fn)(const struct lkg_zone_view *v, void *arg), void *arg)
{
	struct lkg_zone_view v;
	struct lkg_zone *z;
	size_t i;

	pthread_mutex_lock(&l->lock);
	sweep(l, now);
	for (i = 0; i < l->n_zones; i++) {
		z = l->zones[i];
		sketch_age(z, now);
		v.zone = z->name;
		v.held = z->held;
		v.held_since = z->held_since;
		v.n_held = z->n_held;
		v.in_use = sketch_count(z);
		v.answers = z->answers;
		fn(&v, arg);
	}
	pthread_mutex_unlock(&l->lock);
}

int
lkg_find(struct lkg *l, const struct cache_key *key, struct lkg_view *v)
{
	long i;

	pthread_mutex_lock(&l->lock);
	if ((i = entry_find(l, key)) != -1)
		view_of(l, l->held[i], v);
	pthread_mutex_unlock(&l->lock);
	return i != -1;
}

void
lkg_stats(struct lkg *l, struct lkg_stats *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&l->lock);
	out->held = l->n_held;
	for (i = 0; i < l->n_zones; i++)
		out->zones_held += l->zones[i]->held != 0;
	out->deletions = l->deletions;
	out->overflow = l->overflow;
	pthread_mutex_unlock(&l->lock);
}
