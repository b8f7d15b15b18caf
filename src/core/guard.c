/*
 * The peer guard: before going out by the rules, a fresh round must show
 * another node serving; out, a node alone comes back (latched when it was
 * right after going out). It is told the engine's levels and says what to
 * do with them (guard.h); the transition engine runs it. Pure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/guard.h"
#include "lbagent/core/units.h"

#define NO_RUN		INT64_MIN

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
guard_init(struct guard *g, int64_t now_ms)
{
	memset(g, 0, sizeof(*g));
	g->state = GUARD_OFF;
	g->since_ms = now_ms;
	g->want_ms = g->out_ms = g->need_ms = NO_RUN;
}

void
guard_forget_out(struct guard *g)
{
	g->out_ms = NO_RUN;
}

/* Adds a line to what the engine logs; past GUARD_NOTES_MAX, none. */
static void __attribute__((format(printf, 3, 4)))
guard_note(struct guard_out *out, bool warning, const char *fmt, ...)
{
	struct guard_note	*n;
	va_list			 ap;

	if (out->nnotes == GUARD_NOTES_MAX)
		return;
	n = &out->notes[out->nnotes++];
	n->warning = warning;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

static void
guard_set(struct guard *g, enum guard_state s, int64_t now_ms)
{
	if (g->state != s)
		g->since_ms = now_ms;
	g->state = s;
}

void
guard_begin(struct guard *g, const struct guard_in *in, struct guard_out *out)
{
	memset(out, 0, sizeof(*out));
	g->need_ms = NO_RUN;
	if (in->pv == NULL)
		guard_set(g, GUARD_OFF, in->now_ms);
	else if (g->state == GUARD_OFF)
		guard_set(g, GUARD_WATCHING, in->now_ms);
}

void
guard_episode(struct guard *g, const struct guard_in *in,
    struct guard_out *out)
{
	memset(out, 0, sizeof(*out));
	if (in->target < 1 && in->level >= 1)
		return;		/* the rules still want out */
	g->want_ms = NO_RUN;
	g->warned = false;
	if (in->level >= 1 && (g->state == GUARD_ASKING ||
	    g->state == GUARD_HOLDING ||
	    g->state == GUARD_BACK_ALONE)) {
		guard_set(g, GUARD_WATCHING, in->now_ms);
		guard_note(out, false, "peer-guard: the rules no longer "
		    "want this node out; nothing held");
	}
	g->reason[0] = '\0';
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
guard_reason(struct guard *g, struct guard_out *out, const char *head,
    const char *names, const char *tail)
{
	size_t	room = REASON_MAX - strlen(head) - strlen(tail);

	snprintf(g->reason, sizeof(g->reason), "%s%.*s%s", head,
	    (int)room, names, tail);
	out->reason = true;
}

#define LATCHED_HEAD	"peer-guard: latched until restart; "

/*
 * Going out by the rules is due: may it? It needs a round started since
 * it became due, and that round must show another node serving. Else
 * the node stays in (logged once per episode) or, latched, always.
 */
bool
guard_lets_out(struct guard *g, const struct guard_in *in,
    struct guard_out *out)
{
	const struct peer_view	*pv = in->pv;
	char			 names[REASON_MAX + 1];

	memset(out, 0, sizeof(*out));
	failing_names(in->target_reason, names, sizeof(names));
	if (g->state == GUARD_LATCHED) {
		guard_reason(g, out, LATCHED_HEAD, names, " failing");
		if (!g->warned)
			guard_note(out, true, "peer-guard: staying in: "
			    "%s failing, but latched since coming back right "
			    "after going out: no automated going out until "
			    "lbagent restarts", names);
		g->warned = true;
		return false;
	}
	if (g->want_ms == NO_RUN)
		g->want_ms = in->now_ms;
	if (pv->round_ms == NO_RUN || pv->round_ms < g->want_ms) {
		/* Ask now; stay as we are until the answer. */
		g->need_ms = g->want_ms;
		if (g->state == GUARD_WATCHING)
			guard_set(g, GUARD_ASKING, in->now_ms);
		return false;
	}
	if (pv->other_serving)
		return true;
	/* Back for alone_grace, it keeps saying so until someone serves. */
	if (g->state != GUARD_BACK_ALONE) {
		guard_set(g, GUARD_HOLDING, in->now_ms);
		guard_reason(g, out, "peer-guard: ", names, " failing but no "
		    "other node serving");
	} else
		out->reason = true;
	if (!g->warned)
		guard_note(out, true, "peer-guard: staying in although "
		    "failing (%s): no other node serving (%s)",
		    in->target_reason, pv->why);
	g->warned = true;
	return false;
}

void
guard_going_out(struct guard *g, const struct guard_in *in,
    struct guard_out *out)
{
	memset(out, 0, sizeof(*out));
	guard_note(out, false, "peer-guard: going out: serving: %s",
	    in->pv->who);
	guard_set(g, GUARD_WATCHING, in->now_ms);
	g->out_ms = in->now_ms;
	g->want_ms = NO_RUN;
}

/* Out by the rules: back in at once, at the rules' weight or 100%. */
static void
guard_back(struct guard *g, const struct guard_in *in, bool latch,
    struct guard_out *out)
{
	const struct peer_view	*pv = in->pv;
	char			 names[REASON_MAX + 1], ga[32], a[32];
	char			 head[80];

	failing_names(in->target_reason, names, sizeof(names));
	out->back = true;
	g->out_ms = g->want_ms = NO_RUN;
	g->warned = true;		/* this note is the episode's */
	units_format_age((uint64_t)(in->now_ms - pv->served_ms), a, sizeof(a));
	units_format_ms(in->alone_grace_ms, ga, sizeof(ga));
	if (latch) {
		guard_set(g, GUARD_LATCHED, in->now_ms);
		guard_reason(g, out, LATCHED_HEAD, names, " failing");
		guard_note(out, true, "peer-guard: %s (was %s) right "
		    "after going out: no other node serving (%s); latched: no "
		    "automated going out until lbagent restarts",
		    in->back_words, in->level_words, pv->why);
	} else {
		guard_set(g, GUARD_BACK_ALONE, in->now_ms);
		snprintf(head, sizeof(head), "peer-guard: no other node served "
		    "for %s; ", a);
		guard_reason(g, out, head, names, " failing");
		guard_note(out, true, "peer-guard: %s (was %s) although "
		    "%s failing: no other node has served for %s (alone_grace "
		    "%s; %s)", in->back_words, in->level_words, names, a, ga,
		    pv->why);
	}
}

/*
 * Out by the rules: look again from recheck_after to just_out after
 * going out (a round on every evaluation), and keep asking whether
 * anyone else serves.
 */
void
guard_while_out(struct guard *g, const struct guard_in *in,
    struct guard_out *out)
{
	const struct peer_view	*pv = in->pv;
	int64_t			 now_ms = in->now_ms, look;

	memset(out, 0, sizeof(*out));
	if (pv == NULL || in->level > 0 || g->state == GUARD_LATCHED)
		return;
	if (g->out_ms != NO_RUN &&
	    now_ms - g->out_ms <= (int64_t)in->just_out_ms) {
		look = g->out_ms + (int64_t)in->recheck_after_ms;
		if (now_ms >= look) {
			if (pv->round_ms != NO_RUN && pv->round_ms >= look &&
			    !pv->other_serving) {
				guard_back(g, in, true, out);
				return;
			}
			g->need_ms = now_ms;
		}
	}
	if (!pv->other_serving && pv->served_ms != NO_RUN &&
	    now_ms - pv->served_ms >= (int64_t)in->alone_grace_ms)
		guard_back(g, in, false, out);
}
