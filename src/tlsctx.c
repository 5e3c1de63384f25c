/* tlsctx.c: an upstream's TLS context, how its server is authenticated, and why a handshake failed. */
#include "autoconf.h"

#include <sys/types.h>

#include <dirent.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "metrics.h"
#include "tlsctx.h"

#define PIN_PREFIX	"sha256/"
#define PIN_B64_LEN	44	/* base64 of 32 octets, with its "=" */

static int ex_index = -1;
static pthread_once_t ex_once = PTHREAD_ONCE_INIT;

static void
ex_init(void)
{
	ex_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

/* A new session ticket: kept where tlsctx_ssl was told. Returns 1: the
 * session's reference is taken. */
static int
new_session_cb(SSL *ssl, SSL_SESSION *s)
{
	SSL_SESSION **keep = SSL_get_ex_data(ssl, ex_index);

	if (keep == NULL)
		return 0;
	SSL_SESSION_free(*keep);
	*keep = s;
	return 1;
}

const char *const tlsctx_fail_names[TLSCTX_FAIL_N] = {
	"connect", "timeout", "handshake", "name", "ca", "expired", "pin",
	"cert"
};

/* The CA certificates of file, counted; -1 if it cannot be read. */
static int
count_file(const char *file)
{
	X509_STORE *st;
	int n;

	if ((st = X509_STORE_new()) == NULL)
		return -1;
	if (X509_STORE_load_file(st, file) != 1) {
		X509_STORE_free(st);
		ERR_clear_error();
		return -1;
	}
	n = sk_X509_OBJECT_num(X509_STORE_get0_objects(st));
	X509_STORE_free(st);
	return n;
}

/* 1 if the directory dir holds an entry that is not hidden, else 0. */
static int
dir_has_entries(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int found = 0;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL)
		found = de->d_name[0] != '.';
	closedir(d);
	return found;
}

/* The system store's file and directory, as OpenSSL would use them. */
static void
system_store(const char **file, const char **dir)
{
	if ((*file = getenv(X509_get_default_cert_file_env())) == NULL)
		*file = X509_get_default_cert_file();
	if ((*dir = getenv(X509_get_default_cert_dir_env())) == NULL)
		*dir = X509_get_default_cert_dir();
}

int
tlsctx_store_check(const char *file, const char **why)
{
	const char *dir;

	if (file != NULL) {
		if (count_file(file) > 0)
			return 0;
		*why = "holds no CA certificate, or cannot be read";
		return -1;
	}
	system_store(&file, &dir);
	if (count_file(file) > 0 || dir_has_entries(dir))
		return 0;
	*why = "the system CA store is missing or empty (install "
	    "ca-certificates, or give tls-ca or tls-pin)";
	return -1;
}

int
tlsctx_pin_parse(const char *str, uint8_t out[TLSCTX_PIN_LEN])
{
	unsigned char buf[PIN_B64_LEN];
	size_t plen = strlen(PIN_PREFIX);

	if (strncmp(str, PIN_PREFIX, plen) != 0 ||
	    strlen(str + plen) != PIN_B64_LEN ||
	    str[plen + PIN_B64_LEN - 1] != '=' ||
	    str[plen + PIN_B64_LEN - 2] == '=')
		return -1;
	/* EVP_DecodeBlock counts the padding as data: 33 octets out. */
	if (EVP_DecodeBlock(buf, (const unsigned char *)str + plen,
	    PIN_B64_LEN) != TLSCTX_PIN_LEN + 1)
		return -1;
	memcpy(out, buf, TLSCTX_PIN_LEN);
	return 0;
}

void
tlsctx_pin_format(const uint8_t pin[TLSCTX_PIN_LEN], char *out, size_t len)
{
	unsigned char b64[PIN_B64_LEN + 1];

	EVP_EncodeBlock(b64, pin, TLSCTX_PIN_LEN);
	snprintf(out, len, "%s%s", PIN_PREFIX, b64);
}

/* The SHA-256 of x's SubjectPublicKeyInfo, DER (RFC 7469 §2.4). */
static int
spki_sha256(X509 *x, uint8_t out[TLSCTX_PIN_LEN])
{
	unsigned char *der = NULL;
	unsigned int n = TLSCTX_PIN_LEN;
	int len;

	if ((len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &der)) <= 0)
		return -1;
	len = EVP_Digest(der, (size_t)len, out, &n, EVP_sha256(), NULL);
	OPENSSL_free(der);
	return len == 1 && n == TLSCTX_PIN_LEN ? 0 : -1;
}

