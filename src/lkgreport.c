/* lkgreport.c: last known good's held names and zones, metrics and explanation, as reported. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <ldns/ldns.h>

#include "lkgreport.h"
#include "msg.h"
#include "zone.h"

/* Whole seconds from a to b (ms), 0 if b is not after a. */
static unsigned long long
secs(uint64_t a, uint64_t b)
{
	return b > a ? (unsigned long long)((b - a) / 1000) : 0;
}

/* The qname and qtype of key in presentation format. */
static void
key_words(const struct cache_key *key, char *name, size_t cap,
    char *type, size_t tcap)
{
	const uint8_t *qname;
	char *t;
	size_t len;

	qname = cachekey_qname(key, &len);
	msg_name_to_str(qname, len, name, cap);
	if ((t = ldns_rr_type2str(cachekey_qtype(key))) != NULL) {
		snprintf(type, tcap, "%s", t);
		free(t);
	} else
		snprintf(type, tcap, "TYPE%u", cachekey_qtype(key));
}

struct list_arg {
	struct evbuffer		*out;
	enum report_format	 f;
	uint64_t		 now;
	int			 n;
};

static void
list_zone(const struct lkg_zone_view *v, void *arg)
{
	struct list_arg *a = arg;

	if (a->f == REPORT_TEXT) {
		evbuffer_add_printf(a->out, "%-28s %-4s %9s %6zu %6llu %9llu\n",
		    v->zone, v->held ? "yes" : "no", "", v->n_held,
		    (unsigned long long)v->in_use,
		    (unsigned long long)v->answers);
		if (v->held)
			evbuffer_add_printf(a->out, "%28s held for %llu s\n",
			    "", secs(v->held_since, a->now));
		return;
	}
	evbuffer_add_printf(a->out, "%s{\"zone\": ", a->n++ > 0 ? ", " : "");
	metrics_json_string(a->out, v->zone);
	evbuffer_add_printf(a->out, ", \"held\": %s, \"held_for_s\": ",
	    v->held ? "true" : "false");
	if (v->held)
		evbuffer_add_printf(a->out, "%llu", secs(v->held_since, a->now));
	else
		evbuffer_add_printf(a->out, "null");
	evbuffer_add_printf(a->out, ", \"held_names\": %zu, \"names_in_use\": "
	    "%llu, \"answers\": %llu}", v->n_held,
	    (unsigned long long)v->in_use, (unsigned long long)v->answers);
}

static void
list_name(const struct lkg_view *v, void *arg)
{
	struct list_arg *a = arg;
	char name[1024], type[32], ends[64];

	key_words(v->key, name, sizeof(name), type, sizeof(type));
	if (a->f == REPORT_TEXT) {
		if (v->hold_ends == 0)
			snprintf(ends, sizeof(ends), "zone held");
		else
			snprintf(ends, sizeof(ends), "in %llu s",
			    secs(a->now, v->hold_ends));
		evbuffer_add_printf(a->out, "%-36s %-6s %-9s %7llu s %-14s "
		    "%s\n", name, type, lkg_negative_name(v->what),
		    secs(v->since, a->now), ends, v->zone);
		return;
	}
	evbuffer_add_printf(a->out, "%s{\"zone\": ", a->n++ > 0 ? ", " : "");
	metrics_json_string(a->out, v->zone);
	evbuffer_add_printf(a->out, ", \"name\": ");
	metrics_json_string(a->out, name);
	evbuffer_add_printf(a->out, ", \"type\": \"%s\", \"upstream_says\": "
	    "\"%s\", \"held_for_s\": %llu, \"last_negative_s_ago\": %llu, "
	    "\"hold_ends_in_s\": ", type, lkg_negative_name(v->what),
	    secs(v->since, a->now), secs(v->last, a->now));
	if (v->hold_ends == 0)
		evbuffer_add_printf(a->out, "null");
	else
		evbuffer_add_printf(a->out, "%llu", secs(a->now, v->hold_ends));
	evbuffer_add_printf(a->out, ", \"servable_for_s\": %llu, "
	    "\"released\": %s}", secs(a->now, v->servable_until),
	    v->released ? "true" : "false");
}

void
lkgreport_list(struct lkg *l, uint64_t now, enum report_format f,
    struct evbuffer *out)
{
	struct list_arg a = { out, f, now, 0 };

	if (f == REPORT_TEXT)
		evbuffer_add_printf(out, "%-28s %-4s %9s %6s %6s %9s\n", "ZONE",
		    "HELD", "", "NAMES", "IN USE", "ANSWERS");
	else
		evbuffer_add_printf(out, "{\"zones\": [");
	lkg_walk_zones(l, now, list_zone, &a);
	a.n = 0;
	if (f == REPORT_TEXT)
		evbuffer_add_printf(out, "\n%-36s %-6s %-9s %9s %-14s %s\n",
		    "HELD NAME", "TYPE", "UPSTREAM", "SINCE", "HOLD ENDS",
		    "ZONE");
	else
		evbuffer_add_printf(out, "], \"names\": [");
	lkg_walk(l, now, list_name, &a);
	if (f != REPORT_TEXT)
		evbuffer_add_printf(out, "]}\n");
}

