/*
 * parselog.h: the directives of what is told of queries in
 * dnsdamper.conf that have a syntax of their own: dnstap-messages and
 * log-queries. Handlers of struct directive: each reads statement st
 * into struct config base (run unused) and reports its errors through
 * st->lex at st's line; base keeps what it had after an error.
 */
#ifndef DNSDAMPER_PARSELOG_H
#define DNSDAMPER_PARSELOG_H

#include <stdio.h>

#include "directive.h"

/*
 * parselog_dnstap_messages: `dnstap-messages TYPE...`, one or more of
 * d->names (config_dnstap_message_names), into conf->dnstap_messages,
 * replacing what it was. Errors: missing type, not a type (`NAME: "x"
 * is not a, b or c`), a type given twice.
 */
void	parselog_dnstap_messages(struct parse_run *run,
	    const struct directive *d, void *base, struct directive_stmt *st);

/*
 * parselog_log_queries: `log-queries yes | no | N/M` (N of every M
 * queries, 1 <= N <= M <= 1000000) into conf->log_queries_num and _den
 * (0/0 for no, 1/1 for yes). Errors: missing or unexpected argument, not
 * yes, no or a fraction N/M in range.
 */
void	parselog_log_queries(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parselog_print: the two directives of conf as parse_load reads them,
 * one line each, to stream: "dnstap-messages client-response
 * forwarder-response", "log-queries 1/100".
 */
void	parselog_print(const struct config *conf, FILE *stream);

#endif
