/* check_hosts.c: the hosts file reader (hosts(5)) and its change stamps. */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "hosts.h"
#include "testutil.h"

static struct testutil_workdir test_dir;

static void
setup(void)
{
	testutil_workdir_enter(&test_dir);
}

static void
teardown(void)
{
	testutil_workdir_leave(&test_dir);
}

/* What a read produced: "LINE ADDRESS NAME..." and the warnings, each on
 * its own line, in the order they came. */
struct seen {
	struct testutil_capture	 lines;
	struct testutil_capture	 warnings;
};

static void
on_line(void *arg, const struct hosts_line *l)
{
	struct seen *s = arg;
	char addr[INET6_ADDRSTRLEN];
	size_t i;

	ck_assert_ptr_nonnull(inet_ntop(l->family, l->addr, addr,
	    sizeof(addr)));
	fprintf(s->lines.fp, "%s:%d %s", l->file, l->line, addr);
	for (i = 0; i < l->n_names; i++)
		fprintf(s->lines.fp, " %s", l->names[i]);
	fputc('\n', s->lines.fp);
}

static void
on_warn(void *arg, const char *msg)
{
	struct seen *s = arg;

	fprintf(s->warnings.fp, "%s\n", msg);
}

/* Read path; its lines and warnings into *s (free with seen_free). */
static long
read_hosts(const char *path, struct hosts_stamp *stamp, struct seen *s)
{
	long n;

	testutil_capture_start(&s->lines);
	testutil_capture_start(&s->warnings);
	n = hosts_read(path, stamp, on_line, on_warn, s);
	testutil_capture_end(&s->lines);
	testutil_capture_end(&s->warnings);
	return n;
}

static void
seen_free(struct seen *s)
{
	testutil_capture_free(&s->lines);
	testutil_capture_free(&s->warnings);
}

START_TEST(good_lines)
{
	struct hosts_stamp st;
	struct seen s;

	testutil_write(NULL, "hosts",
	    "# The hosts file of a machine\n"
	    "127.0.0.1\tlocalhost\n"
	    "\n"
	    "   \t  \n"
	    "127.0.1.1 box.example.org  box   # the machine itself\n"
	    "::1     localhost ip6-localhost ip6-loopback\n"
	    "fe00::0 ip6-localnet\n"
	    "2001:db8::10 Web.Example. www.example\t\tw # comment\n"
	    "192.0.2.7 under_score.example -dash.example\n"
	    "#192.0.2.8 commented.example\n"
	    "::ffff:192.0.2.9 mapped.example\n"
	    "192.0.2.10 no-newline.example");
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 8);
	ck_assert_str_eq(s.lines.text,
	    "hosts:2 127.0.0.1 localhost\n"
	    "hosts:5 127.0.1.1 box.example.org box\n"
	    "hosts:6 ::1 localhost ip6-localhost ip6-loopback\n"
	    "hosts:7 fe00:: ip6-localnet\n"
	    "hosts:8 2001:db8::10 Web.Example. www.example w\n"
	    "hosts:9 192.0.2.7 under_score.example -dash.example\n"
	    "hosts:11 ::ffff:192.0.2.9 mapped.example\n"
	    "hosts:12 192.0.2.10 no-newline.example\n");
	ck_assert_str_eq(s.warnings.text, "");
	ck_assert_int_eq(st.err, 0);
	seen_free(&s);
}
END_TEST

