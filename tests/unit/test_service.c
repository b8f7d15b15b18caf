/*
 * A service's pipeline over a fake clock: whole sequences of probes,
 * markers, the kill switch's sources and the peer guard's view, stepped
 * every 250 ms as the agent does, checks from load balancers answered in
 * between, restarts through the real state file. Every assertion is on
 * the effects: the lines, the replies, the notes' text and level, what is
 * saved and when.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbagent/core/rules.h"
#include "lbagent/core/service.h"
#include "lbagent/daemon/state.h"
#include "testutil.h"

#define TICK	250
#define S	1000
#define NOW0	1000000
#define WALL0	1767225600000LL		/* 2026-01-01 00:00:00 UTC */
#define FORGET	(3600 * S)

static struct transition_conf conf = {
	.down_after_ms = 1 * S,
	.degrade_after_ms = 1 * S,
	.up_after_ms = 2 * S,
	.restore_after_ms = 1 * S,
	.ramp_ms = 0,
	.ramp_start = 25,
	.flap_limit = 0,
	.flap_window_ms = 600 * S,
	.backend = "be",
	.peer_timeout_ms = 2 * S,
	.alone_grace_ms = 30 * S,
	.recheck_after_ms = 1500,
	.just_out_ms = 10 * S,
};

/* The node: what every service on it shares. */
static struct markers		node;
static struct service_switch	sw;
static struct peer_view		pv;
static bool			peers_on;
static int64_t			now;
static char			*dir;

/* A service with up to two probes and its own markers. */
struct tsvc {
	struct service		s;
	struct markers		own;
	struct rules_input	in[2];
	bool			settled[2];
	size_t			n;
};

static struct service_effects	fx;		/* the last step's */
static unsigned			cap_pct, cap_maxconn;	/* the inputs */
static char			logbuf[65536];	/* every note since start */

static void
setup(void)
{
	memset(&node, 0, sizeof(node));
	memset(&pv, 0, sizeof(pv));
	pv.round_ms = INT64_MIN;
	pv.served_ms = INT64_MIN;
	peers_on = false;
	cap_pct = cap_maxconn = 0;
	sw.mode_env = -1;
	sw.conf_off = false;
	sw.conf_shadow = false;
	sw.conf_path = "/etc/lbagent/lbagent.conf";
	sw.state_dir = "/state";
	now = NOW0;
	logbuf[0] = '\0';
	dir = tu_tmpdir();
	setenv("TZ", "UTC", 1);
	tzset();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static void
init(struct tsvc *t, const char *name)
{
	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(service_init(&t->s, name, "/state", &conf, true,
	    FORGET, now), 0);
}

/* Probe i counts as `counted` (reacting with `on_crit`), settled or not. */
static void
probe(struct tsvc *t, size_t i, const char *name, enum probe_result counted,
    const char *reason, enum reaction_kind on_crit, unsigned weight)
{
	t->in[i].name = name;
	t->in[i].counted = counted;
	t->in[i].reason = reason;
	t->in[i].on_warn.kind = REACT_IGNORE;
	t->in[i].on_crit.kind = on_crit;
	t->in[i].on_crit.weight = weight;
	t->settled[i] = true;
	if (i + 1 > t->n)
		t->n = i + 1;
}

static void
marker(struct markers *ms, enum marker_kind k, const char *reason)
{
	ms->m[k].present = reason != NULL;
	snprintf(ms->m[k].reason, sizeof(ms->m[k].reason), "%s",
	    reason != NULL ? reason : "");
}

static void
step_at(struct tsvc *t, bool at_start)
{
	struct service_input	in;
	size_t			i, len;

	memset(&in, 0, sizeof(in));
	in.probes = t->in;
	in.settled = t->settled;
	in.nprobes = t->n;
	in.node = &node;
	in.own = t->s.marker_dir != NULL ? &t->own : NULL;
	in.sw = &sw;
	in.peers = peers_on ? &pv : NULL;
	in.at_start = at_start;
	in.now_ms = now;
	in.wall_ms = WALL0 + (now - NOW0);
	in.capacity_pct = cap_pct;
	in.maxconn = cap_maxconn;
	service_step(&t->s, &in, &fx);
	for (i = 0; i < fx.nnotes; i++) {
		len = strlen(logbuf);
		snprintf(logbuf + len, sizeof(logbuf) - len, "%s %s\n",
		    fx.notes[i].debug ? "D" : fx.notes[i].warning ? "W" : "N",
		    fx.notes[i].text);
	}
}

static void
step(struct tsvc *t)
{
	step_at(t, false);
}

/* Steps every TICK for ms, the clock moving on. */
static void
run(struct tsvc *t, int64_t ms)
{
	int64_t	end = now + ms;

	while (now < end) {
		now += TICK;
		step(t);
	}
}

/* A check from (addr, text): the reply, as the load balancer reads it. */
static const char *
ask(struct tsvc *t, const char *addr, const char *text)
{
	static char		buf[REPLY_MAX];
	struct service_check	ck;
	struct lbkeys_notes	notes;
	bool			save_soon;
	size_t			n;

	n = service_reply(&t->s, addr, text, strlen(text), now, buf, &ck,
	    &save_soon, &notes);
	ck_assert_uint_eq(n, strlen(buf));
	return buf;
}

static void
expect_note(size_t i, bool warning, const char *text)
{
	ck_assert_msg(i < fx.nnotes, "note %zu of %zu: want \"%s\"", i,
	    fx.nnotes, text);
	ck_assert_str_eq(fx.notes[i].text, text);
	ck_assert_msg(fx.notes[i].warning == warning, "\"%s\" at %s", text,
	    fx.notes[i].warning ? "warning" : "notice");
}

static unsigned
logged(const char *text)
{
	const char	*p = logbuf;
	unsigned	 n = 0;

	while ((p = strstr(p, text)) != NULL) {
		n++;
		p += strlen(text);
	}
	return n;
}

/*
 * A restart: the state file saved as lbagent stops, gap_ms without it,
 * then loaded into a fresh service that takes its first step.
 */
static void
restart(struct tsvc *t, const char *name, int64_t gap_ms)
{
	struct state_service	ss;
	struct state_clock	c;
	struct state_resume	r;
	uint64_t		inc = 0;

	state_service_of(&ss, &t->s);
	memset(&c, 0, sizeof(c));
	c.now_ms = c.boot_ms = now;
	c.wall_ms = WALL0 + (now - NOW0);
	snprintf(c.boot_id, sizeof(c.boot_id), "boot-1");
	ck_assert_int_eq(state_save(dir, 1, &ss, 1, &c), 0);
	service_free(&t->s);
	now += gap_ms;
	ck_assert_int_eq(service_init(&t->s, name, "/state", &conf, true,
	    FORGET, now), 0);
	state_service_of(&ss, &t->s);
	c.now_ms = c.boot_ms = now;
	c.wall_ms = WALL0 + (now - NOW0);
	ck_assert_int_eq(state_load(dir, &inc, &ss, 1, &c, &r), STATE_LOADED);
	ck_assert_uint_eq(inc, 1);
	state_service_resume(&t->s, &ss);
	step_at(t, true);
}

#define OFF_TAIL	": no automated decisions; replies say only '# " \
	"lbagent automation off' and markers still act. The load balancers " \
	"may still hold from lbagent: "
#define HELD_TAIL	", held by HAProxy until an operator or lbagent says " \
	"otherwise"

START_TEST(first_reply_then_a_drain_marker_and_its_ready)
{
	struct tsvc	t;
	int		i;

	init(&t, "");
	step_at(&t, true);
	ck_assert(fx.decided && fx.line_changed);
	ck_assert_str_eq(fx.line, "up");
	expect_note(0, false, "replying \"up\"");
	ck_assert_uint_eq(fx.nnotes, 1);
	ck_assert(fx.save && !fx.save_now);	/* nothing claimed yet */
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up\n");

	marker(&node, MARKER_DRAIN, "kernel upgrade");
	now += TICK;
	step(&t);
	ck_assert_str_eq(fx.line, "drain up #kernel upgrade");
	expect_note(0, true, "reply changed: \"drain up #kernel upgrade\" "
	    "(was \"up\")");
	ck_assert_uint_eq(fx.nnotes, 1);
	ck_assert(fx.save_now);		/* a claim starts: on disk first */
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "drain up #kernel upgrade\n");

	/* Nothing new: nothing to do. */
	now += TICK;
	step(&t);
	ck_assert(!fx.decided && !fx.line_changed && !fx.save &&
	    !fx.save_now && !fx.save_soon && !fx.ask_peers);
	ck_assert_uint_eq(fx.nnotes, 0);

	marker(&node, MARKER_DRAIN, NULL);
	now += TICK;
	step(&t);
	ck_assert_str_eq(fx.line, "up");
	expect_note(0, true, "reply changed: \"up\" (was \"drain up #kernel "
	    "upgrade\")");
	expect_note(1, true, "drain ended: sending 'ready' to the 1 load "
	    "balancer(s) that saw it");
	ck_assert(fx.save_now);
	/* Only the load balancer that saw the drain is sent ready. */
	ck_assert_str_eq(ask(&t, "10.0.0.2", ""), "up\n");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "ready up\n");
	/* Checked every 150 ms: plain up once the restore window passed. */
	for (i = 0; i < 100 && strcmp(ask(&t, "10.0.0.1", ""), "up\n") != 0;
	    i++)
		now += 150;
	ck_assert_int_lt(i, 100);
	ck_assert_int_gt(i, 0);
	service_free(&t.s);
}
END_TEST

