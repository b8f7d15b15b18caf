/*
 * Safe transitions, driven through sequences over a fake clock: one
 * evaluation every 250 ms, as the agent's marker poll makes them.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/history.h"
#include "lbagent/core/transition.h"
#include "lbagent/daemon/markers.h"
#include "testutil.h"

#define TICK	250
#define S	1000

static const struct transition_conf defaults = {
	.down_after_ms = 30 * S,
	.degrade_after_ms = 10 * S,
	.up_after_ms = 60 * S,
	.restore_after_ms = 30 * S,
	.ramp_ms = 60 * S,
	.ramp_start = 25,
	.flap_limit = 3,
	.flap_window_ms = 600 * S,
};

static struct transition	*t;
static struct decision		out;
static struct transition_notes	notes;
static int64_t			now;
static char			all_notes[8192];

static struct decision
target(int level, const char *reason)
{
	struct decision d;

	decision_up(&d);
	if (level < 0)
		d.state = NODE_DOWN;
	else
		d.weight = (unsigned)level;
	snprintf(d.reason, sizeof(d.reason), "%s", reason);
	return d;
}

static struct decision		up;

static void
start(const struct transition_conf *c)
{
	now = 1000000;
	decision_up(&up);
	transition_free(t);
	t = transition_new(c, now);
	ck_assert_ptr_nonnull(t);
	all_notes[0] = '\0';
}

/* Evaluates once at now, keeping every note. */
static void
eval(const struct decision *d)
{
	size_t	i;

	transition_evaluate(t, d, true, NULL, now, &out, &notes);
	for (i = 0; i < notes.count; i++) {
		strncat(all_notes, notes.n[i].text,
		    sizeof(all_notes) - strlen(all_notes) - 2);
		strcat(all_notes, "\n");
	}
}

/* Holds target d for ms, evaluating every tick; returns at the last one. */
static void
hold(const struct decision *d, int64_t ms)
{
	int64_t	end = now + ms;

	for (;;) {
		eval(d);
		if (now + TICK > end)
			break;
		now += TICK;
	}
}

static void
ck_level(enum node_state state, unsigned weight)
{
	ck_assert_int_eq(out.state, state);
	if (state == NODE_UP)
		ck_assert_uint_eq(out.weight, weight);
}

START_TEST(brief_failure_never_goes_down)
{
	struct decision	down = target(-1, "client-api: HTTP 503");

	start(&defaults);
	hold(&up, 5 * S);
	/* Failing on every evaluation for 30 s less one tick... */
	hold(&down, 30 * S - TICK);
	ck_level(NODE_UP, 100);
	ck_assert_ptr_nonnull(strstr(all_notes, "target down (client-api: HTTP "
	    "503): staying up until it holds for 30s (down_after)"));
	/* ...then one pass: the count restarts. */
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 100);
	ck_assert_ptr_nonnull(strstr(all_notes, "target back to up after"));
	hold(&down, 30 * S - TICK);
	ck_level(NODE_UP, 100);
}
END_TEST

START_TEST(failing_for_down_after_goes_down)
{
	struct decision	down = target(-1, "client-api: HTTP 503");

	start(&defaults);
	hold(&down, 30 * S - TICK);
	ck_level(NODE_UP, 100);
	now += TICK;
	eval(&down);
	ck_level(NODE_DOWN, 0);
	ck_assert_str_eq(out.reason, "client-api: HTTP 503");
	ck_assert_ptr_nonnull(strstr(all_notes, "down: failing on every "
	    "evaluation for 30s (client-api: HTTP 503)"));
	/* Only one hold-back note in the episode. */
	ck_assert_ptr_eq(strstr(strstr(all_notes, "staying up") + 1,
	    "staying up"), NULL);
}
END_TEST

