/*
 * The peer guard: going out by the rules waits until a fresh round of
 * asking the other nodes (struct peer_view) shows another node serving;
 * out by the rules while no other node serves, the node comes back. Its
 * inputs and outputs are its own (struct guard_in, struct guard_out): the
 * transition engine runs its steps in each evaluation and applies what
 * they say (transition.c); the guard knows nothing of the engine. Pure.
 */
#ifndef LBAGENT_GUARD_H
#define LBAGENT_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/peer_view.h"
#include "lbagent/core/text.h"

#define GUARD_NOTES_MAX		2		/* in one step */
#define GUARD_NOTE_MAX		(REASON_MAX + 160)	/* a note's text */
#define GUARD_WORDS_MAX		16		/* a level in words */

/*
 * The peer guard's hold on automated going-out. Not persisted: a restart
 * clears it, the latch included.
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

/* The guard of one engine, for the status (transition.h: guard_view()). */
struct guard_view {
	enum guard_state	 state;
	int64_t			 since_ms;	/* in that state since */
	const char		*reason;	/* "" when nothing is held */
	int64_t			 out_ms;	/* went out by the rules;
						   INT64_MIN: not */
};

/* One engine's guard: what it holds between evaluations. */
struct guard {
	enum guard_state state;
	int64_t		since_ms;	/* in that state since */
	int64_t		want_ms;	/* going out due since; INT64_MIN: not */
	int64_t		out_ms;		/* went out by the rules; INT64_MIN: not */
	int64_t		need_ms;	/* wants a round started at or after
					   this; INT64_MIN: none */
	bool		warned;		/* this episode's hold was logged */
	char		reason[REASON_MAX + 1];	/* "" when nothing held */
};

/*
 * What a step is told. Levels are the engine's: -1 down, 0 drained by the
 * rules, 1-100 a weight; "in" is 1 or more, "out" 0 or below.
 */
struct guard_in {
	const struct peer_view	*pv;		/* NULL: no peers */
	int			 level;		/* where the node is */
	int			 target;	/* where the rules want it */
	const char		*target_reason;	/* "dep: HTTP 503; disk: ..." */
	int64_t			 now_ms;
	uint64_t		 alone_grace_ms;
	uint64_t		 recheck_after_ms;
	uint64_t		 just_out_ms;
	/*
	 * Coming back (guard_while_out): the level it would come back at
	 * (the rules' weight, or 100%), and both levels in words.
	 */
	int			 back_level;
	char			 back_words[GUARD_WORDS_MAX];
	char			 level_words[GUARD_WORDS_MAX];
};

/* A line for the log; the engine passes it on. */
struct guard_note {
	bool	warning;		/* else notice */
	char	text[GUARD_NOTE_MAX];
};

/* What a step says; the engine applies it at once. */
struct guard_out {
	struct guard_note	notes[GUARD_NOTES_MAX];
	size_t			nnotes;
	bool			reason;	/* the node's reason is now the guard's
					   (struct guard's reason) */
	bool			back;	/* the node is back in at back_level,
					   since now_ms, nothing pending */
};

/* A guard with nothing held, since now_ms. */
void	guard_init(struct guard *, int64_t now_ms);
/*
 * The node is in again but not by the rules (automation took over from
 * shadow mode): its last going out is not the guard's to look after.
 */
void	guard_forget_out(struct guard *);

/*
 * The steps of one evaluation, in this order; each starts by clearing
 * *out. First the guard is set up (pv NULL: no peers).
 */
void	guard_begin(struct guard *, const struct guard_in *,
	    struct guard_out *);
/* An episode of the guard ends when the rules no longer want out. */
void	guard_episode(struct guard *, const struct guard_in *,
	    struct guard_out *);
/*
 * Going out by the rules is due: may it? It needs a round started since
 * it became due, and that round must show another node serving.
 */
bool	guard_lets_out(struct guard *, const struct guard_in *,
	    struct guard_out *);
/* Going out by the rules, another node serving: what the guard notes. */
void	guard_going_out(struct guard *, const struct guard_in *,
	    struct guard_out *);
/* Out by the rules: back in when no other node serves. */
void	guard_while_out(struct guard *, const struct guard_in *,
	    struct guard_out *);

#endif
