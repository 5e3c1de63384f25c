/*
 * parse.h: the dnsdamper.conf grammar (statements, blocks, includes, the
 * checks across directives) and the table of its directives.
 */
#ifndef DNSDAMPER_PARSE_H
#define DNSDAMPER_PARSE_H

#include <stdio.h>

#include "config.h"
#include "directive.h"

/* The top-level directives, in canonical order; ends with a NULL name. */
extern const struct directive parse_top[];

/* The directives of a forward block; ends with a NULL name. */
extern const struct directive parse_forward_block[];

/*
 * parse_load: read a configuration into *conf: the defaults, overridden by
 * the file at path and its includes (path NULL: defaults only), with what
 * they imply (config_implicit), checked across directives (at_most,
 * config_validate) and, when all that is without error, every forward's
 * upstreams put through resolvconf_apply. Every error is written to errs
 * (borrowed) as one line `file:line: message` (`file: message` for what
 * no line says; "(defaults)" for the file when path is NULL): all errors of
 * the run, not only the first. Returns 0 with *conf filled (the caller
 * frees it with config_free), or -1 with *conf empty.
 */
int	parse_load(const char *path, struct config *conf, FILE *errs);

#endif
