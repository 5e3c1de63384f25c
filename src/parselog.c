/* parselog.c: the dnstap-messages and log-queries directives. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parselog.h"

/* The largest M of log-queries N/M: one query in a million. */
#define PARSELOG_SAMPLE_MAX	1000000

void
parselog_dnstap_messages(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	struct config *conf = base;
	unsigned bits = 0;
	uint64_t v;
	size_t i;

	(void)run;
	if (st->n_args == 0) {
		lex_error(st->lex, st->key.line, "%s: missing message type",
		    d->name);
		return;
	}
	for (i = 0; i < st->n_args; i++) {
		if (directive_enum(st->lex, d, st->key.line, st->args[i].text,
		    &v) == -1)
			return;
		if (bits & (unsigned)v) {
			lex_error(st->lex, st->key.line, "%s: %s given twice",
			    d->name, st->args[i].text);
			return;
		}
		bits |= (unsigned)v;
	}
	conf->dnstap_messages = bits;
}

/* "N/M" with 1 <= N <= M <= PARSELOG_SAMPLE_MAX into *num, *den. */
static int
parse_fraction(const char *s, uint32_t *num, uint32_t *den)
{
	unsigned long n, m;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	n = strtoul(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return -1;
	m = strtoul(end + 1, &end, 10);
	if (*end != '\0' || n < 1 || n > m || m > PARSELOG_SAMPLE_MAX)
		return -1;
	*num = (uint32_t)n;
	*den = (uint32_t)m;
	return 0;
}

void
parselog_log_queries(struct parse_run *run, const struct directive *d,
    void *base, struct directive_stmt *st)
{
	static const char *const what[] = { "yes, no or N/M" };
	struct config *conf = base;
	const char *s;
	uint32_t num, den;

	(void)run;
	if (!directive_nargs(d, st, 1, what))
		return;
	s = st->args[0].text;
	if (strcmp(s, "no") == 0)
		num = den = 0;
	else if (strcmp(s, "yes") == 0)
		num = den = 1;
	else if (parse_fraction(s, &num, &den) == -1) {
		lex_error(st->lex, st->key.line, "%s: \"%s\" is not yes, no "
		    "or a fraction N/M of queries (1 <= N <= M <= %u)",
		    d->name, s, PARSELOG_SAMPLE_MAX);
		return;
	}
	/* N/N is every query: yes, as printconf writes it back. */
	if (num == den && num > 1)
		num = den = 1;
	conf->log_queries_num = num;
	conf->log_queries_den = den;
}

void
parselog_print(const struct config *conf, FILE *stream)
{
	const struct config_name *n;

	fputs("dnstap-messages", stream);
	for (n = config_dnstap_message_names; n->name != NULL; n++)
		if (conf->dnstap_messages & (unsigned)n->value)
			fprintf(stream, " %s", n->name);
	putc('\n', stream);
	if (conf->log_queries_den == 0)
		fputs("log-queries no\n", stream);
	else if (conf->log_queries_num == conf->log_queries_den)
		fputs("log-queries yes\n", stream);
	else
		fprintf(stream, "log-queries %u/%u\n", conf->log_queries_num,
		    conf->log_queries_den);
}
