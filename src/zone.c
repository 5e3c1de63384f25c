/* zone.c: forward zone table: longest-suffix match of a qname to a zone. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "log.h"
#include "tlsctx.h"
#include "zone.h"

struct zone_table {
	unsigned	 refs;
	struct upstream_registry *reg;
	struct zone	*zones;
	size_t		 n_zones;
};

int
zone_name_to_wire(const char *str, uint8_t *out, size_t *len)
{
	ldns_rdf *rdf;

	if ((rdf = ldns_dname_new_frm_str(str)) == NULL)
		return -1;
	if (ldns_rdf_size(rdf) > MSG_NAME_MAX) {
		ldns_rdf_deep_free(rdf);
		return -1;
	}
	*len = ldns_rdf_size(rdf);
	memcpy(out, ldns_rdf_data(rdf), *len);
	ldns_rdf_deep_free(rdf);
	msg_name_fold(out, *len);
	return 0;
}

/*
 * The upstream of fw at i from reg: over TLS with fw's settings if fw
 * says tls:// for it. NULL if out of memory or (logged) the TLS context
 * cannot be made, errno set.
 */
static struct upstream *
zone_upstream(struct upstream_registry *reg, const struct config_forward *fw,
    size_t i)
{
	const struct config_tls_upstream *tu;
	struct tlsctx_conf c;
	struct tlsctx *tls;
	struct upstream *u;
	const char *why;
	char buf[ADDR_STRLEN];

	if ((tu = config_tls_upstream(fw, &fw->upstreams[i])) == NULL)
		return upstream_get(reg, &fw->upstreams[i]);
	memset(&c, 0, sizeof(c));
	c.addr = &tu->addr;
	c.name = tu->name;
	c.ca = fw->tls_ca;
	c.pins = (const uint8_t (*)[TLSCTX_PIN_LEN])fw->tls_pins;
	c.n_pins = fw->n_tls_pins;
	c.auth_none = fw->tls_auth == CONFIG_TLS_AUTH_NONE;
	c.max_inflight = fw->tls_max_inflight;
	c.idle_ms = fw->tls_idle_timeout;
	if ((tls = tlsctx_new(&c, &why)) == NULL) {
		log_warnx("forward %s: upstream tls://%s: %s", fw->zone,
		    addr_format(&tu->addr, buf, sizeof(buf)), why);
		errno = EINVAL;
		return NULL;
	}
	u = upstream_get_tls(reg, &tu->addr, tls);
	tlsctx_unref(tls);
	return u;
}

