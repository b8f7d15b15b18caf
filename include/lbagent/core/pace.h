/*
 * How often the peer guard asks (its rounds' pace): what a service's
 * state wants, the interval that follows, and the jitter that keeps a
 * fleet from asking in lockstep. Pure: the seed is the caller's.
 */
#ifndef LBAGENT_PACE_H
#define LBAGENT_PACE_H

#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/guard.h"

/* Ordered: the fastest any service wants is the module's. */
enum pace {
	PACE_NONE,	/* in and healthy: nobody is asked */
	PACE_STEADY,	/* held out, watched: [peers] steady_interval, this
			   node's own server row only */
	PACE_STEADY_WHOLE, /* out, back alone: the same interval, the whole
			   backend (a decision waits on the other servers) */
	PACE_FAST,	/* a decision waits on the view: [peers] interval,
			   the whole backend */
};

#define PACE_JITTER_PCT		20	/* a round up to this much sooner */

/* What a service's step knows of itself. */
struct pace_in {
	enum guard_state	guard;
	int64_t			out_ms;		/* went out by the rules;
						   INT64_MIN: not */
	int64_t			now_ms;
	uint64_t		just_out_ms;
	bool			in;		/* up, at a weight above 0 */
	bool			marker;		/* drain or maint */
};

/*
 * Fast while a decision waits on a fresh view: going out is due (the
 * guard asks), the guard holds the node in (it goes out once another
 * serves), or it went out within just_out (it comes back at once if no
 * other serves). Steady and whole while out by the rules or back alone:
 * nothing is about to change, but a decision still waits on the other
 * servers (out, it comes back when none has served for alone_grace; back
 * alone, it goes out once another serves). Steady while held out by a
 * marker (and in by the rules): only this node's own row is read; the
 * marker's warning (no other node serving) is judged on the whole
 * backend when the marker takes effect. None in and healthy.
 */
enum pace	 pace_of(const struct pace_in *);
/*
 * The interval of a pace (0: no rounds); watched: at least steady. Whether
 * a pace reads the whole backend: pace_whole.
 */
uint64_t	 pace_interval_ms(enum pace, bool watched, uint64_t fast_ms,
		    uint64_t steady_ms);
/* Whether its rounds read every server of the backend (else its own row). */
bool		 pace_whole(enum pace);
/*
 * The wait before the next round: interval_ms less up to PACE_JITTER_PCT
 * percent, drawn from *seed (xorshift32; never left 0). Never longer than
 * the interval: a view is never older than the pace promises.
 */
uint64_t	 pace_delay_ms(uint64_t interval_ms, uint32_t *seed);
/* A seed of a node's name and a salt (its pid, the time), never 0. */
uint32_t	 pace_seed(const char *node_id, uint64_t salt);

#endif
