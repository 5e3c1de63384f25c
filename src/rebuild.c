/* rebuild.c: reloads and hosts files built on a thread off main's loop. */
#include "autoconf.h"

#include <sys/queue.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "localbuild.h"
#include "localzone.h"
#include "log.h"
#include "mailbox.h"
#include "parse.h"
#include "rebuild.h"
#include "snapshot.h"

/* A finished build (or release), on its way to main's loop. */
struct done_msg {
	struct mailbox_msg	 m;
	struct rebuild_result	*r;		/* a build's */
	void			(*then)(void *);	/* a release's */
	void			*arg;
};

/* One thing for the thread to do, in the order asked. */
struct job {
	TAILQ_ENTRY(job)	 entry;
	enum { JOB_RELOAD, JOB_HOSTS, JOB_RELEASE } what;
	char			*path;		/* JOB_RELOAD; NULL: defaults */
	struct snapshot		*snap;		/* JOB_HOSTS, JOB_RELEASE */
	struct done_msg		*dm;		/* a build's, made by main so
						 * that its end is always told */
};

struct rebuild {
	rebuild_done_fn		 done;
	void			*arg;
	struct mailbox		*mailbox;	/* main's loop's */
	pthread_t		 thread;
	int			 busy;		/* main's loop only */
	/* Shared with the thread, under lock. */
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	TAILQ_HEAD(, job)	 jobs;
	int			 stopping;
};

void
rebuild_result_free(struct rebuild_result *r)
{
	if (r == NULL)
		return;
	config_free(&r->conf);
	localzone_table_unref(r->local);
	snapshot_unref(r->snap);
	free(r->errors);
	free(r);
}

/* parse_load's errors, each logged; their text into r->errors. */
static void
reload_errors(struct rebuild_result *r, char *text)
{
	char *line, *save, *copy;

	if (text == NULL)
		return;
	copy = strdup(text);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		log_errx("%s", line);
	r->errors = copy;
}

/* The configuration at path and its local zones, into r. */
static void
build_reload(struct rebuild_result *r, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *errs;

	r->reload = 1;
	r->rc = -1;
	if ((errs = open_memstream(&text, &len)) == NULL) {
		log_err("reload");
		return;
	}
	if (parse_load(path, &r->conf, errs) == -1) {
		fclose(errs);
		reload_errors(r, text);
		free(text);
		return;
	}
	fclose(errs);
	free(text);
	if ((r->local = localbuild_table(&r->conf)) == NULL) {
		log_err("reload");
		config_free(&r->conf);
		return;
	}
	r->rc = 0;
}

/* The local zones of r->snap's configuration, read again, into r. */
static void
build_hosts(struct rebuild_result *r)
{
	r->rc = (r->local = localbuild_table(r->snap->conf)) == NULL ? -1 : 0;
}

static void
done_cb(struct mailbox_msg *m, void *arg, int cancelled)
{
	struct done_msg *dm = (struct done_msg *)m;
	struct rebuild *b = arg;

	if (cancelled) {
		rebuild_result_free(dm->r);
		free(dm);
		return;
	}
	if (dm->then != NULL)
		dm->then(dm->arg);
	else {
		b->busy = 0;
		b->done(b->arg, dm->r);
	}
	free(dm);
}

/* Run one job; a build's result goes to main's loop. */
static void
run(struct rebuild *b, struct job *j)
{
	struct done_msg *dm = j->dm;

	if (j->what == JOB_RELEASE) {
		snapshot_unref(j->snap);
		j->snap = NULL;
		j->dm = NULL;
		mailbox_post(b->mailbox, &dm->m);
		return;
	}
	dm->r->snap = j->snap;
	j->snap = NULL;
	if (j->what == JOB_RELOAD)
		build_reload(dm->r, j->path);
	else
		build_hosts(dm->r);
	j->dm = NULL;
	mailbox_post(b->mailbox, &dm->m);
}

static void
job_free(struct job *j)
{
	if (j->dm != NULL) {
		rebuild_result_free(j->dm->r);
		free(j->dm);
	}
	snapshot_unref(j->snap);
	free(j->path);
	free(j);
}

static void *
rebuild_main(void *arg)
{
	struct rebuild *b = arg;
	struct job *j;
	int stopping;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (TAILQ_EMPTY(&b->jobs) && !b->stopping)
			pthread_cond_wait(&b->cond, &b->lock);
		if ((j = TAILQ_FIRST(&b->jobs)) == NULL)
			break;		/* stopping, and nothing left */
		TAILQ_REMOVE(&b->jobs, j, entry);
		stopping = b->stopping;
		pthread_mutex_unlock(&b->lock);
		/* Stopping: a build not begun is only dropped. */
		if (!stopping || j->what == JOB_RELEASE)
			run(b, j);
		job_free(j);
		pthread_mutex_lock(&b->lock);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

struct rebuild *
rebuild_new(struct event_base *base, rebuild_done_fn done, void *arg)
{
	struct rebuild *b;
	sigset_t all, old;
	int rc;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->done = done;
	b->arg = arg;
	TAILQ_INIT(&b->jobs);
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	if ((b->mailbox = mailbox_new(base, b)) == NULL)
		goto fail;
	/* Every signal is main's loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&b->thread, NULL, rebuild_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		goto fail;
	}
	return b;
fail:
	mailbox_free(b->mailbox);
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	free(b);
	return NULL;
}

static void
queue(struct rebuild *b, struct job *j)
{
	pthread_mutex_lock(&b->lock);
	TAILQ_INSERT_TAIL(&b->jobs, j, entry);
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* A build job, or NULL with errno (EBUSY, ENOMEM). */
static struct job *
build_job(struct rebuild *b, int what)
{
	struct job *j;

	if (b->busy) {
		errno = EBUSY;
		return NULL;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->what = what;
	if ((j->dm = calloc(1, sizeof(*j->dm))) == NULL ||
	    (j->dm->r = calloc(1, sizeof(*j->dm->r))) == NULL) {
		job_free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->dm->m.fn = done_cb;
	return j;
}

int
rebuild_reload(struct rebuild *b, const char *path)
{
	struct job *j;

	if ((j = build_job(b, JOB_RELOAD)) == NULL)
		return -1;
	if (path != NULL && (j->path = strdup(path)) == NULL) {
		job_free(j);
		return -1;
	}
	b->busy = 1;
	queue(b, j);
	return 0;
}

int
rebuild_hosts(struct rebuild *b, struct snapshot *snap)
{
	struct job *j;

	if ((j = build_job(b, JOB_HOSTS)) == NULL)
		return -1;
	j->snap = snapshot_ref(snap);
	b->busy = 1;
	queue(b, j);
	return 0;
}

int
rebuild_busy(const struct rebuild *b)
{
	return b->busy;
}

void
rebuild_release(struct rebuild *b, struct snapshot *snap,
    void (*then)(void *), void *arg)
{
	struct job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->dm = calloc(1, sizeof(*j->dm))) == NULL) {
		free(j);
		snapshot_unref(snap);
		then(arg);
		return;
	}
	j->what = JOB_RELEASE;
	j->snap = snap;
	j->dm->m.fn = done_cb;
	j->dm->then = then;
	j->dm->arg = arg;
	queue(b, j);
}

void
rebuild_free(struct rebuild *b)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->lock);
	b->stopping = 1;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->thread, NULL);
	/* A result posted but not yet run is cancelled: freed. */
	mailbox_free(b->mailbox);
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	free(b);
}
