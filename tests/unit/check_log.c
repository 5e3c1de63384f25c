/* check_log.c: unit tests of log's levels and sinks and the journal check. */
#include "autoconf.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "log.h"
#include "systemd.h"

/* What the recording sink was handed, one "LEVEL msg\n" per call. */
static char rec_text[8192];

static void
rec_sink(enum log_level level, const char *msg)
{
	size_t used = strlen(rec_text);

	snprintf(rec_text + used, sizeof(rec_text) - used, "%d %s\n",
	    (int)level, msg);
}

static void
setup(void)
{
	rec_text[0] = '\0';
	log_init("check_log", LOG_LEVEL_INFO);
	log_set_sink(rec_sink);
}

static void
teardown(void)
{
	log_set_sink(NULL);
}

/* Run fn with standard error going to a file; returns what it wrote. */
static char *
capture_stderr(void (*fn)(void))
{
	char path[] = "/tmp/dnsdamper-check-log.XXXXXX", *text;
	int fd, saved;
	long len;
	FILE *fp;

	ck_assert_int_ne(fd = mkstemp(path), -1);
	ck_assert_int_ne(saved = dup(STDERR_FILENO), -1);
	ck_assert_int_ne(dup2(fd, STDERR_FILENO), -1);
	fn();
	fflush(stderr);
	ck_assert_int_ne(dup2(saved, STDERR_FILENO), -1);
	close(saved);
	close(fd);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	ck_assert_ptr_nonnull(text = calloc(1, (size_t)len + 1));
	ck_assert_uint_eq(fread(text, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	unlink(path);
	return text;
}

/* Each level's message reaches the sink once, as formatted, errno after. */
START_TEST(test_sink_gets_messages)
{
	char expected[512];

	log_errx("start failed: %d", 1);
	errno = EACCES;
	log_err("bind %s", "127.0.0.1:53");
	errno = ENOENT;
	log_warn("open %s", "x");
	log_warnx("plain %s", "warning");
	log_info("info %u", 7u);
	log_at(LOG_LEVEL_WARN, "at %s", "warn");
	snprintf(expected, sizeof(expected),
	    "0 start failed: 1\n"
	    "0 bind 127.0.0.1:53: %s\n"
	    "1 open x: %s\n"
	    "1 plain warning\n"
	    "2 info 7\n"
	    "1 at warn\n", strerror(EACCES), strerror(ENOENT));
	ck_assert_str_eq(rec_text, expected);
}
END_TEST

/* Levels above the one printed never reach the sink. */
START_TEST(test_levels)
{
	log_debug("hidden");
	log_at(LOG_LEVEL_DEBUG, "hidden too");
	ck_assert_str_eq(rec_text, "");
	log_set_level(LOG_LEVEL_WARN);
	ck_assert_int_eq(log_get_level(), LOG_LEVEL_WARN);
	log_info("hidden");
	log_warnx("shown");
	ck_assert_str_eq(rec_text, "1 shown\n");
	log_set_level(LOG_LEVEL_DEBUG);
	log_debug("traced");
	ck_assert_str_eq(rec_text, "1 shown\n3 traced\n");
}
END_TEST

/* A long message is cut to 1023 bytes, and errno still follows it. */
START_TEST(test_long_message)
{
	char big[2000], expected[1200];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errno = EIO;
	log_warn("%s", big);
	snprintf(expected, sizeof(expected), "1 %.1023s: %s\n", big,
	    strerror(EIO));
	ck_assert_str_eq(rec_text, expected);
}
END_TEST

/* log_priority: the syslog(3) priorities (RFC 5424 §6.2.1 severities). */
START_TEST(test_priority)
{
	ck_assert_int_eq(log_priority(LOG_LEVEL_ERR), 3);
	ck_assert_int_eq(log_priority(LOG_LEVEL_WARN), 4);
	ck_assert_int_eq(log_priority(LOG_LEVEL_INFO), 6);
	ck_assert_int_eq(log_priority(LOG_LEVEL_DEBUG), 7);
}
END_TEST

static void
write_two(void)
{
	errno = EPERM;
	log_warn("first");
	log_info("second");
}

/* NULL is the stderr sink: "name: level: message" lines. */
START_TEST(test_stderr_sink)
{
	char *text, expected[256];

	log_set_sink(NULL);
	text = capture_stderr(write_two);
	snprintf(expected, sizeof(expected), "check_log: warning: first: %s\n"
	    "check_log: info: second\n", strerror(EPERM));
	ck_assert_str_eq(text, expected);
	free(text);
	/* Back to a sink of our own: stderr gets nothing more. */
	log_set_sink(rec_sink);
	text = capture_stderr(write_two);
	ck_assert_str_eq(text, "");
	free(text);
	ck_assert_str_eq(rec_text + strlen(rec_text) - 9, "2 second\n");
}
END_TEST

static void
write_debug(void)
{
	log_debug("traced");
}

/* With -v (level DEBUG) each stderr line starts with the time of day. */
START_TEST(test_stderr_stamp)
{
	regex_t re;
	char *text;

	log_set_sink(log_sink_stderr);
	log_set_level(LOG_LEVEL_DEBUG);
	text = capture_stderr(write_debug);
	ck_assert_int_eq(regcomp(&re, "^[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\."
	    "[0-9]{3} check_log: debug: traced\n$", REG_EXTENDED), 0);
	ck_assert_msg(regexec(&re, text, 0, NULL, 0) == 0, "got \"%s\"",
	    text);
	regfree(&re);
	free(text);
}
END_TEST

/* fatalx exits with status 1 (the message goes to the sink first). */
START_TEST(test_fatalx)
{
	fatalx("cannot go on");
}
END_TEST

/*
 * main picks the journal sink only when standard error is the journal's
 * stream: JOURNAL_STREAM must name stderr's device and inode.
 */
START_TEST(test_journal_attached)
{
	struct stat st;
	char env[64];

	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);
	ck_assert_int_eq(unsetenv("JOURNAL_STREAM"), 0);
	ck_assert_int_eq(systemd_journal_attached(), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino);
	ck_assert_int_eq(setenv("JOURNAL_STREAM", env, 1), 0);
#ifdef HAVE_SYSTEMD
	ck_assert_int_eq(systemd_journal_attached(), 1);
#else
	ck_assert_int_eq(systemd_journal_attached(), 0);
#endif
	/* Another inode: stderr was redirected after systemd started us. */
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino + 1);
	ck_assert_int_eq(setenv("JOURNAL_STREAM", env, 1), 0);
	ck_assert_int_eq(systemd_journal_attached(), 0);
	ck_assert_int_eq(setenv("JOURNAL_STREAM", "garbage", 1), 0);
	ck_assert_int_eq(systemd_journal_attached(), 0);
	ck_assert_int_eq(unsetenv("JOURNAL_STREAM"), 0);
}
END_TEST

