/* addr.h: socket addresses, the only place they become strings or back. */
#ifndef DNSDAMPER_ADDR_H
#define DNSDAMPER_ADDR_H

#include <sys/socket.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* An IPv4 or IPv6 address with port; len is 0 when unset. */
struct addr {
	struct sockaddr_storage	ss;
	socklen_t		len;
};

/* Longest string addr_format writes, with its NUL: "[v6%scope]:65535". */
#define ADDR_STRLEN	(INET6_ADDRSTRLEN + 24)

/*
 * addr_parse: parse a numeric address in presentation format, optionally
 * with a port: "192.0.2.1", "192.0.2.1:5353", "2001:db8::1", "[2001:db8::1]",
 * "[2001:db8::1]:5353", "fe80::1%eth0". A missing port becomes default_port
 * (host byte order); an IPv4-mapped IPv6 address becomes the IPv4 one.
 * Never resolves names.
 * Returns 0 and fills *out, or -1 with *errstr (static) saying why.
 */
int	addr_parse(const char *str, uint16_t default_port, struct addr *out,
	    const char **errstr);

/*
 * addr_format: write a into buf (size len, ADDR_STRLEN suffices) as
 * "192.0.2.1:53" or "[2001:db8::1]:53". Returns buf.
 */
char	*addr_format(const struct addr *a, char *buf, size_t len);

/* addr_format_host: like addr_format, without the port or brackets. */
char	*addr_format_host(const struct addr *a, char *buf, size_t len);

/* addr_equal: 1 if family, address, port (and v6 scope) are equal, else 0. */
int	addr_equal(const struct addr *a, const struct addr *b);

/* addr_from_sockaddr: copy a kernel-supplied sockaddr of length len. */
void	addr_from_sockaddr(struct addr *out, const struct sockaddr *sa,
	    socklen_t len);

/* addr_port: the port in host byte order. */
uint16_t addr_port(const struct addr *a);

/* addr_family: AF_INET or AF_INET6 (AF_UNSPEC when unset). */
int	addr_family(const struct addr *a);

/* addr_is_wildcard: 1 for 0.0.0.0 and ::, else 0. */
int	addr_is_wildcard(const struct addr *a);

/*
 * addr_host: the host part of a (no port) as what it really is: an IPv4
 * address, however it arrived (AF_INET, or IPv4-mapped ::ffff:a.b.c.d on
 * a dual-stack IPv6 socket, RFC 4291 §2.5.5.2), as AF_INET with its 4
 * octets in out[0..3]; any other IPv6 address as AF_INET6 with its 16
 * octets. Returns that family, or AF_UNSPEC (out untouched) when a is
 * neither IPv4 nor IPv6. Inline: every client query asks it.
 */
static inline int
addr_host(const struct addr *a, uint8_t out[16])
{
	const struct sockaddr_in6 *six;

	if (a->len > 0 && a->ss.ss_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)&a->ss)->sin_addr, 4);
		return AF_INET;
	}
	if (a->len == 0 || a->ss.ss_family != AF_INET6)
		return AF_UNSPEC;
	six = (const struct sockaddr_in6 *)&a->ss;
	if (IN6_IS_ADDR_V4MAPPED(&six->sin6_addr)) {
		memcpy(out, &six->sin6_addr.s6_addr[12], 4);
		return AF_INET;
	}
	memcpy(out, &six->sin6_addr, 16);
	return AF_INET6;
}

/*
 * addr_is_loopback: 1 for 127.0.0.0/8 (mapped too) and ::1 (RFC 1122
 * §3.2.1.3, RFC 4291 §2.5.3), else 0.
 */
int	addr_is_loopback(const struct addr *a);

/*
 * addr_hash: a hash of family, address and port, for spreading and for
 * rendezvous hashing; stable across runs (no secret), so never use it for
 * data a client controls.
 */
uint64_t addr_hash(const struct addr *a);

#endif
