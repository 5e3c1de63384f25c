/*
 * fuzz_seeds.c: the seed corpus of the fuzz targets, made from real
 * messages, configurations, cache files, control requests and hosts
 * files:
 *   fuzz_seeds SRCDIR OUTDIR
 * writes OUTDIR/query, response, config, cachefile, control, srv and
 * hosts, one file per seed, in each target's input format (see each
 * fuzz_*.c). Queries, responses and the SRV library's answers are built
 * with ldns (tests/unit/testpkt.h), the cache
 * file is what cachefile_write makes of the query path's cache, and the
 * configurations are the example config of SRCDIR/conf and the fuzz
 * world's own. Run at build time: no corpus is kept in the tree.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachefile.h"
#include "clock.h"
#include "fuzzworld.h"
#include "testcache.h"
#include "testpkt.h"
#include "wire.h"

#define NOW	1000000000ULL

static const char *outdir;

/* Write OUTDIR/target/NNN: the flags octet (if flags >= 0), then data. */
static void
seed(const char *target, int flags, const uint8_t *data, size_t len)
{
	static unsigned n;
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/seed-%03u", outdir, target, n++);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	if (flags >= 0)
		ck_assert(fputc(flags, fp) != EOF);
	ck_assert(len == 0 || fwrite(data, len, 1, fp) == 1);
	ck_assert_int_eq(fclose(fp), 0);
}

static void
seed_text(const char *target, const char *text)
{
	seed(target, -1, (const uint8_t *)text, strlen(text));
}

/* A client query, as fuzz_query takes it, with flags. */
static void
query(int flags, const char *qname, ldns_rr_type qtype, uint16_t edns,
    int do_bit)
{
	struct testpkt t = testpkt_query(qname, qtype, LDNS_RD, edns, do_bit);

	seed("query", flags, t.wire, t.len);
	testpkt_free(&t);
}

static void
queries(void)
{
	static const struct {
		const char	*qname;
		ldns_rr_type	 qtype;
	} q[] = {
		{ "a.example.", LDNS_RR_TYPE_A },
		{ "A.Example.", LDNS_RR_TYPE_A },
		{ "old.example.", LDNS_RR_TYPE_A },
		{ "big.example.", LDNS_RR_TYPE_TXT },
		{ "nx.example.", LDNS_RR_TYPE_A },
		{ "nodata.example.", LDNS_RR_TYPE_AAAA },
		{ "_svc._tcp.example.", LDNS_RR_TYPE_SRV },
		{ "cname.example.", LDNS_RR_TYPE_A },
		{ "new.example.", LDNS_RR_TYPE_A },
		{ "example.", LDNS_RR_TYPE_DS },
		{ "gw.lan.", LDNS_RR_TYPE_A },
		{ "gw.lan.", LDNS_RR_TYPE_ANY },
		{ "www.lan.", LDNS_RR_TYPE_A },
		{ "none.lan.", LDNS_RR_TYPE_AAAA },
		{ "t.transparent.test.", LDNS_RR_TYPE_A },
		{ "u.transparent.test.", LDNS_RR_TYPE_A },
		{ "x.gone.test.", LDNS_RR_TYPE_A },
		{ "no.test.", LDNS_RR_TYPE_NS },
		{ "localhost.", LDNS_RR_TYPE_A },
		{ "1.0.0.127.in-addr.arpa.", LDNS_RR_TYPE_PTR },
		{ "home.arpa.", LDNS_RR_TYPE_SOA },
		{ "elsewhere.org.", LDNS_RR_TYPE_MX },
	};
	struct testpkt t;
	size_t i;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		query(0, q[i].qname, q[i].qtype, 1232, 0);
		query(1, q[i].qname, q[i].qtype, 0, 0);
	}
	query(2, "a.example.", LDNS_RR_TYPE_ANY, 0, 0);	/* non-loopback */
	query(6, "gw.lan.", LDNS_RR_TYPE_ANY, 1232, 0);
	query(3 << 3, "a.example.", LDNS_RR_TYPE_A, 1232, 1);	/* DO */
	query(0, "big.example.", LDNS_RR_TYPE_TXT, 4096, 0);
	/* version 1: BADVERS; a NOTIFY: NOTIMP; CH class */
	t = testpkt_query("a.example.", LDNS_RR_TYPE_A, LDNS_RD, 1232, 0);
	t.wire[t.len - 7] = 1;
	seed("query", 0, t.wire, t.len);
	t.wire[t.len - 7] = 0;
	t.wire[2] |= 4 << 3;
	seed("query", 0, t.wire, t.len);
	testpkt_free(&t);
	t = testpkt_query("version.bind.", LDNS_RR_TYPE_TXT, LDNS_RD, 0, 0);
	t.wire[t.len - 1] = 3;
	seed("query", 0, t.wire, t.len);
	testpkt_free(&t);
}

