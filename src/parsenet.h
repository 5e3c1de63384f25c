/*
 * parsenet.h: the directives of addresses and networks in dnsdamper.conf:
 * listen, allow, exempt-clients, and a forward block's upstream. Handlers
 * of struct directive: each reads statement st into base (run unused) and
 * reports its errors through st->lex at st's line; base keeps what was
 * read before an error.
 */
#ifndef DNSDAMPER_PARSENET_H
#define DNSDAMPER_PARSENET_H

#include "directive.h"

/*
 * parsenet_listen: `listen ADDRESS...` (port 53 when none is given) into
 * struct config base's listen, and where the first address beyond
 * loopback was given into its listen_nonlocal. Errors: missing address,
 * not an address, duplicate address, out of memory.
 */
void	parsenet_listen(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parsenet_nets: `allow NETWORK...`, `exempt-clients NETWORK...|none`:
 * networks into the struct config_nets at d->offset in base. The first
 * such statement replaces the built-in list; "none", alone, leaves it
 * empty when d has DIRECTIVE_NONE. Errors: missing network, not a
 * network (with the network meant when bits are set past the prefix
 * length), none
 * combined with networks, out of memory.
 */
void	parsenet_nets(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parsenet_upstream: `upstream ADDRESS...` or `upstream resolv.conf` into
 * struct config_forward base; an ADDRESS written tls://ADDRESS[:PORT]
 * [#NAME] (port 853) is also recorded in its tls[] (RFC 7858). Errors:
 * missing address, not an address, not a domain name after #, the root
 * after #, duplicate address, duplicate resolv.conf, resolv.conf combined
 * with addresses, out of memory.
 */
void	parsenet_upstream(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parsenet_tls_ca: `tls-ca FILE` into struct config_forward base's tls_ca
 * (the file is read by the checks of the block). Errors: missing or more
 * than one file, empty name, out of memory.
 */
void	parsenet_tls_ca(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

/*
 * parsenet_tls_pin: `tls-pin sha256/BASE64...` (RFC 7469 §2.4) appended
 * to struct config_forward base's tls_pins. Errors: missing pin, not
 * such a pin, duplicate pin, out of memory.
 */
void	parsenet_tls_pin(struct parse_run *run, const struct directive *d,
	    void *base, struct directive_stmt *st);

#endif
