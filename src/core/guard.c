/*
 * The peer guard, a room of the transition engine: before going out by
 * the rules, a fresh round must show another node serving; out, a node
 * alone comes back (latched when it was right after going out). Pure.
 */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "transition_impl.h"

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

void
guard_view(const struct transition *t, struct guard_view *v)
{
	v->state = t->guard.state;
	v->since_ms = t->guard.since_ms;
	v->reason = t->guard.reason;
}

int64_t
guard_need_ms(const struct transition *t)
{
	return t->guard.need_ms;
}

static void
guard_set(struct transition *t, enum guard_state g, int64_t now_ms)
{
	if (t->guard.state != g)
		t->guard.since_ms = now_ms;
	t->guard.state = g;
}

void
guard_begin(struct transition *t, const struct peer_view *pv, int64_t now_ms)
{
	t->guard.need_ms = NO_RUN;
	if (pv == NULL)
		guard_set(t, GUARD_OFF, now_ms);
	else if (t->guard.state == GUARD_OFF)
		guard_set(t, GUARD_WATCHING, now_ms);
}

void
guard_episode(struct transition *t, int tl, int64_t now_ms,
    struct transition_notes *notes)
{
	if (tl < 1 && t->level >= 1)
		return;		/* the rules still want out */
	t->guard.want_ms = NO_RUN;
	t->guard.warned = false;
	if (t->level >= 1 && (t->guard.state == GUARD_ASKING ||
	    t->guard.state == GUARD_HOLDING ||
	    t->guard.state == GUARD_BACK_ALONE)) {
		guard_set(t, GUARD_WATCHING, now_ms);
		transition_note(notes, false, "peer-guard: the rules no longer "
		    "want this node out; nothing held");
	}
	t->guard.reason[0] = '\0';
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

	snprintf(t->guard.reason, sizeof(t->guard.reason), "%s%.*s%s", head,
	    (int)room, names, tail);
	snprintf(t->reason, sizeof(t->reason), "%s", t->guard.reason);
}

#define LATCHED_HEAD	"peer-guard: latched until restart; "

/*
 * Going out by the rules is due: may it? It needs a round started since
 * it became due, and that round must show another node serving. Else
 * the node stays in (logged once per episode) or, latched, always.
 */
bool
guard_lets_out(struct transition *t, const struct peer_view *pv,
    const struct decision *target, int64_t now_ms,
    struct transition_notes *notes)
{
	char	names[REASON_MAX + 1];

	failing_names(target->reason, names, sizeof(names));
	if (t->guard.state == GUARD_LATCHED) {
		guard_reason(t, LATCHED_HEAD, names, " failing");
		if (!t->guard.warned)
			transition_note(notes, true, "peer-guard: staying in: "
			    "%s failing, but latched since coming back right "
			    "after going out: no automated going out until "
			    "lbagent restarts", names);
		t->guard.warned = true;
		return false;
	}
	if (t->guard.want_ms == NO_RUN)
		t->guard.want_ms = now_ms;
	if (pv->round_ms == NO_RUN || pv->round_ms < t->guard.want_ms) {
		/* Ask now; stay as we are until the answer. */
		t->guard.need_ms = t->guard.want_ms;
		if (t->guard.state == GUARD_WATCHING)
			guard_set(t, GUARD_ASKING, now_ms);
		return false;
	}
	if (pv->other_serving)
		return true;
	/* Back for alone_grace, it keeps saying so until someone serves. */
	if (t->guard.state != GUARD_BACK_ALONE) {
		guard_set(t, GUARD_HOLDING, now_ms);
		guard_reason(t, "peer-guard: ", names, " failing but no other "
		    "node serving");
	} else
		snprintf(t->reason, sizeof(t->reason), "%s", t->guard.reason);
	if (!t->guard.warned)
		transition_note(notes, true, "peer-guard: staying in although "
		    "failing (%s): no other node serving (%s)", target->reason,
		    pv->why);
	t->guard.warned = true;
	return false;
}

void
guard_going_out(struct transition *t, const struct peer_view *pv,
    int64_t now_ms, struct transition_notes *notes)
{
	transition_note(notes, false, "peer-guard: going out: serving: %s",
	    pv->who);
	guard_set(t, GUARD_WATCHING, now_ms);
	t->guard.out_ms = now_ms;
	t->guard.want_ms = NO_RUN;
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
	t->guard.out_ms = t->guard.want_ms = NO_RUN;
	t->guard.warned = true;		/* this note is the episode's */
	units_format_age((uint64_t)(now_ms - pv->served_ms), a, sizeof(a));
	units_format_ms(c->alone_grace_ms, g, sizeof(g));
	if (latch) {
		guard_set(t, GUARD_LATCHED, now_ms);
		guard_reason(t, LATCHED_HEAD, names, " failing");
		transition_note(notes, true, "peer-guard: %s (was %s) right "
		    "after going out: no other node serving (%s); latched: no "
		    "automated going out until lbagent restarts",
		    transition_level_text(t->level, lb),
		    transition_level_text(from, fb), pv->why);
	} else {
		guard_set(t, GUARD_BACK_ALONE, now_ms);
		snprintf(head, sizeof(head), "peer-guard: no other node served "
		    "for %s; ", a);
		guard_reason(t, head, names, " failing");
		transition_note(notes, true, "peer-guard: %s (was %s) although "
		    "%s failing: no other node has served for %s (alone_grace "
		    "%s; %s)",
		    transition_level_text(t->level, lb),
		    transition_level_text(from, fb), names, a, g, pv->why);
	}
}

/*
 * Out by the rules: look again from recheck_after to just_out after
 * going out (a round on every evaluation), and keep asking whether
 * anyone else serves.
 */
void
guard_while_out(struct transition *t, const struct peer_view *pv,
    const struct decision *target, int64_t now_ms,
    struct transition_notes *notes)
{
	const struct transition_conf	*c = t->conf;
	int64_t				 look;

	if (pv == NULL || t->level > 0 || t->guard.state == GUARD_LATCHED)
		return;
	if (t->guard.out_ms != NO_RUN &&
	    now_ms - t->guard.out_ms <= (int64_t)c->just_out_ms) {
		look = t->guard.out_ms + (int64_t)c->recheck_after_ms;
		if (now_ms >= look) {
			if (pv->round_ms != NO_RUN && pv->round_ms >= look &&
			    !pv->other_serving) {
				guard_back(t, pv, target, true, now_ms, notes);
				return;
			}
			t->guard.need_ms = now_ms;
		}
	}
	if (!pv->other_serving && pv->served_ms != NO_RUN &&
	    now_ms - pv->served_ms >= (int64_t)c->alone_grace_ms)
		guard_back(t, pv, target, false, now_ms, notes);
}
