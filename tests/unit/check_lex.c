/* check_lex.c: unit tests of the config lexer, its include stack, values. */
#include "autoconf.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "lex.h"
#include "testutil.h"
#include "value.h"

static struct testutil_workdir test_dir;

/* Each test runs in a fresh directory, so file names are short. */
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

/* A reading: the lexer and the tokens it gave, as text. */
struct reading {
	struct lex	 lex;
	FILE		*tokens;	/* "file:line TOKEN" lines */
};

/* One token as text: NL ; { } EOF, a word as [text]; q: quoted, !: bad. */
static void
print_token(struct reading *r, const struct lex_token *t)
{
	static const char *const names[] = { "EOF", "NL", ";", "{", "}" };

	fprintf(r->tokens, "%s:%d ", lex_path(&r->lex), t->line);
	if (t->type == LEX_WORD)
		fprintf(r->tokens, "%s[%s]%s\n", t->quoted ? "q" : "",
		    t->text, t->bad ? "!" : "");
	else
		fprintf(r->tokens, "%s\n", names[t->type]);
}

/*
 * The read callback: every token to the end of the file, and, as the
 * grammar does, the files of `include WORD` read in the middle.
 */
static void
read_tokens(void *arg)
{
	struct reading *r = arg;
	struct lex_token t, pattern;

	do {
		lex_next(&r->lex, &t);
		print_token(r, &t);
		if (t.type == LEX_WORD && strcmp(t.text, "include") == 0) {
			lex_next(&r->lex, &pattern);
			ck_assert_int_eq(pattern.type, LEX_WORD);
			lex_include(&r->lex, pattern.text, t.line, read_tokens,
			    r);
			free(pattern.text);
		}
		free(t.text);
	} while (t.type != LEX_EOF);
}

/* Read the file at path: the tokens and the error lines, both to free. */
static void
read_file(const char *path, char **tokens, char **errs)
{
	struct testutil_capture tc, ec;
	struct reading r;
	const char *p;
	int lines = 0;

	testutil_capture_start(&tc);
	testutil_capture_start(&ec);
	r.tokens = tc.fp;
	lex_init(&r.lex, ec.fp);
	lex_read(&r.lex, path, read_tokens, &r);
	ck_assert_ptr_null(r.lex.top);
	testutil_capture_end(&tc);
	testutil_capture_end(&ec);
	/* Each error is one line, and counted. */
	for (p = ec.text; *p != '\0'; p++)
		lines += *p == '\n';
	ck_assert_int_eq(r.lex.n_errors, lines);
	lex_free(&r.lex);
	*tokens = tc.text;
	*errs = ec.text;
}

/* The file x.conf with text must give exactly these tokens and errors. */
static void
lex_is(const char *text, const char *tokens, const char *errs)
{
	char *t, *e;

	testutil_write(NULL, "x.conf", text);
	read_file("x.conf", &t, &e);
	ck_assert_str_eq(t, tokens);
	ck_assert_str_eq(e, errs);
	free(t);
	free(e);
}

START_TEST(test_tokens)
{
	lex_is("listen 127.0.0.1:53 ;x{y}\n"
	    "# a comment line\n"
	    "\t \"a b\"z#c #d\r\n"
	    "w\\x;\n",
	    "x.conf:1 [listen]\n"
	    "x.conf:1 [127.0.0.1:53]\n"
	    "x.conf:1 ;\n"
	    "x.conf:1 [x]\n"
	    "x.conf:1 {\n"
	    "x.conf:1 [y]\n"
	    "x.conf:1 }\n"
	    "x.conf:1 NL\n"
	    "x.conf:2 NL\n"
	    "x.conf:3 q[a b]\n"
	    "x.conf:3 [z#c]\n"
	    "x.conf:3 NL\n"
	    "x.conf:4 [w\\x]\n"
	    "x.conf:4 ;\n"
	    "x.conf:4 NL\n"
	    "x.conf:4 EOF\n", "");
}
END_TEST

/* Inside quotes: \" and \\ are escapes, # ; { } are plain characters. */
START_TEST(test_quoting)
{
	lex_is("\"a#b;{c}\\\"d\\\\\" \"\" \"x\\y\"\n",
	    "x.conf:1 q[a#b;{c}\"d\\]\n"
	    "x.conf:1 q[]\n"
	    "x.conf:1 q[x\\y]\n"
	    "x.conf:1 NL\n"
	    "x.conf:1 EOF\n", "");
	/* A string ends on its own line: reported, and the lexer goes on. */
	lex_is("a \"open\nb\n\"end",
	    "x.conf:1 [a]\n"
	    "x.conf:1 q[open]!\n"
	    "x.conf:1 NL\n"
	    "x.conf:2 [b]\n"
	    "x.conf:2 NL\n"
	    "x.conf:3 q[end]!\n"
	    "x.conf:3 EOF\n",
	    "x.conf:1: unterminated string\n"
	    "x.conf:3: unterminated string\n");
}
END_TEST

