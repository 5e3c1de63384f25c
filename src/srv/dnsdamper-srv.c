/* dnsdamper-srv.c: the command: options, one lookup, output, exit status. */
#include "autoconf.h"

#include <sys/socket.h>

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsdamper/srv.h"
#include "dnsdamper/srvnaptr.h"
#include "dnsdamper/srvrand.h"
#include "dnsdamper/srvresolve.h"
#include "dnsdamper/srvserver.h"
#include "srvconnect.h"
#include "srvprint.h"

/* Exit statuses, dnsdamper-srv(1). */
#define EXIT_FOUND		0
#define EXIT_UNAVAILABLE	2
#define EXIT_NONE		3	/* NXDOMAIN or NODATA */
#define EXIT_RESOLUTION		4
#define EXIT_CONNECT		5
#define EXIT_USAGE		64

#define TIMEOUT_DEFAULT_MS	1000
#define TIMEOUT_MAX_MS		600000

/* The command line, parsed. */
struct opts {
	struct srvresolve_options	 ro;
	int				 json;
	int				 connect;
	unsigned			 timeout_ms;	/* per attempt */
	int				 seeded;
	uint64_t			 seed;
	const char			*server;	/* -s */
	const char			*naptr;		/* SERVICE:PROTO... */
	uint16_t			 port;		/* for "A" records */
	const char			*name;
};

static void __attribute__((noreturn))
usage(FILE *out, int status)
{
	fprintf(out,
	    "usage: dnsdamper-srv [-s addr[:port]] [-4 | -6] [--json] "
	    "[--connect]\n"
	    "                     [--timeout ms] [--seed n] "
	    "_service._proto.domain\n"
	    "       dnsdamper-srv [...] [--port n] --naptr "
	    "SERVICE:PROTO[:PROTO...] domain\n");
	exit(status);
}

static void __attribute__((noreturn))
usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "dnsdamper-srv: %s: %s\n", what, arg);
	usage(stderr, EXIT_USAGE);
}

/* A decimal number in [min, max], or a usage error naming opt. */
static uint64_t
number(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
	    v < min || v > max)
		usage_error(opt, arg);
	return v;
}

/* RFC 2782: the name is _Service._Proto.Name, two underscore labels. */
static int
is_service_name(const char *name)
{
	const char *dot = strchr(name, '.');

	return name[0] == '_' && dot != NULL && dot[1] == '_' &&
	    strchr(dot + 1, '.') != NULL;
}

/* The resolver's address, and a name a lookup can be made for. */
static void
check(struct opts *o)
{
	if (o->server == NULL)
		srvserver_default(NULL, &o->ro.server, &o->ro.server_len);
	else if (srvserver_parse(o->server, &o->ro.server,
	    &o->ro.server_len) == -1)
		usage_error("-s: not ADDR[:PORT] with a numeric address",
		    o->server);
	if (o->naptr == NULL && !is_service_name(o->name))
		usage_error("not a service name _service._proto.domain "
		    "(RFC 2782)", o->name);
}

static void
parse(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "connect", no_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "naptr", required_argument, NULL, 'n' },
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "46s:h", longopts, NULL)) != -1)
		switch (ch) {
		case '4':
		case '6':
			if (o->ro.family != AF_UNSPEC)
				usage_error("give one of -4 and -6", argv[0]);
			o->ro.family = ch == '4' ? AF_INET : AF_INET6;
			break;
		case 's':
			o->server = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'c':
			o->connect = 1;
			break;
		case 't':
			o->timeout_ms = (unsigned)number("--timeout", optarg,
			    1, TIMEOUT_MAX_MS);
			break;
		case 'S':
			o->seeded = 1;
			o->seed = number("--seed", optarg, 0, UINT64_MAX);
			break;
		case 'n':
			o->naptr = optarg;
			break;
		case 'p':
			o->port = (uint16_t)number("--port", optarg, 1, 65535);
			break;
		case 'h':
			usage(stdout, EXIT_FOUND);
		default:
			usage(stderr, EXIT_USAGE);
		}
	if (argc - optind != 1)
		usage(stderr, EXIT_USAGE);
	o->name = argv[optind];
	check(o);
}

