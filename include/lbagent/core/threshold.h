/*
 * warn and crit on a number a probe measured, the same for every kind
 * that takes them: "at or above", or "at or below" when crit is below
 * warn (a value that must stay up); and warn_latency/crit_latency on a
 * run's time, always at or above.
 */
#ifndef LBAGENT_THRESHOLD_H
#define LBAGENT_THRESHOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/probe_result.h"

struct threshold {
	bool	has_warn, has_crit;
	double	warn, crit;
};

bool	threshold_any(const struct threshold *);
/* Both given and crit below warn: the lower, the worse. */
bool	threshold_lower_is_worse(const struct threshold *);
/* PROBE_OK, PROBE_WARN or PROBE_CRIT for x; *limit: the one reached. */
enum probe_result threshold_level(const struct threshold *, double x,
	    double *limit);

struct latency_limit {
	bool		has_warn, has_crit;
	uint64_t	warn_ms, crit_ms;
};

/* PROBE_OK, PROBE_WARN or PROBE_CRIT for ms; *limit_ms: the one reached. */
enum probe_result latency_level(const struct latency_limit *, double ms,
	    uint64_t *limit_ms);
/* "warn_latency must be below crit_latency", or NULL when they agree. */
const char	*latency_limit_check(const struct latency_limit *);

#endif
