/*
 * check_fetch.c: fetches through a scripted transport and a virtual clock.
 * Each scenario is data, in the manner of Unbound's replay tests: a client
 * asks, the query that goes out to which upstream, what that upstream
 * answers, time passing, and how the fetch ends.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "cache.h"
#include "check_main.h"
#include "fetch.h"
#include "inflight.h"
#include "testnet.h"
#include "testpkt.h"
#include "upstream.h"
#include "wire.h"
#include "zone.h"

#define ADDRESS		"\300\0\2\1"	/* 192.0.2.1, every answer's */
#define MAX_STEPS	32
#define MAX_WAITERS	8

enum op {
	OP_END,
	OP_ASK,		/* a client asks name (A): fetch_join returns n */
	OP_SENT,	/* the next query out asks name of upstream n */
	OP_REPLY,	/* upstream n answers its latest query for name */
	OP_PASS,	/* n ms pass */
	OP_DONE,	/* a fetch ends in outcome, answering n waiters */
	OP_QUIET,	/* nothing sent, nothing ended since the last check */
	OP_STATS,	/* the context's counters are st */
	OP_OPEN_FAILS,	/* opening a socket fails with errno n (0: works) */
	OP_UPSTREAM,	/* upstream n's state is up, its failures in a row
			 * fails */
	OP_REFRESH,	/* a refresh with no waiter: fetch_join returns n */
	OP_SOCKET,	/* the n-th query sent (from 0) is in state sock */
	OP_BACK		/* upstream n answers another worker (after its
			 * silence), which tells this one (fetch_resume_back) */
};

/*
 * What became of a query's socket (transport.h): it stays open until the
 * answer to its own query came, ID and question matching, whatever its
 * rcode, or until the attempt ended; then it is closed with its port.
 */
enum sock {
	S_OPEN,		/* listening */
	S_CLOSED	/* closed: the socket goes */
};

enum reply {
	R_ANSWER,	/* NOERROR, A 192.0.2.1 */
	R_SERVFAIL,
	R_REFUSED,
	R_TC,		/* NOERROR, TC=1, no records */
	R_WRONG_ID,	/* an answer, but not with the ID sent */
	R_WRONG_NAME,	/* an answer about another name */
	R_CASE_FLIP,	/* an answer, every letter of the qname in the other
			 * case from what was sent (0x20) */
	R_OVERSIZED,	/* an answer of 80 A records: 1,307 octets, over
			 * the 1232 offered */
	R_OVER_512,	/* an answer of 40 A records: 667 octets, over the
			 * 512 of a query without OPT */
	R_GARBAGE,	/* the ID and question sent, then a record cut off */
	R_WRONG_ID_GARBAGE, /* the same with another ID */
	R_CHAIN_16,	/* 16 CNAMEs from the qname, then A 192.0.2.1 */
	R_CHAIN_17,	/* 17 CNAMEs, then A 192.0.2.1 */
	R_FORMERR,	/* FORMERR, no OPT: what a server without EDNS says
			 * to a query with one (RFC 6891 §7) */
	R_NOTIMP,	/* NOTIMP, no OPT: what some such servers say */
	R_UNREACHABLE	/* no answer: ICMP port unreachable */
};

struct step {
	enum op			 op;
	const char		*name;
	int			 n;
	enum transport_proto	 proto;		/* OP_SENT */
	int			 plain;		/* OP_SENT: sent without 0x20 */
	int			 no_edns;	/* OP_SENT: sent without OPT;
						 * OP_UPSTREAM: known not to
						 * speak EDNS */
	int			 down;		/* OP_UPSTREAM */
	unsigned		 fails;		/* OP_UPSTREAM */
	enum reply		 reply;		/* OP_REPLY */
	enum fetch_outcome	 outcome;	/* OP_DONE */
	int			 unsent;	/* OP_DONE: no query went out */
	struct fetch_stats	 st;		/* OP_STATS */
	int			 worker;	/* OP_ASK, OP_REFRESH, OP_STATS:
						 * whose (a shared scenario) */
	int			 own;		/* OP_ASK: fetch even if the
						 * other worker has the key */
	enum sock		 sock;		/* OP_SOCKET */
};

#define ASK(nm, result)	{ .op = OP_ASK, .name = nm, .n = result }
#define SENT(up, nm)		{ .op = OP_SENT, .name = nm, .n = up, \
				    .proto = TRANSPORT_UDP }
#define SENT_PLAIN(up, nm)	{ .op = OP_SENT, .name = nm, .n = up, \
				    .proto = TRANSPORT_UDP, .plain = 1 }
#define SENT_TCP(up, nm)	{ .op = OP_SENT, .name = nm, .n = up, \
				    .proto = TRANSPORT_TCP }
#define SENT_NO_EDNS(up, nm)	{ .op = OP_SENT, .name = nm, .n = up, \
				    .proto = TRANSPORT_UDP, .no_edns = 1 }
#define UPSTREAM(up, ...)	{ .op = OP_UPSTREAM, .n = up, __VA_ARGS__ }
#define REPLY(up, nm, r)	{ .op = OP_REPLY, .name = nm, .n = up, \
				    .reply = r }
#define PASS(ms)		{ .op = OP_PASS, .n = ms }
#define DONE(nm, o, waiters)	{ .op = OP_DONE, .name = nm, .n = waiters, \
				    .outcome = o }
