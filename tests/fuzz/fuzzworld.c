/* fuzzworld.c: the query path's context for the fuzz targets. */
#include "autoconf.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "addr.h"
#include "admit.h"
#include "cache.h"
#include "fetch.h"
#include "fuzzworld.h"
#include "localbuild.h"
#include "localzone.h"
#include "log.h"
#include "parse.h"
#include "ratelimit.h"
#include "testcache.h"
#include "upstream.h"
#include "wire.h"
#include "zone.h"

static void
sink_none(enum log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

void
fuzzworld_quiet(void)
{
	log_set_sink(sink_none);
}

char *
fuzzworld_path(const struct fuzzworld *w, const char *name, char *buf,
    size_t len)
{
	ck_assert_int_lt(snprintf(buf, len, "%s/%s", w->dir, name), (int)len);
	return buf;
}

void
fuzzworld_write(const char *path, const uint8_t *data, size_t len)
{
	int fd;

	(void)unlink(path);
	ck_assert((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) != -1);
	ck_assert(len == 0 || write(fd, data, len) == (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

/*
 * The clients of the input being run, by c->fd: a waiting query keeps its
 * own copy of struct client, and fd is the field of it that is ours (the
 * transport's) to find our client by. Static because the ops get only
 * that copy; fuzzworld_client fills it, fuzzworld_begin empties it.
 */
#define CLIENTS_MAX	8
static struct fuzzclient *clients[CLIENTS_MAX];
static size_t n_clients;

/* The world's directory and what is in it, at exit. */
static char *world_dir;	/* set once by fuzzworld_init, for atexit */

static void
remove_dir(void)
{
	char cmd[128];

	if (world_dir != NULL && snprintf(cmd, sizeof(cmd), "rm -rf '%s'",
	    world_dir) < (int)sizeof(cmd))
		(void)system(cmd);
}

static void
cache_limits_of(const struct config *conf, struct cache_limits *lim)
{
	lim->min_ttl = conf->min_ttl;
	lim->max_ttl = conf->max_ttl;
	lim->max_negative_ttl = conf->max_negative_ttl;
	lim->failure_ttl = conf->failure_ttl;
	lim->stale_max_age = conf->serve_stale ? conf->stale_max_age : 0;
	lim->stale_answer_ttl = conf->stale_answer_ttl;
	lim->stale_refresh_interval = conf->stale_refresh_interval;
}

void
fuzzworld_empty_cache(struct fuzzworld *w)
{
	(void)cache_flush(w->ctx.cache, NULL, 0, 0, 0);
}

size_t
fuzzworld_query(uint8_t *out, uint16_t id, const struct msg_question *q,
    uint16_t edns_size, int do_bit)
{
	size_t len = MSG_HEADER_LEN;

	memset(out, 0, MSG_HEADER_LEN);
	wire_wr16(out, id);
	wire_wr16(out + 2, 0x0100);		/* RD */
	wire_wr16(out + 4, 1);			/* QDCOUNT */
	memcpy(out + len, q->qname, q->qname_len);
	len += q->qname_len;
	wire_wr16(out + len, q->qtype);
	wire_wr16(out + len + 2, q->qclass);
	len += 4;
	if (edns_size == 0)
		return len;
	wire_wr16(out + 10, 1);			/* ARCOUNT */
	out[len] = 0;				/* root owner */
	wire_wr16(out + len + 1, 41);		/* OPT */
	wire_wr16(out + len + 3, edns_size);
	wire_wr16(out + len + 5, 0);		/* extended rcode, version */
	wire_wr16(out + len + 7, do_bit ? 0x8000 : 0);
	wire_wr16(out + len + 9, 0);		/* RDLENGTH */
	return len + 11;
}

void
fuzzworld_init(struct fuzzworld *w, const char *conf)
{
	struct cache_limits lim;
	char path[128];

	memset(w, 0, sizeof(*w));
	fuzzworld_quiet();
	/* In memory where there is a tmpfs: targets write a file per input,
	 * and the cache file's writer syncs it. */
	strcpy(w->dir, access("/dev/shm", W_OK) == 0 ?
	    "/dev/shm/dnsdamper-fuzz.XXXXXX" : "/tmp/dnsdamper-fuzz.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(w->dir));
	world_dir = w->dir;
	atexit(remove_dir);
	fuzzworld_path(w, "dnsdamper.conf", path, sizeof(path));
	fuzzworld_write(path, (const uint8_t *)conf, strlen(conf));
	ck_assert_int_eq(parse_load(path, &w->conf, stderr), 0);
	cache_limits_of(&w->conf, &lim);
	ck_assert_ptr_nonnull(w->ctx.base = event_base_new());
	w->ctx.conf = &w->conf;
	ck_assert_ptr_nonnull(w->ctx.cache = cache_new(1 << 20, &lim));
	ck_assert_ptr_nonnull(w->rl = ratelimit_new(w->conf.ratelimit_size));
	ck_assert_ptr_nonnull(w->ctx.admit = admit_new(w->rl));
	w->ctx.tcp_open = &w->tcp_open;
	ck_assert_ptr_nonnull(w->ctx.local = localbuild_table(&w->conf));
	LIST_INIT(&w->ctx.answering);
	TAILQ_INIT(&w->ctx.tcp_conns);
}

/* The upstreams, zones and fetches of a new input. */
static void
routing_new(struct fuzzworld *w, uint64_t now)
{
	struct fetch_settings s;
	size_t i, j;

	testnet_init(&w->net, now);
	ck_assert_ptr_nonnull(w->reg = upstream_registry_new(
	    w->conf.upstream_timeout_min, w->conf.upstream_timeout_max));
	ck_assert_ptr_nonnull(w->ctx.zones = zone_table_new(w->reg,
	    &w->conf));
	s.edns_size = w->conf.edns_buffer_size;
	s.query_timeout = w->conf.query_timeout;
	s.max_inflight = w->conf.max_inflight;
	s.max_waiters = w->conf.max_waiters;
	s.randomize_case = w->conf.randomize_case;
	ck_assert_ptr_nonnull(w->ctx.fetches = fetch_ctx_new_on(&w->net.t,
	    &s, query_fetch_done, &w->ctx));
	/* No loop probes: what goes out is what the input caused. */
	for (i = 0; i < zone_count(w->ctx.zones); i++) {
		struct zone *z = zone_at(w->ctx.zones, i);

		for (j = 0; j < z->n_upstreams; j++)
			z->upstreams[j]->loop_checked = 1;
	}
}

static void
routing_free(struct fuzzworld *w)
{
	fetch_ctx_free(w->ctx.fetches);
	w->ctx.fetches = NULL;
	query_cancel(&w->ctx);
	zone_table_unref(w->ctx.zones);
	w->ctx.zones = NULL;
	upstream_registry_free(w->reg);
	w->reg = NULL;
}

static uint64_t
fetches_started(const struct fuzzworld *w)
{
	struct fetch_stats fs;

	fetch_stats(w->ctx.fetches, &fs);
	return fs.started;
}

void
fuzzworld_begin(struct fuzzworld *w, uint64_t now)
{
	n_clients = 0;
	if (w->ctx.fetches == NULL)
		routing_new(w, now);
	else
		w->net.now = now;
	w->started = fetches_started(w);
}

int
fuzzworld_end(struct fuzzworld *w)
{
	/*
	 * Only an input that started a fetch can have changed the upstreams
	 * (health, RTT, EDNS state) or left a timer: then they are made anew
	 * for the next one. Making them for every input would cost more than
	 * most inputs (the in-flight table is 4096 buckets).
	 */
	if (fetches_started(w) != w->started || w->net.n_sent > 0) {
		routing_free(w);
		return 1;
	}
	query_cancel(&w->ctx);
	return 0;
}

/* What failed a check, for the one who reads libFuzzer's output. */
static void
hexdump(const char *what, const uint8_t *p, size_t len)
{
	size_t i;

	fprintf(stderr, "%s (%zu octets):", what, len);
	for (i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 16 == 0 ? "\n  " : " ", p[i]);
	fputc('\n', stderr);
}

void
fuzzworld_check_answer(const uint8_t *q, size_t qlen, const uint8_t *ans,
    size_t len, enum client_transport transport)
{
	struct msg_response r;
	struct msg_query mq;
	size_t limit = 512;

	if (transport == CLIENT_TCP)
		limit = 65535;
	else if (msg_parse_query(q, qlen, &mq) == MSG_PARSE_OK &&
	    mq.edns.present && mq.edns.udp_size > 512)
		limit = mq.edns.udp_size;
	ck_assert_msg(len >= MSG_HEADER_LEN && len <= limit,
	    "answer of %zu octets, limit %zu", len, limit);
	ck_assert(qlen >= 2 && memcmp(q, ans, 2) == 0);
	ck_assert(ans[2] & 0x80);
	/* With its question, it reads as the daemon reads a response. */
	if (wire_rd16(ans + 4) == 1) {
		if (msg_response_parse(ans, len, &r) == -1) {
			hexdump("answer", ans, len);
			ck_assert_msg(0, "an answer the daemon cannot read");
		}
		/* Nothing after its last record: a truncated answer is cut
		 * between records, never inside one (RFC 2181 §9). */
		if ((r.n_rrs > 0 ? r.rrs[r.n_rrs - 1].end : r.question_end) !=
		    len) {
			hexdump("answer", ans, len);
			ck_assert_msg(0, "octets after the answer's last record");
		}
		msg_response_free(&r);
	}
}

static struct fuzzclient *
client_of(const struct client *c)
{
	ck_assert(c->fd >= 0 && (size_t)c->fd < n_clients);
	return clients[c->fd];
}

static void
client_send(const struct client *c, const uint8_t *buf, size_t len)
{
	struct fuzzclient *fc = client_of(c);

	fuzzworld_check_answer(fc->q, fc->qlen, buf, len, c->transport);
	fc->sent++;
}

static void
client_hold(const struct client *c)
{
	client_of(c)->held++;
}

static void
client_release(const struct client *c)
{
	client_of(c)->held--;
}

static const struct client_ops client_ops = { client_send, client_hold,
    client_release };

void
fuzzworld_client(struct fuzzclient *fc, enum client_transport transport,
    const char *peer, const uint8_t *q, size_t qlen)
{
	const char *err;

	memset(fc, 0, sizeof(*fc));
	ck_assert_uint_lt(n_clients, CLIENTS_MAX);
	clients[n_clients] = fc;
	fc->c.fd = (int)n_clients++;
	fc->c.ops = &client_ops;
	fc->c.transport = transport;
	ck_assert_int_eq(addr_parse(peer, 53, &fc->c.peer, &err), 0);
	fc->q = q;
	fc->qlen = qlen;
}

#define SOA	"ns|example. 3600 IN SOA ns.example. host.example. 1 7200 " \
		"900 1209600 300"
#define TXT200	"\"" \
	"0123456789012345678901234567890123456789012345678901234567890123" \
	"0123456789012345678901234567890123456789012345678901234567890123" \
	"0123456789012345678901234567890123456789012345678901234567890123" \
	"\""

/* Seed i's answer stored in w's cache, at its time. */
static void
seed_store(struct fuzzworld *w, size_t i)
{
	const struct fuzzseed *sd = &w->seeds[i];
	struct msg_response r;
	struct cache_key key;

	testcache_key(w->ctx.cache, sd->qname, sd->qtype, &key);
	ck_assert_int_eq(msg_response_parse(sd->resp.wire, sd->resp.len, &r),
	    0);
	ck_assert_int_eq(cache_insert(w->ctx.cache, &key,
	    cache_entry_new(w->ctx.cache, &r, sd->at)), 0);
	msg_response_free(&r);
}

static void
seed_add(struct fuzzworld *w, const char *qname, ldns_rr_type qtype,
    struct testpkt resp, uint64_t at)
{
	struct fuzzseed *sd;

	ck_assert_uint_lt(w->n_seeds, FUZZWORLD_SEEDS);
	sd = &w->seeds[w->n_seeds];
	sd->qname = qname;
	sd->qtype = qtype;
	sd->resp = resp;
	sd->at = at;
	seed_store(w, w->n_seeds++);
}

/* big.example. TXT: 20 records of 192 octets, some 4 KB. */
static struct testpkt
seed_big(void)
{
	char rr[300];
	struct testpkt big;
	ldns_pkt *p;
	ldns_rr *r;
	int i;

	big = testpkt_response("big.example.", LDNS_RR_TYPE_TXT, 0, 1232,
	    NULL);
	ck_assert_int_eq(ldns_wire2pkt(&p, big.wire, big.len), LDNS_STATUS_OK);
	testpkt_free(&big);
	for (i = 0; i < 20; i++) {
		snprintf(rr, sizeof(rr), "big.example. 300 IN TXT %s \"%d\"",
		    TXT200, i);
		ck_assert_int_eq(ldns_rr_new_frm_str(&r, rr, 300, NULL, NULL),
		    LDNS_STATUS_OK);
		ck_assert(ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, r));
	}
	ck_assert_int_eq(ldns_pkt2wire(&big.wire, p, &big.len),
	    LDNS_STATUS_OK);
	ldns_pkt_free(p);
	return big;
}

void
fuzzworld_seed_cache(struct fuzzworld *w, uint64_t now)
{
	seed_add(w, "a.example.", LDNS_RR_TYPE_A, testpkt_response(
	    "a.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|a.example. 300 IN A 192.0.2.1", NULL), now);
	seed_add(w, "old.example.", LDNS_RR_TYPE_A, testpkt_response(
	    "old.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|old.example. 60 IN A 192.0.2.2", NULL), now - 120000);
	seed_add(w, "nx.example.", LDNS_RR_TYPE_A, testpkt_response(
	    "nx.example.", LDNS_RR_TYPE_A, 3, 1232, SOA, NULL), now);
	seed_add(w, "nodata.example.", LDNS_RR_TYPE_AAAA, testpkt_response(
	    "nodata.example.", LDNS_RR_TYPE_AAAA, 0, 1232, SOA, NULL), now);
	seed_add(w, "_svc._tcp.example.", LDNS_RR_TYPE_SRV, testpkt_response(
	    "_svc._tcp.example.", LDNS_RR_TYPE_SRV, 0, 1232,
	    "an|_svc._tcp.example. 300 IN SRV 0 10 80 a.example.",
	    "an|_svc._tcp.example. 300 IN SRV 1 10 80 b.example.",
	    "ar|a.example. 300 IN A 192.0.2.1", NULL), now);
	seed_add(w, "cname.example.", LDNS_RR_TYPE_A, testpkt_response(
	    "cname.example.", LDNS_RR_TYPE_A, 0, 1232,
	    "an|cname.example. 300 IN CNAME a.example.",
	    "an|a.example. 300 IN A 192.0.2.1", NULL), now);
	seed_add(w, "big.example.", LDNS_RR_TYPE_TXT, seed_big(), now);
}

void
fuzzworld_reset_cache(struct fuzzworld *w)
{
	size_t i;

	fuzzworld_empty_cache(w);
	for (i = 0; i < w->n_seeds; i++)
		seed_store(w, i);
}
