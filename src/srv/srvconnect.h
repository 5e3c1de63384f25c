/*
 * srvconnect.h: dnsdamper-srv's --connect: TCP connection attempts to the
 * candidates in try order, each bounded in time, until one connects.
 */
#ifndef DNSDAMPER_SRVCONNECT_H
#define DNSDAMPER_SRVCONNECT_H

#include <sys/socket.h>

#include <stddef.h>

#include "dnsdamper/srvresolve.h"

enum srvconnect_result {
	SRVCONNECT_CONNECTED,
	SRVCONNECT_REFUSED,	/* ECONNREFUSED: nobody listens there */
	SRVCONNECT_TIMEOUT,	/* no answer within the timeout */
	SRVCONNECT_ERROR	/* anything else (no route, ...) */
};

/* One attempt: which candidate, which of its addresses, and how it went. */
struct srvconnect_attempt {
	const struct srvresolve_candidate	*cand;	/* borrowed */
	const struct sockaddr_storage		*addr;	/* borrowed, port set */
	enum srvconnect_result			 result;
	int					 err;	/* errno of an error */
};

/*
 * srvconnect_try: one non-blocking TCP connect(2) to addr, waited for with
 * poll(2) for at most timeout_ms; a connection made is closed at once,
 * nothing sent. *err is set to the errno behind SRVCONNECT_ERROR (0
 * otherwise).
 */
enum srvconnect_result srvconnect_try(const struct sockaddr_storage *addr,
	    unsigned timeout_ms, int *err);

/*
 * srvconnect_run: srvconnect_try every address of every candidate of res
 * in order (its try order; a candidate's addresses in their order), and
 * stop at the first that connects. Writes the attempts made to out (room
 * for one per address of res) and returns how many; the last one is the
 * connection if any connected.
 */
size_t	srvconnect_run(const struct srvresolve_result *res,
	    unsigned timeout_ms, struct srvconnect_attempt *out);

/* srvconnect_name: the word for a result: "connected", "refused", ... */
const char *srvconnect_name(enum srvconnect_result r);

#endif