#define DONE_UNSENT(nm, waiters) { .op = OP_DONE, .name = nm, \
				    .n = waiters, .outcome = FETCH_FAILED, \
				    .unsent = 1 }
#define QUIET			{ .op = OP_QUIET }
#define OPEN_FAILS(e)		{ .op = OP_OPEN_FAILS, .n = e }
#define STATS(...)		{ .op = OP_STATS, .st = { __VA_ARGS__ } }
#define ASK_AT(wk, nm, result)	{ .op = OP_ASK, .name = nm, .n = result, \
				    .worker = wk }
#define ASK_OWN_AT(wk, nm, result) { .op = OP_ASK, .name = nm, \
				    .n = result, .worker = wk, .own = 1 }
#define REFRESH_AT(wk, nm, result) { .op = OP_REFRESH, .name = nm, \
				    .n = result, .worker = wk }
#define STATS_AT(wk, ...)	{ .op = OP_STATS, .worker = wk, \
				    .st = { __VA_ARGS__ } }
#define SOCKET(k, s)		{ .op = OP_SOCKET, .n = k, .sock = s }
#define BACK(up)		{ .op = OP_BACK, .n = up }

struct scenario {
	const char	*what;
	uint32_t	 query_timeout;	/* ms; 0: 2000 */
	uint32_t	 max_inflight;	/* 0: 100 */
	uint32_t	 zone_inflight;	/* the zone's own max-inflight, or 0 */
	uint32_t	 max_waiters;	/* 0: 100 */
	int		 one_upstream;	/* the zone forwards to upstream 0
					 * alone */
	int		 budget;	/* retry-budget 0, retry-budget-min
					 * budget_min; else the defaults,
					 * 10 % and 10 */
	uint32_t	 budget_min;
	int		 shared;	/* two workers sharing an in-flight
					 * index, each told of the other's
					 * ends at once (the daemon posts
					 * them to its mailbox) */
	int		 lost;		/* shared, but worker 1 never told
					 * (the word lost) */
	struct step	 steps[MAX_STEPS];
};

/*
 * The RTO before the first measurement is 400 ms (RTT_INITIAL_MS, within
 * upstream-timeout 50ms 2s), and a timeout doubles the RTO the query was
 * sent with (RFC 6298 §5.5): 800 ms. The zone is "example.", forwarding
 * to upstreams 0 and 1 in that order (policy order).
 */