/* A seed of target: flags, then each message as a chunk. */
static void
chunks(const char *target, int flags, struct testpkt *m, size_t n)
{
	uint8_t buf[4 * MSG_MAX_LEN];
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		ck_assert(len + 2 + m[i].len <= sizeof(buf));
		len += wire_wr16(buf + len, (uint16_t)m[i].len);
		memcpy(buf + len, m[i].wire, m[i].len);
		len += m[i].len;
		testpkt_free(&m[i]);
	}
	seed(target, flags, buf, len);
}

/* A response seed: flags, then each message as a chunk. */
static void
response(int flags, struct testpkt *m, size_t n)
{
	chunks("response", flags, m, n);
}

#define SOA	"ns|example. 3600 IN SOA ns.example. host.example. 1 7200 " \
		"900 1209600 300"

/*
 * Put n A records of the qname before the OPT that ends the response m
 * (and no record before it), each 2 (a pointer to the qname) + 10 + 4
 * octets: its ANCOUNT n.
 */
static void
many_a(struct testpkt *m, unsigned n)
{
	uint8_t opt[MSG_OPT_LEN], *buf;
	size_t len = m->len;
	unsigned i;

	ck_assert_uint_le(len + 16 * n, MSG_MAX_LEN);
	ck_assert_ptr_nonnull(buf = realloc(m->wire, len + 16 * n));
	m->wire = buf;
	memcpy(opt, buf + len - MSG_OPT_LEN, MSG_OPT_LEN);
	len -= MSG_OPT_LEN;
	for (i = 0; i < n; i++) {
		memcpy(buf + len, "\300\14\0\1\0\1\0\0\1\54\0\4\300\0\2", 15);
		buf[len + 15] = (uint8_t)i;
		len += 16;
	}
	memcpy(buf + len, opt, MSG_OPT_LEN);
	wire_wr16(buf + 6, (uint16_t)n);
	m->len = len + MSG_OPT_LEN;
}

static void
responses(void)
{
	struct testpkt m[3];
	uint8_t chain[MSG_MAX_LEN];
	size_t qend;

	m[0] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|a.example. 300 IN A 192.0.2.1", NULL);
	response(1, m, 1);
	m[0] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|a.example. 300 IN A 192.0.2.1", NULL);
	response(3, m, 1);
	m[0] = testpkt_response("nx.example.", LDNS_RR_TYPE_A, 3, 1232, SOA,
	    NULL);
	response(1, m, 1);
	m[0] = testpkt_response("nodata.example.", LDNS_RR_TYPE_AAAA, 0,
	    1232, SOA, NULL);
	response(1, m, 1);
	m[0] = testpkt_response("c.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|c.example. 300 IN CNAME d.example.",
	    "an|d.example. 300 IN CNAME a.example.",
	    "an|a.example. 300 IN A 192.0.2.1", NULL);
	response(1, m, 1);
	m[0] = testpkt_response("s.example.", LDNS_RR_TYPE_SRV, 0, 1232,
	    "an|s.example. 300 IN SRV 0 5 80 t.example.",
	    "ar|t.example. 300 IN A 192.0.2.3", NULL);
	response(5, m, 1);
	/* TC=1, then the whole answer over TCP */
	m[0] = testpkt_response("t.example.", LDNS_RR_TYPE_TXT, 0, 1232,
	    NULL);
	m[0].wire[2] |= 2;
	m[1] = testpkt_response("t.example.", LDNS_RR_TYPE_TXT, 0, 1232,
	    "an|t.example. 300 IN TXT \"over tcp\"", NULL);
	response(1, m, 2);
	/* 40 A records (30 + 40 * 16 = 670 octets) to a client without
	 * EDNS: answered with TC=1 and the 30 that fit in 512 */
	m[0] = testpkt_response("many.example.", LDNS_RR_TYPE_A, 0, 1232,
	    NULL);
	many_a(&m[0], 40);
	response(1 | 8, m, 1);
	/* SERVFAIL from the first server, an answer from the second */
	m[0] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 2, 1232, NULL);
	m[1] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|a.example. 300 IN A 192.0.2.1", NULL);
	response(1, m, 2);
	/* FORMERR to EDNS, then an answer without OPT */
	m[0] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 1, 0, NULL);
	m[1] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 0,
	    "an|a.example. 300 IN A 192.0.2.1", NULL);
	response(1, m, 2);
	/* a referral, REFUSED, and a DNSSEC answer to DO */
	m[0] = testpkt_response("r.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "ns|r.example. 300 IN NS ns.r.example.",
	    "ar|ns.r.example. 300 IN A 192.0.2.9", NULL);
	response(1, m, 1);
	m[0] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 5, 1232, NULL);
	response(1 | 0x30, m, 1);
	m[0] = testpkt_response("a.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|a.example. 300 IN A 192.0.2.1",
	    "an|a.example. 300 IN RRSIG A 13 2 300 20300101000000 "
	    "20200101000000 1 example. AAAA", NULL);
	response(5, m, 1);
	m[0] = testpkt_response("x.org.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|x.org. 300 IN A 192.0.2.10", NULL);
	response(1, m, 1);
	/* chains of 16 and 17 CNAMEs (MSG_CHAIN_MAX is 16) */
	m[0] = testpkt_response("chain.example.", LDNS_RR_TYPE_A, 0, 0, NULL);
	qend = m[0].len;
	memcpy(chain, m[0].wire, qend);
	testpkt_free(&m[0]);
	qend = testpkt_chain(chain, qend, 16);
	m[0].len = qend;
	ck_assert_ptr_nonnull(m[0].wire = malloc(qend));
	memcpy(m[0].wire, chain, qend);
	response(1, m, 1);
}

