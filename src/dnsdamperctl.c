/* dnsdamperctl.c: the control client: one HTTP request over the unix socket. */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SOCKET	"/run/dnsdamper/control.sock"
#define EXIT_DAEMON	1	/* the daemon said no */
#define EXIT_UNREACHABLE 2	/* not running, or the socket is not ours */
#define EXIT_USAGE	64

/* --policy, --owner, --lifetime: of forward's commands only. */
struct forward_opts {
	const char	*policy;
	const char	*owner;
	const char	*lifetime;
};

struct request {
	const char	*method;
	char		 target[2048];	/* path and query string */
	int		 stream;	/* copy the body as it arrives */
};

static void __attribute__((noreturn))
usage(FILE *out, int status)
{
	fprintf(out,
	    "usage: dnsdamperctl [-s socket] [--json] command [args]\n"
	    "commands:\n"
	    "  stats                    counters, in short\n"
	    "  metrics                  the Prometheus exposition\n"
	    "  upstreams                each upstream's state and counters\n"
	    "  explain NAME [TYPE]      how NAME would be answered now\n"
	    "  flush [NAME [TYPE]]      drop the cache, or NAME's entries\n"
	    "  flush-zone ZONE          drop ZONE and every name below it\n"
	    "  dump                     the cache, one record per line\n"
	    "  lkg                      last known good: held names and zones\n"
	    "  lkg release ZONE         end ZONE's hold: its negatives go through\n"
	    "  reload                   reread the configuration\n"
	    "  forward list             forward zones: configured, runtime\n"
	    "  forward add ZONE UPSTREAM... [--policy P] [--owner NAME]\n"
	    "              [--lifetime DURATION]   a runtime forward zone\n"
	    "  forward remove ZONE [--owner NAME]  a runtime forward zone\n"
	    "  forward remove --owner NAME         all of NAME's\n"
	    "  monitor [--name SUFFIX] [--client ADDR] [--rcode RCODE]\n"
	    "                           answered queries as they happen, one\n"
	    "                           JSON line each, until interrupted\n");
	exit(status);
}

/* Append "&key=value" (or "?key=value" first), percent-encoded. */
static void
add_param(struct request *r, const char *key, const char *value)
{
	size_t n = strlen(r->target);
	const unsigned char *p;

	n += (size_t)snprintf(r->target + n, sizeof(r->target) - n, "%c%s=",
	    strchr(r->target, '?') != NULL ? '&' : '?', key);
	for (p = (const unsigned char *)value; *p != '\0' &&
	    n + 4 < sizeof(r->target); p++) {
		if (isalnum(*p) || strchr("-._~", *p) != NULL)
			r->target[n++] = (char)*p;
		else
			n += (size_t)snprintf(r->target + n,
			    sizeof(r->target) - n, "%%%02X", *p);
	}
	r->target[n] = '\0';
}

/* monitor's filters, each NULL unless given. */
struct filters {
	const char	*name;
	const char	*client;
	const char	*rcode;
};

/* forward list | add ZONE UPSTREAM... | remove [ZONE]. */
static void
build_forward(struct request *r, int argc, char **argv, int json,
    const struct forward_opts *o)
{
	int i;

	if (argc < 2)
		usage(stderr, EXIT_USAGE);
	if (strcmp(argv[1], "list") == 0 && argc == 2 && o->policy == NULL &&
	    o->owner == NULL && o->lifetime == NULL) {
		r->method = "GET";
		snprintf(r->target, sizeof(r->target), "/forward");
	} else if (strcmp(argv[1], "add") == 0 && argc >= 4) {
		r->method = "POST";
		snprintf(r->target, sizeof(r->target), "/forward/add");
		add_param(r, "zone", argv[2]);
		for (i = 3; i < argc; i++)
			add_param(r, "upstream", argv[i]);
		if (o->policy != NULL)
			add_param(r, "policy", o->policy);
		if (o->lifetime != NULL)
			add_param(r, "lifetime", o->lifetime);
	} else if (strcmp(argv[1], "remove") == 0 && argc <= 3 &&
	    (argc == 3 || o->owner != NULL) && o->policy == NULL &&
	    o->lifetime == NULL) {
		r->method = "POST";
		snprintf(r->target, sizeof(r->target), "/forward/remove");
		if (argc == 3)
			add_param(r, "zone", argv[2]);
	} else
		usage(stderr, EXIT_USAGE);
	if (o->owner != NULL)
		add_param(r, "owner", o->owner);
	if (!json)
		add_param(r, "format", "text");
}

