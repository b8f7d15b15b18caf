/*
 * Safe transitions: hysteresis, recovery ramp, flap damping, and one
 * evaluation with the peer guard's steps (run by transition_guard.c) in
 * it. The state file's part is in transition_json.c. Pure.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/name.h"
#include "lbagent/core/rules.h"
#include "lbagent/core/units.h"
#include "transition_impl.h"

#define RESUMED_NAMES_MAX	(REASON_MAX / 3)	/* "a: " each at least */

void
transition_note(struct transition_notes *notes, bool warning,
    const char *fmt, ...)
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

bool
transition_hold(struct transition *t, const struct decision *held,
    int64_t now_ms)
{
	struct decision	cur;
	int		hl = transition_level(held);

	transition_current(t, &cur);
	if (transition_level(&cur) >= hl)
		return false;
	t->level = hl;
	t->since_ms = now_ms;
	t->ramping = false;
	t->pending = 0;
	if (hl >= 1)
		guard_forget_out(&t->guard);
	snprintf(t->reason, sizeof(t->reason), "%s", held->reason);
	return true;
}

static void
init(struct transition *t, const struct transition_conf *conf, int64_t now_ms)
{
	memset(t, 0, sizeof(*t));
	t->conf = conf;
	t->level = LEVEL_MAX;
	t->since_ms = now_ms;
	t->damping = 1;
	t->last_target = INT_MIN;
	guard_init(&t->guard, now_ms);
	transition_restart_counts(t);
}

struct transition *
transition_new(const struct transition_conf *conf, int64_t now_ms)
{
	struct transition	*t;

	if ((t = malloc(sizeof(*t))) != NULL)
		init(t, conf, now_ms);
	return t;
}

void
transition_free(struct transition *t)
{
	free(t);
}

void
transition_reset(struct transition *t, int64_t now_ms)
{
	init(t, t->conf, now_ms);
}

