/* testutil.h: small helpers shared by the unit tests (temp files, output). */
#ifndef DNSDAMPER_TESTUTIL_H
#define DNSDAMPER_TESTUTIL_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest path the helpers build. */
#define TESTUTIL_PATH_MAX	4096

/*
 * testutil_tmpdir: create a fresh directory /tmp/dnsdamper-test.XXXXXX and
 * write its path into buf (size len). Fails the test on error.
 */
static inline void
testutil_tmpdir(char *buf, size_t len)
{
	ck_assert_int_lt(snprintf(buf, len, "/tmp/dnsdamper-test.XXXXXX"),
	    (int)len);
	ck_assert_ptr_nonnull(mkdtemp(buf));
}

/*
 * testutil_write: write text to the file name inside dir (dir "." or NULL:
 * the current directory), replacing it; the parent directory must exist.
 * Fails the test on error.
 */
static inline void
testutil_write(const char *dir, const char *name, const char *text)
{
	char path[TESTUTIL_PATH_MAX];
	FILE *fp;

	if (dir == NULL)
		dir = ".";
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", dir, name),
	    (int)sizeof(path));
	ck_assert_msg((fp = fopen(path, "w")) != NULL, "cannot write %s",
	    path);
	ck_assert_int_ge(fputs(text, fp), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

/* testutil_mkdir: create the directory name inside dir (NULL: "."). */
static inline void
testutil_mkdir(const char *dir, const char *name)
{
	char path[TESTUTIL_PATH_MAX];

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s",
	    dir != NULL ? dir : ".", name), (int)sizeof(path));
	ck_assert_msg(mkdir(path, 0700) == 0, "cannot create %s", path);
}

static inline int
testutil_rmtree_one(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* testutil_rmtree: remove dir and everything below it (symlinks unfollowed). */
static inline void
testutil_rmtree(const char *dir)
{
	ck_assert_int_eq(nftw(dir, testutil_rmtree_one, 16,
	    FTW_DEPTH | FTW_PHYS), 0);
}

/* Everything written to fp, readable as one string once closed. */
struct testutil_capture {
	FILE	*fp;
	char	*text;		/* owned, after testutil_capture_end */
	size_t	 len;
};

/* testutil_capture_start: open c->fp, a stream into memory. */
static inline void
testutil_capture_start(struct testutil_capture *c)
{
	memset(c, 0, sizeof(*c));
	ck_assert_ptr_nonnull(c->fp = open_memstream(&c->text, &c->len));
}

/*
 * testutil_capture_end: close c->fp and return what was written (owned by
 * c, freed by testutil_capture_free).
 */
static inline const char *
testutil_capture_end(struct testutil_capture *c)
{
	ck_assert_int_eq(fclose(c->fp), 0);
	c->fp = NULL;
	return c->text;
}

/* testutil_capture_free: release the captured text. */
static inline void
testutil_capture_free(struct testutil_capture *c)
{
	free(c->text);
	c->text = NULL;
}

/* A fresh directory to work in, and the one to go back to. */
struct testutil_workdir {
	char	dir[TESTUTIL_PATH_MAX];
	char	old_cwd[TESTUTIL_PATH_MAX];
};

/*
 * testutil_workdir_enter: create a fresh directory (testutil_tmpdir) and
 * make it the working directory, so that file names stay short. Fails the
 * test on error.
 */
static inline void
testutil_workdir_enter(struct testutil_workdir *w)
{
	ck_assert_ptr_nonnull(getcwd(w->old_cwd, sizeof(w->old_cwd)));
	testutil_tmpdir(w->dir, sizeof(w->dir));
	ck_assert_int_eq(chdir(w->dir), 0);
}

/* testutil_workdir_leave: go back, and remove the directory whole. */
static inline void
testutil_workdir_leave(struct testutil_workdir *w)
{
	ck_assert_int_eq(chdir(w->old_cwd), 0);
	testutil_rmtree(w->dir);
}

#endif