struct metrics_arg {
	const struct metrics_writer	*w;
};

static void
zone_answers(const struct lkg_zone_view *v, void *arg)
{
	struct metrics_arg *a = arg;
	const char *labels[2] = { "zone", v->zone };

	a->w->sample(a->w->ctx, "dnsdamper_lkg_answers_total", labels, 1,
	    (double)v->answers);
}

static void
zone_held(const struct lkg_zone_view *v, void *arg)
{
	struct metrics_arg *a = arg;
	const char *labels[2] = { "zone", v->zone };

	a->w->sample(a->w->ctx, "dnsdamper_lkg_zone_held", labels, 1,
	    v->held ? 1 : 0);
}

static void
one(const struct metrics_writer *w, const char *name, const char *type,
    const char *help, uint64_t value)
{
	w->family(w->ctx, name, type, help);
	w->sample(w->ctx, name, NULL, 0, (double)value);
	w->end_family(w->ctx);
}

void
lkgreport_metrics(struct lkg *l, uint64_t now, const struct metrics_writer *w)
{
	struct metrics_arg a = { w };
	struct lkg_stats st;

	w->family(w->ctx, "dnsdamper_lkg_answers_total", "counter",
	    "Last known good answers sent, by forward zone: a positive answer "
	    "served stale while the upstream's NXDOMAIN or NODATA is held.");
	lkg_walk_zones(l, now, zone_answers, &a);
	w->end_family(w->ctx);
	w->family(w->ctx, "dnsdamper_lkg_zone_held", "gauge",
	    "1 while a forward zone is held as a whole by last known good: "
	    "many of its names turned negative at once.");
	lkg_walk_zones(l, now, zone_held, &a);
	w->end_family(w->ctx);
	lkg_stats(l, &st);
	one(w, "dnsdamper_lkg_held_names", "gauge", "Questions whose "
	    "upstream negative answer is held now (last-known-good).",
	    st.held);
	one(w, "dnsdamper_lkg_held_zones", "gauge", "Forward zones held as a "
	    "whole now: many of their names turned negative at once.",
	    st.zones_held);
	one(w, "dnsdamper_lkg_deletions_total", "counter", "Negative answers "
	    "let through after last-known-good-hold: deletions.",
	    st.deletions);
	one(w, "dnsdamper_lkg_overflow_total", "counter", "Negative answers "
	    "let through because the held questions were at their bound.",
	    st.overflow);
}

void
lkgreport_explain(struct lkg *l, const struct zone *z,
    const struct cache_key *key, uint64_t now, enum report_format f,
    struct evbuffer *out)
{
	struct lkg_view v;
	int held;

	held = z != NULL && z->lkg && lkg_find(l, key, &v);
	if (f == REPORT_TEXT) {
		if (z == NULL)
			return;
		evbuffer_add_printf(out, "lkg        ");
		if (!z->lkg)
			evbuffer_add_printf(out, "off for zone %s\n",
			    z->name_str);
		else if (!held)
			evbuffer_add_printf(out, "on (hold %llu s), not held\n",
			    (unsigned long long)(z->lkg_hold / 1000));
		else {
			evbuffer_add_printf(out, "a last known good answer: the "
			    "upstream says %s since %llu s ago, held, the cached "
			    "answer served stale; ", lkg_negative_name(v.what),
			    secs(v.since, now));
			if (v.released)
				evbuffer_add_printf(out, "released by the "
				    "operator: the next refresh lets it "
				    "through\n");
			else if (v.hold_ends == 0)
				evbuffer_add_printf(out, "its zone is held (many "
				    "names turned negative at once): until a "
				    "positive answer, stale-max-age or a "
				    "release\n");
			else
				evbuffer_add_printf(out, "taken as a deletion in "
				    "%llu s if it stays so\n",
				    secs(now, v.hold_ends));
		}
		return;
	}
	evbuffer_add_printf(out, "\"last_known_good\": ");
	if (z == NULL) {
		evbuffer_add_printf(out, "null");
		return;
	}
	evbuffer_add_printf(out, "{\"enabled\": %s, \"hold_s\": %llu, "
	    "\"held\": %s", z->lkg ? "true" : "false",
	    (unsigned long long)(z->lkg_hold / 1000), held ? "true" : "false");
	if (held) {
		evbuffer_add_printf(out, ", \"upstream_says\": \"%s\", "
		    "\"held_for_s\": %llu, \"zone_held\": %s, \"released\": %s, "
		    "\"hold_ends_in_s\": ", lkg_negative_name(v.what),
		    secs(v.since, now), v.hold_ends == 0 ? "true" : "false",
		    v.released ? "true" : "false");
		if (v.hold_ends == 0)
			evbuffer_add_printf(out, "null");
		else
			evbuffer_add_printf(out, "%llu", secs(now, v.hold_ends));
	}
	evbuffer_add_printf(out, "}");
}
