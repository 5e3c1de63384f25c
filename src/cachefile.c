/* cachefile.c: the cache file: written at stop, read back after start. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cachefile.h"
#include "clock.h"
#include "fnv.h"
#include "log.h"
#include "statefile.h"
#include "wire.h"

/*
 * Format, all integers big-endian:
 *   "dnsdamper-cache\n" (16 octets), version u32 = 1, written at u64 (Unix
 *   ms), count u32, then
 *   n_zones u16 and n_zones forward zones: name_len u8, name (wire),
 *     zone_fingerprint u64;
 *   then count records:
 *     key_len u16, key, kind u8, age u64 (ms), ttl u32, failed_age u64,
 *     n_ttls u16, n_ttls * ttl u32, wire_len u16, wire
 *   and last an FNV-1a 64 checksum u64 of everything before it.
 */
#define MAGIC		"dnsdamper-cache\n"
#define MAGIC_LEN	16
#define FILE_VERSION	1
#define HEADER_LEN	(MAGIC_LEN + 4 + 8 + 4)
#define ZONES_MAX	65535
#define PROGRESS_EVERY	256	/* records between looks at a progress */

static void
put(struct evbuffer *b, uint64_t v, size_t octets)
{
	uint8_t buf[8];
	size_t i;

	for (i = 0; i < octets; i++)
		buf[i] = (uint8_t)(v >> (8 * (octets - 1 - i)));
	evbuffer_add(b, buf, octets);
}

struct writer {
	struct evbuffer	*b;
	uint32_t	 count;
};

static void
write_record(const struct cache_record *rec, void *arg)
{
	struct writer *w = arg;
	size_t i;

	/* A failure is only worth its few seconds in this run. */
	if (rec->kind == CACHE_FAILURE)
		return;
	put(w->b, rec->key->len, 2);
	evbuffer_add(w->b, rec->key->data, rec->key->len);
	put(w->b, (uint64_t)rec->kind, 1);
	put(w->b, rec->age, 8);
	put(w->b, rec->ttl, 4);
	put(w->b, rec->failed_age, 8);
	put(w->b, rec->n_ttls, 2);
	for (i = 0; i < rec->n_ttls; i++)
		put(w->b, rec->ttls[i], 4);
	put(w->b, rec->wire_len, 2);
	evbuffer_add(w->b, rec->wire, rec->wire_len);
	w->count++;
}

/* How each zone was forwarded, to tell at start what still holds. */
static void
write_zones(struct evbuffer *b, struct zone_table *zones)
{
	const struct zone *z;
	size_t i, n = zone_count(zones);

	if (n > ZONES_MAX)
		n = 0;		/* then nothing is restored: safe */
	put(b, n, 2);
	for (i = 0; i < n; i++) {
		z = zone_at(zones, i);
		put(b, z->name_len, 1);
		evbuffer_add(b, z->name, z->name_len);
		put(b, zone_fingerprint(z), 8);
	}
}

long
cachefile_write(struct cache *c, struct zone_table *zones, const char *path,
    uint64_t now)
{
	struct writer w = { evbuffer_new(), 0 };
	unsigned i;
	int rc;
	uint8_t *all;
	size_t len;

	if (w.b == NULL)
		return -1;
	evbuffer_add(w.b, MAGIC, MAGIC_LEN);
	put(w.b, FILE_VERSION, 4);
	put(w.b, (uint64_t)clock_wall_ms(), 8);
	put(w.b, 0, 4);			/* the count, filled in below */
	write_zones(w.b, zones);
	for (i = 0; i < cache_slices(c); i++)
		cache_walk_slice(c, i, now, write_record, &w);
	len = evbuffer_get_length(w.b);
	all = evbuffer_pullup(w.b, -1);
	wire_wr32(all + HEADER_LEN - 4, w.count);
	put(w.b, fnv1a64(FNV1A64_INIT, all, len), 8);
	if ((rc = statefile_write("cache-file", path, w.b)) < 0) {
		if (rc == -1)
			log_warn("cache-file %s: not written", path);
		evbuffer_free(w.b);
		return -1;
	}
	evbuffer_free(w.b);
	return (long)w.count;
}

