/*
 * One service's pipeline, pure: the inputs of one evaluation in (its
 * probes as the rules see them, the node's and its own markers, the kill
 * switch's sources, the peer guard's view, the clocks), its effects out as
 * data (the decision and reply lines, what to save and when, whether to
 * ask the peers, the lines to log). The rules give a target, the
 * transition engine moves towards it (or the kill switch stops it), the
 * markers go over that; a change of the decision composes the lines once,
 * keeps the history and settles the claims with lbkeys. The agent feeds
 * it and applies the effects; the reply for a check is chosen here too.
 */
#ifndef LBAGENT_SERVICE_H
#define LBAGENT_SERVICE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/decision.h"
#include "lbagent/core/history.h"
#include "lbagent/core/lbkeys.h"
#include "lbagent/core/marker.h"
#include "lbagent/core/pace.h"
#include "lbagent/core/reply.h"
#include "lbagent/core/transition.h"

struct rules_input;	/* rules.h */

#define SERVICE_NOTE_MAX	1024	/* a log line's length (log.c) */
/* The engine's, switched off or on, shadow's, a marker's warning, the
 * reply, the would-be reply, two claims ended. */
#define SERVICE_NOTES_MAX	(TRANSITION_NOTES_MAX + 9)
#define SERVICE_OFF_BY_MAX	(PATH_MAX + 32)

struct service {
	const char		*name;		/* "" for the default service */
	char			*marker_dir;	/* its own markers; NULL: none */
	bool			 reasons;	/* reply_reasons */
	bool			 has_decision;
	struct decision		 decision;
	/* The line for each set of restore words, indexed by CLAIM_* bits. */
	char			 lines[CLAIM_ALL + 1][REPLY_MAX];
	size_t			 lens[CLAIM_ALL + 1];
	struct lbkeys		*keys;
	struct transition	*tr;
	struct history		 history;
	bool			 off;		/* automation off, as last seen */
	char			 off_by[SERVICE_OFF_BY_MAX];
	struct decision		 target;	/* the rules', last evaluated */
	/*
	 * Shadow mode: everything runs, and what automation would reply is
	 * the would-be decision, its lines (by would-be restore words, with
	 * their newline) and its own keys, which track the would-be claims
	 * per load balancer. Not persisted.
	 */
	bool			 shadow;	/* as last seen */
	char			 shadow_by[SERVICE_OFF_BY_MAX];
	bool			 has_would;
	struct decision		 would;
	char			 would_lines[CLAIM_ALL + 1][REPLY_MAX];
	struct lbkeys		*would_keys;
	/*
	 * What lbagent last really told HAProxy of its own (the last
	 * automated decision, before markers), since when: what HAProxy
	 * holds when automation takes over from shadow.
	 */
	bool			 has_held;
	struct decision		 held;
	int64_t			 held_since_ms;
	/*
	 * Since when (wall ms) the reply says what it says in kind (its
	 * words: a ramp step or a new reason is not a change); kept in the
	 * state file, so that a restart into the same state keeps it.
	 */
	int64_t			 since_wall_ms;
	/* The log's limit on changes of a number only (SERVICE_NUMBER_LOG_MS). */
	char			 number_shape[REASON_MAX + 1];
	int64_t			 number_logged_ms;
	unsigned		 number_quiet;	/* not logged since */
	uint64_t		 replies;
	uint64_t		 transitions[NODE_STATE_COUNT + 1]; /* [COUNT]: off */
	/* A marker taking the node out while no other node serves. */
	int64_t			 marker_out_ms;	/* since; INT64_MIN: no marker */
	bool			 marker_warned;
	char			 marker_warning[REASON_MAX + 64];
};

/*
 * The modes: auto, off (nothing automated) and shadow (automated, told
 * as a comment only). LBAGENT_MODE's values, and mode = in [agent].
 */
enum service_mode {
	SERVICE_MODE_AUTO,
	SERVICE_MODE_OFF,
	SERVICE_MODE_SHADOW,
};

/*
 * Where automation can be switched off or to shadow, besides the off and
 * shadow markers. Off is the stronger: any source of off (a marker, or
 * the mode LBAGENT_MODE or else mode = gives) wins over any of shadow.
 */
struct service_switch {
	int		 mode_env;	/* LBAGENT_MODE: -1 unset, else a
					   service_mode */
	bool		 conf_off;	/* mode = off */
	bool		 conf_shadow;	/* mode = shadow */
	const char	*conf_path;	/* the configuration, for the log */
	const char	*state_dir;	/* where the node's markers are */
};

