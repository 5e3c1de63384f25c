/* priv.c: the root-only steps of start-up, then dropping root. */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "priv.h"

int
priv_lookup(const char *user, struct priv_user *u, enum log_level level)
{
	struct passwd *pw;

	memset(u, 0, sizeof(*u));
	u->uid = geteuid();
	u->gid = getegid();
	snprintf(u->name, sizeof(u->name), "%s", user);
	if (u->uid != 0)
		return 0;
	if (strcmp(user, "root") == 0) {
		log_warnx("running as root, as `user root` asks");
		return 0;
	}
	errno = 0;
	if ((pw = getpwnam(user)) == NULL) {
		log_at(level, "user %s does not exist: create it (useradd "
		    "--system --no-create-home --shell /usr/sbin/nologin %s), "
		    "or name another with `user`, or `user root` to stay root",
		    user, user);
		return -1;
	}
	if (pw->pw_uid == 0) {
		log_at(level, "user %s is root: say `user root` to run as root",
		    user);
		return -1;
	}
	u->drop = 1;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	return 0;
}

int
priv_prepare_dir(const char *path, const struct priv_user *u)
{
	char copy[4096], *dir;
	int created = 0;

	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
		return -1;
	dir = dirname(copy);
	if (mkdir(dir, 0755) == 0)
		created = 1;
	else if (errno != EEXIST) {
		log_warn("mkdir %s", dir);
		return -1;
	}
	/* Our own directory (ours if we made it, or named for us). */
	if (u->drop && (created || strcmp(dir, "/run/dnsdamper") == 0 ||
	    strcmp(dir, "/var/lib/dnsdamper") == 0) &&
	    chown(dir, u->uid, u->gid) == -1) {
		log_warn("chown %s", dir);
		return -1;
	}
	return 0;
}

int
priv_group(const char *name, gid_t *gid)
{
	struct group *gr;

	*gid = (gid_t)-1;
	if (strcmp(name, "none") == 0)
		return 0;
	if ((gr = getgrnam(name)) == NULL) {
		log_warnx("control-group %s does not exist", name);
		return -1;
	}
	*gid = gr->gr_gid;
	return 0;
}

void
priv_drop(const struct priv_user *u)
{
	if (!u->drop)
		return;
	if (setgroups(0, NULL) == -1 ||
	    setresgid(u->gid, u->gid, u->gid) == -1 ||
	    setresuid(u->uid, u->uid, u->uid) == -1)
		fatal("cannot become user %s", u->name);
	if (setuid(0) != -1 || geteuid() == 0)
		fatalx("could regain root after becoming %s", u->name);
	log_info("running as user %s (uid %u, gid %u)", u->name,
	    (unsigned)u->uid, (unsigned)u->gid);
}
