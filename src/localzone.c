/* localzone.c: the table of local zones and records: filled, looked up. */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "hosts.h"
#include "localzone.h"
#include "msg.h"
#include "wire.h"

#define LABELS_MAX	128	/* labels of a 255-octet name, and more */
#define SLOT_EMPTY	UINT32_MAX
#define SLOTS_MIN	16	/* a power of two */

struct localzone_node {
	uint64_t		 hash;		/* suffix_hash of name */
	uint8_t			*name;		/* owned, wire, folded */
	size_t			 name_len;
	struct localzone_zone	*zone;		/* owned; at a zone's name */
	struct localzone_rrset	*rrsets;	/* owned array */
	size_t			 n_rrsets;
};

/* A zone and what only it owns: a made-up SOA, when its name has none. */
struct zone_own {
	struct localzone_zone	 pub;
	struct localzone_rrset	 soa;
};

/* A hosts file as it was read. */
struct hosts_file {
	char			*path;		/* owned */
	struct hosts_stamp	 stamp;
};

struct localzone_table {
	unsigned		 refs;
	int			 failed;	/* while built: ENOMEM, or
						 * EINVAL for local-data that
						 * does not parse */
	uint64_t		 seed;		/* of every name's hash */
	struct localzone_node	*nodes;		/* owned array */
	size_t			 n_nodes;
	size_t			 cap_nodes;
	uint32_t		*slots;		/* owned: indices into nodes,
						 * open addressing, at most
						 * half full */
	size_t			 mask;		/* slots - 1 */
	uint64_t		 tlds[4];	/* a bit per tld_bit() of the
						 * last label of every name */
	size_t			 root;		/* index of the node of ".",
						 * or SIZE_MAX */
	char			**files;	/* owned: the file names that
						 * zones and records borrow */
	size_t			 n_files;
	struct hosts_file	*hosts;		/* owned array */
	size_t			 n_hosts;
};

/* The walk of a qname down the table. */
struct walk {
	const struct localzone_node *zone_node;	/* the closest zone's, or
						 * NULL */
	size_t			 zone_off;	/* its name's offset */
	const struct localzone_node *above;	/* the closest zone's above
						 * that one, or NULL */
	size_t			 above_off;
	const struct localzone_node *exact;	/* qname's own, or NULL */
};

/*
 * Names are hashed from the root down, a label at a time (FNV-1a from the
 * table's random seed), so that a walk down a qname hashes each suffix in
 * one step from the one above it.
 */
static uint64_t
label_hash(uint64_t h, const uint8_t *label)
{
	return fnv1a64(h, label, (size_t)label[0] + 1);
}

/* The offsets of the labels of name (well formed), first label first;
 * returns how many (the root label not counted). */
static size_t
name_labels(const uint8_t *name, size_t len, uint8_t *offs)
{
	size_t n = 0, off = 0;

	while (off < len && name[off] != 0) {
		offs[n++] = (uint8_t)off;
		off += (size_t)name[off] + 1;
	}
	return n;
}

/*
 * A name's last label, its length and first and last octets, as one of
 * 256 bits: most qnames end in a label no local name ends in, and this
 * tells so before any hashing.
 */
static unsigned
tld_bit(const uint8_t *label)
{
	return (unsigned)(label[0] * 7 + label[1] * 3 + label[label[0]]) &
	    255;
}

static size_t
slot_of(const struct localzone_table *t, uint64_t h)
{
	return (size_t)(h ^ (h >> 31)) & t->mask;
}

static const struct localzone_node *
node_find(const struct localzone_table *t, uint64_t h, const uint8_t *name,
    size_t len)
{
	const struct localzone_node *n;
	uint32_t idx;
	size_t i;

	for (i = slot_of(t, h); (idx = t->slots[i]) != SLOT_EMPTY;
	    i = (i + 1) & t->mask) {
		n = &t->nodes[idx];
		if (n->hash == h && n->name_len == len &&
		    memcmp(n->name, name, len) == 0)
			return n;
	}
	return NULL;
}