static void
build(struct request *r, int argc, char **argv, int json,
    const struct forward_opts *o, const struct filters *f)
{
	static const struct {
		const char	*name;
		const char	*method;
		const char	*path;
		int		 min, max;	/* arguments */
		int		 text;		/* has a text format */
	} cmds[] = {
		{ "stats", "GET", "/stats", 0, 0, 1 },
		{ "metrics", "GET", "/metrics", 0, 0, 0 },
		{ "upstreams", "GET", "/upstreams", 0, 0, 1 },
		{ "explain", "GET", "/explain", 1, 2, 1 },
		{ "flush", "POST", "/flush", 0, 2, 1 },
		{ "flush-zone", "POST", "/flush", 1, 1, 1 },
		{ "dump", "GET", "/cache", 0, 0, 0 },
		{ "lkg", "GET", "/lkg", 0, 0, 1 },
		{ "reload", "POST", "/reload", 0, 0, 1 },
		{ "monitor", "GET", "/monitor", 0, 0, 0 },
	};
	size_t i;

	if ((f->name != NULL || f->client != NULL || f->rcode != NULL) &&
	    strcmp(argv[0], "monitor") != 0)
		usage(stderr, EXIT_USAGE);
	if (strcmp(argv[0], "forward") == 0) {
		build_forward(r, argc, argv, json, o);
		return;
	}
	if (o->policy != NULL || o->owner != NULL || o->lifetime != NULL)
		usage(stderr, EXIT_USAGE);
	if (strcmp(argv[0], "lkg") == 0 && argc > 1) {
		if (argc != 3 || strcmp(argv[1], "release") != 0)
			usage(stderr, EXIT_USAGE);
		r->method = "POST";
		snprintf(r->target, sizeof(r->target), "/lkg/release");
		add_param(r, "zone", argv[2]);
		if (!json)
			add_param(r, "format", "text");
		return;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[0], cmds[i].name) == 0)
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0]) ||
	    argc - 1 < cmds[i].min || argc - 1 > cmds[i].max)
		usage(stderr, EXIT_USAGE);
	r->method = cmds[i].method;
	r->stream = strcmp(cmds[i].name, "dump") == 0 ||
	    strcmp(cmds[i].name, "monitor") == 0;
	snprintf(r->target, sizeof(r->target), "%s", cmds[i].path);
	if (argc > 1)
		add_param(r, strcmp(cmds[i].name, "flush-zone") == 0 ?
		    "zone" : "name", argv[1]);
	if (argc > 2)
		add_param(r, "type", argv[2]);
	if (cmds[i].text && !json)
		add_param(r, "format", "text");
	if (f->name != NULL)
		add_param(r, "name", f->name);
	if (f->client != NULL)
		add_param(r, "client", f->client);
	if (f->rcode != NULL)
		add_param(r, "rcode", f->rcode);
}

static int
connect_to(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "dnsdamperctl: %s: path too long\n", path);
		exit(EXIT_UNREACHABLE);
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "dnsdamperctl: cannot reach dnsdamper at %s: "
		    "%s%s\n", path, strerror(errno), errno == ENOENT ||
		    errno == ECONNREFUSED ? " (is it running? is that its "
		    "control socket?)" : errno == EACCES ? " (not in the "
		    "control-group, or not root?)" : "");
		exit(EXIT_UNREACHABLE);
	}
	return fd;
}

static int
send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "dnsdamperctl: write: %s\n",
			    strerror(errno));
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Buffered reading of the response. */
struct in {
	int	fd;
	char	buf[65536];
	size_t	start, end;
};

static int
fill(struct in *in)
{
	ssize_t n;

	if (in->start > 0) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->end == sizeof(in->buf))
		return -1;
	while ((n = read(in->fd, in->buf + in->end, sizeof(in->buf) -
	    in->end)) == -1 && errno == EINTR)
		;
	if (n <= 0)
		return -1;
	in->end += (size_t)n;
	return 0;
}

