/*
 * mailbox.h: messages to one event loop from other threads: a queue
 * under a mutex and an eventfd whose read event, in the loop's base, runs
 * what was posted. Nothing else of the loop is locked: libevent's own
 * thread locking (evthread) would tax every event operation of the query
 * path for these rare messages. Each message is a struct mailbox_msg the
 * sender allocated, embedded in whatever it carries.
 */
#ifndef DNSDAMPER_MAILBOX_H
#define DNSDAMPER_MAILBOX_H

#include <sys/queue.h>

struct event_base;
struct mailbox;
struct mailbox_msg;

/*
 * What a message does, run in the mailbox's loop with the arg given to
 * mailbox_new; with cancelled set instead, when the mailbox is freed
 * before it ran, only to free it. Either way the message is the
 * function's to free.
 */
typedef void (*mailbox_fn)(struct mailbox_msg *msg, void *arg,
	    int cancelled);

struct mailbox_msg {
	TAILQ_ENTRY(mailbox_msg) entry;
	mailbox_fn		 fn;
};

/*
 * mailbox_new: a mailbox read by base's loop (borrowed), which runs each
 * message with arg. Returns NULL (errno set) if out of memory or
 * descriptors.
 */
struct mailbox *mailbox_new(struct event_base *base, void *arg);

/*
 * mailbox_post: queue msg (msg->fn set; owned by the mailbox from now on)
 * from any thread; it runs in the mailbox's loop at its next turn, after
 * the messages posted before it. Never blocks but for the mutex.
 */
void	mailbox_post(struct mailbox *mb, struct mailbox_msg *msg);

/*
 * mailbox_free: free mb from its loop's thread (or with the loop stopped),
 * cancelling the messages still queued (their fn with cancelled set).
 * Nothing may post to it any more. NULL is allowed.
 */
void	mailbox_free(struct mailbox *mb);

#endif