START_TEST(coming_back_waits_longer_and_restarts)
{
	struct decision	down = target(-1, "client-api: HTTP 503");

	start(&defaults);
	hold(&down, 30 * S);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	/* Passing for almost up_after, then failing once: still down. */
	hold(&up, 60 * S - TICK);
	ck_level(NODE_DOWN, 0);
	ck_assert_ptr_nonnull(strstr(all_notes, "target up: staying down until "
	    "it holds for 1m (up_after)"));
	now += TICK;
	eval(&down);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	hold(&up, 60 * S - TICK);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	eval(&up);
	/* Back, at the ramp's start. */
	ck_level(NODE_UP, 25);
	ck_assert(out.ramping);
	ck_assert_str_eq(out.reason, "recovering");
	ck_assert_ptr_nonnull(strstr(all_notes, "up (was down): at 100% or "
	    "better on every evaluation for 1m; recovering from 25% over 1m"));
}
END_TEST

START_TEST(ramp_steps)
{
	struct transition_conf	c = defaults;
	struct decision		down = target(-1, "x");
	unsigned		last = 0, steps = 0;
	int64_t			last_ms = 0, began;

	c.down_after_ms = c.up_after_ms = 0;
	start(&c);
	eval(&down);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 25);
	began = now;
	last = 25;
	last_ms = now;
	while (out.ramping) {
		now += TICK;
		eval(&up);
		if (out.weight != last) {
			/* Steps of 5 points or more, at most one a second. */
			ck_assert_uint_ge(out.weight, last + 5);
			ck_assert_int_ge(now - last_ms, 1000);
			last = out.weight;
			last_ms = now;
			steps++;
		}
		ck_assert_int_le(now - began, 62 * S);
	}
	ck_level(NODE_UP, 100);
	ck_assert_int_ge(now - began, 60 * S);
	ck_assert_uint_ge(steps, 10);
	ck_assert_ptr_nonnull(strstr(all_notes, "recovered: now up"));
	/* Linear: halfway through, about halfway up. */
	start(&c);
	eval(&down);
	now += TICK;
	eval(&up);
	hold(&up, 30 * S);
	ck_assert_uint_ge(out.weight, 55);
	ck_assert_uint_le(out.weight, 65);
}
END_TEST

START_TEST(ramp_towards_the_rules_weight_and_short_ramp)
{
	struct transition_conf	c = defaults;
	struct decision		down = target(-1, "x"), half = target(50, "db: lag");

	c.down_after_ms = c.up_after_ms = 0;
	c.ramp_ms = 2 * S;
	start(&c);
	eval(&down);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 25);
	/* A 2 s ramp: at most one step a second, so 25, ~62, 100. */
	hold(&up, 1 * S);
	ck_level(NODE_UP, 62);
	now += TICK;
	hold(&up, 1 * S - TICK);
	ck_level(NODE_UP, 100);
	ck_assert(!out.ramping);
	/* Coming back to a 50% target ramps to 50%, not 100%. */
	now += TICK;
	eval(&down);
	now += TICK;
	eval(&half);
	ck_level(NODE_UP, 25);
	ck_assert_str_eq(out.reason, "recovering; db: lag");
	hold(&half, 3 * S);
	ck_level(NODE_UP, 50);
	ck_assert_str_eq(out.reason, "db: lag");
	/* ramp = 0: straight back to the target. */
	c.ramp_ms = 0;
	start(&c);
	eval(&down);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 100);
	ck_assert(!out.ramping);
}
END_TEST

START_TEST(failure_during_ramp_judged_by_normal_rules)
{
	struct transition_conf	c = defaults;
	struct decision		down = target(-1, "x");

	c.up_after_ms = 0;
	start(&c);
	hold(&down, 30 * S);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 25);
	hold(&up, 20 * S);
	ck_assert(out.ramping);
	/* A brief failure mid-ramp does not take it out... */
	hold(&down, 10 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert(out.ramping);
	/* ...one lasting down_after does. */
	hold(&down, 20 * S);
	ck_level(NODE_DOWN, 0);
}
END_TEST

