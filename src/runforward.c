/* runforward.c: runtime forward zones applied, flushed, saved, logged. */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "resolvconf.h"
#include "runforward.h"
#include "runzone.h"
#include "statefile.h"
#include "value.h"

#define LABEL		"forward state file"
/* The largest state file we write: RUNZONE_MAX full lines. */
#define STATE_MAX	((uint64_t)RUNZONE_MAX * \
			    (300 + RUNZONE_UPSTREAMS_MAX * ADDR_STRLEN) + 4096)

struct runforward {
	struct runzone_set	 set;
	struct upstream_registry *reg;
	struct cache		*cache;
	char			*state_path;	/* or NULL */
	int			 dirty;		/* changed since saved */
	runforward_current_fn	 current;
	runforward_publish_fn	 publish;
	void			*arg;
};

/* The names of the zones a change touched, for the flush. */
struct touched {
	char		**names;
	size_t		 n;
	int		 failed;	/* out of memory: flush all */
};

struct runforward *
runforward_new(struct upstream_registry *reg, struct cache *cache,
    const char *cache_file, runforward_current_fn current,
    runforward_publish_fn publish, void *arg)
{
	struct runforward *rf;
	char *dir = NULL;

	if ((rf = calloc(1, sizeof(*rf))) == NULL)
		return NULL;
	runzone_set_init(&rf->set);
	rf->reg = reg;
	rf->cache = cache;
	rf->current = current;
	rf->publish = publish;
	rf->arg = arg;
	if (cache_file != NULL && ((dir = strdup(cache_file)) == NULL ||
	    asprintf(&rf->state_path, "%s/%s", dirname(dir),
	    RUNFORWARD_STATE_FILE) == -1)) {
		free(dir);
		free(rf);
		return NULL;
	}
	free(dir);
	return rf;
}

void
runforward_free(struct runforward *rf)
{
	if (rf == NULL)
		return;
	runzone_set_free(&rf->set);
	free(rf->state_path);
	free(rf);
}

size_t
runforward_count(const struct runforward *rf)
{
	return rf->set.n;
}

/*
 * The set into the state file, if it changed since last written: at most
 * once a tick, since main's loop (worker 0's too) waits for the fsync.
 */
static void
write_state(struct runforward *rf)
{
	struct evbuffer *b;
	int rc;

	if (rf->state_path == NULL || !rf->dirty)
		return;
	rf->dirty = 0;
	if ((b = evbuffer_new()) == NULL ||
	    runzone_format(&rf->set, clock_now_ms(), clock_wall_s(), b) == -1)
		rc = -1;
	else
		rc = statefile_write(LABEL, rf->state_path, b);
	if (rc == -1)
		log_warn(LABEL " %s: not written; the runtime forward zones "
		    "will not outlive a restart", rf->state_path);
	if (b != NULL)
		evbuffer_free(b);
}

/* The set changed: written at the next tick, or at stop. */
static void
save(struct runforward *rf)
{
	rf->dirty = 1;
}

void
runforward_save(struct runforward *rf)
{
	write_state(rf);
}

void
runforward_load(struct runforward *rf, uint64_t now)
{
	struct evbuffer *errs;
	uint8_t *text;
	size_t len, n;
	char *line;
	int rc;

	if (rf->state_path == NULL)
		return;
	rc = statefile_read(LABEL, rf->state_path, STATE_MAX, &text, &len);
	if (rc == -2 || rc == -3)
		log_warnx(LABEL " %s: ignored: larger than we write it, or "
		    "not a file", rf->state_path);
	if (rc != 1)
		return;
	if ((errs = evbuffer_new()) == NULL) {
		free(text);
		return;
	}
	n = runzone_parse(&rf->set, (const char *)text, now, clock_wall_s(),
	    errs);
	free(text);
	while ((line = evbuffer_readln(errs, NULL, EVBUFFER_EOL_LF)) != NULL) {
		log_warnx(LABEL " %s: %s: left out", rf->state_path, line);
		free(line);
	}
	evbuffer_free(errs);
	log_info(LABEL " %s: %zu runtime forward zones restored",
	    rf->state_path, n);
}

/* Why rz cannot be served beside listen addresses self, or NULL: "upstream
 * A would loop: it is our listen address B" into buf. */
