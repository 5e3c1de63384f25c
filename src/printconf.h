/* printconf.h: a configuration printed back in canonical form (-t -v). */
#ifndef DNSDAMPER_PRINTCONF_H
#define DNSDAMPER_PRINTCONF_H

#include <stdio.h>

#include "config.h"

/*
 * printconf_write: write conf (borrowed) to stream as a dnsdamper.conf: the
 * scalars in parse_top's order, every value explicit in its largest exact
 * unit, then allow and exempt-clients ("none" when empty), the listen
 * lines, the hosts files ("none" when there are none), local-zone and
 * local-data lines, and one block per forward (the nameservers taken from
 * resolv.conf only as a comment), so that reading the output back yields
 * an equal config. Write errors are left in stream's error
 * indicator.
 */
void	printconf_write(const struct config *conf, FILE *stream);

#endif
