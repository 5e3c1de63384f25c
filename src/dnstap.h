/*
 * dnstap.h: dnstap messages (dnstap.info; protobuf, the schema in
 * dnstap.proto) of what this forwarder sees: CLIENT_QUERY and
 * CLIENT_RESPONSE between a client and us, FORWARDER_QUERY and
 * FORWARDER_RESPONSE between us and an upstream; each with the
 * addresses, ports, protocol, times and the whole wire message, and
 * handed to the Frame Streams output (dnstapio.h) through the worker's
 * own queue. A CLIENT_RESPONSE says where its answer came from in the
 * Dnstap `extra` field: "source=cache", "source=stale", "source=upstream
 * NAME", "source=local", "source=refused" or "source=error"
 * (queryinfo.h). Off (no `dnstap`), a worker's handle is NULL and the
 * hooks cost one NULL check.
 */
#ifndef DNSDAMPER_DNSTAP_H
#define DNSDAMPER_DNSTAP_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "config.h"
#include "queryinfo.h"

struct dnstap;

/* What one worker writes with; dnstap.c's. */
struct dnstap_worker {
	struct dnstap	*tap;
	unsigned	 queue;		/* its input queue */
	unsigned	 messages;	/* CONFIG_DNSTAP_* bits */
};

/*
 * dnstap_new: the dnstap output of conf (dnstap, dnstap-messages,
 * dnstap-identity, dnstap-version; copied) for n_workers workers.
 * Returns NULL when conf has no dnstap, or (logged) when out of memory
 * or threads: then nothing is written.
 */
struct dnstap *dnstap_new(const struct config *conf, unsigned n_workers);

/* dnstap_free: flush (dnstapio_free) and free. NULL is fine. */
void	dnstap_free(struct dnstap *tap);

/* dnstap_worker: worker id's handle of tap (id below n_workers), or NULL
 * when tap is NULL. */
struct dnstap_worker *dnstap_worker(struct dnstap *tap, unsigned id);

/* dnstap_dropped: dnsdamper_dnstap_dropped_total (dnstapio_dropped). */
uint64_t dnstap_dropped(void);

/*
 * dnstap_client_query: the query pkt (len octets, as received) from
 * client over tcp or UDP, received now. Nothing if w does not write
 * CLIENT_QUERY.
 */
void	dnstap_client_query(struct dnstap_worker *w, const struct addr *client,
	    int tcp, const uint8_t *pkt, size_t len);

/* dnstap_client_response: the answer of qi, sent now; its query's time
 * is qi->arrived. */
void	dnstap_client_response(struct dnstap_worker *w,
	    const struct queryinfo *qi);

/*
 * dnstap_forwarder_query: query msg (len octets) sent now to upstream
 * over tcp or UDP.
 */
void	dnstap_forwarder_query(struct dnstap_worker *w,
	    const struct addr *upstream, int tcp, const uint8_t *msg,
	    size_t len);

/*
 * dnstap_forwarder_response: response resp (rlen octets) received now
 * (ms, monotonic) from upstream over tcp or UDP, to the query sent at
 * sent (ms, monotonic).
 */
void	dnstap_forwarder_response(struct dnstap_worker *w,
	    const struct addr *upstream, int tcp, const uint8_t *resp,
	    size_t rlen, uint64_t sent, uint64_t now);

#endif
