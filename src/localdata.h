/*
 * localdata.h: local answers: what the table of local zones and records
 * (localzone.h) says about a client's question, written as the answer to
 * it: its records, NODATA or NXDOMAIN with the zone's SOA in the
 * authority section (RFC 2308 §3), or REFUSED. Nothing of it goes
 * upstream or into the cache.
 */
#ifndef DNSDAMPER_LOCALDATA_H
#define DNSDAMPER_LOCALDATA_H

#include <stddef.h>
#include <stdint.h>

#include "localzone.h"
#include "msg.h"

/* CNAMEs of local data followed to their local targets, at most. */
#define LOCALDATA_MAX_CHAIN	8

/*
 * localdata_answer: if t answers client query q (class IN; qname its
 * qname folded to lower case, q->q.qname_len octets), write the answer
 * into out (capacity cap) and return its length; see msg_write_answer for
 * flags, OPT and truncation. An answer with a CNAME (RFC 1034 §3.6.2) has
 * the records of its target too while the target is local and has them,
 * up to LOCALDATA_MAX_CHAIN CNAMEs. work (work_cap octets, MSG_MAX_LEN
 * for any answer) is scratch space for the answer before it is fitted to
 * the client. Returns 0 if t does not answer q: it goes to the cache and
 * the forward zones.
 */
size_t	localdata_answer(const struct localzone_table *t,
	    const struct msg_query *q, const uint8_t *qname,
	    const struct msg_reply_opts *opts, uint8_t *work, size_t work_cap,
	    uint8_t *out, size_t cap);

#endif
