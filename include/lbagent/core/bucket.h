/*
 * A token bucket over a clock the caller gives: at most rate events a
 * second, with bursts up to burst at once. Pure: the caller reads the
 * clock, and waits as it likes when the bucket is empty.
 */
#ifndef LBAGENT_BUCKET_H
#define LBAGENT_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct bucket {
	uint64_t	rate;		/* events a second; 0: no limit */
	uint64_t	cap;		/* burst, in thousandths of an event */
	uint64_t	credit;		/* thousandths of an event */
	int64_t		at_ms;		/* credit as of this time */
};

/* Full (a burst may come at once); burst at least 1. */
void	 bucket_init(struct bucket *, uint64_t rate, uint64_t burst,
	    int64_t now_ms);
/*
 * Settings changed (a reload): the new rate and burst, the credit kept
 * (capped by the new burst), so that a reload is no way around the limit;
 * from no limit to one, a full burst.
 */
void	 bucket_set(struct bucket *, uint64_t rate, uint64_t burst,
	    int64_t now_ms);
/* Whether one event may happen now; if so, it is taken. */
bool	 bucket_take(struct bucket *, int64_t now_ms);
/*
 * How long until n events may happen (0: now); n is taken as the burst
 * when larger. A caller that waits for several wakes less often.
 */
uint64_t bucket_wait_ms(struct bucket *, int64_t now_ms, uint64_t n);

#endif
