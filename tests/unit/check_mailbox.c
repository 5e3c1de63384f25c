/* check_mailbox.c: messages posted from other threads, run in the loop. */
#include "autoconf.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "check_main.h"
#include "mailbox.h"

#define THREADS		3
#define EACH		2000

struct numbered {
	struct mailbox_msg	 m;
	unsigned		 from;	/* thread */
	unsigned		 seq;	/* its n-th message */
};

/* What the loop ran: per sender, the next number expected, and counts. */
struct seen {
	unsigned	 next[THREADS + 1];
	unsigned	 ran;
	unsigned	 cancelled;
	int		 out_of_order;
	void		*arg;
};

static struct seen seen;

static void
run(struct mailbox_msg *m, void *arg, int cancelled)
{
	struct numbered *n = (struct numbered *)m;

	seen.arg = arg;
	if (cancelled)
		seen.cancelled++;
	else {
		seen.ran++;
		/* One sender's messages run in the order it posted them. */
		if (n->seq != seen.next[n->from])
			seen.out_of_order = 1;
		seen.next[n->from] = n->seq + 1;
	}
	free(n);
}

static void
post(struct mailbox *mb, unsigned from, unsigned seq)
{
	struct numbered *n = malloc(sizeof(*n));

	ck_assert_ptr_nonnull(n);
	n->m.fn = run;
	n->from = from;
	n->seq = seq;
	mailbox_post(mb, &n->m);
}

static struct mailbox *target;

static void *
sender(void *arg)
{
	unsigned from = (unsigned)(uintptr_t)arg, i;

	for (i = 0; i < EACH; i++)
		post(target, from, i);
	return NULL;
}

/* Three threads post 2000 each while the loop runs: every one runs, in
 * each sender's order, with the mailbox's arg. */
START_TEST(posted_from_threads_run_in_order)
{
	struct event_base *base;
	pthread_t t[THREADS];
	uintptr_t i;
	int arg;

	memset(&seen, 0, sizeof(seen));
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(target = mailbox_new(base, &arg));
	for (i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, sender,
		    (void *)i), 0);
	while (seen.ran < THREADS * EACH)
		ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(seen.ran, THREADS * EACH);
	ck_assert(!seen.out_of_order);
	ck_assert_ptr_eq(seen.arg, &arg);
	mailbox_free(target);
	event_base_free(base);
}
END_TEST

/* Posted from the loop's own thread: run at the next turn, not at once;
 * those still queued at free are cancelled, each freed. */
START_TEST(run_next_turn_or_cancelled)
{
	struct event_base *base;
	struct mailbox *mb;

	memset(&seen, 0, sizeof(seen));
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(mb = mailbox_new(base, NULL));
	post(mb, THREADS, 0);
	ck_assert_uint_eq(seen.ran, 0);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(seen.ran, 1);
	post(mb, THREADS, 1);
	post(mb, THREADS, 2);
	mailbox_free(mb);
	ck_assert_uint_eq(seen.ran, 1);
	ck_assert_uint_eq(seen.cancelled, 2);
	mailbox_free(NULL);
	event_base_free(base);
}
END_TEST

static Suite *
mailbox_suite(void)
{
	Suite *s = suite_create("mailbox");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, posted_from_threads_run_in_order);
	tcase_add_test(tc, run_next_turn_or_cancelled);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(mailbox_suite());
}