/* One message an interval, at exact instants, with the count held back. */
START_TEST(test_limit)
{
	struct log_limit l;
	uint64_t held = 99;

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(log_limit_due(&l, 0, 60000, &held), 1);
	ck_assert_uint_eq(held, 0);
	ck_assert_int_eq(log_limit_due(&l, 1, 60000, &held), 0);
	ck_assert_int_eq(log_limit_due(&l, 59999, 60000, &held), 0);
	ck_assert_int_eq(log_limit_due(&l, 60000, 60000, &held), 1);
	ck_assert_uint_eq(held, 2);
	/* The interval counts from the last message, not the last event. */
	ck_assert_int_eq(log_limit_due(&l, 119999, 60000, &held), 0);
	ck_assert_int_eq(log_limit_due(&l, 500000, 60000, &held), 1);
	ck_assert_uint_eq(held, 1);
	ck_assert_int_eq(log_limit_due(&l, 500001, 60000, &held), 0);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sink_gets_messages);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_long_message);
	tcase_add_test(tc, test_priority);
	tcase_add_test(tc, test_stderr_sink);
	tcase_add_test(tc, test_stderr_stamp);
	tcase_add_exit_test(tc, test_fatalx, 1);
	tcase_add_test(tc, test_journal_attached);
	tcase_add_test(tc, test_limit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(log_suite());
}
