/* observe.c: an answered client query told to what watches answers. */
#include "autoconf.h"

#include "dnstap.h"
#include "monitor.h"
#include "msg.h"
#include "observe.h"

/*
 * Where an answer from metrics source s with header rcode (4 bits) came
 * from: QUERYINFO_LKG for a stale one held over a negative answer (held),
 * QUERYINFO_REFUSED for a REFUSED made here, QUERYINFO_ERROR for any
 * other rcode made up.
 */
static enum queryinfo_source
observe_source(enum metrics_source s, int held, unsigned rcode)
{
	switch (s) {
	case METRICS_FROM_CACHE:
		return QUERYINFO_CACHE;
	case METRICS_FROM_STALE:
		return held ? QUERYINFO_LKG : QUERYINFO_STALE;
	case METRICS_FROM_UPSTREAM:
		return QUERYINFO_UPSTREAM;
	case METRICS_FROM_LOCAL:
		return QUERYINFO_LOCAL;
	default:
		return rcode == MSG_RCODE_REFUSED ? QUERYINFO_REFUSED :
		    QUERYINFO_ERROR;
	}
}

void
observe_answer(struct observe *o, const struct addr *client, int tcp,
    const struct msg_query *q, const uint8_t *buf, size_t len,
    enum metrics_source source, int held, const char *upstream,
    uint64_t arrived, uint64_t now)
{
	struct queryinfo qi;

	qi.client = client;
	qi.tcp = tcp;
	qi.q = q;
	qi.answer = buf;
	qi.answer_len = len;
	qi.source = observe_source(source, held, len >= 4 ? buf[3] & 0xf :
	    0);
	qi.upstream = qi.source == QUERYINFO_UPSTREAM ? upstream : NULL;
	qi.arrived = arrived;
	qi.now = now;
	if (o->tap != NULL)
		dnstap_client_response(o->tap, &qi);
	if (observe_watched(o))
		monitor_post(o->monitor, &qi);
	if (querylog_on(&o->log))
		querylog_answer(&o->log, &qi);
}

void
observe_query(const struct observe *o, const struct addr *client, int tcp,
    const uint8_t *pkt, size_t len)
{
	if (o->tap != NULL)
		dnstap_client_query(o->tap, client, tcp, pkt, len);
}
