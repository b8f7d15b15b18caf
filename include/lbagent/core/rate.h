/*
 * The rate of a cumulative counter (HAProxy's stot for this node's
 * server, an application's request count), one source at a time, from
 * (value, at_ms) samples: per second over the interval since the sample
 * before. A value smaller than the last, or another epoch (what changes
 * when the counter starts over: the source's pid, its start), is a
 * reset: no rate, a new base. The same time fed again changes nothing,
 * so a caller may feed each step what the last round saw. Pure.
 */
#ifndef LBAGENT_RATE_H
#define LBAGENT_RATE_H

#include <stddef.h>
#include <stdint.h>

#define RATE_EPOCH_NONE		(-1LL)	/* the source gives none */

/* What one value did. */
enum rate_fed {
	RATE_BASE,	/* the first value (or the first known): no rate yet */
	RATE_SAMPLE,	/* a rate over the interval since the last value */
	RATE_RESET,	/* the counter started over: no rate, a new base */
	RATE_SAME,	/* not later than the last value: nothing changes */
	RATE_UNKNOWN,	/* the value is not known (< 0): base and rate gone */
};

struct counter_rate {
	long long	value;		/* the base: the last value; -1 none */
	int64_t		at_ms;		/* when it was taken */
	long long	epoch;		/* its epoch, or RATE_EPOCH_NONE */
	double		per_s;		/* over the last interval; NAN: none */
	int64_t		interval_ms;	/* that interval; 0: none */
	uint64_t	resets;		/* seen since counter_rate_init */
};

/* No base, no rate. */
void		 counter_rate_init(struct counter_rate *);
/*
 * The counter read value at at_ms (any clock, the same for every call)
 * with the source's epoch (RATE_EPOCH_NONE: not known; a change counts
 * only between two known ones).
 */
enum rate_fed	 counter_rate_feed(struct counter_rate *, long long value,
		    int64_t at_ms, long long epoch);
/*
 * The source did not answer this time: no rate, the base kept (the next
 * value's rate is over the whole gap).
 */
void		 counter_rate_miss(struct counter_rate *);
/*
 * The sum of the rates of n sources, those that have one; *counted (when
 * not NULL) says how many had. NAN when none had.
 */
double		 counter_rate_sum(const struct counter_rate *, size_t n,
		    size_t *counted);

#endif
