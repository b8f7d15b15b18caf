/* warn/crit on a probe's number and on its run time, in one place. */
#include <stddef.h>

#include "lbagent/core/threshold.h"

bool
threshold_any(const struct threshold *t)
{
	return t->has_warn || t->has_crit;
}

bool
threshold_lower_is_worse(const struct threshold *t)
{
	return t->has_warn && t->has_crit && t->crit < t->warn;
}

static bool
reached(double x, double limit, bool lower_is_worse)
{
	return lower_is_worse ? x <= limit : x >= limit;
}

enum probe_result
threshold_level(const struct threshold *t, double x, double *limit)
{
	bool	lower = threshold_lower_is_worse(t);

	if (t->has_crit && reached(x, t->crit, lower)) {
		*limit = t->crit;
		return PROBE_CRIT;
	}
	if (t->has_warn && reached(x, t->warn, lower)) {
		*limit = t->warn;
		return PROBE_WARN;
	}
	*limit = 0;
	return PROBE_OK;
}

enum probe_result
latency_level(const struct latency_limit *l, double ms, uint64_t *limit_ms)
{
	if (l->has_crit && ms >= (double)l->crit_ms) {
		*limit_ms = l->crit_ms;
		return PROBE_CRIT;
	}
	if (l->has_warn && ms >= (double)l->warn_ms) {
		*limit_ms = l->warn_ms;
		return PROBE_WARN;
	}
	*limit_ms = 0;
	return PROBE_OK;
}

const char *
latency_limit_check(const struct latency_limit *l)
{
	if (l->has_warn && l->has_crit && l->warn_ms >= l->crit_ms)
		return "warn_latency must be below crit_latency";
	return NULL;
}
