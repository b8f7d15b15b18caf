/* Safe transitions: hysteresis, recovery ramp, flap damping. Pure. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/transition.h"
#include "lbagent/units.h"

#define NO_RUN		INT64_MIN
#define IDX(level)	((level) + 1)
/* Ages in a file beyond this are nonsense; clamping keeps sums in range. */
#define AGE_MAX_MS	(100LL * 365 * 24 * 3600 * 1000)

static void
note(struct transition_notes *notes, bool warning, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
note(struct transition_notes *notes, bool warning, const char *fmt, ...)
{
	struct transition_note	*n;
	va_list			 ap;

	if (notes == NULL || notes->count == TRANSITION_NOTES_MAX)
		return;
	n = &notes->n[notes->count++];
	n->warning = warning;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

/* " (reason)", or "" when there is none. */
static const char *
paren(const char *reason, char buf[REASON_MAX + 4])
{
	if (reason[0] == '\0')
		return "";
	snprintf(buf, REASON_MAX + 4, " (%s)", reason);
	return buf;
}

const char *
transition_level_text(int level, char buf[16])
{
	if (level <= LEVEL_DOWN)
		return "down";
	if (level >= LEVEL_MAX)
		return "up";
	snprintf(buf, 16, "up %d%%", level);
	return buf;
}

int
transition_level(const struct decision *target)
{
	if (target->state == NODE_DOWN)
		return LEVEL_DOWN;
	return target->weight > LEVEL_MAX ? LEVEL_MAX : (int)target->weight;
}

void
transition_restart_counts(struct transition *t)
{
	int	i;

	for (i = 0; i < LEVEL_COUNT; i++) {
		t->le_ms[i] = t->ge_ms[i] = NO_RUN;
		t->le_weight[i] = false;
	}
	t->pending = 0;
}

void
transition_init(struct transition *t, const struct transition_conf *conf,
    int64_t now_ms)
{
	memset(t, 0, sizeof(*t));
	t->conf = conf;
	t->level = LEVEL_MAX;
	t->since_ms = now_ms;
	t->damping = 1;
	t->last_target = INT_MIN;
	t->guard_since_ms = now_ms;
	t->guard_want_ms = t->guard_out_ms = t->guard_need_ms = NO_RUN;
	transition_restart_counts(t);
}

uint64_t
transition_up_after_ms(const struct transition *t)
{
	return t->conf->up_after_ms * t->damping;
}

/*
 * Extends or ends every level's runs with this evaluation's target. While
 * some probe is not settled, the target assumes it passes: it is evidence
 * of failing (worse runs go on, passing runs end) but not of passing
 * (passing runs neither start nor end on it).
 */
static void
update_runs(struct transition *t, int target, bool known, int64_t now_ms)
{
	int	level;

	for (level = LEVEL_DOWN; level <= LEVEL_MAX; level++) {
		int i = IDX(level);

		if (target <= level) {
			if (t->le_ms[i] == NO_RUN) {
				t->le_ms[i] = now_ms;
				t->le_weight[i] = false;
			}
			if (target >= 1)
				t->le_weight[i] = true;
		} else {
			t->le_ms[i] = NO_RUN;
			t->le_weight[i] = false;
		}
		if (target >= level) {
			if (t->ge_ms[i] == NO_RUN && known)
				t->ge_ms[i] = now_ms;
		} else
			t->ge_ms[i] = NO_RUN;
	}
}

static int64_t
run_ms(int64_t start, int64_t now_ms)
{
	return start == NO_RUN ? -1 : now_ms - start;
}

/*
 * The worst level the target has been at or below on every evaluation
 * for long enough, if it is worse than the current one; else the current.
 */
static int
worse_level(const struct transition *t, int64_t now_ms)
{
	const struct transition_conf	*c = t->conf;
	int				 level;

	for (level = LEVEL_DOWN; level < t->level; level++) {
		int64_t r = run_ms(t->le_ms[IDX(level)], now_ms);

		if (r < 0)
			continue;
		if (level <= 0 ? r >= (int64_t)c->down_after_ms :
		    t->le_weight[IDX(level)] && r >= (int64_t)c->degrade_after_ms)
			return level;
	}
	return t->level;
}

/* The best level the target has been at or above for long enough. */
static int
better_level(const struct transition *t, int64_t now_ms)
{
	int64_t	need = (int64_t)(t->level <= 0 ? transition_up_after_ms(t) :
		    t->conf->restore_after_ms);
	int	level;

	for (level = LEVEL_MAX; level > t->level; level--)
		if (run_ms(t->ge_ms[IDX(level)], now_ms) >= need)
			return level;
	return t->level;
}

bool
transition_pending(const struct transition *t, int64_t now_ms,
    struct transition_pending *p)
{
	const struct transition_conf	*c = t->conf;
	int				 tl = t->last_target;

	if (tl == INT_MIN || tl == t->level)
		return false;
	p->towards = tl;
	if (tl < t->level) {
		p->for_ms = run_ms(t->le_ms[IDX(tl)], now_ms);
		p->after_ms = (int64_t)(tl <= 0 ? c->down_after_ms :
		    c->degrade_after_ms);
	} else {
		p->for_ms = run_ms(t->ge_ms[IDX(tl)], now_ms);
		p->after_ms = (int64_t)(t->level <= 0 ?
		    transition_up_after_ms(t) : c->restore_after_ms);
	}
	return true;
}

void
transition_pending_text(const struct transition *t,
    const struct transition_pending *p, char *buf, size_t size)
{
	char	f[32], a[32], lb[16];

	if (p->for_ms < 0) {
		snprintf(buf, size, "towards %s: waiting for every probe's "
		    "verdict", transition_level_text(p->towards, lb));
		return;
	}
	units_format_age((uint64_t)p->for_ms, f, sizeof(f));
	units_format_ms((uint64_t)p->after_ms, a, sizeof(a));
	/* Due, but the peer guard keeps the node in. */
	if (p->towards < t->level && p->towards <= 0 &&
	    (t->guard == GUARD_LATCHED || (p->for_ms >= p->after_ms &&
	    t->guard >= GUARD_ASKING))) {
		snprintf(buf, size, "failing for %s; %s", f,
		    t->guard == GUARD_ASKING ? "asking the other nodes before "
		    "going out" : t->guard == GUARD_LATCHED ? "held in by the "
		    "peer guard: latched until lbagent restarts" : "held in by "
		    "the peer guard: no other node serving");
		return;
	}
	if (p->towards < t->level && p->towards <= LEVEL_DOWN)
		snprintf(buf, size, "failing for %s, goes down at %s", f, a);
	else if (p->towards < t->level)
		snprintf(buf, size, "at %d%% or lower for %s, goes to %s at %s",
		    p->towards, f, transition_level_text(p->towards, lb), a);
	else if (t->level <= 0)
		snprintf(buf, size, "passing for %s, comes back at %s%s", f, a,
		    t->damping > 1 ? " (flap damping)" : "");
	else
		snprintf(buf, size, "at %d%% or more for %s, goes to %s at %s",
		    p->towards, f, transition_level_text(p->towards, lb), a);
}

/* Drops goings-out older than the flap window. */
static void
prune_outs(struct transition *t, int64_t now_ms)
{
	size_t	drop = 0;

	while (drop < t->nouts &&
	    now_ms - t->outs_ms[drop] >= (int64_t)t->conf->flap_window_ms)
		drop++;
	memmove(t->outs_ms, t->outs_ms + drop,
	    (t->nouts - drop) * sizeof(t->outs_ms[0]));
	t->nouts -= drop;
}

/* Remembers a going-out; the oldest goes when the list is full. */
static void
push_out(struct transition *t, int64_t ms)
{
	if (t->nouts == TRANSITION_OUTS_MAX) {
		memmove(t->outs_ms, t->outs_ms + 1,
		    (t->nouts - 1) * sizeof(t->outs_ms[0]));
		t->nouts--;
	}
	t->outs_ms[t->nouts++] = ms;
}

static void
went_out(struct transition *t, int64_t now_ms, struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	char				 w[32], u[32];

	prune_outs(t, now_ms);
	push_out(t, now_ms);
	if (c->flap_limit == 0)
		return;
	units_format_ms(c->flap_window_ms, w, sizeof(w));
	if (t->damping > 1) {
		t->damping = t->damping * 2 > TRANSITION_DAMPING_MAX ?
		    TRANSITION_DAMPING_MAX : t->damping * 2;
		units_format_ms(transition_up_after_ms(t), u, sizeof(u));
		note(notes, true, "flap damping: out again within %s of the last "
		    "time; coming back now takes %s (up_after x%u)", w, u,
		    t->damping);
	} else if (t->nouts >= c->flap_limit) {
		t->damping = 2;
		units_format_ms(transition_up_after_ms(t), u, sizeof(u));
		note(notes, true, "flap damping: out %zu times within %s; coming "
		    "back now takes %s (up_after x2) until %s pass without going "
		    "out", t->nouts, w, u, w);
	}
}

/* Moves to level; says why in a note. */
static void
move(struct transition *t, int level, const struct decision *target,
    int64_t now_ms, struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	int				 from = t->level;
	int64_t				 r;
	char				 p[REASON_MAX + 4], d[32], lb[16], fb[16];
	char				 rs[32], rd[32];
	const char			*lt, *ft;

	t->level = level;
	t->since_ms = now_ms;
	t->pending = 0;
	snprintf(t->reason, sizeof(t->reason), "%s", target->reason);
	lt = transition_level_text(level, lb);
	ft = transition_level_text(from, fb);
	if (level < from) {
		r = run_ms(t->le_ms[IDX(level)], now_ms);
		units_format_age((uint64_t)r, d, sizeof(d));
		if (level == LEVEL_DOWN)
			note(notes, true, "down: failing on every evaluation for "
			    "%s%s", d, paren(target->reason, p));
		else
			note(notes, true, "%s (was %s): at %d%% or worse on every "
			    "evaluation for %s%s", lt, ft, level, d,
			    paren(target->reason, p));
		if (from >= 1 && level <= 0) {
			t->ramping = false;
			went_out(t, now_ms, notes);
		}
		return;
	}
	r = run_ms(t->ge_ms[IDX(level)], now_ms);
	units_format_age((uint64_t)r, d, sizeof(d));
	if (from <= 0 && level >= 1 && c->ramp_ms > 0 &&
	    (uint64_t)level > c->ramp_start) {
		t->ramping = true;
		t->ramp_ms = now_ms;
		t->ramp_weight = (unsigned)c->ramp_start;
		t->ramp_step_ms = now_ms;
		units_format_ms(c->ramp_ms, rd, sizeof(rd));
		snprintf(rs, sizeof(rs), "%u%%", (unsigned)c->ramp_start);
		note(notes, true, "%s (was %s): at %d%% or better on every "
		    "evaluation for %s; recovering from %s over %s", lt, ft, level,
		    d, rs, rd);
	} else
		note(notes, true, "%s (was %s): at %d%% or better on every "
		    "evaluation for %s%s", lt, ft, level, d,
		    paren(target->reason, p));
}

/* The first evaluation of an episode that a window holds back. */
static void
held(struct transition *t, int dir, const struct decision *target,
    int64_t now_ms, struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	int				 tl = transition_level(target);
	char				 p[REASON_MAX + 4], w[32], lt[16], ct[16];
	char				 d[32], so_far[48];
	const char			*key;
	uint64_t			 ms;
	int64_t				 r;

	if (t->pending == dir)
		return;
	t->pending = dir;
	t->pending_ms = now_ms;
	if (dir < 0) {
		key = tl <= 0 ? "down_after" : "degrade_after";
		ms = tl <= 0 ? c->down_after_ms : c->degrade_after_ms;
	} else {
		key = t->level <= 0 ? "up_after" : "restore_after";
		ms = t->level <= 0 ? transition_up_after_ms(t) :
		    c->restore_after_ms;
	}
	units_format_ms(ms, w, sizeof(w));
	/* After a restart, a window of passing may already be under way. */
	r = run_ms(dir < 0 ? t->le_ms[IDX(tl)] : t->ge_ms[IDX(tl)], now_ms);
	so_far[0] = '\0';
	if (r >= 1000) {
		units_format_age((uint64_t)r, d, sizeof(d));
		snprintf(so_far, sizeof(so_far), "; %s so far", d);
	}
	note(notes, true, "target %s%s: staying %s until it holds for %s (%s%s)%s",
	    transition_level_text(tl, lt), paren(target->reason, p),
	    transition_level_text(t->level, ct), w, key,
	    dir > 0 && t->damping > 1 ? " with flap damping" : "", so_far);
}

/* The episode ended without a change: the target came back. */
static void
unheld(struct transition *t, int64_t now_ms, struct transition_notes *notes)
{
	char	d[32], ct[16];

	if (t->pending == 0)
		return;
	units_format_age((uint64_t)(now_ms - t->pending_ms), d, sizeof(d));
	note(notes, false, "target back to %s after %s; nothing changed",
	    transition_level_text(t->level, ct), d);
	t->pending = 0;
}

/* Takes the ramp's next step when it is due; ends it at its goal. */
static void
ramp_advance(struct transition *t, int64_t now_ms,
    struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	int64_t				 elapsed = now_ms - t->ramp_ms;
	unsigned			 goal = (unsigned)t->level, start, lin;
	char				 lt[16];

	if (!t->ramping)
		return;
	if (t->level < 1) {
		t->ramping = false;
		return;
	}
	if (now_ms - t->ramp_step_ms < RAMP_STEP_MS)
		return;
	if (elapsed >= (int64_t)c->ramp_ms) {
		t->ramping = false;
		note(notes, false, "recovered: now %s",
		    transition_level_text(t->level, lt));
		return;
	}
	start = (unsigned)c->ramp_start;
	lin = goal <= start ? goal : start + (unsigned)((int64_t)(goal - start) *
	    elapsed / (int64_t)c->ramp_ms);
	if (lin >= t->ramp_weight + RAMP_STEP_MIN) {
		t->ramp_weight = lin;
		t->ramp_step_ms = now_ms;
	}
}

void
transition_current(const struct transition *t, struct decision *out)
{
	decision_up(out);
	if (t->level <= LEVEL_DOWN) {
		out->state = NODE_DOWN;
		snprintf(out->reason, sizeof(out->reason), "%s", t->reason);
		return;
	}
	out->weight = (unsigned)t->level;
	if (t->ramping && t->ramp_weight < out->weight) {
		out->weight = t->ramp_weight;
		out->ramping = true;
		snprintf(out->reason, sizeof(out->reason), "recovering%s%.*s",
		    t->reason[0] ? "; " : "", REASON_MAX - 12, t->reason);
		return;
	}
	snprintf(out->reason, sizeof(out->reason), "%s", t->reason);
}

/* --- the peer guard --- */

const char *
guard_state_name(enum guard_state g)
{
	switch (g) {
	case GUARD_OFF:		return "off";
	case GUARD_WATCHING:	return "watching";
	case GUARD_ASKING:	return "asking";
	case GUARD_HOLDING:	return "holding";
	case GUARD_BACK_ALONE:	return "back_alone";
	case GUARD_LATCHED:	return "latched";
	}
	return "?";
}

static void
guard_set(struct transition *t, enum guard_state g, int64_t now_ms)
{
	if (t->guard != g)
		t->guard_since_ms = now_ms;
	t->guard = g;
}

/*
 * The names of what fails, from the rules' reason ("dep: HTTP 503;
 * disk: 97% used" -> "dep, disk"), for "dep failing".
 */
static void
failing_names(const char *reason, char *buf, size_t size)
{
	const char	*item = reason, *colon, *next;
	size_t		 len = 0;
	int		 n;

	buf[0] = '\0';
	while (item != NULL && *item != '\0' && len + 1 < size) {
		next = strstr(item, "; ");
		colon = strstr(item, ": ");
		if (colon == NULL || (next != NULL && colon > next))
			colon = next != NULL ? next : item + strlen(item);
		n = snprintf(buf + len, size - len, "%s%.*s", len ? ", " : "",
		    (int)(colon - item), item);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
		item = next != NULL ? next + 2 : NULL;
	}
	if (buf[0] == '\0')
		snprintf(buf, size, "the rules");
}

/*
 * The guard's reason for the reply: head, the failing names cut to what
 * fits, tail; within REASON_MAX so that the tail always shows.
 */
static void
guard_reason(struct transition *t, const char *head, const char *names,
    const char *tail)
{
	size_t	room = REASON_MAX - strlen(head) - strlen(tail);

	snprintf(t->guard_reason, sizeof(t->guard_reason), "%s%.*s%s", head,
	    (int)room, names, tail);
	snprintf(t->reason, sizeof(t->reason), "%s", t->guard_reason);
}

#define LATCHED_HEAD	"peer-guard: latched until restart; "

/*
 * Going out by the rules is due: may it? It needs a round started since
 * it became due, and that round must show another node serving. Else
 * the node stays in (logged once per episode) or, latched, always.
 */
static bool
guard_lets_out(struct transition *t, const struct peer_view *pv,
    const struct decision *target, int64_t now_ms,
    struct transition_notes *notes)
{
	char	names[REASON_MAX + 1];

	failing_names(target->reason, names, sizeof(names));
	if (t->guard == GUARD_LATCHED) {
		guard_reason(t, LATCHED_HEAD, names, " failing");
		if (!t->guard_warned)
			note(notes, true, "peer-guard: staying in: %s failing, but "
			    "latched since coming back right after going out: no "
			    "automated going out until lbagent restarts", names);
		t->guard_warned = true;
		return false;
	}
	if (t->guard_want_ms == NO_RUN)
		t->guard_want_ms = now_ms;
	if (pv->round_ms == NO_RUN || pv->round_ms < t->guard_want_ms) {
		/* Ask now; stay as we are until the answer. */
		t->guard_need_ms = t->guard_want_ms;
		if (t->guard == GUARD_WATCHING)
			guard_set(t, GUARD_ASKING, now_ms);
		return false;
	}
	if (pv->other_serving)
		return true;
	/* Back for alone_grace, it keeps saying so until someone serves. */
	if (t->guard != GUARD_BACK_ALONE) {
		guard_set(t, GUARD_HOLDING, now_ms);
		guard_reason(t, "peer-guard: ", names, " failing but no other "
		    "node serving");
	} else
		snprintf(t->reason, sizeof(t->reason), "%s", t->guard_reason);
	if (!t->guard_warned)
		note(notes, true, "peer-guard: staying in although failing "
		    "(%s): no other node serving (%s)", target->reason, pv->why);
	t->guard_warned = true;
	return false;
}

/* Out by the rules: back in at once, at the rules' weight or 100%. */
static void
guard_back(struct transition *t, const struct peer_view *pv,
    const struct decision *target, bool latch, int64_t now_ms,
    struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	int				 tl = transition_level(target);
	int				 from = t->level;
	char				 names[REASON_MAX + 1], g[32], a[32];
	char				 lb[16], fb[16], head[80];

	failing_names(target->reason, names, sizeof(names));
	t->level = tl >= 1 ? tl : LEVEL_MAX;
	t->since_ms = now_ms;
	t->pending = 0;
	t->ramping = false;
	t->guard_out_ms = t->guard_want_ms = NO_RUN;
	t->guard_warned = true;		/* this note is the episode's */
	units_format_age((uint64_t)(now_ms - pv->served_ms), a, sizeof(a));
	units_format_ms(c->alone_grace_ms, g, sizeof(g));
	if (latch) {
		guard_set(t, GUARD_LATCHED, now_ms);
		guard_reason(t, LATCHED_HEAD, names, " failing");
		note(notes, true, "peer-guard: %s (was %s) right after going out: "
		    "no other node serving (%s); latched: no automated going out "
		    "until lbagent restarts",
		    transition_level_text(t->level, lb),
		    transition_level_text(from, fb), pv->why);
	} else {
		guard_set(t, GUARD_BACK_ALONE, now_ms);
		snprintf(head, sizeof(head), "peer-guard: no other node served "
		    "for %s; ", a);
		guard_reason(t, head, names, " failing");
		note(notes, true, "peer-guard: %s (was %s) although %s failing: "
		    "no other node has served for %s (alone_grace %s; %s)",
		    transition_level_text(t->level, lb),
		    transition_level_text(from, fb), names, a, g, pv->why);
	}
}

/*
 * Out by the rules: look again from recheck_after to just_out after
 * going out (a round on every evaluation), and keep asking whether
 * anyone else serves.
 */
static void
guard_while_out(struct transition *t, const struct peer_view *pv,
    const struct decision *target, int64_t now_ms,
    struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	int64_t				 look;

	if (t->guard_out_ms != NO_RUN &&
	    now_ms - t->guard_out_ms <= (int64_t)c->just_out_ms) {
		look = t->guard_out_ms + (int64_t)c->recheck_after_ms;
		if (now_ms >= look) {
			if (pv->round_ms != NO_RUN && pv->round_ms >= look &&
			    !pv->other_serving) {
				guard_back(t, pv, target, true, now_ms, notes);
				return;
			}
			t->guard_need_ms = now_ms;
		}
	}
	if (!pv->other_serving && pv->served_ms != NO_RUN &&
	    now_ms - pv->served_ms >= (int64_t)c->alone_grace_ms)
		guard_back(t, pv, target, false, now_ms, notes);
}

bool
transition_evaluate(struct transition *t, const struct decision *target,
    bool known, const struct peer_view *pv, int64_t now_ms,
    struct decision *out, struct transition_notes *notes)
{
	int		tl = transition_level(target), to;
	int		was_level = t->level;
	unsigned	was_ramp = t->ramping ? t->ramp_weight : 0;
	unsigned	was_damping = t->damping;
	bool		target_changed = tl != t->last_target;
	char		w[32], u[32];

	if (notes != NULL)
		notes->count = 0;
	t->guard_need_ms = NO_RUN;
	if (pv == NULL)
		guard_set(t, GUARD_OFF, now_ms);
	else if (t->guard == GUARD_OFF)
		guard_set(t, GUARD_WATCHING, now_ms);
	if (t->damping > 1 && (t->nouts == 0 || now_ms -
	    t->outs_ms[t->nouts - 1] >= (int64_t)t->conf->flap_window_ms)) {
		t->damping = 1;
		units_format_ms(t->conf->flap_window_ms, w, sizeof(w));
		units_format_ms(t->conf->up_after_ms, u, sizeof(u));
		note(notes, false, "flap damping ended: not out for %s; coming "
		    "back takes %s again", w, u);
	}
	t->last_target = tl;
	update_runs(t, tl, known, now_ms);
	/* An episode of the guard ends when the rules no longer want out. */
	if (tl >= 1 || t->level <= 0) {
		t->guard_want_ms = NO_RUN;
		t->guard_warned = false;
		if (t->level >= 1 && (t->guard == GUARD_ASKING ||
		    t->guard == GUARD_HOLDING || t->guard == GUARD_BACK_ALONE)) {
			guard_set(t, GUARD_WATCHING, now_ms);
			note(notes, false, "peer-guard: the rules no longer want "
			    "this node out; nothing held");
		}
		t->guard_reason[0] = '\0';
	}
	if (tl < t->level) {
		to = worse_level(t, now_ms);
		if (to != t->level && to <= 0 && t->level >= 1 && pv != NULL &&
		    !guard_lets_out(t, pv, target, now_ms, notes))
			;	/* held in by the peer guard */
		else if (to != t->level) {
			if (to <= 0 && t->level >= 1 && pv != NULL) {
				note(notes, false, "peer-guard: going out: "
				    "serving: %s", pv->who);
				guard_set(t, GUARD_WATCHING, now_ms);
				t->guard_out_ms = now_ms;
				t->guard_want_ms = NO_RUN;
			}
			move(t, to, target, now_ms, notes);
		} else
			held(t, -1, target, now_ms, notes);
	} else if (tl > t->level) {
		/* Coming back needs every probe's word. */
		if (known && (to = better_level(t, now_ms)) != t->level)
			move(t, to, target, now_ms, notes);
		else if (known)
			held(t, 1, target, now_ms, notes);
	} else {
		unheld(t, now_ms, notes);
		snprintf(t->reason, sizeof(t->reason), "%s", target->reason);
	}
	if (pv != NULL && t->level <= 0 && t->guard != GUARD_LATCHED)
		guard_while_out(t, pv, target, now_ms, notes);
	ramp_advance(t, now_ms, notes);
	transition_current(t, out);
	return target_changed || t->level != was_level ||
	    (t->ramping ? t->ramp_weight : 0) != was_ramp ||
	    t->damping != was_damping;
}

/* --- persistence --- */

static json_int_t
age_of(int64_t start, int64_t now_ms)
{
	int64_t	age = now_ms - start;

	return age < 0 ? 0 : age > AGE_MAX_MS ? AGE_MAX_MS : age;
}

/* An age from the file: a number, clamped to [0, AGE_MAX_MS]. */
static int
age_from(const json_t *v, int64_t *age)
{
	json_int_t	a;

	if (!json_is_integer(v))
		return -1;
	a = json_integer_value(v);
	*age = a < 0 ? 0 : a > AGE_MAX_MS ? AGE_MAX_MS : a;
	return 0;
}

json_t *
transition_to_json(const struct transition *t, int64_t now_ms)
{
	json_t	*o, *runs, *outs, *ramp = json_null();
	int	 level;
	size_t	 i;

	if ((runs = json_array()) == NULL || (outs = json_array()) == NULL) {
		json_decref(runs);
		return NULL;
	}
	/* Runs as steps: a level and the run start of it and of the levels
	 * above, up to the next step. */
	for (level = LEVEL_DOWN; level <= LEVEL_MAX; level++) {
		int64_t s = t->ge_ms[IDX(level)];

		if (level > LEVEL_DOWN && s == t->ge_ms[IDX(level - 1)])
			continue;
		json_array_append_new(runs, json_pack("[i, o]", level,
		    s == NO_RUN ? json_null() : json_integer(age_of(s, now_ms))));
	}
	for (i = 0; i < t->nouts; i++)
		json_array_append_new(outs, json_integer(age_of(t->outs_ms[i],
		    now_ms)));
	if (t->ramping)
		ramp = json_pack("{s:I, s:i}", "age_ms", age_of(t->ramp_ms,
		    now_ms), "weight", (int)t->ramp_weight);
	o = json_pack("{s:i, s:I, s:s, s:o, s:o, s:o, s:i}", "level", t->level,
	    "since_age_ms", age_of(t->since_ms, now_ms), "reason", t->reason,
	    "passing_runs", runs, "ramp", ramp, "outs_age_ms", outs,
	    "damping", (int)t->damping);
	return o;
}

/* Steps rise from -1; each holds from its level up to the next one. */
static int
runs_from_json(int64_t ge[LEVEL_COUNT], const json_t *runs, int64_t now_ms,
    int64_t credit_ms, const char **why)
{
	const json_t	*step;
	size_t		 i;
	int		 l, prev = LEVEL_DOWN - 1;
	int64_t		 start, age;
	json_int_t	 jl;
	json_t		*a;

	if (!json_is_array(runs) || json_array_size(runs) == 0) {
		*why = "passing_runs is not a non-empty array";
		return -1;
	}
	json_array_foreach(runs, i, step) {
		if (json_unpack((json_t *)step, "[I, o]", &jl, &a) != 0 ||
		    jl <= prev || jl > LEVEL_MAX ||
		    (i == 0 && jl != LEVEL_DOWN)) {
			*why = "passing_runs: steps must be [level, age] in rising "
			    "order from -1";
			return -1;
		}
		if (json_is_null(a))
			start = NO_RUN;
		else if (age_from(a, &age) == -1) {
			*why = "passing_runs: an age is not a number";
			return -1;
		} else
			start = now_ms - age - credit_ms;
		prev = (int)jl;
		for (l = prev; l <= LEVEL_MAX; l++)
			ge[IDX(l)] = start;
	}
	return 0;
}

int
transition_from_json(struct transition *t, const json_t *o, int64_t now_ms,
    int64_t gap_ms, bool same_boot, const char **why)
{
	struct transition	 n = *t;
	json_t			*runs, *ramp, *outs, *v;
	json_int_t		 level, damping;
	const char		*reason;
	int64_t			 age;
	size_t			 i;

	if (gap_ms < 0)
		gap_ms = 0;
	if (gap_ms > AGE_MAX_MS)
		gap_ms = AGE_MAX_MS;
	if (json_unpack((json_t *)o, "{s:I, s:o, s:s, s:o, s:o, s:o, s:I}",
	    "level", &level, "since_age_ms", &v, "reason", &reason,
	    "passing_runs", &runs, "ramp", &ramp, "outs_age_ms", &outs,
	    "damping", &damping) != 0) {
		*why = "transition lacks level, since_age_ms, reason, "
		    "passing_runs, ramp, outs_age_ms or damping";
		return -1;
	}
	if (level < LEVEL_DOWN || level > LEVEL_MAX) {
		*why = "transition level out of range";
		return -1;
	}
	if (damping < 1 || damping > TRANSITION_DAMPING_MAX) {
		*why = "damping out of range";
		return -1;
	}
	if (age_from(v, &age) == -1) {
		*why = "since_age_ms is not a number";
		return -1;
	}
	n.level = (int)level;
	n.since_ms = now_ms - age - gap_ms;
	n.damping = (unsigned)damping;
	text_reason(n.reason, reason, strlen(reason));
	transition_restart_counts(&n);
	if (runs_from_json(n.ge_ms, runs, now_ms, same_boot ? gap_ms : 0,
	    why) == -1)
		return -1;
	n.ramping = false;
	if (!json_is_null(ramp)) {
		json_int_t w;

		if (json_unpack(ramp, "{s:o, s:I}", "age_ms", &v, "weight",
		    &w) != 0 || age_from(v, &age) == -1 || w < 0 ||
		    w > LEVEL_MAX) {
			*why = "ramp lacks age_ms or a weight from 0 to 100";
			return -1;
		}
		/* From the step HAProxy was last told, not further. */
		n.ramping = n.level >= 1;
		n.ramp_ms = now_ms - age;
		n.ramp_weight = (unsigned)w;
		n.ramp_step_ms = now_ms;
	}
	if (!json_is_array(outs)) {
		*why = "outs_age_ms is not an array";
		return -1;
	}
	n.nouts = 0;
	json_array_foreach(outs, i, v) {
		if (age_from(v, &age) == -1) {
			*why = "outs_age_ms holds something not a number";
			return -1;
		}
		push_out(&n, now_ms - age - gap_ms);
	}
	/* Oldest first, whatever order the file had. */
	for (i = 1; i < n.nouts; i++) {
		int64_t x = n.outs_ms[i];
		size_t j = i;

		for (; j > 0 && n.outs_ms[j - 1] > x; j--)
			n.outs_ms[j] = n.outs_ms[j - 1];
		n.outs_ms[j] = x;
	}
	*t = n;
	return 0;
}

/* --- history --- */

void
history_add(struct history *h, int64_t wall_ms, const char *from,
    const char *to, const char *reason)
{
	struct history_entry	*e;

	if (h->count == HISTORY_MAX) {
		h->first = (h->first + 1) % HISTORY_MAX;
		h->count--;
	}
	e = &h->e[(h->first + h->count++) % HISTORY_MAX];
	e->wall_ms = wall_ms;
	text_line(e->from, sizeof(e->from) - 1, from, strlen(from));
	text_line(e->to, sizeof(e->to) - 1, to, strlen(to));
	text_reason(e->reason, reason, strlen(reason));
}

const struct history_entry *
history_get(const struct history *h, size_t i)
{
	return i < h->count ? &h->e[(h->first + i) % HISTORY_MAX] : NULL;
}

json_t *
history_to_json(const struct history *h)
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < h->count; i++) {
		const struct history_entry *e = history_get(h, i);

		json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s}", "at",
		    (json_int_t)e->wall_ms, "from", e->from, "to", e->to,
		    "reason", e->reason));
	}
	return a;
}

int
history_from_json(struct history *h, const json_t *a, const char **why)
{
	struct history	 n;
	const json_t	*o;
	const char	*from, *to, *reason;
	json_int_t	 at;
	size_t		 i;

	memset(&n, 0, sizeof(n));
	if (!json_is_array(a)) {
		*why = "history is not an array";
		return -1;
	}
	json_array_foreach(a, i, o) {
		if (json_unpack((json_t *)o, "{s:I, s:s, s:s, s:s}", "at", &at,
		    "from", &from, "to", &to, "reason", &reason) != 0) {
			*why = "a history entry lacks at, from, to or reason";
			return -1;
		}
		history_add(&n, at, from, to, reason);
	}
	*h = n;
	return 0;
}
