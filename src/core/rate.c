/* A cumulative counter's rate, per source (see rate.h). */
#include <math.h>

#include "lbagent/core/rate.h"

void
counter_rate_init(struct counter_rate *r)
{
	r->value = -1;
	r->at_ms = 0;
	r->epoch = RATE_EPOCH_NONE;
	r->per_s = NAN;
	r->interval_ms = 0;
	r->resets = 0;
}

/* value at at_ms is the new base, and there is no rate. */
static void
rebase(struct counter_rate *r, long long value, int64_t at_ms,
    long long epoch)
{
	r->value = value;
	r->at_ms = at_ms;
	r->epoch = epoch;
	r->per_s = NAN;
	r->interval_ms = 0;
}

enum rate_fed
counter_rate_feed(struct counter_rate *r, long long value, int64_t at_ms,
    long long epoch)
{
	if (value < 0) {
		rebase(r, -1, 0, RATE_EPOCH_NONE);
		return RATE_UNKNOWN;
	}
	if (r->value < 0) {
		rebase(r, value, at_ms, epoch);
		return RATE_BASE;
	}
	if (at_ms <= r->at_ms)
		return RATE_SAME;
	if (value < r->value || (epoch != RATE_EPOCH_NONE &&
	    r->epoch != RATE_EPOCH_NONE && epoch != r->epoch)) {
		rebase(r, value, at_ms, epoch);
		r->resets++;
		return RATE_RESET;
	}
	r->interval_ms = at_ms - r->at_ms;
	r->per_s = (double)(value - r->value) * 1000.0 /
	    (double)r->interval_ms;
	r->value = value;
	r->at_ms = at_ms;
	if (epoch != RATE_EPOCH_NONE)
		r->epoch = epoch;
	return RATE_SAMPLE;
}

void
counter_rate_miss(struct counter_rate *r)
{
	r->per_s = NAN;
	r->interval_ms = 0;
}

double
counter_rate_sum(const struct counter_rate *r, size_t n, size_t *counted)
{
	double	sum = 0;
	size_t	i, k = 0;

	for (i = 0; i < n; i++)
		if (!isnan(r[i].per_s)) {
			sum += r[i].per_s;
			k++;
		}
	if (counted != NULL)
		*counted = k;
	return k > 0 ? sum : NAN;
}