static void
walk(const struct localzone_table *t, const uint8_t *qname, size_t len,
    struct walk *w)
{
	const struct localzone_node *node;
	uint8_t offs[LABELS_MAX];
	uint64_t h = t->seed;
	size_t n = name_labels(qname, len, offs), i = n;
	unsigned tld;

	memset(w, 0, sizeof(*w));
	if (t->root != SIZE_MAX) {
		node = &t->nodes[t->root];
		if (node->zone != NULL) {
			w->zone_node = node;
			w->zone_off = len - 1;
		}
		if (n == 0)
			w->exact = node;
	}
	if (n > 0) {
		tld = tld_bit(qname + offs[n - 1]);
		if ((t->tlds[tld / 64] & 1ULL << (tld % 64)) == 0)
			return;
	}
	while (i-- > 0) {
		h = label_hash(h, qname + offs[i]);
		if ((node = node_find(t, h, qname + offs[i],
		    len - offs[i])) == NULL)
			return;
		if (node->zone != NULL) {
			w->above = w->zone_node;
			w->above_off = w->zone_off;
			w->zone_node = node;
			w->zone_off = offs[i];
		}
		if (i == 0)
			w->exact = node;
	}
}

/* --- filling --------------------------------------------------------- */

/* Twice the slots, every node placed again. */
static int
slots_grow(struct localzone_table *t)
{
	size_t n = (t->mask + 1) * 2, i, j;
	uint32_t *slots;

	if ((slots = malloc(n * sizeof(*slots))) == NULL)
		return -1;
	memset(slots, 0xff, n * sizeof(*slots));
	free(t->slots);
	t->slots = slots;
	t->mask = n - 1;
	for (i = 0; i < t->n_nodes; i++) {
		for (j = slot_of(t, t->nodes[i].hash); slots[j] != SLOT_EMPTY;
		    j = (j + 1) & t->mask)
			;
		slots[j] = (uint32_t)i;
	}
	return 0;
}

/* The index of the node of name (hash h), added if new; -1 if no memory. */
static long
node_add(struct localzone_table *t, uint64_t h, const uint8_t *name,
    size_t len)
{
	const struct localzone_node *found;
	struct localzone_node *nodes, *n;
	size_t i;

	if ((found = node_find(t, h, name, len)) != NULL)
		return found - t->nodes;
	if ((t->n_nodes + 1) * 2 > t->mask + 1 && slots_grow(t) == -1)
		return -1;
	if (t->n_nodes == t->cap_nodes) {
		nodes = reallocarray(t->nodes, t->cap_nodes * 2 + 16,
		    sizeof(*nodes));
		if (nodes == NULL)
			return -1;
		t->nodes = nodes;
		t->cap_nodes = t->cap_nodes * 2 + 16;
	}
	n = &t->nodes[t->n_nodes];
	memset(n, 0, sizeof(*n));
	if ((n->name = malloc(len)) == NULL)
		return -1;
	memcpy(n->name, name, len);
	n->name_len = len;
	n->hash = h;
	for (i = slot_of(t, h); t->slots[i] != SLOT_EMPTY;
	    i = (i + 1) & t->mask)
		;
	t->slots[i] = (uint32_t)t->n_nodes;
	if (len == 1)
		t->root = t->n_nodes;
	else if ((size_t)name[0] + 2 == len)
		t->tlds[tld_bit(name) / 64] |= 1ULL << (tld_bit(name) % 64);
	return (long)t->n_nodes++;
}

/*
 * The node of name (wire, folded), added with every name above it but the
 * root, so that a walk stops where nothing is below; NULL if no memory.
 * Valid until the next node is added.
 */
static struct localzone_node *
node_get(struct localzone_table *t, const uint8_t *name, size_t len)
{
	uint8_t offs[LABELS_MAX];
	uint64_t h = t->seed;
	size_t i = name_labels(name, len, offs);
	long idx = 0;

	if (i == 0)
		idx = node_add(t, h, name, len);
	while (idx != -1 && i-- > 0) {
		h = label_hash(h, name + offs[i]);
		idx = node_add(t, h, name + offs[i], len - offs[i]);
	}
	if (idx == -1) {
		t->failed = ENOMEM;
		return NULL;
	}
	return &t->nodes[idx];
}