/* lex_unget gives the same token back, once. */
static void
read_unget(void *arg)
{
	struct lex *lx = arg;
	struct lex_token a, b;

	lex_next(lx, &a);
	lex_unget(lx, &a);
	lex_next(lx, &b);
	ck_assert_int_eq(b.type, LEX_WORD);
	ck_assert_ptr_eq(b.text, a.text);
	free(b.text);
	lex_next(lx, &b);
	ck_assert_str_eq(b.text, "two");
	/* A token pushed back when the file ends is freed with it. */
	lex_unget(lx, &b);
}

START_TEST(test_unget)
{
	struct lex lx;

	testutil_write(NULL, "x.conf", "one two\n");
	lex_init(&lx, stderr);
	lex_read(&lx, "x.conf", read_unget, &lx);
	ck_assert_int_eq(lx.n_errors, 0);
	lex_free(&lx);
}
END_TEST

/*
 * An include is read where it stands, with its own name and lines, and
 * its path is relative to the including file; the includer then goes on.
 */
START_TEST(test_include_stack)
{
	char *t, *e;

	testutil_mkdir(NULL, "etc");
	testutil_mkdir("etc", "sub");
	testutil_write("etc", "main.conf", "a\ninclude sub/b.conf\nc\n");
	testutil_write("etc/sub", "b.conf", "\nb1 b2");
	read_file("etc/main.conf", &t, &e);
	ck_assert_str_eq(t,
	    "etc/main.conf:1 [a]\n"
	    "etc/main.conf:1 NL\n"
	    "etc/main.conf:2 [include]\n"
	    "etc/sub/b.conf:1 NL\n"
	    "etc/sub/b.conf:2 [b1]\n"
	    "etc/sub/b.conf:2 [b2]\n"
	    "etc/sub/b.conf:2 EOF\n"
	    "etc/main.conf:2 NL\n"
	    "etc/main.conf:3 [c]\n"
	    "etc/main.conf:3 NL\n"
	    "etc/main.conf:3 EOF\n");
	ck_assert_str_eq(e, "");
	free(t);
	free(e);
}
END_TEST

/* Glob matches in sorted order; a pattern may match nothing at all. */
START_TEST(test_include_glob)
{
	testutil_mkdir(NULL, "d");
	testutil_write("d", "2.conf", "two\n");
	testutil_write("d", "1.conf", "one\n");
	testutil_write("d", "3.txt", "three\n");
	lex_is("include d/*.conf\ninclude none/*.conf\n",
	    "x.conf:1 [include]\n"
	    "d/1.conf:1 [one]\n"
	    "d/1.conf:1 NL\n"
	    "d/1.conf:1 EOF\n"
	    "d/2.conf:1 [two]\n"
	    "d/2.conf:1 NL\n"
	    "d/2.conf:1 EOF\n"
	    "x.conf:1 NL\n"
	    "x.conf:2 [include]\n"
	    "x.conf:2 NL\n"
	    "x.conf:2 EOF\n", "");
}
END_TEST

/* A file that includes itself stops 16 levels down, with one error. */
START_TEST(test_include_loop)
{
	char expected[4096];
	size_t used = 0;
	int i;

	for (i = 0; i <= LEX_MAX_DEPTH; i++)
		used += (size_t)snprintf(expected + used, sizeof(expected) -
		    used, "x.conf:1 [include]\n");
	for (i = 0; i <= LEX_MAX_DEPTH; i++)
		used += (size_t)snprintf(expected + used, sizeof(expected) -
		    used, "x.conf:1 NL\nx.conf:1 EOF\n");
	lex_is("include x.conf\n", expected,
	    "x.conf:1: include: nested more than 16 levels deep (an include "
	    "loop?)\n");
}
END_TEST

/* What cannot be opened is named, at the include or as the top file. */
START_TEST(test_open_errors)
{
	char *t, *e;

	testutil_mkdir(NULL, "dir");
	ck_assert_int_eq(mkfifo("fifo", 0600), 0);
	lex_is("\ninclude missing.conf\ninclude dir\ninclude fifo\n",
	    "x.conf:1 NL\n"
	    "x.conf:2 [include]\n"
	    "x.conf:2 NL\n"
	    "x.conf:3 [include]\n"
	    "x.conf:3 NL\n"
	    "x.conf:4 [include]\n"
	    "x.conf:4 NL\n"
	    "x.conf:4 EOF\n",
	    "x.conf:2: include: cannot open \"missing.conf\": No such file or "
	    "directory\n"
	    "x.conf:3: include: cannot open \"dir\": Is a directory\n"
	    "x.conf:4: include: cannot open \"fifo\": not a regular file\n");
	/* A FIFO is refused without waiting for a writer. */
	read_file("fifo", &t, &e);
	ck_assert_str_eq(t, "");
	ck_assert_str_eq(e, "fifo: cannot open: not a regular file\n");
	free(t);
	free(e);
	read_file("nope.conf", &t, &e);
	ck_assert_str_eq(e, "nope.conf: cannot open: No such file or "
	    "directory\n");
	free(t);
	free(e);
}
END_TEST