static const struct scenario scenarios[] = {
	{ .what = "identical questions share one fetch", .steps = {
		ASK("a.example.", 1),
		ASK("a.example.", 0),
		/* the key folds case (RFC 4343) */
		ASK("A.Example.", 0),
		ASK("b.example.", 1),
		SENT(0, "a.example."),
		SENT(0, "b.example."),
		QUIET,
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 3),
		SOCKET(0, S_CLOSED),
		SOCKET(1, S_OPEN),
		STATS(.started = 2, .coalesced = 2, .inflight = 1),
		REPLY(0, "b.example.", R_ANSWER),
		DONE("b.example.", FETCH_ANSWER, 1),
		ASK("a.example.", 1),	/* ended: a new fetch */
		SENT(0, "a.example."),
	} },
	{ .what = "a timeout asks the next upstream; the first is still "
	    "heard", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		PASS(399),
		QUIET,
		PASS(1),
		SENT(1, "a.example."),
		QUIET,
		/* upstream 0's late answer is as good as any */
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		/* both ports close, upstream 1's answer still due */
		SOCKET(0, S_CLOSED),
		SOCKET(1, S_CLOSED),
	} },
	/*
	 * Flaky is not down: an upstream that answers SERVFAIL or REFUSED is
	 * left for the next; the last one left is asked again, 4 times
	 * (FETCH_SAME_RETRIES), before the fetch fails.
	 */
	{ .what = "SERVFAIL and REFUSED ask the next upstream at once, the "
	    "last one left 4 times more; when every one failed, the fetch "
	    "fails at the loop's next turn", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_SERVFAIL),
		SOCKET(0, S_CLOSED),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_REFUSED),
		SOCKET(1, S_CLOSED),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_SERVFAIL),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_REFUSED),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_SERVFAIL),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_REFUSED),
		QUIET,
		PASS(0),
		DONE("a.example.", FETCH_FAILED, 1),
		/* answers that are failures: alive, not down */
		UPSTREAM(1, .down = 0, .fails = 5),
	} },
	{ .what = "a lone upstream's SERVFAIL is asked again at once: flaky "
	    "is not down", .one_upstream = 1, .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_SERVFAIL),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_REFUSED),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		UPSTREAM(0, .down = 0, .fails = 0),
	} },
	{ .what = "unreachable is silence, not an answer: a lone upstream "
	    "is not asked again at once", .one_upstream = 1, .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_UNREACHABLE),
		QUIET,
		PASS(0),
		DONE("a.example.", FETCH_FAILED, 1),
		UPSTREAM(0, .down = 0, .fails = 1),
	} },
	/*
	 * The retry budget (retry-budget 0, retry-budget-min 1 here): one
	 * query beyond a first in any 10 s; beyond it, a SERVFAIL fails the
	 * fetch (the client gets stale or SERVFAIL) and an RTO passes
	 * without a hedge (the client waits).
	 */
	{ .what = "beyond the retry budget: no hedge after the RTO, no retry "
	    "after SERVFAIL", .budget = 1, .budget_min = 1, .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		PASS(400),
		SENT(1, "a.example."),		/* the one allowed */
		REPLY(1, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		ASK("b.example.", 1),
		SENT(0, "b.example."),
		PASS(400),
		QUIET,				/* no hedge: the client waits */
		PASS(600),
		QUIET,
		REPLY(0, "b.example.", R_ANSWER),
		DONE("b.example.", FETCH_ANSWER, 1),
		ASK("c.example.", 1),
		SENT(0, "c.example."),
		REPLY(0, "c.example.", R_SERVFAIL),
		QUIET,				/* upstream 1 is not asked */
		PASS(0),
		DONE("c.example.", FETCH_FAILED, 1),
		/* 10 s after the hedge of a.example., the window has room */
		PASS(10000),
		ASK("d.example.", 1),
		SENT(0, "d.example."),
		REPLY(0, "d.example.", R_SERVFAIL),
		SENT(1, "d.example."),
		REPLY(1, "d.example.", R_ANSWER),
		DONE("d.example.", FETCH_ANSWER, 1),
	} },
	/*
	 * A lone upstream goes silent: timeouts at 400 ms (RTO 400), then
	 * 1200 (800), then 2800 (1600): three silent failures, down. Once
	 * every upstream is down, no more retransmissions: the client waits
	 * (or gets stale) and the probes look for its return. When it
	 * answers another question (at 3000 ms, say a probe's or a new
	 * client's), the resolution that was waiting asks it again at once,
	 * instead of waiting out query-timeout (5 s).
	 */
	{ .what = "every upstream down: no retries; back: what waits is "
	    "asked again at once", .one_upstream = 1, .query_timeout = 5000,
	    .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		PASS(400),
		SENT(0, "a.example."),
		PASS(800),
		SENT(0, "a.example."),
		PASS(1600),
		UPSTREAM(0, .down = 1, .fails = 3),
		QUIET,
		PASS(200),
		QUIET,
		ASK("b.example.", 1),		/* its first query goes out */
		SENT(0, "b.example."),
		REPLY(0, "b.example.", R_ANSWER),
		DONE("b.example.", FETCH_ANSWER, 1),
		UPSTREAM(0, .down = 0, .fails = 0),
		SENT(0, "a.example."),		/* at once, at 3000 ms */
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	/*
	 * The same, but the upstream's return is seen by another worker (an
	 * answer there, at 3000 ms): told, this one asks again at once too.
	 */
	{ .what = "every upstream down: back at another worker: what waits "
	    "here is asked again at once", .one_upstream = 1,
	    .query_timeout = 5000, .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		PASS(400),
		SENT(0, "a.example."),
		PASS(800),
		SENT(0, "a.example."),
		PASS(1600),
		UPSTREAM(0, .down = 1, .fails = 3),
		PASS(200),
		QUIET,
		BACK(0),
		UPSTREAM(0, .down = 0, .fails = 0),
		SENT(0, "a.example."),		/* at once, at 3000 ms */
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "every upstream down and silent: the fetch waits for its "
	    "deadline without asking again", .one_upstream = 1,
	    .query_timeout = 5000, .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		PASS(400),
		SENT(0, "a.example."),
		PASS(800),
		SENT(0, "a.example."),
		PASS(1600),
		PASS(2199),
		QUIET,
		PASS(1),
		DONE("a.example.", FETCH_FAILED, 1),
	} },
	{ .what = "SERVFAIL from one, an answer from the next", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_SERVFAIL),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "TC=1 is asked again over TCP, which waits past the RTO "
	    "(RFC 7766 §5)", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_TC),
		SENT_TCP(0, "a.example."),
		SOCKET(0, S_CLOSED),
		PASS(1000),
		QUIET,
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "responses with the wrong ID, question or case are "
	    "ignored (RFC 5452 §9.1)", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_WRONG_ID),
		REPLY(0, "a.example.", R_WRONG_NAME),
		REPLY(0, "a.example.", R_CASE_FLIP),
		QUIET,
		STATS(.started = 1, .inflight = 1, .mismatched = 3),
		/* none of them was its answer: it waits on */
		SOCKET(0, S_OPEN),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		SOCKET(0, S_CLOSED),
	} },
	{ .what = "over UDP, a response larger than the payload size offered "
	    "is dropped (RFC 6891 §6.2.3); the ID and question are read "
	    "before the rest (RFC 5452 §9.1)", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_OVERSIZED),
		/* a wrong ID: refused as such, its garbage never read */
		REPLY(0, "a.example.", R_WRONG_ID_GARBAGE),
		REPLY(0, "a.example.", R_GARBAGE),
		QUIET,
		STATS(.started = 1, .inflight = 1, .mismatched = 1,
		    .malformed = 1, .oversized = 1),
		SOCKET(0, S_OPEN),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "a chain of 16 CNAMEs is an answer, of 17 a failure of "
	    "that upstream (RFC 1034 §3.6.2)", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_CHAIN_17),
		SENT(1, "a.example."),
		STATS(.started = 1, .inflight = 1, .long_chain = 1),
		REPLY(1, "a.example.", R_CHAIN_16),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "over TCP, a response that does not match fails the "
	    "attempt", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_TC),
		SENT_TCP(0, "a.example."),
		REPLY(0, "a.example.", R_WRONG_ID),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "over TCP, a response in another case (0x20) fails the "
	    "attempt too: the connection carried only our query, and what "
	    "else the upstream streams must not pile up", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_TC),
		SENT_TCP(0, "a.example."),
		REPLY(0, "a.example.", R_CASE_FLIP),
		SENT(1, "a.example."),
		STATS(.started = 1, .inflight = 1, .mismatched = 1),
		REPLY(1, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "only answers in another case by the RTO: asked again "
	    "without 0x20", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_CASE_FLIP),
		PASS(400),
		SENT_PLAIN(0, "a.example."),
		/* the answer in our case may yet come to the first */
		SOCKET(0, S_CLOSED),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		SOCKET(1, S_CLOSED),
	} },
	/*
	 * query-timeout 1 s: upstream 0 at 0 (RTO 400), upstream 1 at 400
	 * (RTO 400), upstream 0 again at 800 (RTO now 800), the deadline at
	 * 1000 before that one's timeout.
	 */
	/*
	 * RFC 6891 §7: a server without EDNS says FORMERR (or NOTIMP) to a
	 * query with an OPT record. It is asked the same again without one
	 * at once, that is no failure, and once that is answered the server
	 * is known not to speak EDNS: plain queries until UPSTREAM_EDNS_RETEST
	 * (at most; at least 3/4 of it) has passed.
	 */
	{ .what = "FORMERR to EDNS: asked again without OPT, never a "
	    "failure; plain queries until the retest", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_FORMERR),
		SENT_NO_EDNS(0, "a.example."),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		UPSTREAM(0, .no_edns = 1, .down = 0, .fails = 0),
		ASK("b.example.", 1),
		SENT_NO_EDNS(0, "b.example."),
		REPLY(0, "b.example.", R_ANSWER),
		DONE("b.example.", FETCH_ANSWER, 1),
		PASS(UPSTREAM_EDNS_RETEST * 3 / 4 - 1),
		ASK("c.example.", 1),
		SENT_NO_EDNS(0, "c.example."),
		REPLY(0, "c.example.", R_ANSWER),
		DONE("c.example.", FETCH_ANSWER, 1),
		PASS(UPSTREAM_EDNS_RETEST / 4 + 1),
		ASK("d.example.", 1),
		SENT(0, "d.example."),
		UPSTREAM(0, .no_edns = 0, .down = 0, .fails = 0),
	} },
	{ .what = "without OPT, a UDP response over 512 octets is dropped "
	    "(RFC 1035 §4.2.1: the query offered no more)", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_FORMERR),
		SENT_NO_EDNS(0, "a.example."),
		REPLY(0, "a.example.", R_OVER_512),
		QUIET,
		STATS(.started = 1, .inflight = 1, .oversized = 1),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "NOTIMP to EDNS: asked again without OPT", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_NOTIMP),
		SENT_NO_EDNS(0, "a.example."),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		UPSTREAM(0, .no_edns = 1, .down = 0, .fails = 0),
	} },
	{ .what = "FORMERR to the plain query too: a failure, and EDNS "
	    "stays", .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_FORMERR),
		SENT_NO_EDNS(0, "a.example."),
		REPLY(0, "a.example.", R_FORMERR),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		UPSTREAM(0, .no_edns = 0, .down = 0, .fails = 1),
	} },
	{ .what = "the deadline ends the fetch: FETCH_FAILED",
	    .query_timeout = 1000, .steps = {
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		PASS(400),
		SENT(1, "a.example."),
		PASS(400),
		SENT(0, "a.example."),
		PASS(199),
		QUIET,
		PASS(1),
		DONE("a.example.", FETCH_FAILED, 1),
		SOCKET(0, S_CLOSED),
		SOCKET(1, S_CLOSED),
		SOCKET(2, S_CLOSED),
	} },
	{ .what = "max-inflight: a fetch more is refused until one ends",
	    .max_inflight = 2, .zone_inflight = 10, .steps = {
		ASK("a.example.", 1),
		ASK("b.example.", 1),
		ASK("c.example.", -1),
		/* joining a running one needs no budget */
		ASK("a.example.", 0),
		STATS(.started = 2, .coalesced = 1, .over_budget = 1,
		    .inflight = 2),
		SENT(0, "a.example."),
		SENT(0, "b.example."),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 2),
		ASK("c.example.", 1),
		SENT(0, "c.example."),
	} },
	{ .what = "max-waiters: a client more does not wait on the fetch, "
	    "and is counted", .max_waiters = 2, .steps = {
		ASK("a.example.", 1),
		ASK("a.example.", 0),
		ASK("a.example.", -1),
		ASK("b.example.", 1),	/* another fetch has its own */
		STATS(.started = 2, .coalesced = 1, .waiters_refused = 1,
		    .inflight = 2),
		SENT(0, "a.example."),
		SENT(0, "b.example."),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 2),
	} },
	{ .what = "out of descriptors here: a local error, not a failure of "
	    "the upstreams, nor one to cache (RFC 9520 is theirs)",
	    .steps = {
		OPEN_FAILS(EMFILE),
		ASK("a.example.", 1),
		PASS(0),
		DONE_UNSENT("a.example.", 1),
		STATS(.started = 1, .local_errors = 2),
		UPSTREAM(0, .no_edns = 0, .down = 0, .fails = 0),
		UPSTREAM(1, .no_edns = 0, .down = 0, .fails = 0),
		OPEN_FAILS(0),
		ASK("a.example.", 1),
		SENT(0, "a.example."),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
	} },
	{ .what = "a zone's own max-inflight binds below the global one",
	    .zone_inflight = 1, .steps = {
		ASK("a.example.", 1),
		ASK("b.example.", -1),
		STATS(.started = 1, .over_budget = 1, .inflight = 1),
		SENT(0, "a.example."),
	} },
	/*
	 * Two workers: a key one of them resolves is not asked again by the
	 * other, whose queries wait for the word that it has landed (then
	 * answered from the cache, query.c's business); refreshes there are
	 * left to it; once it has landed, the key is anyone's.
	 */
	{ .what = "a key another worker resolves is not fetched again",
	  .shared = 1, .steps = {
		ASK_AT(0, "a.example.", 1),
		SENT(0, "a.example."),
		ASK_AT(1, "a.example.", 0),
		ASK_AT(1, "A.example.", 0),
		REFRESH_AT(1, "a.example.", 0),
		QUIET,
		STATS_AT(1, .coalesced = 2, .across = 2),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		DONE("a.example.", FETCH_LANDED, 2),
		STATS(.started = 1),
		ASK_AT(1, "a.example.", 1),
		SENT(0, "a.example."),
		ASK_AT(0, "a.example.", 0),
		QUIET,
		STATS_AT(1, .started = 1, .coalesced = 2, .across = 2,
		    .inflight = 1),
	} },
	{ .what = "a refresh left to the other worker is not told of its end",
	  .shared = 1, .steps = {
		REFRESH_AT(0, "a.example.", 1),
		SENT(0, "a.example."),
		REFRESH_AT(1, "a.example.", 0),
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 0),
		QUIET,
	} },
	/* query-timeout 2000 ms and FETCH_REMOTE_SLACK 1000 ms */
	{ .what = "waiters not told of the other's end look at its deadline",
	  .shared = 1, .lost = 1, .steps = {
		ASK_AT(0, "a.example.", 1),
		SENT(0, "a.example."),
		ASK_AT(1, "a.example.", 0),
		PASS(400),
		SENT(1, "a.example."),
		REPLY(1, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		PASS(2599),
		QUIET,
		PASS(1),
		DONE("a.example.", FETCH_LANDED, 1),
	} },
	{ .what = "a waiter told to fetch on its own does, beside the other",
	  .shared = 1, .steps = {
		ASK_AT(0, "a.example.", 1),
		SENT(0, "a.example."),
		ASK_OWN_AT(1, "a.example.", 1),
		SENT(0, "a.example."),
		/* the latest query, worker 1's; worker 0's goes on */
		REPLY(0, "a.example.", R_ANSWER),
		DONE("a.example.", FETCH_ANSWER, 1),
		QUIET,
		STATS(.started = 1, .inflight = 1),
		STATS_AT(1, .started = 1),
	} },
};

