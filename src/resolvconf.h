/*
 * resolvconf.h: the nameservers of resolv.conf(5) as upstreams, minus our
 * own listen addresses: the loop guard of every forward.
 */
#ifndef DNSDAMPER_RESOLVCONF_H
#define DNSDAMPER_RESOLVCONF_H

#include <stddef.h>

#include "addr.h"
#include "config.h"

/*
 * resolvconf_read: the nameservers of the resolv.conf(5) file at path, in
 * file order, each with port 53, minus those that would be a query to
 * ourselves (the loop guard): one equal to an address of self (our listen
 * addresses, n_self of them, borrowed), and, when self has a wildcard
 * (0.0.0.0 or ::) at port 53, any loopback address or address of a local
 * interface of that family. Each one skipped, and each one listed twice,
 * is logged with log_info.
 * Only `nameserver ADDR` lines count (IPv6 with scope, "fe80::1%eth0", too);
 * other lines, comments (# or ;) and addresses that do not parse (logged
 * with log_warnx) are ignored. A file without any nameserver line means
 * 127.0.0.1, as it does to the libc resolver.
 * Returns 0 and sets *out (an array owned by the caller, free(3); NULL when
 * *n_out is 0, i.e. when every nameserver is our own), or -1 with errno set
 * when the file cannot be opened (as lex_fopen) or read, or ENOMEM, with
 * *out NULL and *n_out 0.
 */
int	resolvconf_read(const char *path, const struct addr *self,
	    size_t n_self, struct addr **out, size_t *n_out);

/*
 * resolvconf_self: why a query to ns would reach one of our listen
 * addresses (self, n_self of them, borrowed) by the rules of
 * resolvconf_read, with *mine the listen address it reaches; NULL if it
 * would not. The reason is a static string to be followed by *mine:
 * "it is our listen address".
 */
const char *resolvconf_self(const struct addr *ns, const struct addr *self,
	    size_t n_self, const struct addr **mine);

/*
 * resolvconf_apply: the loop guard over every forward of conf, in order,
 * by the rules of resolvconf_read against conf's listen addresses: a
 * forward with `upstream resolv.conf` gets the nameservers of
 * conf->resolv_conf appended to its upstreams; an explicit upstream that
 * would reach one of our listen addresses is an error. Errors go through r
 * at the forward's where: `forward "ZONE": cannot read FILE: why`,
 * `forward "ZONE": no usable nameserver in FILE (all are our own listen
 * addresses)`, `forward "ZONE": upstream ADDR would loop: why OURS`, out of
 * memory. Reading goes on after an error.
 */
void	resolvconf_apply(struct config *conf, const struct config_report *r);

#endif
