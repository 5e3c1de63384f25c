/* srvserver.c: the resolver to ask: parsed from text, or from resolv.conf. */
#include "autoconf.h"

#include <sys/socket.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsdamper/srvserver.h"

/* Longest "[ADDR%scope]:PORT" worth trying. */
#define TEXT_MAX	128

/* A numeric host and port into *ss: no name is ever looked up. */
static int
numeric(const char *host, const char *port, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct addrinfo hints, *ai;
	char *end;
	long p;

	p = strtol(port, &end, 10);
	if (*port == '\0' || *end != '\0' || p < 1 || p > 65535)
		goto bad;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		goto bad;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int
srvserver_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char buf[TEXT_MAX], dflt[8], *host = buf, *port = dflt, *p;

	snprintf(dflt, sizeof(dflt), "%d", SRVSERVER_PORT);
	if (strlen(s) >= sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	strcpy(buf, s);
	if (buf[0] == '[') {
		host = buf + 1;
		if ((p = strchr(host, ']')) == NULL ||
		    (p[1] != '\0' && p[1] != ':')) {
			errno = EINVAL;
			return -1;
		}
		*p = '\0';
		if (p[1] == ':')
			port = p + 2;
	} else if ((p = strchr(buf, ':')) != NULL && strchr(p + 1, ':') ==
	    NULL) {
		*p = '\0';		/* one colon: IPv4 and a port */
		port = p + 1;
	}
	return numeric(host, port, ss, len);
}

int
srvserver_default(const char *path, struct sockaddr_storage *ss,
    socklen_t *len)
{
	char line[512], word[16], addr[TEXT_MAX], port[8];
	FILE *fp;
	int found = 0;

	snprintf(port, sizeof(port), "%d", SRVSERVER_PORT);

	if ((fp = fopen(path != NULL ? path : SRVSERVER_RESOLV_CONF, "re")) !=
	    NULL) {
		while (!found && fgets(line, sizeof(line), fp) != NULL)
			found = sscanf(line, " %15s %127s", word, addr) == 2 &&
			    strcmp(word, "nameserver") == 0 &&
			    numeric(addr, port, ss, len) == 0;
		fclose(fp);
	}
	if (!found)
		srvserver_parse(SRVSERVER_FALLBACK, ss, len);
	return 0;
}
