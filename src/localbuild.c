/* localbuild.c: the table of local zones built from a configuration. */
#include "autoconf.h"

#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "config.h"
#include "hosts.h"
#include "localbuild.h"
#include "localzone.h"
#include "log.h"
#include "msg.h"
#include "wire.h"
#include "zone.h"

static const struct config_local_zone *
configured_zone(const struct config *conf, const char *zone)
{
	size_t i;

	for (i = 0; i < conf->n_local_zones; i++)
		if (strcmp(conf->local_zones[i].zone, zone) == 0)
			return &conf->local_zones[i];
	return NULL;
}

static int
forwarded_zone(const struct config *conf, const char *zone)
{
	size_t i;

	for (i = 0; i < conf->n_forwards; i++)
		if (strcmp(conf->forwards[i].zone, zone) == 0)
			return 1;
	return 0;
}

/* local-zone directives, then the defaults they and forwards leave. */
static void
zones_add(struct localzone_table *t, const struct config *conf)
{
	static const enum localzone_type types[] = {
		[CONFIG_LOCAL_STATIC] = LOCALZONE_TYPE_STATIC,
		[CONFIG_LOCAL_NXDOMAIN] = LOCALZONE_TYPE_NXDOMAIN,
		[CONFIG_LOCAL_REFUSE] = LOCALZONE_TYPE_REFUSE,
		[CONFIG_LOCAL_TRANSPARENT] = LOCALZONE_TYPE_TRANSPARENT
	};
	const struct config_local_zone *lz;
	const char *const *d;
	uint8_t name[MSG_NAME_MAX];
	size_t i, len;

	for (i = 0; i < conf->n_local_zones; i++) {
		lz = &conf->local_zones[i];
		if (lz->type != CONFIG_LOCAL_NODEFAULT &&
		    zone_name_to_wire(lz->zone, name, &len) == 0)
			localzone_add_zone(t, name, len, lz->zone,
			    types[lz->type], LOCALZONE_LOCAL_ZONE, &lz->where);
	}
	for (d = config_default_local_zones; *d != NULL; d++) {
		if (configured_zone(conf, *d) != NULL ||
		    forwarded_zone(conf, *d) ||
		    zone_name_to_wire(*d, name, &len) == -1)
			continue;
		localzone_add_zone(t, name, len, *d,
		    strcmp(*d, "localhost.") == 0 ? LOCALZONE_TYPE_REDIRECT :
		    LOCALZONE_TYPE_STATIC, LOCALZONE_DEFAULT, NULL);
	}
}

/* A forward zone below a default zone is forwarded, not served empty. */
static void
forwards_add(struct localzone_table *t, const struct config *conf)
{
	const struct config_forward *fw;
	const struct localzone_zone *z;
	uint8_t name[MSG_NAME_MAX];
	size_t i, len, off;

	for (i = 0; i < conf->n_forwards; i++) {
		fw = &conf->forwards[i];
		if (zone_name_to_wire(fw->zone, name, &len) == -1)
			continue;
		z = localzone_closest(t, name, len, &off);
		if (z != NULL && z->rule == LOCALZONE_DEFAULT)
			localzone_add_zone(t, name, len, fw->zone,
			    LOCALZONE_TYPE_TRANSPARENT, LOCALZONE_FORWARD,
			    &fw->where);
	}
}

/* The records of local-data, as ldns reads them. */
static void
local_data_add(struct localzone_table *t, const struct config *conf)
{
	const struct config_local_data *ld;
	struct localzone_origin o = { LOCALZONE_LOCAL_DATA, NULL, 0 };
	uint8_t owner[MSG_NAME_MAX], *wire = NULL;
	size_t i, size, olen;
	ldns_rr *rr;

	for (i = 0; i < conf->n_local_data && !localzone_table_failed(t); i++) {
		ld = &conf->local_data[i];
		if (ldns_rr_new_frm_str(&rr, ld->rr, LDNS_DEFAULT_TTL, NULL,
		    NULL) != LDNS_STATUS_OK) {
			localzone_table_fail(t, EINVAL);
			return;
		}
		/* Owner, type, class, TTL, rdlength, then the rdata. */
		olen = ldns_rdf_size(ldns_rr_owner(rr));
		if (ldns_rr2wire(&wire, rr, LDNS_SECTION_ANSWER, &size) ==
		    LDNS_STATUS_OK && olen <= MSG_NAME_MAX &&
		    size >= olen + MSG_RR_FIXED_LEN) {
			memcpy(owner, wire, olen);
			msg_name_fold(owner, olen);
			o.file = localzone_keep_file(t, ld->where.file);
			o.line = ld->where.line;
			localzone_add_record(t, owner, olen, ld->type,
			    ldns_rr_ttl(rr) > INT32_MAX ? 0 : ldns_rr_ttl(rr),
			    wire + olen + MSG_RR_FIXED_LEN,
			    size - olen - MSG_RR_FIXED_LEN, &o);
		} else
			localzone_table_fail(t, ENOMEM);
		free(wire);
		wire = NULL;
		ldns_rr_free(rr);
	}
}