START_TEST(weights_degrade_and_restore)
{
	struct decision	half = target(50, "preview: refused");
	struct decision	down = target(-1, "api: 503");
	struct decision	quarter = target(30, "preview: slow");

	start(&defaults);
	hold(&half, 10 * S - TICK);
	ck_level(NODE_UP, 100);
	now += TICK;
	eval(&half);
	ck_level(NODE_UP, 50);
	ck_assert_ptr_nonnull(strstr(all_notes, "up 50% (was up): at 50% or "
	    "worse on every evaluation for 10s (preview: refused)"));
	/* A down target alone never yields a weight: only down, later. */
	start(&defaults);
	hold(&down, 20 * S);
	ck_level(NODE_UP, 100);
	/* Mixed: 30% then down for 10 s in all is "30% or worse". */
	start(&defaults);
	hold(&quarter, 2 * S);
	now += TICK;
	hold(&down, 8 * S - TICK);
	ck_level(NODE_UP, 30);
	/* Restore waits restore_after, not up_after. */
	start(&defaults);
	hold(&half, 10 * S);
	ck_level(NODE_UP, 50);
	now += TICK;
	hold(&up, 30 * S - TICK);
	ck_level(NODE_UP, 50);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 100);
	ck_assert(!out.ramping);
}
END_TEST

START_TEST(drain_by_rules_is_out)
{
	struct decision	drain = target(0, "disk: 97% used");

	start(&defaults);
	hold(&drain, 20 * S);
	/* Not a weight of 1-99: drain is out, and waits down_after. */
	ck_level(NODE_UP, 100);
	hold(&drain, 10 * S);
	ck_level(NODE_UP, 0);
	ck_assert_str_eq(out.reason, "disk: 97% used");
	now += TICK;
	hold(&up, 60 * S);
	ck_level(NODE_UP, 25);
	ck_assert(out.ramping);
}
END_TEST

START_TEST(markers_bypass)
{
	struct decision		down = target(-1, "api: 503"), d;
	struct markers		node;

	start(&defaults);
	memset(&node, 0, sizeof(node));
	hold(&down, 5 * S);
	ck_level(NODE_UP, 100);
	/* The engine holds; a marker acts at once over what it says. */
	node.m[MARKER_MAINT].present = true;
	strcpy(node.m[MARKER_MAINT].reason, "kernel upgrade");
	decision_make(&node, NULL, &out, &d);
	ck_assert_int_eq(d.state, NODE_MAINT);
	ck_assert(!d.failing);
	ck_assert_str_eq(d.reason, "kernel upgrade");
	/* ...and carries the engine's verdict once it is down. */
	hold(&down, 25 * S);
	decision_make(&node, NULL, &out, &d);
	ck_assert_int_eq(d.state, NODE_MAINT);
	ck_assert(d.failing);
}
END_TEST

/* Out and back, once: fail for down_after, pass for up_after and ramp. */
static void
flap_once(void)
{
	struct decision	down = target(-1, "x");

	hold(&down, transition_conf(t)->down_after_ms);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	hold(&up, (int64_t)transition_up_after_ms(t));
	ck_assert_int_eq(out.state, NODE_UP);
	now += TICK;
}

START_TEST(flap_damping_doubles_and_resets)
{
	struct transition_conf	c = defaults;

	c.down_after_ms = 2 * S;
	c.up_after_ms = 4 * S;
	c.ramp_ms = 0;
	start(&c);
	flap_once();
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 1);
	flap_once();	/* the third time out in 10m: 2x */
	ck_assert_ptr_nonnull(strstr(all_notes, "flap damping: out 3 times "
	    "within 10m; coming back now takes 8s (up_after x2)"));
	ck_assert_uint_eq(transition_damping(t), 2);
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 4);
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 8);
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 10);	/* capped at 10x */
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 10);
	ck_assert_uint_eq(transition_up_after_ms(t), 40 * S);
	/* Damped: up_after 4 s no longer brings it back. */
	{
		struct decision down = target(-1, "x");

		hold(&down, 2 * S);
		now += TICK;
		hold(&up, 39 * S);
		ck_level(NODE_DOWN, 0);
		hold(&up, 2 * S);
		ck_level(NODE_UP, 100);
	}
	/* A whole window without going out ends it. */
	hold(&up, 600 * S);
	ck_assert_uint_eq(transition_damping(t), 1);
	ck_assert_ptr_nonnull(strstr(all_notes, "flap damping ended"));
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 1);
	/* flap_limit = 0: never damped. */
	c.flap_limit = 0;
	start(&c);
	flap_once();
	flap_once();
	flap_once();
	flap_once();
	ck_assert_uint_eq(transition_damping(t), 1);
}
END_TEST

