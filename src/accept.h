/*
 * accept.h: listening sockets that pause, instead of spinning, when
 * accept() fails: out of descriptors is normal under load (unwind's
 * frontend does the same), and a listener left enabled would be readable
 * again at once, busy-looping and logging each time.
 */
#ifndef DNSDAMPER_ACCEPT_H
#define DNSDAMPER_ACCEPT_H

#include <event2/listener.h>

/* Seconds a listener stops accepting after accept() failed. */
#define ACCEPT_PAUSE_SEC	1

/*
 * accept_pause_on_error: from now on, when accepting on l fails with an
 * error libevent does not retry itself (EMFILE, ENFILE, ENOBUFS, ENOMEM
 * and the like), l stops accepting for ACCEPT_PAUSE_SEC, the clients
 * waiting in the kernel's queue meanwhile; one warning a minute at most
 * says so. l must live as long as its event base runs (a pause pending
 * at its free is dropped with the base).
 */
void	accept_pause_on_error(struct evconnlistener *l);

#endif