/* The wire form of a hosts file name (checked by hosts.c: labels of 1
 * to 63 octets without escapes, 255 octets at most), folded or as
 * written; returns its length. */
static size_t
host_wire(const char *str, uint8_t *out, int fold)
{
	const char *label = str, *dot;
	size_t n = 0, len;

	while (*label != '\0') {
		dot = strchr(label, '.');
		len = dot != NULL ? (size_t)(dot - label) : strlen(label);
		out[n++] = (uint8_t)len;
		memcpy(out + n, label, len);
		n += len;
		label += len + (dot != NULL);
	}
	out[n++] = 0;
	if (fold)
		msg_name_fold(out, n);
	return n;
}

/* The reverse name of an address (RFC 1035 §3.5, RFC 3596 §2.5). */
static size_t
reverse_name(const struct hosts_line *l, uint8_t *out)
{
	static const uint8_t v4[] = "\7in-addr\4arpa", v6[] = "\3ip6\4arpa";
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	int i;

	if (l->family == AF_INET) {
		for (i = 3; i >= 0; i--) {
			out[n] = (uint8_t)snprintf((char *)out + n + 1, 4, "%u",
			    l->addr[i]);
			n += 1 + out[n];
		}
		memcpy(out + n, v4, sizeof(v4));
		return n + sizeof(v4);
	}
	for (i = 15; i >= 0; i--) {
		out[n++] = 1;
		out[n++] = (uint8_t)hex[l->addr[i] & 0xf];
		out[n++] = 1;
		out[n++] = (uint8_t)hex[l->addr[i] >> 4];
	}
	memcpy(out + n, v6, sizeof(v6));
	return n + sizeof(v6);
}

/* Reading the hosts files into a table. */
struct hosts_reading {
	struct localzone_table	*t;
	const char		*file;		/* kept by the table */
};

/*
 * A hosts file line: A or AAAA for each name, PTR to the first name for
 * the address unless the address already has a PTR (an earlier line, or
 * local-data).
 */
static void
hosts_line_add(void *arg, const struct hosts_line *l)
{
	struct hosts_reading *hr = arg;
	struct localzone_origin o = { LOCALZONE_HOSTS_FILE, hr->file, l->line };
	uint8_t name[MSG_NAME_MAX], rev[MSG_NAME_MAX], target[MSG_NAME_MAX];
	const struct localzone_node *node;
	uint16_t type = l->family == AF_INET ? MSG_TYPE_A : MSG_TYPE_AAAA;
	size_t i, len, rlen;

	for (i = 0; i < l->n_names; i++) {
		len = host_wire(l->names[i], name, 1);
		localzone_add_record(hr->t, name, len, type,
		    LOCALZONE_TTL_HOSTS, l->addr, type == MSG_TYPE_A ? 4 : 16,
		    &o);
	}
	rlen = reverse_name(l, rev);
	node = localzone_find(hr->t, rev, rlen);
	if (node != NULL && localzone_node_type(node, MSG_TYPE_PTR) != NULL)
		return;
	len = host_wire(l->names[0], target, 0);
	localzone_add_record(hr->t, rev, rlen, MSG_TYPE_PTR,
	    LOCALZONE_TTL_HOSTS, target, len, &o);
}

static void
hosts_warn(void *arg, const char *msg)
{
	(void)arg;
	log_warnx("hosts-file %s", msg);
}

static void
hosts_add(struct localzone_table *t, const struct config *conf)
{
	struct hosts_reading hr = { t, NULL };
	struct hosts_stamp stamp;
	size_t i;

	for (i = 0; i < conf->n_hosts_files && !localzone_table_failed(t);
	    i++) {
		hr.file = localzone_keep_file(t, conf->hosts_files[i]);
		(void)hosts_read(conf->hosts_files[i], &stamp, hosts_line_add,
		    hosts_warn, &hr);
		localzone_watch(t, conf->hosts_files[i], &stamp);
	}
}

/*
 * A name with records that no zone encloses is a zone of its own, for
 * its name only (transparent): in its name's presentation form.
 */
static void
names_add(struct localzone_table *t)
{
	const struct localzone_node *node;
	const struct localzone_zone *z;
	const uint8_t *name;
	char str[1024];
	size_t i, len, off;

	for (i = 0; i < localzone_table_nodes(t) &&
	    !localzone_table_failed(t); i++) {
		node = localzone_table_node(t, i);
		if (localzone_node_rrsets(node) == 0 ||
		    localzone_node_zone(node) != NULL)
			continue;
		name = localzone_node_name(node, &len);
		z = localzone_closest(t, name, len, &off);
		if (z != NULL && z->rule != LOCALZONE_NAME)
			continue;
		localzone_add_zone(t, name, len, msg_name_to_str(name, len,
		    str, sizeof(str)), LOCALZONE_TYPE_TRANSPARENT,
		    LOCALZONE_NAME, NULL);
	}
}

/*
 * A made-up SOA record's rdata for a zone, RFC 6303 §3's: MNAME the
 * zone's name, RNAME nobody.invalid., then serial, refresh, retry, expire
 * and minimum (RFC 1035 §3.3.13: 32 bits each).
 */
