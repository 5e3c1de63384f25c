/* value.c: durations, sizes and counts of dnsdamper.conf, read and written. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "value.h"

/* A unit suffix and what it multiplies by, in the syntax's base unit. */
struct value_suffix {
	const char	*suffix;
	uint64_t	 mult;
};

/* The rules of one syntax: suffixes ascending by mult. */
struct value_rules {
	const struct value_suffix	*units;
	uint64_t			 bare;	/* mult without suffix */
	int				 nocase;
	const char			*what;	/* "is not ..." */
};

/* Durations in milliseconds, sizes in bytes. */
static const struct value_suffix value_duration_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", VALUE_MINUTE * 1000 },
	{ "h", VALUE_HOUR * 1000 }, { "d", VALUE_DAY * 1000 }, { NULL, 0 }
};
static const struct value_suffix value_size_units[] = {
	{ "k", VALUE_KIB }, { "m", VALUE_MIB }, { "g", VALUE_GIB },
	{ NULL, 0 }
};
static const struct value_suffix value_no_units[] = { { NULL, 0 } };

static const struct value_rules value_rules[] = {
	[VALUE_DURATION] = { value_duration_units, 1000, 0,
	    "a duration (digits with optional ms, s, m, h or d)" },
	[VALUE_SIZE] = { value_size_units, 1, 1,
	    "a size (digits with optional k, m or g)" },
	[VALUE_NUMBER] = { value_no_units, 1, 0, "a number" },
};

/* Multiplier from a stored unit to its syntax's base unit. */
static uint64_t
value_scale(enum value_unit unit)
{
	return unit == VALUE_UNIT_S ? 1000 : 1;
}

/* Digits with an optional suffix of rx, into rx's base unit. */
static enum value_result
value_scaled(const char *str, const struct value_rules *rx, uint64_t *out)
{
	const struct value_suffix *u;
	const char *p;
	uint64_t v = 0, mult = rx->bare;
	int overflow = 0;

	if (*str < '0' || *str > '9')
		return VALUE_SYNTAX;
	for (p = str; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			overflow = 1;
		else
			v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p != '\0') {
		for (u = rx->units; u->suffix != NULL; u++)
			if ((rx->nocase ? strcasecmp(p, u->suffix) :
			    strcmp(p, u->suffix)) == 0)
				break;
		if (u->suffix == NULL)
			return VALUE_SYNTAX;
		mult = u->mult;
	}
	if (overflow || v > UINT64_MAX / mult)
		return VALUE_OVERFLOW;
	*out = v * mult;
	return VALUE_OK;
}

enum value_result
value_scan(const char *str, enum value_syntax syntax, enum value_unit unit,
    uint64_t *out)
{
	enum value_result r;
	uint64_t v;

	if ((r = value_scaled(str, &value_rules[syntax], &v)) != VALUE_OK)
		return r;
	if (v % value_scale(unit) != 0)
		return VALUE_FRACTION;
	*out = v / value_scale(unit);
	return VALUE_OK;
}

char *
value_format(enum value_syntax syntax, enum value_unit unit, uint64_t v,
    char *buf, size_t len)
{
	const struct value_rules *rx = &value_rules[syntax];
	const struct value_suffix *u, *best = NULL;
	uint64_t b = v * value_scale(unit);

	/* The largest exact unit; zero takes the unit of a bare number. */
	for (u = rx->units; u->suffix != NULL; u++)
		if (b == 0 ? u->mult == rx->bare : b % u->mult == 0)
			best = u;
	if (best == NULL)
		snprintf(buf, len, "%llu", (unsigned long long)(b / rx->bare));
	else
		snprintf(buf, len, "%llu%s",
		    (unsigned long long)(b / best->mult), best->suffix);
	return buf;
}

const char *
value_what(enum value_syntax syntax)
{
	return value_rules[syntax].what;
}
