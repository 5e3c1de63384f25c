/*
 * config.h: struct config, its defaults, semantic validation and free: the
 * bottom of the configuration layer (lex, parse and the handlers of its
 * directives read a file into it, resolvconf fills in `upstream
 * resolv.conf`, printconf prints it).
 */
#ifndef DNSDAMPER_CONFIG_H
#define DNSDAMPER_CONFIG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "acl.h"
#include "addr.h"

/* The port of an address given without one (RFC 1035 §4.2). */
#define CONFIG_DEFAULT_PORT	53

/* The file named in messages about what no file said. */
#define CONFIG_BUILTIN	"(defaults)"

/* How a forward zone picks among its healthy upstreams. */
enum config_policy {
	CONFIG_POLICY_ORDER = 0,	/* first healthy in list order */
	CONFIG_POLICY_RANDOM,		/* uniformly random healthy one */
	CONFIG_POLICY_FASTEST,		/* lowest smoothed RTT, exploring */
	CONFIG_POLICY_HASH		/* rendezvous hash of the qname */
};

/* Where log messages go (the journal is used by itself when stderr is
 * connected to it). */
enum config_log {
	CONFIG_LOG_STDERR = 0,
	CONFIG_LOG_SYSLOG
};

/* The dnstap messages written (dnstap-messages), as bits. */
#define CONFIG_DNSTAP_CLIENT_QUERY	0x01
#define CONFIG_DNSTAP_CLIENT_RESPONSE	0x02
#define CONFIG_DNSTAP_FORWARDER_QUERY	0x04
#define CONFIG_DNSTAP_FORWARDER_RESPONSE 0x08

/* The word that turns a path or address directive off. */
#define CONFIG_NONE	"none"

/* The hosts file read when no hosts-file directive is given. */
#define CONFIG_HOSTS_FILE	"/etc/hosts"

/* How a local-zone answers the names at and below it. */
enum config_local_type {
	CONFIG_LOCAL_STATIC = 0,	/* local-data, else NXDOMAIN or NODATA
					 * with the zone's SOA */
	CONFIG_LOCAL_NXDOMAIN,		/* NXDOMAIN for the whole subtree */
	CONFIG_LOCAL_REFUSE,		/* REFUSED for the whole subtree */
	CONFIG_LOCAL_TRANSPARENT,	/* local-data, else forwarded */
	CONFIG_LOCAL_NODEFAULT		/* not served: removes a default */
};

/* A word of the configuration language and the value it stands for. */
struct config_name {
	const char	*name;
	int		 value;
};

/* The words of enum config_policy, enum config_log and enum
 * config_local_type; end with NULL. */
extern const struct config_name config_policy_names[];
extern const struct config_name config_log_names[];
extern const struct config_name config_local_type_names[];

/* The words of dnstap-messages, each with its CONFIG_DNSTAP_* bit; ends
 * with NULL. */
extern const struct config_name config_dnstap_message_names[];

/*
 * The zones served locally unless configured otherwise, in presentation
 * format, lower case; ends with NULL: localhost. (RFC 6761 §6.3), the
 * locally served zones of RFC 6303 §4 and RFC 7793 (IANA's registry of
 * them), invalid. (RFC 6761 §6.4), home.arpa. (RFC 8375) and onion. (RFC
 * 7686 §2). dnsdamper.conf(5) lists them.
 */
extern const char *const config_default_local_zones[];

/* Where a directive was read, for `file:line: message` diagnostics. */
struct config_where {
	char	*file;		/* owned */
	int	 line;		/* 0: not on a line (an implied directive) */
};

/* The port of a tls:// upstream given without one (RFC 7858 §3.1). */
#define CONFIG_TLS_PORT		853
/* The octets of a tls-pin: SHA-256 (RFC 7469 §2.4). */
#define CONFIG_TLS_PIN_LEN	32

/* How a forward block's TLS upstreams are authenticated (tls-auth). */
enum config_tls_auth {
	CONFIG_TLS_AUTH_STRICT = 0,	/* RFC 8310 strict: name or pin */
	CONFIG_TLS_AUTH_NONE		/* encrypted, not authenticated */
};

extern const struct config_name config_tls_auth_names[];

/* An upstream written tls://ADDRESS[:PORT][#NAME]. */
struct config_tls_upstream {
	struct addr		 addr;		/* also in upstreams[] */
	char			*name;		/* owned: NAME, lower case
						 * without its final dot, or
						 * NULL */
};

