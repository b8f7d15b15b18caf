/*
 * A service's pipeline: rules, transitions or the kill switch, markers,
 * then the lines and the claims. Pure: every time comes in, every log
 * line goes out as a note (service.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbagent/core/rules.h"
#include "lbagent/core/service.h"
#include "lbagent/core/units.h"

static void	note(struct service_effects *, bool, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static void
note(struct service_effects *fx, bool warning, const char *fmt, ...)
{
	struct service_note	*n;
	va_list			 ap;

	if (fx->nnotes == SERVICE_NOTES_MAX)
		return;
	n = &fx->notes[fx->nnotes++];
	n->warning = warning;
	n->debug = false;
	va_start(ap, fmt);
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
	va_end(ap);
}

/* "" for the default service, "service web: " for the others. */
static const char *
prefix(const struct service *s, char buf[96])
{
	if (s->name[0] == '\0')
		buf[0] = '\0';
	else
		snprintf(buf, 96, "service %s: ", s->name);
	return buf;
}

const char *
service_line(const struct service *s, char buf[REPLY_MAX])
{
	size_t	n = strcspn(s->lines[0], "\n");

	memcpy(buf, s->lines[0], n);
	buf[n] = '\0';
	return buf;
}

int
service_init(struct service *s, const char *name, const char *state_dir,
    const struct transition_conf *tc, bool reasons, uint64_t forget_after_ms,
    int64_t now_ms)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->reasons = reasons;
	s->marker_out_ms = INT64_MIN;
	if ((s->tr = transition_new(tc, now_ms)) == NULL)
		return -1;
	if ((s->keys = lbkeys_new((int64_t)forget_after_ms)) == NULL)
		return -1;
	if ((s->would_keys = lbkeys_new((int64_t)forget_after_ms)) == NULL)
		return -1;
	if (name[0] != '\0' && asprintf(&s->marker_dir, "%s/%s", state_dir,
	    name) == -1) {
		s->marker_dir = NULL;
		return -1;
	}
	return 0;
}

void
service_free(struct service *s)
{
	lbkeys_free(s->keys);
	s->keys = NULL;
	lbkeys_free(s->would_keys);
	s->would_keys = NULL;
	transition_free(s->tr);
	s->tr = NULL;
	free(s->marker_dir);
	s->marker_dir = NULL;
}

static void
compose(struct service *s, const struct decision *d)
{
	unsigned	mask;

	for (mask = 0; mask <= CLAIM_ALL; mask++)
		s->lens[mask] = d->shadow ? reply_compose_shadow(d, mask,
		    s->would_lines[0], s->lines[mask]) : reply_compose(d, mask,
		    s->reasons, s->lines[mask]);
}

/* The line automation would send to a check owed nothing, no newline. */
static const char *
would_line(const struct service *s, char buf[REPLY_MAX])
{
	size_t	n = strcspn(s->would_lines[0], "\n");

	memcpy(buf, s->would_lines[0], n);
	buf[n] = '\0';
	return buf;
}

/*
 * Shadow mode: w is what automation would make the decision. Its lines
 * and would-be claims follow it, and a change is logged at warning as a
 * real one would be. True when its line changed (the real lines, which
 * quote it, must be composed again).
 */
static bool
set_would(struct service *s, const struct decision *w,
    struct service_effects *fx)
{
	char		was[REPLY_MAX], now[REPLY_MAX], p[96];
	unsigned	mask;
	bool		had = s->has_would;

	if (had && decision_equal(&s->would, w))
		return false;
	if (had)
		would_line(s, was);
	for (mask = 0; mask <= CLAIM_ALL; mask++)
		reply_compose(w, mask, s->reasons, s->would_lines[mask]);
	would_line(s, now);
	lbkeys_claim(s->would_keys, reply_claims(w));
	s->would = *w;
	s->has_would = true;
	if (!had) {
		note(fx, false, "%sshadow: would reply \"%s\"", prefix(s, p),
		    now);
		return true;
	}
	if (strcmp(was, now) == 0)
		return false;
	note(fx, true, "%sshadow: would reply \"%s\" (was \"%s\")",
	    prefix(s, p), now, was);
	return true;
}