/* The world a scenario runs in. */
struct world {
	struct testnet		 net;
	struct cache		*cache;
	struct upstream_registry *reg;
	struct zone_table	*zones;
	struct fetch_ctx	*ctx;
	struct fetch_ctx	*ctx2;		/* worker 1, if shared */
	struct inflight		*index;		/* if shared */
	struct addr		 ups[2];
	struct fetch_waiter	 waiters[MAX_WAITERS];
	size_t			 n_waiters;
	size_t			 checked_sent;	/* net.sent[] seen by OP_SENT */
	struct done {
		enum fetch_outcome	 outcome;
		size_t			 waiters;
		int			 answered;	/* r holds ADDRESS */
		int			 unsent;
		uint8_t			 qname[MSG_NAME_MAX];	/* folded */
		size_t			 qname_len;
	}			 dones[MAX_STEPS];
	size_t			 n_dones, checked_dones;
};

/* fetch_done_fn: record how the fetch ended and take its waiters. */
static void
done(struct fetch *f, const struct fetch_result *res, void *arg)
{
	struct world *w = arg;
	struct done *d = &w->dones[w->n_dones];
	const struct msg_rr *rr;

	if (res->outcome == FETCH_CANCELLED)
		return;
	ck_assert_uint_lt(w->n_dones, MAX_STEPS);
	w->n_dones++;
	memset(d, 0, sizeof(*d));
	d->outcome = res->outcome;
	d->unsent = res->unsent;
	while (fetch_take_waiter(f) != NULL)
		d->waiters++;
	if (res->r != NULL) {
		d->qname_len = res->r->q.qname_len;
		memcpy(d->qname, res->r->q.qname, d->qname_len);
		msg_name_fold(d->qname, d->qname_len);
		/* the A at the end of the chain, if any */
		rr = &res->r->rrs[res->r->counts[MSG_SECTION_ANSWER] - 1];
		d->answered = rr->type == MSG_TYPE_A &&
		    memcmp(res->r->pkt + rr->rdata_offset, ADDRESS, 4) == 0;
	}
}

