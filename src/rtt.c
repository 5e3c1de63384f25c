/* rtt.c: RFC 6298 smoothed RTT and retransmission timeout, in ms. */
#include "autoconf.h"

#include "rtt.h"

static uint32_t
clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void
rtt_init(struct rtt *r, uint32_t min_ms, uint32_t max_ms)
{
	r->srtt = r->rttvar = 0;
	r->measured = 0;
	r->rto = clamp(RTT_INITIAL_MS, min_ms, max_ms);
}

void
rtt_sample(struct rtt *r, uint32_t sample_ms, uint32_t min_ms,
    uint32_t max_ms)
{
	uint32_t delta;

	if (!r->measured) {
		r->srtt = sample_ms;
		r->rttvar = sample_ms / 2;
		r->measured = 1;
	} else {
		delta = r->srtt > sample_ms ? r->srtt - sample_ms :
		    sample_ms - r->srtt;
		r->rttvar = (3 * r->rttvar + delta) / 4;
		r->srtt = (7 * r->srtt + sample_ms) / 8;
	}
	/* The clock granularity G of §2 is 1 ms here. */
	r->rto = clamp(r->srtt + 4 * (r->rttvar > 0 ? r->rttvar : 1), min_ms,
	    max_ms);
}

void
rtt_timeout(struct rtt *r, uint32_t used_ms, uint32_t min_ms,
    uint32_t max_ms)
{
	uint32_t doubled = used_ms > UINT32_MAX / 2 ? UINT32_MAX : used_ms * 2;

	if (doubled > r->rto)
		r->rto = clamp(doubled, min_ms, max_ms);
}

void
rtt_clamp(struct rtt *r, uint32_t min_ms, uint32_t max_ms)
{
	r->rto = clamp(r->rto, min_ms, max_ms);
}