/* The next line (CRLF or LF cut off), or NULL at end of input. */
static char *
line(struct in *in)
{
	char *nl, *s;

	while ((nl = memchr(in->buf + in->start, '\n', in->end - in->start)) ==
	    NULL)
		if (fill(in) == -1)
			return NULL;
	s = in->buf + in->start;
	*nl = '\0';
	if (nl > s && nl[-1] == '\r')
		nl[-1] = '\0';
	in->start = (size_t)(nl - in->buf) + 1;
	return s;
}

/* Copy n octets of body (all that come, if n is -1) to out. */
static void
copy(struct in *in, long n, FILE *out)
{
	size_t k;

	while (n != 0) {
		if (in->start == in->end && fill(in) == -1)
			return;
		k = in->end - in->start;
		if (n > 0 && (size_t)n < k)
			k = (size_t)n;
		fwrite(in->buf + in->start, 1, k, out);
		in->start += k;
		if (n > 0)
			n -= (long)k;
	}
	fflush(out);
}

/* The body, de-chunked if need be (RFC 9112 §7.1), to out. */
static void
body(struct in *in, int chunked, long length, FILE *out)
{
	char *l;
	long n;

	if (!chunked) {
		copy(in, length, out);
		return;
	}
	while ((l = line(in)) != NULL && (n = strtol(l, NULL, 16)) > 0) {
		copy(in, n, out);
		(void)line(in);		/* the CRLF after the data */
	}
}

static int
exchange(const char *path, const struct request *r)
{
	struct in *in;
	char req[4096], *l;
	long length = -1;
	int status = 0, chunked = 0, n;

	int fd = connect_to(path);

	if ((in = calloc(1, sizeof(*in))) == NULL)
		exit(EXIT_UNREACHABLE);
	in->fd = fd;
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: dnsdamper\r\n"
	    "Connection: close\r\nContent-Length: 0\r\n\r\n", r->method,
	    r->target);
	if (send_all(in->fd, req, (size_t)n) == -1 ||
	    (l = line(in)) == NULL || sscanf(l, "HTTP/%*s %d", &status) != 1) {
		fprintf(stderr, "dnsdamperctl: no answer from %s\n", path);
		close(in->fd);
		free(in);
		return EXIT_UNREACHABLE;
	}
	while ((l = line(in)) != NULL && *l != '\0') {
		if (strncasecmp(l, "Transfer-Encoding:", 18) == 0 &&
		    strstr(l + 18, "chunked") != NULL)
			chunked = 1;
		if (strncasecmp(l, "Content-Length:", 15) == 0)
			length = strtol(l + 15, NULL, 10);
	}
	body(in, chunked, length, status / 100 == 2 ? stdout : stderr);
	close(in->fd);
	free(in);
	return status / 100 == 2 ? 0 : EXIT_DAEMON;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "policy", required_argument, NULL, 'P' },
		{ "owner", required_argument, NULL, 'O' },
		{ "lifetime", required_argument, NULL, 'L' },
		{ "name", required_argument, NULL, 'N' },
		{ "client", required_argument, NULL, 'C' },
		{ "rcode", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 }
	};
	struct forward_opts fo = { NULL, NULL, NULL };
	struct filters f = { NULL, NULL, NULL };
	const char *path = DEFAULT_SOCKET;
	struct request r;
	int ch, json = 0;

	while ((ch = getopt_long(argc, argv, "hjs:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout, 0);
		case 'j':
			json = 1;
			break;
		case 's':
			path = optarg;
			break;
		case 'P':
			fo.policy = optarg;
			break;
		case 'O':
			fo.owner = optarg;
			break;
		case 'L':
			fo.lifetime = optarg;
			break;
		case 'N':
			f.name = optarg;
			break;
		case 'C':
			f.client = optarg;
			break;
		case 'R':
			f.rcode = optarg;
			break;
		default:
			usage(stderr, EXIT_USAGE);
		}
	}
	if (optind >= argc)
		usage(stderr, EXIT_USAGE);
	memset(&r, 0, sizeof(r));
	build(&r, argc - optind, argv + optind, json, &fo, &f);
	return exchange(path, &r);
}