/* One `forward ZONE { ... }` block. */
struct config_forward {
	char			*zone;		/* owned; lower case,
						 * presentation format,
						 * absolute: "." or
						 * "corp.example." */
	struct addr		*upstreams;	/* owned array, port set */
	size_t			 n_upstreams;
	int			 use_resolv_conf; /* `upstream resolv.conf` */
	struct config_tls_upstream *tls;	/* owned array: those of
						 * upstreams[] reached over
						 * TLS only */
	size_t			 n_tls;
	char			*tls_ca;	/* owned, or NULL: the system
						 * store */
	uint8_t			(*tls_pins)[CONFIG_TLS_PIN_LEN]; /* owned */
	size_t			 n_tls_pins;
	enum config_tls_auth	 tls_auth;
	uint32_t		 tls_max_inflight; /* queries waiting on a
						 * connection before another
						 * opens */
	uint32_t		 tls_idle_timeout; /* ms */
	enum config_policy	 policy;
	uint32_t		 max_inflight;	/* 0: a share of the global */
	int			 last_known_good; /* boolean; -1 until
						 * config_validate gives it
						 * the top level's */
	uint32_t		 last_known_good_hold; /* seconds; 0 until
						 * config_validate, as above */
	struct config_where	 where;		/* of the forward directive;
						 * the top file (or
						 * CONFIG_BUILTIN) at line 0
						 * for the implied one */
};

/* One `local-zone ZONE TYPE` directive. */
struct config_local_zone {
	char			*zone;		/* owned; as forward's zone */
	enum config_local_type	 type;
	struct config_where	 where;
};

/* One `local-data "RR"` directive. */
struct config_local_data {
	char			*rr;		/* owned; the record in ldns's
						 * presentation format, one
						 * line: "a.example.\t3600\tIN
						 * \tA\t192.0.2.1" */
	char			*owner;		/* owned; its owner, lower
						 * case, as forward's zone */
	uint16_t		 type;		/* its type, host order */
	struct config_where	 where;
};

/* A network list directive: allow, exempt-clients. */
struct config_nets {
	struct acl	acl;		/* compiled by config_validate */
	int		builtin;	/* still the built-in list, which the
					 * directive's first line replaces */
};

/*
 * A configuration: filled by config_defaults, then a reader (parse_load),
 * config_implicit, config_validate and resolvconf_apply; then read-only.
 */
