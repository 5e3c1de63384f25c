/* parsenet.c: the directives of addresses and networks in dnsdamper.conf. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "addr.h"
#include "config.h"
#include "directive.h"
#include "lex.h"
#include "parsenet.h"
#include "tlsctx.h"

/*
 * Parse str as an address of directive d and append it unless known.
 * Returns 0 if appended, -1 after reporting why not.
 */
static int
parsenet_addr_port(struct lex *lex, const struct directive *d, int line,
    const char *str, uint16_t port, struct addr **arr, size_t *n)
{
	struct addr a;
	const char *errstr;
	char buf[ADDR_STRLEN];
	size_t i;

	if (addr_parse(str, port, &a, &errstr) == -1) {
		lex_error(lex, line, "%s: \"%s\" is not an address: %s",
		    d->name, str, errstr);
		return -1;
	}
	for (i = 0; i < *n; i++) {
		if (addr_equal(&(*arr)[i], &a)) {
			lex_error(lex, line, "%s: duplicate address %s",
			    d->name, addr_format(&a, buf, sizeof(buf)));
			return -1;
		}
	}
	if (config_add_addr(arr, n, &a) == -1) {
		lex_error(lex, line, "out of memory");
		return -1;
	}
	return 0;
}

static int
parsenet_addr(struct lex *lex, const struct directive *d, int line,
    const char *str, struct addr **arr, size_t *n)
{
	return parsenet_addr_port(lex, d, line, str, CONFIG_DEFAULT_PORT, arr,
	    n);
}

#define TLS_SCHEME	"tls://"

/*
 * tls://ADDRESS[:PORT][#NAME] (RFC 7858 §3.1: port 853) into fw: the
 * address among its upstreams, and with NAME among its TLS ones.
 */
static void
parsenet_tls_upstream(struct lex *lex, const struct directive *d, int line,
    const char *str, struct config_forward *fw)
{
	struct config_tls_upstream tu;
	char *copy, *hash, *name = NULL;
	size_t len;

	if ((copy = strdup(str + strlen(TLS_SCHEME))) == NULL) {
		lex_error(lex, line, "out of memory");
		return;
	}
	if ((hash = strchr(copy, '#')) != NULL) {
		*hash++ = '\0';
		/* A host name has no colon (RFC 952): a port written after
		 * the name would be matched against certificates, never
		 * successfully. */
		if (strchr(hash, ':') != NULL) {
			lex_error(lex, line, "%s: \"%s\": a port goes before "
			    "the name: tls://ADDRESS:PORT#NAME", d->name, str);
			goto done;
		}
		if ((name = directive_name(lex, d, line, hash)) == NULL)
			goto done;
		if ((len = strlen(name)) <= 1) {
			lex_error(lex, line, "%s: \"%s\": the name after # "
			    "cannot be the root", d->name, str);
			goto done;
		}
		name[len - 1] = '\0';	/* SNI has no final dot (RFC 6066) */
	}
	if (parsenet_addr_port(lex, d, line, copy, CONFIG_TLS_PORT,
	    &fw->upstreams, &fw->n_upstreams) == -1)
		goto done;
	tu.addr = fw->upstreams[fw->n_upstreams - 1];
	tu.name = name;
	if (config_add_tls_upstream(fw, &tu) == -1) {
		lex_error(lex, line, "out of memory");
		goto done;
	}
	name = NULL;
done:
	free(name);
	free(copy);
}

/* Remember where the first address beyond loopback was: allow's check. */
void
parsenet_listen(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	struct config *conf = base;
	struct config_where *w = &conf->listen_nonlocal;
	int line = st->key.line;
	size_t i;
	struct lex *lex = st->lex;

	(void)run;
	if (st->n_args == 0)
		lex_error(lex, line, "%s: missing address", d->name);
	for (i = 0; i < st->n_args; i++) {
		if (parsenet_addr(lex, d, line, st->args[i].text, &conf->listen,
		    &conf->n_listen) == -1 || w->line > 0 ||
		    addr_is_loopback(&conf->listen[conf->n_listen - 1]))
			continue;
		if ((w->file = strdup(lex_path(lex))) == NULL)
			lex_error(lex, line, "out of memory");
		else
			w->line = line;
	}
}

