/*
 * fuzz_response.c: libFuzzer target of upstream response handling: a
 * client query that goes upstream, and the upstream's responses to each
 * query sent for it (validated against it, classified, TC -> TCP,
 * FORMERR -> no EDNS, SERVFAIL -> next server; cached; answered to every
 * waiting client), then the same question again, from the cache. Every
 * answer is checked by fuzzworld_check_answer, and every client must be
 * answered exactly once.
 *
 * Input: one octet of flags, then chunks of a two-octet length (big
 * endian) and that many octets: chunk i is the response to the i-th query
 * sent (over UDP or TCP), given the ID of that query; the first chunk's
 * question (when it reads as one) is what the clients ask, else
 * a.example. A. Flags: bit 0: the response's question is given that of
 * the query sent (its 0x20 case); bit 1: a second client, over TCP;
 * bit 2: the clients set DO; bit 3: without EDNS; bits 4-7: how many
 * times 100 ms pass before each response.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <event2/event.h>

#include "fuzzworld.h"
#include "msg.h"
#include "wire.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW	1000000000ULL	/* virtual ms */
#define CHUNKS	8

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
	return 0;
}

/* The question of the first chunk, or a.example. A. */
static void
question(const uint8_t *p, size_t len, struct msg_question *q)
{
	static const uint8_t a_example[] = "\1a\7example";
	uint16_t id;

	if (len >= 2 && msg_response_question(p + 2, wire_rd16(p) <= len - 2 ?
	    wire_rd16(p) : len - 2, &id, q) != -1)
		return;
	memcpy(q->qname, a_example, sizeof(a_example));
	q->qname_len = sizeof(a_example);
	q->qtype = 1;
	q->qclass = 1;
}

/* Chunk c (len octets) as the response to query s: its ID, and with
 * same_case its question as sent. */
static void
respond(struct transport_conn *s, const uint8_t *c, size_t len,
    int same_case)
{
	uint8_t pkt[MSG_MAX_LEN];
	size_t qlen = s->len;

	if (len > sizeof(pkt))
		len = sizeof(pkt);
	memcpy(pkt, c, len);
	if (len >= 2)
		memcpy(pkt, s->msg, 2);
	/* the question of the query sent: header to the end of QTYPE/QCLASS */
	if (same_case && qlen > MSG_HEADER_LEN) {
		struct msg_question q;
		uint16_t id;

		if (msg_response_question(pkt, len, &id, &q) != -1 &&
		    MSG_HEADER_LEN + (size_t)q.qname_len + 4 <= qlen)
			memcpy(pkt + MSG_HEADER_LEN, s->msg + MSG_HEADER_LEN,
			    q.qname_len);
	}
	testnet_deliver(s, pkt, len);
}

/* Let time pass until query i has been sent, for at most 10 s. */
static int
wait_sent(size_t i)
{
	int n;

	for (n = 0; n < 100 && world->net.n_sent <= i; n++)
		testnet_pass(&world->net, 100);
	return world->net.n_sent > i;
}

/* Ask q as a new client over tr; check an answer given at once. */
static enum query_status
ask(struct fuzzclient *fc, enum client_transport tr, uint8_t *qbuf,
    size_t qlen)
{
	uint8_t out[QUERY_ANSWER_MAX];
	enum query_status st;
	size_t len;

	fuzzworld_client(fc, tr, "127.0.0.1:5300", qbuf, qlen);
	st = query_handle(&world->ctx, qbuf, qlen, &fc->c, world->net.now,
	    out, sizeof(out), &len);
	if (st == QUERY_ANSWERED) {
		fuzzworld_check_answer(qbuf, qlen, out, len, tr);
		fc->sent++;
	}
	return st;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t q1[MSG_QUERY_MAX_LEN], q2[MSG_QUERY_MAX_LEN];
	struct fuzzclient c1, c2, c3;
	struct msg_question q;
	size_t off, len, i, n1, n2;
	uint8_t flags;
	uint16_t edns;

	if (size < 1)
		return 0;
	flags = data[0];
	edns = flags & 8 ? 0 : 1232;
	question(data + 1, size - 1, &q);
	fuzzworld_begin(world, NOW);
	n1 = fuzzworld_query(q1, 1, &q, edns, flags & 4);
	n2 = fuzzworld_query(q2, 2, &q, edns, flags & 4);
	(void)ask(&c1, CLIENT_UDP, q1, n1);
	if (flags & 2)
		(void)ask(&c2, CLIENT_TCP, q2, n2);
	for (off = 1, i = 0; i < CHUNKS && off + 2 <= size; i++, off += len) {
		len = wire_rd16(data + off);
		off += 2;
		if (len > size - off)
			len = size - off;
		testnet_pass(&world->net, (uint64_t)(flags >> 4) * 100);
		if (!wait_sent(i))
			break;
		if (world->net.sent[i].open)
			respond(&world->net.sent[i], data + off, len,
			    flags & 1);
		(void)event_base_loop(world->ctx.base, EVLOOP_NONBLOCK);
	}
	/* Whatever is still asked times out; every client has its answer. */
	testnet_pass(&world->net, 60000);
	(void)event_base_loop(world->ctx.base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(c1.sent, 1);
	ck_assert(!(flags & 2) || c2.sent == 1);
	/* Again, from what the cache made of it. */
	(void)ask(&c3, CLIENT_UDP, q1, n1);
	(void)fuzzworld_end(world);
	fuzzworld_empty_cache(world);
	ck_assert_int_eq(c1.held + c3.held, 0);
	ck_assert(!(flags & 2) || c2.held == 0);
	return 0;
}