/* The world of the scenario running: whose clock landed_at reads. */
static struct world *landing;

/* Worker arg told by the index that a key landed: at once, here. */
static void
landed_at(void *arg, const struct cache_key *key)
{
	fetch_landed(arg, key, landing->net.now);
}

/* Both workers share a scenario's index (worker 1's ctx2 is made then). */
static void
world_share(struct world *w, const struct fetch_settings *s)
{
	landing = w;
	ck_assert_ptr_nonnull(w->index = inflight_new(2));
	ck_assert_ptr_nonnull(w->ctx2 = fetch_ctx_new_on(&w->net.t, s, done,
	    w));
	fetch_ctx_share(w->ctx, w->index, 0);
	fetch_ctx_share(w->ctx2, w->index, 1);
	inflight_notify(w->index, 0, landed_at, w->ctx);
	inflight_notify(w->index, 1, landed_at, w->ctx2);
}

static void
world_new(struct world *w, const struct scenario *sc)
{
	static const struct cache_limits lim = { 0, 86400, 3600, 5, 0, 30,
	    30 };
	struct fetch_settings s = { .edns_size = 1232, .query_timeout = 2000,
	    .max_inflight = 100, .max_waiters = 100, .randomize_case = 1 };
	struct config_forward fw;
	struct config conf;
	const char *err;
	size_t i;

	memset(w, 0, sizeof(*w));
	testnet_init(&w->net, 1000000);
	ck_assert_int_eq(addr_parse("127.0.0.1:5301", 53, &w->ups[0], &err),
	    0);
	ck_assert_int_eq(addr_parse("127.0.0.1:5302", 53, &w->ups[1], &err),
	    0);
	memset(&fw, 0, sizeof(fw));
	fw.zone = "example.";
	fw.upstreams = w->ups;
	fw.n_upstreams = sc->one_upstream ? 1 : 2;
	fw.policy = CONFIG_POLICY_ORDER;
	fw.max_inflight = sc->zone_inflight;
	memset(&conf, 0, sizeof(conf));
	conf.forwards = &fw;
	conf.n_forwards = 1;
	conf.max_inflight = s.max_inflight;
	if (sc->query_timeout > 0)
		s.query_timeout = sc->query_timeout;
	if (sc->max_inflight > 0)
		s.max_inflight = conf.max_inflight = sc->max_inflight;
	if (sc->max_waiters > 0)
		s.max_waiters = sc->max_waiters;
	ck_assert_ptr_nonnull(w->cache = cache_new(1 << 20, &lim));
	ck_assert_ptr_nonnull(w->reg = upstream_registry_new(50, 2000));
	if (sc->budget)
		upstream_budget_set(w->reg, 0, sc->budget_min);
	ck_assert_ptr_nonnull(w->zones = zone_table_new(w->reg, &conf));
	ck_assert_ptr_nonnull(w->ctx = fetch_ctx_new_on(&w->net.t, &s, done,
	    w));
	/* Loop probes are fetch_loop's business: none here. */
	for (i = 0; i < fw.n_upstreams; i++)
		zone_at(w->zones, 0)->upstreams[i]->loop_checked = 1;
	if (sc->shared)
		world_share(w, &s);
	if (sc->lost)
		inflight_notify(w->index, 1, NULL, NULL);
}

