/*
 * The peer guard over a fake clock: scripted peer answers (and load
 * balancer stats) judged by peer_view.c, the verdicts fed to the transition
 * engine every 250 ms, rounds every second and whenever the engine asks
 * for a fresh one, as the agent does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/transition.h"
#include "lbagent/daemon/peers.h"
#include "testutil.h"

#define TICK	250
#define S	1000
#define NO_TIME	INT64_MIN

static struct transition_conf conf = {
	.down_after_ms = 30 * S,
	.degrade_after_ms = 10 * S,
	.up_after_ms = 60 * S,
	.restore_after_ms = 30 * S,
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

#define NPEERS	3
#define NLBS	2

static struct transition	*t;
static struct decision		out, up, down;
static struct transition_notes	notes;
static int64_t			now, last_round;
static char			all_notes[16384];
static struct peer_source	peers[NPEERS];
static size_t			npeers;
static struct lb_source		lbs[NLBS];
static size_t			nlbs;
static struct peer_verdict	verdicts[NPEERS];
static struct peer_view		view;
static unsigned			rounds;
static bool			answers_late;	/* rounds take 3 s to answer */

static const char *const CSV_HEAD = "# pxname,svname,qcur,status,weight,"
    "iweight,agent_status,agent_desc,\n";

/* The guard's state in engine e. */
static enum guard_state
gstate(const struct transition *e)
{
	struct guard_view	v;

	guard_view(e, &v);
	return v.state;
}

static void
set_answer(size_t i, const char *json)
{
	const char	*why;

	peer_view_answer_free(&peers[i].ans);
	peers[i].took_ms = 5;
	if (peer_view_answer_parse(json, strlen(json), &peers[i].ans,
	    &why) == -1) {
		peers[i].answered = false;
		snprintf(peers[i].error, sizeof(peers[i].error), "bad answer: %s",
		    why);
		return;
	}
	peers[i].answered = true;
	peers[i].error[0] = '\0';
	if (peers[i].pinned[0] == '\0')
		memcpy(peers[i].pinned, peers[i].ans.node_id,
		    sizeof(peers[i].pinned));
}

static void
set_error(size_t i, const char *error)
{
	peer_view_answer_free(&peers[i].ans);
	peers[i].answered = false;
	snprintf(peers[i].error, sizeof(peers[i].error), "%s", error);
}

/* A peer's public /status with its default service serving or not. */
static void
set_serving(size_t i, const char *id, bool serving)
{
	char	json[256];

	snprintf(json, sizeof(json), "{\"node_id\": \"%s\", \"state\": \"up\", "
	    "\"services\": [{\"name\": \"\", \"state\": \"%s\", \"serving\": "
	    "%s}]}", id, serving ? "up" : "down", serving ? "true" : "false");
	set_answer(i, json);
}

/* Load balancer i answered text, read as the daemon reads it. */
static void
set_lb_text(size_t i, const char *text)
{
	static const char	*const backends[] = { "be" };
	struct hastats_reader	*r = hastats_reader_new(backends, 1, NULL);
	const char		*why;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(hastats_reader_feed(r, text, strlen(text), &why), 0);
	hastats_table_free(lbs[i].table);
	lbs[i].table = hastats_reader_finish(r, &why);
	ck_assert_ptr_nonnull(lbs[i].table);
	hastats_reader_free(r);
}

static void
set_lb(size_t i, const char *rows)
{
	char	*text;

	ck_assert_int_ne(asprintf(&text, "%s%s", CSV_HEAD, rows), -1);
	set_lb_text(i, text);
	free(text);
	lbs[i].answered = true;
	lbs[i].took_ms = 5;
	lbs[i].error[0] = '\0';
}

/* A Runtime API answer: the CSV rows, then the servers state's. */
static void
set_lb_state(size_t i, const char *rows, const char *state_rows)
{
	char	*text;

	ck_assert_int_ne(asprintf(&text, "%s%s\n1\n# be_id be_name srv_id "
	    "srv_name srv_iweight\n%s", CSV_HEAD, rows, state_rows), -1);
	set_lb_text(i, text);
	free(text);
	lbs[i].answered = true;
	lbs[i].took_ms = 5;
	lbs[i].error[0] = '\0';
}

static void
do_round(void)
{
	peer_view_aggregate(peers, npeers, lbs, nlbs, "", &conf, "n1", now,
	    verdicts, &view);
	last_round = now;
	rounds++;
}

