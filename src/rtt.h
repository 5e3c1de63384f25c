/*
 * rtt.h: per-upstream round-trip time estimator and retransmission timeout
 * (RFC 6298 §2 gains: alpha 1/8, beta 1/4, K 4). All times in ms.
 */
#ifndef DNSDAMPER_RTT_H
#define DNSDAMPER_RTT_H

#include <stdint.h>

/* Timeout used before the first measurement (Unbound uses 376 ms). */
#define RTT_INITIAL_MS	400

struct rtt {
	uint32_t	srtt;		/* smoothed RTT, ms */
	uint32_t	rttvar;		/* RTT variation, ms */
	uint32_t	rto;		/* current timeout, ms */
	int		measured;	/* at least one sample taken */
};

/* rtt_init: no samples yet; the RTO is RTT_INITIAL_MS within [min, max]. */
void		rtt_init(struct rtt *r, uint32_t min_ms, uint32_t max_ms);

/*
 * rtt_sample: fold in one measured round trip of sample_ms (RFC 6298 §2.2
 * for the first, §2.3 after), and set the RTO to SRTT + 4 * RTTVAR (at
 * least 1 ms of variance) clamped to [min, max].
 */
void		rtt_sample(struct rtt *r, uint32_t sample_ms, uint32_t min_ms,
		    uint32_t max_ms);

/*
 * rtt_timeout: a query sent with timeout used_ms got no answer: double
 * that timeout (RFC 6298 §5.5), not the current RTO, which other queries
 * may have changed since; clamp to [min, max].
 */
void		rtt_timeout(struct rtt *r, uint32_t used_ms, uint32_t min_ms,
		    uint32_t max_ms);

/* rtt_clamp: the RTO re-clamped after [min, max] changed at reload. */
void		rtt_clamp(struct rtt *r, uint32_t min_ms, uint32_t max_ms);

#endif