START_TEST(a_claim_nobody_saw_sends_nothing)
{
	struct tsvc	t;
	int		i;

	init(&t, "");
	step_at(&t, true);
	marker(&node, MARKER_MAINT, "disk replacement");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "maint up #disk replacement");
	marker(&node, MARKER_MAINT, NULL);
	run(&t, TICK);
	expect_note(1, true, "maint ended; no load balancer saw it, so no "
	    "'ready' is sent");
	/* An operator's MAINT is never undone: no ready, ever. */
	for (i = 0; i < 20; i++) {
		ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up\n");
		now += 150;
	}
	service_free(&t.s);
}
END_TEST

START_TEST(maint_wins_over_drain_and_drain_stays)
{
	struct tsvc	t;

	init(&t, "");
	step_at(&t, true);
	marker(&node, MARKER_DRAIN, "rebalancing");
	marker(&node, MARKER_MAINT, "disk replacement");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "maint up #disk replacement");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""),
	    "maint up #disk replacement\n");
	marker(&node, MARKER_MAINT, NULL);
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain up #rebalancing");
	/* The admin claim goes on: no ready, no save before the reply. */
	ck_assert_uint_eq(fx.nnotes, 1);
	ck_assert(fx.save && !fx.save_now);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "drain up #rebalancing\n");
	marker(&node, MARKER_DRAIN, NULL);
	run(&t, TICK);
	expect_note(1, true, "drain ended: sending 'ready' to the 1 load "
	    "balancer(s) that saw it");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "ready up\n");
	service_free(&t.s);
}
END_TEST

/* Each source of the kill switch, and which one is named when several. */
START_TEST(kill_switch_sources_and_precedence)
{
	static const struct {
		bool		node_off, own_off, conf_off;
		int		env;
		const char	*why;	/* NULL: automation on */
	} cases[] = {
		{ true, false, false, -1, "marker /state/off" },
		{ false, true, false, -1, "marker /state/web/off" },
		{ false, false, false, 1, "LBAGENT_MODE=off" },
		{ false, false, true, -1, "mode = off in "
		    "/etc/lbagent/lbagent.conf" },
		{ false, false, true, 0, NULL },	/* LBAGENT_MODE=auto */
		{ false, false, false, 0, NULL },
		{ true, true, true, 1, "marker /state/off" },
		{ false, true, true, 1, "marker /state/web/off" },
		{ false, false, true, 1, "LBAGENT_MODE=off" },
		{ false, true, true, 0, "marker /state/web/off" },
	};
	struct tsvc	t;
	char		want[1024];
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&node, 0, sizeof(node));
		init(&t, "web");
		marker(&node, MARKER_OFF, cases[i].node_off ? "" : NULL);
		marker(&t.own, MARKER_OFF, cases[i].own_off ? "" : NULL);
		sw.conf_off = cases[i].conf_off;
		sw.mode_env = cases[i].env;
		step_at(&t, true);
		if (cases[i].why == NULL) {
			ck_assert_str_eq(fx.line, "up");
			expect_note(0, false, "service web: replying \"up\"");
			service_free(&t.s);
			continue;
		}
		snprintf(want, sizeof(want), "service web: automation off (%s)"
		    OFF_TAIL "nothing: lbagent last said up at full weight",
		    cases[i].why);
		expect_note(0, true, want);
		expect_note(1, false, "service web: replying \"# lbagent "
		    "automation off\"");
		ck_assert_uint_eq(fx.nnotes, 2);
		ck_assert_str_eq(fx.line, "# lbagent automation off");
		ck_assert_str_eq(ask(&t, "10.0.0.1", ""),
		    "# lbagent automation off\n");
		/* Said once, not on every step. */
		run(&t, TICK);
		ck_assert_uint_eq(fx.nnotes, 0);
		service_free(&t.s);
	}
	/* The default service has no off marker of its own. */
	memset(&node, 0, sizeof(node));
	sw.mode_env = -1;
	sw.conf_off = false;
	init(&t, "");
	marker(&t.own, MARKER_OFF, "");
	step_at(&t, true);
	ck_assert_str_eq(fx.line, "up");
	service_free(&t.s);
}
END_TEST

