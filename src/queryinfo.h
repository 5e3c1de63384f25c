/*
 * queryinfo.h: what happened to one client query, as every output that
 * reports queries sees it (dnstap's CLIENT_RESPONSE annotation,
 * `dnsdamperctl monitor`, log-queries), and its one formatting: a JSON
 * object on one line.
 */
#ifndef DNSDAMPER_QUERYINFO_H
#define DNSDAMPER_QUERYINFO_H

#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "msg.h"

/* Where an answer came from. */
enum queryinfo_source {
	QUERYINFO_CACHE,	/* a fresh entry */
	QUERYINFO_STALE,	/* an expired entry, RFC 8767 */
	QUERYINFO_LKG,		/* a positive entry served over the
				 * upstream's held negative answer
				 * (lkg.h) */
	QUERYINFO_UPSTREAM,	/* a resolution that just ended */
	QUERYINFO_LOCAL,	/* local data, or the minimal ANY answer */
	QUERYINFO_REFUSED,	/* REFUSED made here: allow, a policy */
	QUERYINFO_ERROR,	/* another rcode made here: FORMERR,
				 * SERVFAIL, NOTIMP, BADVERS */
	QUERYINFO_SOURCES
};

/* One answered client query; everything borrowed. */
struct queryinfo {
	const struct addr	*client;
	int			 tcp;		/* over TCP, else UDP */
	const struct msg_query	*q;		/* NULL: not parsed */
	const uint8_t		*answer;	/* wire format, as sent */
	size_t			 answer_len;
	enum queryinfo_source	 source;
	const char		*upstream;	/* QUERYINFO_UPSTREAM: the
						 * upstream's name, or NULL
						 * (another worker's) */
	uint64_t		 arrived;	/* ms, monotonic */
	uint64_t		 now;		/* ms, monotonic: answered */
};

/* Longest line queryinfo_json writes, with its NUL; longer answers end
 * their record list with "..." as the last element. */
#define QUERYINFO_JSON_MAX	4096

/* queryinfo_source_name: "cache", "stale", "last-known-good",
 * "upstream", "local", "refused" or "error". */
const char *queryinfo_source_name(enum queryinfo_source s);

/*
 * queryinfo_json: qi as one JSON object without a newline into buf (cap
 * octets, at least 512; QUERYINFO_JSON_MAX holds any answer's first
 * records), e.g.
 * {"time":"2026-12-07T23:01:02.345Z","client":"127.0.0.1","port":41234,
 *  "protocol":"udp","name":"www.example.","type":"A","class":"IN",
 *  "rcode":"NOERROR","answer":["www.example. 300 IN A 192.0.2.1"],
 *  "source":"upstream","upstream":"127.0.0.1:5300","latency_ms":3}
 * wall_ms is the wall clock (Unix ms) at qi->now. Returns the length.
 */
size_t	queryinfo_json(const struct queryinfo *qi, int64_t wall_ms,
	    char *buf, size_t cap);

#endif
