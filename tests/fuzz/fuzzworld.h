/*
 * fuzzworld.h: what the fuzz targets of the query path serve with: a
 * worker's struct query_ctx made from a configuration text as the daemon
 * makes it, on tests/unit's scripted transport and virtual clock
 * (testnet.h), so that a target drives queries and upstream responses
 * without sockets.
 */
#ifndef DNSDAMPER_FUZZWORLD_H
#define DNSDAMPER_FUZZWORLD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "query.h"
#include "testnet.h"
#include "testpkt.h"

/*
 * The configuration of the query path's targets: every client allowed (so
 * that ANY's minimal answer and the non-loopback paths are reached), local
 * data and a local zone, example. forwarded to two loopback upstreams and
 * everything else to a third (never contacted: the transport is testnet).
 */
#define FUZZWORLD_CONF \
	"allow 0.0.0.0/0 ::/0\n" \
	"hosts-file none\n" \
	"max-waiters 4\n" \
	"local-zone lan. static\n" \
	"local-data \"gw.lan. 300 IN A 192.0.2.7\"\n" \
	"local-data \"gw.lan. 300 IN TXT \\\"gateway\\\"\"\n" \
	"local-data \"www.lan. 300 IN CNAME gw.lan.\"\n" \
	"local-zone transparent.test. transparent\n" \
	"local-data \"t.transparent.test. 60 IN A 192.0.2.8\"\n" \
	"local-zone gone.test. nxdomain\n" \
	"local-zone no.test. refuse\n" \
	"forward example. { upstream 127.0.0.1:5301 127.0.0.1:5302 }\n" \
	"forward . { upstream 127.0.0.1:5303 }\n"

/* An answer fuzzworld_seed_cache stores, kept to be stored again. */
struct fuzzseed {
	const char		*qname;
	ldns_rr_type		 qtype;
	struct testpkt		 resp;
	uint64_t		 at;	/* ms */
};
#define FUZZWORLD_SEEDS	8

struct fuzzworld {
	struct testnet		 net;
	struct config		 conf;
	struct upstream_registry *reg;
	struct ratelimit	*rl;		/* what admit asks */
	uint64_t		 tcp_open;	/* ctx's count of TCP clients */
	struct query_ctx	 ctx;
	char			 dir[64];	/* for files, removed at exit */
	uint64_t		 started;	/* fetches at fuzzworld_begin */
	struct fuzzseed		 seeds[FUZZWORLD_SEEDS];
	size_t			 n_seeds;
};

/*
 * fuzzworld_init: *w from configuration text conf (parsed from a file in
 * a new directory w->dir, as parse_load reads it), with a cache of 1 MiB,
 * local zones and admission state, but no upstreams, zones or fetches
 * yet. Logging goes nowhere. Aborts on any error: the target cannot run
 * without it.
 */
void	fuzzworld_init(struct fuzzworld *w, const char *conf);

/*
 * fuzzworld_begin: for one input, a network where nothing was sent yet,
 * at virtual time now (ms), with upstreams none of which is down or to be
 * probed for a loop, zones and fetches on it, so that no input changes
 * what the next one finds but the cache. fuzzworld_end: every fetch
 * cancelled and every waiting query freed, as at shutdown; if the input
 * started a fetch, the upstreams, zones and fetches are freed, to be made
 * anew by the next fuzzworld_begin, and 1 is returned (else 0): only
 * then can the input have stored anything in the cache.
 */
void	fuzzworld_begin(struct fuzzworld *w, uint64_t now);
int	fuzzworld_end(struct fuzzworld *w);

/*
 * fuzzworld_path: "w->dir/name" in buf (len octets). Returns buf.
 */
char	*fuzzworld_path(const struct fuzzworld *w, const char *name,
	    char *buf, size_t len);

/*
 * fuzzworld_write: write len octets of data to the file at path, created
 * with mode 0600 (replacing what was there). Aborts on error.
 */
void	fuzzworld_write(const char *path, const uint8_t *data, size_t len);

/*
 * fuzzworld_seed_cache: answers in w's cache as of now (ms), for the
 * targets to find: a.example. A (fresh), old.example. A (stale: TTL 60,
 * stored 120 s before now), big.example. TXT (some 4 KB, truncated over
 * UDP), nx.example. NXDOMAIN and nodata.example. AAAA NODATA with
 * example.'s SOA, _svc._tcp.example. SRV, cname.example. CNAME.
 */
void	fuzzworld_seed_cache(struct fuzzworld *w, uint64_t now);

/*
 * fuzzworld_check_answer: abort unless ans (len octets), an answer sent
 * over transport to the client query q (qlen octets), is a whole DNS
 * message (with a question, one that msg_response_parse reads: every
 * count, name and record in place, and nothing after its last record,
 * truncated or not) within the size the client may
 * receive: 512
 * octets over UDP without EDNS, its payload size with (RFC 6891 §6.2.5,
 * never less than 512), 65535 over TCP (RFC 7766 §8); with the query's
 * ID and QR set (RFC 1035 §4.1.1).
 */
void	fuzzworld_check_answer(const uint8_t *q, size_t qlen,
	    const uint8_t *ans, size_t len, enum client_transport transport);

/*
 * fuzzworld_client: a client of transport from peer (an address with
 * port, e.g. "127.0.0.1:5300"), whose answers go to fuzzworld_check_answer
 * for query q (qlen octets, borrowed until the query ends) and are
 * counted in *sent.
 */
struct fuzzclient {
	struct client	 c;
	const uint8_t	*q;
	size_t		 qlen;
	unsigned	 sent;
	int		 held;		/* hold - release */
};
void	fuzzworld_client(struct fuzzclient *fc, enum client_transport transport,
	    const char *peer, const uint8_t *q, size_t qlen);

/*
 * fuzzworld_query: write to out (room for MSG_QUERY_MAX_LEN) a client's
 * query with id, RD, and question q (RFC 1035 §4.1), with an OPT of
 * payload size edns_size and the DO bit do_bit when edns_size > 0 (RFC
 * 6891 §6.1.2). Returns its length.
 */
size_t	fuzzworld_query(uint8_t *out, uint16_t id, const struct msg_question *q,
	    uint16_t edns_size, int do_bit);

/*
 * fuzzworld_empty_cache: every entry of w's cache removed.
 * fuzzworld_reset_cache: the same, then what fuzzworld_seed_cache stored
 * stored again, as of the same times. A target calls either after each
 * input, so that an input frees what it made: libFuzzer looks for leaks
 * (a costly scan) after an input that allocated more than it freed.
 */
void	fuzzworld_empty_cache(struct fuzzworld *w);
void	fuzzworld_reset_cache(struct fuzzworld *w);

/* fuzzworld_quiet: the daemon's log lines go nowhere from now on. */
void	fuzzworld_quiet(void);

#endif