/* Off, each marker still acts, and its ready still goes. */
START_TEST(markers_act_while_off)
{
	static const struct {
		bool			own;
		enum marker_kind	kind;
		const char		*line, *ended;
	} cases[] = {
		{ false, MARKER_DRAIN, "drain #patching; lbagent automation off",
		    "drain" },
		{ false, MARKER_MAINT, "maint #patching; lbagent automation off",
		    "maint" },
		{ true, MARKER_DRAIN, "drain #patching; lbagent automation off",
		    "drain" },
		{ true, MARKER_MAINT, "maint #patching; lbagent automation off",
		    "maint" },
	};
	struct tsvc	t;
	char		want[256], line[REPLY_MAX + 1];
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&node, 0, sizeof(node));
		init(&t, "web");
		sw.mode_env = 1;
		step_at(&t, true);
		marker(cases[i].own ? &t.own : &node, cases[i].kind,
		    "patching");
		run(&t, TICK);
		ck_assert_str_eq(fx.line, cases[i].line);
		ck_assert(fx.save_now);
		snprintf(line, sizeof(line), "%s\n", cases[i].line);
		ck_assert_str_eq(ask(&t, "10.0.0.1", "web"), line);
		marker(cases[i].own ? &t.own : &node, cases[i].kind, NULL);
		run(&t, TICK);
		ck_assert_str_eq(fx.line, "# lbagent automation off");
		snprintf(want, sizeof(want), "service web: %s ended: sending "
		    "'ready' to the 1 load balancer(s) that saw it",
		    cases[i].ended);
		expect_note(1, true, want);
		ck_assert_str_eq(ask(&t, "10.0.0.1", "web"),
		    "ready # lbagent automation off\n");
		ck_assert_str_eq(ask(&t, "10.0.0.9", "web"),
		    "# lbagent automation off\n");
		service_free(&t.s);
	}
}
END_TEST

/*
 * Off leaves HAProxy's DOWN as it is; a maint marker still acts; back
 * on, counting starts again and the node comes back after up_after.
 */
START_TEST(off_over_a_node_down_by_its_rules)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	ck_assert_uint_eq(logged("W down: failing on every evaluation for "
	    "1s (dep: gone)\n"), 1);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "down #dep: gone\n");

	marker(&node, MARKER_OFF, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	run(&t, TICK);
	expect_note(0, true, "automation off (marker /state/off)" OFF_TAIL
	    "down since 2026-01-01 00:00:01" HELD_TAIL);
	expect_note(1, true, "reply changed: \"# lbagent automation off\" "
	    "(was \"down #dep: gone\")");
	ck_assert_uint_eq(fx.nnotes, 2);
	run(&t, 5 * S);
	ck_assert_str_eq(fx.line, "# lbagent automation off");

	marker(&node, MARKER_MAINT, "kernel upgrade");
	run(&t, TICK);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""),
	    "maint #kernel upgrade; lbagent automation off\n");
	marker(&node, MARKER_MAINT, NULL);
	run(&t, TICK);
	expect_note(1, true, "maint ended: sending 'ready' to the 1 load "
	    "balancer(s) that saw it");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""),
	    "ready # lbagent automation off\n");

	marker(&node, MARKER_OFF, NULL);
	run(&t, TICK);
	expect_note(0, true, "automation on again: counting starts now (no "
	    "going out within down_after 1s)");
	ck_assert_str_eq(fx.line, "down #dep: gone");
	run(&t, 2 * S - TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "up");
	service_free(&t.s);
}
END_TEST

/*
 * Off leaves a weight lbagent set as it is, also across a restart: it
 * stays claimed, and back on, 100% restores it.
 */
START_TEST(off_keeps_a_weight_claimed_across_a_restart)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "half", PROBE_OK, "", REACT_WEIGHT, 50);
	step_at(&t, true);
	probe(&t, 0, "half", PROBE_CRIT, "gone", REACT_WEIGHT, 50);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "up 50% #half: gone");
	ck_assert(fx.save_now);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 50% #half: gone\n");

	sw.mode_env = 1;
	probe(&t, 0, "half", PROBE_OK, "", REACT_WEIGHT, 50);
	run(&t, TICK);
	expect_note(0, true, "automation off (LBAGENT_MODE=off)" OFF_TAIL
	    "weight 50% since 2026-01-01 00:00:01" HELD_TAIL);
	ck_assert_uint_eq(fx.nnotes, 2);	/* no "reduced weight ended" */
	ck_assert(fx.save && !fx.save_now);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "# lbagent automation off\n");

	restart(&t, "", 500);
	ck_assert_uint_eq(logged("reduced weight ended"), 0);
	ck_assert_str_eq(fx.line, "# lbagent automation off");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "# lbagent automation off\n");
	run(&t, 2 * S);
	ck_assert_uint_eq(logged("reduced weight ended"), 0);

	sw.mode_env = -1;
	run(&t, TICK);
	expect_note(0, true, "automation on again: counting starts now (no "
	    "going out within down_after 1s)");
	ck_assert_str_eq(fx.line, "up 50% #half: gone");
	run(&t, 1 * S);
	ck_assert_str_eq(fx.line, "up");
	ck_assert_uint_eq(logged("W reduced weight ended: sending '100%' to "
	    "the 1 load balancer(s) that saw it\n"), 1);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 100%\n");
	service_free(&t.s);
}
END_TEST

/* The off marker stops a failing node going out; back on, counts restart. */
START_TEST(off_marker_live_and_counts_restart)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	marker(&node, MARKER_OFF, "");
	run(&t, TICK);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 3 * S);
	ck_assert_str_eq(fx.line, "# lbagent automation off");
	ck_assert_uint_eq(logged("down:"), 0);
	marker(&node, MARKER_OFF, NULL);
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "up");
	ck_assert_uint_eq(logged("W target down (dep: gone): staying up until "
	    "it holds for 1s (down_after)\n"), 1);
	run(&t, 1 * S - TICK);
	ck_assert_str_eq(fx.line, "up");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	service_free(&t.s);
}
END_TEST

/* A marker over a target that fails: "drain down", and ready after it. */
START_TEST(marker_over_a_failing_target)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 1 * S + TICK);
	marker(&node, MARKER_DRAIN, "patching");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain down #patching");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "drain down #patching\n");
	marker(&node, MARKER_MAINT, "disk");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "maint down #disk");
	marker(&node, MARKER_MAINT, NULL);
	marker(&node, MARKER_DRAIN, NULL);
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	expect_note(1, true, "maint ended: sending 'ready' to the 1 load "
	    "balancer(s) that saw it");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "ready down #dep: gone\n");
	service_free(&t.s);
}
END_TEST

/* A probe not yet settled counts towards going worse, never back. */
START_TEST(unsettled_probes_never_bring_it_back)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	step_at(&t, true);
	run(&t, 1 * S);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	t.settled[0] = false;
	run(&t, 5 * S);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	t.settled[0] = true;
	run(&t, 2 * S);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "up");
	service_free(&t.s);
}
END_TEST

