/* reporttls.c: the DNS over TLS figures of upstreams in metrics and the upstreams report. */
#include "autoconf.h"

#include <stddef.h>

#include "reporttls.h"
#include "tlsctx.h"

/* A counter or gauge of struct tlsctx_stats. */
struct tls_family {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 offset;
};

#define TS(f)	offsetof(struct tlsctx_stats, f)

static const struct tls_family families[] = {
	{ "dnsdamper_upstream_tls_connections", "gauge",
	  "TLS connections to an upstream open now, over every worker.",
	  TS(open) },
	{ "dnsdamper_upstream_tls_connections_total", "counter",
	  "TLS connections to an upstream started.", TS(opened) },
	{ "dnsdamper_upstream_tls_handshakes_total", "counter",
	  "TLS handshakes with an upstream completed.", TS(handshakes) },
	{ "dnsdamper_upstream_tls_resumed_total", "counter",
	  "Of those handshakes, those that resumed a session (a ticket).",
	  TS(resumed) },
	{ "dnsdamper_upstream_tls_queries_total", "counter",
	  "Queries written on TLS connections to an upstream (divided by "
	  "connections: queries per connection).", TS(queries) },
	{ "dnsdamper_upstream_tls_resent_total", "counter",
	  "Queries sent again on a new connection after the upstream "
	  "closed theirs unanswered.", TS(resent) },
};

#define N_FAMILIES	(sizeof(families) / sizeof(families[0]))
#define FAILURES	"dnsdamper_upstream_tls_failures_total"

static uint64_t
stat_at(const struct tlsctx *t, size_t offset)
{
	return metrics_read((const uint64_t *)(const void *)
	    ((const char *)&t->stats + offset));
}

/* What one family's pass over the upstreams writes. */
struct pass {
	const struct metrics_writer	*w;
	const struct tls_family		*f;	/* NULL: the failures */
};

static void
sample_upstream(const struct upstream_view *v, void *arg)
{
	const struct pass *p = arg;
	const struct tlsctx *t = v->u->tls;
	const char *labels[4] = { "upstream", v->u->name, "reason", NULL };
	size_t i;

	if (t == NULL)
		return;
	if (p->f != NULL) {
		p->w->sample(p->w->ctx, p->f->name, labels, 1,
		    (double)stat_at(t, p->f->offset));
		return;
	}
	for (i = 0; i < TLSCTX_FAIL_N; i++) {
		labels[3] = tlsctx_fail_names[i];
		p->w->sample(p->w->ctx, FAILURES, labels, 2,
		    (double)metrics_read(&t->stats.fail[i]));
	}
}

void
reporttls_metrics(struct upstream_registry *reg,
    const struct metrics_writer *w)
{
	struct pass p = { w, NULL };
	size_t i;

	for (i = 0; i < N_FAMILIES; i++) {
		p.f = &families[i];
		w->family(w->ctx, p.f->name, p.f->type, p.f->help);
		upstream_each(reg, sample_upstream, &p);
		w->end_family(w->ctx);
	}
	p.f = NULL;
	w->family(w->ctx, FAILURES, "counter", "TLS connections to an "
	    "upstream that failed, by reason: connect, timeout (connect or "
	    "handshake not done within the upstream's timeout), handshake, "
	    "name, ca, expired, pin, cert.");
	upstream_each(reg, sample_upstream, &p);
	w->end_family(w->ctx);
}

void
reporttls_json(struct evbuffer *out, const struct upstream *u)
{
	const struct tlsctx *t = u->tls;
	size_t i;

	if (t == NULL)
		return;
	evbuffer_add_printf(out, ", \"tls\": {\"connections\": %llu, "
	    "\"connections_total\": %llu, \"handshakes\": %llu, "
	    "\"resumed\": %llu, \"queries\": %llu, \"resent\": %llu, "
	    "\"failures\": {",
	    (unsigned long long)metrics_read(&t->stats.open),
	    (unsigned long long)metrics_read(&t->stats.opened),
	    (unsigned long long)metrics_read(&t->stats.handshakes),
	    (unsigned long long)metrics_read(&t->stats.resumed),
	    (unsigned long long)metrics_read(&t->stats.queries),
	    (unsigned long long)metrics_read(&t->stats.resent));
	for (i = 0; i < TLSCTX_FAIL_N; i++)
		evbuffer_add_printf(out, "%s\"%s\": %llu", i > 0 ? ", " : "",
		    tlsctx_fail_names[i],
		    (unsigned long long)metrics_read(&t->stats.fail[i]));
	evbuffer_add_printf(out, "}}");
}

void
reporttls_text(struct evbuffer *out, const struct upstream *u)
{
	const struct tlsctx *t = u->tls;
	uint64_t n;
	size_t i;

	if (t == NULL)
		return;
	evbuffer_add_printf(out, "  tls: %llu open, %llu handshakes (%llu "
	    "resumed), %llu queries, failures:",
	    (unsigned long long)metrics_read(&t->stats.open),
	    (unsigned long long)metrics_read(&t->stats.handshakes),
	    (unsigned long long)metrics_read(&t->stats.resumed),
	    (unsigned long long)metrics_read(&t->stats.queries));
	for (i = 0, n = 0; i < TLSCTX_FAIL_N; i++) {
		if (metrics_read(&t->stats.fail[i]) == 0)
			continue;
		evbuffer_add_printf(out, " %s %llu", tlsctx_fail_names[i],
		    (unsigned long long)metrics_read(&t->stats.fail[i]));
		n++;
	}
	evbuffer_add_printf(out, "%s\n", n == 0 ? " none" : "");
}

const char *
reporttls_how(const struct upstream *u)
{
	const struct tlsctx *t = u->tls;

	if (t == NULL)
		return "";
	if (t->auth_none)
		return ", over TLS only (not authenticated: tls-auth none)";
	if (t->n_pins > 0)
		return ", over TLS only (authenticated by tls-pin)";
	if (t->name != NULL)
		return ", over TLS only (authenticated by CA and name)";
	return ", over TLS only (authenticated by CA and IP address)";
}