/* Out of shadow mode: nothing would-be is left. */
static void
clear_would(struct service *s)
{
	s->has_would = false;
	memset(s->would_lines, 0, sizeof(s->would_lines));
	lbkeys_reset(s->would_keys);
	lbkeys_claim(s->would_keys, 0);
}

void
service_resume(struct service *s, const struct decision *d,
    int64_t since_wall_ms)
{
	s->has_decision = true;
	s->decision = *d;
	s->since_wall_ms = since_wall_ms;
	/*
	 * The mode it was in: a restart that ends off or shadow mode (a
	 * marker removed meanwhile, LBAGENT_MODE no longer set) is a switch
	 * back to automation like any other (take_over).
	 */
	s->off = d->automation_off && !d->shadow;
	s->shadow = d->automation_off && d->shadow;
	compose(s, d);
}

void
service_resume_held(struct service *s, const struct decision *d,
    int64_t since_ms)
{
	s->has_held = true;
	s->held = *d;
	s->held_since_ms = since_ms;
}

/* Says who a claim's end is owed to, or that nobody saw it. */
static void
release_note(const struct service *s, struct service_effects *fx,
    const char *what, const char *word)
{
	char	p[96];
	size_t	n = lbkeys_owing(s->keys);

	if (n == 0)
		note(fx, true, "%s%s ended; no load balancer saw it, so no %s is "
		    "sent", prefix(s, p), what, word);
	else
		note(fx, true, "%s%s ended: sending %s to the %zu load "
		    "balancer(s) that saw it", prefix(s, p), what, word, n);
}

/* A reason with each run of digits (and a '.' within) as one '#'. */
static void
reason_shape(const char *r, char buf[REASON_MAX + 1])
{
	size_t	n = 0;

	while (*r != '\0' && n < REASON_MAX) {
		if (*r >= '0' && *r <= '9') {
			while ((*r >= '0' && *r <= '9') || (*r == '.' &&
			    r[1] >= '0' && r[1] <= '9'))
				r++;
			buf[n++] = '#';
		} else
			buf[n++] = *r++;
	}
	buf[n] = '\0';
}

/*
 * The log's line for a reply that changed from s->decision to d: a ramp
 * step at debug level; a change of a number in the reason only (same
 * state, weight and shape of reason) at warning once per
 * SERVICE_NUMBER_LOG_MS and shape (counted from the change in kind that
 * brought the shape), else at debug; any other at warning.
 */
static void
note_change(struct service *s, const struct decision *d,
    const struct service_input *in, struct service_effects *fx,
    const char *was, const char *now)
{
	char		 p[96], shape[REASON_MAX + 1], old[REASON_MAX + 1];
	char		 more[64];
	const char	*start = in->at_start ? " at start-up" : "";
	size_t		 n;
	bool		 quiet = false;

	reason_shape(d->reason, shape);
	reason_shape(s->decision.reason, old);
	more[0] = '\0';
	if (!in->at_start && s->decision.ramping && d->ramping &&
	    s->decision.state == d->state)
		quiet = true;
	else if (!in->at_start && s->decision.state == d->state &&
	    (s->decision.weight == d->weight || (d->capacity_pct != 0 &&
	    s->decision.capacity_pct != 0 && s->decision.health_weight ==
	    d->health_weight)) && s->decision.ramping == d->ramping &&
	    strcmp(shape, old) == 0) {
		if (strcmp(shape, s->number_shape) == 0 &&
		    in->now_ms - s->number_logged_ms < SERVICE_NUMBER_LOG_MS) {
			quiet = true;
			s->number_quiet++;
		} else {
			if (s->number_quiet > 0 &&
			    strcmp(shape, s->number_shape) == 0)
				snprintf(more, sizeof(more), " (and %u more "
				    "like it, at debug level)",
				    s->number_quiet);
			snprintf(s->number_shape, sizeof(s->number_shape),
			    "%s", shape);
			s->number_logged_ms = in->now_ms;
			s->number_quiet = 0;
		}
	} else {
		/* A change in kind starts the minute of its shape. */
		snprintf(s->number_shape, sizeof(s->number_shape), "%s", shape);
		s->number_logged_ms = in->now_ms;
		s->number_quiet = 0;
	}
	n = fx->nnotes;
	note(fx, !quiet, "%sreply changed%s: \"%s\" (was \"%s\")%s",
	    prefix(s, p), start, now, was, more);
	if (fx->nnotes > n)
		fx->notes[n].debug = quiet;
}