static void
start(void)
{
	size_t	i;

	for (i = 0; i < NPEERS; i++) {
		peer_view_answer_free(&peers[i].ans);
		memset(&peers[i], 0, sizeof(peers[i]));
		snprintf(peers[i].text, sizeof(peers[i].text),
		    "http://10.0.0.%zu:9506/status", i + 11);
	}
	for (i = 0; i < NLBS; i++) {
		hastats_table_free(lbs[i].table);
		memset(&lbs[i], 0, sizeof(lbs[i]));
		snprintf(lbs[i].text, sizeof(lbs[i].text), "lb%zu",
		    i + 1);
	}
	npeers = 1;
	nlbs = 0;
	now = 1000000;
	last_round = NO_TIME;
	rounds = 0;
	answers_late = false;
	memset(&view, 0, sizeof(view));
	view.round_ms = NO_TIME;
	view.served_ms = now;
	decision_up(&up);
	decision_up(&down);
	down.state = NODE_DOWN;
	snprintf(down.reason, sizeof(down.reason), "client-api: HTTP 503");
	transition_free(t);
	t = transition_new(&conf, now);
	ck_assert_ptr_nonnull(t);
	all_notes[0] = '\0';
}

/* One evaluation, with a round every second and when the engine asks. */
static void
eval(const struct decision *d)
{
	size_t	i;

	if (last_round == NO_TIME || now - last_round >= S)
		do_round();
	transition_evaluate(t, d, true, &view, now, &out, &notes);
	for (i = 0; i < notes.count; i++) {
		strncat(all_notes, notes.n[i].text,
		    sizeof(all_notes) - strlen(all_notes) - 2);
		strcat(all_notes, "\n");
	}
	/* Asked: a round now (its answer seen at the next evaluation). */
	if (guard_need_ms(t) != NO_TIME && view.round_ms < guard_need_ms(t) &&
	    !answers_late)
		do_round();
}

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

static size_t
count(const char *hay, const char *needle)
{
	size_t	n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay++)
		n++;
	return n;
}

