/*
 * localdata.h: names answered here without asking anyone: "localhost."
 * and every name below it, which RFC 6761 §6.3 says a caching server
 * should answer itself (the loopback address) and never send upstream.
 */
#ifndef DNSDAMPER_LOCALDATA_H
#define DNSDAMPER_LOCALDATA_H

#include <stddef.h>

#include "msg.h"

/* TTL of the local answers and of their SOA, seconds (as Unbound's). */
#define LOCALDATA_TTL	10800

/*
 * localdata_answer: if q asks class IN about localhost. or a name below
 * it, write the answer into out (capacity cap): A 127.0.0.1, AAAA ::1, or
 * for any other type NODATA with the SOA of localhost. (RFC 2308 §2.2);
 * see msg_write_answer for flags, OPT and truncation. Returns its length,
 * or 0 if q is not for a local name.
 */
size_t	localdata_answer(const struct msg_query *q,
	    const struct msg_reply_opts *opts, uint8_t *out, size_t cap);

#endif