/*
 * Makes d the service's decision: new lines, a note, claims settled.
 * False when it was the decision already (nothing done).
 */
static bool
set_decision(struct service *s, const struct decision *d,
    const struct service_input *in, struct service_effects *fx)
{
	char		 was[REPLY_MAX], now[REPLY_MAX], p[96], wb[24], nb[24];
	unsigned	 claims, released, held;
	const char	*what, *from, *to;

	if (s->has_decision && decision_equal(&s->decision, d) && !in->at_start)
		return false;
	/* A transition for the history; a step of a ramp is not one. */
	from = s->has_decision ? decision_words(&s->decision, wb) : "start";
	to = decision_words(d, nb);
	if (strcmp(from, to) != 0 &&
	    !(s->has_decision && s->decision.ramping && d->ramping)) {
		history_add(&s->history, in->wall_ms, from, to,
		    !d->automation_off || d->reason[0] != '\0' ? d->reason :
		    d->shadow ? "lbagent shadow" : "lbagent automation off");
		s->since_wall_ms = in->wall_ms;
		s->transitions[d->automation_off && d->state == NODE_UP ?
		    NODE_STATE_COUNT : d->state]++;
	}
	if (s->since_wall_ms == 0)
		s->since_wall_ms = in->wall_ms;
	if (s->has_decision)
		service_line(s, was);
	compose(s, d);
	service_line(s, now);
	if (!s->has_decision) {
		note(fx, false, "%sreplying \"%s\"", prefix(s, p), now);
		fx->line_changed = true;
	} else if (strcmp(was, now) != 0) {
		note_change(s, d, in, fx, was, now);
		fx->line_changed = true;
	}

	claims = reply_claims(d);
	/*
	 * Off leaves the load balancers as they are: a weight lbagent set is
	 * still held there, so it stays claimed (and a restore word not yet
	 * delivered stays owed) until automation decides again.
	 */
	if (d->automation_off)
		claims |= (lbkeys_claims(s->keys) | lbkeys_owed(s->keys)) &
		    CLAIM_WEIGHT;
	held = lbkeys_claims(s->keys);
	released = held & ~claims;
	lbkeys_claim(s->keys, claims);
	what = s->has_decision ? decision_state_name(s->decision.state) :
	    "claim";
	if (released & CLAIM_ADMIN)
		release_note(s, fx, what, "'ready'");
	if (released & CLAIM_WEIGHT)
		release_note(s, fx, "reduced weight", "'100%'");
	s->decision = *d;
	s->has_decision = true;
	fx->decided = true;
	/*
	 * A claim that starts or ends is on disk before any reply carries its
	 * lines: a restart must know what the load balancers may hold.
	 */
	if (claims != held)
		fx->save_now = true;
	else
		fx->save = true;
	return true;
}

/*
 * Why the service is in mode `mode` (off or shadow): "LBAGENT_MODE=off",
 * ...; NULL: no source says so. The node's marker first, then the
 * service's, the environment, the file (which the environment, when set,
 * replaces).
 */
