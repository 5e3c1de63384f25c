/*
 * localzone.h: what is answered locally, and by which rule: the zones of
 * local-zone, the zones served by default (config_default_local_zones:
 * RFC 6761, RFC 6303, RFC 7793, RFC 8375, RFC 7686), the records of
 * local-data and of the hosts files. One table is built from a
 * configuration (localbuild.h, through the functions of "Filling" below),
 * immutable once built, shared by reference and swapped
 * whole on reload or when a hosts file changes, like the forward zone
 * table. A lookup walks the qname's labels from the root down with one
 * hash probe per label, and stops at the first label that nothing local
 * is at or below: for most names, after one probe.
 *
 * Precedence, for a qname:
 * - the closest enclosing local zone decides (longest label-wise suffix);
 * - a local-zone of the same name replaces a default zone, and so does a
 *   forward zone of the same name; a forward zone below a default zone is
 *   forwarded (the default keeps the rest), as if it were a transparent
 *   local-zone; a forward zone below a configured local-zone is not used;
 * - records of local-data and the hosts files answer for their name in a
 *   static, transparent or default zone (so a hosts file line for
 *   192.0.2.7 answers its PTR inside the default 2.0.192.in-addr.arpa.),
 *   but not in an nxdomain or refuse zone; per type, they replace the
 *   records a default zone has of its own (its SOA, NS, localhost's
 *   addresses);
 * - a name with records in no local zone is local for that name only: it
 *   answers its records, NODATA for the other types, and the names below
 *   it are forwarded.
 */
#ifndef DNSDAMPER_LOCALZONE_H
#define DNSDAMPER_LOCALZONE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "hosts.h"

/* TTLs in seconds of what a local zone makes up itself. */
#define LOCALZONE_TTL_DEFAULT	10800	/* default zones: RFC 6303 §3 */
#define LOCALZONE_TTL_CONFIG	3600	/* local-zone: local-data's TTL
					 * when none is given */