static const char *
loops(const struct runzone *rz, const struct config *conf, char *buf,
    size_t len)
{
	char up[ADDR_STRLEN], me[ADDR_STRLEN];
	const struct addr *mine;
	const char *why;
	size_t i;

	for (i = 0; i < rz->fw.n_upstreams; i++) {
		if ((why = resolvconf_self(&rz->fw.upstreams[i], conf->listen,
		    conf->n_listen, &mine)) == NULL)
			continue;
		snprintf(buf, len, "upstream %s would loop: %s %s",
		    addr_format(&rz->fw.upstreams[i], up, sizeof(up)), why,
		    addr_format(mine, me, sizeof(me)));
		return buf;
	}
	return NULL;
}

static const char *
owner_of(const struct runzone *rz)
{
	return rz->owner[0] != '\0' ? rz->owner : "-";
}

struct zone_table *
runforward_zones(struct runforward *rf, const struct config *conf,
    struct evbuffer *errors, int strict)
{
	struct zone_table *zones;
	struct config merged;
	char why[512];
	size_t i = 0;
	int bad = 0, removed = 0;

	while (i < rf->set.n) {
		if (loops(&rf->set.zones[i], conf, why, sizeof(why)) == NULL) {
			i++;
			continue;
		}
		if (strict) {
			log_errx("runtime forward %s (owner %s): %s",
			    rf->set.zones[i].fw.zone,
			    owner_of(&rf->set.zones[i]), why);
			if (errors != NULL)
				evbuffer_add_printf(errors, "runtime forward "
				    "%s (owner %s): %s; remove it first\n",
				    rf->set.zones[i].fw.zone,
				    owner_of(&rf->set.zones[i]), why);
			bad = 1;
			i++;
			continue;
		}
		log_errx("runtime forward %s (owner %s) removed: %s",
		    rf->set.zones[i].fw.zone, owner_of(&rf->set.zones[i]), why);
		(void)runzone_remove(&rf->set, rf->set.zones[i].fw.zone, NULL,
		    NULL, NULL);
		removed = 1;
	}
	if (bad) {
		errno = EINVAL;
		return NULL;
	}
	if (removed)
		save(rf);
	if (runzone_merge(&rf->set, conf, &merged) == -1)
		return NULL;
	zones = zone_table_new(rf->reg, &merged);
	runzone_merge_free(&merged);
	return zones;
}

static void
touch(const struct runzone *rz, void *arg)
{
	struct touched *t = arg;
	char **grown;

	if ((grown = reallocarray(t->names, t->n + 1, sizeof(*grown))) ==
	    NULL || (grown[t->n] = strdup(rz->fw.zone)) == NULL) {
		if (grown != NULL)
			t->names = grown;
		t->failed = 1;
		return;
	}
	t->names = grown;
	t->n++;
}

static void
touched_free(struct touched *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
}

/*
 * Serve the set from the next query on: the current configuration's
 * zones with the runtime ones over them, in a new snapshot for every
 * worker (what a fetch started before it compares its routing with);
 * then the names of touched zones that go elsewhere now are flushed.
 * Returns 0, or -1 (ENOMEM: nothing changed for the workers).
 */
static int
apply(struct runforward *rf, const struct touched *t)
{
	struct snapshot *cur = rf->current(rf->arg), *snap;
	struct zone_table *zones, *old;
	struct runzone_reroute r;
	uint64_t flushed;
	size_t i;

	if ((zones = runforward_zones(rf, cur->conf, NULL, 0)) == NULL)
		return -1;
	old = zone_table_ref(cur->zones);
	if ((snap = snapshot_with_zones(cur, zones)) == NULL) {
		zone_table_unref(old);
		return -1;
	}
	rf->publish(rf->arg, snap);
	memset(&r, 0, sizeof(r));
	r.old = old;
	r.new = snap->zones;
	r.all = t->failed;
	if (!r.all && ((r.wire = calloc(t->n + 1, sizeof(*r.wire))) == NULL ||
	    (r.len = calloc(t->n + 1, sizeof(*r.len))) == NULL))
		r.all = 1;
	for (i = 0; !r.all && i < t->n; i++)
		if (zone_name_to_wire(t->names[i], r.wire[i], &r.len[i]) == -1)
			r.all = 1;
	r.n = t->n;
	flushed = cache_flush_if(rf->cache, runzone_keep, &r);
	if (flushed > 0)
		log_info("flushed %llu cached entries whose forwarding changed",
		    (unsigned long long)flushed);
	free(r.wire);
	free(r.len);
	zone_table_unref(old);
	return 0;
}

