/* snapshot.c: the configuration, zones and local zones workers serve. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "dnstap.h"
#include "snapshot.h"

/* A configuration shared by the snapshots that differ only in local. */
struct snapshot_config {
	unsigned	 refs;
	struct config	 conf;
	struct dnstap	*tap;		/* conf's output, or NULL */
};

static void
box_unref(struct snapshot_config *box)
{
	if (__atomic_sub_fetch(&box->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	/* Its workers have all moved on: the last of what was queued goes
	 * out, and the socket or file is closed (a reload reopens it). */
	dnstap_free(box->tap);
	config_free(&box->conf);
	free(box);
}

/* A snapshot of box (its reference taken over), zones and local. */
static struct snapshot *
make(struct snapshot_config *box, struct zone_table *zones,
    struct localzone_table *local)
{
	struct snapshot *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		box_unref(box);
		zone_table_unref(zones);
		localzone_table_unref(local);
		return NULL;
	}
	s->refs = 1;
	s->box = box;
	s->conf = &box->conf;
	s->zones = zones;
	s->local = local;
	s->tap = box->tap;
	return s;
}

struct snapshot *
snapshot_new(struct config *conf, struct zone_table *zones,
    struct localzone_table *local)
{
	struct snapshot_config *box;

	if ((box = calloc(1, sizeof(*box))) == NULL) {
		config_free(conf);
		zone_table_unref(zones);
		localzone_table_unref(local);
		return NULL;
	}
	box->refs = 1;
	box->conf = *conf;
	memset(conf, 0, sizeof(*conf));
	return make(box, zones, local);
}

struct snapshot *
snapshot_with_local(const struct snapshot *s, struct localzone_table *local)
{
	(void)__atomic_fetch_add(&s->box->refs, 1, __ATOMIC_RELAXED);
	return make(s->box, zone_table_ref(s->zones), local);
}

void
snapshot_set_tap(struct snapshot *s, struct dnstap *tap)
{
	s->box->tap = tap;
	s->tap = tap;
}

struct snapshot *
snapshot_with_zones(const struct snapshot *s, struct zone_table *zones)
{
	(void)__atomic_fetch_add(&s->box->refs, 1, __ATOMIC_RELAXED);
	return make(s->box, zones, localzone_table_ref(s->local));
}

struct snapshot *
snapshot_ref(struct snapshot *s)
{
	(void)__atomic_fetch_add(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void
snapshot_unref(struct snapshot *s)
{
	if (s == NULL || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	localzone_table_unref(s->local);
	zone_table_unref(s->zones);
	box_unref(s->box);
	free(s);
}