#define LOCALZONE_TTL_HOSTS	0	/* hosts-file records: an edit of
					 * the file shows at once (as
					 * dnsmasq's local-ttl) */

/* How a zone answers the names at and below it. */
enum localzone_type {
	LOCALZONE_TYPE_STATIC,	/* its records, else NXDOMAIN or NODATA */
	LOCALZONE_TYPE_NXDOMAIN, /* NXDOMAIN for every name */
	LOCALZONE_TYPE_REFUSE,	/* REFUSED for every name */
	LOCALZONE_TYPE_TRANSPARENT, /* its records, else forwarded */
	LOCALZONE_TYPE_REDIRECT	/* localhost. (RFC 6761 §6.3): every name
				 * below answers as the zone's name */
};

/* Why a zone is there. */
enum localzone_rule {
	LOCALZONE_DEFAULT,	/* served by default */
	LOCALZONE_LOCAL_ZONE,	/* a local-zone directive */
	LOCALZONE_NAME,		/* a name with records outside every zone:
				 * transparent, for that name only */
	LOCALZONE_FORWARD	/* a forward zone below a default zone:
				 * transparent */
};

/* Where records came from. */
enum localzone_source {
	LOCALZONE_BUILT_IN,	/* a default zone's own */
	LOCALZONE_HOSTS_FILE,
	LOCALZONE_LOCAL_DATA
};

/* One RRset: its records' rdata in wire format, names uncompressed. */
struct localzone_rrset {
	uint16_t		 type;		/* host order */
	uint32_t		 ttl;		/* seconds */
	uint16_t		 n;		/* records */
	uint8_t			*rdata;		/* owned: n times rdlength
						 * (2 octets) then rdata */
	size_t			 rdata_len;
	enum localzone_source	 source;	/* of its first record */
	const char		*file;		/* of its first record, owned
						 * by the table; NULL if
						 * built in */
	int			 line;
};

struct localzone_zone {
	enum localzone_type	 type;
	enum localzone_rule	 rule;
	char			*name;		/* owned, "10.in-addr.arpa." */
	const char		*file;		/* of its local-zone or forward
						 * directive, owned by the
						 * table; else NULL */
	int			 line;
	const struct localzone_rrset *soa;	/* for negative answers: of
						 * its name's records, else made
						 * up (RFC 6303 §3: ZONE
						 * nobody.invalid. 1 3600 1200
						 * 604800 TTL); NULL for a
						 * refuse zone */
};

/* A name of the table: a zone's, a name with records, or one above them. */
struct localzone_node;

struct localzone_table;

/* What the table says about a question. */
enum localzone_verdict {
	LOCALZONE_NONE,		/* not local: the cache, then forward zones */
	LOCALZONE_ANSWER,	/* rrset (or, for ANY, every RRset of node) */
	LOCALZONE_NODATA,	/* NOERROR without records, the zone's SOA */
	LOCALZONE_NXDOMAIN,	/* the zone's SOA */
	LOCALZONE_REFUSED
};

struct localzone_result {
	enum localzone_verdict	 verdict;
	const struct localzone_zone *zone;	/* the closest enclosing zone
						 * (it decided), or NULL */
	size_t			 zone_off;	/* its name's offset in qname */
	const struct localzone_node *node;	/* the name whose records
						 * answered (ANSWER), or NULL */
	const struct localzone_rrset *rrset;	/* ANSWER: the RRset; NULL:
						 * every RRset of node (ANY) */
	const struct localzone_rrset *cause;	/* a record of the name that
						 * made it local (ANSWER,
						 * NODATA at such a name), or
						 * NULL */
};

/* localzone_table_ref / unref: share a table (between threads too: the
 * count is atomic); the last unref frees it. unref(NULL) is fine. */
struct localzone_table *localzone_table_ref(struct localzone_table *t);
void	localzone_table_unref(struct localzone_table *t);

/*
 * localzone_table_changed: 1 if a hosts file t was built from is not as it
 * was when read (hosts_stamp_same; one stat(2) per file), so that t should
 * be built again; else 0.
 */
int	localzone_table_changed(const struct localzone_table *t);

/* localzone_table_names: how many names t holds records of local-data or
 * a hosts file for, for logs. */
size_t	localzone_table_names(const struct localzone_table *t);

/*
 * localzone_lookup: what t says about qtype (host order) at qname
 * (uncompressed wire, folded to lower case (RFC 4343), qname_len octets,
 * class IN), into *res (everything in it lives as long as t). A CNAME at
 * qname answers any other qtype (the client follows it, RFC 1034
 * §3.6.2). DS at the name of a forward zone below a default zone is the
 * default zone's to answer (RFC 4035 §5: DS is the parent side's).
 */
void	localzone_lookup(const struct localzone_table *t,
	    const uint8_t *qname, size_t qname_len, uint16_t qtype,
	    struct localzone_result *res);

/*
 * localzone_node_rrset: the i-th RRset of node (i below
 * localzone_node_rrsets), for answers to ANY.
 */
size_t	localzone_node_rrsets(const struct localzone_node *node);
const struct localzone_rrset *localzone_node_rrset(
	    const struct localzone_node *node, size_t i);

/* The words for a type, a rule, a source, a verdict: static strings
 * ("static", "default", "hosts-file", "NXDOMAIN"...). */
const char *localzone_type_name(enum localzone_type type);
const char *localzone_rule_name(enum localzone_rule rule);
const char *localzone_source_name(enum localzone_source source);
const char *localzone_verdict_name(enum localzone_verdict verdict);

/*
 * Filling a table (localbuild.c does, from a configuration). Every
 * function below that adds marks the table failed with ENOMEM when out
 * of memory, and localzone_table_done then frees it. Names are in
 * uncompressed wire format, folded to lower case, len octets.
 */

/* Where a record comes from. */
struct localzone_origin {
	enum localzone_source	 source;
	const char		*file;	/* kept by the table
					 * (localzone_keep_file), or NULL */
	int			 line;
};

/*
 * localzone_table_empty: a table with nothing in it and one reference.
 * Returns NULL when out of memory.
 */
struct localzone_table *localzone_table_empty(void);

/*
 * localzone_table_done: the end of filling t: t, or, if filling it failed
 * (localzone_table_failed), NULL with errno set to that error and t
 * freed.
 */
struct localzone_table *localzone_table_done(struct localzone_table *t);

/*
 * localzone_table_fail: mark t failed with err, an errno value.
 * localzone_table_failed: that value, or 0 while nothing failed.
 */
void	localzone_table_fail(struct localzone_table *t, int err);
int	localzone_table_failed(const struct localzone_table *t);

/*
 * localzone_keep_file: a copy of file, kept by t for zones and records
 * to borrow as long as t lives (one per name); NULL when out of memory.
 */
const char *localzone_keep_file(struct localzone_table *t,
	    const char *file);

/*
 * localzone_add_zone: a zone at name (str: its presentation form,
 * copied) of type and rule, given at where (kept when where->line > 0;
 * where may be NULL), unless a zone is at name already.
 */
void	localzone_add_zone(struct localzone_table *t, const uint8_t *name,
	    size_t len, const char *str, enum localzone_type type,
	    enum localzone_rule rule, const struct config_where *where);

/*
 * localzone_add_record: a record at owner of type (host order), ttl
 * (seconds) and rdata (rdlen octets, names uncompressed), from o, into
 * the RRset of its type at that name, which takes the smaller TTL (RFC
 * 2181 §5.2: one TTL per RRset). A record the RRset holds already is not
 * added again, nor one past 65535 records. Built-in records (o->source
 * LOCALZONE_BUILT_IN) only fill a type that nothing else gave the name.
 * A node got from t before may move; its name stays in place.
 */
void	localzone_add_record(struct localzone_table *t, const uint8_t *owner,
	    size_t len, uint16_t type, uint32_t ttl, const uint8_t *rdata,
	    size_t rdlen, const struct localzone_origin *o);

/*
 * localzone_set_soa: the SOA that the zone at name (there must be one)
 * gives in negative answers: its name's SOA RRset if it has one, else a
 * record of its own made of rdata (rdlen octets) and ttl (seconds).
 */
void	localzone_set_soa(struct localzone_table *t, const uint8_t *name,
	    size_t len, const uint8_t *rdata, size_t rdlen, uint32_t ttl);

/*
 * localzone_watch: t was built from the hosts file at path as it was at
 * *stamp (copied), for localzone_table_changed.
 */
void	localzone_watch(struct localzone_table *t, const char *path,
	    const struct hosts_stamp *stamp);

/*
 * localzone_closest: the closest zone of t at or above name, and in *off
 * the offset of its name in name (0: at name); NULL (*off 0) if none.
 */
const struct localzone_zone *localzone_closest(
	    const struct localzone_table *t, const uint8_t *name, size_t len,
	    size_t *off);

/* localzone_find: the node of t at name, or NULL. */
const struct localzone_node *localzone_find(const struct localzone_table *t,
	    const uint8_t *name, size_t len);

/*
 * localzone_table_nodes, localzone_table_node: how many names t holds
 * (zones', records', and the names above them), and the i-th, in the
 * order they were added; valid until the next name is added.
 */
size_t	localzone_table_nodes(const struct localzone_table *t);
const struct localzone_node *localzone_table_node(
	    const struct localzone_table *t, size_t i);

/*
 * localzone_node_name: node's name, its length in *len (valid as long as
 * the table). localzone_node_zone: the zone at node's name, or NULL.
 * localzone_node_type: node's RRset of type (host order), or NULL.
 */
const uint8_t *localzone_node_name(const struct localzone_node *node,
	    size_t *len);
const struct localzone_zone *localzone_node_zone(
	    const struct localzone_node *node);
const struct localzone_rrset *localzone_node_type(
	    const struct localzone_node *node, uint16_t type);

#endif