/* A restart mid-drain, the marker removed meanwhile: ready to both. */
START_TEST(restart_while_draining)
{
	struct tsvc	t;

	init(&t, "");
	step_at(&t, true);
	marker(&node, MARKER_DRAIN, "kernel upgrade");
	run(&t, TICK);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "drain up #kernel upgrade\n");
	ck_assert_str_eq(ask(&t, "10.0.0.2", ""), "drain up #kernel upgrade\n");
	marker(&node, MARKER_DRAIN, NULL);
	restart(&t, "", 3 * S);
	expect_note(0, true, "reply changed at start-up: \"up\" (was \"drain "
	    "up #kernel upgrade\")");
	expect_note(1, true, "drain ended: sending 'ready' to the 2 load "
	    "balancer(s) that saw it");
	ck_assert(fx.save_now);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "ready up\n");
	ck_assert_str_eq(ask(&t, "10.0.0.2", ""), "ready up\n");
	service_free(&t.s);
}
END_TEST

/* Released before the restart, not yet delivered: still owed after it. */
START_TEST(restart_with_a_ready_owed)
{
	struct tsvc	t;

	init(&t, "web");
	step_at(&t, true);
	marker(&t.own, MARKER_DRAIN, "web deploy");
	run(&t, TICK);
	ck_assert_str_eq(ask(&t, "10.0.0.1", "web"), "drain up #web deploy\n");
	marker(&t.own, MARKER_DRAIN, NULL);
	run(&t, TICK);
	expect_note(1, true, "service web: drain ended: sending 'ready' to the "
	    "1 load balancer(s) that saw it");
	restart(&t, "web", 1 * S);
	/* Same line at start-up: nothing changed, nothing ended. */
	ck_assert_uint_eq(fx.nnotes, 0);
	ck_assert(fx.decided && fx.save);
	ck_assert_str_eq(ask(&t, "10.0.0.1", "web"), "ready up\n");
	service_free(&t.s);
}
END_TEST

/* Down across a restart: still down until up_after of passing. */
START_TEST(restart_while_down)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	run(&t, 500);
	restart(&t, "", 200);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	/* The engine's hold is told again: a new process's first look. */
	expect_note(0, true, "target up: staying down until it holds for 2s "
	    "(up_after)");
	ck_assert_uint_eq(fx.nnotes, 1);
	/* The window of passing ran on over the gap (same boot). */
	run(&t, 2 * S - 700 - TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	run(&t, 2 * TICK);
	ck_assert_str_eq(fx.line, "up");
	service_free(&t.s);
}
END_TEST

/*
 * Down across a restart with a configuration that no longer has the
 * failing probe: still held out until up_after, but the reply and the log
 * say why instead of quoting a probe that is gone.
 */
START_TEST(restart_while_down_with_the_probe_removed)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "nagios-http", PROBE_OK, "", REACT_DOWN, 0);
	probe(&t, 1, "disk", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	probe(&t, 0, "nagios-http", PROBE_CRIT, "connect to 10.0.0.1:80: "
	    "refused", REACT_DOWN, 0);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "down #nagios-http: connect to 10.0.0.1:80: "
	    "refused");
	/* The new configuration: only disk, passing. */
	t.in[0] = t.in[1];
	t.n = 1;
	restart(&t, "", 200);
	ck_assert_str_eq(fx.line, "down #held from before the restart: "
	    "nagios-http (probe removed); up after 2s of passing");
	expect_note(0, true, "down as before the restart (nagios-http: connect "
	    "to 10.0.0.1:80: refused), but that probe is no longer in the "
	    "configuration: staying down until the rules pass for 2s "
	    "(up_after)");
	expect_note(1, true, "target up: staying down until it holds for 2s "
	    "(up_after)");
	expect_note(2, true, "reply changed at start-up: \"down #held from "
	    "before the restart: nagios-http (probe removed); up after 2s of "
	    "passing\" (was \"down #nagios-http: connect to 10.0.0.1:80: "
	    "refused\")");
	ck_assert_uint_eq(fx.nnotes, 3);
	/* Held for up_after, as before the change. */
	run(&t, 2 * S - TICK);
	ck_assert_str_eq(fx.line, "down #held from before the restart: "
	    "nagios-http (probe removed); up after 2s of passing");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "up");
	/* Told once per load: a later restart up says nothing of it. */
	ck_assert_uint_eq(logged("as before the restart"), 1);
	service_free(&t.s);
}
END_TEST

/*
 * Several probes gone, with long names: as many as fit within the
 * reason's limit, the rest counted; a probe that remains is not named
 * removed, and when it fails again its own reason takes over.
 */
START_TEST(restart_while_down_with_probes_removed_fits_the_reason)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "the-first-probe-with-a-long-name", PROBE_CRIT, "x",
	    REACT_DOWN, 0);
	probe(&t, 1, "the-second-probe-with-a-long-name", PROBE_CRIT, "y",
	    REACT_DOWN, 0);
	step_at(&t, true);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "down #the-first-probe-with-a-long-name: x; "
	    "the-second-probe-with-a-long-name: y");
	t.n = 0;
	restart(&t, "", 200);
	ck_assert_str_eq(fx.decision.reason, "held from before the restart: "
	    "the-first-probe-with-a-long-name and 1 more (probes removed)");
	ck_assert_str_eq(fx.line, "down #held from before the restart: "
	    "the-first-probe-with-a-long-name and 1 more (probes removed)");
	service_free(&t.s);

	/* One of two gone: only it is named; the other fails again. */
	init(&t, "");
	probe(&t, 0, "a", PROBE_CRIT, "x", REACT_DOWN, 0);
	probe(&t, 1, "b", PROBE_CRIT, "y", REACT_DOWN, 0);
	step_at(&t, true);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "down #a: x; b: y");
	/* A new process: a's first run has not come in yet. */
	t.n = 1;
	probe(&t, 0, "a", PROBE_OK, "", REACT_DOWN, 0);
	t.settled[0] = false;
	restart(&t, "", 200);
	ck_assert_str_eq(fx.line, "down #held from before the restart: b "
	    "(probe removed); up after 2s of passing");
	probe(&t, 0, "a", PROBE_CRIT, "x", REACT_DOWN, 0);
	step(&t);
	ck_assert_str_eq(fx.line, "down #a: x");
	service_free(&t.s);
}
END_TEST

