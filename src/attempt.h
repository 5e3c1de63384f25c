/*
 * attempt.h: one query of a fetch to one upstream, and what comes back.
 * The query gets a random ID and, from the transport, a random source
 * port (RFC 5452 §9.2), and its qname a random case (draft-vixie-dnsext-
 * dns0x20) unless the upstream does not keep it. A response counts only
 * if its ID and question, case included, are what was sent (RFC 5452
 * §9.1), which is checked before the rest of it is read, and over UDP if
 * it is no larger than the payload size the query offered (RFC 6891
 * §6.2.3): anything else is ignored and the attempt waits on. A truncated
 * answer is asked again over TCP (RFC 7766 §5); FORMERR or NOTIMP to a
 * query with an OPT record is asked again once without one (RFC 6891 §7;
 * if that is answered, the upstream is known not to speak EDNS); SERVFAIL,
 * REFUSED, a referral, a CNAME chain over MSG_CHAIN_MAX or garbage over
 * TCP fail the attempt; anything else is an answer (RFC 2308 §2). Each
 * outcome is counted in the upstream's per-zone counters and health, and
 * told to the fetch through struct attempt_owner.
 */
#ifndef DNSDAMPER_ATTEMPT_H
#define DNSDAMPER_ATTEMPT_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "transport.h"
#include "upstream.h"

struct attempt;
struct dnstap_worker;

/* How an attempt tells its fetch what happened; arg is the fetch's. */
struct attempt_owner {
	/* A usable answer r (borrowed for the call), already counted. The
	 * owner may free the attempt. */
	void	(*answered)(void *arg, struct attempt *a,
		    const struct msg_response *r, uint64_t now);
	/* No usable answer will come: the attempt is closed, the failure
	 * logged and counted, a->answered_failure set if the upstream did
	 * answer (with a failure). The owner may free the attempt. */
	void	(*failed)(void *arg, struct attempt *a, uint64_t now);
	/* The attempt goes on over TCP, which gets until the deadline. */
	void	(*tcp)(void *arg, struct attempt *a);
};

/* Responses refused, counted for every fetch of a context. */
struct attempt_counts {
	uint64_t	mismatched;	/* wrong ID or question, RFC 5452 */
	uint64_t	malformed;	/* ID and question ours, the rest not
					 * parseable */
	uint64_t	oversized;	/* UDP, over our payload size */
	uint64_t	long_chain;	/* over MSG_CHAIN_MAX CNAMEs */
	uint64_t	local;		/* not sent: out of descriptors or
					 * memory here */
};

/* What the attempts of one fetch share: owned by the fetch, which
 * outlives them. */
struct attempt_query {
	const struct transport	*t;		/* borrowed */
	struct msg_query	 q;		/* qname folded; CD and DO are
						 * passed on (RFC 4035 §3.2) */
	const struct msg_question *clients_q;	/* recorded as the upstream's
						 * failed_q, or NULL (probes) */
	int			 health;	/* 0: failures and timeouts do
						 * not count against the
						 * upstream (loop probes) */
	int			 randomize_case; /* 0x20 */
	uint16_t		 edns_size;	/* our payload size, octets */
	struct attempt_counts	*counts;	/* the context's */
	struct dnstap_worker	*const *tap;	/* the context's dnstap
						 * output (NULL: none), or
						 * NULL */
	const struct attempt_owner *owner;
	void			*arg;
};

struct attempt {
	struct attempt		*next;		/* the fetch's, newest first */
	const struct attempt_query *aq;
	struct upstream		*up;		/* borrowed */
	struct upstream_stats	*st;		/* up's, for the fetch's zone */
	size_t			 idx;		/* the fetch's slot for up */
	struct transport_conn	*conn;		/* NULL: not listening */
	int			 tcp;		/* over TCP since TC=1 */
	int			 tls;		/* over TLS only: its upstream
						 * is a TLS one */
	int			 edns;		/* the query has an OPT */
	int			 plain_retry;	/* asked again without OPT
						 * after FORMERR or NOTIMP */
	int			 answered_failure; /* it ended with an answer
						 * that is a failure (SERVFAIL,
						 * REFUSED...), not silence */
	int			 case_only;	/* the name came back only in
						 * another case: the upstream's
						 * doing, or forged */
	uint16_t		 id;
	int			 cased;		/* qname has 0x20 case */
	size_t			 wire_len;
	uint64_t		 sent;		/* ms */
	uint32_t		 rto;		/* ms, the timeout it was sent
						 * with (upstream_rto) */
	/* attempt_init sets every field above, these as it needs them */
	uint8_t			 qname[MSG_NAME_MAX];	/* as sent */
	uint8_t			 wire[MSG_QUERY_MAX_LEN];
};

/*
 * attempt_init: make *a (the caller's memory, e.g. inside its fetch) an
 * attempt of aq to upstream up in the fetch's slot idx, counting into st
 * (up's counters for the fetch's zone, which must stay put while the
 * attempt lives): its ID and 0x20 case are made, nothing is sent yet.
 * attempt_close undoes it before the memory goes.
 */
void	attempt_init(struct attempt *a, const struct attempt_query *aq,
	    struct upstream *up, struct upstream_stats *st, size_t idx);

/*
 * attempt_new: the same in memory of its own; free it with attempt_free.
 * Returns NULL if out of memory.
 */
struct attempt *attempt_new(const struct attempt_query *aq,
	    struct upstream *up, struct upstream_stats *st, size_t idx);

/*
 * attempt_send: write a's query, with an OPT record unless the upstream
 * is known not to speak EDNS at now (upstream_edns), send it over UDP at
 * now (ms) and listen for the response. Returns 0, or -1 if it could not
 * be sent: then the failure is logged (with -v) and counted against the
 * upstream, unless we were out of descriptors or memory (counted in
 * counts->local, and logged), and the owner is not called.
 */
int	attempt_send(struct attempt *a, uint64_t now);

/*
 * attempt_timed_out: a's timeout (a->rto) passed at now without an
 * answer: logged, counted, and reported to the upstream's RTT and health
 * (upstream_timed_out); it keeps listening for a late answer.
 */
void	attempt_timed_out(struct attempt *a, uint64_t now);

/*
 * attempt_close: stop listening; the owner hears nothing more of a. Its
 * socket is closed, the port with it (transport.h).
 */
void	attempt_close(struct attempt *a);

/* attempt_free: close and free a. NULL is fine. */
void	attempt_free(struct attempt *a);

#endif