static const char *
mode_source(const struct service *s, const struct service_input *in,
    enum service_mode mode, char *buf, size_t size)
{
	const struct service_switch	*sw = in->sw;
	enum marker_kind		 k = mode == SERVICE_MODE_OFF ?
					    MARKER_OFF : MARKER_SHADOW;
	const char			*name = marker_name(k);
	bool				 conf = mode == SERVICE_MODE_OFF ?
					    sw->conf_off : sw->conf_shadow;

	if (in->node->m[k].present)
		snprintf(buf, size, "marker %s/%s", sw->state_dir, name);
	else if (s->marker_dir != NULL && in->own != NULL &&
	    in->own->m[k].present)
		snprintf(buf, size, "marker %s/%s", s->marker_dir, name);
	else if (sw->mode_env == (int)mode)
		snprintf(buf, size, "LBAGENT_MODE=%s", name);
	else if (sw->mode_env == -1 && conf)
		snprintf(buf, size, "mode = %s in %s", name, sw->conf_path);
	else
		return NULL;
	return buf;
}

/*
 * The service's mode and why (into buf): off when any source says off,
 * else shadow when any says shadow, else auto.
 */
static enum service_mode
mode_of(const struct service *s, const struct service_input *in, char *buf,
    size_t size)
{
	if (mode_source(s, in, SERVICE_MODE_OFF, buf, size) != NULL)
		return SERVICE_MODE_OFF;
	if (mode_source(s, in, SERVICE_MODE_SHADOW, buf, size) != NULL)
		return SERVICE_MODE_SHADOW;
	return SERVICE_MODE_AUTO;
}

/* A monotonic time as the wall clock's date and time, for people. */
static const char *
wall_text(int64_t ms, const struct service_input *in, char buf[32])
{
	time_t		t = (time_t)((in->wall_ms - (in->now_ms - ms)) / 1000);
	struct tm	tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, 32, "?");
	return buf;
}

/* Switched off: says what the load balancers may still hold from lbagent. */
static void
switched_off(const struct service *s, const char *why,
    const struct service_input *in, struct service_effects *fx)
{
	const struct decision	*d = &s->held;
	char			 p[96], since[32], held[160];

	if (d->state == NODE_DOWN)
		snprintf(held, sizeof(held), "down since %s, held by HAProxy "
		    "until an operator or lbagent says otherwise",
		    wall_text(s->held_since_ms, in, since));
	else if (d->weight < 100)
		snprintf(held, sizeof(held), "weight %u%% since %s, held by "
		    "HAProxy until an operator or lbagent says otherwise",
		    d->weight, wall_text(s->held_since_ms, in, since));
	else
		snprintf(held, sizeof(held), "nothing: lbagent last said up at "
		    "full weight");
	note(fx, true, "%sautomation off (%s): no automated decisions; replies "
	    "say only '# lbagent automation off' and markers still act. The "
	    "load balancers may still hold from lbagent: %s", prefix(s, p), why,
	    held);
}

/*
 * How often the guard's rounds must go on (see peers_pace): its state,
 * the engine's decision (the would-be one in shadow mode) and the
 * markers' d.
 */
static enum pace
rounds_wanted(const struct service *s, const struct decision *d,
    int64_t now_ms)
{
	struct guard_view	g;
	struct decision		cur;
	struct pace_in		in;

	guard_view(s->tr, &g);
	transition_current(s->tr, &cur);
	in.guard = g.state;
	in.out_ms = g.out_ms;
	in.now_ms = now_ms;
	in.just_out_ms = transition_conf(s->tr)->just_out_ms;
	in.in = cur.state == NODE_UP && cur.weight > 0;
	in.marker = d->state == NODE_DRAIN || d->state == NODE_MAINT;
	return pace_of(&in);
}

/*
 * What HAProxy shows of a marker that leaves no other node serving: the
 * marker's reason and that ("patching (no other node serving)"), so that
 * its stats page and logs say it as the agent's log does.
 */
