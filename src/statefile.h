/*
 * statefile.h: the files dnsdamper keeps across a restart (the cache file,
 * the runtime forward zones): written atomically in a directory of ours
 * alone, read back only if no other user could have written them.
 */
#ifndef DNSDAMPER_STATEFILE_H
#define DNSDAMPER_STATEFILE_H

#include <sys/stat.h>

#include <stdint.h>

#include <event2/buffer.h>

/*
 * statefile_ours_alone: 1 if st (of the file or of its directory) is ours
 * alone to change: owned by us or root, and writable by no group or other
 * user. Else 0, and why logged as "LABEL PATH: DONE: the WHAT is ...".
 */
int	statefile_ours_alone(const char *label, const char *path,
	    const char *done, const char *what, const struct stat *st);

/*
 * statefile_write: all of b (drained) into path.tmp, synced and renamed
 * over path; only in a directory no one else can write in (owned by us or
 * root), and then as a new file (O_EXCL, O_NOFOLLOW, mode 0600), never
 * through a link someone put at path.tmp. Returns 0, -1 with errno set,
 * or -2 if the directory is not ours alone (logged with label).
 */
int	statefile_write(const char *label, const char *path, struct evbuffer *b);

/*
 * statefile_read: the whole of the file at path, not through a link, into
 * *out (malloc'd, NUL-terminated after its *len octets; the caller frees
 * it), if it is ours alone (statefile_ours_alone) and at most max octets.
 * Returns 1 read; 0 no such file; -1 refused, foreign or not openable
 * (logged as "LABEL PATH: ..."); -2 larger than max, -3 not a regular file,
 * out of memory or cut short while read (both left to the caller to say).
 * *out is NULL but for 1.
 */
int	statefile_read(const char *label, const char *path, uint64_t max,
	    uint8_t **out, size_t *len);

#endif