const char *
localzone_keep_file(struct localzone_table *t, const char *file)
{
	char **files;
	size_t i;

	for (i = t->n_files; i-- > 0;)
		if (strcmp(t->files[i], file) == 0)
			return t->files[i];
	files = reallocarray(t->files, t->n_files + 1, sizeof(*files));
	if (files == NULL || (files[t->n_files] = strdup(file)) == NULL) {
		if (files != NULL)
			t->files = files;
		t->failed = ENOMEM;
		return NULL;
	}
	t->files = files;
	return files[t->n_files++];
}

static struct localzone_rrset *
rrset_of(const struct localzone_node *node, uint16_t type)
{
	size_t i;

	for (i = 0; i < node->n_rrsets; i++)
		if (node->rrsets[i].type == type)
			return &node->rrsets[i];
	return NULL;
}

/* Add one record's rdata to rs, unless it holds the same already. */
static int
rrset_append(struct localzone_rrset *rs, const uint8_t *rdata, size_t len)
{
	size_t off, l;
	uint8_t *p;

	for (off = 0; off < rs->rdata_len; off += 2 + l) {
		l = wire_rd16(rs->rdata + off);
		if (l == len && memcmp(rs->rdata + off + 2, rdata, len) == 0)
			return 0;
	}
	if (rs->n == UINT16_MAX)
		return 0;
	if ((p = realloc(rs->rdata, rs->rdata_len + 2 + len)) == NULL)
		return -1;
	wire_wr16(p + rs->rdata_len, (uint16_t)len);
	memcpy(p + rs->rdata_len + 2, rdata, len);
	rs->rdata = p;
	rs->rdata_len += 2 + len;
	rs->n++;
	return 0;
}

void
localzone_add_record(struct localzone_table *t, const uint8_t *owner,
    size_t len, uint16_t type, uint32_t ttl, const uint8_t *rdata,
    size_t rdlen, const struct localzone_origin *o)
{
	struct localzone_node *node;
	struct localzone_rrset *rs, *sets;

	if ((node = node_get(t, owner, len)) == NULL)
		return;
	if ((rs = rrset_of(node, type)) != NULL &&
	    o->source == LOCALZONE_BUILT_IN && rs->source != o->source)
		return;
	if (rs == NULL) {
		sets = reallocarray(node->rrsets, node->n_rrsets + 1,
		    sizeof(*sets));
		if (sets == NULL) {
			t->failed = ENOMEM;
			return;
		}
		node->rrsets = sets;
		rs = &sets[node->n_rrsets++];
		memset(rs, 0, sizeof(*rs));
		rs->type = type;
		rs->ttl = ttl;
		rs->source = o->source;
		rs->file = o->file;
		rs->line = o->line;
	}
	if (ttl < rs->ttl)
		rs->ttl = ttl;
	if (rrset_append(rs, rdata, rdlen) == -1)
		t->failed = ENOMEM;
}

void
localzone_add_zone(struct localzone_table *t, const uint8_t *name,
    size_t len, const char *str, enum localzone_type type,
    enum localzone_rule rule, const struct config_where *where)
{
	struct localzone_node *node;
	struct zone_own *z;

	if ((node = node_get(t, name, len)) == NULL || node->zone != NULL)
		return;
	if ((z = calloc(1, sizeof(*z))) == NULL ||
	    (z->pub.name = strdup(str)) == NULL) {
		free(z);
		t->failed = ENOMEM;
		return;
	}
	z->pub.type = type;
	z->pub.rule = rule;
	if (where != NULL && where->line > 0) {
		z->pub.file = localzone_keep_file(t, where->file);
		z->pub.line = where->line;
	}
	node->zone = &z->pub;
}

void
localzone_set_soa(struct localzone_table *t, const uint8_t *name,
    size_t len, const uint8_t *rdata, size_t rdlen, uint32_t ttl)
{
	struct localzone_node *node;
	struct zone_own *z;
	struct walk w;

	walk(t, name, len, &w);
	node = &t->nodes[w.exact - t->nodes];
	z = (struct zone_own *)node->zone;
	if ((z->pub.soa = rrset_of(node, MSG_TYPE_SOA)) != NULL)
		return;
	z->soa.type = MSG_TYPE_SOA;
	z->soa.ttl = ttl;
	z->soa.source = LOCALZONE_BUILT_IN;
	if (rrset_append(&z->soa, rdata, rdlen) == -1)
		t->failed = ENOMEM;
	z->pub.soa = &z->soa;
}

