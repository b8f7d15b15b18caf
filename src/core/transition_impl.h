/*
 * The transition engine's state, shared by its rooms and by nothing
 * else: transition.c (hysteresis, the recovery ramp, flap damping),
 * transition_guard.c (running the peer guard of guard.h) and
 * transition_json.c (its part of the state file). Everyone else holds a struct transition * and reads it
 * through transition.h.
 */
#ifndef LBAGENT_TRANSITION_IMPL_H
#define LBAGENT_TRANSITION_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/guard.h"
#include "lbagent/core/transition.h"

#define NO_RUN		INT64_MIN
#define IDX(level)	((level) + 1)

struct transition {
	const struct transition_conf *conf;
	int		level;		/* where the node is, before the ramp */
	int64_t		since_ms;	/* ... since then */
	char		reason[REASON_MAX + 1];	/* why it is there */
	/*
	 * The start of the current run of evaluations whose target was at or
	 * below (le) / at or above (ge) each level; INT64_MIN: no run. A
	 * "worse" run towards a weight must have seen a weight target (a down
	 * target alone only ever leads to down, after down_after).
	 */
	int64_t		le_ms[LEVEL_COUNT], ge_ms[LEVEL_COUNT];
	bool		le_weight[LEVEL_COUNT];
	int		last_target;	/* of the last known evaluation */
	int		pending;	/* -1 held back from worse, +1 from better */
	int64_t		pending_ms;
	/* The recovery ramp: active after coming back from out. */
	bool		ramping;
	int64_t		ramp_ms;	/* its start */
	unsigned	ramp_weight;	/* the step replied now */
	int64_t		ramp_step_ms;	/* when that step was taken */
	/* Flap damping. */
	int64_t		outs_ms[TRANSITION_OUTS_MAX];	/* oldest first */
	size_t		nouts;
	unsigned	damping;	/* 1, 2, 4, 8, 10: up_after's factor */
	bool		resumed;	/* loaded from the state file, its
					   reason not yet checked against
					   the probes (transition_resumed) */
	struct guard	guard;		/* the peer guard's; not persisted */
};

/* --- transition.c, for the other rooms --- */

/* Adds a line to what the caller logs; notes may be NULL. */
void	transition_note(struct transition_notes *, bool warning,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Remembers a going-out; the oldest goes when the list is full. */
void	transition_push_out(struct transition *, int64_t ms);

/* --- transition_guard.c: the peer guard's steps in an evaluation --- */

enum transition_guard_step {
	TRANSITION_GUARD_BEGIN,		/* guard_begin() */
	TRANSITION_GUARD_EPISODE,	/* guard_episode() */
	TRANSITION_GUARD_LETS_OUT,	/* guard_lets_out() */
	TRANSITION_GUARD_GOING_OUT,	/* guard_going_out() */
	TRANSITION_GUARD_WHILE_OUT,	/* guard_while_out() */
};

/*
 * Runs one step of the peer guard (guard.h) on t as it is now (pv NULL:
 * no peers) and applies what it says: the node back in, the reason, the
 * notes. Returns guard_lets_out()'s answer for that step, else true.
 */
bool	transition_guard(struct transition *, enum transition_guard_step,
	    const struct peer_view *pv, const struct decision *target,
	    int64_t now_ms, struct transition_notes *);

#endif
