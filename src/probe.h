/*
 * probe.h: which upstreams to probe and with which question. A down
 * upstream is asked, at its back-off (upstream_probe_due), for its zone's
 * SOA and for the latest question it failed; an upstream used for the
 * first time since start or reload is asked once for a name only we could
 * have made up, which comes back through our own listener if it forwards
 * to us (a loop). The fetch layer sends them; the upstream registry keeps
 * the names of those running, so that whichever worker's listener one
 * comes back to sees it (upstream_loop_probe_seen).
 */
#ifndef DNSDAMPER_PROBE_H
#define DNSDAMPER_PROBE_H

#include <stdint.h>

#include "msg.h"
#include "upstream.h"
#include "zone.h"

/* Send probe question q (borrowed for the call) to u alone, as for z. */
typedef void (*probe_send_fn)(void *arg, struct upstream *u, struct zone *z,
	    const struct msg_question *q, uint64_t now);

/*
 * probe_down: if any upstream of zones' registry is down, for each
 * upstream of zones that is down and due for a probe at now (ms;
 * upstream_probe_due, which schedules the next: of several threads
 * calling this at once, one sends each probe), call send with arg, the
 * first zone that forwards to it and: its SOA question (class IN), which
 * a resolver answers even when the names it failed are broken at their
 * source; and the latest question it failed (upstream.failed_q), if a zone
 * forwarding to it still claims that, which a server answering only some
 * names (one authoritative for a few zones, behind ".") answers when it
 * refuses the SOA.
 */
void	probe_down(struct zone_table *zones, uint64_t now, probe_send_fn send,
	    void *arg);

/*
 * probe_loop_due: 1 if upstream u, about to be asked a question through
 * zone z, has not been checked for a loop since start or reload (it is
 * then marked checked) and *q is set to the question to ask it: TXT for a
 * random 16-hex-digit label under z's name, so that a forwarder behind u
 * routes it back to us if it routes to us at all, or under "test." for
 * the root (RFC 6761 §6.2); else 0 (also when z's name leaves no room).
 */
int	probe_loop_due(struct upstream *u, const struct zone *z,
	    struct msg_question *q);

#endif
