/* frame.c: the two-octet length prefix of DNS over TCP (RFC 7766 §8). */
#include "autoconf.h"

#include "frame.h"
#include "wire.h"

const uint8_t *
frame_peek(struct evbuffer *in, size_t *len)
{
	uint8_t prefix[FRAME_PREFIX_LEN];
	const uint8_t *p;

	if (evbuffer_copyout(in, prefix, sizeof(prefix)) < FRAME_PREFIX_LEN)
		return NULL;
	*len = wire_rd16(prefix);
	if (evbuffer_get_length(in) < FRAME_PREFIX_LEN + *len ||
	    (p = evbuffer_pullup(in, (ssize_t)(FRAME_PREFIX_LEN + *len))) ==
	    NULL)
		return NULL;
	return p + FRAME_PREFIX_LEN;
}

void
frame_drain(struct evbuffer *in, size_t len)
{
	evbuffer_drain(in, FRAME_PREFIX_LEN + len);
}

int
frame_add(struct evbuffer *out, const uint8_t *msg, size_t len)
{
	uint8_t prefix[FRAME_PREFIX_LEN];

	wire_wr16(prefix, (uint16_t)len);
	if (evbuffer_add(out, prefix, sizeof(prefix)) == -1 ||
	    evbuffer_add(out, msg, len) == -1)
		return -1;
	return 0;
}
