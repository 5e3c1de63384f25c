/* runzone.c: the set of runtime forward zones and its overlay on config. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "addr.h"
#include "directive.h"
#include "runzone.h"
#include "zone.h"

#define FILE_HEADER	"# dnsdamper runtime forward zones 1: zone policy " \
			"owner expires(unix s, 0 never) lifetime(s) " \
			"upstream...\n"

void
runzone_set_init(struct runzone_set *set)
{
	memset(set, 0, sizeof(*set));
}

void
runzone_free(struct runzone *rz)
{
	config_forward_free(&rz->fw);
}

void
runzone_set_free(struct runzone_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		runzone_free(&set->zones[i]);
	free(set->zones);
	runzone_set_init(set);
}

int
runzone_owner_ok(const char *owner)
{
	size_t len = strlen(owner);

	return len > 0 && len <= RUNZONE_OWNER_MAX &&
	    strspn(owner, RUNZONE_OWNER_CHARS) == len;
}

struct runzone *
runzone_find(const struct runzone_set *set, const char *zone)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->zones[i].fw.zone, zone) == 0)
			return &set->zones[i];
	return NULL;
}

int
runzone_add(struct runzone_set *set, struct runzone *rz, int *replaced)
{
	struct runzone *old, *grown;
	size_t cap;

	*replaced = 0;
	if ((old = runzone_find(set, rz->fw.zone)) != NULL) {
		runzone_free(old);
		*old = *rz;
		*replaced = 1;
		return 0;
	}
	if (set->n >= RUNZONE_MAX) {
		runzone_free(rz);
		errno = ENOSPC;
		return -1;
	}
	if (set->n == set->cap) {
		cap = set->cap == 0 ? 8 : set->cap * 2;
		if ((grown = reallocarray(set->zones, cap, sizeof(*grown))) ==
		    NULL) {
			runzone_free(rz);
			errno = ENOMEM;
			return -1;
		}
		set->zones = grown;
		set->cap = cap;
	}
	set->zones[set->n++] = *rz;
	return 0;
}

int
runzone_same_routing(const struct runzone *a, const struct runzone *b)
{
	size_t i;

	if (a->fw.policy != b->fw.policy ||
	    a->fw.n_upstreams != b->fw.n_upstreams)
		return 0;
	for (i = 0; i < a->fw.n_upstreams; i++)
		if (!addr_equal(&a->fw.upstreams[i], &b->fw.upstreams[i]))
			return 0;
	return 1;
}

/* Take out zone i, keeping the order of the others (the list's order). */
static void
take_out(struct runzone_set *set, size_t i, runzone_fn fn, void *arg)
{
	if (fn != NULL)
		fn(&set->zones[i], arg);
	runzone_free(&set->zones[i]);
	memmove(&set->zones[i], &set->zones[i + 1],
	    (set->n - i - 1) * sizeof(*set->zones));
	set->n--;
}