#define SRV	"_sip._tcp.example."
#define ESOA	"ns|example. 300 IN SOA ns.example. host.example. 1 7200 " \
		"900 1209600 300"

/* fuzz_srv's answers: flags (bit 0 S-NAPTR, bits 1-2 family, bit 3 a
 * default port), then the answers in the order the questions go. */
static void
srvs(void)
{
	struct testpkt m[6];

	/* two targets, one with its addresses in the additional section,
	 * the other an alias with no AAAA */
	m[0] = testpkt_response(SRV, LDNS_RR_TYPE_SRV, 0, 1232,
	    "an|" SRV " 300 IN SRV 10 60 5060 a.example.",
	    "an|" SRV " 300 IN SRV 10 20 5060 b.example.",
	    "an|" SRV " 300 IN SRV 20 0 5061 a.example.",
	    "ar|a.example. 300 IN A 192.0.2.1",
	    "ar|a.example. 300 IN AAAA 2001:db8::1", NULL);
	m[1] = testpkt_response("b.example.", LDNS_RR_TYPE_AAAA, 0, 1232,
	    "an|b.example. 300 IN CNAME c.example.", ESOA, NULL);
	m[2] = testpkt_response("b.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|b.example. 300 IN CNAME c.example.",
	    "an|c.example. 300 IN A 192.0.2.2", NULL);
	chunks("srv", 0, m, 3);
	m[0] = testpkt_response(SRV, LDNS_RR_TYPE_SRV, 3, 1232, ESOA, NULL);
	chunks("srv", 0, m, 1);
	m[0] = testpkt_response(SRV, LDNS_RR_TYPE_SRV, 0, 1232,
	    "an|" SRV " 300 IN SRV 0 0 0 .", NULL);
	chunks("srv", 0, m, 1);
	m[0] = testpkt_response(SRV, LDNS_RR_TYPE_SRV, 2, 1232, NULL);
	chunks("srv", 2, m, 1);
	/* an aliased SRV name, targets asked for A only, one NXDOMAIN */
	m[0] = testpkt_response(SRV, LDNS_RR_TYPE_SRV, 0, 1232,
	    "an|" SRV " 300 IN CNAME _sip._tcp.other.example.",
	    "an|_sip._tcp.other.example. 300 IN SRV 1 1 5060 d.example.",
	    "an|_sip._tcp.other.example. 300 IN SRV 2 1 5060 e.example.",
	    NULL);
	m[1] = testpkt_response("d.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|d.example. 300 IN A 192.0.2.4",
	    "an|d.example. 300 IN A 192.0.2.5", NULL);
	m[2] = testpkt_response("e.example.", LDNS_RR_TYPE_A, 3, 1232, ESOA,
	    NULL);
	chunks("srv", 2, m, 3);
	/* S-NAPTR: a non-terminal record, an "S" and an "A" one */
	m[0] = testpkt_response("example.", LDNS_RR_TYPE_NAPTR, 0, 1232,
	    "an|example. 300 IN NAPTR 50 10 \"\" \"SIP:D2T\" \"\" "
	    "next.example.",
	    "an|example. 300 IN NAPTR 100 10 \"S\" \"SIP:D2T\" \"\" "
	    SRV,
	    "an|example. 300 IN NAPTR 200 10 \"A\" \"SIP:D2U\" \"\" "
	    "h.example.",
	    "an|example. 300 IN NAPTR 300 10 \"S\" \"XMPP:D2T\" \"\" "
	    "x.example.", NULL);
	m[1] = testpkt_response("next.example.", LDNS_RR_TYPE_NAPTR, 0, 1232,
	    "an|next.example. 300 IN NAPTR 10 10 \"S\" \"SIP:D2T\" \"\" "
	    "_sip._tcp.next.example.", NULL);
	m[2] = testpkt_response("_sip._tcp.next.example.", LDNS_RR_TYPE_SRV,
	    0, 1232, "an|_sip._tcp.next.example. 300 IN SRV 0 0 5060 "
	    "a.example.", "ar|a.example. 300 IN A 192.0.2.1", NULL);
	m[3] = testpkt_response(SRV, LDNS_RR_TYPE_SRV, 0, 1232,
	    "an|" SRV " 300 IN SRV 10 60 5060 b.example.", NULL);
	m[4] = testpkt_response("b.example.", LDNS_RR_TYPE_AAAA, 0, 1232,
	    "an|b.example. 300 IN AAAA 2001:db8::2", NULL);
	m[5] = testpkt_response("b.example.", LDNS_RR_TYPE_A, 0, 1232,
	    ESOA, NULL);
	chunks("srv", 1 | 8, m, 6);
	m[0] = testpkt_response("example.", LDNS_RR_TYPE_NAPTR, 0, 1232,
	    "an|example. 300 IN NAPTR 50 10 \"\" \"SIP:D2T\" \"\" "
	    "example.", NULL);
	chunks("srv", 1, m, 1);
	m[0] = testpkt_response("example.", LDNS_RR_TYPE_NAPTR, 3, 1232,
	    ESOA, NULL);
	chunks("srv", 1 | 8, m, 1);
}