/* Services share the node's markers; their own are theirs alone. */
START_TEST(services_share_the_node_markers)
{
	struct tsvc	d, web, api;
	struct tsvc	*all[] = { &d, &web, &api };
	size_t		i;

	init(&d, "");
	init(&web, "web");
	init(&api, "api");
	for (i = 0; i < 3; i++)
		step_at(all[i], true);
	expect_note(0, false, "service api: replying \"up\"");

	marker(&node, MARKER_DRAIN, "node work");
	now += TICK;
	for (i = 0; i < 3; i++) {
		step(all[i]);
		ck_assert_str_eq(fx.line, "drain up #node work");
	}
	expect_note(0, true, "service api: reply changed: \"drain up #node "
	    "work\" (was \"up\")");
	marker(&node, MARKER_DRAIN, NULL);
	now += TICK;
	for (i = 0; i < 3; i++) {
		step(all[i]);
		ck_assert_str_eq(fx.line, "up");
	}

	marker(&web.own, MARKER_DRAIN, "web deploy");
	marker(&api.own, MARKER_MAINT, "api migration");
	now += TICK;
	step(&d);
	ck_assert(!fx.decided);
	ck_assert_str_eq(fx.line, "up");
	step(&web);
	ck_assert_str_eq(fx.line, "drain up #web deploy");
	step(&api);
	ck_assert_str_eq(fx.line, "maint up #api migration");

	/* The service's own reason first; the node's maint over its drain. */
	marker(&node, MARKER_DRAIN, "node work");
	marker(&node, MARKER_MAINT, "node maint");
	now += TICK;
	step(&web);
	ck_assert_str_eq(fx.line, "maint up #node maint");
	step(&api);
	ck_assert_str_eq(fx.line, "maint up #api migration");
	step(&d);
	ck_assert_str_eq(fx.line, "maint up #node maint");
	marker(&node, MARKER_MAINT, NULL);
	now += TICK;
	step(&web);
	ck_assert_str_eq(fx.line, "drain up #web deploy");

	/* The node's off marker switches every service off. */
	marker(&node, MARKER_OFF, "");
	now += TICK;
	for (i = 0; i < 3; i++) {
		step(all[i]);
		ck_assert_ptr_nonnull(strstr(fx.notes[0].text,
		    "automation off (marker /state/off)"));
	}
	ck_assert_str_eq(fx.line, "maint #api migration; lbagent automation "
	    "off");
	for (i = 0; i < 3; i++)
		service_free(&all[i]->s);
}
END_TEST

/* A peer view the guard reads: a round started now. */
static void
round_now(bool other_serving, const char *who, const char *why)
{
	pv.round_ms = now;
	pv.other_serving = other_serving;
	if (other_serving || pv.served_ms == INT64_MIN)
		pv.served_ms = now;
	snprintf(pv.who, sizeof(pv.who), "%s", who);
	snprintf(pv.why, sizeof(pv.why), "%s", why);
}

/*
 * The guard asks before going out, holds the node in while nobody else
 * serves, lets it out once someone does, brings it back latched when the
 * look-again finds nobody; a restart ends the latch.
 */
START_TEST(guard_holds_lets_out_latches_and_restart_ends_it)
{
	struct tsvc	t;

	peers_on = true;
	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	round_now(true, "n2", "");
	step_at(&t, true);
	/* In and healthy: no round, none every interval either. */
	ck_assert(!fx.ask_peers && fx.peers_pace == PACE_NONE);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, TICK);
	ck_assert(!fx.ask_peers && fx.peers_pace == PACE_NONE);	/* not due yet */
	run(&t, 1 * S);
	/* Going out is due: ask first, stay in until the answer. */
	ck_assert(fx.ask_peers && fx.peers_pace == PACE_FAST);
	ck_assert_str_eq(fx.line, "up");
	round_now(false, "", "n2: timeout; n3: HTTP 503");
	run(&t, TICK);
	ck_assert(!fx.ask_peers);
	/* Held in: asking fast whether one serves. */
	ck_assert_int_eq(fx.peers_pace, PACE_FAST);
	ck_assert_str_eq(fx.line, "up #peer-guard: dep failing but no other "
	    "node serving");
	ck_assert_uint_eq(logged("W peer-guard: staying in although failing "
	    "(dep: gone): no other node serving (n2: timeout; n3: HTTP 503)\n"),
	    1);
	run(&t, 3 * S);
	ck_assert_uint_eq(logged("peer-guard: staying in"), 1);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up #peer-guard: dep failing "
	    "but no other node serving\n");

	round_now(true, "n2", "");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	ck_assert_uint_eq(logged("N peer-guard: going out: serving: n2\n"), 1);
	/* Just out: fast, to come back at once if it was the last. */
	ck_assert_int_eq(fx.peers_pace, PACE_FAST);

	/* The look-again, from recheck_after: nobody serves after all. */
	run(&t, 1500);
	ck_assert(fx.ask_peers);
	round_now(false, "", "n2: timeout");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "up #peer-guard: latched until restart; dep "
	    "failing");
	ck_assert_uint_eq(logged("right after going out: no other node "
	    "serving (n2: timeout); latched: no automated going out until "
	    "lbagent restarts\n"), 1);
	round_now(true, "n2", "");
	run(&t, 5 * S);
	ck_assert_str_eq(fx.line, "up #peer-guard: latched until restart; dep "
	    "failing");
	/* Latched in: no round could take it out, none is needed. */
	ck_assert(!fx.ask_peers && fx.peers_pace == PACE_NONE);

	restart(&t, "", 500);
	round_now(true, "n2", "");
	run(&t, 1 * S);
	ck_assert(fx.ask_peers);
	round_now(true, "n2", "");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	service_free(&t.s);
}
END_TEST

/*
 * A marker is obeyed whatever the peers say; the guard warns once, and
 * the reply's reason says it while no other node serves.
 */
START_TEST(marker_guard_warns_once_when_nobody_else_serves)
{
	struct tsvc	t;

	peers_on = true;
	init(&t, "web");
	round_now(true, "n2", "");
	step_at(&t, true);
	marker(&t.own, MARKER_DRAIN, "patching");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain up #patching");
	ck_assert(fx.ask_peers);	/* the round predates the marker */
	/* Held out by it: steady, nothing about to change on the view. */
	ck_assert_int_eq(fx.peers_pace, PACE_STEADY);
	round_now(false, "", "n2: timeout");
	run(&t, TICK);
	expect_note(0, true, "service web: peer-guard: drain marker obeyed, "
	    "but no other node is serving (n2: timeout)");
	ck_assert_str_eq(fx.line, "drain up #patching (no other node serving)");
	run(&t, 2 * S);
	ck_assert_str_eq(fx.line, "drain up #patching (no other node serving)");
	ck_assert_uint_eq(logged("peer-guard: drain marker obeyed"), 1);
	round_now(true, "n2", "");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain up #patching");
	round_now(false, "", "n2: timeout");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain up #patching (no other node serving)");
	ck_assert_uint_eq(logged("peer-guard: drain marker obeyed"), 2);
	/* A marker without a reason: the words alone. */
	marker(&t.own, MARKER_DRAIN, "");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain up #no other node serving");
	/* Without the marker, nothing to warn of. */
	marker(&t.own, MARKER_DRAIN, NULL);
	run(&t, TICK);
	ck_assert(!fx.ask_peers && fx.peers_pace == PACE_NONE);
	ck_assert_uint_eq(logged("peer-guard: drain marker obeyed"), 2);
	service_free(&t.s);
}
END_TEST

