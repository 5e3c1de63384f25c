/*
 * fuzz_srv.c: libFuzzer target of libdnsdamper-srv's response handling:
 * an SRV lookup (srvresolve_srv) or an S-NAPTR walk (srvresolve_naptr)
 * whose every DNS answer comes from the input instead of a resolver:
 * the SRV and NAPTR RRsets, the CNAME chains, the additional sections,
 * the address answers of each target. The result must hold what
 * srvresolve.h promises, and is printed as dnsdamper-srv prints it.
 *
 * The input: one flags octet (bit 0: an S-NAPTR walk, else SRV; bits
 * 1-2: the address family asked, 0 AF_UNSPEC, 1 AF_INET, 2 AF_INET6;
 * bit 3: a default port for S-NAPTR "A" records), then the answers, each
 * a 16-bit length (network order) and that many octets of DNS message,
 * given to the questions in the order the library asks them. A question
 * past the input's answers is one that timed out; a message that ldns
 * does not read is one srvexchange would have dropped. No socket is
 * opened: this file's srvexchange_run stands in for srvexchange.c's.
 */
#include "autoconf.h"

#include <sys/socket.h>

#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "check.h"
#include "dnsdamper/srvnaptr.h"
#include "dnsdamper/srvrand.h"
#include "dnsdamper/srvresolve.h"
#include "srvexchange.h"
#include "srvprint.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SRV_QNAME	"_sip._tcp.example."
#define NAPTR_DOMAIN	"example."
#define NAPTR_SERVICE	"SIP"
#define DEFAULT_PORT	5060

/* What is left of the input's answers; one input at a time. */
static const uint8_t *next;
static size_t left;
static size_t questions;
static FILE *devnull;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ck_assert_ptr_nonnull(devnull = fopen("/dev/null", "w"));
	return 0;
}

/* srvexchange_run (srvexchange.h) answered from the input. */
int
srvexchange_run(const struct sockaddr_storage *server, socklen_t len,
    unsigned timeout_ms, struct srvexchange_query *q, size_t n)
{
	size_t i, mlen;

	(void)server;
	(void)len;
	(void)timeout_ms;
	for (i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(q[i].qname);
		q[i].answer = NULL;
		questions++;
		if (left < 2)
			continue;
		mlen = (size_t)next[0] << 8 | next[1];
		if (mlen > left - 2)
			mlen = left - 2;
		if (ldns_wire2pkt(&q[i].answer, next + 2, mlen) !=
		    LDNS_STATUS_OK)
			q[i].answer = NULL;
		next += 2 + mlen;
		left -= 2 + mlen;
	}
	return 0;
}

static uint16_t
default_port(void *arg, const char *protocol)
{
	(void)arg;
	return strcmp(protocol, "D2T") == 0 || strcmp(protocol, "D2U") == 0 ?
	    DEFAULT_PORT : 0;
}

/* What srvresolve.h promises of a result. */
static void
check_result(const struct srvresolve_result *res, int family, int naptr)
{
	const struct srvresolve_candidate *c;
	const struct sockaddr_in6 *sin6;
	const struct sockaddr_in *sin;
	size_t i, j, with = 0;

	ck_assert(res->ncand <= SRVRESOLVE_CANDIDATES_MAX);
	ck_assert(res->ncand == 0 || res->cand != NULL);
	for (i = 0; i < res->ncand; i++) {
		c = &res->cand[i];
		ck_assert_ptr_nonnull(c->target);
		ck_assert(naptr ? c->protocol != NULL : c->protocol == NULL);
		ck_assert(c->via == SRVRESOLVE_VIA_SRV ||
		    (naptr && c->port == DEFAULT_PORT));
		with += c->naddrs > 0;
		ck_assert(c->naddrs == 0 || c->lookup == SRVRESOLVE_OK);
		for (j = 0; j < c->naddrs; j++) {
			/* IPv6 first, then IPv4 */
			if (c->addrs[j].ss_family == AF_INET6) {
				ck_assert(family != AF_INET);
				ck_assert(j == 0 ||
				    c->addrs[j - 1].ss_family == AF_INET6);
				sin6 = (const void *)&c->addrs[j];
				ck_assert(ntohs(sin6->sin6_port) == c->port);
			} else {
				ck_assert(c->addrs[j].ss_family == AF_INET);
				ck_assert(family != AF_INET6);
				sin = (const void *)&c->addrs[j];
				ck_assert(ntohs(sin->sin_port) == c->port);
			}
		}
	}
	ck_assert((res->status == SRVRESOLVE_OK) == (with > 0));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int families[] = { AF_UNSPEC, AF_INET, AF_INET6,
	    AF_UNSPEC };
	static const char *const protocols[] = { "D2T", "D2U" };
	struct srvresolve_options o;
	struct srvresolve_result res;
	struct srvprint_report report;
	struct srvrand_seeded seeded;
	struct srv_random rnd;
	int naptr, r;

	if (size < 1)
		return 0;
	memset(&o, 0, sizeof(o));
	naptr = data[0] & 1;
	o.family = families[(data[0] >> 1) & 3];
	if (data[0] & 8)
		o.default_port = default_port;
	srvrand_seeded(&seeded, size, &rnd);
	o.rnd = &rnd;
	o.server.ss_family = AF_INET;
	o.server_len = sizeof(struct sockaddr_in);
	next = data + 1;
	left = size - 1;
	questions = 0;
	if (naptr)
		r = srvresolve_naptr(&o, NAPTR_DOMAIN, NAPTR_SERVICE,
		    protocols, 2, &res);
	else
		r = srvresolve_srv(&o, SRV_QNAME, &res);
	/* Only memory can fail: the input cannot. */
	ck_assert_int_eq(r, 0);
	/* Every lookup is bounded: one SRV set, SRVNAPTR_LOOKUPS_MAX NAPTR
	 * sets and their SRV sets, two address questions per candidate. */
	ck_assert(questions <= 1 + 2 * SRVNAPTR_LOOKUPS_MAX +
	    2 * SRVRESOLVE_CANDIDATES_MAX);
	check_result(&res, o.family, naptr);
	memset(&report, 0, sizeof(report));
	report.status = "ok";
	report.res = &res;
	report.naptr = naptr;
	srvprint_text(devnull, &report);
	srvprint_json(devnull, &report);
	srvresolve_free(&res);
	return 0;
}
