/* printconf.c: the configuration printed back in canonical form. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "addr.h"
#include "config.h"
#include "directive.h"
#include "lex.h"
#include "parse.h"
#include "parselog.h"
#include "printconf.h"
#include "tlsctx.h"

/* The table-driven directives of table set in base, one per line. */
static void
printconf_scalars(const struct directive *table, const void *base,
    const char *indent, const char *skip, FILE *stream)
{
	const struct directive *d;
	const char *str;
	char buf[64];
	uint64_t lo, hi;

	for (d = table; d->name != NULL; d++) {
		if (d->kind == DIRECTIVE_SPECIAL || (skip != NULL &&
		    strncmp(d->name, skip, strlen(skip)) == 0))
			continue;
		fprintf(stream, "%s%s ", indent, d->name);
		if (d->kind == DIRECTIVE_STRING) {
			str = *(char *const *)(const void *)
			    ((const char *)base + d->offset);
			lex_quote(str != NULL ? str : "", stream);
		} else {
			lo = directive_get(d, base, d->offset);
			fputs(directive_format(d, lo, buf, sizeof(buf)),
			    stream);
			if ((d->flags & DIRECTIVE_PAIR) &&
			    (hi = directive_get(d, base, d->offset_max)) != lo)
				fprintf(stream, " %s",
				    directive_format(d, hi, buf, sizeof(buf)));
		}
		putc('\n', stream);
	}
}

static void
printconf_addrs(const char *prefix, const struct addr *a, size_t n,
    FILE *stream)
{
	char buf[ADDR_STRLEN];
	size_t i;

	fputs(prefix, stream);
	for (i = 0; i < n; i++)
		fprintf(stream, " %s", addr_format(&a[i], buf, sizeof(buf)));
	putc('\n', stream);
}

/* A network list directive on one line; "none" when empty. */
static void
printconf_nets(const char *name, const struct acl *acl, FILE *stream)
{
	char buf[ACL_PREFIX_STRLEN];
	size_t i;

	fputs(name, stream);
	for (i = 0; i < acl->n; i++)
		fprintf(stream, " %s", acl_prefix_format(&acl->prefixes[i], buf,
		    sizeof(buf)));
	fprintf(stream, "%s\n", acl->n == 0 ? " " CONFIG_NONE : "");
}

/* A forward block's upstreams, TLS ones as tls://ADDRESS:PORT[#NAME]. */
static void
printconf_upstreams(const struct config_forward *fw, FILE *stream)
{
	const struct config_tls_upstream *tu;
	char buf[ADDR_STRLEN], word[ADDR_STRLEN + 8 + 256];
	size_t i;

	fputs("\tupstream", stream);
	for (i = 0; i < fw->n_upstreams; i++) {
		addr_format(&fw->upstreams[i], buf, sizeof(buf));
		if ((tu = config_tls_upstream(fw, &fw->upstreams[i])) == NULL) {
			fprintf(stream, " %s", buf);
			continue;
		}
		/* Quoted when it has a #NAME: # starts a comment. */
		snprintf(word, sizeof(word), "tls://%s%s%s", buf,
		    tu->name != NULL ? "#" : "", tu->name != NULL ?
		    tu->name : "");
		putc(' ', stream);
		lex_quote(word, stream);
	}
	putc('\n', stream);
}

/* A forward block's tls-ca and tls-pins, if any. */
static void
printconf_tls(const struct config_forward *fw, FILE *stream)
{
	char pin[64];
	size_t i;

	if (fw->tls_ca != NULL) {
		fputs("\ttls-ca ", stream);
		lex_quote(fw->tls_ca, stream);
		putc('\n', stream);
	}
	for (i = 0; i < fw->n_tls_pins; i++) {
		tlsctx_pin_format(fw->tls_pins[i], pin, sizeof(pin));
		fprintf(stream, "\ttls-pin %s\n", pin);
	}
}

/* A forward block; expanded resolv.conf addresses only as a comment. */
static void
printconf_forward(const struct config *conf, const struct config_forward *fw,
    FILE *stream)
{
	fputs("\nforward ", stream);
	lex_quote(fw->zone, stream);
	fputs(" {\n", stream);
	if (fw->use_resolv_conf) {
		fputs("\tupstream resolv.conf\n", stream);
		if (fw->n_upstreams > 0) {
			fprintf(stream, "\t# from %s:", conf->resolv_conf);
			printconf_addrs("", fw->upstreams, fw->n_upstreams,
			    stream);
		}
	} else
		printconf_upstreams(fw, stream);
	/* The TLS settings only of a block with TLS upstreams. */
	printconf_scalars(parse_forward_block, fw, "\t", fw->n_tls > 0 ?
	    NULL : "tls-", stream);
	printconf_tls(fw, stream);
	fputs("}\n", stream);
}

/* `directive word`, the word quoted as lex_next reads it back. */
static void
printconf_word(const char *directive, const char *word, FILE *stream)
{
	fprintf(stream, "%s ", directive);
	lex_quote(word, stream);
	putc('\n', stream);
}

/* The hosts files (or none) and the local zones and data. */
static void
printconf_local(const struct config *conf, FILE *stream)
{
	const struct config_local_zone *lz;
	size_t i;

	if (conf->n_hosts_files == 0)
		printconf_word("hosts-file", CONFIG_NONE, stream);
	for (i = 0; i < conf->n_hosts_files; i++)
		printconf_word("hosts-file", conf->hosts_files[i], stream);
	for (i = 0; i < conf->n_local_zones; i++) {
		lz = &conf->local_zones[i];
		fputs("local-zone ", stream);
		lex_quote(lz->zone, stream);
		fprintf(stream, " %s\n", config_name_word(
		    config_local_type_names, (int)lz->type));
	}
	for (i = 0; i < conf->n_local_data; i++)
		printconf_word("local-data", conf->local_data[i].rr, stream);
}

void
printconf_write(const struct config *conf, FILE *stream)
{
	char buf[ADDR_STRLEN];
	size_t i;

	printconf_scalars(parse_top, conf, "", NULL, stream);
	parselog_print(conf, stream);
	printconf_nets("allow", &conf->allow.acl, stream);
	printconf_nets("exempt-clients", &conf->exempt_clients.acl, stream);
	for (i = 0; i < conf->n_listen; i++)
		fprintf(stream, "listen %s\n",
		    addr_format(&conf->listen[i], buf, sizeof(buf)));
	printconf_local(conf, stream);
	for (i = 0; i < conf->n_forwards; i++)
		printconf_forward(conf, &conf->forwards[i], stream);
}
