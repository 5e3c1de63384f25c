/* acl.c: network lists, read, printed, and compiled into address ranges. */
#include "autoconf.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "wire.h"

/* ::ffff:0:0/96, where IPv4 addresses map into IPv6 (RFC 4291 §2.5.5.2). */
static const uint8_t acl_v4mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/* The digits of a prefix length, at most max. */
static int
acl_len(const char *s, unsigned max, uint8_t *out)
{
	unsigned v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 +
		    (unsigned)(*s - '0')) > max)
			return -1;
	}
	*out = (uint8_t)v;
	return 0;
}

/* Clear the bits of net (n octets) past the first len; 1 if any was set. */
static int
acl_mask(uint8_t *net, size_t n, unsigned len)
{
	unsigned keep;
	uint8_t m;
	int was_set = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		keep = len >= 8 * (i + 1) ? 8 : len > 8 * i ? len - 8 * i : 0;
		m = (uint8_t)(0xff00 >> keep);
		was_set |= (net[i] & (uint8_t)~m) != 0;
		net[i] &= m;
	}
	return was_set;
}

int
acl_prefix_parse(const char *str, struct acl_prefix *out,
    const char **errstr)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(str, '/');
	size_t n = slash != NULL ? (size_t)(slash - str) : strlen(str);
	unsigned max;

	memset(out, 0, sizeof(*out));
	if (n < sizeof(host)) {
		memcpy(host, str, n);
		host[n] = '\0';
	}
	if (n < sizeof(host) && inet_pton(AF_INET, host, out->net) == 1)
		out->family = AF_INET;
	else if (n < sizeof(host) && inet_pton(AF_INET6, host, out->net) == 1)
		out->family = AF_INET6;
	else {
		*errstr = "not an IPv4 or IPv6 address";
		return -1;
	}
	max = out->family == AF_INET ? 32 : 128;
	out->len = (uint8_t)max;
	if (slash != NULL && acl_len(slash + 1, max, &out->len) == -1) {
		*errstr = out->family == AF_INET ? "the prefix length is not a "
		    "number from 0 to 32" : "the prefix length is not a number "
		    "from 0 to 128";
		out->family = 0;
		return -1;
	}
	if (out->family == AF_INET6 && out->len >= 96 &&
	    memcmp(out->net, acl_v4mapped, sizeof(acl_v4mapped)) == 0) {
		memmove(out->net, out->net + 12, 4);
		memset(out->net + 4, 0, 12);
		out->family = AF_INET;
		out->len -= 96;
	}
	if (acl_mask(out->net, out->family == AF_INET ? 4 : 16, out->len)) {
		*errstr = "bits are set past the prefix length";
		return -1;
	}
	return 0;
}

char *
acl_prefix_format(const struct acl_prefix *p, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (inet_ntop(p->family, p->net, host, sizeof(host)) == NULL)
		snprintf(host, sizeof(host), "?");
	snprintf(buf, len, "%s/%u", host, p->len);
	return buf;
}

int
acl_add(struct acl *acl, const struct acl_prefix *p)
{
	struct acl_prefix *n;

	if ((n = reallocarray(acl->prefixes, acl->n + 1, sizeof(*n))) == NULL)
		return -1;
	n[acl->n++] = *p;
	acl->prefixes = n;
	return 0;
}

