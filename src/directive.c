/* directive.c: one directive's table entry, statement and typed values. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "config.h"
#include "directive.h"
#include "lex.h"
#include "value.h"

size_t
directive_count(const struct directive *table)
{
	size_t n = 0;

	while (table[n].name != NULL)
		n++;
	return n;
}

const struct directive *
directive_lookup(const struct directive *table, const char *name)
{
	for (; table->name != NULL; table++)
		if (strcmp(table->name, name) == 0)
			return table;
	return NULL;
}

/* The value syntax of a numeric kind. */
static enum value_syntax
directive_syntax_of(enum directive_kind kind)
{
	if (kind == DIRECTIVE_DURATION)
		return VALUE_DURATION;
	if (kind == DIRECTIVE_SIZE)
		return VALUE_SIZE;
	return VALUE_NUMBER;
}

uint64_t
directive_get(const struct directive *d, const void *base, size_t offset)
{
	const char *p = (const char *)base + offset;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (d->size) {
	case sizeof(v16):
		memcpy(&v16, p, sizeof(v16));
		return v16;
	case sizeof(v32):
		memcpy(&v32, p, sizeof(v32));
		return v32;
	default:
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
}

/* Store v; the directive's range guarantees that it fits the field. */
static void
directive_put(const struct directive *d, void *base, size_t offset,
    uint64_t v)
{
	char *p = (char *)base + offset;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (d->size) {
	case sizeof(v16):
		memcpy(p, &v16, sizeof(v16));
		break;
	case sizeof(v32):
		memcpy(p, &v32, sizeof(v32));
		break;
	default:
		memcpy(p, &v, sizeof(v));
		break;
	}
}

char *
directive_format(const struct directive *d, uint64_t v, char *buf,
    size_t len)
{
	if (d->kind != DIRECTIVE_ENUM)
		return value_format(directive_syntax_of(d->kind), d->unit, v,
		    buf, len);
	snprintf(buf, len, "%s", v > INT32_MAX ? "?" :
	    config_name_word(d->names, (int)v));
	return buf;
}

/* "a, b or c" from names, into buf. */
static char *
directive_names_join(const struct config_name *names, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; names[i].name != NULL && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i == 0 ? "" : names[i + 1].name == NULL ? " or " : ", ",
		    names[i].name);
	return buf;
}

int
directive_enum(struct lex *lex, const struct directive *d, int line,
    const char *str, uint64_t *out)
{
	const struct config_name *n;
	char buf[256];

	for (n = d->names; n->name != NULL; n++) {
		if (strcmp(n->name, str) == 0) {
			*out = (uint64_t)n->value;
			return 0;
		}
	}
	lex_error(lex, line, "%s: \"%s\" is not %s", d->name, str,
	    directive_names_join(d->names, buf, sizeof(buf)));
	return -1;
}

/* One value of a numeric or enum directive, in its unit and range. */
static int
directive_value(struct lex *lex, const struct directive *d, int line,
    const char *str, uint64_t *out)
{
	enum value_syntax syntax = directive_syntax_of(d->kind);
	enum value_result r;
	char lo[32], hi[32];
	uint64_t v = 0;

	if (d->kind == DIRECTIVE_ENUM)
		return directive_enum(lex, d, line, str, out);
	if ((r = value_scan(str, syntax, d->unit, &v)) == VALUE_SYNTAX) {
		lex_error(lex, line, "%s: \"%s\" is not %s", d->name, str,
		    value_what(syntax));
		return -1;
	}
	if (r == VALUE_FRACTION) {
		lex_error(lex, line, "%s: %s is not a whole number of "
		    "seconds", d->name, str);
		return -1;
	}
	if (r == VALUE_OVERFLOW || v < d->min || v > d->max) {
		lex_error(lex, line, "%s: %s is out of range (%s to %s)",
		    d->name, str, directive_format(d, d->min, lo, sizeof(lo)),
		    directive_format(d, d->max, hi, sizeof(hi)));
		return -1;
	}
	*out = v;
	return 0;
}

static void
directive_string(struct lex *lex, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	char **field = (char **)(void *)((char *)base + d->offset);
	char *copy;

	if (st->args[0].text[0] == '\0') {
		lex_error(lex, st->key.line, "%s: empty value", d->name);
		return;
	}
	if ((copy = strdup(st->args[0].text)) == NULL) {
		lex_error(lex, st->key.line, "out of memory");
		return;
	}
	free(*field);
	*field = copy;
}

void
directive_scalar(const struct directive *d, void *base,
    struct directive_stmt *st)
{
	size_t i, max_args = (d->flags & DIRECTIVE_PAIR) ? 2 : 1;
	struct lex *lex = st->lex;
	int line = st->key.line;
	uint64_t v[2];

	if (st->n_args == 0) {
		lex_error(lex, line, "%s: missing value", d->name);
		return;
	}
	if (st->n_args > max_args) {
		lex_error(lex, line, "%s: unexpected \"%s\"", d->name,
		    st->args[max_args].text);
		return;
	}
	if (d->kind == DIRECTIVE_STRING) {
		directive_string(lex, d, base, st);
		return;
	}
	for (i = 0; i < st->n_args; i++)
		if (directive_value(lex, d, line, st->args[i].text,
		    &v[i]) == -1)
			return;
	v[1] = v[st->n_args - 1];
	if (v[0] > v[1]) {
		lex_error(lex, line, "%s: minimum %s is greater than "
		    "maximum %s", d->name, st->args[0].text, st->args[1].text);
		return;
	}
	directive_put(d, base, d->offset, v[0]);
	if (d->flags & DIRECTIVE_PAIR)
		directive_put(d, base, d->offset_max, v[1]);
}

char *
directive_canonical_name(const ldns_rdf *rdf)
{
	ldns_rdf *copy;
	char *name;

	if ((copy = ldns_rdf_clone(rdf)) == NULL)
		return NULL;
	ldns_dname2canonical(copy);
	name = ldns_rdf2str(copy);
	ldns_rdf_deep_free(copy);
	return name;
}

char *
directive_name(struct lex *lex, const struct directive *d, int line,
    const char *str)
{
	ldns_rdf *rdf;
	char *name;

	if (str[0] == '\0' || (rdf = ldns_dname_new_frm_str(str)) == NULL) {
		lex_error(lex, line, "%s: \"%s\" is not a domain name",
		    d->name, str);
		return NULL;
	}
	name = directive_canonical_name(rdf);
	ldns_rdf_deep_free(rdf);
	if (name == NULL)
		lex_error(lex, line, "out of memory");
	return name;
}

int
directive_nargs(const struct directive *d, const struct directive_stmt *st,
    size_t n, const char *const *what)
{
	if (st->n_args < n) {
		lex_error(st->lex, st->key.line, "%s: missing %s", d->name,
		    what[st->n_args]);
		return 0;
	}
	if (st->n_args > n) {
		lex_error(st->lex, st->key.line, "%s: unexpected \"%s\"",
		    d->name, st->args[n].text);
		return 0;
	}
	return 1;
}
