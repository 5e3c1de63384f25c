/* srvanswer.c: reading one ldns answer: rcode class, CNAME chain, records. */
#include "autoconf.h"

#include <netinet/in.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "srvanswer.h"

/* Whether rr is a class IN record of type owned by owner. */
static int
is(const ldns_rr *rr, const ldns_rdf *owner, ldns_rr_type type)
{
	return ldns_rr_get_type(rr) == type &&
	    ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
	    ldns_dname_compare(ldns_rr_owner(rr), owner) == 0;
}

/* The records of section owned by owner with that type: a new list. */
static ldns_rr_list *
select_rrs(const ldns_rr_list *section, const ldns_rdf *owner,
    ldns_rr_type type)
{
	ldns_rr_list *out;
	size_t i;

	if ((out = ldns_rr_list_new()) == NULL)
		return NULL;
	for (i = 0; i < ldns_rr_list_rr_count(section); i++)
		if (is(ldns_rr_list_rr(section, i), owner, type) &&
		    !ldns_rr_list_push_rr(out, ldns_rr_list_rr(section, i))) {
			ldns_rr_list_free(out);
			return NULL;
		}
	return out;
}

/* The target of the CNAME owned by name in section, or NULL. */
static const ldns_rdf *
cname_of(const ldns_rr_list *section, const ldns_rdf *name)
{
	const ldns_rr *rr;
	size_t i;

	for (i = 0; i < ldns_rr_list_rr_count(section); i++) {
		rr = ldns_rr_list_rr(section, i);
		if (is(rr, name, LDNS_RR_TYPE_CNAME) && ldns_rr_rd_count(rr) == 1)
			return ldns_rr_rdf(rr, 0);
	}
	return NULL;
}

enum srvanswer_status
srvanswer_read(const ldns_pkt *pkt, const ldns_rdf *qname, ldns_rr_type qtype,
    const ldns_rdf **owner, ldns_rr_list **rrs)
{
	const ldns_rr_list *answer;
	const ldns_rdf *next;
	int links;

	*owner = qname;
	*rrs = NULL;
	if (pkt == NULL)
		return SRVANSWER_FAILED;
	answer = ldns_pkt_answer(pkt);
	if (qtype != LDNS_RR_TYPE_CNAME)
		for (links = 0; links < SRVANSWER_CHAIN_MAX &&
		    (next = cname_of(answer, *owner)) != NULL; links++)
			*owner = next;
	switch (ldns_pkt_get_rcode(pkt)) {
	case LDNS_RCODE_NXDOMAIN:
		return SRVANSWER_NXDOMAIN;
	case LDNS_RCODE_NOERROR:
		break;
	default:
		return SRVANSWER_FAILED;
	}
	if ((*rrs = select_rrs(answer, *owner, qtype)) == NULL)
		return SRVANSWER_FAILED;
	if (ldns_rr_list_rr_count(*rrs) == 0) {
		ldns_rr_list_free(*rrs);
		*rrs = NULL;
		return SRVANSWER_NODATA;
	}
	return SRVANSWER_OK;
}

ldns_rr_list *
srvanswer_additional(const ldns_pkt *pkt, const ldns_rdf *owner,
    ldns_rr_type type)
{
	ldns_rr_list *out;

	if ((out = select_rrs(ldns_pkt_additional(pkt), owner, type)) != NULL &&
	    ldns_rr_list_rr_count(out) == 0) {
		ldns_rr_list_free(out);
		out = NULL;
	}
	return out;
}