START_TEST(test_fopen)
{
	FILE *fp;

	testutil_mkdir(NULL, "dir");
	ck_assert_int_eq(mkfifo("fifo", 0600), 0);
	testutil_write(NULL, "f", "x");
	ck_assert_ptr_nonnull(fp = lex_fopen("f"));
	ck_assert_int_eq(getc(fp), 'x');
	fclose(fp);
	ck_assert_ptr_null(lex_fopen("dir"));
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_ptr_null(lex_fopen("fifo"));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(lex_strerror(EINVAL), "not a regular file");
	ck_assert_ptr_null(lex_fopen("nope"));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(lex_strerror(ENOENT), strerror(ENOENT));
}
END_TEST

/* lex_quote writes what lex_next reads back as one word, unchanged. */
static const char *const quote_cases[][2] = {
	{ "plain", "plain" },
	{ "", "\"\"" },
	{ "a b", "\"a b\"" },
	{ "tab\there", "\"tab\there\"" },
	{ "a#b", "a#b" },
	{ "#b", "\"#b\"" },
	{ "semi;colon", "\"semi;colon\"" },
	{ "{}", "\"{}\"" },
	{ "say \"hi\"", "\"say \\\"hi\\\"\"" },
	{ "back\\slash", "back\\slash" },
	{ "back\\slash and space", "\"back\\\\slash and space\"" },
	{ "/etc/resolv.conf", "/etc/resolv.conf" },
};

START_TEST(test_quote)
{
	struct testutil_capture c;
	char *t, *e, expected[256];

	testutil_capture_start(&c);
	lex_quote(quote_cases[_i][0], c.fp);
	ck_assert_str_eq(testutil_capture_end(&c), quote_cases[_i][1]);
	testutil_write(NULL, "q.conf", c.text);
	testutil_capture_free(&c);
	read_file("q.conf", &t, &e);
	snprintf(expected, sizeof(expected), "q.conf:1 %s[%s]\nq.conf:1 EOF\n",
	    quote_cases[_i][1][0] == '"' ? "q" : "", quote_cases[_i][0]);
	ck_assert_str_eq(t, expected);
	ck_assert_str_eq(e, "");
	free(t);
	free(e);
}
END_TEST

/* Each word, its syntax and unit, and what value_scan makes of it. */
static const struct scan_case {
	const char		*str;
	enum value_syntax	 syntax;
	enum value_unit		 unit;
	enum value_result	 result;
	uint64_t		 value;
} scan_cases[] = {
	/* Bare digits of a duration are seconds. */
	{ "90", VALUE_DURATION, VALUE_UNIT_S, VALUE_OK, 90 },
	{ "90", VALUE_DURATION, VALUE_UNIT_MS, VALUE_OK, 90000 },
	{ "2d", VALUE_DURATION, VALUE_UNIT_S, VALUE_OK, 2 * 86400 },
	{ "15m", VALUE_DURATION, VALUE_UNIT_S, VALUE_OK, 900 },
	{ "1h", VALUE_DURATION, VALUE_UNIT_MS, VALUE_OK, 3600000 },
	{ "1500ms", VALUE_DURATION, VALUE_UNIT_MS, VALUE_OK, 1500 },
	{ "2000ms", VALUE_DURATION, VALUE_UNIT_S, VALUE_OK, 2 },
	{ "1500ms", VALUE_DURATION, VALUE_UNIT_S, VALUE_FRACTION, 0 },
	{ "0", VALUE_DURATION, VALUE_UNIT_S, VALUE_OK, 0 },
	/* Duration suffixes are lower case; sizes take either case. */
	{ "1S", VALUE_DURATION, VALUE_UNIT_S, VALUE_SYNTAX, 0 },
	{ "1K", VALUE_SIZE, VALUE_UNIT_BYTES, VALUE_OK, 1024 },
	{ "64m", VALUE_SIZE, VALUE_UNIT_BYTES, VALUE_OK, 64ULL << 20 },
	{ "1024g", VALUE_SIZE, VALUE_UNIT_BYTES, VALUE_OK, 1ULL << 40 },
	{ "1232", VALUE_SIZE, VALUE_UNIT_BYTES, VALUE_OK, 1232 },
	{ "1k", VALUE_NUMBER, VALUE_UNIT_NONE, VALUE_SYNTAX, 0 },
	{ "-1", VALUE_NUMBER, VALUE_UNIT_NONE, VALUE_SYNTAX, 0 },
	{ "", VALUE_NUMBER, VALUE_UNIT_NONE, VALUE_SYNTAX, 0 },
	{ "1 ", VALUE_NUMBER, VALUE_UNIT_NONE, VALUE_SYNTAX, 0 },
	{ "1x", VALUE_DURATION, VALUE_UNIT_S, VALUE_SYNTAX, 0 },
	/* 2^64 - 1 fits, 2^64 does not. */
	{ "18446744073709551615", VALUE_NUMBER, VALUE_UNIT_NONE, VALUE_OK,
	  UINT64_MAX },
	{ "18446744073709551616", VALUE_NUMBER, VALUE_UNIT_NONE,
	  VALUE_OVERFLOW, 0 },
	/* 213503982335 days are more than 2^64 ms; 2^34 GiB than 2^64 B. */
	{ "213503982335d", VALUE_DURATION, VALUE_UNIT_S, VALUE_OVERFLOW, 0 },
	{ "17179869184g", VALUE_SIZE, VALUE_UNIT_BYTES, VALUE_OVERFLOW, 0 },
};

