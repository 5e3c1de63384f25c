/* parselocal.c: the directives of local answers in dnsdamper.conf. */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "config.h"
#include "directive.h"
#include "lex.h"
#include "parselocal.h"

/* `hosts-file PATH`, or `none`: absolute paths, none alone. */
void
parselocal_hosts_file(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	static const char *const what[] = { "path" };
	struct config *conf = base;
	const char *path;
	int line = st->key.line, none;
	size_t i;
	struct lex *lex = st->lex;

	(void)run;
	if (!directive_nargs(d, st, 1, what))
		return;
	path = st->args[0].text;
	none = strcmp(path, CONFIG_NONE) == 0;
	if (!conf->hosts_file_default && (none ? conf->n_hosts_files > 0 :
	    conf->n_hosts_files == 0)) {
		lex_error(lex, line, "%s: none cannot be combined with "
		    "files", d->name);
		return;
	}
	if (!none && path[0] != '/') {
		lex_error(lex, line, "%s: \"%s\" is not an absolute path",
		    d->name, path);
		return;
	}
	for (i = 0; !conf->hosts_file_default && i < conf->n_hosts_files;
	    i++)
		if (strcmp(conf->hosts_files[i], path) == 0) {
			lex_error(lex, line, "%s: duplicate file \"%s\"",
			    d->name, path);
			return;
		}
	if (config_add_hosts_file(conf, path) == -1)
		lex_error(lex, line, "out of memory");
}

/* The checks of a local-zone whose name and type are read. */
static int
parselocal_zone_check(struct lex *lex, const struct directive *d,
    const struct config *conf, const struct config_local_zone *lz, int line)
{
	const struct config_local_zone *other;
	size_t i;

	for (i = 0; i < conf->n_local_zones; i++) {
		other = &conf->local_zones[i];
		if (strcmp(other->zone, lz->zone) == 0) {
			lex_error(lex, line, "%s \"%s\": duplicate zone "
			    "(first at %s:%d)", d->name, lz->zone,
			    other->where.file, other->where.line);
			return -1;
		}
	}
	if (lz->type == CONFIG_LOCAL_NODEFAULT &&
	    !config_is_default_local_zone(lz->zone)) {
		lex_error(lex, line, "%s \"%s\": nodefault: not a zone "
		    "served by default", d->name, lz->zone);
		return -1;
	}
	return 0;
}

/* `local-zone ZONE TYPE`. */
void
parselocal_zone(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	static const char *const what[] = { "zone", "type" };
	struct config_local_zone lz;
	uint64_t type;
	int line = st->key.line;
	struct lex *lex = st->lex;

	(void)run;
	memset(&lz, 0, sizeof(lz));
	if (!directive_nargs(d, st, 2, what) ||
	    (lz.zone = directive_name(lex, d, line, st->args[0].text)) ==
	    NULL ||
	    directive_enum(lex, d, line, st->args[1].text, &type) == -1)
		goto done;
	lz.type = (enum config_local_type)type;
	if (parselocal_zone_check(lex, d, base, &lz, line) == -1)
		goto done;
	lz.where.line = line;
	if ((lz.where.file = strdup(lex_path(lex))) == NULL ||
	    config_add_local_zone(base, &lz) == -1) {
		lex_error(lex, line, "out of memory");
		goto done;
	}
	return;
done:
	config_local_zone_free(&lz);
}

/*
 * Whether rr can be served as local data: class IN only, and neither type
 * 0 (reserved) nor a meta type (RFC 6895 §3.1: OPT, TKEY, TSIG, IXFR,
 * AXFR, MAILB, MAILA, ANY), none of which is data. Returns 0, or -1 after
 * reporting why not.
 */
static int
parselocal_rr_servable(struct lex *lex, const struct directive *d,
    int line, const ldns_rr *rr)
{
	ldns_rr_type type = ldns_rr_get_type(rr);
	char *word;

	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
		word = ldns_rr_class2str(ldns_rr_get_class(rr));
		lex_error(lex, line, "%s: class %s is not IN", d->name,
		    word != NULL ? word : "?");
		free(word);
		return -1;
	}
	if (type == 0 || type == LDNS_RR_TYPE_OPT ||
	    (type >= LDNS_RR_TYPE_TKEY && type <= LDNS_RR_TYPE_ANY)) {
		word = ldns_rr_type2str(type);
		lex_error(lex, line, "%s: type %s is not data (RFC 6895 "
		    "section 3.1)", d->name, word != NULL ? word : "?");
		free(word);
		return -1;
	}
	return 0;
}

/* rr in presentation format on one line, without its newline. */
static char *
parselocal_rr_text(const ldns_rr *rr)
{
	char *text, *p;
	size_t len;

	if ((text = ldns_rr2str(rr)) == NULL)
		return NULL;
	/* ldns separates fields with tabs (one in the data is \009). */
	for (p = text; *p != '\0'; p++)
		if (*p == '\t')
			*p = ' ';
	len = strlen(text);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	return text;
}

/*
 * Whether text starts with an owner that ldns would read without an
 * origin as something else: "@" (it would be the root) or a zone file
 * directive such as $ORIGIN (a name "$ORIGIN." of type 0). Returns 0, or
 * -1 after reporting it.
 */
static int
parselocal_owner_ok(struct lex *lex, const struct directive *d, int line,
    const char *text)
{
	size_t len;

	text += strspn(text, " \t");
	len = strcspn(text, " \t");
	if (len == 1 && text[0] == '@') {
		lex_error(lex, line, "%s: \"@\": there is no origin; give the "
		    "record's name", d->name);
		return -1;
	}
	if (text[0] == '$') {
		lex_error(lex, line, "%s: \"%.*s\" is a zone file directive, "
		    "not a record", d->name, (int)len, text);
		return -1;
	}
	return 0;
}

/* `local-data "NAME [TTL] [CLASS] TYPE RDATA"`, read with ldns. */
void
parselocal_data(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	static const char *const what[] = { "record" };
	struct config_local_data ld;
	ldns_rr *rr = NULL;
	ldns_status status;
	int line = st->key.line;
	struct lex *lex = st->lex;

	(void)run;
	memset(&ld, 0, sizeof(ld));
	if (!directive_nargs(d, st, 1, what) ||
	    parselocal_owner_ok(lex, d, line, st->args[0].text) == -1)
		return;
	/* No origin: every name is absolute (RFC 1035 §5.1's default TTL
	 * aside, ldns's 3600 s when none is given). */
	status = ldns_rr_new_frm_str(&rr, st->args[0].text, LDNS_DEFAULT_TTL,
	    NULL, NULL);
	if (status != LDNS_STATUS_OK) {
		lex_error(lex, line, "%s: \"%s\" is not a resource "
		    "record: %s", d->name, st->args[0].text,
		    ldns_get_errorstr_by_id(status));
		return;
	}
	if (parselocal_rr_servable(lex, d, line, rr) == -1)
		goto done;
	ld.type = (uint16_t)ldns_rr_get_type(rr);
	ld.where.line = line;
	if ((ld.rr = parselocal_rr_text(rr)) == NULL ||
	    (ld.owner = directive_canonical_name(ldns_rr_owner(rr))) == NULL ||
	    (ld.where.file = strdup(lex_path(lex))) == NULL ||
	    config_add_local_data(base, &ld) == -1) {
		lex_error(lex, line, "out of memory");
		goto done;
	}
	ldns_rr_free(rr);
	return;
done:
	ldns_rr_free(rr);
	config_local_data_free(&ld);
}