/*
 * The application service and protocols of --naptr, split in place:
 * valid tags (RFC 3958 §6.5), at least one protocol.
 */
static size_t
naptr_tags(char *arg, char **service, const char **protocols, size_t max)
{
	char *save, *tag;
	size_t n = 0;

	*service = strtok_r(arg, ":", &save);
	while ((tag = strtok_r(NULL, ":", &save)) != NULL && n < max)
		protocols[n++] = tag;
	return n;
}

/* The default port of an S-NAPTR protocol: --port, else services(5). */
static uint16_t
default_port(void *arg, const char *protocol)
{
	const struct opts *o = arg;
	char name[SRVNAPTR_TAG_MAX + 1];
	struct servent *se;
	size_t i;

	if (o->port != 0)
		return o->port;
	for (i = 0; protocol[i] != '\0' && i < SRVNAPTR_TAG_MAX; i++)
		name[i] = (char)(protocol[i] >= 'A' && protocol[i] <= 'Z' ?
		    protocol[i] - 'A' + 'a' : protocol[i]);
	name[i] = '\0';
	if ((se = getservbyname(name, "tcp")) == NULL) {
		fprintf(stderr, "dnsdamper-srv: no default port known for %s "
		    "(an S-NAPTR \"A\" record): give --port\n", protocol);
		return 0;
	}
	return ntohs((uint16_t)se->s_port);
}

static int
lookup(struct opts *o, struct srvresolve_result *res)
{
	char copy[256], *service;
	const char *protocols[SRVNAPTR_LOOKUPS_MAX];
	size_t np;

	if (o->naptr == NULL)
		return srvresolve_srv(&o->ro, o->name, res);
	if (strlen(o->naptr) >= sizeof(copy))
		usage_error("--naptr: too long", o->naptr);
	strcpy(copy, o->naptr);
	np = naptr_tags(copy, &service, protocols, SRVNAPTR_LOOKUPS_MAX);
	if (np == 0 || !srvnaptr_offers(o->naptr, service, protocols[0]))
		usage_error("--naptr: not SERVICE:PROTO[:PROTO...] (RFC 3958 "
		    "tags)", o->naptr);
	o->ro.default_port = default_port;
	o->ro.default_port_arg = o;
	return srvresolve_naptr(&o->ro, o->name, service, protocols, np, res);
}

/* Notes on stderr about what the lookup found that a client should know. */
static void
warn_candidates(const struct srvresolve_result *res)
{
	const struct srvresolve_candidate *c;
	size_t i;

	for (i = 0; i < res->ncand; i++) {
		c = &res->cand[i];
		if (c->cname != NULL)
			fprintf(stderr, "dnsdamper-srv: %s is an alias of %s "
			    "(RFC 2782: a target must have its own address "
			    "records); its addresses are used\n", c->target,
			    c->cname);
		if (c->lookup == SRVRESOLVE_SERVFAIL)
			fprintf(stderr, "dnsdamper-srv: %s: address lookup "
			    "failed\n", c->target);
	}
	if (res->dropped > 0)
		fprintf(stderr, "dnsdamper-srv: %zu more candidates left out "
		    "(at most %d)\n", res->dropped, SRVRESOLVE_CANDIDATES_MAX);
	if (res->naptr_cut > 0)
		fprintf(stderr, "dnsdamper-srv: %u S-NAPTR branches cut (more "
		    "than %d lookups deep, or %d in all)\n", res->naptr_cut,
		    SRVNAPTR_DEPTH_MAX, SRVNAPTR_LOOKUPS_MAX);
}

