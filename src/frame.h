/*
 * frame.h: DNS messages over TCP, each prefixed by its length in two
 * octets (RFC 7766 §8, RFC 1035 §4.2.2), on libevent buffers: how
 * tcpconn reads client queries and writes answers, and how an attempt
 * over TCP writes its query and reads the response.
 */
#ifndef DNSDAMPER_FRAME_H
#define DNSDAMPER_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#define FRAME_PREFIX_LEN	2	/* the length prefix, octets */

/*
 * frame_peek: the first message in in, if it has arrived whole: made
 * contiguous, borrowed from in (valid until in changes), its length in
 * octets (0 to 65535) in *len. It stays in in until frame_drain. Returns
 * NULL if the prefix or the message is not all there yet, or if there is
 * no memory to make it contiguous.
 */
const uint8_t *frame_peek(struct evbuffer *in, size_t *len);

/* frame_drain: remove the message of len octets frame_peek returned. */
void	frame_drain(struct evbuffer *in, size_t len);

/*
 * frame_add: append msg (len octets, at most 65535) to out with its
 * length prefix. Returns 0, or -1 if out of memory.
 */
int	frame_add(struct evbuffer *out, const uint8_t *msg, size_t len);

#endif
