/* resolvconf.c: resolv.conf nameservers as upstreams, minus our own. */
#include "autoconf.h"

#include <sys/types.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "config.h"
#include "lex.h"
#include "log.h"
#include "resolvconf.h"

/* The address of a `nameserver ADDR` line into *ns; 0 for other lines. */
static int
resolvconf_line(const char *path, char *line, struct addr *ns)
{
	const char *errstr;
	char *word, *save;

	word = strtok_r(line, " \t\r\n", &save);
	if (word == NULL || strcmp(word, "nameserver") != 0)
		return 0;
	if ((word = strtok_r(NULL, " \t\r\n", &save)) == NULL)
		return 0;
	if (addr_parse(word, CONFIG_DEFAULT_PORT, ns, &errstr) == -1) {
		log_warnx("%s: ignoring nameserver \"%s\": %s", path, word,
		    errstr);
		return 0;
	}
	return 1;
}

/* Every nameserver listed, into *all (n_all). Returns 0 or -1 (errno). */
static int
resolvconf_parse(const char *path, FILE *fp, struct addr **all,
    size_t *n_all)
{
	struct addr ns, *n;
	char *line = NULL;
	size_t size = 0;
	int r = 0;

	while (getline(&line, &size, fp) != -1) {
		if (!resolvconf_line(path, line, &ns))
			continue;
		if ((n = reallocarray(*all, *n_all + 1, sizeof(*n))) == NULL) {
			r = -1;
			break;
		}
		n[(*n_all)++] = ns;
		*all = n;
	}
	if (ferror(fp))
		r = -1;
	free(line);
	return r;
}

/* 1 if a and sa have the same family and address, whatever the port. */
static int
resolvconf_same_host(const struct addr *a, const struct sockaddr *sa)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&a->ss;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&a->ss;

	if (sa == NULL || sa->sa_family != addr_family(a))
		return 0;
	if (sa->sa_family == AF_INET)
		return a4->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr.s_addr;
	return memcmp(&a6->sin6_addr,
	    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
	    sizeof(a6->sin6_addr)) == 0;
}

static int
resolvconf_is_local(const struct addr *a, const struct ifaddrs *ifa)
{
	for (; ifa != NULL; ifa = ifa->ifa_next)
		if (resolvconf_same_host(a, ifa->ifa_addr))
			return 1;
	return 0;
}

/*
 * Why a query to ns would come back to us, naming in *mine the listen
 * address it would reach; NULL if it would not.
 */
static const char *
resolvconf_why_self(const struct addr *ns, const struct addr *self,
    size_t n_self, const struct ifaddrs *ifa, const struct addr **mine)
{
	size_t i;

	for (i = 0; i < n_self; i++) {
		*mine = &self[i];
		if (addr_equal(ns, &self[i]))
			return "it is our listen address";
		/* 0.0.0.0 and :: mean this host to connect(2). */
		if (addr_is_wildcard(ns) &&
		    addr_port(ns) == addr_port(&self[i]))
			return "it is an unspecified address (this host) and "
			    "we listen on";
		if (!addr_is_wildcard(&self[i]) ||
		    addr_family(&self[i]) != addr_family(ns) ||
		    addr_port(&self[i]) != addr_port(ns))
			continue;
		if (addr_is_loopback(ns))
			return "it is a loopback address and we listen on";
		if (resolvconf_is_local(ns, ifa))
			return "it is a local interface address and we listen "
			    "on";
	}
	return NULL;
}

/* The interface addresses, needed only when we listen on a wildcard. */
static struct ifaddrs *
resolvconf_ifaddrs(const struct addr *self, size_t n_self)
{
	struct ifaddrs *ifa;
	size_t i;

	for (i = 0; i < n_self; i++)
		if (addr_is_wildcard(&self[i]))
			break;
	if (i == n_self)
		return NULL;
	if (getifaddrs(&ifa) == -1) {
		log_warn("getifaddrs: local addresses stay in resolv.conf "
		    "nameservers");
		return NULL;
	}
	return ifa;
}