struct config {
	char			*source;	/* owned; file read, or NULL
						 * when running on defaults */
	struct addr		*listen;	/* owned array */
	size_t			 n_listen;
	int			 listen_default; /* no listen directive: the
						 * built-in addresses */
	struct config_where	 listen_nonlocal; /* where the first listen
						 * address that is not
						 * loopback was given; line
						 * 0: none (or not known) */
	struct config_nets	 allow;		/* clients answered at all */
	struct config_nets	 exempt_clients; /* neither rate limited nor
						 * given the minimal ANY */
	uint32_t		 ratelimit;	/* queries a second per client
						 * address over UDP; 0: off */
	uint32_t		 ratelimit_slip; /* every Nth over: TC=1 */
	uint32_t		 ratelimit_size; /* client addresses tracked */
	struct config_forward	*forwards;	/* owned array, in file order,
						 * the implied one last */
	size_t			 n_forwards;
	char			*resolv_conf;	/* owned; default
						 * /etc/resolv.conf */
	char			**hosts_files;	/* owned array of owned paths;
						 * CONFIG_HOSTS_FILE until a
						 * hosts-file directive;
						 * empty for `none` */
	size_t			 n_hosts_files;
	int			 hosts_file_default; /* no hosts-file directive
						 * yet: the built-in file */
	struct config_local_zone *local_zones;	/* owned array, file order */
	size_t			 n_local_zones;
	struct config_local_data *local_data;	/* owned array, file order */
	size_t			 n_local_data;
	uint64_t		 cache_size;	/* bytes */
	uint32_t		 threads;	/* workers; 0: one per CPU of
						 * our affinity, at most 4 */
	uint32_t		 max_ttl;	/* seconds */
	uint32_t		 min_ttl;	/* seconds */
	uint32_t		 max_negative_ttl; /* seconds */
	uint32_t		 failure_ttl;	/* seconds, RFC 9520 */
	uint16_t		 edns_buffer_size; /* bytes, RFC 6891 */
	uint32_t		 upstream_timeout_min; /* ms */
	uint32_t		 upstream_timeout_max; /* ms */
	uint32_t		 query_timeout;	/* ms */
	uint32_t		 tcp_clients;	/* concurrent connections */
	uint32_t		 tcp_idle_timeout; /* ms, RFC 7766 */
	uint32_t		 tcp_initial_timeout; /* ms, before a whole
						 * message */
	uint32_t		 max_inflight;	/* upstream queries at once */
	uint32_t		 max_waiters;	/* clients waiting on one
						 * resolution */
	uint32_t		 retry_budget;	/* % of first queries */
	uint32_t		 retry_budget_min; /* further queries allowed
						 * in any 10 s */
	int			 randomize_case; /* 0x20, boolean */
	int			 serve_stale;	/* RFC 8767, boolean */
	uint32_t		 stale_max_age;	/* seconds */
	uint32_t		 stale_answer_ttl; /* seconds */
	uint32_t		 client_timeout; /* ms */
	uint32_t		 stale_refresh_interval; /* seconds */
	int			 prefetch;	/* boolean */
	int			 srv_prefetch_targets; /* boolean */
	int			 last_known_good; /* boolean: each zone's
						 * default (lkg.h) */
	uint32_t		 last_known_good_hold; /* seconds */
	char			*control;	/* owned; socket path or
						 * "none" */
	char			*control_mode_str; /* owned; octal, as given */
	unsigned		 control_mode;	/* from control_mode_str */
	char			*control_group;	/* owned; group or "none" */
	uint32_t		 control_clients; /* HTTP connections at once */
	char			*metrics_listen_str; /* owned; or "none" */
	struct addr		 metrics_listen; /* len 0: none */
	uint32_t		 metrics_clients; /* HTTP connections at once */
	char			*cache_file;	/* owned; path or "none" */
	char			*user;		/* owned; to run as */
	enum config_log		 log;
	char			*dnstap;	/* owned; socket path,
						 * "file:PATH" or "none" */
	unsigned		 dnstap_messages; /* CONFIG_DNSTAP_* bits */
	char			*dnstap_identity; /* owned; or "none" */
	char			*dnstap_version; /* owned; or "none" */
	uint32_t		 log_queries_num; /* log-queries: this many */
	uint32_t		 log_queries_den; /* of every this many
						 * queries; 0: off */
};

/*
 * Where the checks of a configuration report what is wrong: the reader of
 * the file, which alone knows where each directive was given. error()
 * writes one message (fmt and ap, printf-style, no newline) as a line
 * `file:line: message`: at *where when where is not NULL, else where the
 * top-level directive named directive was first given (`file: message`
 * for the configuration file when it was not given), and counts it.
 */
struct config_report {
	void	(*error)(void *arg, const struct config_where *where,
		    const char *directive, const char *fmt, va_list ap)
		    __attribute__((format(printf, 4, 0)));
	void	*arg;
};