/* Whether rr's RDATA has n fields, of the given types in turn. */
static int
shaped(const ldns_rr *rr, const ldns_rdf_type *types, size_t n)
{
	size_t i;

	if (ldns_rr_rd_count(rr) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (ldns_rdf_get_type(ldns_rr_rdf(rr, i)) != types[i])
			return 0;
	return 1;
}

void *
srvanswer_srv(const ldns_rr *rr, struct srv_rr *out)
{
	static const ldns_rdf_type srv[] = { LDNS_RDF_TYPE_INT16,
	    LDNS_RDF_TYPE_INT16, LDNS_RDF_TYPE_INT16, LDNS_RDF_TYPE_DNAME };
	char *target;

	if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_SRV || !shaped(rr, srv, 4)) {
		errno = EINVAL;
		return NULL;
	}
	if ((target = ldns_rdf2str(ldns_rr_rdf(rr, 3))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	out->priority = ldns_rdf2native_int16(ldns_rr_rdf(rr, 0));
	out->weight = ldns_rdf2native_int16(ldns_rr_rdf(rr, 1));
	out->port = ldns_rdf2native_int16(ldns_rr_rdf(rr, 2));
	out->target = target;
	return target;
}

static int
srv_cmp(const void *va, const void *vb)
{
	const struct srv_rr *a = va, *b = vb;

	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->weight != b->weight)
		return a->weight < b->weight ? -1 : 1;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	return srv_casecmp(a->target, b->target, SIZE_MAX);
}

size_t
srvanswer_srv_unique(struct srv_rr *rrs, size_t n)
{
	size_t i, kept = 0;

	if (n < 2)
		return n;
	qsort(rrs, n, sizeof(*rrs), srv_cmp);
	for (i = 1; i < n; i++)
		if (srv_cmp(&rrs[kept], &rrs[i]) != 0)
			rrs[++kept] = rrs[i];
	return kept + 1;
}

/*
 * The character-string rdf (RFC 1035 §3.3: a length octet, then that many
 * octets) copied to *p as a C string; *p advances past it. -1 if it holds
 * a NUL, which a C string cannot carry.
 */
static int
copy_string(const ldns_rdf *rdf, char **p, const char **out)
{
	const uint8_t *d = ldns_rdf_data(rdf);
	size_t len = ldns_rdf_size(rdf) > 0 ? d[0] : 0;

	if (len + 1 > ldns_rdf_size(rdf) || memchr(d + 1, '\0', len) != NULL)
		return -1;
	memcpy(*p, d + 1, len);
	(*p)[len] = '\0';
	*out = *p;
	*p += len + 1;
	return 0;
}

void *
srvanswer_naptr(const ldns_rr *rr, struct srvnaptr_rr *out)
{
	static const ldns_rdf_type naptr[] = { LDNS_RDF_TYPE_INT16,
	    LDNS_RDF_TYPE_INT16, LDNS_RDF_TYPE_STR, LDNS_RDF_TYPE_STR,
	    LDNS_RDF_TYPE_STR, LDNS_RDF_TYPE_DNAME };
	char *replacement = NULL, *block = NULL, *p;
	size_t size;

	if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_NAPTR ||
	    !shaped(rr, naptr, 6))
		goto invalid;
	if ((replacement = ldns_rdf2str(ldns_rr_rdf(rr, 5))) == NULL)
		goto nomem;
	/* each string's length octet makes room for its NUL */
	size = ldns_rdf_size(ldns_rr_rdf(rr, 2)) +
	    ldns_rdf_size(ldns_rr_rdf(rr, 3)) +
	    ldns_rdf_size(ldns_rr_rdf(rr, 4)) + strlen(replacement) + 1;
	if ((block = p = malloc(size)) == NULL)
		goto nomem;
	if (copy_string(ldns_rr_rdf(rr, 2), &p, &out->flags) == -1 ||
	    copy_string(ldns_rr_rdf(rr, 3), &p, &out->services) == -1 ||
	    copy_string(ldns_rr_rdf(rr, 4), &p, &out->regexp) == -1)
		goto invalid;
	strcpy(p, replacement);
	out->replacement = p;
	out->order = ldns_rdf2native_int16(ldns_rr_rdf(rr, 0));
	out->preference = ldns_rdf2native_int16(ldns_rr_rdf(rr, 1));
	free(replacement);
	return block;
invalid:
	free(replacement);
	free(block);
	errno = EINVAL;
	return NULL;
nomem:
	free(replacement);
	errno = ENOMEM;
	return NULL;
}

int
srvanswer_address(const ldns_rr *rr, uint16_t port,
    struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	const ldns_rdf *rdf;

	memset(ss, 0, sizeof(*ss));
	if (ldns_rr_rd_count(rr) != 1) {
		errno = EINVAL;
		return -1;
	}
	rdf = ldns_rr_rdf(rr, 0);
	if (ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_A &&
	    ldns_rdf_size(rdf) == sizeof(sin->sin_addr)) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, ldns_rdf_data(rdf), sizeof(sin->sin_addr));
		*len = sizeof(*sin);
		return 0;
	}
	if (ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_AAAA &&
	    ldns_rdf_size(rdf) == sizeof(sin6->sin6_addr)) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, ldns_rdf_data(rdf),
		    sizeof(sin6->sin6_addr));
		*len = sizeof(*sin6);
		return 0;
	}
	errno = EINVAL;
	return -1;
}
