/*
 * parselocal.h: the directives of local answers in dnsdamper.conf:
 * hosts-file, local-zone, local-data. Handlers of struct directive: each
 * reads statement st into struct config base (run unused) and reports
 * its errors through st->lex at st's line; base keeps what was read
 * before an error.
 */
#ifndef DNSDAMPER_PARSELOCAL_H
#define DNSDAMPER_PARSELOCAL_H

#include "directive.h"

/*
 * parselocal_hosts_file: `hosts-file PATH` (absolute; the first one given
 * replaces the default file) or `hosts-file none`, alone. Errors: missing
 * path, unexpected argument, none combined with files, not an absolute
 * path, duplicate file, out of memory.
 */
void	parselocal_hosts_file(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parselocal_zone: `local-zone ZONE TYPE`, TYPE one of d->names. Errors:
 * missing zone or type, unexpected argument, not a domain name, not a
 * type, duplicate zone (with where it was first given), nodefault for a
 * zone not served by default, out of memory.
 */
void	parselocal_zone(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parselocal_data: `local-data "NAME [TTL] [CLASS] TYPE RDATA"`, one
 * record in presentation format (RFC 1035 §5.1; absolute names, 3600 s
 * when no TTL is given), kept as text with its owner and type. Errors:
 * missing record, unexpected argument, not a resource record (with ldns's
 * reason), class other than IN, a meta type (RFC 6895 §3.1), out of
 * memory.
 */
void	parselocal_data(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

#endif
