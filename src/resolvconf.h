/* resolvconf.h: nameservers from resolv.conf(5), minus our own addresses. */
#ifndef DNSDAMPER_RESOLVCONF_H
#define DNSDAMPER_RESOLVCONF_H

#include <stddef.h>

#include "addr.h"

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
 * when the file cannot be opened or read, or ENOMEM, with *out NULL and
 * *n_out 0.
 */
int	resolvconf_read(const char *path, const struct addr *self,
	    size_t n_self, struct addr **out, size_t *n_out);

/*
 * resolvconf_self: the loop guard for one address: why a query to ns would
 * reach one of our listen addresses self[0..n_self), by the rules of
 * resolvconf_read, with *mine set to that listen address; or NULL if it
 * would not. The reason is a static phrase to follow with *mine.
 */
const char *resolvconf_self(const struct addr *ns, const struct addr *self,
	    size_t n_self, const struct addr **mine);

#endif