START_TEST(unknown_counts_only_towards_worse)
{
	struct decision	down = target(-1, "x");
	int64_t		end;

	start(&defaults);
	hold(&down, 30 * S);
	ck_level(NODE_DOWN, 0);
	/* Probes not yet settled (a restart): passing is not yet known. */
	for (end = now + 120 * S; now < end; now += TICK)
		transition_evaluate(t, &up, false, NULL, now, &out, &notes);
	ck_level(NODE_DOWN, 0);
	hold(&up, 60 * S - TICK);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 25);
	/*
	 * A settled probe failing is evidence enough to go out, whatever the
	 * probes not yet settled will say.
	 */
	start(&defaults);
	for (end = now + 30 * S; now <= end; now += TICK)
		transition_evaluate(t, &down, false, NULL, now, &out, &notes);
	ck_level(NODE_DOWN, 0);
	/* And a failure while unsettled ends a window of passing. */
	start(&defaults);
	hold(&down, 30 * S);
	now += TICK;
	hold(&up, 50 * S);
	now += TICK;
	transition_evaluate(t, &down, false, NULL, now, &out, &notes);
	now += TICK;
	hold(&up, 60 * S - TICK);
	ck_level(NODE_DOWN, 0);
}
END_TEST

/*
 * Saves at `at` of a window, reloads after a gap, and returns the copy
 * (t is freed).
 */
static struct transition *
reload(int64_t gap_ms, bool same_boot)
{
	struct transition	*n;
	const char		*why = NULL;
	json_t			*o = transition_to_json(t, now);
	char			*text = json_dumps(o, 0);
	json_t			*back = json_loads(text, 0, NULL);

	ck_assert_ptr_nonnull(back);
	now += gap_ms;
	n = transition_new(transition_conf(t), now);
	ck_assert_ptr_nonnull(n);
	ck_assert_msg(transition_from_json(n, back, now, gap_ms, same_boot,
	    &why) == 0, "%s", why);
	free(text);
	json_decref(o);
	json_decref(back);
	transition_free(t);
	return n;
}

