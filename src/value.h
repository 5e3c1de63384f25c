/*
 * value.h: the typed values of dnsdamper.conf: durations, sizes and counts,
 * read from a word and written back in their largest exact unit.
 */
#ifndef DNSDAMPER_VALUE_H
#define DNSDAMPER_VALUE_H

#include <stddef.h>
#include <stdint.h>

/* Durations in seconds, sizes in bytes (binary multiples). */
#define VALUE_MINUTE	60ULL
#define VALUE_HOUR	(60 * VALUE_MINUTE)
#define VALUE_DAY	(24 * VALUE_HOUR)
#define VALUE_KIB	1024ULL
#define VALUE_MIB	(1024 * VALUE_KIB)
#define VALUE_GIB	(1024 * VALUE_MIB)

/* How a value is written. */
enum value_syntax {
	VALUE_DURATION,	/* digits with optional ms, s, m, h or d (lower
			 * case); bare digits are seconds */
	VALUE_SIZE,	/* digits with optional k, m or g (any case);
			 * bare digits are bytes */
	VALUE_NUMBER	/* digits */
};

/* The unit a value is stored in. */
enum value_unit {
	VALUE_UNIT_NONE,	/* a plain count */
	VALUE_UNIT_BYTES,	/* a size */
	VALUE_UNIT_S,		/* a duration in whole seconds */
	VALUE_UNIT_MS		/* a duration in milliseconds */
};

enum value_result {
	VALUE_OK,
	VALUE_SYNTAX,		/* not digits with a suffix of the syntax */
	VALUE_FRACTION,		/* less than a whole unit, e.g. 1500ms in s */
	VALUE_OVERFLOW		/* more than 2^64 - 1 milliseconds or bytes */
};

/*
 * value_scan: the value written in str (NUL-terminated) in syntax, into
 * *out in unit; *out is set only for VALUE_OK. Returns VALUE_OK, or why
 * str is not one: VALUE_SYNTAX, VALUE_FRACTION, VALUE_OVERFLOW. No range
 * is checked beyond what fits.
 */
enum value_result value_scan(const char *str, enum value_syntax syntax,
	    enum value_unit unit, uint64_t *out);

/*
 * value_format: write v (in unit) to buf (size len, truncated to fit) in
 * syntax, in the largest unit that divides it exactly ("64m", "1d",
 * "1500ms"), so that value_scan reads it back as v; zero is written in the
 * unit of bare digits: "0s" for a duration, "0" otherwise. Returns buf.
 */
char	*value_format(enum value_syntax syntax, enum value_unit unit,
	    uint64_t v, char *buf, size_t len);

/*
 * value_what: what a word of syntax must look like, to follow "is not" in
 * a message: "a duration (digits with optional ms, s, m, h or d)". A
 * static string.
 */
const char *value_what(enum value_syntax syntax);

#endif