/* 1 if x's key is one of t's pins. */
static int
pinned(const struct tlsctx *t, X509 *x)
{
	uint8_t h[TLSCTX_PIN_LEN];
	size_t i;

	if (x == NULL || spki_sha256(x, h) == -1)
		return 0;
	for (i = 0; i < t->n_pins; i++)
		if (memcmp(h, t->pins[i], TLSCTX_PIN_LEN) == 0)
			return 1;
	return 0;
}

/*
 * With pins, they alone authenticate (RFC 7858 §4.2, the out-of-band key
 * pinned profile): a key of the chain the server sent must be one, the
 * CA and name not being asked. Nothing is sent before this says yes: the
 * client writes nothing of its own until its handshake ends.
 */
static int
pin_verify(X509_STORE_CTX *x, void *arg)
{
	const struct tlsctx *t = arg;
	STACK_OF(X509) *chain;
	int i;

	if (pinned(t, X509_STORE_CTX_get0_cert(x)))
		return 1;
	if ((chain = X509_STORE_CTX_get0_untrusted(x)) != NULL)
		for (i = 0; i < sk_X509_num(chain); i++)
			if (pinned(t, sk_X509_value(chain, i)))
				return 1;
	X509_STORE_CTX_set_error(x, X509_V_ERR_APPLICATION_VERIFICATION);
	return 0;
}

/* The CA store of c into ctx: tls-ca, or the system's. */
static int
load_store(SSL_CTX *ctx, const struct tlsctx_conf *c, const char **why)
{
	const char *file, *dir;

	if (tlsctx_store_check(c->ca, why) == -1)
		return -1;
	if (c->ca != NULL) {
		if (SSL_CTX_load_verify_locations(ctx, c->ca, NULL) == 1)
			return 0;
	} else {
		system_store(&file, &dir);
		if (count_file(file) > 0)
			(void)SSL_CTX_load_verify_locations(ctx, file, NULL);
		if (SSL_CTX_set_default_verify_dir(ctx) == 1)
			return 0;
	}
	ERR_clear_error();
	*why = "the CA store cannot be read";
	return -1;
}