/* fuzz_hosts's: whole hosts files. */
static void
hostss(void)
{
	seed_text("hosts", "127.0.0.1\tlocalhost\n"
	    "127.0.1.1\tvm1.example.org vm1\n"
	    "\n# The following lines are desirable for IPv6 capable hosts\n"
	    "::1     localhost ip6-localhost ip6-loopback\n"
	    "ff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n");
	seed_text("hosts", "192.0.2.7 gw.lan. GW  # the gateway\r\n"
	    "192.0.2.7 gateway.lan\n2001:db8::7 gw.lan\n"
	    "10.0.0.1\n"			/* no name */
	    "10.0.0.256 bad.lan\n"		/* no address */
	    "10.0.0.2 bad..lan\n"		/* an empty label */
	    "10.0.0.3 back\\slash.lan\n"
	    "::ffff:192.0.2.9 mapped.lan\n"
	    "fe80::1%eth0 scoped.lan\n"
	    "\t  \f10.0.0.4\vtabs.lan\n"
	    "10.0.0.5 "
	    "a23456789012345678901234567890123456789012345678901234567890123"
	    ".lan\n"
	    "10.0.0.6 no-newline-at-end.lan");
	seed_text("hosts", "1.2.3.4 a b c d e f g h i j k l m n o p q r s t "
	    "u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y "
	    "Z 0 1 2 3 4 5 6 7 8 9 _ -\n1.2.3.5 x\n");
}