/* Each broken line: reported with file:line, skipped, the rest read. */
START_TEST(bad_lines)
{
	char many[64 * 3 + 32];
	struct hosts_stamp st;
	struct seen s;
	size_t i, n;
	FILE *fp;

	n = (size_t)snprintf(many, sizeof(many), "192.0.2.20");
	for (i = 0; i < HOSTS_MAX_NAMES + 1; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, " %c%c",
		    'a' + (int)(i / 26), 'a' + (int)(i % 26));
	ck_assert_ptr_nonnull(fp = fopen("hosts", "w"));
	fprintf(fp, "192.0.2.1 good.example\n"
	    "300.1.1.1 bad-address.example\n"
	    "fe80::1%%eth0 scoped.example\n"
	    "192.0.2.2\n"
	    "192.0.2.3   # only a comment\n"
	    "192.0.2.4 ok.example a..b.example\n"
	    "192.0.2.5 back\\slash.example\n"
	    "192.0.2.6 .\n"
	    "192.0.2.7 %s.example\n"
	    "localhost 127.0.0.1\n"
	    "%s\n"
	    "192.0.2.99 last.example\n",
	    "a123456789012345678901234567890123456789012345678901234567890123",
	    many);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 2);
	ck_assert_str_eq(s.lines.text,
	    "hosts:1 192.0.2.1 good.example\n"
	    "hosts:12 192.0.2.99 last.example\n");
	ck_assert_str_eq(s.warnings.text,
	    "hosts:2: \"300.1.1.1\" is not an IPv4 or IPv6 address; line "
	    "skipped\n"
	    "hosts:3: \"fe80::1%eth0\" is not an IPv4 or IPv6 address; line "
	    "skipped\n"
	    "hosts:4: no host name after 192.0.2.2; line skipped\n"
	    "hosts:5: no host name after 192.0.2.3; line skipped\n"
	    "hosts:6: \"a..b.example\" is not a host name; line skipped\n"
	    "hosts:7: \"back\\slash.example\" is not a host name; line "
	    "skipped\n"
	    "hosts:8: \".\" is not a host name; line skipped\n"
	    /* a label of 64 octets: RFC 1035 §2.3.4 allows 63 */
	    "hosts:9: \"a123456789012345678901234567890123456789012345678901"
	    "234567890123.example\" is not a host name; line skipped\n"
	    "hosts:10: \"localhost\" is not an IPv4 or IPv6 address; line "
	    "skipped\n"
	    "hosts:11: more than 64 names; line skipped\n");
	seen_free(&s);
}
END_TEST

/* A name of 255 octets in wire format is the longest (RFC 1035 §2.3.4). */
START_TEST(name_length)
{
	char name[300];
	struct hosts_stamp st;
	struct seen s;
	size_t i;
	FILE *fp;

	/* Three labels of 63 and one of 61: 3 * 64 + 62 + 1 = 255 octets
	 * with the root label; two more characters are too many. */
	for (i = 0; i < 4 * 64; i++)
		name[i] = (i % 64 == 63) ? '.' : 'x';
	name[4 * 64 - 3] = '\0';	/* the fourth label is 61 */
	ck_assert_ptr_nonnull(fp = fopen("hosts", "w"));
	fprintf(fp, "192.0.2.1 %s\n192.0.2.2 %s.\n192.0.2.3 %sxx\n", name,
	    name, name);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 2);
	ck_assert_int_eq(strstr(s.warnings.text, "hosts:3: ") ==
	    s.warnings.text, 1);
	ck_assert_ptr_null(strstr(s.warnings.text, "hosts:1"));
	seen_free(&s);
}
END_TEST

/*
 * Hostile files: a line over HOSTS_LINE_MAX octets (here only blanks and
 * a name, a valid line were it not so long) and one with a NUL octet are
 * skipped with what they are, the lines after them read; a file without
 * a newline at all is one line, read to its end in bounded memory.
 */
START_TEST(hostile_lines)
{
	static const char nul[] = "192.0.2.2 good\0evil.example\n";
	struct hosts_stamp st;
	struct seen s;
	FILE *fp;
	int i;

	ck_assert_ptr_nonnull(fp = fopen("hosts", "w"));
	fprintf(fp, "192.0.2.1");
	for (i = 0; i < HOSTS_LINE_MAX; i++)
		fputc(' ', fp);
	fprintf(fp, "long.example\n");
	fwrite(nul, 1, sizeof(nul) - 1, fp);
	fprintf(fp, "192.0.2.3 after.example\n");
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 1);
	ck_assert_str_eq(s.lines.text, "hosts:3 192.0.2.3 after.example\n");
	ck_assert_str_eq(s.warnings.text,
	    "hosts:1: longer than 16384 octets; line skipped\n"
	    "hosts:2: a NUL octet; line skipped\n");
	seen_free(&s);

	ck_assert_ptr_nonnull(fp = fopen("hosts", "w"));
	for (i = 0; i < 4 * HOSTS_LINE_MAX; i++)
		fputc('x', fp);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 0);
	ck_assert_str_eq(s.warnings.text,
	    "hosts:1: longer than 16384 octets; line skipped\n");
	seen_free(&s);
}
END_TEST

