/*
 * reporttls.h: the DNS over TLS figures of upstreams, for the control
 * socket's reports: metrics families (connections open, handshakes,
 * resumed handshakes, failures by reason, queries, resends), and each TLS
 * upstream's figures in the JSON and text of the upstreams report.
 */
#ifndef DNSDAMPER_REPORTTLS_H
#define DNSDAMPER_REPORTTLS_H

#include <event2/buffer.h>

#include "metrics.h"
#include "upstream.h"

/*
 * reporttls_metrics: the families of every TLS upstream of reg through w,
 * each upstream a series labelled upstream="tls://...". Families are
 * written even when no upstream is a TLS one (then without series).
 */
void	reporttls_metrics(struct upstream_registry *reg,
	    const struct metrics_writer *w);

/* reporttls_json: `, "tls": {...}` for upstream u into out; nothing if u
 * is not a TLS upstream. */
void	reporttls_json(struct evbuffer *out, const struct upstream *u);

/* reporttls_text: a line of u's TLS figures into out (indented, ending
 * with a newline); nothing if u is not a TLS upstream. */
void	reporttls_text(struct evbuffer *out, const struct upstream *u);

/* reporttls_how: for explain, ", over TLS only (...)" saying how u is
 * authenticated, or "" if u is not a TLS upstream. Static text. */
const char *reporttls_how(const struct upstream *u);

#endif