/* One network of directive d into acl. */
static void
parsenet_net(struct lex *lex, const struct directive *d, int line,
    const char *str, struct acl *acl)
{
	char buf[ACL_PREFIX_STRLEN];
	struct acl_prefix p;
	const char *errstr;

	if (acl_prefix_parse(str, &p, &errstr) == 0) {
		if (acl_add(acl, &p) == -1)
			lex_error(lex, line, "out of memory");
	} else if (p.family == 0)
		lex_error(lex, line, "%s: \"%s\" is not a network: %s",
		    d->name, str, errstr);
	else
		lex_error(lex, line, "%s: \"%s\" is not a network: %s "
		    "(%s?)", d->name, str, errstr,
		    acl_prefix_format(&p, buf, sizeof(buf)));
}

/*
 * allow, exempt-clients: networks, on one line or (DIRECTIVE_REPEAT) more;
 * the first replaces the built-in list, "none" (DIRECTIVE_NONE) empties it.
 */
void
parsenet_nets(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	struct config_nets *nets = (void *)((char *)base + d->offset);
	int line = st->key.line;
	size_t i;
	struct lex *lex = st->lex;

	(void)run;
	if (st->n_args == 0) {
		lex_error(lex, line, "%s: missing network", d->name);
		return;
	}
	if (nets->builtin) {
		acl_clear(&nets->acl);
		nets->builtin = 0;
	}
	for (i = 0; i < st->n_args; i++) {
		if (!(d->flags & DIRECTIVE_NONE) ||
		    strcmp(st->args[i].text, CONFIG_NONE) != 0)
			parsenet_net(lex, d, line, st->args[i].text,
			    &nets->acl);
		else if (st->n_args > 1) {
			lex_error(lex, line, "%s: none cannot be "
			    "combined with networks", d->name);
			return;
		}
	}
}

/* `upstream resolv.conf` stands for a whole list, so it stands alone. */
void
parsenet_upstream(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	struct config_forward *fw = base;
	int line = st->key.line, resolv;
	size_t i;
	struct lex *lex = st->lex;

	(void)run;
	if (st->n_args == 0)
		lex_error(lex, line, "%s: missing address", d->name);
	for (i = 0; i < st->n_args; i++) {
		resolv = strcmp(st->args[i].text, "resolv.conf") == 0;
		if (resolv && fw->use_resolv_conf)
			lex_error(lex, line, "%s: duplicate resolv.conf",
			    d->name);
		else if (resolv ? fw->n_upstreams > 0 : fw->use_resolv_conf)
			lex_error(lex, line, "%s: resolv.conf cannot be "
			    "combined with addresses", d->name);
		else if (resolv)
			fw->use_resolv_conf = 1;
		else if (strncmp(st->args[i].text, TLS_SCHEME,
		    strlen(TLS_SCHEME)) == 0)
			parsenet_tls_upstream(lex, d, line, st->args[i].text,
			    fw);
		else
			parsenet_addr(lex, d, line, st->args[i].text,
			    &fw->upstreams, &fw->n_upstreams);
	}
}

void
parsenet_tls_ca(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	static const char *const what[] = { "file" };
	struct config_forward *fw = base;
	char *copy;

	(void)run;
	if (!directive_nargs(d, st, 1, what))
		return;
	if (st->args[0].text[0] == '\0') {
		lex_error(st->lex, st->key.line, "%s: empty file name",
		    d->name);
		return;
	}
	if ((copy = strdup(st->args[0].text)) == NULL) {
		lex_error(st->lex, st->key.line, "out of memory");
		return;
	}
	free(fw->tls_ca);
	fw->tls_ca = copy;
}

void
parsenet_tls_pin(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	struct config_forward *fw = base;
	uint8_t pin[CONFIG_TLS_PIN_LEN];
	size_t i, j;

	(void)run;
	if (st->n_args == 0)
		lex_error(st->lex, st->key.line, "%s: missing pin", d->name);
	for (i = 0; i < st->n_args; i++) {
		if (tlsctx_pin_parse(st->args[i].text, pin) == -1) {
			lex_error(st->lex, st->key.line, "%s: \"%s\" is not "
			    "sha256/ and the base64 of 32 octets (RFC 7469)",
			    d->name, st->args[i].text);
			continue;
		}
		for (j = 0; j < fw->n_tls_pins; j++)
			if (memcmp(fw->tls_pins[j], pin, sizeof(pin)) == 0)
				break;
		if (j < fw->n_tls_pins)
			lex_error(st->lex, st->key.line, "%s: duplicate pin "
			    "%s", d->name, st->args[i].text);
		else if (config_add_tls_pin(fw, pin) == -1)
			lex_error(st->lex, st->key.line, "out of memory");
	}
}