int
runzone_remove(struct runzone_set *set, const char *zone, const char *owner,
    runzone_fn fn, void *arg)
{
	struct runzone *rz;

	if ((rz = runzone_find(set, zone)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (owner != NULL && strcmp(rz->owner, owner) != 0) {
		errno = EPERM;
		return -1;
	}
	take_out(set, (size_t)(rz - set->zones), fn, arg);
	return 0;
}

size_t
runzone_remove_owner(struct runzone_set *set, const char *owner,
    runzone_fn fn, void *arg)
{
	size_t i = 0, n = 0;

	while (i < set->n)
		if (strcmp(set->zones[i].owner, owner) == 0) {
			take_out(set, i, fn, arg);
			n++;
		} else
			i++;
	return n;
}

size_t
runzone_expire(struct runzone_set *set, uint64_t now, runzone_fn fn,
    void *arg)
{
	size_t i = 0, n = 0;

	while (i < set->n)
		if (set->zones[i].expires <= now) {
			take_out(set, i, fn, arg);
			n++;
		} else
			i++;
	return n;
}

uint64_t
runzone_next_expiry(const struct runzone_set *set)
{
	uint64_t next = RUNZONE_NEVER;
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->zones[i].expires < next)
			next = set->zones[i].expires;
	return next;
}

int
runzone_merge(const struct runzone_set *set, const struct config *conf,
    struct config *out)
{
	struct config_forward *fw;
	uint32_t share = zone_share(conf);
	size_t i, n = 0;

	*out = *conf;
	if ((fw = calloc(conf->n_forwards + set->n + 1, sizeof(*fw))) == NULL) {
		out->forwards = NULL;
		out->n_forwards = 0;
		errno = ENOMEM;
		return -1;
	}
	/* The share each had before: a runtime zone thins no budget. */
	for (i = 0; i < conf->n_forwards; i++)
		if (runzone_find(set, conf->forwards[i].zone) == NULL)
			fw[n++] = conf->forwards[i];
	for (i = 0; i < set->n; i++)
		fw[n++] = set->zones[i].fw;
	for (i = 0; i < n; i++)
		if (fw[i].max_inflight == 0)
			fw[i].max_inflight = share;
	out->forwards = fw;
	out->n_forwards = n;
	return 0;
}

void
runzone_merge_free(struct config *out)
{
	free(out->forwards);
	out->forwards = NULL;
	out->n_forwards = 0;
}

int64_t
runzone_time_left(const struct runzone *rz, uint64_t now)
{
	if (rz->expires == RUNZONE_NEVER)
		return -1;
	if (rz->expires <= now)
		return 0;
	return (int64_t)((rz->expires - now + 999) / 1000);
}

int
runzone_format(const struct runzone_set *set, uint64_t now, int64_t wall,
    struct evbuffer *b)
{
	const struct runzone *rz;
	char addr[ADDR_STRLEN];
	int64_t left;
	size_t i, j;
	int rc = evbuffer_add_printf(b, "%s", FILE_HEADER) < 0;

	for (i = 0; i < set->n; i++) {
		rz = &set->zones[i];
		left = runzone_time_left(rz, now);
		rc |= evbuffer_add_printf(b, "%s %s %s %lld %llu", rz->fw.zone,
		    config_policy_name(rz->fw.policy), rz->owner[0] != '\0' ?
		    rz->owner : "-", left < 0 ? 0LL : (long long)(wall + left),
		    (unsigned long long)rz->lifetime) < 0;
		for (j = 0; j < rz->fw.n_upstreams; j++)
			rc |= evbuffer_add_printf(b, " %s",
			    addr_format(&rz->fw.upstreams[j], addr,
			    sizeof(addr))) < 0;
		rc |= evbuffer_add(b, "\n", 1);
	}
	return rc ? -1 : 0;
}

int
runzone_policy(const char *word, enum config_policy *policy)
{
	const struct config_name *n;

	for (n = config_policy_names; n->name != NULL; n++)
		if (strcmp(n->name, word) == 0) {
			*policy = (enum config_policy)n->value;
			return 0;
		}
	return -1;
}

/* A whole decimal number of at most 19 digits: 0, or -1. */
static int
number_of(const char *word, unsigned long long *out)
{
	char *end;

	if (word[0] < '0' || word[0] > '9' || strlen(word) > 19)
		return -1;
	errno = 0;
	*out = strtoull(word, &end, 10);
	return *end == '\0' && errno == 0 ? 0 : -1;
}

char *
runzone_name(const char *word)
{
	ldns_rdf *rdf;
	char *name;

	if (word[0] == '\0' || (rdf = ldns_dname_new_frm_str(word)) == NULL)
		return NULL;
	name = directive_canonical_name(rdf);
	ldns_rdf_deep_free(rdf);
	return name;
}

/* One line's fields into rz; NULL, or why not. */
static const char *
parse_line(char **w, size_t n, uint64_t now, int64_t wall,
    struct runzone *rz)
{
	unsigned long long expires, lifetime;
	const char *err;
	struct addr a;
	size_t i, j;

	if (n < 6)
		return "too few fields";
	if (n - 5 > RUNZONE_UPSTREAMS_MAX)
		return "too many upstreams";
	if ((rz->fw.zone = runzone_name(w[0])) == NULL)
		return "not a domain name";
	if (runzone_policy(w[1], &rz->fw.policy) == -1)
		return "not a policy";
	if (strcmp(w[2], "-") != 0 && !runzone_owner_ok(w[2]))
		return "not an owner name";
	if (strcmp(w[2], "-") != 0)
		memcpy(rz->owner, w[2], strlen(w[2]) + 1);
	if (number_of(w[3], &expires) == -1 ||
	    number_of(w[4], &lifetime) == -1 ||
	    lifetime > RUNZONE_LIFETIME_MAX)
		return "not a time";
	rz->lifetime = lifetime;
	if (expires == 0)
		rz->expires = RUNZONE_NEVER;
	else if ((long long)expires <= wall)
		return "expired";
	else if (expires - (unsigned long long)wall > RUNZONE_LIFETIME_MAX)
		return "expires too late";
	else
		rz->expires = now + (expires - (unsigned long long)wall) * 1000;
	for (i = 5; i < n; i++) {
		if (addr_parse(w[i], CONFIG_DEFAULT_PORT, &a, &err) == -1)
			return "not an address";
		for (j = 0; j < rz->fw.n_upstreams; j++)
			if (addr_equal(&rz->fw.upstreams[j], &a))
				return "an upstream twice";
		if (config_add_addr(&rz->fw.upstreams, &rz->fw.n_upstreams,
		    &a) == -1)
			return "out of memory";
	}
	return NULL;
}

size_t
runzone_parse(struct runzone_set *set, const char *text, uint64_t now,
    int64_t wall, struct evbuffer *errs)
{
	char *copy, *line, *save, *w[RUNZONE_UPSTREAMS_MAX + 7], *wsave;
	struct runzone rz;
	const char *why;
	size_t n, added = 0;
	int lineno = 0, replaced;

	if ((copy = strdup(text)) == NULL) {
		evbuffer_add_printf(errs, "out of memory\n");
		return 0;
	}
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#')
			continue;
		n = 0;
		for (w[n] = strtok_r(line, " \t", &wsave); w[n] != NULL &&
		    n < sizeof(w) / sizeof(w[0]) - 1;
		    w[n] = strtok_r(NULL, " \t", &wsave))
			n++;
		if (n == 0)
			continue;
		memset(&rz, 0, sizeof(rz));
		config_forward_defaults(&rz.fw);
		if ((why = parse_line(w, n, now, wall, &rz)) != NULL) {
			evbuffer_add_printf(errs, "line %d: %s\n", lineno, why);
			runzone_free(&rz);
		} else if (runzone_add(set, &rz, &replaced) == -1)
			evbuffer_add_printf(errs, "line %d: %s\n", lineno,
			    strerror(errno));
		else
			added += !replaced;
	}
	free(copy);
	return added;
}

/* 1 if qname is name or below it (both wire, folded). */
static int
under(const uint8_t *qname, size_t qlen, const uint8_t *name, size_t len)
{
	size_t off = 0;

	for (;;) {
		if (qlen - off == len && memcmp(qname + off, name, len) == 0)
			return 1;
		if (off >= qlen || qname[off] == 0)
			return 0;
		off += (size_t)qname[off] + 1;
	}
}

int
runzone_keep(const uint8_t *qname, size_t len, uint16_t qtype, void *arg)
{
	const struct runzone_reroute *r = arg;
	size_t i;

	for (i = 0; i < r->n && !r->all; i++)
		if (under(qname, len, r->wire[i], r->len[i]))
			break;
	if (!r->all && i == r->n)
		return 1;
	return zone_route_kept(r->new, r->old, zone_find(r->old, qname, len,
	    qtype), qname, len, qtype);
}