/* config_error: report fmt through r, as r->error says. */
void	config_error(const struct config_report *r,
	    const struct config_where *where, const char *directive,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * config_defaults: overwrite *conf (without freeing it) with the built-in
 * value of every directive that has one: no listen address and no forward
 * yet (config_implicit adds them), strings copied, allow and
 * exempt-clients the loopback networks 127.0.0.0/8 and ::1 (builtin, not
 * compiled yet), the hosts file CONFIG_HOSTS_FILE, no local-zone or
 * local-data. Returns 0, or -1 if out of memory; either way *conf is for
 * config_free.
 */
int	config_defaults(struct config *conf);

/*
 * config_forward_defaults: overwrite *fw (without freeing it) with an
 * empty forward block: no zone, no upstream, policy order, max-inflight 0
 * (an even share), last-known-good and last-known-good-hold not given
 * (-1 and 0: config_validate gives them the top level's).
 */
void	config_forward_defaults(struct config_forward *fw);

/*
 * config_implicit: add what a configuration means without saying it:
 * listen on 127.0.0.1:53 and [::1]:53 when conf has no listen address
 * (conf->listen_default says whether that was so), and `forward . {
 * upstream resolv.conf }` when no forward is for the root, with where file
 * (copied) at line 0. Returns 0, or -1 if out of memory (conf is then for
 * config_free).
 */
int	config_implicit(struct config *conf, const char *file);

/*
 * config_add_addr: append a copy of *a to the array *arr of *n addresses
 * (owned, reallocated). Returns 0, or -1 if out of memory (*arr intact).
 */
int	config_add_addr(struct addr **arr, size_t *n, const struct addr *a);

/*
 * config_add_forward: append *fw to conf->forwards, which then owns what
 * fw owns. Returns 0, or -1 if out of memory (fw still owns it).
 */
int	config_add_forward(struct config *conf,
	    const struct config_forward *fw);

/*
 * config_add_hosts_file: append a copy of path to conf->hosts_files; the
 * first one given replaces the built-in CONFIG_HOSTS_FILE; CONFIG_NONE
 * empties the list. Returns 0, or -1 if out of memory (conf unchanged
 * but for the default dropped).
 */
int	config_add_hosts_file(struct config *conf, const char *path);

/*
 * config_add_local_zone, config_add_local_data: append *lz or *ld to
 * conf's array, which then owns what it owns. Return 0, or -1 if out of
 * memory (the caller still owns it).
 */
int	config_add_local_zone(struct config *conf,
	    const struct config_local_zone *lz);
int	config_add_local_data(struct config *conf,
	    const struct config_local_data *ld);

/* config_is_default_local_zone: 1 if zone (presentation format, lower
 * case, absolute) is one of config_default_local_zones, else 0. */
int	config_is_default_local_zone(const char *zone);

/*
 * config_validate: the checks across directives of a configuration that
 * was read, every error reported through r, not only the first:
 * - the max-inflight of the zones fits the global one with at least 1 left
 *   for each zone without its own: `forward "ZONE": max-inflight N: the
 *   zones would need N of max-inflight N` at the forward, or `max-inflight
 *   N leaves less than 1 for each of the N zones without their own`;
 * - control-mode is an octal mode from 0 to 0777, then stored in
 *   control_mode: `control-mode: "STR" is not an octal mode from 0 to
 *   0777`;
 * - metrics-listen is "none" (metrics_listen.len 0) or an address, port
 *   9153 by default, then stored in metrics_listen: `metrics-listen: "STR"
 *   is not an address: why`;
 * - allow and exempt-clients are compiled (acl_compile), and a listen
 *   address that is not loopback (a wildcard included) needs an allow
 *   that admits some client beyond loopback, so that no configuration is
 *   an open resolver by accident: `listen ADDR is not a loopback address,
 *   but no "allow" line admits a client beyond loopback: add "allow
 *   NETWORK/LEN" for the clients it serves`, at conf->listen_nonlocal
 *   (where the directive listen was first given if that is not known);
 * - a local-data owner with a CNAME has no other record, and one CNAME
 *   at most (RFC 2181 §10.1), reported at the later record: `local-data
 *   "NAME": a CNAME and other data (RFC 2181 section 10.1); first at
 *   FILE:LINE`;
 * - a forward block without its own last-known-good or
 *   last-known-good-hold gets the top level's (never an error).
 * Both strings are rewritten in canonical form, as -t -v prints them
 * ("0660", "127.0.0.1:9153"); out of memory is reported too.
 */
void	config_validate(struct config *conf, const struct config_report *r);

/*
 * config_add_tls_upstream: append *tu to fw->tls, which then owns its
 * name. config_add_tls_pin: append a copy of pin to fw->tls_pins. Each
 * returns 0, or -1 if out of memory (nothing taken).
 */
int	config_add_tls_upstream(struct config_forward *fw,
	    const struct config_tls_upstream *tu);
int	config_add_tls_pin(struct config_forward *fw,
	    const uint8_t pin[CONFIG_TLS_PIN_LEN]);

/* config_tls_upstream: fw's TLS settings of upstream a, or NULL if a is
 * not reached over TLS. */
const struct config_tls_upstream *config_tls_upstream(
	    const struct config_forward *fw, const struct addr *a);

/* config_forward_free: release what *fw owns; *fw may then be reused. */
void	config_forward_free(struct config_forward *fw);

/* config_local_zone_free, config_local_data_free: the same for *lz, *ld. */
void	config_local_zone_free(struct config_local_zone *lz);
void	config_local_data_free(struct config_local_data *ld);

/* config_free: release everything *conf owns; *conf may then be reused. */
void	config_free(struct config *conf);

/*
 * config_name_word: the word of names (ending with NULL) for value, a
 * static string; "?" for a value that has none.
 */
const char *config_name_word(const struct config_name *names, int value);

/*
 * config_policy_name: the directive's word for policy ("order"...), a
 * static string; "?" for a value that is not a policy.
 */
const char *config_policy_name(enum config_policy policy);

#endif
