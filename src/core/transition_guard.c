/*
 * The peer guard run inside the transition engine: what each of its steps
 * is told of the engine (struct guard_in), and what it says applied to the
 * engine (struct guard_out: the node back in, its reason, the notes). The
 * guard (guard.c) knows nothing of the engine; this file is the
 * translation. Pure.
 */
#include <stdio.h>
#include <string.h>

#include "transition_impl.h"

_Static_assert(sizeof(((struct transition_note *)0)->text) == GUARD_NOTE_MAX,
    "a guard note passes on whole");

void
guard_view(const struct transition *t, struct guard_view *v)
{
	v->state = t->guard.state;
	v->since_ms = t->guard.since_ms;
	v->reason = t->guard.reason;
	v->out_ms = t->guard.out_ms;
}

int64_t
guard_need_ms(const struct transition *t)
{
	return t->guard.need_ms;
}

/* What the guard is told of t now. */
static void
told(const struct transition *t, const struct peer_view *pv,
    const struct decision *target, int64_t now_ms, struct guard_in *in)
{
	int	tl = transition_level(target);
	char	lb[16];

	in->pv = pv;
	in->level = t->level;
	in->target = tl;
	in->target_reason = target->reason;
	in->now_ms = now_ms;
	in->alone_grace_ms = t->conf->alone_grace_ms;
	in->recheck_after_ms = t->conf->recheck_after_ms;
	in->just_out_ms = t->conf->just_out_ms;
	in->back_level = tl >= 1 ? tl : LEVEL_MAX;
	snprintf(in->back_words, sizeof(in->back_words), "%s",
	    transition_level_text(in->back_level, lb));
	snprintf(in->level_words, sizeof(in->level_words), "%s",
	    transition_level_text(t->level, lb));
}

/* What the guard said, done to t. */
static void
heard(struct transition *t, const struct guard_in *in,
    const struct guard_out *out, struct transition_notes *notes)
{
	size_t	i;

	if (out->back) {
		t->level = in->back_level;
		t->since_ms = in->now_ms;
		t->pending = 0;
		t->ramping = false;
	}
	if (out->reason)
		snprintf(t->reason, sizeof(t->reason), "%s", t->guard.reason);
	for (i = 0; i < out->nnotes; i++)
		transition_note(notes, out->notes[i].warning, "%s",
		    out->notes[i].text);
}

bool
transition_guard(struct transition *t, enum transition_guard_step step,
    const struct peer_view *pv, const struct decision *target,
    int64_t now_ms, struct transition_notes *notes)
{
	struct guard_in		in;
	struct guard_out	out;
	bool			ok = true;

	told(t, pv, target, now_ms, &in);
	memset(&out, 0, sizeof(out));
	switch (step) {
	case TRANSITION_GUARD_BEGIN:
		guard_begin(&t->guard, &in, &out);
		break;
	case TRANSITION_GUARD_EPISODE:
		guard_episode(&t->guard, &in, &out);
		break;
	case TRANSITION_GUARD_LETS_OUT:
		ok = guard_lets_out(&t->guard, &in, &out);
		break;
	case TRANSITION_GUARD_GOING_OUT:
		guard_going_out(&t->guard, &in, &out);
		break;
	case TRANSITION_GUARD_WHILE_OUT:
		guard_while_out(&t->guard, &in, &out);
		break;
	}
	heard(t, &in, &out, notes);
	return ok;
}