START_TEST(restart_in_each_window)
{
	struct decision	down = target(-1, "api: 503");

	/* Down, then passing for 40 of 60 s; restarted after 5 s. */
	start(&defaults);
	hold(&down, 30 * S);
	now += TICK;
	hold(&up, 40 * S);
	t = reload(5 * S, true);
	ck_level(NODE_DOWN, 0);
	transition_current(t, &out);
	ck_level(NODE_DOWN, 0);
	ck_assert_str_eq(out.reason, "api: 503");
	/* The 45 s so far count: 15 more and it is back. */
	hold(&up, 15 * S - TICK);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 25);

	/* After a reboot the gap does not count as passing. */
	start(&defaults);
	hold(&down, 30 * S);
	now += TICK;
	hold(&up, 40 * S);
	t = reload(5 * S, false);
	hold(&up, 20 * S - TICK);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 25);

	/* A ramp continues from the step HAProxy was last told. */
	start(&defaults);
	hold(&down, 30 * S);
	now += TICK;
	hold(&up, 60 * S);
	hold(&up, 30 * S);
	ck_assert(out.ramping);
	{
		unsigned was = out.weight;

		t = reload(120 * S, true);
		transition_current(t, &out);
		ck_assert(out.ramping);
		ck_assert_uint_eq(out.weight, was);
		/* The 120 s gap did not count: 30 s of ramp are left. */
		now += S;
		hold(&up, 28 * S);
		ck_assert(out.ramping);
		ck_assert_uint_gt(out.weight, was);
		ck_assert_uint_lt(out.weight, 100);
		hold(&up, 3 * S);
		ck_level(NODE_UP, 100);
	}

	/* Failing before a restart: the worse count starts again. */
	start(&defaults);
	hold(&down, 20 * S);
	t = reload(1 * S, true);
	hold(&down, 30 * S - TICK);
	ck_level(NODE_UP, 100);
	now += TICK;
	eval(&down);
	ck_level(NODE_DOWN, 0);

	/* Flap history and damping survive. */
	{
		struct transition_conf c = defaults;

		c.down_after_ms = 2 * S;
		c.up_after_ms = 4 * S;
		c.ramp_ms = 0;
		start(&c);
		flap_once();
		flap_once();
		flap_once();
		ck_assert_uint_eq(transition_damping(t), 2);
		t = reload(10 * S, false);
		ck_assert_uint_eq(transition_damping(t), 2);
		ck_assert_uint_eq(transition_nouts(t), 3);
		flap_once();
		ck_assert_uint_eq(transition_damping(t), 4);
	}
}
END_TEST

START_TEST(bad_json_leaves_it_alone)
{
	static const char *const bad[] = {
		"{}",
		"{\"level\": 7}",
		"{\"level\": 200, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[-1, 0]], \"ramp\": null, "
		    "\"outs_age_ms\": [], \"damping\": 1}",
		"{\"level\": -1, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[0, 0]], \"ramp\": null, "
		    "\"outs_age_ms\": [], \"damping\": 1}",
		"{\"level\": -1, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[-1, 0], [5, 1], [5, 2]], \"ramp\": null, "
		    "\"outs_age_ms\": [], \"damping\": 1}",
		"{\"level\": -1, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[-1, \"x\"]], \"ramp\": null, "
		    "\"outs_age_ms\": [], \"damping\": 1}",
		"{\"level\": -1, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[-1, 0]], \"ramp\": null, "
		    "\"outs_age_ms\": [], \"damping\": 11}",
		"{\"level\": -1, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[-1, 0]], \"ramp\": {\"age_ms\": 1}, "
		    "\"outs_age_ms\": [], \"damping\": 1}",
		"{\"level\": -1, \"since_age_ms\": 0, \"reason\": \"\", "
		    "\"passing_runs\": [[-1, 0]], \"ramp\": null, "
		    "\"outs_age_ms\": [\"1\"], \"damping\": 1}",
	};
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *o = json_loads(bad[i], 0, NULL);

		start(&defaults);
		why = NULL;
		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(transition_from_json(t, o, now, 0, true, &why),
		    -1);
		ck_assert_ptr_nonnull(why);
		ck_assert_int_eq(transition_at(t), LEVEL_MAX);
		json_decref(o);
	}
}
END_TEST

START_TEST(negative_and_huge_ages_are_clamped)
{
	const char	*why;
	json_t		*o = json_loads("{\"level\": -1, \"since_age_ms\": -5000, "
	    "\"reason\": \"r\\u0001\", \"passing_runs\": [[-1, -100], "
	    "[50, 99999999999999999], [60, null]], \"ramp\": null, "
	    "\"outs_age_ms\": [-1, 9000000000000000000], \"damping\": 2}", 0,
	    NULL);

	start(&defaults);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(transition_from_json(t, o, now, -77, true, &why), 0);
	ck_assert_int_eq(transition_since_ms(t), now);
	ck_assert_str_eq(transition_reason(t), "r?");
	/* A negative age is no time at all: the window starts now. */
	ck_assert_int_eq(transition_passing_since_ms(t, LEVEL_DOWN), now);
	ck_assert_int_lt(transition_passing_since_ms(t, 55), now);
	ck_assert_int_eq(transition_passing_since_ms(t, 60), INT64_MIN);
	ck_assert_int_eq(transition_passing_since_ms(t, 100), INT64_MIN);
	ck_assert_uint_eq(transition_nouts(t), 2);
	ck_assert_int_le(transition_out_ms(t, 0), transition_out_ms(t, 1));
	json_decref(o);
}
END_TEST

