/* srvconnect.c: TCP connects in try order, each bounded, until one works. */
#include "autoconf.h"

#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "srvconnect.h"

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static enum srvconnect_result
classify(int e, int *err)
{
	*err = 0;
	if (e == 0)
		return SRVCONNECT_CONNECTED;
	if (e == ECONNREFUSED)
		return SRVCONNECT_REFUSED;
	if (e == ETIMEDOUT)
		return SRVCONNECT_TIMEOUT;
	*err = e;
	return SRVCONNECT_ERROR;
}

/* Wait until fd's connect finishes or the deadline passes. */
static enum srvconnect_result
finish(int fd, uint64_t deadline, int *err)
{
	struct pollfd pfd = { fd, POLLOUT, 0 };
	socklen_t len = sizeof(int);
	uint64_t now;
	int r, e = 0;

	for (;;) {
		now = now_ms();
		if (now >= deadline)
			return classify(ETIMEDOUT, err);
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r > 0)
			break;
		if (r == -1 && errno != EINTR)
			return classify(errno, err);
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
		e = errno;
	return classify(e, err);
}

enum srvconnect_result
srvconnect_try(const struct sockaddr_storage *addr, unsigned timeout_ms,
    int *err)
{
	socklen_t len = addr->ss_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	uint64_t deadline = now_ms() + timeout_ms;
	enum srvconnect_result r;
	int fd;

	if ((fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return classify(errno, err);
	if (connect(fd, (const struct sockaddr *)addr, len) == 0)
		r = classify(0, err);
	else if (errno == EINPROGRESS)
		r = finish(fd, deadline, err);
	else
		r = classify(errno, err);
	close(fd);
	return r;
}

size_t
srvconnect_run(const struct srvresolve_result *res, unsigned timeout_ms,
    struct srvconnect_attempt *out)
{
	size_t i, j, n = 0;

	for (i = 0; i < res->ncand; i++)
		for (j = 0; j < res->cand[i].naddrs; j++) {
			out[n].cand = &res->cand[i];
			out[n].addr = &res->cand[i].addrs[j];
			out[n].result = srvconnect_try(out[n].addr, timeout_ms,
			    &out[n].err);
			if (out[n++].result == SRVCONNECT_CONNECTED)
				return n;
		}
	return n;
}

const char *
srvconnect_name(enum srvconnect_result r)
{
	static const char *const names[] = { "connected", "refused",
	    "timeout", "error" };

	return names[r];
}