/* Nothing may stay behind: every timer freed, every socket closed. */
static void
world_free(struct world *w)
{
	size_t i;

	if (w->index != NULL) {
		inflight_notify(w->index, 0, NULL, NULL);
		inflight_notify(w->index, 1, NULL, NULL);
	}
	fetch_ctx_free(w->ctx);
	fetch_ctx_free(w->ctx2);
	inflight_free(w->index);
	ck_assert_uint_eq(testnet_timers(&w->net), 0);
	for (i = 0; i < w->net.n_sent; i++)
		ck_assert(!w->net.sent[i].open);
	zone_table_unref(w->zones);
	upstream_registry_free(w->reg);
	cache_free(w->cache);
}

/* A client's query for name, type A, with RD and EDNS. */
static void
client_query(const char *name, struct msg_query *q)
{
	struct testpkt p = testpkt_query(name, LDNS_RR_TYPE_A, LDNS_RD, 1232,
	    0);

	ck_assert_int_eq(msg_parse_query(p.wire, p.len, q), MSG_PARSE_OK);
	testpkt_free(&p);
}

/* A client of worker st->worker asks (or, with OP_REFRESH, nobody). */
static void
ask(struct world *w, const struct step *st)
{
	struct fetch_waiter *wt = &w->waiters[w->n_waiters];
	struct cache_key key;
	struct msg_query q;
	struct zone *z;

	ck_assert_uint_lt(w->n_waiters, MAX_WAITERS);
	client_query(st->name, &q);
	cache_key_make(w->cache, &q.q, 0, 0, &key);
	ck_assert_ptr_nonnull(z = zone_find(w->zones, key.data,
	    q.q.qname_len, q.q.qtype));
	wt->own = st->own;
	ck_assert_int_eq(fetch_join(st->worker == 1 ? w->ctx2 : w->ctx, &key,
	    &q, w->zones, z, w->net.now, st->op == OP_REFRESH ? NULL : wt),
	    st->n);
	if (st->n >= 0 && st->op == OP_ASK)
		w->n_waiters++;
}