/* Why nothing was found, on stderr. */
static void
warn_status(const struct opts *o, const struct srvresolve_result *res)
{
	switch (res->status) {
	case SRVRESOLVE_UNAVAILABLE:
		fprintf(stderr, "dnsdamper-srv: %s: service decidedly not "
		    "available (its one SRV record has target \".\")\n",
		    o->name);
		break;
	case SRVRESOLVE_NXDOMAIN:
		fprintf(stderr, "dnsdamper-srv: %s: no such name\n", o->name);
		break;
	case SRVRESOLVE_NODATA:
		fprintf(stderr, "dnsdamper-srv: %s: %s\n", o->name,
		    res->ncand > 0 ? "no target has an address" :
		    o->naptr != NULL ? "no NAPTR record for the service" :
		    "no SRV records");
		break;
	case SRVRESOLVE_SERVFAIL:
		fprintf(stderr, "dnsdamper-srv: %s: lookup failed (SERVFAIL, "
		    "REFUSED or no answer)\n", o->name);
		break;
	default:
		break;
	}
}

/*
 * --connect: try the candidates of r->res in order; fills r's attempts
 * (in *attempts, for the caller to free) and selection, and returns the
 * exit status.
 */
static int
connect_all(const struct opts *o, struct srvprint_report *r,
    struct srvconnect_attempt **attempts_out)
{
	struct srvconnect_attempt *attempts;
	size_t i, naddrs = 0;

	for (i = 0; i < r->res->ncand; i++)
		naddrs += r->res->cand[i].naddrs;
	if ((*attempts_out = attempts = calloc(naddrs, sizeof(*attempts))) ==
	    NULL) {
		perror("dnsdamper-srv");
		return EXIT_RESOLUTION;
	}
	r->attempts = attempts;
	r->nattempts = srvconnect_run(r->res, o->timeout_ms, attempts);
	if (attempts[r->nattempts - 1].result == SRVCONNECT_CONNECTED) {
		r->selected = &attempts[r->nattempts - 1];
		return EXIT_FOUND;
	}
	fprintf(stderr, "dnsdamper-srv: %s: no candidate accepted a "
	    "connection\n", o->name);
	r->status = "connect-failed";
	return EXIT_CONNECT;
}

int
main(int argc, char **argv)
{
	/* indexed by enum srvresolve_status */
	static const char *const status_name[] = { "ok", "unavailable",
	    "nxdomain", "nodata", "servfail" };
	static const int status_exit[] = { EXIT_FOUND, EXIT_UNAVAILABLE,
	    EXIT_NONE, EXIT_NONE, EXIT_RESOLUTION };
	struct opts o;
	struct srvrand_seeded seeded;
	struct srv_random rnd;
	struct srvresolve_result res;
	struct srvprint_report r;
	struct srvconnect_attempt *attempts = NULL;
	int status;

	memset(&o, 0, sizeof(o));
	o.ro.family = AF_UNSPEC;
	o.timeout_ms = TIMEOUT_DEFAULT_MS;
	parse(&o, argc, argv);
	if (o.seeded)
		srvrand_seeded(&seeded, o.seed, &rnd);
	else
		srvrand_system(&rnd);
	o.ro.rnd = &rnd;
	if (lookup(&o, &res) == -1) {
		fprintf(stderr, "dnsdamper-srv: %s: %s\n", o.name,
		    strerror(errno));
		return EXIT_RESOLUTION;
	}
	warn_candidates(&res);
	warn_status(&o, &res);
	memset(&r, 0, sizeof(r));
	r.res = &res;
	r.naptr = o.naptr != NULL;
	r.status = status_name[res.status];
	status = status_exit[res.status];
	if (o.connect && res.status == SRVRESOLVE_OK)
		status = connect_all(&o, &r, &attempts);
	if (o.json)
		srvprint_json(stdout, &r);
	else
		srvprint_text(stdout, &r);
	free(attempts);
	srvresolve_free(&res);
	if (fflush(stdout) == EOF) {
		perror("dnsdamper-srv: stdout");
		return EXIT_RESOLUTION;
	}
	return status;
}
