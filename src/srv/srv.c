/* srv.c: RFC 2782 try order of an SRV RRset: priority, then weighted draw. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dnsdamper/srv.h"

int
srv_is_root(const char *name)
{
	return strcmp(name, ".") == 0;
}

int
srv_unavailable(const struct srv_rr *rrs, size_t n)
{
	return n == 1 && srv_is_root(rrs[0].target);
}

static int
ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

int
srv_casecmp(const char *a, const char *b, size_t n)
{
	const unsigned char *p = (const unsigned char *)a;
	const unsigned char *q = (const unsigned char *)b;

	for (; n > 0; n--, p++, q++)
		if (*p == '\0' || ascii_lower(*p) != ascii_lower(*q))
			return ascii_lower(*p) - ascii_lower(*q);
	return 0;
}

static int
cmp_u16(uint16_t a, uint16_t b)
{
	return a < b ? -1 : a > b;
}

static int
canonical_cmp(const void *va, const void *vb)
{
	const struct srv_rr *a = va, *b = vb;
	int c;

	if ((c = cmp_u16(a->priority, b->priority)) != 0)
		return c;
	if ((a->weight == 0) != (b->weight == 0))
		return a->weight == 0 ? -1 : 1;
	if ((c = srv_casecmp(a->target, b->target, SIZE_MAX)) != 0)
		return c;
	if ((c = cmp_u16(a->port, b->port)) != 0)
		return c;
	return cmp_u16(a->weight, b->weight);
}

/*
 * A uniform value in [0, range), range >= 1, without modulo bias: values
 * below 2^64 mod range are drawn again (OpenBSD's arc4random_uniform).
 */
static uint64_t
uniform(const struct srv_random *rnd, uint64_t range)
{
	uint64_t floor = -range % range, r;

	do
		r = rnd->next(rnd->state);
	while (r < floor);
	return r % range;
}

/*
 * RFC 2782 leaves the order among weight-0 records open. In canonical
 * order every host would try the same one first whenever a priority has
 * only weight-0 records; a Fisher-Yates shuffle of each priority's
 * weight-0 block (rrs[i..n) is sorted) spreads them as a server's
 * rotation would, from the same random source, so a seed still fixes it.
 */
static void
shuffle_weight_zero(struct srv_rr *rrs, size_t n,
    const struct srv_random *rnd)
{
	struct srv_rr tmp;
	size_t i = 0, k, j;

	while (i < n) {
		for (k = i; k < n && rrs[k].priority == rrs[i].priority &&
		    rrs[k].weight == 0; k++)
			;
		for (; k > i + 1; k--) {
			j = i + uniform(rnd, k - i);
			tmp = rrs[k - 1];
			rrs[k - 1] = rrs[j];
			rrs[j] = tmp;
		}
		while (++i < n && rrs[i].priority == rrs[i - 1].priority)
			;
	}
}

void
srv_iter_init(struct srv_iter *it, struct srv_rr *rrs, size_t n,
    const struct srv_random *rnd)
{
	it->rrs = rrs;
	it->n = n;
	it->next = 0;
	it->rnd = *rnd;
	if (n > 1) {
		qsort(rrs, n, sizeof(*rrs), canonical_cmp);
		shuffle_weight_zero(rrs, n, &it->rnd);
	}
}

/*
 * Choose the record for position it->next among the unordered records of
 * the lowest priority left, rrs[next..end), and move it there; the others
 * keep their canonical order, so the weight-0 ones stay at the head.
 */
static struct srv_rr *
draw(struct srv_iter *it)
{
	struct srv_rr *rrs = it->rrs, chosen;
	size_t i = it->next, end, j;
	uint64_t sum = 0, r, running = 0;

	for (end = i; end < it->n && rrs[end].priority == rrs[i].priority;
	    end++)
		sum += rrs[end].weight;
	r = uniform(&it->rnd, sum + 1);		/* inclusive: [0, sum] */
	for (j = i; j < end - 1; j++) {
		running += rrs[j].weight;
		if (running >= r)
			break;
	}
	chosen = rrs[j];
	memmove(&rrs[i + 1], &rrs[i], (j - i) * sizeof(*rrs));
	rrs[i] = chosen;
	it->next++;
	return &rrs[i];
}

const struct srv_rr *
srv_iter_next(struct srv_iter *it)
{
	struct srv_rr *rr;

	while (it->next < it->n) {
		rr = draw(it);
		if (!srv_is_root(rr->target))
			return rr;
	}
	return NULL;
}

void
srv_order(struct srv_rr *rrs, size_t n, const struct srv_random *rnd)
{
	struct srv_iter it;

	srv_iter_init(&it, rrs, n, rnd);
	while (it.next < it.n)
		draw(&it);
}