START_TEST(test_value_scan)
{
	const struct scan_case *c = &scan_cases[_i];
	uint64_t v = 12345;

	ck_assert_int_eq(value_scan(c->str, c->syntax, c->unit, &v),
	    c->result);
	ck_assert_uint_eq(v, c->result == VALUE_OK ? c->value : 12345);
}
END_TEST

/* Written in the largest exact unit, and read back as the same value. */
static const struct format_case {
	enum value_syntax	 syntax;
	enum value_unit		 unit;
	uint64_t		 value;
	const char		*str;
} format_cases[] = {
	{ VALUE_DURATION, VALUE_UNIT_S, 86400, "1d" },
	{ VALUE_DURATION, VALUE_UNIT_S, 90000, "25h" },
	{ VALUE_DURATION, VALUE_UNIT_S, 120, "2m" },
	{ VALUE_DURATION, VALUE_UNIT_S, 2147483647, "2147483647s" },
	{ VALUE_DURATION, VALUE_UNIT_S, 0, "0s" },
	{ VALUE_DURATION, VALUE_UNIT_MS, 0, "0s" },
	{ VALUE_DURATION, VALUE_UNIT_MS, 1800, "1800ms" },
	{ VALUE_DURATION, VALUE_UNIT_MS, 60000, "1m" },
	{ VALUE_SIZE, VALUE_UNIT_BYTES, 64ULL << 20, "64m" },
	{ VALUE_SIZE, VALUE_UNIT_BYTES, 1536 * 1024, "1536k" },
	{ VALUE_SIZE, VALUE_UNIT_BYTES, 1232, "1232" },
	{ VALUE_SIZE, VALUE_UNIT_BYTES, 0, "0" },
	{ VALUE_NUMBER, VALUE_UNIT_NONE, 1000000, "1000000" },
};

START_TEST(test_value_format)
{
	const struct format_case *c = &format_cases[_i];
	char buf[32];
	uint64_t v;

	ck_assert_str_eq(value_format(c->syntax, c->unit, c->value, buf,
	    sizeof(buf)), c->str);
	ck_assert_int_eq(value_scan(buf, c->syntax, c->unit, &v), VALUE_OK);
	ck_assert_uint_eq(v, c->value);
}
END_TEST

START_TEST(test_value_what)
{
	ck_assert_str_eq(value_what(VALUE_DURATION),
	    "a duration (digits with optional ms, s, m, h or d)");
	ck_assert_str_eq(value_what(VALUE_SIZE),
	    "a size (digits with optional k, m or g)");
	ck_assert_str_eq(value_what(VALUE_NUMBER), "a number");
}
END_TEST

#define N(a)	((int)(sizeof(a) / sizeof((a)[0])))

static Suite *
lex_suite(void)
{
	Suite *s = suite_create("lex");
	TCase *tc = tcase_create("lex"), *tv = tcase_create("value");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tokens);
	tcase_add_test(tc, test_quoting);
	tcase_add_test(tc, test_unget);
	tcase_add_test(tc, test_include_stack);
	tcase_add_test(tc, test_include_glob);
	tcase_add_test(tc, test_include_loop);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_fopen);
	tcase_add_loop_test(tc, test_quote, 0, N(quote_cases));
	suite_add_tcase(s, tc);
	tcase_add_loop_test(tv, test_value_scan, 0, N(scan_cases));
	tcase_add_loop_test(tv, test_value_format, 0, N(format_cases));
	tcase_add_test(tv, test_value_what);
	suite_add_tcase(s, tv);
	return s;
}

int
main(void)
{
	return check_main_run(lex_suite());
}