static void
sent(struct world *w, const struct step *st)
{
	struct transport_conn *c;
	struct msg_query asked, q;

	ck_assert_msg(w->checked_sent < w->net.n_sent, "nothing was sent");
	c = &w->net.sent[w->checked_sent++];
	ck_assert(addr_equal(&c->to, &w->ups[st->n]));
	ck_assert_int_eq(c->proto, st->proto);
	/* The client's question, recursion desired, our payload size. */
	ck_assert_int_eq(msg_parse_query(c->msg, c->len, &q), MSG_PARSE_OK);
	client_query(st->name, &asked);
	ck_assert(msg_name_equal(q.q.qname, q.q.qname_len, asked.q.qname,
	    asked.q.qname_len));
	ck_assert_uint_eq(q.q.qtype, MSG_TYPE_A);
	ck_assert(q.flags & MSG_FLAG_RD);
	ck_assert_int_eq(q.edns.present, !st->no_edns);
	if (!st->no_edns)
		ck_assert_uint_eq(q.edns.udp_size, 1232);
	if (st->plain)
		ck_assert_mem_eq(q.q.qname, asked.q.qname, q.q.qname_len);
}

/* The latest query to upstream up asking name. */
static struct transport_conn *
latest(struct world *w, size_t up, const char *name)
{
	struct msg_query asked, q;
	size_t i;

	client_query(name, &asked);
	for (i = w->net.n_sent; i-- > 0;) {
		ck_assert_int_eq(msg_parse_query(w->net.sent[i].msg,
		    w->net.sent[i].len, &q), MSG_PARSE_OK);
		if (addr_equal(&w->net.sent[i].to, &w->ups[up]) &&
		    msg_name_equal(q.q.qname, q.q.qname_len, asked.q.qname,
		    asked.q.qname_len))
			return &w->net.sent[i];
	}
	ck_abort_msg("%s was never sent to upstream %zu", name, up);
	return NULL;
}

/* The response r to query c: its header and question, then records. */
static size_t
response(const struct transport_conn *c, enum reply r, uint8_t *out)
{
	size_t qend = MSG_HEADER_LEN, len, i;
	uint16_t flags = MSG_FLAG_QR | MSG_FLAG_RD | MSG_FLAG_RA;

	qend += (size_t)name_walk(c->msg, c->len, MSG_HEADER_LEN, NAME_SKIP,
	    NULL, NULL) - MSG_HEADER_LEN + MSG_QTYPE_QCLASS_LEN;
	memcpy(out, c->msg, qend);
	memset(out + 4, 0, 8);
	out[5] = 1;			/* QDCOUNT */
	len = qend;
	if (r == R_SERVFAIL)
		flags |= MSG_RCODE_SERVFAIL;
	if (r == R_REFUSED)
		flags |= MSG_RCODE_REFUSED;
	if (r == R_FORMERR)
		flags |= MSG_RCODE_FORMERR;
	if (r == R_NOTIMP)
		flags |= MSG_RCODE_NOTIMP;
	if (r == R_TC)
		flags |= MSG_FLAG_TC;
	wire_wr16(out + 2, flags);
	if (r == R_WRONG_ID)
		wire_wr16(out, wire_rd16(out) ^ 0x5555);
	if (r == R_WRONG_NAME)
		out[MSG_HEADER_LEN + 1] ^= 0x01;	/* another octet */
	for (i = MSG_HEADER_LEN; r == R_CASE_FLIP && i < qend - 4; i++)
		if ((out[i] | 0x20) >= 'a' && (out[i] | 0x20) <= 'z')
			out[i] ^= 0x20;
	if (r == R_SERVFAIL || r == R_REFUSED || r == R_TC || r == R_FORMERR ||
	    r == R_NOTIMP)
		return len;
	if (r == R_CHAIN_16 || r == R_CHAIN_17)
		return testpkt_chain(out, qend, r == R_CHAIN_16 ? 16 : 17);
	if (r == R_GARBAGE || r == R_WRONG_ID_GARBAGE) {
		out[7] = 1;		/* ANCOUNT 1, and 3 octets of it */
		if (r == R_WRONG_ID_GARBAGE)
			wire_wr16(out, wire_rd16(out) ^ 0x5555);
		return len + wire_wr16(out + len, 0xc000 | MSG_HEADER_LEN) + 1;
	}
	for (i = 0; (r == R_OVERSIZED && i < 79) || (r == R_OVER_512 && i < 39);
	    i++) {
		len += wire_wr16(out + len, 0xc000 | MSG_HEADER_LEN);
		len += wire_wr16(out + len, MSG_TYPE_A);
		len += wire_wr16(out + len, MSG_CLASS_IN);
		len += wire_wr32(out + len, 300);
		len += wire_wr16(out + len, 4);
		len += wire_wr32(out + len, 0xc0000200 | (uint32_t)i);
	}
	/* ANCOUNT */
	out[7] = r == R_OVERSIZED ? 80 : r == R_OVER_512 ? 40 : 1;
	/* Last, one A record, its owner a pointer to the question (RFC
	 * 1035 §4.1.4), TTL 300. */
	len += wire_wr16(out + len, 0xc000 | MSG_HEADER_LEN);
	len += wire_wr16(out + len, MSG_TYPE_A);
	len += wire_wr16(out + len, MSG_CLASS_IN);
	len += wire_wr32(out + len, 300);
	len += wire_wr16(out + len, 4);
	memcpy(out + len, ADDRESS, 4);
	return len + 4;
}