/* One evaluation's inputs. */
struct service_input {
	const struct rules_input	*probes;	/* as the rules see them */
	const bool			*settled;	/* each one's verdict rests
							   on evidence */
	size_t				 nprobes;
	const struct markers		*node;		/* state_dir's */
	const struct markers		*own;		/* the service's; NULL: none */
	const struct service_switch	*sw;
	const struct peer_view		*peers;		/* NULL: no peer guard */
	bool				 at_start;	/* the first evaluation */
	/*
	 * Capacity (decision_capacity): the factor an estimate gives the
	 * weight (0: none, the health weight) and the maxconn:N (0: none).
	 */
	unsigned			 capacity_pct;
	unsigned			 maxconn;
	int64_t				 now_ms;	/* monotonic */
	int64_t				 wall_ms;	/* the same instant, wall */
};

/* A line to log, at warning or notice, in order. */
struct service_note {
	bool	warning;
	bool	debug;		/* at debug level (a ramp step, a number) */
	char	text[SERVICE_NOTE_MAX];
};

/*
 * A reply that changes only in a number of its reason (p99 253ms, then
 * 254ms) is logged at warning at most once in this long per service and
 * reason shape (the reason with its numbers taken out); the others at
 * debug level, counted in the next warning.
 */
#define SERVICE_NUMBER_LOG_MS	60000

/* What one evaluation asks the agent to do. */
struct service_effects {
	bool			 decided;	/* the decision was set: STATUS=
						   may change */
	bool			 line_changed;	/* the line is new or differs */
	struct decision		 decision;	/* the service's, after it */
	char			 line[REPLY_MAX]; /* its line, without "\n" */
	/*
	 * A claim started or ended: on disk before any reply carries the
	 * lines. Else a decision set is saved after this turn of the loop,
	 * and a window under way (save_soon) within a second.
	 */
	bool			 save_now;
	bool			 save;
	bool			 save_soon;
	bool			 ask_peers;	/* a fresh round of the guard */
	/*
	 * How often the guard's rounds go on (pace.h): fast while the node is
	 * about to go out (the guard asks or holds it in) or just went out,
	 * steady while back alone, out by the rules or held out by a marker;
	 * none in and healthy.
	 */
	enum pace		 peers_pace;
	struct service_note	 notes[SERVICE_NOTES_MAX];
	size_t			 nnotes;
};

/*
 * A service with no decision yet, up at 100% as far as the engine knows.
 * name "" is the default service (the node's markers only); any other
 * has its own markers in state_dir/NAME. name must outlive it. -1: out
 * of memory (service_free cleans up either way).
 */
int	service_init(struct service *, const char *name, const char *state_dir,
	    const struct transition_conf *, bool reasons,
	    uint64_t forget_after_ms, int64_t now_ms);
void	service_free(struct service *);

/* One evaluation: fills *fx with what the agent must do. */
void	service_step(struct service *, const struct service_input *,
	    struct service_effects *fx);

/*
 * The decision replied before a restart, as the state file has it, and
 * since when (wall ms; 0: unknown, the first step's time): the lines are
 * composed so that the change at start-up is logged, and the since stays
 * unless the first step decides otherwise.
 */
void	service_resume(struct service *, const struct decision *,
	    int64_t since_wall_ms);

/*
 * What HAProxy held from lbagent's automation before a restart, and since
 * when (monotonic ms), as the state file has it. Without it the first step
 * takes the engine as loaded, which in shadow mode has moved on untold.
 */
void	service_resume_held(struct service *, const struct decision *,
	    int64_t since_ms);

/*
 * A reload: what from lived through (its load balancers' keys,
 * transitions, history, the kill switch, the marker's warning) moves into
 * to, which keeps its own settings and recomposes its lines with them.
 * from is left without keys; service_free it as usual.
 */
void	service_carry_over(struct service *to, struct service *from);

/* What one reply did, kept in case the check's text comes late. */
struct service_check {
	unsigned	carried;	/* CLAIM_* bits the reply carried */
	unsigned	restore;	/* restore words (CLAIM_* bits) it carried */
	bool		created;	/* the reply created its key */
	bool		would_created;	/* ... its would-be key (shadow) */
};

/*
 * The reply to a check from (addr, text) at now_ms, copied into buf with
 * its newline; returns its length. *save_soon: the keys changed, to be
 * saved within a second (never in a reply's turn); notes: what the keys
 * had to say, for the log.
 */
size_t	service_reply(struct service *, const char *addr, const char *text,
	    size_t len, int64_t now_ms, char buf[REPLY_MAX],
	    struct service_check *, bool *save_soon, struct lbkeys_notes *);
/* The check's text came after its reply; true: save within a second. */
bool	service_late_text(struct service *, const char *addr,
	    const char *text, size_t len, const struct service_check *,
	    int64_t now_ms, struct lbkeys_notes *);

/* The line for checks that are owed nothing, without its newline. */
const char *service_line(const struct service *, char buf[REPLY_MAX]);

#endif
