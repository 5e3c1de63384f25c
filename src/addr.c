/* addr.c: numeric socket address parsing and formatting. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "addr.h"
#include "fnv.h"
#include "wire.h"

/* Split "host", "host:port", "[v6]" or "[v6]:port" into host and port. */
static int
addr_split(const char *str, char *host, size_t hostlen, const char **port,
    const char **errstr)
{
	const char *end, *colon;
	size_t n;

	*port = NULL;
	if (str[0] == '[') {
		if ((end = strchr(str, ']')) == NULL) {
			*errstr = "missing ']'";
			return -1;
		}
		if (end[1] == ':')
			*port = end + 2;
		else if (end[1] != '\0') {
			*errstr = "unexpected text after ']'";
			return -1;
		}
		str++;
		n = (size_t)(end - str);
	} else {
		colon = strchr(str, ':');
		/* One colon: v4 with port. More: a bare IPv6 address. */
		if (colon != NULL && strchr(colon + 1, ':') == NULL) {
			*port = colon + 1;
			n = (size_t)(colon - str);
		} else
			n = strlen(str);
	}
	if (n == 0 || n >= hostlen) {
		*errstr = n == 0 ? "empty address" : "address too long";
		return -1;
	}
	memcpy(host, str, n);
	host[n] = '\0';
	return 0;
}

static int
addr_parse_port(const char *str, uint16_t *port, const char **errstr)
{
	char *end;
	unsigned long v;

	if (str[0] < '0' || str[0] > '9') {
		*errstr = "port is not a number";
		return -1;
	}
	v = strtoul(str, &end, 10);
	if (*end != '\0' || v == 0 || v > 65535) {
		*errstr = "port must be a number from 1 to 65535";
		return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

/* ::ffff:a.b.c.d is a.b.c.d: one address, one spelling (loop guard). */
static void
addr_unmap(struct addr *a)
{
	struct sockaddr_in6 six;
	struct sockaddr_in *four;

	if (a->ss.ss_family != AF_INET6)
		return;
	memcpy(&six, &a->ss, sizeof(six));
	if (!IN6_IS_ADDR_V4MAPPED(&six.sin6_addr))
		return;
	memset(&a->ss, 0, sizeof(a->ss));
	four = (struct sockaddr_in *)&a->ss;
	four->sin_family = AF_INET;
	memcpy(&four->sin_addr, &six.sin6_addr.s6_addr[12], 4);
	a->len = sizeof(*four);
}

int
addr_parse(const char *str, uint16_t default_port, struct addr *out,
    const char **errstr)
{
	struct addrinfo hints, *res;
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	const char *portstr;
	uint16_t port = default_port;

	if (addr_split(str, host, sizeof(host), &portstr, errstr) == -1)
		return -1;
	if (portstr != NULL && addr_parse_port(portstr, &port, errstr) == -1)
		return -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICHOST;
	/* AI_NUMERICHOST: never a name lookup, so never blocks. */
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) {
		*errstr = "not a numeric IPv4 or IPv6 address";
		return -1;
	}
	memset(out, 0, sizeof(*out));
	memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
	out->len = res->ai_addrlen;
	freeaddrinfo(res);
	addr_unmap(out);
	if (out->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&out->ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&out->ss)->sin6_port = htons(port);
	return 0;
}

char *
addr_format_host(const struct addr *a, char *buf, size_t len)
{
	if (getnameinfo((const struct sockaddr *)&a->ss, a->len, buf,
	    (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(buf, len, "?");
	return buf;
}

char *
addr_format(const struct addr *a, char *buf, size_t len)
{
	char host[ADDR_STRLEN];

	addr_format_host(a, host, sizeof(host));
	if (addr_family(a) == AF_INET6)
		snprintf(buf, len, "[%s]:%u", host, addr_port(a));
	else
		snprintf(buf, len, "%s:%u", host, addr_port(a));
	return buf;
}

int
addr_equal(const struct addr *a, const struct addr *b)
{
	const struct sockaddr_in *a4, *b4;
	const struct sockaddr_in6 *a6, *b6;

	if (a->ss.ss_family != b->ss.ss_family)
		return 0;
	if (a->ss.ss_family == AF_INET) {
		a4 = (const struct sockaddr_in *)&a->ss;
		b4 = (const struct sockaddr_in *)&b->ss;
		return a4->sin_port == b4->sin_port &&
		    a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	}
	if (a->ss.ss_family == AF_INET6) {
		a6 = (const struct sockaddr_in6 *)&a->ss;
		b6 = (const struct sockaddr_in6 *)&b->ss;
		return a6->sin6_port == b6->sin6_port &&
		    a6->sin6_scope_id == b6->sin6_scope_id &&
		    memcmp(&a6->sin6_addr, &b6->sin6_addr,
		    sizeof(a6->sin6_addr)) == 0;
	}
	return 0;
}

void
addr_from_sockaddr(struct addr *out, const struct sockaddr *sa, socklen_t len)
{
	memset(out, 0, sizeof(*out));
	if (len > sizeof(out->ss))
		len = sizeof(out->ss);
	memcpy(&out->ss, sa, len);
	out->len = len;
}

uint16_t
addr_port(const struct addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
	if (a->ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	return 0;
}

int
addr_family(const struct addr *a)
{
	return a->len == 0 ? AF_UNSPEC : a->ss.ss_family;
}

int
addr_is_wildcard(const struct addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return ((const struct sockaddr_in *)&a->ss)->sin_addr.s_addr ==
		    htonl(INADDR_ANY);
	if (a->ss.ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
		    &((const struct sockaddr_in6 *)&a->ss)->sin6_addr);
	return 0;
}

int
addr_is_loopback(const struct addr *a)
{
	static const uint8_t v6_loopback[16] = { [15] = 1 };
	uint8_t host[16];

	switch (addr_host(a, host)) {
	case AF_INET:
		return host[0] == IN_LOOPBACKNET;
	case AF_INET6:
		return memcmp(host, v6_loopback, sizeof(host)) == 0;
	default:
		return 0;
	}
}

uint64_t
addr_hash(const struct addr *a)
{
	const unsigned char *p;
	uint8_t port[2];
	size_t n;

	wire_wr16(port, addr_port(a));
	if (a->ss.ss_family == AF_INET) {
		p = (const unsigned char *)
		    &((const struct sockaddr_in *)&a->ss)->sin_addr;
		n = 4;
	} else {
		p = (const unsigned char *)
		    &((const struct sockaddr_in6 *)&a->ss)->sin6_addr;
		n = 16;
	}
	return fnv1a64(fnv1a64(FNV1A64_INIT, p, n), port, sizeof(port));
}
