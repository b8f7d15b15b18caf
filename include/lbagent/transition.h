/*
 * Safe transitions: the rules' target in, the decision HAProxy is told
 * out. Going worse waits (down_after, degrade_after), coming back waits
 * longer (up_after, restore_after), a node back from being out ramps its
 * weight up, and a node that keeps going out waits longer each time (flap
 * damping). Pure logic over a caller-supplied monotonic clock (ms).
 *
 * A target is a level: -1 down, 0 drained by the rules (up at 0%), 1-100
 * a weight. "Out" is a level of 0 or below.
 */
#ifndef LBAGENT_TRANSITION_H
#define LBAGENT_TRANSITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lbagent/config.h"
#include "lbagent/decision.h"

#define LEVEL_DOWN		(-1)
#define LEVEL_MAX		100
#define LEVEL_COUNT		(LEVEL_MAX + 2)
#define TRANSITION_OUTS_MAX	CONFIG_FLAP_LIMIT_MAX	/* goings-out kept */
#define TRANSITION_DAMPING_MAX	10	/* up_after grows to 10x at most */
#define RAMP_STEP_MIN		5	/* points */
#define RAMP_STEP_MS		1000	/* at most one step a second */
#define TRANSITION_NOTES_MAX	6

/* What happened in one evaluation, for the log: the caller logs each. */
struct transition_note {
	bool	warning;		/* else notice */
	char	text[REASON_MAX + 160];
};

struct transition_notes {
	struct transition_note	n[TRANSITION_NOTES_MAX];
	size_t			count;
};

/*
 * What the peer guard knows for a service (peers.h fills it): NULL when
 * no peers are configured.
 */
struct peer_view {
	int64_t	round_ms;	/* start of the last round answered; INT64_MIN: none */
	bool	other_serving;	/* in that round, another node served */
	int64_t	served_ms;	/* start of the last round where one did (or
				   the guard's start, when none has yet) */
	char	who[96];	/* those serving: "n2, n3" */
	char	why[256];	/* why the others are not: "n2: timeout; ..." */
};

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
	/* The peer guard. */
	enum guard_state guard;
	int64_t		guard_since_ms;	/* in that state since */
	int64_t		guard_want_ms;	/* going out due since; INT64_MIN: not */
	int64_t		guard_out_ms;	/* went out by the rules; INT64_MIN: not */
	int64_t		guard_need_ms;	/* wants a round started at or after
					   this; INT64_MIN: none (see below) */
	bool		guard_warned;	/* this episode's hold was logged */
	char		guard_reason[REASON_MAX + 1];	/* "" when nothing held */
};

/* Starts up at 100% (or as loaded); counts start at the first evaluation. */
void	transition_init(struct transition *, const struct transition_conf *,
	    int64_t now_ms);

/* The level a target from the rules stands for. */
int	transition_level(const struct decision *target);

/*
 * One evaluation. `known` is false while some probe has not yet shown
 * what it counts as (the target then assumes it passes): such an
 * evaluation still counts towards going worse, never towards coming
 * back. peers is the peer guard's view (NULL: no guard): going out by
 * the rules needs a round started after it became due that shows
 * another node serving; while out, no other node serving for
 * alone_grace brings the node back, and none serving at a look within
 * just_out of going out (from recheck_after on) brings it back latched.
 * Afterwards, guard_need_ms says whether a fresh round is wanted. Fills
 * *out with the decision to reply and *notes with what to log. Returns
 * true when something worth saving changed (the target, a move, a ramp
 * step, damping).
 */
bool	transition_evaluate(struct transition *, const struct decision *target,
	    bool known, const struct peer_view *peers, int64_t now_ms,
	    struct decision *out, struct transition_notes *notes);

/* Forgets the runs (counts restart now): at start-up and when automation
 * is switched back on. */
void	transition_restart_counts(struct transition *);

/* The decision for the current state, without evaluating. */
void	transition_current(const struct transition *, struct decision *out);

/* A change a window is holding back. */
struct transition_pending {
	int	towards;	/* the level the target is at */
	int64_t	for_ms;		/* how long it has held; -1: not yet counted */
	int64_t	after_ms;	/* how long it must hold */
};

/* True, with *p, when the last target differs from where the node is. */
bool	transition_pending(const struct transition *, int64_t now_ms,
	    struct transition_pending *p);
/* "failing for 12s, goes down at 30s" and the like. */
void	transition_pending_text(const struct transition *,
	    const struct transition_pending *, char *buf, size_t size);

/* up_after with flap damping applied. */
uint64_t transition_up_after_ms(const struct transition *);

/* "down", "up", "up 50%": a level in words. */
const char *transition_level_text(int level, char buf[16]);

/*
 * Persistence. Times go out as ages at now_ms. On load, `gap_ms` is how
 * long lbagent was not running and `same_boot` whether the machine kept
 * running meanwhile: a window of passing that was running continues over
 * the gap only then (a reboot restarted whatever was passing). The ramp
 * resumes from the step HAProxy was last told; the flap history ages by
 * the gap. Returns -1 with *why on a malformed object (t left as it was).
 */
json_t	*transition_to_json(const struct transition *, int64_t now_ms);
int	 transition_from_json(struct transition *, const json_t *,
	    int64_t now_ms, int64_t gap_ms, bool same_boot, const char **why);

/* The last transitions of a service: time, from, to, reason. */
#define HISTORY_MAX	100

struct history_entry {
	int64_t	wall_ms;
	char	from[24], to[24];
	char	reason[REASON_MAX + 1];
};

struct history {
	struct history_entry	e[HISTORY_MAX];
	size_t			first, count;
};

void	history_add(struct history *, int64_t wall_ms, const char *from,
	    const char *to, const char *reason);
/* The i-th entry, oldest first. */
const struct history_entry *history_get(const struct history *, size_t i);
json_t	*history_to_json(const struct history *);
int	 history_from_json(struct history *, const json_t *, const char **why);

#endif