/* A file of junk: the first HOSTS_WARN_MAX broken lines are named, the
 * rest only counted, so that every reread does not flood the log. */
START_TEST(warnings_bounded)
{
	struct hosts_stamp st;
	struct seen s;
	char *p;
	FILE *fp;
	int i, n = 0;

	ck_assert_ptr_nonnull(fp = fopen("hosts", "w"));
	for (i = 0; i < 1000; i++)
		fprintf(fp, "junk%d x\n", i);
	fprintf(fp, "192.0.2.1 fine.example\n");
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 1);
	for (p = s.warnings.text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	ck_assert_int_eq(n, HOSTS_WARN_MAX + 1);
	ck_assert_ptr_nonnull(strstr(s.warnings.text, "hosts:10: \"junk9\" "
	    "is not an IPv4 or IPv6 address; line skipped\n"
	    "hosts: 990 more broken lines skipped\n"));
	seen_free(&s);
}
END_TEST

START_TEST(cannot_open)
{
	struct hosts_stamp st, again;
	struct seen s;

	ck_assert_int_eq(read_hosts("nope", &st, &s), -1);
	ck_assert_str_eq(s.lines.text, "");
	ck_assert_str_eq(s.warnings.text, "nope: cannot open: No such file or "
	    "directory\n");
	ck_assert_int_eq(st.err, ENOENT);
	hosts_stamp_get("nope", &again);
	ck_assert(hosts_stamp_same(&st, &again));
	seen_free(&s);
	/* A directory does not change by being looked at again either. */
	testutil_mkdir(NULL, "dir");
	ck_assert_int_eq(read_hosts("dir", &st, &s), -1);
	ck_assert_str_eq(s.warnings.text, "dir: cannot open: Is a directory\n");
	hosts_stamp_get("dir", &again);
	ck_assert(hosts_stamp_same(&st, &again));
	seen_free(&s);
}
END_TEST

/* The stamps tell every kind of change, and none where there was none. */
START_TEST(stamps)
{
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
	struct hosts_stamp st, now;
	struct seen s;

	testutil_write(NULL, "hosts", "192.0.2.1 a.example\n");
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 1);
	seen_free(&s);
	hosts_stamp_get("hosts", &now);
	ck_assert(hosts_stamp_same(&st, &now));
	/* The same size, written again: the modification time differs
	 * (set here to another nanosecond, as a fast second write has). */
	testutil_write(NULL, "hosts", "192.0.2.2 a.example\n");
	clock_gettime(CLOCK_REALTIME, &times[1]);
	times[1].tv_nsec = (times[1].tv_nsec + 1) % 1000000000;
	ck_assert_int_eq(utimensat(AT_FDCWD, "hosts", times, 0), 0);
	hosts_stamp_get("hosts", &now);
	ck_assert(!hosts_stamp_same(&st, &now));
	/* Renamed over (what editors do): another inode. */
	ck_assert_int_eq(read_hosts("hosts", &st, &s), 1);
	seen_free(&s);
	testutil_write(NULL, "hosts.new", "192.0.2.1 a.example\n");
	ck_assert_int_eq(rename("hosts.new", "hosts"), 0);
	hosts_stamp_get("hosts", &now);
	ck_assert(!hosts_stamp_same(&st, &now));
	/* Gone, then back. */
	st = now;
	ck_assert_int_eq(unlink("hosts"), 0);
	hosts_stamp_get("hosts", &now);
	ck_assert(!hosts_stamp_same(&st, &now));
	ck_assert_int_eq(now.err, ENOENT);
}
END_TEST

static Suite *
hosts_suite(void)
{
	Suite *s = suite_create("hosts");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, good_lines);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, name_length);
	tcase_add_test(tc, hostile_lines);
	tcase_add_test(tc, warnings_bounded);
	tcase_add_test(tc, cannot_open);
	tcase_add_test(tc, stamps);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(hosts_suite());
}