static void
configs(const char *srcdir)
{
	char path[512], line[1024];
	char *text = NULL;
	size_t len = 0;
	FILE *in, *out;

	seed_text("config", FUZZWORLD_CONF);
	seed_text("config", "listen 127.0.0.1:53 [::1]:53\n"
	    "cache-size 64m\nmax-ttl 1d\nupstream-timeout 50ms 2s\n"
	    "forward consul { upstream 127.0.0.1:8600 }\n"
	    "forward corp.example { upstream 10.0.0.53 10.0.1.53:5353 "
	    "policy order }\nforward . { upstream 127.0.0.1:5353 }\n");
	seed_text("config", "allow 10.0.0.0/8 ::1; ratelimit 100\n"
	    "ratelimit-slip 0\nlisten 10.0.0.1:53\n"
	    "local-zone \"corp.\" nodefault\n"
	    "local-data \"_ldap._tcp.corp. 300 IN SRV 0 10 389 gw.corp.\"\n"
	    "forward . { upstream 127.0.0.1:5353 }\n");
	/* the example configuration, but what includes another file */
	snprintf(path, sizeof(path), "%s/conf/dnsdamper.conf", srcdir);
	ck_assert_ptr_nonnull(in = fopen(path, "r"));
	ck_assert_ptr_nonnull(out = open_memstream(&text, &len));
	while (fgets(line, sizeof(line), in) != NULL)
		if (strstr(line, "include") == NULL &&
		    strstr(line, "hosts-file") == NULL &&
		    strstr(line, "resolv-conf") == NULL)
			fputs(line, out);
	fclose(in);
	fclose(out);
	seed_text("config", text);
	free(text);
}

/* What cachefile_write makes of the fuzz world's cache, but its checksum. */
static void
cachefiles(void)
{
	static struct fuzzworld w;
	char path[128];
	uint8_t *all;
	FILE *fp;
	long len;

	fuzzworld_init(&w, FUZZWORLD_CONF);
	fuzzworld_seed_cache(&w, clock_now_ms());
	fuzzworld_begin(&w, clock_now_ms());
	ck_assert(testcache_store(w.ctx.cache, "x.org.", LDNS_RR_TYPE_A,
	    testpkt_response("x.org.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|x.org. 300 IN A 192.0.2.10", NULL), clock_now_ms()) == 0);
	fuzzworld_path(&w, "seed.cache", path, sizeof(path));
	ck_assert(cachefile_write(w.ctx.cache, w.ctx.zones, path,
	    clock_now_ms()) > 0);
	(void)fuzzworld_end(&w);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	ck_assert((len = ftell(fp)) > 8);
	rewind(fp);
	ck_assert_ptr_nonnull(all = malloc((size_t)len));
	ck_assert(fread(all, (size_t)len, 1, fp) == 1);
	fclose(fp);
	seed("cachefile", -1, all, (size_t)len - 8);
	free(all);
}

static void
controls(void)
{
	static const char *const req[] = {
		"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /upstreams?format=text HTTP/1.0\r\n\r\n",
		"GET /explain?name=a.example&type=A HTTP/1.1\r\n"
		    "Host: x\r\n\r\n",
		"GET /explain?name=gw.lan&format=text HTTP/1.1\r\n\r\n",
		"GET /explain?name=old.example&type=AAAA HTTP/1.1\r\n\r\n",
		"GET /cache HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /flush?name=a.example&type=A HTTP/1.1\r\n"
		    "Content-Length: 0\r\n\r\n",
		"POST /flush?zone=example HTTP/1.1\r\n"
		    "Content-Length: 0\r\n\r\n",
		"GET /lkg?format=text HTTP/1.1\r\n\r\nGET /lkg HTTP/1.1\r\n\r\n",
		"POST /lkg/release?zone=example HTTP/1.1\r\n"
		    "Content-Length: 0\r\n\r\n",
		"POST /reload HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
		    "POST /reload?format=text HTTP/1.1\r\n"
		    "Content-Length: 0\r\n\r\n",
		"GET /metrics HTTP/1.1\r\n\r\nGET /stats HTTP/1.1\r\n\r\n",
		"DELETE /cache HTTP/1.1\r\n\r\n",
		"POST /flush HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "5\r\nhello\r\n0\r\n\r\n",
		"GET /nowhere HTTP/1.1\r\n\r\n",
	};
	size_t i;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		seed_text("control", req[i]);
}

int
main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: fuzz_seeds SRCDIR OUTDIR\n");
		return 2;
	}
	outdir = argv[2];
	(void)mkdir(outdir, 0755);
	queries();
	responses();
	configs(argv[1]);
	cachefiles();
	controls();
	srvs();
	hostss();
	return 0;
}