/* A reload: the new engine goes on from the old one, under its own settings. */
START_TEST(carry_goes_on_under_new_settings)
{
	struct decision		 down = target(-1, "api: 503");
	struct transition_conf	 c = defaults;
	struct transition	*n;
	int64_t			 since;

	start(&defaults);
	hold(&down, 30 * S);
	ck_level(NODE_DOWN, 0);
	since = transition_since_ms(t);
	now += TICK;
	hold(&up, 10 * S);
	c.up_after_ms = 20 * S;
	c.ramp_ms = 0;
	n = transition_new(&c, now);
	ck_assert_ptr_nonnull(n);
	transition_carry(n, t);
	transition_free(t);
	t = n;
	ck_assert_ptr_eq(transition_conf(t), &c);
	ck_assert_int_eq(transition_at(t), LEVEL_DOWN);
	ck_assert_int_eq(transition_since_ms(t), since);
	ck_assert_str_eq(transition_reason(t), "api: 503");
	/* The 10 s passing so far count towards the new up_after of 20 s. */
	hold(&up, 10 * S - TICK);
	ck_level(NODE_DOWN, 0);
	now += TICK;
	eval(&up);
	ck_level(NODE_UP, 100);
}
END_TEST

START_TEST(history_keeps_the_last_100)
{
	struct history		h, back;
	const char		*why;
	json_t			*o;
	char			 from[16];
	int			 i;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < 130; i++) {
		snprintf(from, sizeof(from), "up %d%%", i);
		history_add(&h, 1000 + i, from, "down", "bad\nline");
	}
	ck_assert_uint_eq(h.count, HISTORY_MAX);
	ck_assert_str_eq(history_get(&h, 0)->from, "up 30%");
	ck_assert_str_eq(history_get(&h, 99)->from, "up 129%");
	ck_assert_str_eq(history_get(&h, 99)->reason, "bad");
	ck_assert_ptr_null(history_get(&h, 100));
	o = history_to_json(&h);
	ck_assert_int_eq(history_from_json(&back, o, &why), 0);
	ck_assert_uint_eq(back.count, HISTORY_MAX);
	ck_assert_int_eq(history_get(&back, 0)->wall_ms, 1030);
	ck_assert_str_eq(history_get(&back, 99)->to, "down");
	json_decref(o);
	o = json_loads("[{\"at\": 1}]", 0, NULL);
	ck_assert_int_eq(history_from_json(&back, o, &why), -1);
	json_decref(o);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("transition");
	TCase	*tc = tcase_create("transition");

	tcase_add_test(tc, brief_failure_never_goes_down);
	tcase_add_test(tc, failing_for_down_after_goes_down);
	tcase_add_test(tc, coming_back_waits_longer_and_restarts);
	tcase_add_test(tc, ramp_steps);
	tcase_add_test(tc, ramp_towards_the_rules_weight_and_short_ramp);
	tcase_add_test(tc, failure_during_ramp_judged_by_normal_rules);
	tcase_add_test(tc, weights_degrade_and_restore);
	tcase_add_test(tc, drain_by_rules_is_out);
	tcase_add_test(tc, markers_bypass);
	tcase_add_test(tc, flap_damping_doubles_and_resets);
	tcase_add_test(tc, unknown_counts_only_towards_worse);
	tcase_add_test(tc, restart_in_each_window);
	tcase_add_test(tc, bad_json_leaves_it_alone);
	tcase_add_test(tc, negative_and_huge_ages_are_clamped);
	tcase_add_test(tc, history_keeps_the_last_100);
	tcase_add_test(tc, carry_goes_on_under_new_settings);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