/* "a, b" of rz's upstreams into buf. */
static char *
upstreams_of(const struct runzone *rz, char *buf, size_t len)
{
	char a[ADDR_STRLEN];
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < rz->fw.n_upstreams && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i > 0 ? " " :
		    "", addr_format(&rz->fw.upstreams[i], a, sizeof(a)));
	return buf;
}

void
runforward_tick(struct runforward *rf, uint64_t now)
{
	struct touched t;
	size_t i;

	if (runzone_next_expiry(&rf->set) > now) {
		write_state(rf);
		return;
	}
	memset(&t, 0, sizeof(t));
	(void)runzone_expire(&rf->set, now, touch, &t);
	for (i = 0; i < t.n; i++)
		log_info("runtime forward %s removed: its lifetime ran out",
		    t.names[i]);
	if (apply(rf, &t) == -1)
		log_warn("runtime forwards expired, but not applied");
	save(rf);
	write_state(rf);
	touched_free(&t);
}

/* A reply: a JSON object {"error": why} or a text line; status back. */
static int
refuse(const struct control_forward_req *req, struct evbuffer *out,
    int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
refuse(const struct control_forward_req *req, struct evbuffer *out,
    int status, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (req->text)
		evbuffer_add_printf(out, "%s\n", why);
	else {
		evbuffer_add_printf(out, "{\"error\": ");
		metrics_json_string(out, why);
		evbuffer_add_printf(out, "}\n");
	}
	return status;
}

/* req's zone into rz as the upstream directive and forward block would
 * read it; NULL, or why not (into buf). */
static const char *
build(const struct control_forward_req *req, const struct config *conf,
    struct runzone *rz, uint64_t now, char *buf, size_t len)
{
	enum value_result vr;
	const char *err;
	struct addr a;
	uint64_t life = 0;
	size_t i, j;

	if (req->zone == NULL || (rz->fw.zone = runzone_name(req->zone)) ==
	    NULL)
		return req->zone == NULL ? "missing zone" :
		    "zone: not a domain name";
	if (req->n_upstreams == 0)
		return "missing upstream";
	if (req->n_upstreams > RUNZONE_UPSTREAMS_MAX)
		return "more than 16 upstreams";
	for (i = 0; i < req->n_upstreams; i++) {
		if (addr_parse(req->upstreams[i], CONFIG_DEFAULT_PORT, &a,
		    &err) == -1) {
			snprintf(buf, len, "upstream: \"%s\" is not an "
			    "address: %s", req->upstreams[i], err);
			return buf;
		}
		for (j = 0; j < rz->fw.n_upstreams; j++)
			if (addr_equal(&rz->fw.upstreams[j], &a)) {
				snprintf(buf, len, "upstream: duplicate "
				    "address %s", req->upstreams[i]);
				return buf;
			}
		if (config_add_addr(&rz->fw.upstreams, &rz->fw.n_upstreams,
		    &a) == -1)
			return "out of memory";
	}
	if (req->policy != NULL &&
	    runzone_policy(req->policy, &rz->fw.policy) == -1)
		return "policy: not order, random, fastest or hash";
	if (req->owner != NULL) {
		if (!runzone_owner_ok(req->owner))
			return "owner: 1 to 64 letters, digits or ._:@+-_";
		memcpy(rz->owner, req->owner, strlen(req->owner) + 1);
	}
	if (req->lifetime != NULL) {
		vr = value_scan(req->lifetime, VALUE_DURATION, VALUE_UNIT_S,
		    &life);
		if (vr != VALUE_OK || life < 1 || life > RUNZONE_LIFETIME_MAX) {
			snprintf(buf, len, "lifetime: \"%s\" is not %s from "
			    "1s to 366d", req->lifetime,
			    value_what(VALUE_DURATION));
			return buf;
		}
	}
	rz->lifetime = life;
	rz->expires = life > 0 ? now + life * 1000 : RUNZONE_NEVER;
	return loops(rz, conf, buf, len);
}

static int
add(struct runforward *rf, const struct control_forward_req *req,
    struct evbuffer *out)
{
	struct runzone rz, *old;
	char why[512], ups[1024], life[32];
	const char *err;
	uint64_t now = clock_now_ms();
	struct touched t;
	int renewal, replaced, rc;

	memset(&rz, 0, sizeof(rz));
	config_forward_defaults(&rz.fw);
	if ((err = build(req, rf->current(rf->arg)->conf, &rz, now, why,
	    sizeof(why))) != NULL) {
		runzone_free(&rz);
		return refuse(req, out, 400, "forward add: %s", err);
	}
	old = runzone_find(&rf->set, rz.fw.zone);
	renewal = old != NULL && runzone_same_routing(old, &rz);
	memset(&t, 0, sizeof(t));
	touch(&rz, &t);
	if (t.failed) {
		runzone_free(&rz);
		touched_free(&t);
		return refuse(req, out, 500, "forward add: out of memory");
	}
	if (runzone_add(&rf->set, &rz, &replaced) == -1) {
		touched_free(&t);
		if (errno == ENOSPC)
			return refuse(req, out, 507, "forward add: already "
			    "%d runtime forward zones, the most there may be",
			    RUNZONE_MAX);
		return refuse(req, out, 500, "forward add: out of memory");
	}
	rz = *runzone_find(&rf->set, t.names[0]);	/* for the log */
	(void)value_format(VALUE_DURATION, VALUE_UNIT_S, rz.lifetime, life,
	    sizeof(life));
	log_info("runtime forward %s %s by owner %s: to %s (policy %s%s%s)",
	    rz.fw.zone, renewal ? "renewed" : replaced ? "replaced" :
	    "added", owner_of(&rz), upstreams_of(&rz, ups, sizeof(ups)),
	    config_policy_name(rz.fw.policy), rz.lifetime > 0 ?
	    ", lifetime " : "", rz.lifetime > 0 ? life : "");
	rc = renewal ? 0 : apply(rf, &t);
	save(rf);
	if (rc == -1) {
		(void)runzone_remove(&rf->set, t.names[0], NULL, NULL, NULL);
		touched_free(&t);
		return refuse(req, out, 500, "forward add: out of memory");
	}
	if (req->text)
		evbuffer_add_printf(out, "%s %s\n", renewal ? "renewed" :
		    "added", t.names[0]);
	else {
		evbuffer_add_printf(out, "{\"zone\": ");
		metrics_json_string(out, t.names[0]);
		evbuffer_add_printf(out, ", \"%s\": true}\n", renewal ?
		    "renewed" : "added");
	}
	touched_free(&t);
	return 200;
}

static int
remove_zones(struct runforward *rf, const struct control_forward_req *req,
    struct evbuffer *out)
{
	struct touched t;
	char *zone = NULL;
	char why[128];
	size_t i;

	if (req->owner != NULL && !runzone_owner_ok(req->owner))
		return refuse(req, out, 400, "forward remove: owner: 1 to 64 "
		    "letters, digits or ._:@+-_");
	if (req->zone == NULL && req->owner == NULL)
		return refuse(req, out, 400, "forward remove: missing zone or "
		    "owner");
	if (req->zone != NULL && (zone = runzone_name(req->zone)) == NULL)
		return refuse(req, out, 400, "forward remove: zone: not a "
		    "domain name");
	memset(&t, 0, sizeof(t));
	snprintf(why, sizeof(why), "by %s%s", req->owner != NULL ?
	    "owner " : "the control socket", req->owner != NULL ? req->owner :
	    "");
	if (zone == NULL)
		(void)runzone_remove_owner(&rf->set, req->owner, touch, &t);
	else if (runzone_remove(&rf->set, zone, req->owner, touch, &t) == -1) {
		i = errno == EPERM;
		free(zone);
		return i ? refuse(req, out, 403, "forward remove: %s is not "
		    "of owner %s", req->zone, req->owner) :
		    refuse(req, out, 404, "forward remove: %s is not a runtime "
		    "forward zone", req->zone);
	}
	free(zone);
	for (i = 0; i < t.n; i++)
		log_info("runtime forward %s removed %s", t.names[i], why);
	if (t.n > 0) {
		if (apply(rf, &t) == -1)
			log_warn("runtime forwards removed, but not applied");
		save(rf);
	}
	if (req->text)
		for (i = 0; i < t.n; i++)
			evbuffer_add_printf(out, "removed %s\n", t.names[i]);
	else {
		evbuffer_add_printf(out, "{\"removed\": [");
		for (i = 0; i < t.n; i++) {
			evbuffer_add_printf(out, "%s", i > 0 ? ", " : "");
			metrics_json_string(out, t.names[i]);
		}
		evbuffer_add_printf(out, "]}\n");
	}
	touched_free(&t);
	return 200;
}

/* One zone of the list. */
static void
list_one(struct evbuffer *out, int text, int first,
    const struct config_forward *fw, const struct runzone *rz,
    int overridden, uint64_t now)
{
	char a[ADDR_STRLEN];
	int64_t left = rz != NULL ? runzone_time_left(rz, now) : -1;
	size_t i;

	if (text) {
		evbuffer_add_printf(out, "%s %s%s", fw->zone, rz != NULL ?
		    "runtime" : "configured", overridden ? " (overridden)" :
		    "");
		if (rz != NULL)
			evbuffer_add_printf(out, " owner %s", owner_of(rz));
		evbuffer_add_printf(out, " policy %s upstream",
		    config_policy_name(fw->policy));
		for (i = 0; i < fw->n_upstreams; i++)
			evbuffer_add_printf(out, " %s", addr_format(
			    &fw->upstreams[i], a, sizeof(a)));
		if (left >= 0)
			evbuffer_add_printf(out, " expires-in %llds",
			    (long long)left);
		evbuffer_add_printf(out, "\n");
		return;
	}
	evbuffer_add_printf(out, "%s{\"zone\": ", first ? "" : ", ");
	metrics_json_string(out, fw->zone);
	evbuffer_add_printf(out, ", \"source\": \"%s\", \"overridden\": %s, "
	    "\"owner\": ", rz != NULL ? "runtime" : "configured",
	    overridden ? "true" : "false");
	if (rz != NULL && rz->owner[0] != '\0')
		metrics_json_string(out, rz->owner);
	else
		evbuffer_add_printf(out, "null");
	evbuffer_add_printf(out, ", \"policy\": \"%s\", \"upstreams\": [",
	    config_policy_name(fw->policy));
	for (i = 0; i < fw->n_upstreams; i++) {
		evbuffer_add_printf(out, "%s", i > 0 ? ", " : "");
		metrics_json_string(out, addr_format(&fw->upstreams[i], a,
		    sizeof(a)));
	}
	evbuffer_add_printf(out, "], \"expires_in\": ");
	if (left >= 0)
		evbuffer_add_printf(out, "%lld}", (long long)left);
	else
		evbuffer_add_printf(out, "null}");
}

static int
list(struct runforward *rf, const struct control_forward_req *req,
    struct evbuffer *out)
{
	const struct config *conf = rf->current(rf->arg)->conf;
	uint64_t now = clock_now_ms();
	size_t i, n = 0;

	if (!req->text)
		evbuffer_add_printf(out, "{\"zones\": [");
	for (i = 0; i < conf->n_forwards; i++)
		list_one(out, req->text, n++ == 0, &conf->forwards[i], NULL,
		    runzone_find(&rf->set, conf->forwards[i].zone) != NULL,
		    now);
	for (i = 0; i < rf->set.n; i++)
		list_one(out, req->text, n++ == 0, &rf->set.zones[i].fw,
		    &rf->set.zones[i], 0, now);
	if (!req->text)
		evbuffer_add_printf(out, "], \"runtime\": %zu, \"max\": %d}\n",
		    rf->set.n, RUNZONE_MAX);
	return 200;
}

int
runforward_control(void *arg, const struct control_forward_req *req,
    struct evbuffer *out)
{
	struct runforward *rf = arg;

	if (req->unknown != NULL)
		return refuse(req, out, 400, "forward: unexpected parameter "
		    "\"%s\"", req->unknown);
	switch (req->op) {
	case CONTROL_FORWARD_ADD:
		return add(rf, req, out);
	case CONTROL_FORWARD_REMOVE:
		return remove_zones(rf, req, out);
	default:
		return list(rf, req, out);
	}
}