#define SOA_RNAME	"\6nobody\7invalid"
#define SOA_RDATA_MAX	(MSG_NAME_MAX + sizeof(SOA_RNAME) + 5 * 4)

static size_t
soa_rdata(const uint8_t *apex, size_t len, uint32_t minimum, uint8_t *out)
{
	static const uint8_t rname[] = SOA_RNAME;
	size_t n = len;

	memcpy(out, apex, len);
	memcpy(out + n, rname, sizeof(rname));
	n += sizeof(rname);
	n += wire_wr32(out + n, 1);		/* serial */
	n += wire_wr32(out + n, 3600);		/* refresh */
	n += wire_wr32(out + n, 1200);		/* retry */
	n += wire_wr32(out + n, 604800);	/* expire */
	n += wire_wr32(out + n, minimum);
	return n;
}

/* The TTL of what a zone makes up: its records' own for a name's. */
static uint32_t
zone_ttl(const struct localzone_node *node)
{
	uint32_t ttl = LOCALZONE_TTL_CONFIG;
	size_t i;

	switch (localzone_node_zone(node)->rule) {
	case LOCALZONE_DEFAULT:
		return LOCALZONE_TTL_DEFAULT;
	case LOCALZONE_LOCAL_ZONE:
		return LOCALZONE_TTL_CONFIG;
	case LOCALZONE_NAME:
		for (i = 0; i < localzone_node_rrsets(node); i++)
			if (localzone_node_rrset(node, i)->ttl < ttl)
				ttl = localzone_node_rrset(node, i)->ttl;
		return ttl;
	default:
		return LOCALZONE_TTL_HOSTS;
	}
}

/* The built-in records of the localhost names (RFC 6761 §6.3). */
static void
loopback_add(struct localzone_table *t)
{
	static const struct {
		const char	*zone;
		const char	*name;
		uint16_t	 type;
		uint8_t		 len;
		uint8_t		 rdata[16];
	} recs[] = {
		{ "localhost.", "localhost.", MSG_TYPE_A, 4, { 127, 0, 0, 1 } },
		{ "localhost.", "localhost.", MSG_TYPE_AAAA, 16, { [15] = 1 } },
		{ "127.in-addr.arpa.", "1.0.0.127.in-addr.arpa.", MSG_TYPE_PTR,
		  11, "\11localhost" },
		{ "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
		  "0.0.ip6.arpa.", "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
		  "0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.", MSG_TYPE_PTR, 11,
		  "\11localhost" },
	};
	struct localzone_origin o = { LOCALZONE_BUILT_IN, NULL, 0 };
	uint8_t zone[MSG_NAME_MAX], name[MSG_NAME_MAX];
	const struct localzone_zone *z;
	size_t i, zlen, len, off;

	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		if (zone_name_to_wire(recs[i].zone, zone, &zlen) == -1 ||
		    zone_name_to_wire(recs[i].name, name, &len) == -1)
			continue;
		z = localzone_closest(t, zone, zlen, &off);
		if (z != NULL && off == 0 && z->rule == LOCALZONE_DEFAULT)
			localzone_add_record(t, name, len, recs[i].type,
			    LOCALZONE_TTL_DEFAULT, recs[i].rdata, recs[i].len,
			    &o);
	}
}

/*
 * The SOA and NS of a static zone's name, made up (RFC 6303 §3) unless
 * local-data gave them; then every zone's SOA for negative answers.
 */
static void
soas_add(struct localzone_table *t)
{
	uint8_t rdata[SOA_RDATA_MAX];
	struct localzone_origin o = { LOCALZONE_BUILT_IN, NULL, 0 };
	const struct localzone_node *node;
	const struct localzone_zone *z;
	const uint8_t *name;
	size_t i, len, nlen;
	uint32_t ttl;

	for (i = 0; i < localzone_table_nodes(t) &&
	    !localzone_table_failed(t); i++) {
		node = localzone_table_node(t, i);
		z = localzone_node_zone(node);
		if (z == NULL || z->type == LOCALZONE_TYPE_REFUSE)
			continue;
		ttl = zone_ttl(node);
		/* the node's own copy: adding records leaves it in place */
		name = localzone_node_name(node, &nlen);
		len = soa_rdata(name, nlen, ttl, rdata);
		if (z->type == LOCALZONE_TYPE_STATIC ||
		    z->type == LOCALZONE_TYPE_REDIRECT) {
			localzone_add_record(t, name, nlen, MSG_TYPE_SOA, ttl,
			    rdata, len, &o);
			localzone_add_record(t, name, nlen, MSG_TYPE_NS, ttl,
			    name, nlen, &o);
		}
		localzone_set_soa(t, name, nlen, rdata, len, ttl);
	}
}

struct localzone_table *
localbuild_table(const struct config *conf)
{
	struct localzone_table *t;

	if ((t = localzone_table_empty()) == NULL)
		return NULL;
	zones_add(t, conf);
	forwards_add(t, conf);
	local_data_add(t, conf);
	hosts_add(t, conf);
	names_add(t);
	loopback_add(t);
	soas_add(t);
	return localzone_table_done(t);
}