static void
reply(struct world *w, const struct step *st)
{
	uint8_t pkt[2048];

	if (st->reply == R_UNREACHABLE) {
		testnet_unreachable(latest(w, (size_t)st->n, st->name));
		return;
	}
	testnet_deliver(latest(w, (size_t)st->n, st->name), pkt,
	    response(latest(w, (size_t)st->n, st->name), st->reply, pkt));
}

static void
ended(struct world *w, const struct step *st)
{
	struct msg_query asked;
	struct done *d;

	ck_assert_msg(w->checked_dones < w->n_dones, "no fetch ended");
	d = &w->dones[w->checked_dones++];
	ck_assert_int_eq(d->outcome, st->outcome);
	ck_assert_int_eq(d->unsent, st->unsent);
	ck_assert_uint_eq(d->waiters, (size_t)st->n);
	if (st->outcome != FETCH_ANSWER)
		return;
	client_query(st->name, &asked);
	msg_name_fold(asked.q.qname, asked.q.qname_len);
	ck_assert_uint_eq(d->qname_len, asked.q.qname_len);
	ck_assert_mem_eq(d->qname, asked.q.qname, d->qname_len);
	ck_assert(d->answered);
}

static void
socket_is(struct world *w, const struct step *st)
{
	const struct transport_conn *c;

	ck_assert_uint_lt((size_t)st->n, w->net.n_sent);
	c = &w->net.sent[st->n];
	ck_assert_int_eq(c->open ? S_OPEN : S_CLOSED, st->sock);
}

static void
upstream_is(struct world *w, const struct step *st)
{
	const struct upstream *u = zone_at(w->zones, 0)->upstreams[st->n];

	ck_assert_int_eq(u->no_edns, st->no_edns);
	ck_assert_int_eq(u->down, st->down);
	ck_assert_uint_eq(u->fails, st->fails);
}

static void
stats(struct world *w, const struct step *st)
{
	struct fetch_stats fs;

	fetch_stats(st->worker == 1 ? w->ctx2 : w->ctx, &fs);
	ck_assert_uint_eq(fs.started, st->st.started);
	ck_assert_uint_eq(fs.coalesced, st->st.coalesced);
	ck_assert_uint_eq(fs.across, st->st.across);
	ck_assert_uint_eq(fs.over_budget, st->st.over_budget);
	ck_assert_uint_eq(fs.waiters_refused, st->st.waiters_refused);
	ck_assert_uint_eq(fs.mismatched, st->st.mismatched);
	ck_assert_uint_eq(fs.malformed, st->st.malformed);
	ck_assert_uint_eq(fs.oversized, st->st.oversized);
	ck_assert_uint_eq(fs.long_chain, st->st.long_chain);
	ck_assert_uint_eq(fs.local_errors, st->st.local_errors);
	ck_assert_uint_eq(fs.inflight, st->st.inflight);
}

START_TEST(scenario)
{
	const struct scenario *sc = &scenarios[_i];
	const struct step *st;
	struct world w;

	world_new(&w, sc);
	for (st = sc->steps; st->op != OP_END; st++) {
		switch (st->op) {
		case OP_ASK:
		case OP_REFRESH:
			ask(&w, st);
			break;
		case OP_SENT:
			sent(&w, st);
			break;
		case OP_REPLY:
			reply(&w, st);
			break;
		case OP_PASS:
			testnet_pass(&w.net, (uint64_t)st->n);
			break;
		case OP_DONE:
			ended(&w, st);
			break;
		case OP_QUIET:
			ck_assert_uint_eq(w.checked_sent, w.net.n_sent);
			ck_assert_uint_eq(w.checked_dones, w.n_dones);
			break;
		case OP_STATS:
			stats(&w, st);
			break;
		case OP_OPEN_FAILS:
			w.net.open_errno = st->n;
			break;
		case OP_UPSTREAM:
			upstream_is(&w, st);
			break;
		case OP_SOCKET:
			socket_is(&w, st);
			break;
		case OP_BACK:
			upstream_answered(zone_at(w.zones, 0)->upstreams[st->n],
			    10, w.net.now);
			fetch_resume_back(w.ctx, w.net.now);
			break;
		case OP_END:
			break;
		}
	}
	/* Everything that happened was in the script. */
	ck_assert_uint_eq(w.checked_sent, w.net.n_sent);
	ck_assert_uint_eq(w.checked_dones, w.n_dones);
	world_free(&w);
}
END_TEST

/* One test case per scenario, named by what it shows. */
static Suite *
fetch_suite(void)
{
	Suite *s = suite_create("fetch");
	TCase *tc;
	int i;

	for (i = 0; i < (int)(sizeof(scenarios) / sizeof(scenarios[0]));
	    i++) {
		tc = tcase_create(scenarios[i].what);
		tcase_add_loop_test(tc, scenario, i, i + 1);
		suite_add_tcase(s, tc);
	}
	return s;
}

int
main(void)
{
	return check_main_run(fetch_suite());
}