void
localzone_watch(struct localzone_table *t, const char *path,
    const struct hosts_stamp *stamp)
{
	struct hosts_file *hosts;

	hosts = reallocarray(t->hosts, t->n_hosts + 1, sizeof(*hosts));
	if (hosts == NULL) {
		t->failed = ENOMEM;
		return;
	}
	t->hosts = hosts;
	if ((hosts[t->n_hosts].path = strdup(path)) == NULL) {
		t->failed = ENOMEM;
		return;
	}
	hosts[t->n_hosts++].stamp = *stamp;
}

void
localzone_table_fail(struct localzone_table *t, int err)
{
	t->failed = err;
}

int
localzone_table_failed(const struct localzone_table *t)
{
	return t->failed;
}

const struct localzone_zone *
localzone_closest(const struct localzone_table *t, const uint8_t *name,
    size_t len, size_t *off)
{
	struct walk w;

	walk(t, name, len, &w);
	*off = w.zone_off;
	return w.zone_node != NULL ? w.zone_node->zone : NULL;
}

const struct localzone_node *
localzone_find(const struct localzone_table *t, const uint8_t *name,
    size_t len)
{
	struct walk w;

	walk(t, name, len, &w);
	return w.exact;
}

size_t
localzone_table_nodes(const struct localzone_table *t)
{
	return t->n_nodes;
}

const struct localzone_node *
localzone_table_node(const struct localzone_table *t, size_t i)
{
	return &t->nodes[i];
}

const uint8_t *
localzone_node_name(const struct localzone_node *node, size_t *len)
{
	*len = node->name_len;
	return node->name;
}

const struct localzone_zone *
localzone_node_zone(const struct localzone_node *node)
{
	return node->zone;
}

const struct localzone_rrset *
localzone_node_type(const struct localzone_node *node, uint16_t type)
{
	return rrset_of(node, type);
}

static void
table_free(struct localzone_table *t)
{
	struct localzone_node *node;
	struct zone_own *z;
	size_t i, j;

	for (i = 0; i < t->n_nodes; i++) {
		node = &t->nodes[i];
		for (j = 0; j < node->n_rrsets; j++)
			free(node->rrsets[j].rdata);
		free(node->rrsets);
		free(node->name);
		if ((z = (struct zone_own *)node->zone) != NULL) {
			free(z->pub.name);
			free(z->soa.rdata);
			free(z);
		}
	}
	for (i = 0; i < t->n_files; i++)
		free(t->files[i]);
	for (i = 0; i < t->n_hosts; i++)
		free(t->hosts[i].path);
	free(t->hosts);
	free(t->files);
	free(t->nodes);
	free(t->slots);
	free(t);
}

struct localzone_table *
localzone_table_empty(void)
{
	struct localzone_table *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->refs = 1;
	t->root = SIZE_MAX;
	arc4random_buf(&t->seed, sizeof(t->seed));
	if ((t->slots = malloc(SLOTS_MIN * sizeof(*t->slots))) == NULL) {
		free(t);
		return NULL;
	}
	memset(t->slots, 0xff, SLOTS_MIN * sizeof(*t->slots));
	t->mask = SLOTS_MIN - 1;
	return t;
}

struct localzone_table *
localzone_table_done(struct localzone_table *t)
{
	int err;

	if ((err = t->failed) != 0) {
		table_free(t);
		errno = err;
		return NULL;
	}
	return t;
}

