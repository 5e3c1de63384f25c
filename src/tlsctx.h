/*
 * tlsctx.h: how one upstream is spoken to over DNS over TLS (RFC 7858):
 * its OpenSSL context (TLS 1.2 or 1.3, ALPN "dot", session tickets), how
 * the server is authenticated (RFC 8310 strict: a certificate that
 * chains to the CA store and carries NAME, or the IP address when no NAME
 * is given; or an SPKI pin, RFC 7469; or, by choice, nothing, which still
 * encrypts), why a handshake failed, and that upstream's TLS counters.
 * Nothing here ever falls back to clear text: a context that cannot be
 * made is a configuration error.
 */
#ifndef DNSDAMPER_TLSCTX_H
#define DNSDAMPER_TLSCTX_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "addr.h"
#include "log.h"

#define TLSCTX_PORT	853	/* RFC 7858 §3.1 */
#define TLSCTX_PIN_LEN	32	/* SHA-256 of the SPKI, octets */

/* Why a TLS connection to an upstream failed: metrics labels too. */
enum tlsctx_fail {
	TLSCTX_FAIL_CONNECT = 0,	/* TCP connect refused or reset */
	TLSCTX_FAIL_TIMEOUT,		/* connect or handshake not done
					 * within the upstream's timeout */
	TLSCTX_FAIL_HANDSHAKE,		/* TLS protocol error */
	TLSCTX_FAIL_NAME,		/* certificate not for NAME (or IP) */
	TLSCTX_FAIL_CA,			/* certificate not from a trusted CA */
	TLSCTX_FAIL_EXPIRED,		/* certificate expired or not valid
					 * yet */
	TLSCTX_FAIL_PIN,		/* no certificate matches a tls-pin */
	TLSCTX_FAIL_CERT,		/* certificate refused otherwise */
	TLSCTX_FAIL_N
};

/* The words of enum tlsctx_fail, in its order. */
extern const char *const tlsctx_fail_names[TLSCTX_FAIL_N];

/* What one upstream's TLS did, added to by every worker
 * (metrics_add_shared), read with metrics_read. */
struct tlsctx_stats {
	uint64_t	open;		/* connections open now (a gauge:
					 * opened minus closed) */
	uint64_t	closed;		/* connections closed */
	uint64_t	opened;		/* connections started */
	uint64_t	handshakes;	/* completed */
	uint64_t	resumed;	/* of them, resuming a session */
	uint64_t	queries;	/* queries written, resends too */
	uint64_t	resent;		/* queries sent again after the
					 * server closed their connection */
	uint64_t	fail[TLSCTX_FAIL_N];
};

/* What a forward block says about one TLS upstream. */
struct tlsctx_conf {
	const struct addr *addr;	/* borrowed */
	const char	*name;		/* NAME, or NULL: the IP address */
	const char	*ca;		/* tls-ca, or NULL: the system store */
	const uint8_t	(*pins)[TLSCTX_PIN_LEN]; /* tls-pin, n_pins */
	size_t		 n_pins;
	int		 auth_none;	/* tls-auth none */
	uint32_t	 max_inflight;	/* tls-max-inflight */
	uint32_t	 idle_ms;	/* tls-idle-timeout */
};

/*
 * One upstream's TLS: refcounted (tlsctx_ref, tlsctx_unref; atomic, so
 * that a worker's open connections keep it past a reload), immutable but
 * for its stats and log limit.
 */
struct tlsctx {
	SSL_CTX			*ctx;
	char			*name;		/* owned, or NULL */
	char			*key;		/* owned: its settings in one
						 * string (tlsctx_same) */
	char			*label;		/* owned: "tls://ADDR[#NAME]",
						 * the upstream's name */
	struct addr		 addr;
	uint32_t		 max_inflight;
	uint32_t		 idle_ms;
	int			 auth_none;
	unsigned		 refs;
	struct log_limit	 said;		/* failures: once a minute */
	struct tlsctx_stats	 stats;
	uint8_t			(*pins)[TLSCTX_PIN_LEN];	/* owned */
	size_t			 n_pins;
};

/*
 * tlsctx_store_check: whether the CA store named file (tls-ca), or the
 * system store when file is NULL (OpenSSL's default file and directory,
 * or SSL_CERT_FILE and SSL_CERT_DIR), holds at least one certificate.
 * Returns 0, or -1 with why (static text naming what was read) in *why.
 */
int	tlsctx_store_check(const char *file, const char **why);

/*
 * tlsctx_pin_parse: str in RFC 7469's form "sha256/BASE64" (44
 * characters of base64 for 32 octets) into out. Returns 0, or -1 if it
 * is not such a pin.
 */
int	tlsctx_pin_parse(const char *str, uint8_t out[TLSCTX_PIN_LEN]);

/* tlsctx_pin_format: out (at least 52 octets) as "sha256/BASE64". */
void	tlsctx_pin_format(const uint8_t pin[TLSCTX_PIN_LEN], char *out,
	    size_t len);

/*
 * tlsctx_new: the TLS of the upstream c describes (copied), with one
 * reference. Returns it, or NULL with why (static text) in *why: out of
 * memory, or the CA store missing, unreadable or empty.
 */
struct tlsctx *tlsctx_new(const struct tlsctx_conf *c, const char **why);

/* tlsctx_ref: one more reference to t; returns t. */
struct tlsctx *tlsctx_ref(struct tlsctx *t);

/* tlsctx_unref: drop one; the last frees t. NULL is fine. */
void	tlsctx_unref(struct tlsctx *t);

/* tlsctx_same: 1 if a and b were made from the same settings, else 0. */
int	tlsctx_same(const struct tlsctx *a, const struct tlsctx *b);

/*
 * tlsctx_ssl: a new client SSL of t: SNI and the name checked are t's
 * NAME, ALPN "dot" (RFC 7858 §3.2), resuming session (borrowed, may be
 * NULL) if given. Each session ticket the server sends on it (RFC 8446
 * §4.6.1) goes to *keep (owned there; the one before freed) until
 * tlsctx_ssl_forget. Returns it (freed with its bufferevent), or NULL.
 */
SSL	*tlsctx_ssl(struct tlsctx *t, SSL_SESSION *session,
	    SSL_SESSION **keep);

/* tlsctx_ssl_forget: tickets of ssl go nowhere from now on. */
void	tlsctx_ssl_forget(SSL *ssl);

/*
 * tlsctx_why: why the handshake of ssl failed, err being the OpenSSL
 * error its bufferevent saw (0: none, a socket error then); into detail
 * (len octets) the verifier's or OpenSSL's own words.
 */
enum tlsctx_fail tlsctx_why(SSL *ssl, unsigned long err, char *detail,
	    size_t len);

/*
 * tlsctx_failed: a connection to t failed for why at now (ms): counted,
 * and said (with detail, naming t->label) at most once a minute for t,
 * with how many were not said since.
 */
void	tlsctx_failed(struct tlsctx *t, enum tlsctx_fail why,
	    const char *detail, uint64_t now);

#endif
