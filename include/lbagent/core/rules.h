/* The rules: probe states in, the service's target out. Pure. */
#ifndef LBAGENT_RULES_H
#define LBAGENT_RULES_H

#include <stddef.h>

#include "lbagent/core/decision.h"
#include "lbagent/core/probe_result.h"
#include "lbagent/core/settings.h"

/*
 * One probe as the rules see it: what it counts as after fall/rise. It
 * counts as unknown only when the check said so and on_unknown is not
 * ignore (the scheduler's business).
 */
struct rules_input {
	const char		*name;
	enum probe_result	 counted;
	const char		*reason;	/* of the run that made it count so */
	struct reaction		 on_warn, on_crit, on_unknown;
};

/*
 * The most severe reaction among the probes that count as warn, crit or
 * unknown: down, then drain (up at 0%), then the lowest weight, then up
 * 100%. The reason lists the probes that decided, most severe first
 * ("name: why", joined by "; "), cut at the reason limit.
 */
void	rules_evaluate(const struct rules_input *, size_t n, struct decision *);

#endif
