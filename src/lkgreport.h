/*
 * lkgreport.h: last known good as the control socket shows it: the held
 * names and zones (dnsdamperctl lkg), their metrics, and the line of an
 * explanation. Every time argument is monotonic ms (clock_now_ms); what
 * is shown are ages and times left, in seconds.
 */
#ifndef DNSDAMPER_LKGREPORT_H
#define DNSDAMPER_LKGREPORT_H

#include <stdint.h>

#include "cachekey.h"
#include "lkg.h"
#include "metrics.h"
#include "report.h"

struct evbuffer;
struct zone;

/*
 * lkgreport_list: the zones seen and the held questions of l at now into
 * out. JSON: {"zones": [{"zone", "held", "held_for_s" (null if not
 * held), "held_names", "names_in_use", "answers"}], "names": [{"zone",
 * "name", "type", "upstream_says" ("NXDOMAIN" or "NODATA"), "held_for_s",
 * "last_negative_s_ago", "hold_ends_in_s" (null while the zone is held:
 * no end but a positive answer, stale-max-age or a release),
 * "servable_for_s", "released"}]}. REPORT_TEXT: the same as two tables.
 */
void	lkgreport_list(struct lkg *l, uint64_t now, enum report_format f,
	    struct evbuffer *out);

/*
 * lkgreport_metrics: dnsdamper_lkg_answers_total by zone (last known good
 * answers sent), dnsdamper_lkg_zone_held by zone (1 while held, else 0;
 * zones with last-known-good seen), dnsdamper_lkg_held_names,
 * dnsdamper_lkg_held_zones
 * (gauges), dnsdamper_lkg_deletions_total and
 * dnsdamper_lkg_overflow_total, through w.
 */
void	lkgreport_metrics(struct lkg *l, uint64_t now,
	    const struct metrics_writer *w);

/*
 * lkgreport_explain: for an explanation of key, whose forward zone is z
 * (NULL: none), at now: whether z has last-known-good, and if key is
 * held, that its answer is a last known good one and why (what the
 * upstream says, since when, when or whether the hold ends). JSON: a
 * member `"last_known_good": {...}` or null, without a separator;
 * REPORT_TEXT: one line.
 */
void	lkgreport_explain(struct lkg *l, const struct zone *z,
	    const struct cache_key *key, uint64_t now, enum report_format f,
	    struct evbuffer *out);

#endif