static void
alone_reason(struct decision *d)
{
	const char	*add = d->reason[0] != '\0' ?
			    " (" MARKER_ALONE_WORDS ")" : MARKER_ALONE_WORDS;
	size_t		 n = strlen(d->reason), a = strlen(add);

	/* The words kept whole; a reason too long for both is cut. */
	if (n + a > sizeof(d->reason) - 1)
		n = sizeof(d->reason) - 1 - a;
	memcpy(d->reason + n, add, a + 1);
}

/*
 * A marker takes the node out whatever the peers say; the peer guard
 * only warns, once per marker, when no other node serves (asked after
 * the marker took effect), and the reply says so.
 */
static void
marker_guard(struct service *s, struct decision *d,
    const struct peer_view *pv, int64_t now_ms, struct service_effects *fx)
{
	char		 p[96];
	const char	*kind;

	if (d->state != NODE_MAINT && d->state != NODE_DRAIN) {
		s->marker_out_ms = INT64_MIN;
		s->marker_warned = false;
		s->marker_warning[0] = '\0';
		return;
	}
	kind = d->state == NODE_MAINT ? "maint" : "drain";
	if (s->marker_out_ms == INT64_MIN)
		s->marker_out_ms = now_ms;
	if (pv->round_ms == INT64_MIN || pv->round_ms < s->marker_out_ms) {
		fx->ask_peers = true;
		return;
	}
	if (pv->other_serving) {
		s->marker_warning[0] = '\0';
		s->marker_warned = false;
		return;
	}
	alone_reason(d);
	snprintf(s->marker_warning, sizeof(s->marker_warning), "%s marker "
	    "obeyed, but no other node is serving", kind);
	if (!s->marker_warned)
		note(fx, true, "%speer-guard: %s (%s)", prefix(s, p),
		    s->marker_warning, pv->why);
	s->marker_warned = true;
}

/* HAProxy holds d from lbagent, since now (when it is new). */
static void
set_held(struct service *s, const struct decision *d, int64_t now_ms)
{
	char	a[24], b[24];

	if (!s->has_held || strcmp(decision_words(&s->held, a),
	    decision_words(d, b)) != 0)
		s->held_since_ms = now_ms;
	s->held = *d;
	s->has_held = true;
}

/*
 * Automation takes over (from off or shadow): counting starts now, and an
 * engine that moved worse in shadow goes back to what HAProxy holds.
 */
static void
take_over(struct service *s, const struct service_input *in,
    struct service_effects *fx)
{
	char	p[96], da[32], wb[24];

	/* Like a start: no going out sooner than down_after. */
	transition_hold(s->tr, &s->held, in->now_ms);
	transition_restart_counts(s->tr);
	fx->save_soon = true;
	units_format_ms(transition_conf(s->tr)->down_after_ms, da, sizeof(da));
	if (s->shadow)
		note(fx, true, "%sshadow mode ended: automation on from what "
		    "HAProxy holds (%s); counting starts now (no going out "
		    "within down_after %s)", prefix(s, p),
		    decision_words(&s->held, wb), da);
	else
		note(fx, true, "%sautomation on again: counting starts now (no "
		    "going out within down_after %s)", prefix(s, p), da);
}

/* Into shadow mode from auto: what it means, once. */
static void
switched_shadow(const struct service *s, const char *why,
    struct service_effects *fx)
{
	char	p[96];

	note(fx, true, "%sshadow mode (%s): probes, rules, transitions and the "
	    "guard run, but replies carry no state word, only '# "
	    REPLY_SHADOW_TEXT "...' (markers still act)", prefix(s, p), why);
}

/* Automation off: off's decision; what that means, said once. */
static void
run_off(struct service *s, const struct service_input *in, const char *wb,
    struct service_effects *fx, struct decision *auto_d)
{
	snprintf(s->off_by, sizeof(s->off_by), "%s", wb);
	if (!s->off || in->at_start)
		switched_off(s, wb, in, fx);
	s->off = true;
	if (s->shadow)
		clear_would(s);
	s->shadow = false;
	decision_off(auto_d);
}

