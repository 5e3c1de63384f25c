/* testaddr.h: client and listen addresses for unit tests, from text. */
#ifndef DNSDAMPER_TESTADDR_H
#define DNSDAMPER_TESTADDR_H

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "addr.h"

/* testaddr_parse: str as the config reads it (addr_parse), port if none. */
static inline struct addr
testaddr_parse(const char *str, uint16_t port)
{
	struct addr a;
	const char *errstr;

	ck_assert_msg(addr_parse(str, port, &a, &errstr) == 0, "%s: %s", str,
	    errstr);
	return a;
}

/*
 * testaddr_v6: an AF_INET6 address as the kernel hands it over, with an
 * IPv4-mapped one (::ffff:a.b.c.d) kept as it is, which addr_parse would
 * not do.
 */
static inline struct addr
testaddr_v6(const char *str, uint16_t port)
{
	struct sockaddr_in6 six;
	struct addr a;

	memset(&six, 0, sizeof(six));
	six.sin6_family = AF_INET6;
	six.sin6_port = htons(port);
	ck_assert_int_eq(inet_pton(AF_INET6, str, &six.sin6_addr), 1);
	addr_from_sockaddr(&a, (struct sockaddr *)&six, sizeof(six));
	return a;
}

#endif
