/*
 * dnstapio.h: the Frame Streams output of dnstap (dnstap.info; Frame
 * Streams: farsightsec/fstrm's protocol), on libfstrm: its I/O thread
 * drains one bounded input queue per worker and writes what they hold
 * to a collector's unix socket (the bidirectional handshake, READY /
 * ACCEPT / START) or to a file (START only). A worker never blocks and
 * never takes a lock another worker takes: a full queue, a collector
 * gone or slow, or a file that cannot be written makes messages
 * dropped and counted, never queued without bound. The socket is
 * connected again, once a second, after the collector goes; the file
 * is opened anew (truncated) by a new output, e.g. at a reload, after
 * the previous output of the same path has closed it.
 */
#ifndef DNSDAMPER_DNSTAPIO_H
#define DNSDAMPER_DNSTAPIO_H

#include <stddef.h>
#include <stdint.h>

/* "file:PATH" names a file; anything else is a unix socket's path. */
#define DNSTAPIO_FILE_PREFIX	"file:"

/* Messages one worker's queue holds before more are dropped (a power of
 * two, as libfstrm wants). */
#define DNSTAPIO_QUEUE_SIZE	4096

struct dnstapio;

/*
 * dnstapio_new: an output to target (DNSTAPIO_FILE_PREFIX and an
 * absolute path, or an absolute unix socket path that fits sun_path, as
 * config_validate checks; copied) with n_queues
 * input queues (one per worker, at least 1). Its I/O thread starts at
 * once and connects or opens in the background: a collector that is not
 * there yet is no error. Returns NULL (errno set) if out of memory or
 * threads.
 */
struct dnstapio *dnstapio_new(const char *target, unsigned n_queues);

/*
 * dnstapio_submit: hand buf (len octets, one encoded dnstap payload,
 * malloc'd: ownership passes here whatever happens; NULL when it could
 * not be allocated, only to be counted) to queue number
 * queue (below n_queues, used by one thread only) of io. Never blocks.
 * Returns 0 if queued, -1 if dropped (the queue full, or io shutting
 * down): then buf is freed and the drop counted. A queued message that
 * is not written (no collector, a write failed) is counted too.
 */
int	dnstapio_submit(struct dnstapio *io, unsigned queue, void *buf,
	    size_t len);

/*
 * dnstapio_live: 1 if io's socket or file is open now (or its first
 * open has not been tried yet), else 0: what a
 * worker may skip encoding a message for (it would be thrown away);
 * any thread, a relaxed atomic read.
 */
int	dnstapio_live(const struct dnstapio *io);

/* dnstapio_drop: count one message dropped before it was made. */
void	dnstapio_drop(void);

/*
 * dnstapio_free: stop io's thread after it wrote what was queued (at
 * most a second's wait on a collector that does not read), close its
 * socket or file, free it. NULL is fine.
 */
void	dnstapio_free(struct dnstapio *io);

/* dnstapio_dropped: messages dropped by every output of the process so
 * far (dnsdamper_dnstap_dropped_total). */
uint64_t dnstapio_dropped(void);

#endif