/* Into auto or shadow mode (mode), from whatever the service was in. */
static void
switch_on(struct service *s, const struct service_input *in,
    enum service_mode mode, const char *wb, struct service_effects *fx)
{
	if (mode == SERVICE_MODE_SHADOW) {
		snprintf(s->shadow_by, sizeof(s->shadow_by), "%s", wb);
		if (s->off) {
			/* From off: the engine counts from now. */
			transition_restart_counts(s->tr);
			fx->save_soon = true;
		}
		if (!s->shadow || in->at_start) {
			switched_shadow(s, wb, fx);
			/* What HAProxy holds, kept across a restart. */
			fx->save_soon = true;
		}
	} else if (s->off || s->shadow)
		take_over(s, in, fx);
	if (s->shadow && mode != SERVICE_MODE_SHADOW)
		clear_would(s);
	s->off = false;
	s->shadow = mode == SERVICE_MODE_SHADOW;
}

/*
 * The transition engine over the rules' target: its decision in *auto_d,
 * its notes, whether to save and to ask the peers; what HAProxy holds
 * unless in shadow mode.
 */
static void
run_engine(struct service *s, const struct service_input *in,
    const struct decision *target, struct service_effects *fx,
    struct decision *auto_d)
{
	struct transition_notes	 tn;
	char			 p[96];
	const char		*sp = s->shadow ? "shadow: " : "";
	size_t			 i;
	bool			 settled = true;

	for (i = 0; i < in->nprobes; i++)
		settled = settled && in->settled[i];
	/* Held from before a restart by probes no longer there. */
	tn.count = 0;
	if (transition_resumed(s->tr, in->probes, in->nprobes, &tn)) {
		fx->save_soon = true;
		for (i = 0; i < tn.count; i++)
			note(fx, tn.n[i].warning, "%s%s%s", prefix(s, p),
			    sp, tn.n[i].text);
	}
	if (transition_evaluate(s->tr, target, settled, in->peers,
	    in->now_ms, auto_d, &tn))
		fx->save_soon = true;
	if (in->peers != NULL && guard_need_ms(s->tr) != INT64_MIN &&
	    in->peers->round_ms < guard_need_ms(s->tr))
		fx->ask_peers = true;
	for (i = 0; i < tn.count; i++)
		note(fx, tn.n[i].warning, "%s%s%s", prefix(s, p), sp,
		    tn.n[i].text);
	if (!s->shadow)
		set_held(s, auto_d, in->now_ms);
}

/*
 * The rules over the service's probes, the transition engine over the
 * rules (unless automation is off), then its markers over that.
 */
void
service_step(struct service *s, const struct service_input *in,
    struct service_effects *fx)
{
	struct decision		 target, auto_d, d, real;
	char			 wb[SERVICE_OFF_BY_MAX];
	enum service_mode	 mode;
	bool			 would_changed = false;

	memset(fx, 0, offsetof(struct service_effects, notes));
	fx->nnotes = 0;
	rules_evaluate(in->probes, in->nprobes, &target);
	s->target = target;
	/*
	 * At the first step, what HAProxy holds is the engine as loaded,
	 * unless the state file said (service_resume_held).
	 */
	if (!s->has_held) {
		transition_current(s->tr, &d);
		set_held(s, &d, transition_since_ms(s->tr));
	}
	mode = mode_of(s, in, wb, sizeof(wb));
	if (mode == SERVICE_MODE_OFF)
		run_off(s, in, wb, fx, &auto_d);
	else {
		switch_on(s, in, mode, wb, fx);
		run_engine(s, in, &target, fx, &auto_d);
		decision_capacity(&auto_d, in->capacity_pct, in->maxconn);
	}
	if (s->shadow) {
		/* What would be, markers and all; what is, as off. */
		decision_make(in->node, in->own, &auto_d, &d);
		would_changed = set_would(s, &d, fx);
		decision_shadow(&real);
		auto_d = real;
	}
	decision_make(in->node, in->own, &auto_d, &d);
	if (in->peers != NULL) {
		marker_guard(s, &d, in->peers, in->now_ms, fx);
		fx->peers_pace = rounds_wanted(s, &d, in->now_ms);
	}
	if (!set_decision(s, &d, in, fx) && would_changed) {
		compose(s, &s->decision);
		fx->line_changed = true;
	}
	fx->decision = s->decision;
	service_line(s, fx->line);
}

