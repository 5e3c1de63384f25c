/*
 * check_cachedump.c: the /cache dump, line by line: each RR in
 * presentation format with its TTL as of the dump, and the entry's state.
 */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cache.h"
#include "cachedump.h"
#include "check_main.h"
#include "msg.h"
#include "testcache.h"
#include "testpkt.h"

#define T0	1000000		/* an arbitrary "now" at insertion, ms */

static const struct cache_limits limits = {
	.min_ttl = 0, .max_ttl = 86400, .max_negative_ttl = 3600,
	.failure_ttl = 5, .stale_max_age = 3600, .stale_answer_ttl = 30,
	.stale_refresh_interval = 30
};

static int
by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The dump of every slice at now, its lines sorted, into text. */
static void
dump_sorted(struct cache *c, uint64_t now, char *text, size_t size)
{
	struct evbuffer *b = evbuffer_new();
	char *all, *lines[16], *save, *line;
	uint64_t entries = 0;
	size_t n = 0, i, off = 0;
	unsigned s;

	for (s = 0; s < cache_slices(c); s++)
		entries += cachedump_slice(c, s, now, b);
	ck_assert_uint_eq(entries, 4);
	evbuffer_add(b, "", 1);
	all = strdup((char *)evbuffer_pullup(b, -1));
	for (line = strtok_r(all, "\n", &save); line != NULL && n < 16;
	    line = strtok_r(NULL, "\n", &save))
		lines[n++] = line;
	qsort(lines, n, sizeof(lines[0]), by_text);
	text[0] = '\0';
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, size - off, "%s\n",
		    lines[i]);
	free(all);
	evbuffer_free(b);
}

START_TEST(every_state)
{
	struct cache *c = cache_new(1 << 20, &limits);
	struct cache_key key;
	char text[2048];

	/* Asked and answered in mixed case (0x20): dumped as clients see
	 * it, folded, the owner name being compressed to the question. */
	ck_assert_int_eq(testcache_store(c, "WWW.Example.", LDNS_RR_TYPE_A,
	    testpkt_response("WWW.Example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|WWW.Example. 300 IN A 192.0.2.1", NULL), T0), 0);
	/* RFC 2308 §5: the SOA's TTL is min(600, MINIMUM 120) = 120. */
	ck_assert_int_eq(testcache_store(c, "nx.example.", LDNS_RR_TYPE_A,
	    testpkt_response("nx.example.", LDNS_RR_TYPE_A,
	    LDNS_RCODE_NXDOMAIN, 0, "ns|example. 600 IN SOA ns.example. "
	    "host.example. 1 7200 3600 86400 120", NULL), T0), 0);
	ck_assert_int_eq(testcache_store(c, "old.example.", LDNS_RR_TYPE_A,
	    testpkt_response("old.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|old.example. 1 IN A 192.0.2.2", NULL), T0), 0);
	/* RFC 9520: a failure, cached failure-ttl 5 s. */
	testcache_key(c, "bad.example.", LDNS_RR_TYPE_AAAA, &key);
	cache_refresh_failed(c, &key, T0);
	/*
	 * 2.5 s later: 2 whole seconds off each TTL (300 -> 298, 120 ->
	 * 118); the 1 s answer expired 1.5 s ago, stale with TTL 0; the
	 * failure has 2.5 s left, 2 in whole seconds.
	 */
	dump_sorted(c, T0 + 2500, text, sizeof(text));
	ck_assert_str_eq(text,
	    "; failure bad.example. AAAA 2s\n"
	    "example.\t118\tIN\tSOA\tns.example. host.example. 1 7200 3600 "
	    "86400 120\t; nxdomain, nx.example. A\n"
	    "old.example.\t0\tIN\tA\t192.0.2.2\t; stale 1s, old.example. A\n"
	    "www.example.\t298\tIN\tA\t192.0.2.1\t; fresh, www.example. A\n");
	cache_free(c);
}
END_TEST

static Suite *
cachedump_suite(void)
{
	Suite *s = suite_create("cachedump");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_state);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main_run(cachedump_suite());
}
