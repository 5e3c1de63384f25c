/* config.h: struct config, its defaults, semantic validation and free. */
#ifndef DNSDAMPER_CONFIG_H
#define DNSDAMPER_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "addr.h"

#define CONFIG_DEFAULT_PORT	53

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

/* The word that turns a path or address directive off. */
#define CONFIG_NONE	"none"

/* Where a directive was read, for `file:line: message` diagnostics. */
struct config_where {
	char	*file;		/* owned */
	int	 line;
};

/* One `forward ZONE { ... }` block. */
struct config_forward {
	char			*zone;		/* owned; lower case, presentation
						 * format, absolute: "." or
						 * "corp.example." */
	struct addr		*upstreams;	/* owned array, port set */
	size_t			 n_upstreams;
	int			 use_resolv_conf; /* `upstream resolv.conf` */
	enum config_policy	 policy;
	uint32_t		 max_inflight;	/* 0: a share of the global */
	struct config_where	 where;
};

struct config {
	char			*source;	/* owned; file read, or NULL
						 * when running on defaults */
	struct addr		*listen;	/* owned array */
	size_t			 n_listen;
	int			 listen_default; /* no listen directive: the
						 * built-in addresses */
	struct config_forward	*forwards;	/* owned array, in file order */
	size_t			 n_forwards;
	char			*resolv_conf;	/* owned; default
						 * /etc/resolv.conf */
	uint64_t		 cache_size;	/* bytes */
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
	uint32_t		 max_inflight;	/* upstream queries at once */
	int			 randomize_case; /* 0x20, boolean */
	int			 serve_stale;	/* RFC 8767, boolean */
	uint32_t		 stale_max_age;	/* seconds */
	uint32_t		 stale_answer_ttl; /* seconds */
	uint32_t		 client_timeout; /* ms */
	uint32_t		 stale_refresh_interval; /* seconds */
	int			 prefetch;	/* boolean */
	int			 srv_prefetch_targets; /* boolean */
	char			*control;	/* owned; socket path or "none" */
	char			*control_mode_str; /* owned; octal, as given */
	unsigned		 control_mode;	/* from control_mode_str */
	char			*control_group;	/* owned; group or "none" */
	char			*metrics_listen_str; /* owned; or "none" */
	struct addr		 metrics_listen; /* len 0: none */
	char			*cache_file;	/* owned; path or "none" */
	char			*user;		/* owned; to run as */
	enum config_log		 log;
};

/*
 * config_defaults: fill *conf with the built-in defaults: listen
 * 127.0.0.1:53 and [::1]:53, `forward . { upstream resolv.conf }`, and the
 * default of every scalar. Returns 0, or -1 if out of memory.
 */
int	config_defaults(struct config *conf);

/*
 * config_load: the defaults, overridden by the file at path and its includes
 * (path NULL: defaults only), validated, with every `upstream resolv.conf`
 * expanded from conf->resolv_conf minus our own listen addresses.
 * Every error is written to errs as one line `file:line: message` (errors
 * not tied to a line: `file: message`), all errors of one run, not only the
 * first. Returns 0 and fills *conf (the caller frees it with config_free),
 * or -1 with *conf left empty.
 */
int	config_load(const char *path, struct config *conf, FILE *errs);

/* config_free: release everything *conf owns; *conf may then be reused. */
void	config_free(struct config *conf);

/*
 * config_print: write conf to stream in canonical form, one directive per
 * line, every value explicit, so that reading the output back yields an
 * equal config (`dnsdamper -t -v`).
 */
void	config_print(const struct config *conf, FILE *stream);

/* config_policy_name: the directive's word for policy ("order"...). */
const char *config_policy_name(enum config_policy policy);

#endif