/* A cursor over the file's bytes; reading past the end sets bad. */
struct reader {
	const uint8_t	*p;
	size_t		 left;
	int		 bad;
};

static uint64_t
get(struct reader *r, size_t octets)
{
	uint64_t v = 0;

	if (r->left < octets) {
		r->bad = 1;
		return 0;
	}
	while (octets-- > 0) {
		v = v << 8 | *r->p++;
		r->left--;
	}
	return v;
}

static const uint8_t *
take(struct reader *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->left < n) {
		r->bad = 1;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

/* One record as it is in the file. */
struct file_record {
	const uint8_t		*key;
	size_t			 key_len;
	struct cache_record	 rec;		/* but its key */
};

/* One record; its TTLs go to ttls (room for 65535). */
static void
read_record(struct reader *r, struct file_record *fr, uint32_t *ttls)
{
	struct cache_record *rec = &fr->rec;
	size_t i;

	fr->key_len = (size_t)get(r, 2);
	fr->key = take(r, fr->key_len);
	rec->kind = (enum cache_kind)get(r, 1);
	rec->age = get(r, 8);
	rec->ttl = (uint32_t)get(r, 4);
	rec->failed_age = get(r, 8);
	rec->n_ttls = (size_t)get(r, 2);
	for (i = 0; i < rec->n_ttls && !r->bad; i++)
		ttls[i] = (uint32_t)get(r, 4);
	rec->ttls = ttls;
	rec->wire_len = (size_t)get(r, 2);
	rec->wire = take(r, rec->wire_len);
}

/* Check magic, version and checksum; position r after the header. */
static int
read_header(struct reader *r, const uint8_t *all, size_t len,
    uint64_t *written, uint32_t *count)
{
	uint64_t sum;

	if (len < HEADER_LEN + 8 || memcmp(all, MAGIC, MAGIC_LEN) != 0)
		return -1;
	r->p = all + len - 8;
	r->left = 8;
	sum = get(r, 8);
	if (sum != fnv1a64(FNV1A64_INIT, all, len - 8))
		return -1;
	r->p = all + MAGIC_LEN;
	r->left = len - 8 - MAGIC_LEN;
	if (get(r, 4) != FILE_VERSION)
		return -1;
	*written = get(r, 8);
	*count = (uint32_t)get(r, 4);
	return r->bad ? -1 : 0;
}

/* The zone table of the file: where it starts and how many zones. */
struct file_zones {
	struct reader	at;
	size_t		n;
};

static void
read_zones(struct reader *r, struct file_zones *fz)
{
	size_t i, len;

	fz->n = (size_t)get(r, 2);
	fz->at = *r;
	for (i = 0; i < fz->n && !r->bad; i++) {
		len = (size_t)get(r, 1);
		(void)take(r, len);
		(void)get(r, 8);
	}
}

/* 1 if key's name is forwarded now as it was when it was saved. */
static int
same_forwarding(const struct file_zones *fz, struct zone_table *zones,
    const struct cache_key *key)
{
	struct reader r = fz->at;
	const struct zone *z;
	const uint8_t *name, *qname;
	size_t qlen, i, len;
	uint64_t fp;

	qname = cachekey_qname(key, &qlen);
	z = zone_find(zones, qname, qlen, cachekey_qtype(key));
	if (z == NULL)
		return 0;
	for (i = 0; i < fz->n; i++) {
		len = (size_t)get(&r, 1);
		name = take(&r, len);
		fp = get(&r, 8);
		if (len == z->name_len && memcmp(name, z->name, len) == 0)
			return fp == zone_fingerprint(z);
	}
	return 0;
}

/*
 * Import every record, or none if the file is not entirely sound; with p,
 * saying how far it got and ending early when p->stop is set.
 */
static long
import_all(struct cache *c, struct zone_table *zones, const uint8_t *all,
    size_t len, uint64_t now, struct cachefile_progress *p)
{
	struct file_record fr;
	struct cache_key key;
	struct reader r = { NULL, 0, 0 }, check;
	struct file_zones fz;
	uint64_t written, moved;
	uint32_t count, i, *ttls;
	int64_t wall = clock_wall_ms();
	long stored = 0, rerouted = 0;

	if (read_header(&r, all, len, &written, &count) == -1 ||
	    (ttls = malloc(65536 * sizeof(*ttls))) == NULL)
		return -1;
	read_zones(&r, &fz);
	check = r;
	for (i = 0; i < count && !check.bad; i++)
		read_record(&check, &fr, ttls);
	if (r.bad || check.bad || check.left != 0) {
		free(ttls);
		return -1;
	}
	/* A clock set back counts as no time passed. */
	moved = wall > (int64_t)written ? (uint64_t)wall - written : 0;
	if (p != NULL)
		__atomic_store_n(&p->total, count, __ATOMIC_RELAXED);
	for (i = 0; i < count; i++) {
		/* Often enough that a stop waits for a few hundred records
		 * at most, rarely enough to cost nothing per record. */
		if (p != NULL && i % PROGRESS_EVERY == 0) {
			__atomic_store_n(&p->stored, (uint64_t)stored,
			    __ATOMIC_RELAXED);
			if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&p->cut, 1, __ATOMIC_RELAXED);
				break;
			}
		}
		read_record(&r, &fr, ttls);
		if (cache_key_load(c, fr.key, fr.key_len, &key) == -1)
			continue;
		if (!same_forwarding(&fz, zones, &key)) {
			rerouted++;
			continue;
		}
		fr.rec.key = &key;
		fr.rec.age += moved;
		if (fr.rec.failed_age > 0)
			fr.rec.failed_age += moved;
		stored += cache_import(c, &fr.rec, now) == 0;
	}
	free(ttls);
	if (p != NULL)
		__atomic_store_n(&p->stored, (uint64_t)stored,
		    __ATOMIC_RELAXED);
	if (rerouted > 0)
		log_info("cache-file: %ld entries not restored: their names are "
		    "forwarded differently now", rerouted);
	return stored;
}