START_TEST(goes_out_while_another_serves)
{
	start();
	set_serving(0, "n2", true);
	hold(&down, 30 * S - TICK);
	ck_assert_int_eq(out.state, NODE_UP);
	now += TICK;
	hold(&down, TICK);
	ck_assert_int_eq(out.state, NODE_DOWN);
	ck_assert_ptr_nonnull(strstr(all_notes, "peer-guard: going out: "
	    "serving: n2"));
	ck_assert_int_eq(gstate(t), GUARD_WATCHING);
	/* The others keep serving through just_out: it stays out. */
	now += TICK;
	hold(&down, 20 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
}
END_TEST

START_TEST(going_out_waits_for_a_round_asked_then)
{
	start();
	set_serving(0, "n2", true);
	answers_late = true;	/* only the 1 s rounds */
	hold(&down, 30 * S);
	/* Due at 30 s; the last round began before: it asks, and waits. */
	if (out.state == NODE_UP) {
		ck_assert_int_eq(gstate(t), GUARD_ASKING);
		ck_assert(guard_need_ms(t) != NO_TIME);
		ck_assert(view.round_ms < guard_need_ms(t));
	}
	now += TICK;
	hold(&down, S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	/* The round it went out on started after it was due. */
	ck_assert(view.round_ms >= transition_since_ms(t) - S);
}
END_TEST

START_TEST(stays_in_when_no_other_node_serves)
{
	start();
	set_serving(0, "n2", false);
	hold(&down, 90 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_eq(out.weight, 100);
	ck_assert_str_eq(out.reason, "peer-guard: client-api failing but no "
	    "other node serving");
	ck_assert_int_eq(gstate(t), GUARD_HOLDING);
	{
		struct transition_pending	pd;
		char				text[160];

		ck_assert(transition_pending(t, now, &pd));
		transition_pending_text(t, &pd, text, sizeof(text));
		ck_assert_str_eq(text, "failing for 1m30s; held in by the peer "
		    "guard: no other node serving");
	}
	/* Said once, with who and why. */
	ck_assert_uint_eq(count(all_notes, "peer-guard: staying in"), 1);
	ck_assert_ptr_nonnull(strstr(all_notes, "peer-guard: staying in "
	    "although failing (client-api: HTTP 503): no other node serving "
	    "(n2: not serving)"));
	/* The other node serves again: out at the next round. */
	set_serving(0, "n2", true);
	now += TICK;
	hold(&down, S + TICK);
	ck_assert_int_eq(out.state, NODE_DOWN);
}
END_TEST

START_TEST(held_in_at_its_weight_never_at_zero)
{
	struct decision	drain = up, half = up;

	start();
	set_serving(0, "n2", false);
	drain.weight = 0;
	snprintf(drain.reason, sizeof(drain.reason), "disk: 97%% used");
	hold(&drain, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_eq(out.weight, 100);
	ck_assert_str_eq(out.reason, "peer-guard: disk failing but no other "
	    "node serving");
	/* At 50% by the rules, then failing: held at 50%, not raised. */
	start();
	set_serving(0, "n2", false);
	half.weight = 50;
	hold(&half, 15 * S);
	ck_assert_uint_eq(out.weight, 50);
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_eq(out.weight, 50);
	/* Weight reductions are not guarded. */
	start();
	set_serving(0, "n2", false);
	hold(&half, 15 * S);
	ck_assert_uint_eq(out.weight, 50);
	ck_assert_int_eq(gstate(t), GUARD_WATCHING);
}
END_TEST

START_TEST(back_after_alone_grace_and_out_again)
{
	int64_t	gone;

	start();
	set_serving(0, "n2", true);
	hold(&down, 31 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	/* Past just_out, the other node stops serving. */
	hold(&down, 15 * S);
	set_serving(0, "n2", false);
	gone = now;
	now += TICK;
	hold(&down, 30 * S - 2 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	now += TICK;
	hold(&down, 3 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_eq(out.weight, 100);
	ck_assert_int_eq(gstate(t), GUARD_BACK_ALONE);
	ck_assert(transition_since_ms(t) - gone >= 30 * S - S);
	ck_assert_ptr_nonnull(strstr(out.reason, "peer-guard: no other node "
	    "served for 3"));
	ck_assert_ptr_nonnull(strstr(out.reason, "; client-api failing"));
	ck_assert_ptr_nonnull(strstr(all_notes, "(alone_grace 30s; n2: not "
	    "serving)"));
	/* Still failing and alone: stays in, saying so once. */
	now += TICK;
	hold(&down, 20 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_eq(count(all_notes, "peer-guard: up (was down)"), 1);
	ck_assert_uint_eq(count(all_notes, "staying in"), 0);
	/* Another node serves again: out at once (down_after long passed). */
	set_serving(0, "n2", true);
	now += TICK;
	hold(&down, 2 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
}
END_TEST

START_TEST(look_again_brings_it_back_and_latches)
{
	int64_t	went;

	start();
	set_serving(0, "n2", true);
	hold(&down, 30 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	went = transition_since_ms(t);
	/* n2 went out at the same moment: the look again sees nobody. */
	set_serving(0, "n2", false);
	now += TICK;
	hold(&down, 1250 - TICK);
	ck_assert_int_eq(out.state, NODE_DOWN);	/* not before recheck_after */
	now += TICK;
	hold(&down, S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert(now - went <= 3 * S);
	ck_assert_int_eq(gstate(t), GUARD_LATCHED);
	ck_assert_ptr_nonnull(strstr(all_notes, "right after going out: no "
	    "other node serving (n2: not serving); latched: no automated going "
	    "out until lbagent restarts"));
	ck_assert_str_eq(out.reason, "peer-guard: latched until restart; "
	    "client-api failing");
	/* Others serve again, it still fails: it stays in. */
	set_serving(0, "n2", true);
	now += TICK;
	hold(&down, 120 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_int_eq(gstate(t), GUARD_LATCHED);
	/* Passing, then failing again: still latched, said again once. */
	hold(&up, 5 * S);
	ck_assert_str_eq(out.reason, "");
	hold(&down, 60 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_eq(count(all_notes, "latched since coming back"), 1);
	/* Not persisted: a restart forgets the latch. */
	{
		struct transition	*n = transition_new(&conf, now);
		json_t			*j = transition_to_json(t, now);
		const char		*why;

		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(transition_from_json(n, j, now, 1000, true,
		    &why), 0);
		ck_assert_int_ne(gstate(n), GUARD_LATCHED);
		transition_free(n);
		json_decref(j);
	}
}
END_TEST

START_TEST(the_look_again_is_only_within_just_out)
{
	start();
	set_serving(0, "n2", true);
	hold(&down, 31 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	/* Rounds within just_out all show n2 serving; then n2 goes. */
	now += TICK;
	hold(&down, 11 * S);
	set_serving(0, "n2", false);
	now += TICK;
	hold(&down, 5 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	ck_assert_int_eq(gstate(t), GUARD_WATCHING);
}
END_TEST

START_TEST(every_evaluation_within_just_out_asks)
{
	unsigned	before;

	start();
	set_serving(0, "n2", true);
	hold(&down, 31 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	now += 2 * S;
	before = rounds;
	hold(&down, 2 * S);	/* 9 evaluations, each asking */
	ck_assert_uint_ge(rounds - before, 8);
	now += 10 * S;
	before = rounds;
	hold(&down, 2 * S);	/* after just_out: the 1 s rounds only */
	ck_assert_uint_le(rounds - before, 3);
}
END_TEST

START_TEST(bad_answers_count_as_not_serving)
{
	static const struct {
		const char	*json;
		const char	*why;
	} cases[] = {
		{ "not json at all", "bad answer: not JSON" },
		{ "[1, 2]", "bad answer: not a status document" },
		{ "{}", "bad answer: no valid node_id" },
		{ "{\"node_id\": \"\"}", "bad answer: no valid node_id" },
		{ "{\"node_id\": \"n2 x\"}", "bad answer: no valid node_id" },
		{ "{\"node_id\": 7}", "bad answer: no valid node_id" },
		/* The configuration's one name check, length too. */
		{ "{\"node_id\": \"n2/x\"}", "bad answer: no valid node_id" },
		{ "{\"node_id\": \"" "n234567890123456789012345678901234567890"
		  "12345678901234567890123456\"}",
		  "bad answer: no valid node_id" },
		{ "{\"node_id\": \"n2\"}", "bad answer: no services" },
		{ "{\"node_id\": \"n2\", \"services\": {}}",
		  "bad answer: no services" },
		{ "{\"node_id\": \"n2\", \"services\": [{\"name\": \"\"}]}",
		  "bad answer: a service without a valid name, serving or "
		  "server" },
		{ "{\"node_id\": \"n2\", \"services\": [{\"name\": \"\", "
		  "\"serving\": \"yes\"}]}", "bad answer: a service without a "
		  "valid name, serving or server" },
		{ "{\"node_id\": \"n2\", \"node_id\": \"n3\", \"services\": []}",
		  "bad answer: not JSON" },
		{ "{\"node_id\": \"n2\", \"services\": [{\"name\": \"web\", "
		  "\"serving\": true}]}", "has no service ''" },
	};
	size_t	i;
	char	*huge;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		start();
		set_answer(0, cases[i].json);
		do_round();
		ck_assert_msg(!view.other_serving, "%s", cases[i].json);
		ck_assert_str_eq(verdicts[0].why, cases[i].why);
		hold(&down, 40 * S);
		ck_assert_int_eq(out.state, NODE_UP);
	}
	/* Larger than any status document: refused unread. */
	start();
	huge = malloc(PEERS_ANSWER_MAX + 2);
	ck_assert_ptr_nonnull(huge);
	memset(huge, ' ', PEERS_ANSWER_MAX + 1);
	huge[PEERS_ANSWER_MAX + 1] = '\0';
	{
		static const char doc[] = "{\"node_id\": \"n2\", \"services\": "
		    "[{\"name\": \"\", \"serving\": true}]}";

		memcpy(huge, doc, sizeof(doc) - 1);	/* spaces follow */
	}
	set_answer(0, huge);
	free(huge);
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(verdicts[0].why, "bad answer: answer too large");
	/* What the fetch reports for an answer past its cap, or none. */
	set_error(0, "answer larger than 64 KiB");
	do_round();
	ck_assert_str_eq(view.why, "http://10.0.0.11:9506/status: answer "
	    "larger than 64 KiB");
}
END_TEST

START_TEST(slow_and_unreachable_peers_are_not_serving)
{
	struct transition_conf	slow = conf;

	start();
	npeers = 3;
	set_serving(0, "n2", true);
	peers[0].took_ms = 2500;		/* past the 2 s timeout */
	set_error(1, "timeout");
	set_error(2, "connection refused");
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(view.why, "n2: timeout; http://10.0.0.12:9506/status: "
	    "timeout; http://10.0.0.13:9506/status: connection refused");
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	/* A service allowing 3 s takes the same answer. */
	slow.peer_timeout_ms = 3 * S;
	peer_view_aggregate(peers, npeers, lbs, nlbs, "", &slow, "n1", now,
	    verdicts, &view);
	ck_assert(view.other_serving);
	ck_assert_str_eq(view.who, "n2");
}
END_TEST

START_TEST(self_and_unexpected_node_ids)
{
	start();
	npeers = 2;
	set_serving(0, "n1", true);	/* this node, in the shared list */
	set_serving(1, "n2", true);
	do_round();
	ck_assert(verdicts[0].self);
	ck_assert(view.other_serving);
	ck_assert_str_eq(view.who, "n2");
	/* Only itself listed: nobody else serves. */
	npeers = 1;
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(view.why, "no other node listed");
	/* The address of n2 now answers as n9: not the node we asked. */
	npeers = 2;
	set_serving(1, "n9", true);
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(verdicts[1].why, "answered as n9, not n2 (the node "
	    "first seen there; a reload accepts it)");
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
}
END_TEST

START_TEST(load_balancers_must_show_the_peer_serving)
{
	start();
	nlbs = 2;
	set_serving(0, "n2", true);
	set_lb(0, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,MAINT,100,100,L7OK,,\n");
	set_lb(1, "be,n2,0,UP,100,100,L7OK,,\n");
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(verdicts[0].why, "MAINT on lb1");
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	/* Every one that answered must show it UP with a weight. */
	set_lb(0, "be,n2,0,UP,0,100,L7OK,,\n");
	do_round();
	ck_assert_str_eq(verdicts[0].why, "weight 0 on lb1");
	set_lb(0, "be,n2,0,DOWN (agent),100,100,L7STS,,\n");
	do_round();
	ck_assert_str_eq(verdicts[0].why, "DOWN (agent) on lb1");
	set_lb(0, "be,n20,0,UP,100,100,L7OK,,\n");
	do_round();
	ck_assert_str_eq(verdicts[0].why, "no server be/n2 on lb1");
	/* One that did not answer is left out; none answering is no. */
	lbs[0].answered = false;
	do_round();
	ck_assert(view.other_serving);
	lbs[1].took_ms = 5000;
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(verdicts[0].why, "no load balancer answered");
	/* Both UP ("UP 1/3" is still up): serving. */
	set_lb(0, "be,n2,0,UP 1/3,100,100,L7OK,,\n");
	set_lb(1, "be,n2,0,UP,50,100,L7OK,,\n");
	do_round();
	ck_assert(view.other_serving);
	/* The peer's own server name, when it publishes one. */
	set_answer(0, "{\"node_id\": \"n2\", \"services\": [{\"name\": \"\", "
	    "\"serving\": true, \"server\": \"web2\"}]}");
	do_round();
	ck_assert_str_eq(verdicts[0].why, "no server be/web2 on lb1");
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
}
END_TEST

/*
 * No peers, only load balancers: another server of the backend UP with a
 * weight above 0 on every load balancer that answered (at least one).
 */
START_TEST(load_balancers_alone)
{
	start();
	npeers = 0;
	nlbs = 2;
	set_lb(0, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,UP,100,100,L7OK,,\n"
	    "be,n3,0,MAINT,100,100,,,\nbe,BACKEND,0,UP,200,,,,\n"
	    "other,n4,0,UP,100,100,,,\n");
	set_lb(1, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,UP,50,100,L7OK,,\n"
	    "be,n3,0,UP,100,100,,,\n");
	do_round();
	ck_assert(view.other_serving);
	ck_assert_str_eq(view.who, "n2");
	/* It goes out while n2 serves. */
	hold(&down, 31 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	ck_assert_ptr_nonnull(strstr(all_notes, "serving: n2"));
	/*
	 * This node's own row never counts (however it looks), nor another
	 * backend's, nor a server UP on one load balancer only.
	 */
	set_lb(0, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,UP,0,100,L7OK,,\n"
	    "be,n3,0,MAINT,100,100,,,\nother,n4,0,UP,100,100,,,\n");
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(view.who, "");
	ck_assert_str_eq(view.why, "no other server of be UP with a weight "
	    "above 0 on every load balancer that answered");
	/* Another one serving on the first, nobody but this node on the next. */
	set_lb(0, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,UP,100,100,L7OK,,\n");
	set_lb(1, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,DOWN,100,100,L7OK,,\n");
	do_round();
	ck_assert(!view.other_serving);
	set_lb(1, "be,n1,0,UP,100,100,L7OK,,\nbe,n2,0,UP,50,100,L7OK,,\n"
	    "be,n3,0,UP,100,100,,,\n");
	/* One that does not answer is left out... */
	lbs[0].answered = false;
	snprintf(lbs[0].error, sizeof(lbs[0].error), "connection refused");
	do_round();
	ck_assert(view.other_serving);
	ck_assert_str_eq(view.who, "n2, n3");
	ck_assert_str_eq(view.why, "lb1: connection refused");
	/* ... one too slow too; none answering is nobody serving. */
	lbs[1].took_ms = 5000;
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(view.why, "lb1: connection refused; lb2: timeout; "
	    "no load balancer answered");
	/* Malformed stats are no answer. */
	set_lb(0, "be,n2,0,UP,many,100,,,\n");
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(view.why, "lb1: the weight is not a number; lb2: "
	    "timeout; no load balancer answered");
	/* The server name, when this node's is not its node_id. */
	start();
	npeers = 0;
	nlbs = 1;
	snprintf(conf.server, sizeof(conf.server), "web1");
	set_lb(0, "be,web1,0,UP,100,100,,,\nbe,n1,0,UP,100,100,,,\n");
	do_round();
	ck_assert(view.other_serving);
	ck_assert_str_eq(view.who, "n1");
	set_lb(0, "be,web1,0,UP,100,100,,,\n");
	do_round();
	ck_assert(!view.other_serving);
	/* Last in: held in, never at zero. */
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	conf.server[0] = '\0';
}
END_TEST

START_TEST(what_each_load_balancer_shows_of_this_node)
{
	struct lb_view	v;
	struct decision	told = up;

	start();
	set_lb_state(0, "be,n1,0,UP,1,1,L7OK,,\n", "2 be 1 n1 1\n");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert(v.found);
	ck_assert_str_eq(v.row.status, "UP");
	ck_assert_int_eq(v.row.initial_weight, 1);
	ck_assert_uint_eq(v.nwarnings, 1);
	ck_assert_str_eq(v.warnings[0], "initial weight 1 is below 10: "
	    "percentages truncate (50% gives 0, every percentage below 100% "
	    "gives 0)");
	/* The configured weight from the servers state, not the CSV's. */
	set_lb_state(0, "be,n1,0,MAINT,2,2,L7OK,,\n", "2 be 1 n1 5\n");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert_int_eq(v.row.weight, 2);
	ck_assert_int_eq(v.row.initial_weight, 5);
	ck_assert_uint_eq(v.nwarnings, 2);
	ck_assert_str_eq(v.warnings[0], "initial weight 5 is below 10: "
	    "percentages truncate (50% gives 2)");
	ck_assert_str_eq(v.warnings[1], "shows MAINT, which lbagent did not "
	    "ask for (an operator's hand? lbagent leaves it as it is)");
	set_lb_state(0, "be,n1,0,UP,50,50,L7OK,,\n", "2 be 1 n1 100\n");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert_int_eq(v.row.initial_weight, 100);
	ck_assert_uint_eq(v.nwarnings, 0);
	/* The stats page (HTTP) has no configured weight on 2.6: unknown. */
	set_lb(0, "be,n1,0,UP,1,1,L7OK,,\n");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert_int_eq(v.row.initial_weight, -1);
	ck_assert_uint_eq(v.nwarnings, 0);
	/* A MAINT lbagent asked for (a maint marker) is no surprise. */
	told.state = NODE_MAINT;
	set_lb(0, "be,n1,0,MAINT,100,100,L7OK,,\n");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert_uint_eq(v.nwarnings, 0);
	told.state = NODE_UP;
	set_lb(0, "be,n1,0,DRAIN,100,100,L7OK,,\n");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert_uint_eq(v.nwarnings, 1);
	/* Not there, not answered. */
	peer_view_lb(&lbs[0], "be", "n7", &told, &v);
	ck_assert(!v.found);
	ck_assert_str_eq(v.error, "no server be/n7");
	lbs[0].answered = false;
	snprintf(lbs[0].error, sizeof(lbs[0].error), "timeout");
	peer_view_lb(&lbs[0], "be", "n1", &told, &v);
	ck_assert_str_eq(v.error, "timeout");
}
END_TEST

/*
 * A source marked answered but holding no data (what a reload that gave
 * one source's CSV to two left behind) counts as not answered: judged,
 * and in this node's view for the status, never read.
 */
START_TEST(answered_without_data_is_not_answered)
{
	struct lb_view	v;

	start();
	nlbs = 2;
	set_serving(0, "n2", true);
	set_lb(0, "be,n2,0,UP,100,100,L7OK,,\n");
	set_lb(1, "be,n2,0,UP,100,100,L7OK,,\n");
	hastats_table_free(lbs[1].table);
	lbs[1].table = NULL;
	ck_assert(!peer_view_lb_ok(&lbs[1]));
	do_round();
	ck_assert(view.other_serving);
	lbs[0].answered = false;
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(verdicts[0].why, "no load balancer answered");
	peer_view_lb(&lbs[1], "be", "n1", &up, &v);
	ck_assert(!v.found);
	ck_assert_str_eq(v.error, "no answer yet");
	/* A peer answered without its document: no answer. */
	peer_view_answer_free(&peers[0].ans);
	ck_assert(peers[0].answered);
	ck_assert(!peer_view_peer_ok(&peers[0]));
	set_lb(0, "be,n2,0,UP,100,100,L7OK,,\n");
	do_round();
	ck_assert(!view.other_serving);
	ck_assert_str_eq(verdicts[0].why, "no answer yet");
}
END_TEST

/* alone_grace 0: back as soon as a round finds nobody, not before. */
START_TEST(zero_alone_grace)
{
	struct transition_conf	c = conf;

	start();
	c.alone_grace_ms = 0;
	c.just_out_ms = 0;
	c.recheck_after_ms = 0;
	transition_free(t);
	t = transition_new(&c, now);
	ck_assert_ptr_nonnull(t);
	set_serving(0, "n2", true);
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_DOWN);
	set_serving(0, "n2", false);
	now += TICK;
	hold(&down, 2 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_int_eq(gstate(t), GUARD_BACK_ALONE);
}
END_TEST

/* Long probe names are cut; what the guard says always shows. */
START_TEST(reasons_fit)
{
	static const char *const tails[] = { " failing but no other node serving",
	    " failing" };
	size_t	i;

	start();
	snprintf(down.reason, sizeof(down.reason), "%s", "a_very_long_probe_"
	    "name_number_one: HTTP 503; another_very_long_probe_name: timed "
	    "out; third: x");
	set_serving(0, "n2", false);
	hold(&down, 40 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_uint_le(strlen(out.reason), REASON_MAX);
	ck_assert_msg(strlen(out.reason) > strlen(tails[0]) &&
	    strcmp(out.reason + strlen(out.reason) - strlen(tails[0]),
	    tails[0]) == 0, "%s", out.reason);
	ck_assert(strncmp(out.reason, "peer-guard: a_very_long_probe_name_"
	    "number_one, another", 50) == 0);
	/* Latched, the same. */
	start();
	snprintf(down.reason, sizeof(down.reason), "%s", "a_very_long_probe_"
	    "name_number_one: HTTP 503; another_very_long_probe_name: timed "
	    "out; third: x");
	set_serving(0, "n2", true);
	hold(&down, 30 * S);
	set_serving(0, "n2", false);
	now += TICK;
	hold(&down, 3 * S);
	ck_assert_int_eq(gstate(t), GUARD_LATCHED);
	i = strlen(out.reason);
	ck_assert_uint_le(i, REASON_MAX);
	ck_assert_msg(i > strlen(tails[1]) && strcmp(out.reason + i -
	    strlen(tails[1]), tails[1]) == 0, "%s", out.reason);
}
END_TEST

START_TEST(no_guard_without_peers)
{
	start();
	transition_evaluate(t, &down, true, NULL, now, &out, &notes);
	ck_assert_int_eq(gstate(t), GUARD_OFF);
	now += 30 * S;
	transition_evaluate(t, &down, true, NULL, now, &out, &notes);
	ck_assert_int_eq(out.state, NODE_DOWN);
	ck_assert(guard_need_ms(t) == NO_TIME);
}
END_TEST

START_TEST(liveness_ages_as_rounds_pass)
{
	struct peer_liveness	l;
	int			i;

	peer_liveness_init(&l);
	ck_assert_int_eq(l.incarnation, -1);
	/* Never heard from: suspect until dead_after, then dead. */
	peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_SUSPECT);
	for (i = 0; i < 9; i++)
		peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_DEAD);
	/* A good answer: alive, its incarnation kept, no restart yet. */
	peer_liveness_round(&l, true, 4);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_ALIVE);
	ck_assert_int_eq(l.incarnation, 4);
	ck_assert_uint_eq(l.restarts, 0);
	ck_assert(!l.restarted);
	/* Two rounds missed: still alive; the third: suspect. */
	peer_liveness_round(&l, false, -1);
	peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_ALIVE);
	peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_SUSPECT);
	ck_assert_uint_eq(l.missed, 3);
	/* Suspect through the ninth, dead at the tenth. */
	for (i = 4; i <= 9; i++) {
		peer_liveness_round(&l, false, -1);
		ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10),
		    PEER_SUSPECT);
	}
	peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_DEAD);
	/* The incarnation last seen stays through the silence. */
	ck_assert_int_eq(l.incarnation, 4);
	/* Back with a higher incarnation: it restarted. */
	peer_liveness_round(&l, true, 5);
	ck_assert_int_eq(peer_liveness_verdict(&l, 3, 10), PEER_ALIVE);
	ck_assert(l.restarted);
	ck_assert_uint_eq(l.restarts, 1);
	ck_assert_int_eq(l.incarnation, 5);
	/* The same one again is no restart; nor is an answer without one. */
	peer_liveness_round(&l, true, 5);
	ck_assert(!l.restarted);
	peer_liveness_round(&l, true, -1);
	ck_assert(!l.restarted);
	ck_assert_int_eq(l.incarnation, 5);
	ck_assert_uint_eq(l.restarts, 1);
	/* Other bounds: suspect after 1, dead after 2. */
	peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 1, 2), PEER_SUSPECT);
	peer_liveness_round(&l, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&l, 1, 2), PEER_DEAD);
	ck_assert_str_eq(peer_alive_name(PEER_ALIVE), "alive");
	ck_assert_str_eq(peer_alive_name(PEER_SUSPECT), "suspect");
	ck_assert_str_eq(peer_alive_name(PEER_DEAD), "dead");
}
END_TEST

START_TEST(answer_carries_what_the_fleet_shows)
{
	start();
	set_answer(0, "{\"node_id\": \"n2\", \"incarnation\": 7, "
	    "\"services\": [{\"name\": \"\", \"state\": \"drain\", "
	    "\"weight\": 0, \"serving\": false, \"automation\": "
	    "\"auto\"}]}");
	ck_assert(peers[0].answered);
	ck_assert_int_eq(peers[0].ans.incarnation, 7);
	ck_assert_str_eq(peers[0].ans.svc[0].state, "drain");
	ck_assert_int_eq(peers[0].ans.svc[0].weight, 0);
	ck_assert_str_eq(peers[0].ans.svc[0].automation, "auto");
	/* Without them (an older lbagent): not given, still an answer. */
	set_answer(0, "{\"node_id\": \"n2\", \"services\": [{\"name\": "
	    "\"\", \"serving\": true, \"state\": \"UP!\", \"weight\": "
	    "-3}]}");
	ck_assert(peers[0].answered);
	ck_assert_int_eq(peers[0].ans.incarnation, -1);
	ck_assert_str_eq(peers[0].ans.svc[0].state, "");
	ck_assert_int_eq(peers[0].ans.svc[0].weight, -1);
	ck_assert_str_eq(peers[0].ans.svc[0].automation, "");
}
END_TEST

/* Pushes a peer's liveness to dead (information only, nothing reads it). */
static void
make_dead(size_t i)
{
	int	k;

	for (k = 0; k < 20; k++)
		peer_liveness_round(&peers[i].live, false, -1);
	ck_assert_int_eq(peer_liveness_verdict(&peers[i].live, 3, 10),
	    PEER_DEAD);
}

START_TEST(a_dead_verdict_changes_no_outcome)
{
	/* n2 serving, n3 dead: goes out at down_after as with n2 alone. */
	start();
	npeers = 2;
	set_serving(0, "n2", true);
	set_error(1, "connection refused");
	make_dead(1);
	hold(&down, 30 * S - TICK);
	ck_assert_int_eq(out.state, NODE_UP);
	now += TICK;
	hold(&down, TICK);
	ck_assert_int_eq(out.state, NODE_DOWN);
	/* A peer whose liveness says dead but that answers serving counts
	 * as serving: the verdict is not read by the judging. */
	start();
	set_serving(0, "n2", true);
	make_dead(0);
	do_round();
	ck_assert(view.other_serving);
	ck_assert(verdicts[0].serving);
	/* And with nobody else serving, held in as ever. */
	start();
	npeers = 2;
	set_serving(0, "n2", false);
	set_error(1, "connection refused");
	make_dead(1);
	hold(&down, 90 * S);
	ck_assert_int_eq(out.state, NODE_UP);
	ck_assert_int_eq(gstate(t), GUARD_HOLDING);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("guard");
	TCase	*tc = tcase_create("guard");

	tcase_add_test(tc, goes_out_while_another_serves);
	tcase_add_test(tc, going_out_waits_for_a_round_asked_then);
	tcase_add_test(tc, stays_in_when_no_other_node_serves);
	tcase_add_test(tc, held_in_at_its_weight_never_at_zero);
	tcase_add_test(tc, back_after_alone_grace_and_out_again);
	tcase_add_test(tc, look_again_brings_it_back_and_latches);
	tcase_add_test(tc, the_look_again_is_only_within_just_out);
	tcase_add_test(tc, every_evaluation_within_just_out_asks);
	tcase_add_test(tc, bad_answers_count_as_not_serving);
	tcase_add_test(tc, slow_and_unreachable_peers_are_not_serving);
	tcase_add_test(tc, self_and_unexpected_node_ids);
	tcase_add_test(tc, load_balancers_must_show_the_peer_serving);
	tcase_add_test(tc, load_balancers_alone);
	tcase_add_test(tc, what_each_load_balancer_shows_of_this_node);
	tcase_add_test(tc, answered_without_data_is_not_answered);
	tcase_add_test(tc, zero_alone_grace);
	tcase_add_test(tc, reasons_fit);
	tcase_add_test(tc, no_guard_without_peers);
	tcase_add_test(tc, liveness_ages_as_rounds_pass);
	tcase_add_test(tc, answer_carries_what_the_fleet_shows);
	tcase_add_test(tc, a_dead_verdict_changes_no_outcome);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