void
transition_carry(struct transition *to, const struct transition *from)
{
	const struct transition_conf	*conf = to->conf;

	*to = *from;
	to->conf = conf;
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
	    (t->guard.state == GUARD_LATCHED || (p->for_ms >= p->after_ms &&
	    t->guard.state >= GUARD_ASKING))) {
		snprintf(buf, size, "failing for %s; %s", f,
		    t->guard.state == GUARD_ASKING ? "asking the other nodes "
		    "before going out" : t->guard.state == GUARD_LATCHED ?
		    "held in by the "
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

void
transition_push_out(struct transition *t, int64_t ms)
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
	transition_push_out(t, now_ms);
	if (c->flap_limit == 0)
		return;
	units_format_ms(c->flap_window_ms, w, sizeof(w));
	if (t->damping > 1) {
		t->damping = t->damping * 2 > TRANSITION_DAMPING_MAX ?
		    TRANSITION_DAMPING_MAX : t->damping * 2;
		units_format_ms(transition_up_after_ms(t), u, sizeof(u));
		transition_note(notes, true, "flap damping: out again within "
		    "%s of the last time; coming back now takes %s (up_after "
		    "x%u)", w, u, t->damping);
	} else if (t->nouts >= c->flap_limit) {
		t->damping = 2;
		units_format_ms(transition_up_after_ms(t), u, sizeof(u));
		transition_note(notes, true, "flap damping: out %zu times "
		    "within %s; coming back now takes %s (up_after x2) until "
		    "%s pass without going out", t->nouts, w, u, w);
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
			transition_note(notes, true, "down: failing on every "
			    "evaluation for %s%s", d, paren(target->reason, p));
		else
			transition_note(notes, true, "%s (was %s): at %d%% or "
			    "worse on every evaluation for %s%s", lt, ft, level,
			    d, paren(target->reason, p));
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
		transition_note(notes, true, "%s (was %s): at %d%% or better "
		    "on every evaluation for %s; recovering from %s over %s",
		    lt, ft, level, d, rs, rd);
	} else
		transition_note(notes, true, "%s (was %s): at %d%% or better "
		    "on every evaluation for %s%s", lt, ft, level, d,
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
	transition_note(notes, true, "target %s%s: staying %s until it holds "
	    "for %s (%s%s)%s", transition_level_text(tl, lt),
	    paren(target->reason, p),
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
	transition_note(notes, false, "target back to %s after %s; nothing "
	    "changed", transition_level_text(t->level, ct), d);
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
		transition_note(notes, false, "recovered: now %s",
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
	transition_guard(t, TRANSITION_GUARD_BEGIN, pv, target, now_ms, notes);
	if (t->damping > 1 && (t->nouts == 0 || now_ms -
	    t->outs_ms[t->nouts - 1] >= (int64_t)t->conf->flap_window_ms)) {
		t->damping = 1;
		units_format_ms(t->conf->flap_window_ms, w, sizeof(w));
		units_format_ms(t->conf->up_after_ms, u, sizeof(u));
		transition_note(notes, false, "flap damping ended: not out for "
		    "%s; coming back takes %s again", w, u);
	}
	t->last_target = tl;
	update_runs(t, tl, known, now_ms);
	transition_guard(t, TRANSITION_GUARD_EPISODE, pv, target, now_ms,
	    notes);
	if (tl < t->level) {
		to = worse_level(t, now_ms);
		if (to != t->level && to <= 0 && t->level >= 1 && pv != NULL &&
		    !transition_guard(t, TRANSITION_GUARD_LETS_OUT, pv, target,
		    now_ms, notes))
			;	/* held in by the peer guard */
		else if (to != t->level) {
			if (to <= 0 && t->level >= 1 && pv != NULL)
				transition_guard(t, TRANSITION_GUARD_GOING_OUT,
				    pv, target, now_ms, notes);
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
	transition_guard(t, TRANSITION_GUARD_WHILE_OUT, pv, target, now_ms,
	    notes);
	ramp_advance(t, now_ms, notes);
	transition_current(t, out);
	return target_changed || t->level != was_level ||
	    (t->ramping ? t->ramp_weight : 0) != was_ramp ||
	    t->damping != was_damping;
}

/*
 * The probes a reason of the rules names: each item ("dep: HTTP 503",
 * items joined by "; ") starts with a probe's name and ": ". Text that
 * does not read so names nothing.
 */
static size_t
reason_names(const char *reason, char names[][CONFIG_NAME_MAX + 1],
    size_t max)
{
	const char	*item = reason, *colon, *next;
	size_t		 n = 0, len;

	while (item != NULL && *item != '\0' && n < max) {
		next = strstr(item, "; ");
		colon = strstr(item, ": ");
		if (colon != NULL && (next == NULL || colon < next) &&
		    (len = (size_t)(colon - item)) <= CONFIG_NAME_MAX) {
			memcpy(names[n], item, len);
			names[n][len] = '\0';
			if (name_valid(names[n]))
				n++;
		}
		item = next != NULL ? next + 2 : NULL;
	}
	return n;
}

/* Appends s to buf (of REASON_MAX + 1) while it fits. */
static void
append(char *buf, size_t *len, const char *s)
{
	size_t	n = strlen(s);

	if (*len + n > REASON_MAX)
		n = REASON_MAX - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

/* " and 3 more", or "" for none. */
static void
and_more(char *buf, size_t size, size_t more)
{
	if (more > 0)
		snprintf(buf, size, " and %zu more", more);
	else
		buf[0] = '\0';
}

/*
 * "held from before the restart: a, b (probes removed); up after 60s of
 * passing" within REASON_MAX: as many names as fit, then "and N more";
 * without the time when even one name leaves no room for it.
 */
static void
resumed_reason(const struct transition *t, char names[][CONFIG_NAME_MAX + 1],
    size_t n, char buf[REASON_MAX + 1])
{
	static const char	 head[] = "held from before the restart: ";
	const char		*what = n > 1 ? " (probes removed)" :
				    " (probe removed)";
	char			 more[32], tail[64], u[32];
	size_t			 shown, i, len, need;

	units_format_ms(transition_up_after_ms(t), u, sizeof(u));
	snprintf(tail, sizeof(tail), "; %s after %s of passing",
	    t->level <= LEVEL_DOWN ? "up" : "back", u);
	for (shown = n; shown > 1; shown--) {
		for (i = 0, need = 0; i < shown; i++)
			need += (i ? 2 : 0) + strlen(names[i]);
		and_more(more, sizeof(more), n - shown);
		if (sizeof(head) - 1 + need + strlen(more) + strlen(what) +
		    strlen(tail) <= REASON_MAX)
			break;
	}
	and_more(more, sizeof(more), n - shown);
	/* One long name leaves no room for the time: the status has it. */
	if (sizeof(head) - 1 + strlen(names[0]) + strlen(more) + strlen(what) +
	    strlen(tail) > REASON_MAX)
		tail[0] = '\0';
	len = 0;
	buf[0] = '\0';
	append(buf, &len, head);
	for (i = 0; i < shown; i++) {
		if (i > 0)
			append(buf, &len, ", ");
		append(buf, &len, names[i]);
	}
	append(buf, &len, more);
	append(buf, &len, what);
	append(buf, &len, tail);
}

bool
transition_resumed(struct transition *t, const struct rules_input *in,
    size_t nin, struct transition_notes *notes)
{
	char	names[RESUMED_NAMES_MAX][CONFIG_NAME_MAX + 1];
	char	was[REASON_MAX + 1], lb[16], u[32];
	size_t	n, i, j, gone = 0;

	if (!t->resumed)
		return false;
	t->resumed = false;
	/* Out is held by the rules' reason; a weight may be the guard's. */
	if (t->level > 0)
		return false;
	n = reason_names(t->reason, names, RESUMED_NAMES_MAX);
	for (i = 0; i < n; i++) {
		for (j = 0; j < nin; j++)
			if (strcmp(names[i], in[j].name) == 0)
				break;
		if (j == nin)
			memmove(names[gone++], names[i], sizeof(names[i]));
	}
	if (gone == 0)
		return false;
	snprintf(was, sizeof(was), "%s", t->reason);
	resumed_reason(t, names, gone, t->reason);
	units_format_ms(transition_up_after_ms(t), u, sizeof(u));
	transition_note(notes, true, "%s as before the restart (%s), but %s "
	    "no longer in the configuration: staying %s until the rules pass "
	    "for %s (up_after)", transition_level_text(t->level, lb), was,
	    gone > 1 ? "those probes are" : "that probe is",
	    transition_level_text(t->level, lb), u);
	return true;
}

/* --- accessors --- */

const struct transition_conf *
transition_conf(const struct transition *t)
{
	return t->conf;
}

int
transition_at(const struct transition *t)
{
	return t->level;
}

int64_t
transition_since_ms(const struct transition *t)
{
	return t->since_ms;
}

const char *
transition_reason(const struct transition *t)
{
	return t->reason;
}

bool
transition_ramp(const struct transition *t, int64_t *start_ms)
{
	*start_ms = t->ramp_ms;
	return t->ramping;
}

unsigned
transition_damping(const struct transition *t)
{
	return t->damping;
}

size_t
transition_nouts(const struct transition *t)
{
	return t->nouts;
}

int64_t
transition_out_ms(const struct transition *t, size_t i)
{
	return i < t->nouts ? t->outs_ms[i] : NO_RUN;
}

int64_t
transition_passing_since_ms(const struct transition *t, int level)
{
	if (level < LEVEL_DOWN)
		level = LEVEL_DOWN;
	if (level > LEVEL_MAX)
		level = LEVEL_MAX;
	return t->ge_ms[IDX(level)];
}
