/* check_srvserver.c: the resolver's address, from text and resolv.conf. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "testutil.h"
#include "dnsdamper/srvserver.h"

/* "ADDR PORT" of ss, into buf. */
static const char *
text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6)
		snprintf(buf, len, "%s %u", inet_ntop(AF_INET6,
		    &sin6->sin6_addr, a, sizeof(a)), ntohs(sin6->sin6_port));
	else
		snprintf(buf, len, "%s %u", inet_ntop(AF_INET, &sin->sin_addr,
		    a, sizeof(a)), ntohs(sin->sin_port));
	return buf;
}

START_TEST(parse)
{
	static const struct {
		const char	*in;
		const char	*out;
	} good[] = {
		{ "127.0.0.1", "127.0.0.1 53" },
		{ "127.0.0.1:5300", "127.0.0.1 5300" },
		{ "::1", "::1 53" },
		{ "[::1]", "::1 53" },
		{ "[::1]:5300", "::1 5300" },
		{ "[fe80::1]:53", "fe80::1 53" },
	};
	static const char *const bad[] = {
		"localhost",		/* a name would need DNS */
		"localhost:53", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:", "127.0.0.1:x", ":53", "", "[::1", "[::1]x",
		"[::1]:", "127.0.0.1:53:53", "256.0.0.1",
	};
	struct sockaddr_storage ss;
	socklen_t len;
	char buf[80];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(srvserver_parse(good[i].in, &ss, &len) == 0,
		    "%s refused", good[i].in);
		ck_assert_str_eq(text(&ss, buf, sizeof(buf)), good[i].out);
		ck_assert_uint_eq(len, ss.ss_family == AF_INET6 ?
		    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		ck_assert_msg(srvserver_parse(bad[i], &ss, &len) == -1,
		    "%s accepted", bad[i]);
		ck_assert_int_eq(errno, EINVAL);
	}
	/* a scope, by interface name */
	ck_assert_int_eq(srvserver_parse("fe80::1%lo", &ss, &len), 0);
	ck_assert_uint_eq(((struct sockaddr_in6 *)&ss)->sin6_scope_id,
	    if_nametoindex("lo"));
}
END_TEST

START_TEST(resolv_conf)
{
	/* resolv.conf(5): the first nameserver line that holds an address
	 * (a bare one: "ADDR:PORT" is not the file's syntax); none, or no
	 * file, means 127.0.0.1, as the libc resolver has it */
	char dir[TESTUTIL_PATH_MAX], path[TESTUTIL_PATH_MAX + 16], buf[80];
	struct sockaddr_storage ss;
	socklen_t len;

	testutil_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/resolv.conf", dir);
	testutil_write(dir, "resolv.conf",
	    "# comment\n"
	    "search example\n"
	    "nameserver\n"
	    "nameserver not-an-address\n"
	    "nameserver 127.0.0.2:5300\n"
	    "  nameserver\t127.0.0.53  # the first good one\n"
	    "nameserver ::1\n");
	ck_assert_int_eq(srvserver_default(path, &ss, &len), 0);
	ck_assert_str_eq(text(&ss, buf, sizeof(buf)), "127.0.0.53 53");
	testutil_write(dir, "resolv.conf", "options ndots:2\nnameserver ::1\n");
	ck_assert_int_eq(srvserver_default(path, &ss, &len), 0);
	ck_assert_str_eq(text(&ss, buf, sizeof(buf)), "::1 53");
	testutil_write(dir, "resolv.conf", "search example\n");
	ck_assert_int_eq(srvserver_default(path, &ss, &len), 0);
	ck_assert_str_eq(text(&ss, buf, sizeof(buf)), "127.0.0.1 53");
	testutil_rmtree(dir);
	ck_assert_int_eq(srvserver_default(path, &ss, &len), 0);
	ck_assert_str_eq(text(&ss, buf, sizeof(buf)), "127.0.0.1 53");
}
END_TEST

static Suite *
srvserver_suite(void)
{
	Suite *s = suite_create("srvserver");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse);
	tcase_add_test(tc, resolv_conf);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(srvserver_suite());
}
