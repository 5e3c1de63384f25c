/* upstream.c: the registry of upstream servers, their health and order. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "upstream.h"

static struct upstream *registry;
static uint32_t timeout_min = 50, timeout_max = 2000;

struct upstream *
upstream_get(const struct addr *a)
{
	struct upstream *u;

	for (u = registry; u != NULL; u = u->next)
		if (addr_equal(&u->addr, a)) {
			u->refs++;
			return u;
		}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	u->addr = *a;
	addr_format(a, u->name, sizeof(u->name));
	u->refs = 1;
	rtt_init(&u->rtt, timeout_min, timeout_max);
	u->next = registry;
	registry = u;
	return u;
}

void
upstream_unref(struct upstream *u)
{
	struct upstream **pp;

	if (u == NULL || --u->refs > 0)
		return;
	for (pp = &registry; *pp != NULL; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	free(u);
}

void
upstream_set_timeouts(uint32_t min_ms, uint32_t max_ms)
{
	struct upstream *u;

	timeout_min = min_ms;
	timeout_max = max_ms;
	for (u = registry; u != NULL; u = u->next)
		rtt_clamp(&u->rtt, min_ms, max_ms);
}

uint32_t
upstream_rto(const struct upstream *u)
{
	return u->rtt.rto;
}

void
upstream_answered(struct upstream *u, uint32_t rtt_ms)
{
	rtt_sample(&u->rtt, rtt_ms, timeout_min, timeout_max);
	u->fails = 0;
}

void
upstream_failed(struct upstream *u)
{
	u->fails++;
}

void
upstream_timed_out(struct upstream *u, uint32_t used_ms)
{
	rtt_timeout(&u->rtt, used_ms, timeout_min, timeout_max);
	u->fails++;
}

void
upstream_no_case(struct upstream *u)
{
	if (!u->no_case)
		log_warnx("upstream %s does not preserve the case of "
		    "questions; not using 0x20 with it", u->name);
	u->no_case = 1;
}

size_t
upstream_order(struct upstream *const *pool, size_t n,
    enum config_policy policy, struct upstream **out)
{
	struct upstream *tmp;
	size_t i, j;

	memcpy(out, pool, n * sizeof(*out));
	if (policy == CONFIG_POLICY_RANDOM)
		for (i = n; i > 1; i--) {	/* Fisher-Yates */
			j = arc4random_uniform((uint32_t)i);
			tmp = out[i - 1];
			out[i - 1] = out[j];
			out[j] = tmp;
		}
	return n;
}
