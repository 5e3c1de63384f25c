/* check_rebuild.c: reloads and hosts files built on rebuild's thread. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "check_main.h"
#include "localzone.h"
#include "rebuild.h"
#include "snapshot.h"
#include "testutil.h"

/* What done() was handed, and how often. */
struct got {
	struct rebuild_result	*r;
	unsigned		 calls;
	int			 busy_in_done;
	struct rebuild		*b;
};

static void
done(void *arg, struct rebuild_result *r)
{
	struct got *g = arg;

	g->r = r;
	g->calls++;
	g->busy_in_done = rebuild_busy(g->b);
}

/* Turn base's loop until done() ran (within 60 s of turns). */
static void
wait_done(struct event_base *base, struct got *g)
{
	struct timeval tick = { 0, 10000 };
	int i;

	for (i = 0; i < 6000 && g->calls == 0; i++) {
		event_base_loopexit(base, &tick);
		ck_assert_int_ne(event_base_dispatch(base), -1);
	}
	ck_assert_uint_eq(g->calls, 1);
}

/* Whether t answers name (wire form) with a record of type. */
static int
has(const struct localzone_table *t, const char *name, size_t len,
    uint16_t type)
{
	const struct localzone_node *n = localzone_find(t,
	    (const uint8_t *)name, len);

	return n != NULL && localzone_node_type(n, type) != NULL;
}

#define A_TEST	"\1a\4test"	/* a.test. */
#define B_TEST	"\1b\4test"

struct world {
	char			 dir[256];
	char			 conf[300];
	struct event_base	*base;
	struct rebuild		*b;
	struct got		 got;
};

static void
world_init(struct world *w, const char *hosts)
{
	char text[1024];

	memset(w, 0, sizeof(*w));
	testutil_tmpdir(w->dir, sizeof(w->dir));
	testutil_write(w->dir, "hosts", hosts);
	testutil_write(w->dir, "resolv.conf", "nameserver 127.0.0.1\n");
	snprintf(text, sizeof(text), "hosts-file %s/hosts\n"
	    "resolv-conf %s/resolv.conf\ncache-file none\ncontrol none\n"
	    "forward . { upstream 127.0.0.1:5353 }\n", w->dir, w->dir);
	testutil_write(w->dir, "dnsdamper.conf", text);
	snprintf(w->conf, sizeof(w->conf), "%s/dnsdamper.conf", w->dir);
	ck_assert_ptr_nonnull(w->base = event_base_new());
	ck_assert_ptr_nonnull(w->b = rebuild_new(w->base, done, &w->got));
	w->got.b = w->b;
}

static void
world_free(struct world *w)
{
	rebuild_free(w->b);
	event_base_free(w->base);
	testutil_rmtree(w->dir);
}

START_TEST(reload_built_and_handed_back)
{
	struct world w;
	struct rebuild_result *r;

	world_init(&w, "192.0.2.1 a.test\n");
	ck_assert_int_eq(rebuild_reload(w.b, w.conf), 0);
	/* one at a time, until done() was called */
	ck_assert_int_eq(rebuild_busy(w.b), 1);
	errno = 0;
	ck_assert_int_eq(rebuild_reload(w.b, w.conf), -1);
	ck_assert_int_eq(errno, EBUSY);
	wait_done(w.base, &w.got);
	ck_assert_int_eq(w.got.busy_in_done, 0);
	r = w.got.r;
	ck_assert_int_eq(r->reload, 1);
	ck_assert_int_eq(r->rc, 0);
	ck_assert_ptr_null(r->errors);
	ck_assert_uint_eq(r->conf.n_hosts_files, 1);
	ck_assert_ptr_nonnull(r->local);
	ck_assert(has(r->local, A_TEST, sizeof(A_TEST), 1));
	rebuild_result_free(r);
	world_free(&w);
}
END_TEST

START_TEST(bad_config_refused_with_its_errors)
{
	struct world w;
	struct rebuild_result *r;

	world_init(&w, "192.0.2.1 a.test\n");
	testutil_write(w.dir, "dnsdamper.conf", "max-ttl forever\n");
	ck_assert_int_eq(rebuild_reload(w.b, w.conf), 0);
	wait_done(w.base, &w.got);
	r = w.got.r;
	ck_assert_int_eq(r->reload, 1);
	ck_assert_int_eq(r->rc, -1);
	ck_assert_ptr_null(r->local);
	ck_assert_ptr_nonnull(r->errors);
	ck_assert_msg(strstr(r->errors, "dnsdamper.conf:1: ") != NULL, "%s",
	    r->errors);
	rebuild_result_free(r);
	world_free(&w);
}
END_TEST

static void
on_released(void *arg)
{
	(*(int *)arg)++;
}

START_TEST(hosts_built_again_for_the_snapshot)
{
	struct timeval tick = { 0, 10000 };
	struct world w;
	struct rebuild_result *r;
	struct snapshot *snap;
	int i, released;

	world_init(&w, "192.0.2.1 a.test\n");
	ck_assert_int_eq(rebuild_reload(w.b, w.conf), 0);
	wait_done(w.base, &w.got);
	r = w.got.r;
	ck_assert_int_eq(r->rc, 0);
	ck_assert_ptr_nonnull(snap = snapshot_new(&r->conf, NULL, r->local));
	r->local = NULL;
	rebuild_result_free(r);
	ck_assert(!localzone_table_changed(snap->local));
	testutil_write(w.dir, "hosts", "192.0.2.2 b.test\n");
	ck_assert(localzone_table_changed(snap->local));
	w.got.calls = 0;
	ck_assert_int_eq(rebuild_hosts(w.b, snap), 0);
	errno = 0;
	ck_assert_int_eq(rebuild_hosts(w.b, snap), -1);
	ck_assert_int_eq(errno, EBUSY);
	wait_done(w.base, &w.got);
	r = w.got.r;
	ck_assert_int_eq(r->reload, 0);
	ck_assert_int_eq(r->rc, 0);
	ck_assert_ptr_eq(r->snap, snap);
	ck_assert(has(r->local, B_TEST, sizeof(B_TEST), 1));
	ck_assert(!has(r->local, A_TEST, sizeof(A_TEST), 1));
	ck_assert(!localzone_table_changed(r->local));
	rebuild_result_free(r);
	/* main's last reference, dropped on the thread, then said */
	released = 0;
	rebuild_release(w.b, snap, on_released, &released);
	rebuild_release(w.b, NULL, on_released, &released);
	for (i = 0; i < 6000 && released < 2; i++) {
		event_base_loopexit(w.base, &tick);
		ck_assert_int_ne(event_base_dispatch(w.base), -1);
	}
	ck_assert_int_eq(released, 2);
	ck_assert_uint_eq(w.got.calls, 1);
	world_free(&w);
}
END_TEST

START_TEST(freed_with_a_build_running)
{
	struct world w;

	world_init(&w, "192.0.2.1 a.test\n");
	ck_assert_int_eq(rebuild_reload(w.b, w.conf), 0);
	/* the result, made or not, is freed; done is never called */
	world_free(&w);
	ck_assert_uint_eq(w.got.calls, 0);
	rebuild_free(NULL);
	rebuild_result_free(NULL);
}
END_TEST

static Suite *
rebuild_suite(void)
{
	Suite *s = suite_create("rebuild");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, reload_built_and_handed_back);
	tcase_add_test(tc, bad_config_refused_with_its_errors);
	tcase_add_test(tc, hosts_built_again_for_the_snapshot);
	tcase_add_test(tc, freed_with_a_build_running);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(rebuild_suite());
}
