/*
 * The peer guard: going out by the rules waits until a fresh round of
 * asking the other nodes (struct peer_view) shows another node serving;
 * out by the rules while no other node serves, the node comes back. It
 * is a part of the transition engine (transition_evaluate runs it, in
 * guard.c); this is what the rest of lbagent sees of it. Pure.
 */
#ifndef LBAGENT_GUARD_H
#define LBAGENT_GUARD_H

#include <stdint.h>

#include "lbagent/core/peer_view.h"

struct transition;

/*
 * The peer guard's hold on automated going-out (transition_evaluate with
 * a peer_view). Not persisted: a restart clears it, the latch included.
 */
enum guard_state {
	GUARD_OFF,		/* no peers configured */
	GUARD_WATCHING,		/* nothing held */
	GUARD_ASKING,		/* going out is due: waiting for a fresh round */
	GUARD_HOLDING,		/* staying in: no other node serving */
	GUARD_BACK_ALONE,	/* back in: no other node served for alone_grace */
	GUARD_LATCHED,		/* back right after going out: no going out
				   until lbagent restarts */
};

const char	*guard_state_name(enum guard_state);

/* The guard of one engine, for the status. */
struct guard_view {
	enum guard_state	 state;
	int64_t			 since_ms;	/* in that state since */
	const char		*reason;	/* "" when nothing is held */
};

void		guard_view(const struct transition *, struct guard_view *);
/*
 * After an evaluation: a round started at or after this is wanted (ask
 * the peers unless the view is that fresh); INT64_MIN: none.
 */
int64_t		guard_need_ms(const struct transition *);

#endif
