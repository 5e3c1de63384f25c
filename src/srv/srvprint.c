/* srvprint.c: dnsdamper-srv's text lines and JSON object. */
#include "autoconf.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "srvprint.h"

/* The address of ss, without its port, into buf. */
static const char *
address(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ?
	    (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
	    (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (inet_ntop(ss->ss_family, a, buf, (socklen_t)len) == NULL)
		return "?";
	return buf;
}

void
srvprint_text(FILE *fp, const struct srvprint_report *r)
{
	const struct srvresolve_candidate *c;
	const struct srvconnect_attempt *a;
	char buf[INET6_ADDRSTRLEN];
	size_t i, j;

	for (i = 0; i < r->res->ncand; i++) {
		c = &r->res->cand[i];
		if (r->naptr)
			fprintf(fp, "%s ", c->protocol);
		if (c->via == SRVRESOLVE_VIA_SRV)
			fprintf(fp, "%u %u", c->priority, c->weight);
		else
			fprintf(fp, "- -");
		fprintf(fp, " %u %s", c->port, c->target);
		for (j = 0; j < c->naddrs; j++)
			fprintf(fp, " %s", address(&c->addrs[j], buf,
			    sizeof(buf)));
		fprintf(fp, "\n");
	}
	for (i = 0; i < r->nattempts; i++) {
		a = &r->attempts[i];
		fprintf(fp, "attempt %s %s %u %s\n", a->cand->target,
		    address(a->addr, buf, sizeof(buf)), a->cand->port,
		    srvconnect_name(a->result));
	}
	if ((a = r->selected) != NULL)
		fprintf(fp, "selected %s %s %u\n", a->cand->target,
		    address(a->addr, buf, sizeof(buf)), a->cand->port);
}

/* s as a JSON string (RFC 8259 §7), or null. */
static void
json_string(FILE *fp, const char *s)
{
	const unsigned char *p;

	if (s == NULL) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(fp, "\\u%04x", *p);
		else
			fputc(*p, fp);
	fputc('"', fp);
}

static void
json_candidate(FILE *fp, const struct srvresolve_candidate *c, int naptr)
{
	char buf[INET6_ADDRSTRLEN];
	size_t j;

	if (c->via == SRVRESOLVE_VIA_SRV)
		fprintf(fp, "{\"priority\": %u, \"weight\": %u", c->priority,
		    c->weight);
	else
		fprintf(fp, "{\"priority\": null, \"weight\": null");
	fprintf(fp, ", \"port\": %u, \"target\": ", c->port);
	json_string(fp, c->target);
	fprintf(fp, ", \"addresses\": [");
	for (j = 0; j < c->naddrs; j++) {
		fputs(j > 0 ? ", " : "", fp);
		json_string(fp, address(&c->addrs[j], buf, sizeof(buf)));
	}
	fprintf(fp, "], \"cname\": ");
	json_string(fp, c->cname);
	if (naptr) {
		fprintf(fp, ", \"protocol\": ");
		json_string(fp, c->protocol);
	}
	fprintf(fp, "}");
}

/* {"target": ..., "address": ..., "port": ...} of an attempt, and more. */
static void
json_attempt(FILE *fp, const struct srvconnect_attempt *a, int result)
{
	char buf[INET6_ADDRSTRLEN];

	fprintf(fp, "{\"target\": ");
	json_string(fp, a->cand->target);
	fprintf(fp, ", \"address\": ");
	json_string(fp, address(a->addr, buf, sizeof(buf)));
	fprintf(fp, ", \"port\": %u", a->cand->port);
	if (result) {
		fprintf(fp, ", \"result\": ");
		json_string(fp, srvconnect_name(a->result));
	}
	fprintf(fp, "}");
}

void
srvprint_json(FILE *fp, const struct srvprint_report *r)
{
	size_t i;

	fprintf(fp, "{\"status\": ");
	json_string(fp, r->status);
	fprintf(fp, ", \"candidates\": [");
	for (i = 0; i < r->res->ncand; i++) {
		fputs(i > 0 ? ", " : "", fp);
		json_candidate(fp, &r->res->cand[i], r->naptr);
	}
	fprintf(fp, "], \"attempts\": [");
	for (i = 0; i < r->nattempts; i++) {
		fputs(i > 0 ? ", " : "", fp);
		json_attempt(fp, &r->attempts[i], 1);
	}
	fprintf(fp, "], \"selected\": ");
	if (r->selected != NULL)
		json_attempt(fp, r->selected, 0);
	else
		fputs("null", fp);
	fprintf(fp, "}\n");
}