/* How t's server is authenticated, set in t->ctx. */
static int
set_verify(struct tlsctx *t, const struct tlsctx_conf *c, const char **why)
{
	X509_VERIFY_PARAM *p = SSL_CTX_get0_param(t->ctx);
	const struct sockaddr_storage *ss = &c->addr->ss;
	int ok;

	if (c->auth_none) {
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_NONE, NULL);
		return 0;
	}
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	if (c->n_pins > 0) {
		SSL_CTX_set_cert_verify_callback(t->ctx, pin_verify, t);
		return 0;
	}
	if (load_store(t->ctx, c, why) == -1)
		return -1;
	if (c->name != NULL)
		ok = X509_VERIFY_PARAM_set1_host(p, c->name, 0);
	else if (ss->ss_family == AF_INET)
		ok = X509_VERIFY_PARAM_set1_ip(p, (const unsigned char *)
		    &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		ok = X509_VERIFY_PARAM_set1_ip(p, (const unsigned char *)
		    &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	if (ok != 1) {
		*why = "cannot set the name to check";
		return -1;
	}
	return 0;
}

/* t's settings as one string, for tlsctx_same. */
static char *
make_key(const struct tlsctx_conf *c)
{
	char buf[ADDR_STRLEN], pin[64], *key, *k;
	size_t i, len;

	len = strlen(c->name != NULL ? c->name : "") + strlen(c->ca != NULL ?
	    c->ca : "") + c->n_pins * sizeof(pin) + ADDR_STRLEN + 64;
	if ((key = malloc(len)) == NULL)
		return NULL;
	k = key + snprintf(key, len, "%s#%s|%s|%d|%u|%u",
	    addr_format(c->addr, buf, sizeof(buf)), c->name != NULL ?
	    c->name : "", c->ca != NULL ? c->ca : "", c->auth_none,
	    c->max_inflight, c->idle_ms);
	for (i = 0; i < c->n_pins; i++) {
		tlsctx_pin_format(c->pins[i], pin, sizeof(pin));
		k += snprintf(k, len - (size_t)(k - key), "|%s", pin);
	}
	return key;
}

/* "tls://ADDR[#NAME]": how the upstream is named everywhere. */
static char *
make_label(const struct tlsctx_conf *c)
{
	char buf[ADDR_STRLEN], *label;

	addr_format(c->addr, buf, sizeof(buf));
	if (asprintf(&label, "tls://%s%s%s", buf, c->name != NULL ? "#" : "",
	    c->name != NULL ? c->name : "") == -1)
		return NULL;
	return label;
}

static void
tlsctx_free(struct tlsctx *t)
{
	SSL_CTX_free(t->ctx);
	free(t->label);
	free(t->name);
	free(t->key);
	free(t->pins);
	free(t);
}

struct tlsctx *
tlsctx_new(const struct tlsctx_conf *c, const char **why)
{
	struct tlsctx *t;

	(void)pthread_once(&ex_once, ex_init);
	*why = "out of memory";
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->refs = 1;
	t->addr = *c->addr;
	t->max_inflight = c->max_inflight;
	t->idle_ms = c->idle_ms;
	t->auth_none = c->auth_none;
	if ((c->name != NULL && (t->name = strdup(c->name)) == NULL) ||
	    (t->label = make_label(c)) == NULL ||
	    (t->key = make_key(c)) == NULL ||
	    (c->n_pins > 0 && (t->pins = calloc(c->n_pins,
	    sizeof(*t->pins))) == NULL) ||
	    (t->ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		goto fail;
	if (c->n_pins > 0)
		memcpy(t->pins, c->pins, c->n_pins * sizeof(*t->pins));
	t->n_pins = c->n_pins;
	/* RFC 8310 §9, RFC 7525: nothing older than TLS 1.2. */
	if (SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION) != 1)
		goto fail;
	/* Sessions are kept by tlsconn, one per upstream and worker, to
	 * resume on reconnect; OpenSSL's own cache is not used. */
	SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_CLIENT |
	    SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->ctx, new_session_cb);
	if (set_verify(t, c, why) == -1)
		goto fail;
	return t;
fail:
	ERR_clear_error();
	tlsctx_free(t);
	return NULL;
}

struct tlsctx *
tlsctx_ref(struct tlsctx *t)
{
	(void)__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

void
tlsctx_unref(struct tlsctx *t)
{
	if (t != NULL && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0)
		tlsctx_free(t);
}

int
tlsctx_same(const struct tlsctx *a, const struct tlsctx *b)
{
	return strcmp(a->key, b->key) == 0;
}

SSL *
tlsctx_ssl(struct tlsctx *t, SSL_SESSION *session, SSL_SESSION **keep)
{
	static const unsigned char alpn[] = { 3, 'd', 'o', 't' };
	SSL *ssl;

	if ((ssl = SSL_new(t->ctx)) == NULL)
		return NULL;
	if ((t->name != NULL && SSL_set_tlsext_host_name(ssl, t->name) != 1) ||
	    SSL_set_alpn_protos(ssl, alpn, sizeof(alpn)) != 0 ||
	    (session != NULL && SSL_set_session(ssl, session) != 1) ||
	    SSL_set_ex_data(ssl, ex_index, keep) != 1) {
		SSL_free(ssl);
		ERR_clear_error();
		return NULL;
	}
	return ssl;
}

void
tlsctx_ssl_forget(SSL *ssl)
{
	if (ssl != NULL)
		(void)SSL_set_ex_data(ssl, ex_index, NULL);
}

enum tlsctx_fail
tlsctx_why(SSL *ssl, unsigned long err, char *detail, size_t len)
{
	long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;

	if (v != X509_V_OK) {
		snprintf(detail, len, "%s", X509_verify_cert_error_string(v));
		switch (v) {
		case X509_V_ERR_HOSTNAME_MISMATCH:
		case X509_V_ERR_IP_ADDRESS_MISMATCH:
			return TLSCTX_FAIL_NAME;
		case X509_V_ERR_CERT_HAS_EXPIRED:
		case X509_V_ERR_CERT_NOT_YET_VALID:
			return TLSCTX_FAIL_EXPIRED;
		case X509_V_ERR_APPLICATION_VERIFICATION:
			snprintf(detail, len, "no key of its certificates is "
			    "a tls-pin");
			return TLSCTX_FAIL_PIN;
		case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
		case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
		case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
		case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
		case X509_V_ERR_CERT_UNTRUSTED:
			return TLSCTX_FAIL_CA;
		default:
			return TLSCTX_FAIL_CERT;
		}
	}
	if (err != 0) {
		ERR_error_string_n(err, detail, len);
		return TLSCTX_FAIL_HANDSHAKE;
	}
	snprintf(detail, len, "connection refused or closed");
	return TLSCTX_FAIL_CONNECT;
}

void
tlsctx_failed(struct tlsctx *t, enum tlsctx_fail why, const char *detail,
    uint64_t now)
{
	uint64_t held;

	metrics_add_shared(&t->stats.fail[why], 1);
	if (log_limit_due(&t->said, now, LOG_LIMIT_MINUTE, &held))
		log_warnx("upstream %s: TLS failed (%s): %s (and %llu more "
		    "since the last such message)", t->label,
		    tlsctx_fail_names[why], detail, (unsigned long long)held);
}
