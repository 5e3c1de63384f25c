/*
 * admit.h: which client queries are served, and how: `allow` (REFUSED for
 * every other client; a TCP connection from one is closed at accept), the
 * per-address `ratelimit` over UDP with its slip (ratelimit.h), and the
 * minimal answer to ANY over UDP (RFC 8482 §4.2). Clients in
 * `exempt-clients` are neither rate limited nor given the minimal ANY.
 * One per worker; the rate limit table it asks is shared by every worker
 * (ratelimit.h), and asked only while `ratelimit` is on.
 */
#ifndef DNSDAMPER_ADMIT_H
#define DNSDAMPER_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "acl.h"
#include "addr.h"
#include "config.h"
#include "metrics.h"
#include "msg.h"
#include "ratelimit.h"

/* TTL of the synthesized HINFO of RFC 8482 §4.2 (capped by max-ttl). */
#define ADMIT_ANY_TTL		3600
/* Shortest time between two log lines about refused clients, or about
 * clients over the rate limit. */
#define ADMIT_LOG_INTERVAL	60000	/* ms */

struct admit;

enum admit_verdict {
	ADMIT_SERVE,		/* go on with the query */
	ADMIT_REFUSE,		/* client not in allow: answer REFUSED */
	ADMIT_DROP,		/* over the rate limit: no answer */
	ADMIT_SLIP		/* over the rate limit: admit_write_slip */
};

/*
 * admit_new: the admission state of a worker, asking rl (borrowed,
 * shared: main sizes it as `ratelimit-size` says) when conf->ratelimit is
 * not 0, at the `ratelimit` and `ratelimit-slip` of the conf each query
 * is admitted under (the worker's snapshot's, not another's that swapped
 * first). Returns NULL if out of memory.
 */
struct admit *admit_new(struct ratelimit *rl);

/* admit_free: free a. NULL is allowed. */
void	admit_free(struct admit *a);

/*
 * admit_checked: admit_query without its fast path; call that instead.
 */
enum admit_verdict admit_checked(struct admit *a, const struct config *conf,
	    const struct addr *client, int udp, struct metrics *m,
	    uint64_t now);

/*
 * admit_query: whether a query from client (over UDP if udp, else TCP),
 * arriving at now (ms), is served under conf (the worker's current one):
 * ADMIT_REFUSE if client is not in allow (counted in m->refused_queries,
 * logged at most once every ADMIT_LOG_INTERVAL); over UDP from a client
 * not in exempt-clients, ADMIT_DROP or ADMIT_SLIP if over the rate limit
 * (counted in m->ratelimit_dropped or m->ratelimit_slipped, logged the
 * same way); else ADMIT_SERVE. TCP is never rate limited: a TCP client
 * has shown that its address is its own, and it is where a slipped
 * client is sent. Inline, as the fast path of every query: an allowed
 * client and no rate limit to apply.
 */
static inline enum admit_verdict
admit_query(struct admit *a, const struct config *conf,
    const struct addr *client, int udp, struct metrics *m, uint64_t now)
{
	if ((conf->ratelimit == 0 || !udp) &&
	    acl_match(&conf->allow.acl, client))
		return ADMIT_SERVE;
	return admit_checked(a, conf, client, udp, m, now);
}

/*
 * admit_connection: whether a TCP connection from client, accepted at now
 * (ms), is kept: 1 if client is in allow; else 0 (the caller closes it;
 * counted in m->refused_connections, logged as in admit_query).
 */
int	admit_connection(struct admit *a, const struct config *conf,
	    const struct addr *client, struct metrics *m, uint64_t now);

/*
 * admit_minimal_any: 1 if q (parsed, served) gets the minimal answer of
 * RFC 8482 §4.2 instead of being resolved: qtype ANY, class IN, over UDP,
 * from a client not in conf's exempt-clients (counted in m->any_minimal);
 * else 0.
 */
int	admit_minimal_any(const struct config *conf, const struct addr *client,
	    int udp, const struct msg_query *q, struct metrics *m);

/*
 * admit_write_any: the minimal answer to ANY query q (RFC 8482 §4.2) into
 * out (capacity cap, at least MSG_ERROR_MAX_LEN): NOERROR with one
 * synthesized RR, owner the qname, HINFO, CPU "RFC8482", OS the empty
 * string, TTL ADMIT_ANY_TTL or conf's max-ttl if lower; the rest as
 * msg_write_answer makes it with opts. Returns its length (21 octets more
 * than msg_write_error's), or 0 if cap is too small.
 */
size_t	admit_write_any(const struct config *conf, const struct msg_query *q,
	    const struct msg_reply_opts *opts, uint8_t *out, size_t cap);

/*
 * admit_write_slip: the answer to q when it slipped: NOERROR, no records,
 * TC=1 (RFC 1035 §4.1.1), so that a real client asks again over TCP,
 * which is not rate limited. As msg_write_error otherwise; its length,
 * or 0 if cap is below MSG_ERROR_MAX_LEN.
 */
size_t	admit_write_slip(const struct msg_query *q,
	    const struct msg_reply_opts *opts, uint8_t *out, size_t cap);

/* admit_stats: the rate limit table's figures. */
void	admit_stats(struct admit *a, struct ratelimit_stats *out);

#endif
