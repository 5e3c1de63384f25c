/*
 * srvprint.h: dnsdamper-srv's output: the candidates in try order, the
 * connection attempts and the one selected, as text lines or as one JSON
 * object (the formats are those of dnsdamper-srv(1)).
 */
#ifndef DNSDAMPER_SRVPRINT_H
#define DNSDAMPER_SRVPRINT_H

#include <stddef.h>
#include <stdio.h>

#include "dnsdamper/srvresolve.h"
#include "srvconnect.h"

/* Everything one run found, borrowed. */
struct srvprint_report {
	const char				*status; /* "ok", ... */
	const struct srvresolve_result		*res;
	int					 naptr;	/* an S-NAPTR
							   lookup */
	const struct srvconnect_attempt		*attempts;
	size_t					 nattempts;
	const struct srvconnect_attempt		*selected; /* or NULL */
};

/*
 * srvprint_text: one line per candidate, "PRIORITY WEIGHT PORT TARGET
 * ADDRESS..." ("PROTOCOL " first for an S-NAPTR lookup, "-" for the
 * priority and weight of an "A" record), then "attempt TARGET ADDRESS
 * PORT RESULT" per attempt and "selected TARGET ADDRESS PORT".
 */
void	srvprint_text(FILE *fp, const struct srvprint_report *r);

/*
 * srvprint_json: one JSON object on one line: status, candidates,
 * attempts, selected (null if none).
 */
void	srvprint_json(FILE *fp, const struct srvprint_report *r);

#endif