/* Drop from all[] in place the nameservers that are ours or repeated. */
static size_t
resolvconf_filter(const char *path, struct addr *all, size_t n_all,
    const struct addr *self, size_t n_self)
{
	struct ifaddrs *ifa = resolvconf_ifaddrs(self, n_self);
	const struct addr *mine = NULL;
	const char *why;
	char ns[ADDR_STRLEN], me[ADDR_STRLEN];
	size_t i, j, keep = 0;

	for (i = 0; i < n_all; i++) {
		addr_format(&all[i], ns, sizeof(ns));
		for (j = 0; j < keep; j++)
			if (addr_equal(&all[i], &all[j]))
				break;
		if (j < keep)
			log_info("%s: skipping nameserver %s: listed twice",
			    path, ns);
		else if ((why = resolvconf_why_self(&all[i], self, n_self,
		    ifa, &mine)) != NULL)
			log_info("%s: skipping nameserver %s: %s %s", path, ns,
			    why, addr_format(mine, me, sizeof(me)));
		else
			all[keep++] = all[i];
	}
	if (ifa != NULL)
		freeifaddrs(ifa);
	return keep;
}

/* resolv.conf(5): without a nameserver line, the local machine is asked. */
static int
resolvconf_local(struct addr **all, size_t *n_all)
{
	const char *errstr;

	if ((*all = malloc(sizeof(**all))) == NULL)
		return -1;
	if (addr_parse("127.0.0.1", CONFIG_DEFAULT_PORT, *all, &errstr) == 0)
		*n_all = 1;
	return 0;
}

int
resolvconf_read(const char *path, const struct addr *self, size_t n_self,
    struct addr **out, size_t *n_out)
{
	struct addr *all = NULL;
	size_t n_all = 0;
	FILE *fp;
	int r, saved;

	*out = NULL;
	*n_out = 0;
	if ((fp = lex_fopen(path)) == NULL)
		return -1;
	r = resolvconf_parse(path, fp, &all, &n_all);
	saved = errno;
	fclose(fp);
	if (r == -1) {
		free(all);
		errno = saved;
		return -1;
	}
	if (n_all == 0 && resolvconf_local(&all, &n_all) == -1)
		return -1;
	if ((*n_out = resolvconf_filter(path, all, n_all, self, n_self)) == 0)
		free(all);
	else
		*out = all;
	return 0;
}

const char *
resolvconf_self(const struct addr *ns, const struct addr *self, size_t n_self,
    const struct addr **mine)
{
	struct ifaddrs *ifa = resolvconf_ifaddrs(self, n_self);
	const char *why;

	why = resolvconf_why_self(ns, self, n_self, ifa, mine);
	if (ifa != NULL)
		freeifaddrs(ifa);
	return why;
}

/* An upstream that is one of our own listen addresses is a loop. */
static void
resolvconf_check_loop(const struct config *conf,
    const struct config_forward *fw, const struct config_report *r)
{
	const struct addr *mine;
	const char *why;
	char up[ADDR_STRLEN], me[ADDR_STRLEN];
	size_t i;

	for (i = 0; i < fw->n_upstreams; i++) {
		why = resolvconf_self(&fw->upstreams[i], conf->listen,
		    conf->n_listen, &mine);
		if (why == NULL)
			continue;
		config_error(r, &fw->where, NULL, "forward \"%s\": upstream %s "
		    "would loop: %s %s", fw->zone,
		    addr_format(&fw->upstreams[i], up, sizeof(up)), why,
		    addr_format(mine, me, sizeof(me)));
	}
}

/* Append the nameservers of conf->resolv_conf to fw's upstreams. */
static void
resolvconf_expand(const struct config *conf, struct config_forward *fw,
    const struct config_report *r)
{
	struct addr *ns, *n;
	size_t n_ns;

	if (resolvconf_read(conf->resolv_conf, conf->listen, conf->n_listen,
	    &ns, &n_ns) == -1) {
		config_error(r, &fw->where, NULL, "forward \"%s\": cannot read "
		    "%s: %s", fw->zone, conf->resolv_conf,
		    lex_strerror(errno));
		return;
	}
	if (n_ns == 0) {
		config_error(r, &fw->where, NULL, "forward \"%s\": no usable "
		    "nameserver in %s (all are our own listen addresses)",
		    fw->zone, conf->resolv_conf);
		return;
	}
	n = reallocarray(fw->upstreams, fw->n_upstreams + n_ns, sizeof(*n));
	if (n == NULL) {
		config_error(r, &fw->where, NULL, "out of memory");
		free(ns);
		return;
	}
	memcpy(n + fw->n_upstreams, ns, n_ns * sizeof(*ns));
	fw->upstreams = n;
	fw->n_upstreams += n_ns;
	free(ns);
}

void
resolvconf_apply(struct config *conf, const struct config_report *r)
{
	size_t i;

	for (i = 0; i < conf->n_forwards; i++)
		if (conf->forwards[i].use_resolv_conf)
			resolvconf_expand(conf, &conf->forwards[i], r);
		else
			resolvconf_check_loop(conf, &conf->forwards[i], r);
}
