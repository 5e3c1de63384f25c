/*
 * dnsdamper/srvserver.h: which resolver libdnsdamper-srv asks: an address
 * given as text, or the host's own, the first nameserver of resolv.conf.
 */
#ifndef DNSDAMPER_SRVSERVER_H
#define DNSDAMPER_SRVSERVER_H

#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The host's resolver configuration, resolv.conf(5). */
#define SRVSERVER_RESOLV_CONF	"/etc/resolv.conf"
/* The resolver asked when resolv.conf names none, as the libc does. */
#define SRVSERVER_FALLBACK	"127.0.0.1"
#define SRVSERVER_PORT		53

/*
 * srvserver_parse: a resolver address written "ADDR", "ADDR:PORT" (IPv4),
 * "[ADDR]:PORT" or "ADDR" (IPv6, with a %scope if it needs one), port
 * SRVSERVER_PORT when not given, into *ss and *len. Only numeric
 * addresses: a host name would need the DNS this is about to ask.
 * Returns 0, or -1 with errno EINVAL when s is not such an address or the
 * port is not in 1..65535.
 */
int	srvserver_parse(const char *s, struct sockaddr_storage *ss,
	    socklen_t *len);

/*
 * srvserver_default: the address of the first `nameserver` line of the
 * resolv.conf(5) file at path (NULL: SRVSERVER_RESOLV_CONF) that
 * srvserver_parse accepts, port SRVSERVER_PORT; SRVSERVER_FALLBACK when
 * the file cannot be read or has none. Always returns 0.
 */
int	srvserver_default(const char *path, struct sockaddr_storage *ss,
	    socklen_t *len);

#ifdef __cplusplus
}
#endif

#endif