/* A reload carries what the service lived through; lines recomposed. */
START_TEST(carry_over_keeps_claims_and_recomposes)
{
	struct tsvc	t, n;

	init(&t, "web");
	step_at(&t, true);
	marker(&t.own, MARKER_DRAIN, "patching");
	run(&t, TICK);
	ck_assert_str_eq(ask(&t, "10.0.0.1", "web"), "drain up #patching\n");
	memset(&n, 0, sizeof(n));
	ck_assert_int_eq(service_init(&n.s, "web", "/state", &conf, false,
	    FORGET, now), 0);
	service_carry_over(&n.s, &t.s);
	n.own = t.own;
	service_free(&t.s);
	ck_assert_str_eq(ask(&n, "10.0.0.1", "web"), "drain up\n");
	marker(&n.own, MARKER_DRAIN, NULL);
	run(&n, TICK);
	expect_note(1, true, "service web: drain ended: sending 'ready' to the "
	    "1 load balancer(s) that saw it");
	ck_assert_str_eq(ask(&n, "10.0.0.1", "web"), "ready up\n");
	service_free(&n.s);
}
END_TEST

#define SHADOW	"# lbagent shadow: would reply "

/*
 * Shadow's sources as off's (markers, node's then own, LBAGENT_MODE,
 * which replaces mode =), and off the stronger: any source of off wins
 * over any of shadow.
 */
START_TEST(shadow_precedence)
{
	static const struct {
		bool		node_off, own_off, node_shadow, own_shadow;
		bool		conf_off, conf_shadow;
		int		env;
		const char	*line, *why;
	} cases[] = {
		{ 0, 0, 1, 0, 0, 0, -1, SHADOW "up", "marker /state/shadow" },
		{ 0, 0, 0, 1, 0, 0, -1, SHADOW "up", "marker /state/web/shadow" },
		{ 0, 0, 0, 0, 0, 0, 2, SHADOW "up", "LBAGENT_MODE=shadow" },
		{ 0, 0, 0, 0, 0, 1, -1, SHADOW "up",
		    "mode = shadow in /etc/lbagent/lbagent.conf" },
		/* LBAGENT_MODE replaces mode =, either way. */
		{ 0, 0, 0, 0, 0, 1, 0, "up", NULL },
		{ 0, 0, 0, 0, 1, 0, 2, SHADOW "up", "LBAGENT_MODE=shadow" },
		{ 0, 0, 1, 0, 0, 0, 0, SHADOW "up", "marker /state/shadow" },
		/* Off, from anywhere, wins over shadow from anywhere. */
		{ 0, 0, 1, 1, 0, 1, 2, SHADOW "up", "marker /state/shadow" },
		{ 0, 0, 1, 1, 0, 0, 1, "# lbagent automation off",
		    "LBAGENT_MODE=off" },
		{ 0, 1, 1, 0, 0, 0, -1, "# lbagent automation off",
		    "marker /state/web/off" },
		{ 1, 0, 0, 1, 0, 0, 2, "# lbagent automation off",
		    "marker /state/off" },
		{ 0, 0, 1, 0, 1, 0, -1, "# lbagent automation off",
		    "mode = off in /etc/lbagent/lbagent.conf" },
	};
	struct tsvc	t;
	char		line[REPLY_MAX + 1];
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&node, 0, sizeof(node));
		init(&t, "web");
		marker(&node, MARKER_OFF, cases[i].node_off ? "" : NULL);
		marker(&t.own, MARKER_OFF, cases[i].own_off ? "" : NULL);
		marker(&node, MARKER_SHADOW, cases[i].node_shadow ? "" : NULL);
		marker(&t.own, MARKER_SHADOW, cases[i].own_shadow ? "" : NULL);
		sw.conf_off = cases[i].conf_off;
		sw.conf_shadow = cases[i].conf_shadow;
		sw.mode_env = cases[i].env;
		step_at(&t, true);
		ck_assert_msg(strcmp(fx.line, cases[i].line) == 0,
		    "case %zu: \"%s\"", i, fx.line);
		snprintf(line, sizeof(line), "%s\n", cases[i].line);
		ck_assert_str_eq(ask(&t, "10.0.0.1", "web"), line);
		if (cases[i].why == NULL)
			ck_assert(!t.s.off && !t.s.shadow);
		else if (strncmp(cases[i].line, SHADOW, strlen(SHADOW)) == 0) {
			ck_assert(t.s.shadow && !t.s.off);
			ck_assert_str_eq(t.s.shadow_by, cases[i].why);
			ck_assert(fx.decision.shadow && fx.decision.automation_off);
		} else {
			ck_assert(t.s.off && !t.s.shadow);
			ck_assert_str_eq(t.s.off_by, cases[i].why);
			ck_assert(!fx.decision.shadow);
		}
		service_free(&t.s);
	}
	sw.conf_off = sw.conf_shadow = false;
	sw.mode_env = -1;
	/* The default service has no shadow marker of its own. */
	memset(&node, 0, sizeof(node));
	init(&t, "");
	marker(&t.own, MARKER_SHADOW, "");
	step_at(&t, true);
	ck_assert_str_eq(fx.line, "up");
	service_free(&t.s);
}
END_TEST

/*
 * Shadow under a failing probe: the engine goes down after down_after and
 * says so at warning, as a real change, but every reply is only the
 * comment; a marker still acts, and the restore words are real for the
 * load balancers that saw the marker, would-be for those the would-be
 * claims reached.
 */
START_TEST(shadow_reply_text)
{
	struct tsvc	t;

	sw.conf_shadow = true;
	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	expect_note(0, true, "shadow mode (mode = shadow in "
	    "/etc/lbagent/lbagent.conf): probes, rules, transitions and the "
	    "guard run, but replies carry no state word, only '# lbagent "
	    "shadow: would reply ...' (markers still act)");
	expect_note(1, false, "shadow: would reply \"up\"");
	expect_note(2, false, "replying \"" SHADOW "up\"");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), SHADOW "up\n");

	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 1 * S);
	ck_assert_str_eq(fx.line, SHADOW "up");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");
	ck_assert_uint_eq(logged("W shadow: down: failing on every evaluation "
	    "for 1s (dep: gone)\n"), 1);
	ck_assert_uint_eq(logged("W shadow: would reply \"down #dep: gone\" "
	    "(was \"up\")\n"), 1);
	ck_assert(fx.line_changed);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), SHADOW "down #dep: gone\n");
	/* What HAProxy is told stays up: it holds what it had. */
	ck_assert_int_eq(t.s.decision.state, NODE_UP);
	ck_assert(t.s.decision.shadow);
	ck_assert_int_eq(t.s.would.state, NODE_DOWN);
	ck_assert_int_eq(t.s.held.state, NODE_UP);
	ck_assert_uint_eq(t.s.held.weight, 100);
	run(&t, 5 * S);
	ck_assert_uint_eq(logged("W shadow: would reply"), 1);

	/* A marker acts for real, and shows in the would-be line too. */
	marker(&node, MARKER_DRAIN, "patching");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "drain " SHADOW "drain down #patching");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""),
	    "drain " SHADOW "drain down #patching\n");
	marker(&node, MARKER_DRAIN, NULL);
	run(&t, TICK);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""),
	    "ready " SHADOW "ready down #dep: gone\n");
	ck_assert_str_eq(ask(&t, "10.0.0.2", ""), SHADOW "down #dep: gone\n");
	service_free(&t.s);
}
END_TEST

