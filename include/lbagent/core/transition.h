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

#include "lbagent/core/decision.h"
#include "lbagent/core/guard.h"
#include "lbagent/core/settings.h"

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
 * One service's engine, opaque: its state is read through the accessors
 * below (transition.c and transition_json.c share its layout).
 */
struct transition;

/*
 * Starts up at 100% (or as loaded); counts start at the first
 * evaluation. conf outlives the engine. NULL when out of memory.
 */
struct transition *transition_new(const struct transition_conf *,
	    int64_t now_ms);
void	transition_free(struct transition *);
/* As new, under the same settings (a state file found corrupt). */
void	transition_reset(struct transition *, int64_t now_ms);
/* A reload: to, under its own (new) settings, goes on from where from is. */
void	transition_carry(struct transition *to, const struct transition *from);

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
 * Afterwards, guard_need_ms() says whether a fresh round is wanted. Fills
 * *out with the decision to reply and *notes with what to log. Returns
 * true when something worth saving changed (the target, a move, a ramp
 * step, damping).
 */
bool	transition_evaluate(struct transition *, const struct decision *target,
	    bool known, const struct peer_view *peers, int64_t now_ms,
	    struct decision *out, struct transition_notes *notes);

struct rules_input;	/* rules.h */

/*
 * The first evaluation after the state file was loaded, with the probes
 * the service has now. A node held out whose reason names probes that
 * are gone says so instead of quoting their last failure: "held from
 * before the restart: dep (probe removed); up after 60s of passing".
 * Probes that remain keep the reason as it was. Once per load; true when
 * the reason changed (with a note).
 */
bool	transition_resumed(struct transition *, const struct rules_input *,
	    size_t n, struct transition_notes *);

/* Forgets the runs (counts restart now): at start-up and when automation
 * is switched back on. */
void	transition_restart_counts(struct transition *);

/*
 * Automation takes over from shadow mode (or from off after shadow):
 * HAProxy holds `held`, what lbagent last really told it, not what the
 * engine decided meanwhile. An engine worse than held goes back to it,
 * since now_ms, so that going worse again waits a full down_after (or
 * degrade_after) from now; an engine as good or better goes on as it is.
 * True when it went back. Call transition_restart_counts too.
 */
bool	transition_hold(struct transition *, const struct decision *held,
	    int64_t now_ms);

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

/* --- what the engine is at, for the status and the agent --- */

const struct transition_conf *transition_conf(const struct transition *);
/* The level the node is at (before the ramp), since when, and why. */
int	 transition_at(const struct transition *);
int64_t	 transition_since_ms(const struct transition *);
const char *transition_reason(const struct transition *);
/* True while the recovery ramp runs, with *start_ms its start. */
bool	 transition_ramp(const struct transition *, int64_t *start_ms);
/* The flap damping factor: 1, 2, 4, 8, 10. */
unsigned transition_damping(const struct transition *);
/* The goings-out kept (flap damping), oldest first. */
size_t	 transition_nouts(const struct transition *);
int64_t	 transition_out_ms(const struct transition *, size_t i);
/*
 * The start of the current run of evaluations whose target was at or
 * above level (each with every probe's word); INT64_MIN: no run.
 */
int64_t	 transition_passing_since_ms(const struct transition *, int level);

/*
 * The engine's peer guard (guard.h), for the status and the agent: its
 * state, and after an evaluation whether a round started at or after the
 * time returned is wanted (ask the peers unless the view is that fresh);
 * INT64_MIN: none.
 */
void	 guard_view(const struct transition *, struct guard_view *);
int64_t	 guard_need_ms(const struct transition *);

/* "down", "up", "up 50%": a level in words. */
const char *transition_level_text(int level, char buf[16]);

/*
 * Persistence. Times go out as ages at now_ms. On load, `gap_ms` is how
 * long lbagent was not running and `same_boot` whether the machine kept
 * running meanwhile: a window of passing that was running continues over
 * the gap only then (a reboot restarted whatever was passing). The ramp
 * resumes from the step HAProxy was last told; the flap history ages by
 * the gap. Returns -1 with *why on a malformed object (t left as it was).
 * In transition_json.c.
 */
json_t	*transition_to_json(const struct transition *, int64_t now_ms);
int	 transition_from_json(struct transition *, const json_t *,
	    int64_t now_ms, int64_t gap_ms, bool same_boot, const char **why);

#endif