struct localzone_table *
localzone_table_ref(struct localzone_table *t)
{
	(void)__atomic_fetch_add(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

void
localzone_table_unref(struct localzone_table *t)
{
	/* Release, and acquire by the last: all uses before the free. */
	if (t != NULL && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) ==
	    0)
		table_free(t);
}

int
localzone_table_changed(const struct localzone_table *t)
{
	struct hosts_stamp now;
	size_t i;

	for (i = 0; i < t->n_hosts; i++) {
		hosts_stamp_get(t->hosts[i].path, &now);
		if (!hosts_stamp_same(&t->hosts[i].stamp, &now))
			return 1;
	}
	return 0;
}

size_t
localzone_table_names(const struct localzone_table *t)
{
	const struct localzone_node *node;
	size_t i, j, n = 0;

	for (i = 0; i < t->n_nodes; i++) {
		node = &t->nodes[i];
		for (j = 0; j < node->n_rrsets; j++)
			if (node->rrsets[j].source != LOCALZONE_BUILT_IN) {
				n++;
				break;
			}
	}
	return n;
}

/* The records of node for qtype: its RRset, its CNAME, or none. */
static void
answer_from(const struct localzone_node *node, uint16_t qtype,
    struct localzone_result *res)
{
	const struct localzone_rrset *rs = NULL;

	res->cause = &node->rrsets[0];
	if (qtype != MSG_TYPE_ANY && (rs = rrset_of(node, qtype)) == NULL &&
	    qtype != MSG_TYPE_CNAME)
		rs = rrset_of(node, MSG_TYPE_CNAME);
	if (rs == NULL && qtype != MSG_TYPE_ANY) {
		res->verdict = LOCALZONE_NODATA;
		return;
	}
	res->verdict = LOCALZONE_ANSWER;
	res->node = node;
	res->rrset = rs;
	if (rs != NULL)
		res->cause = rs;
}

void
localzone_lookup(const struct localzone_table *t, const uint8_t *qname,
    size_t qname_len, uint16_t qtype, struct localzone_result *res)
{
	const struct localzone_node *data;
	const struct localzone_zone *z;
	struct walk w;

	memset(res, 0, sizeof(*res));
	walk(t, qname, qname_len, &w);
	/*
	 * DS at a forward zone's name is the parent side's (RFC 4035 §5):
	 * below a default zone, that is the default zone, served here.
	 */
	if (qtype == MSG_TYPE_DS && w.zone_node != NULL &&
	    w.zone_node == w.exact &&
	    w.zone_node->zone->rule == LOCALZONE_FORWARD) {
		w.zone_node = w.above;
		w.zone_off = w.above_off;
	}
	if (w.zone_node == NULL)
		return;
	z = res->zone = w.zone_node->zone;
	res->zone_off = w.zone_off;
	if (z->type == LOCALZONE_TYPE_REFUSE) {
		res->verdict = LOCALZONE_REFUSED;
		return;
	}
	if (z->type == LOCALZONE_TYPE_NXDOMAIN) {
		res->verdict = LOCALZONE_NXDOMAIN;
		return;
	}
	data = w.exact;
	if (z->type == LOCALZONE_TYPE_REDIRECT && (data == NULL ||
	    data->n_rrsets == 0))
		data = w.zone_node;
	if (data != NULL && data->n_rrsets > 0)
		answer_from(data, qtype, res);
	else if (z->type != LOCALZONE_TYPE_TRANSPARENT)
		/* An empty non-terminal is a name too (RFC 8020 §2). */
		res->verdict = w.exact != NULL ? LOCALZONE_NODATA :
		    LOCALZONE_NXDOMAIN;
}

size_t
localzone_node_rrsets(const struct localzone_node *node)
{
	return node->n_rrsets;
}

const struct localzone_rrset *
localzone_node_rrset(const struct localzone_node *node, size_t i)
{
	return &node->rrsets[i];
}

const char *
localzone_type_name(enum localzone_type type)
{
	static const char *const names[] = { "static", "nxdomain", "refuse",
	    "transparent", "redirect" };

	return names[type];
}

const char *
localzone_rule_name(enum localzone_rule rule)
{
	static const char *const names[] = { "default", "local-zone", "name",
	    "forward" };

	return names[rule];
}

const char *
localzone_source_name(enum localzone_source source)
{
	static const char *const names[] = { "built-in", "hosts-file",
	    "local-data" };

	return names[source];
}

const char *
localzone_verdict_name(enum localzone_verdict verdict)
{
	static const char *const names[] = { "none", "answer", "NODATA",
	    "NXDOMAIN", "REFUSED" };

	return names[verdict];
}