/*
 * Back to auto from shadow: HAProxy holds up (it got no state word), so
 * the engine, down in shadow, restarts from up, and down takes a full
 * down_after counted from the switch.
 */
START_TEST(shadow_to_auto_waits_down_after)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	ck_assert_str_eq(fx.line, "up");
	marker(&node, MARKER_SHADOW, "trial");
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 10 * S);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");

	marker(&node, MARKER_SHADOW, NULL);
	run(&t, TICK);
	expect_note(0, true, "shadow mode ended: automation on from what "
	    "HAProxy holds (up); counting starts now (no going out within "
	    "down_after 1s)");
	ck_assert_str_eq(fx.line, "up");
	run(&t, 1 * S - TICK);
	ck_assert_str_eq(fx.line, "up");
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up\n");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	service_free(&t.s);
}
END_TEST

/*
 * Restarted in shadow mode with the engine down: what HAProxy holds (up,
 * since the start) comes back from the state file, not from the engine,
 * so the switch to auto still waits a full down_after.
 */
START_TEST(shadow_restart_keeps_what_haproxy_holds)
{
	struct tsvc	t;
	int64_t		since;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	since = t.s.held_since_ms;
	run(&t, TICK);
	ck_assert(!fx.save_soon);
	marker(&node, MARKER_SHADOW, "trial");
	run(&t, TICK);
	/* Into shadow mode: saved soon, what HAProxy holds with it. */
	ck_assert(fx.save_soon);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 10 * S);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");

	restart(&t, "", 200);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");
	ck_assert(t.s.has_held);
	ck_assert_int_eq(t.s.held.state, NODE_UP);
	ck_assert_uint_eq(t.s.held.weight, 100);
	ck_assert_int_eq(t.s.held_since_ms, since);

	marker(&node, MARKER_SHADOW, NULL);
	run(&t, TICK);
	expect_note(0, true, "shadow mode ended: automation on from what "
	    "HAProxy holds (up); counting starts now (no going out within "
	    "down_after 1s)");
	ck_assert_str_eq(fx.line, "up");
	run(&t, 1 * S - TICK);
	ck_assert_str_eq(fx.line, "up");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	service_free(&t.s);
}
END_TEST

/*
 * Shadow mode ended by a restart (the marker removed while lbagent was
 * stopped, or LBAGENT_MODE=shadow no longer set): the same switch as while
 * running, from what HAProxy holds, a full down_after before going out.
 * Off ended by a restart likewise counts from the start.
 */
START_TEST(mode_ended_by_a_restart_is_a_switch)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	marker(&node, MARKER_SHADOW, "trial");
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 10 * S);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");

	marker(&node, MARKER_SHADOW, NULL);
	restart(&t, "", 200);
	ck_assert_msg(logged("shadow mode ended: automation on from what "
	    "HAProxy holds (up); counting starts now (no going out within "
	    "down_after 1s)") == 1, "%s", logbuf);
	ck_assert_str_eq(fx.line, "up");
	run(&t, 1 * S - TICK);
	ck_assert_str_eq(fx.line, "up");
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");

	/* Off ended by a restart: automation on again, counting from it. */
	sw.mode_env = 1;
	run(&t, TICK);
	ck_assert_str_eq(fx.line, "# lbagent automation off");
	sw.mode_env = -1;
	logbuf[0] = '\0';
	restart(&t, "", 200);
	ck_assert_msg(logged("automation on again: counting starts now (no "
	    "going out within down_after 1s)") == 1, "%s", logbuf);
	ck_assert_str_eq(fx.line, "down #dep: gone");
	service_free(&t.s);
}
END_TEST

/*
 * HAProxy holds down from before shadow; the shadow engine came back up:
 * back to auto, automation goes on from where the shadow engine stands.
 * And shadow to off says what HAProxy holds, not the would-be.
 */
START_TEST(shadow_to_auto_from_where_the_engine_stands)
{
	struct tsvc	t;

	init(&t, "");
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	step_at(&t, true);
	probe(&t, 0, "dep", PROBE_CRIT, "gone", REACT_DOWN, 0);
	run(&t, 1 * S + TICK);
	ck_assert_str_eq(fx.line, "down #dep: gone");

	sw.mode_env = 2;
	probe(&t, 0, "dep", PROBE_OK, "", REACT_DOWN, 0);
	run(&t, TICK);
	ck_assert_str_eq(fx.line, SHADOW "down #dep: gone");
	run(&t, 2 * S);
	ck_assert_str_eq(fx.line, SHADOW "up");
	ck_assert_int_eq(t.s.held.state, NODE_DOWN);

	/* Shadow to off: HAProxy holds the down of before. */
	sw.mode_env = 1;
	run(&t, TICK);
	expect_note(0, true, "automation off (LBAGENT_MODE=off)" OFF_TAIL
	    "down since 2026-01-01 00:00:01" HELD_TAIL);
	ck_assert_str_eq(fx.line, "# lbagent automation off");
	ck_assert(!t.s.has_would);

	sw.mode_env = 0;
	run(&t, TICK);
	expect_note(0, true, "automation on again: counting starts now (no "
	    "going out within down_after 1s)");
	ck_assert_str_eq(fx.line, "up");
	sw.mode_env = -1;
	service_free(&t.s);
}
END_TEST

/* A reload in shadow mode keeps the would-be line and its keys. */
START_TEST(shadow_carry_over)
{
	struct tsvc	t, n;

	sw.conf_shadow = true;
	init(&t, "web");
	probe(&t, 0, "half", PROBE_CRIT, "slow", REACT_WEIGHT, 50);
	step_at(&t, true);
	run(&t, 2 * S);
	ck_assert_str_eq(fx.line, SHADOW "up 50% #half: slow");
	ck_assert_str_eq(ask(&t, "10.0.0.1", "web"),
	    SHADOW "up 50% #half: slow\n");
	memset(&n, 0, sizeof(n));
	ck_assert_int_eq(service_init(&n.s, "web", "/state", &conf, false,
	    FORGET, now), 0);
	service_carry_over(&n.s, &t.s);
	service_free(&t.s);
	n.n = t.n;
	memcpy(n.in, t.in, sizeof(n.in));
	memcpy(n.settled, t.settled, sizeof(n.settled));
	ck_assert_str_eq(ask(&n, "10.0.0.1", "web"), SHADOW "up 50%\n");
	probe(&n, 0, "half", PROBE_OK, "", REACT_WEIGHT, 50);
	run(&n, 2 * S);
	ck_assert_str_eq(ask(&n, "10.0.0.1", "web"), SHADOW "up 100%\n");
	ck_assert_str_eq(ask(&n, "10.0.0.2", "web"), SHADOW "up\n");
	service_free(&n.s);
}
END_TEST

