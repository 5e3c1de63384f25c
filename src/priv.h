/*
 * priv.h: what needs root is done first (binding port 53, the control
 * socket and the directories of the runtime and state files), then root
 * is given up for the configured user, supplementary groups cleared.
 */
#ifndef DNSDAMPER_PRIV_H
#define DNSDAMPER_PRIV_H

#include <sys/types.h>

#include "log.h"

struct priv_user {
	int	drop;		/* started as root: become uid/gid */
	uid_t	uid;
	gid_t	gid;
	char	name[64];
};

/*
 * priv_lookup: decide who to run as. Started as root with user not
 * "root", that user must exist (getpwnam; it is the start-up path, so the
 * lookup may block). Started as root with `user root`, stay root (logged).
 * Not root: stay as we are. Returns 0 and fills *u, or -1 with the reason
 * logged at level (an error at start-up, a warning for -t).
 */
int	priv_lookup(const char *user, struct priv_user *u,
	    enum log_level level);

/*
 * priv_prepare_dir: create the directory holding path if missing (mode
 * 0755) and, when dropping root, hand a directory we created, or one
 * under /run or /var/lib named for us, to the user, so that it can replace
 * and remove its files there. Returns 0, or -1 (logged).
 */
int	priv_prepare_dir(const char *path, const struct priv_user *u);

/* priv_group: the gid of group name, (gid_t)-1 for "none"; -1 logged. */
int	priv_group(const char *name, gid_t *gid);

/*
 * priv_drop: become u (supplementary groups cleared, then gid, then uid,
 * saved IDs too) if u->drop, and check that root cannot be regained.
 * Failure is fatal: running on as root unasked is worse than not running.
 */
void	priv_drop(const struct priv_user *u);

#endif
