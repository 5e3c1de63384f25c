/*
 * querylog.h: log-queries: one line per answered query, or per N of
 * every M, to the daemon's log (journal, syslog or stderr) at level
 * info, "query: " and the same JSON object as `dnsdamperctl monitor`
 * (queryinfo_json, cut to fit a log line). A flood cannot fill the log:
 * at most QUERYLOG_PER_SECOND lines are written in any second of the
 * wall clock, by every worker together; the queries beyond are counted,
 * and summarised in one line once a second (querylog_tick).
 */
#ifndef DNSDAMPER_QUERYLOG_H
#define DNSDAMPER_QUERYLOG_H

#include <stdint.h>

#include "queryinfo.h"

/* Lines a second at most. */
#define QUERYLOG_PER_SECOND	100

/* A worker's sampling: num of every den of its queries; den 0: off. */
struct querylog {
	uint32_t	num;
	uint32_t	den;
	uint32_t	seen;		/* its queries, modulo den */
};

/* querylog_configure: ql samples num of every den (log-queries). */
void	querylog_configure(struct querylog *ql, uint32_t num, uint32_t den);

/* querylog_on: 1 if ql logs anything, else 0. */
static inline int
querylog_on(const struct querylog *ql)
{
	return ql->den != 0;
}

/*
 * querylog_answer: from ql's worker: qi (borrowed for the call) is
 * logged if it is one of the sample and the second's lines are not used
 * up (else counted for the summary).
 */
void	querylog_answer(struct querylog *ql, const struct queryinfo *qi);

/*
 * querylog_tick: from any thread, about once a second: the count of
 * queries not logged for the rate cap since the last summary, if any,
 * logged in one line, "log-queries: N queries not logged (over 100 a
 * second)".
 */
void	querylog_tick(void);

#endif