/*
 * The most a file of ours can take for c: the cache's bytes, with room for
 * the file's own per-entry fields and its zone table.
 */
static uint64_t
file_max(struct cache *c)
{
	struct cache_stats cs;

	cache_stats(c, &cs);
	return 2 * cs.max_bytes + ZONES_MAX * (1 + MSG_NAME_MAX + 8) + 1024;
}

long
cachefile_read(struct cache *c, struct zone_table *zones, const char *path,
    uint64_t now)
{
	return cachefile_read_progress(c, zones, path, now, NULL);
}

long
cachefile_read_progress(struct cache *c, struct zone_table *zones,
    const char *path, uint64_t now, struct cachefile_progress *p)
{
	uint8_t *all = NULL;
	size_t len = 0;
	long stored = -1;
	int rc;

	if ((rc = statefile_read("cache-file", path, file_max(c), &all,
	    &len)) == 0 || rc == -1)
		return rc;
	if (rc == -2) {
		log_warnx("cache-file %s: ignored: larger than a cache of "
		    "cache-size makes it", path);
		return -1;
	}
	if (rc == 1)
		stored = import_all(c, zones, all, len, now, p);
	free(all);
	if (stored == -1)
		log_warnx("cache-file %s: damaged or not a dnsdamper cache "
		    "file; ignored", path);
	else if (p != NULL && __atomic_load_n(&p->cut, __ATOMIC_RELAXED))
		log_info("cache-file %s: %ld entries restored, then stopped "
		    "before the end", path, stored);
	else
		log_info("cache-file %s: %ld entries restored", path, stored);
	return stored;
}