int
acl_add_loopback(struct acl *acl)
{
	static const char *const loopback[] = { "127.0.0.0/8", "::1" };
	struct acl_prefix p;
	const char *errstr;
	size_t i;

	for (i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
		if (acl_prefix_parse(loopback[i], &p, &errstr) == -1 ||
		    acl_add(acl, &p) == -1)
			return -1;
	return 0;
}

static uint64_t
acl_rd64(const uint8_t *p)
{
	return (uint64_t)wire_rd32(p) << 32 | wire_rd32(p + 4);
}

static int
acl_cmp(const struct acl_u128 *a, const struct acl_u128 *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

/*
 * The addresses of p as a range. An IPv4 network is a number below 2^32,
 * its length counted as if it had 96 more leading bits, so that one
 * computation serves both families.
 */
static void
acl_range_of(const struct acl_prefix *p, struct acl_range *r)
{
	unsigned bits = p->family == AF_INET ? p->len + 96U : p->len;

	if (p->family == AF_INET) {
		r->lo.hi = 0;
		r->lo.lo = wire_rd32(p->net);
	} else {
		r->lo.hi = acl_rd64(p->net);
		r->lo.lo = acl_rd64(p->net + 8);
	}
	r->hi.hi = r->lo.hi | (bits >= 64 ? 0 : ~0ULL >> bits);
	r->hi.lo = r->lo.lo | (bits >= 128 ? 0 : bits <= 64 ? ~0ULL :
	    ~0ULL >> (bits - 64));
}

static int
acl_range_cmp(const void *a, const void *b)
{
	return acl_cmp(&((const struct acl_range *)a)->lo,
	    &((const struct acl_range *)b)->lo);
}

/* 1 if range b starts within a or right after it (so they join). */
static int
acl_joins(const struct acl_range *a, const struct acl_range *b)
{
	struct acl_u128 next = a->hi;

	if (++next.lo == 0 && ++next.hi == 0)
		return 1;	/* a ends at the last address */
	return acl_cmp(&b->lo, &next) <= 0;
}

/* Merge the sorted ranges r (n) in place; the number left. */
static size_t
acl_merge(struct acl_range *r, size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n; i++) {
		if (out > 0 && acl_joins(&r[out - 1], &r[i])) {
			if (acl_cmp(&r[i].hi, &r[out - 1].hi) > 0)
				r[out - 1].hi = r[i].hi;
		} else
			r[out++] = r[i];
	}
	return out;
}

/* 1 if x is in one of the sorted, disjoint ranges r (n of them). */
static int
acl_search(const struct acl_range *r, size_t n, const struct acl_u128 *x)
{
	size_t lo = 0, hi = n, mid;

	/* The first range starting after x: x can only be in the one before. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (acl_cmp(&r[mid].lo, x) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && acl_cmp(x, &r[lo - 1].hi) <= 0;
}

/* 1 if all of within is inside one range of r (n of them). */
static int
acl_covers(const struct acl_range *r, size_t n, const struct acl_range *within)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (acl_cmp(&r[i].lo, &within->lo) <= 0 &&
		    acl_cmp(&r[i].hi, &within->hi) >= 0)
			return 1;
	return 0;
}

/* 1 if some range of r (n of them) reaches outside within. */
static int
acl_outside(const struct acl_range *r, size_t n, const struct acl_range *within)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (acl_cmp(&r[i].lo, &within->lo) < 0 ||
		    acl_cmp(&r[i].hi, &within->hi) > 0)
			return 1;
	return 0;
}

/* The loopback networks as ranges: 127.0.0.0/8 and ::1/128. */
static void
acl_loopback_ranges(struct acl_range lb[ACL_FAMILIES])
{
	struct acl_prefix p;
	const char *errstr;

	(void)acl_prefix_parse("127.0.0.0/8", &p, &errstr);
	acl_range_of(&p, &lb[ACL_V4]);
	(void)acl_prefix_parse("::1", &p, &errstr);
	acl_range_of(&p, &lb[ACL_V6]);
}

static void
acl_free_ranges(struct acl *acl)
{
	int f;

	for (f = 0; f < ACL_FAMILIES; f++) {
		free(acl->ranges[f]);
		acl->ranges[f] = NULL;
		acl->n_ranges[f] = 0;
	}
	acl->loopback = acl->beyond_loopback = 0;
}

/* The ranges of family f of acl's prefixes, sorted and merged. */
static int
acl_compile_family(struct acl *acl, int f)
{
	struct acl_range *r;
	size_t i, n = 0;

	if (acl->n == 0)
		return 0;
	if ((r = calloc(acl->n, sizeof(*r))) == NULL)
		return -1;
	for (i = 0; i < acl->n; i++)
		if ((acl->prefixes[i].family == AF_INET) == (f == ACL_V4))
			acl_range_of(&acl->prefixes[i], &r[n++]);
	qsort(r, n, sizeof(*r), acl_range_cmp);
	acl->ranges[f] = r;
	acl->n_ranges[f] = acl_merge(r, n);
	return 0;
}

int
acl_compile(struct acl *acl)
{
	struct acl_range lb[ACL_FAMILIES];
	int f;

	acl_free_ranges(acl);
	acl_loopback_ranges(lb);
	acl->loopback = 1;
	for (f = 0; f < ACL_FAMILIES; f++) {
		if (acl_compile_family(acl, f) == -1) {
			acl_free_ranges(acl);
			return -1;
		}
		acl->loopback &= acl_covers(acl->ranges[f], acl->n_ranges[f],
		    &lb[f]);
		acl->beyond_loopback |= acl_outside(acl->ranges[f],
		    acl->n_ranges[f], &lb[f]);
	}
	return 0;
}

int
acl_match(const struct acl *acl, const struct addr *a)
{
	struct acl_u128 x;
	uint8_t host[16];
	int f;

	switch (addr_host(a, host)) {
	case AF_INET:
		/* Most clients of a per-host daemon: no search. */
		if (acl->loopback && host[0] == IN_LOOPBACKNET)
			return 1;
		x.hi = 0;
		x.lo = wire_rd32(host);
		f = ACL_V4;
		break;
	case AF_INET6:
		x.hi = acl_rd64(host);
		x.lo = acl_rd64(host + 8);
		if (acl->loopback && x.hi == 0 && x.lo == 1)
			return 1;
		f = ACL_V6;
		break;
	default:
		return 0;
	}
	return acl_search(acl->ranges[f], acl->n_ranges[f], &x);
}

void
acl_clear(struct acl *acl)
{
	acl_free_ranges(acl);
	free(acl->prefixes);
	acl->prefixes = NULL;
	acl->n = 0;
}
