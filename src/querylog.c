/* querylog.c: log-queries: sampled, rate-capped query lines in the log. */
#include "autoconf.h"

#include "clock.h"
#include "log.h"
#include "querylog.h"

/*
 * The cap, for every worker together: the second (of the wall clock,
 * that of each line's "time") the count is for, lines written in it,
 * and queries held back since the last summary. Atomics: a line may go
 * over by the few racing at a second's turn, never by a flood.
 */
static uint64_t cap_second;
static uint64_t cap_lines;
static uint64_t held;

/* Room in a log line (log.c's 1024) after "query: ". */
#define QUERYLOG_LINE_MAX	1000

void
querylog_configure(struct querylog *ql, uint32_t num, uint32_t den)
{
	if (ql->num != num || ql->den != den)
		ql->seen = 0;
	ql->num = num;
	ql->den = den;
}

/* 1 if a line may go out in second, else 0 (and counted). */
static int
cap_allows(uint64_t second)
{
	uint64_t was = __atomic_load_n(&cap_second, __ATOMIC_RELAXED);

	if (second != was && __atomic_compare_exchange_n(&cap_second, &was,
	    second, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&cap_lines, 0, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&cap_lines, 1, __ATOMIC_RELAXED) <=
	    QUERYLOG_PER_SECOND)
		return 1;
	(void)__atomic_add_fetch(&held, 1, __ATOMIC_RELAXED);
	return 0;
}

void
querylog_answer(struct querylog *ql, const struct queryinfo *qi)
{
	char line[QUERYLOG_LINE_MAX];
	int64_t wall;
	int sampled = ql->seen < ql->num;

	if (++ql->seen >= ql->den)
		ql->seen = 0;
	if (!sampled)
		return;
	wall = clock_wall_ms();
	if (!cap_allows((uint64_t)wall / 1000))
		return;
	(void)queryinfo_json(qi, wall, line, sizeof(line));
	log_info("query: %s", line);
}

void
querylog_tick(void)
{
	uint64_t n = __atomic_exchange_n(&held, 0, __ATOMIC_RELAXED);

	if (n > 0)
		log_info("log-queries: %llu queries not logged (over %u a "
		    "second)", (unsigned long long)n, QUERYLOG_PER_SECOND);
}
