/* The peer guard's pace (see pace.h). */
#include "lbagent/core/pace.h"

enum pace
pace_of(const struct pace_in *in)
{
	if (in->guard == GUARD_ASKING || in->guard == GUARD_HOLDING)
		return PACE_FAST;
	if (in->out_ms != INT64_MIN && in->now_ms - in->out_ms <=
	    (int64_t)in->just_out_ms)
		return PACE_FAST;
	if (in->guard == GUARD_BACK_ALONE || !in->in)
		return PACE_STEADY_WHOLE;
	if (in->marker)
		return PACE_STEADY;
	return PACE_NONE;
}

uint64_t
pace_interval_ms(enum pace p, bool watched, uint64_t fast_ms,
    uint64_t steady_ms)
{
	if (p == PACE_FAST)
		return fast_ms;
	if (p == PACE_STEADY || p == PACE_STEADY_WHOLE || watched)
		return steady_ms;
	return 0;
}

bool
pace_whole(enum pace p)
{
	return p == PACE_FAST || p == PACE_STEADY_WHOLE;
}

static uint32_t
next(uint32_t *seed)
{
	uint32_t	x = *seed != 0 ? *seed : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*seed = x;
	return x;
}

uint64_t
pace_delay_ms(uint64_t interval_ms, uint32_t *seed)
{
	uint64_t	span = interval_ms * PACE_JITTER_PCT / 100;

	if (span == 0)
		return interval_ms;
	return interval_ms - next(seed) % (span + 1);
}

uint32_t
pace_seed(const char *node_id, uint64_t salt)
{
	uint32_t	h = 2166136261u;	/* FNV-1a */
	const char	*p;

	for (p = node_id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h ^= (uint32_t)salt ^ (uint32_t)(salt >> 32);
	return h != 0 ? h : 1;
}
