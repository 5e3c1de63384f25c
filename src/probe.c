/* probe.c: whom to probe (down upstreams, loop checks) and what to ask. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define LOOP_LABEL_LEN	16	/* hex digits of 64 random bits */

/* The question (qname, IN, qtype) in q. */
static void
question_set(struct msg_question *q, const uint8_t *qname, size_t qname_len,
    uint16_t qtype)
{
	memcpy(q->qname, qname, qname_len);
	q->qname_len = (uint8_t)qname_len;
	q->qtype = qtype;
	q->qclass = MSG_CLASS_IN;
}

/* Probe down upstream u, met first in zone z, with its two questions. */
static void
probe_upstream(struct zone_table *zones, struct zone *z, struct upstream *u,
    uint64_t now, probe_send_fn send, void *arg)
{
	struct msg_question soa, fq;
	struct zone *fz;

	question_set(&soa, z->name, z->name_len, MSG_TYPE_SOA);
	send(arg, u, z, &soa, now);
	if (!upstream_failed_question(u, &fq))
		return;
	fz = zone_find(zones, fq.qname, fq.qname_len, fq.qtype);
	if (fz != NULL && zone_uses(fz, u))
		send(arg, u, fz, &fq, now);
}

void
probe_down(struct zone_table *zones, uint64_t now, probe_send_fn send,
    void *arg)
{
	struct zone *z;
	size_t i, j;

	if (!upstream_any_down(zone_table_registry(zones)))
		return;
	for (i = 0; i < zone_count(zones); i++) {
		z = zone_at(zones, i);
		for (j = 0; j < z->n_upstreams; j++)
			if (upstream_probe_due(z->upstreams[j], now))
				probe_upstream(zones, z, z->upstreams[j], now,
				    send, arg);
	}
}

int
probe_loop_due(struct upstream *u, const struct zone *z,
    struct msg_question *q)
{
	static const uint8_t test[] = "\4test";
	uint8_t name[MSG_NAME_MAX];
	const uint8_t *suffix = z->name;
	size_t suffix_len = z->name_len, len;
	uint32_t r[2];

	if (!upstream_loop_unchecked(u))
		return 0;
	if (suffix_len == 1) {
		suffix = test;
		suffix_len = sizeof(test);
	}
	if (1 + LOOP_LABEL_LEN + suffix_len > MSG_NAME_MAX)
		return 0;
	arc4random_buf(r, sizeof(r));
	name[0] = LOOP_LABEL_LEN;
	len = 1 + (size_t)snprintf((char *)name + 1, sizeof(name) - 1,
	    "%08x%08x", r[0], r[1]);
	memcpy(name + len, suffix, suffix_len);
	question_set(q, name, len + suffix_len, MSG_TYPE_TXT);
	return 1;
}
