/*
 * localbuild.h: the table of local zones (localzone.h) built from a
 * configuration: its local-zone directives, the default zones they and
 * the forward zones leave (RFC 6761, RFC 6303, RFC 7793, RFC 8375,
 * RFC 7686), local-data, the hosts files, the localhost names' records
 * and the SOAs and NS that the zones make up (RFC 6303 §3).
 */
#ifndef DNSDAMPER_LOCALBUILD_H
#define DNSDAMPER_LOCALBUILD_H

#include "config.h"
#include "localzone.h"

/*
 * localbuild_table: the table of conf (borrowed): its local-zone and
 * local-data, the default zones as it leaves them (nodefault, forwards),
 * and its hosts files, read now; a hosts file line that is broken, or a
 * file that cannot be read, is logged (log_warnx, `file:line: what; line
 * skipped`) and left out, never fatal. Returns the table with one
 * reference, or NULL with errno set: ENOMEM, or EINVAL if a record of
 * local-data does not parse (parse_load already refused such a config).
 */
struct localzone_table *localbuild_table(const struct config *conf);

#endif