void
service_carry_over(struct service *to, struct service *from)
{
	lbkeys_free(to->keys);
	to->keys = from->keys;
	from->keys = NULL;
	transition_carry(to->tr, from->tr);
	to->history = from->history;
	to->off = from->off;
	memcpy(to->off_by, from->off_by, sizeof(to->off_by));
	lbkeys_free(to->would_keys);
	to->would_keys = from->would_keys;
	from->would_keys = NULL;
	to->shadow = from->shadow;
	memcpy(to->shadow_by, from->shadow_by, sizeof(to->shadow_by));
	to->has_would = from->has_would;
	to->would = from->would;
	if (to->has_would) {
		unsigned mask;

		for (mask = 0; mask <= CLAIM_ALL; mask++)
			reply_compose(&to->would, mask, to->reasons,
			    to->would_lines[mask]);
	}
	to->has_held = from->has_held;
	to->held = from->held;
	to->held_since_ms = from->held_since_ms;
	to->since_wall_ms = from->since_wall_ms;
	to->target = from->target;
	to->replies = from->replies;
	memcpy(to->transitions, from->transitions, sizeof(to->transitions));
	to->has_decision = from->has_decision;
	to->decision = from->decision;
	to->marker_out_ms = from->marker_out_ms;
	to->marker_warned = from->marker_warned;
	memcpy(to->marker_warning, from->marker_warning,
	    sizeof(to->marker_warning));
	if (to->has_decision)
		compose(to, &to->decision);	/* reply_reasons may differ */
}

size_t
service_reply(struct service *s, const char *addr, const char *text,
    size_t len, int64_t now_ms, char buf[REPLY_MAX], struct service_check *ck,
    bool *save_soon, struct lbkeys_notes *notes)
{
	unsigned	restore;

	restore = lbkeys_check(s->keys, addr, text, len, now_ms, &ck->created,
	    save_soon, notes);
	ck->carried = reply_claims(&s->decision);
	ck->restore = restore;
	ck->would_created = false;
	if (s->decision.shadow && s->has_would) {
		bool		changed;
		unsigned	wr;
		size_t		n;

		/* The would-be restore words, per load balancer as well. */
		wr = lbkeys_check(s->would_keys, addr, text, len, now_ms,
		    &ck->would_created, &changed, NULL);
		n = reply_compose_shadow(&s->decision, restore,
		    s->would_lines[wr], buf);
		lbkeys_note_reply(s->keys, buf, n - 1);
		s->replies++;
		return n;
	}
	memcpy(buf, s->lines[restore], s->lens[restore] + 1);
	lbkeys_note_reply(s->keys, buf, s->lens[restore] - 1);
	s->replies++;
	return s->lens[restore];
}

bool
service_late_text(struct service *s, const char *addr, const char *text,
    size_t len, const struct service_check *ck, int64_t now_ms,
    struct lbkeys_notes *notes)
{
	if (s->has_would)
		(void)lbkeys_late_text(s->would_keys, addr, text, len,
		    reply_claims(&s->would), ck->would_created, now_ms, NULL);
	return lbkeys_late_text(s->keys, addr, text, len, ck->carried,
	    ck->created, now_ms, notes);
}