static int
zone_init(struct zone *z, struct upstream_registry *reg,
    const struct config *conf, const struct config_forward *fw,
    uint32_t share)
{
	size_t i;

	if (zone_name_to_wire(fw->zone, z->name, &z->name_len) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((z->name_str = strdup(fw->zone)) == NULL ||
	    (z->upstreams = calloc(fw->n_upstreams, sizeof(*z->upstreams))) ==
	    NULL)
		return -1;
	for (i = 0; i < fw->n_upstreams; i++) {
		if ((z->upstreams[i] = zone_upstream(reg, fw, i)) == NULL)
			return -1;
		z->n_upstreams++;
	}
	z->policy = fw->policy;
	z->max_inflight = fw->max_inflight > 0 ? fw->max_inflight : share;
	/* Unset (a runtime zone: no config_validate ran): the top level's. */
	z->lkg = (fw->last_known_good == -1 ? conf->last_known_good :
	    fw->last_known_good) == 1;
	z->lkg_hold = (uint64_t)(fw->last_known_good_hold > 0 ?
	    fw->last_known_good_hold : conf->last_known_good_hold) * 1000;
	return 0;
}

static void
zone_fini(struct zone *z)
{
	size_t i;

	for (i = 0; i < z->n_upstreams; i++)
		upstream_unref(z->upstreams[i]);
	free(z->upstreams);
	free(z->name_str);
}

static void
zone_table_free(struct zone_table *t)
{
	size_t i;

	for (i = 0; i < t->n_zones; i++)
		zone_fini(&t->zones[i]);
	free(t->zones);
	free(t);
}

uint32_t
zone_share(const struct config *conf)
{
	uint64_t left = conf->max_inflight;
	size_t i, shared = 0;

	for (i = 0; i < conf->n_forwards; i++) {
		if (conf->forwards[i].max_inflight == 0)
			shared++;
		else if (left > conf->forwards[i].max_inflight)
			left -= conf->forwards[i].max_inflight;
		else
			left = 0;
	}
	if (shared == 0 || left / shared == 0)
		return 1;
	return (uint32_t)(left / shared);
}

struct zone_table *
zone_table_new(struct upstream_registry *reg, const struct config *conf)
{
	struct zone_table *t;
	uint32_t share;
	int saved;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->refs = 1;
	t->reg = reg;
	if (conf->n_forwards > 0 &&
	    (t->zones = calloc(conf->n_forwards, sizeof(*t->zones))) == NULL)
		goto fail;
	share = zone_share(conf);
	for (; t->n_zones < conf->n_forwards; t->n_zones++)
		if (zone_init(&t->zones[t->n_zones], reg, conf,
		    &conf->forwards[t->n_zones], share) == -1) {
			t->n_zones++;	/* so that its parts are freed */
			goto fail;
		}
	return t;
fail:
	saved = errno;
	zone_table_free(t);
	errno = saved;
	return NULL;
}

struct upstream_registry *
zone_table_registry(const struct zone_table *t)
{
	return t->reg;
}

struct zone_table *
zone_table_ref(struct zone_table *t)
{
	(void)__atomic_fetch_add(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

void
zone_table_unref(struct zone_table *t)
{
	/* Release, and acquire by the last: all uses before the free. */
	if (t != NULL && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) ==
	    0)
		zone_table_free(t);
}

int
zone_spend(struct zone *z)
{
	if (__atomic_add_fetch(&z->inflight, 1, __ATOMIC_RELAXED) <=
	    z->max_inflight)
		return 1;
	zone_refund(z);
	return 0;
}

void
zone_refund(struct zone *z)
{
	(void)__atomic_fetch_sub(&z->inflight, 1, __ATOMIC_RELAXED);
}

/* The closest enclosing zone of the name at qname + off, or NULL. Inline:
 * it is most of zone_find, which every query asks. */
static inline struct zone *
zone_enclosing(const struct zone_table *t, const uint8_t *qname,
    size_t qname_len, size_t off)
{
	size_t i, rest;

	/* Suffixes from longest to shortest, one label at a time. */
	for (;;) {
		rest = qname_len - off;
		for (i = 0; i < t->n_zones; i++)
			if (t->zones[i].name_len == rest &&
			    memcmp(t->zones[i].name, qname + off, rest) == 0)
				return &t->zones[i];
		if (off >= qname_len || qname[off] == 0)
			return NULL;
		off += (size_t)qname[off] + 1;
	}
}

struct zone *
zone_find(const struct zone_table *t, const uint8_t *qname, size_t qname_len,
    uint16_t qtype)
{
	struct zone *z, *parent;

	z = zone_enclosing(t, qname, qname_len, 0);
	if (qtype != MSG_TYPE_DS || z == NULL || z->name_len != qname_len ||
	    qname_len <= 1)
		return z;
	parent = zone_enclosing(t, qname, qname_len, (size_t)qname[0] + 1);
	return parent != NULL ? parent : z;
}

int
zone_uses(const struct zone *z, const struct upstream *u)
{
	size_t i;

	for (i = 0; i < z->n_upstreams; i++)
		if (z->upstreams[i] == u)
			return 1;
	return 0;
}

size_t
zone_count(const struct zone_table *t)
{
	return t->n_zones;
}

struct zone *
zone_at(const struct zone_table *t, size_t i)
{
	return &t->zones[i];
}

uint64_t
zone_fingerprint(const struct zone *z)
{
	uint64_t fp = 0;
	size_t i;

	/* A sum does not depend on the order the upstreams are listed in. */
	for (i = 0; i < z->n_upstreams; i++)
		fp += addr_hash(&z->upstreams[i]->addr) * 0x9e3779b97f4a7c15ULL;
	return fp;
}

int
zone_same_upstreams(const struct zone *a, const struct zone *b)
{
	size_t i, j;

	if (a->n_upstreams != b->n_upstreams)
		return 0;
	for (i = 0; i < a->n_upstreams; i++) {
		for (j = 0; j < b->n_upstreams; j++)
			if (a->upstreams[i] == b->upstreams[j])
				break;
		if (j == b->n_upstreams)
			return 0;
	}
	return 1;
}

int
zone_routes_alike(const struct zone *a, const struct zone *b)
{
	return a != NULL && b != NULL && strcmp(a->name_str,
	    b->name_str) == 0 && zone_same_upstreams(a, b);
}

int
zone_route_kept(const struct zone_table *now, const struct zone_table *was,
    const struct zone *then, const uint8_t *qname, size_t qname_len,
    uint16_t qtype)
{
	if (now == was)
		return 1;
	return zone_routes_alike(then, zone_find(now, qname, qname_len,
	    qtype));
}
