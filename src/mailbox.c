/* mailbox.c: a locked queue of messages and an eventfd to wake a loop. */
#include "autoconf.h"

#include <sys/eventfd.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "mailbox.h"

TAILQ_HEAD(mailbox_queue, mailbox_msg);

struct mailbox {
	pthread_mutex_t		 lock;		/* queue */
	struct mailbox_queue	 queue;
	int			 fd;		/* eventfd */
	struct event		*ev;
	void			*arg;
};

/* Take the whole queue under the lock, then run it without. */
static void
mailbox_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mailbox *mb = arg;
	struct mailbox_queue q;
	struct mailbox_msg *m;
	uint64_t n;

	(void)what;
	/* The counter only wakes us; what came is in the queue. */
	if (read(fd, &n, sizeof(n)) == -1 && errno != EAGAIN)
		log_warn("mailbox");
	TAILQ_INIT(&q);
	pthread_mutex_lock(&mb->lock);
	TAILQ_CONCAT(&q, &mb->queue, entry);
	pthread_mutex_unlock(&mb->lock);
	while ((m = TAILQ_FIRST(&q)) != NULL) {
		TAILQ_REMOVE(&q, m, entry);
		m->fn(m, mb->arg, 0);
	}
}

struct mailbox *
mailbox_new(struct event_base *base, void *arg)
{
	struct mailbox *mb;
	int saved;

	if ((mb = calloc(1, sizeof(*mb))) == NULL)
		return NULL;
	TAILQ_INIT(&mb->queue);
	mb->arg = arg;
	if ((mb->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		saved = errno;
		free(mb);
		errno = saved;
		return NULL;
	}
	pthread_mutex_init(&mb->lock, NULL);
	if ((mb->ev = event_new(base, mb->fd, EV_READ | EV_PERSIST,
	    mailbox_read_cb, mb)) == NULL || event_add(mb->ev, NULL) == -1) {
		mailbox_free(mb);
		errno = ENOMEM;
		return NULL;
	}
	return mb;
}

void
mailbox_post(struct mailbox *mb, struct mailbox_msg *msg)
{
	static const uint64_t one = 1;
	int wake;

	pthread_mutex_lock(&mb->lock);
	wake = TAILQ_EMPTY(&mb->queue);
	TAILQ_INSERT_TAIL(&mb->queue, msg, entry);
	/*
	 * Under the lock, so that the reader, which empties the queue under
	 * it, cannot miss the wake-up of a queue it found empty. An eventfd
	 * write fails only when its counter would overflow: it is read
	 * before that.
	 */
	if (wake && write(mb->fd, &one, sizeof(one)) == -1)
		log_warn("mailbox");
	pthread_mutex_unlock(&mb->lock);
}

void
mailbox_free(struct mailbox *mb)
{
	struct mailbox_msg *m;

	if (mb == NULL)
		return;
	if (mb->ev != NULL)
		event_free(mb->ev);
	while ((m = TAILQ_FIRST(&mb->queue)) != NULL) {
		TAILQ_REMOVE(&mb->queue, m, entry);
		m->fn(m, mb->arg, 1);
	}
	close(mb->fd);
	pthread_mutex_destroy(&mb->lock);
	free(mb);
}