/*
 * A reason whose number moves under a steady weight: the reply changes at
 * each step, the log says it at warning once a minute per reason shape
 * (the others at debug, counted in the next), any other change at once.
 */
START_TEST(number_changes_logged_once_a_minute)
{
	struct tsvc	t;

	init(&t, "web");
	probe(&t, 0, "api", PROBE_OK, "", REACT_WEIGHT, 50);
	step_at(&t, true);
	run(&t, 1 * S);
	probe(&t, 0, "api", PROBE_CRIT, "p99 253ms", REACT_WEIGHT, 50);
	run(&t, 2 * S);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 50% #api: p99 253ms\n");
	ck_assert_msg(logged("W service web: reply changed") == 1, "%s", logbuf);
	probe(&t, 0, "api", PROBE_CRIT, "p99 254ms", REACT_WEIGHT, 50);
	step(&t);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 50% #api: p99 254ms\n");
	probe(&t, 0, "api", PROBE_CRIT, "p99 25.5ms", REACT_WEIGHT, 50);
	step(&t);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 50% #api: p99 25.5ms\n");
	ck_assert_uint_eq(logged("W service web: reply changed"), 1);
	ck_assert_uint_eq(logged("D service web: reply changed"), 2);
	/* A minute after the last one logged: at warning, with the count. */
	run(&t, SERVICE_NUMBER_LOG_MS);
	probe(&t, 0, "api", PROBE_CRIT, "p99 256ms", REACT_WEIGHT, 50);
	step(&t);
	ck_assert_uint_eq(logged("W service web: reply changed"), 2);
	ck_assert_msg(logged("\"up 50% #api: p99 256ms\" (was \"up 50% #api: "
	    "p99 25.5ms\") (and 2 more like it, at debug level)") == 1, "%s",
	    logbuf);
	/* Another reason is a change in kind: at once, whenever. */
	probe(&t, 0, "api", PROBE_CRIT, "queue deep", REACT_WEIGHT, 50);
	step(&t);
	ck_assert_uint_eq(logged("W service web: reply changed"), 3);
	probe(&t, 0, "api", PROBE_CRIT, "p99 257ms", REACT_WEIGHT, 50);
	step(&t);
	ck_assert_uint_eq(logged("W service web: reply changed"), 4);
	ck_assert_uint_eq(logged("D service web: reply changed"), 2);
	service_free(&t.s);
}
END_TEST

/*
 * Capacity (issue 31): a factor coming or going is a change in kind (at
 * warning), its moves and the limit's are number changes (once a minute
 * at warning); the history keeps the health weight's kind; a 50% halves
 * the factor; the restore word follows a weight over 100% too.
 */
START_TEST(capacity_factor_logged_as_reply_changes)
{
	struct tsvc	t;
	size_t		h;

	init(&t, "web");
	probe(&t, 0, "api", PROBE_OK, "", REACT_WEIGHT, 50);
	step_at(&t, true);
	h = history_count(&t.s.history);
	cap_pct = 125;
	step(&t);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 125%\n");
	ck_assert_uint_eq(logged("W service web: reply changed"), 1);
	cap_pct = 121;
	cap_maxconn = 17;
	step(&t);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 121% maxconn:17\n");
	cap_maxconn = 16;
	step(&t);
	ck_assert_uint_eq(logged("W service web: reply changed"), 1);
	ck_assert_uint_eq(logged("D service web: reply changed"), 2);
	probe(&t, 0, "api", PROBE_CRIT, "slow", REACT_WEIGHT, 50);
	run(&t, 2 * S);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 60% maxconn:16 #api: "
	    "slow\n");
	ck_assert_uint_eq(logged("W service web: reply changed"), 2);
	probe(&t, 0, "api", PROBE_OK, "", REACT_WEIGHT, 50);
	run(&t, 2 * S);
	/* Stale: the health weight, and 100% owed to who saw 121%. */
	cap_pct = 0;
	cap_maxconn = 0;
	step(&t);
	ck_assert_str_eq(ask(&t, "10.0.0.1", ""), "up 100%\n");
	ck_assert_msg(logged("W service web: reply changed") == 4, "%s",
	    logbuf);
	/* The history saw the warn and its end, nothing of the factor. */
	ck_assert_uint_eq(history_count(&t.s.history), h + 2);
	service_free(&t.s);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("service");
	TCase	*tc = tcase_create("service");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, first_reply_then_a_drain_marker_and_its_ready);
	tcase_add_test(tc, a_claim_nobody_saw_sends_nothing);
	tcase_add_test(tc, maint_wins_over_drain_and_drain_stays);
	tcase_add_test(tc, kill_switch_sources_and_precedence);
	tcase_add_test(tc, markers_act_while_off);
	tcase_add_test(tc, off_over_a_node_down_by_its_rules);
	tcase_add_test(tc, off_keeps_a_weight_claimed_across_a_restart);
	tcase_add_test(tc, off_marker_live_and_counts_restart);
	tcase_add_test(tc, marker_over_a_failing_target);
	tcase_add_test(tc, unsettled_probes_never_bring_it_back);
	tcase_add_test(tc, restart_while_draining);
	tcase_add_test(tc, restart_with_a_ready_owed);
	tcase_add_test(tc, restart_while_down);
	tcase_add_test(tc, restart_while_down_with_the_probe_removed);
	tcase_add_test(tc, restart_while_down_with_probes_removed_fits_the_reason);
	tcase_add_test(tc, services_share_the_node_markers);
	tcase_add_test(tc, guard_holds_lets_out_latches_and_restart_ends_it);
	tcase_add_test(tc, marker_guard_warns_once_when_nobody_else_serves);
	tcase_add_test(tc, carry_over_keeps_claims_and_recomposes);
	tcase_add_test(tc, shadow_precedence);
	tcase_add_test(tc, shadow_reply_text);
	tcase_add_test(tc, shadow_to_auto_waits_down_after);
	tcase_add_test(tc, shadow_restart_keeps_what_haproxy_holds);
	tcase_add_test(tc, mode_ended_by_a_restart_is_a_switch);
	tcase_add_test(tc, shadow_to_auto_from_where_the_engine_stands);
	tcase_add_test(tc, shadow_carry_over);
	tcase_add_test(tc, number_changes_logged_once_a_minute);
	tcase_add_test(tc, capacity_factor_logged_as_reply_changes);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
