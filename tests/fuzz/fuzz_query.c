/*
 * fuzz_query.c: libFuzzer target of the client query path: one client
 * message through query_handle (parse, admission, local data, cache
 * lookup, answer or truncation, or a fetch that times out on the
 * scripted upstream and is answered SERVFAIL or stale), with every answer
 * checked by fuzzworld_check_answer.
 *
 * Input: one octet of flags, then the message as a client sent it. Flags:
 * bit 0 TCP (else UDP); bits 1-2 the client (127.0.0.1, 192.0.2.50, ::1,
 * 2001:db8::50: non-loopback clients get ANY's minimal answer over UDP);
 * bits 3-7 seconds since the cache was filled (0-31).
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "fuzzworld.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILLED	1000000000ULL	/* virtual ms the cache was filled at */

static const char *const peers[] = { "127.0.0.1:5300", "192.0.2.50:5300",
    "[::1]:5300", "[2001:db8::50]:5300" };

/* The world all inputs share, made once: libFuzzer's entry points have
 * no argument to pass it in. */
static struct fuzzworld world_made;
static struct fuzzworld *const world = &world_made;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzzworld_init(world, FUZZWORLD_CONF);
	fuzzworld_seed_cache(world, FILLED);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[QUERY_ANSWER_MAX];
	enum client_transport tr;
	struct fuzzclient fc;
	enum query_status st;
	uint64_t now;
	size_t len;

	if (size < 1)
		return 0;
	tr = data[0] & 1 ? CLIENT_TCP : CLIENT_UDP;
	now = FILLED + (uint64_t)(data[0] >> 3) * 1000;
	fuzzworld_begin(world, now);
	fuzzworld_client(&fc, tr, peers[data[0] >> 1 & 3], data + 1, size - 1);
	st = query_handle(&world->ctx, data + 1, size - 1, &fc.c, now, out,
	    sizeof(out), &len);
	if (st == QUERY_ANSWERED)
		fuzzworld_check_answer(data + 1, size - 1, out, len, tr);
	else if (st == QUERY_PENDING) {
		/* No upstream answers: every attempt times out. */
		testnet_pass(&world->net, 60000);
		(void)event_base_loop(world->ctx.base, EVLOOP_NONBLOCK);
	}
	if (fuzzworld_end(world))
		fuzzworld_reset_cache(world);
	ck_assert_int_eq(fc.held, 0);
	return 0;
}
