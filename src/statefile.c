/* statefile.c: files kept across restarts: atomic writes, checked reads. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "statefile.h"

int
statefile_ours_alone(const char *label, const char *path, const char *done,
    const char *what, const struct stat *st)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		log_warnx("%s %s: %s: the %s is owned by uid %u, not by us or "
		    "root", label, path, done, what, (unsigned)st->st_uid);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		log_warnx("%s %s: %s: the %s is writable by others (mode %03o)",
		    label, path, done, what, (unsigned)(st->st_mode & 0777));
	else
		return 1;
	return 0;
}

int
statefile_write(const char *label, const char *path, struct evbuffer *b)
{
	char tmp[4096], dir[4096];
	struct stat st;
	int fd, saved;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp) ||
	    (size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(dirname(dir), &st) == -1)
		return -1;
	if (!statefile_ours_alone(label, path, "not written", "directory",
	    &st))
		return -2;
	/* Left by a crash: unlink removes a link, not what it points to. */
	if (unlink(tmp) == -1 && errno != ENOENT)
		return -1;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	while (evbuffer_get_length(b) > 0)
		if (evbuffer_write(b, fd) <= 0 && errno != EINTR)
			goto fail;
	if (fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) == 0)
		return 0;
	fd = -1;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	(void)unlink(tmp);
	errno = saved;
	return -1;
}

int
statefile_read(const char *label, const char *path, uint64_t max,
    uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *all = NULL;
	ssize_t got;
	size_t n = 0;
	int fd;

	*out = NULL;
	*len = 0;
	/* Not through a link: where it points is not where we write. */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s %s: not read", label, path);
		return -1;
	}
	/* What another user could have written is not ours to use. */
	if (fstat(fd, &st) == -1 ||
	    !statefile_ours_alone(label, path, "ignored", "file", &st)) {
		close(fd);
		return -1;
	}
	/* Not read at all: what we could not have written is not ours. */
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		close(fd);
		return -2;
	}
	if (!S_ISREG(st.st_mode) ||
	    (all = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return -3;
	}
	while (n < (size_t)st.st_size && (got = read(fd, all + n,
	    (size_t)st.st_size - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (n != (size_t)st.st_size) {
		free(all);
		return -3;
	}
	all[n] = '\0';
	*out = all;
	*len = n;
	return 1;
}
