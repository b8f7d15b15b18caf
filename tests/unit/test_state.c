/* The state file: round trip, corrupt files moved aside, atomic writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/core/history.h"
#include "lbagent/daemon/state.h"
#include "testutil.h"

static char	*dir;
static struct state_resume	res;

/* The clocks of a load or save. */
static struct state_clock *
clk(int64_t now, int64_t wall, int64_t boot, const char *boot_id)
{
	static struct state_clock	c[4];
	static unsigned			i;
	struct state_clock		*p = &c[i++ % 4];

	p->now_ms = now;
	p->wall_ms = wall;
	p->boot_ms = boot;
	snprintf(p->boot_id, sizeof(p->boot_id), "%s", boot_id);
	return p;
}

static void
setup(void)
{
	dir = tu_tmpdir();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static bool
exists(const char *name)
{
	char		path[1024];
	struct stat	sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) == 0;
}

/* Two services, the default ("") and "web", with fresh key tables. */
static void
two(struct state_service ss[2])
{
	memset(ss, 0, 2 * sizeof(*ss));
	ss[0].name = "";
	ss[0].keys = lbkeys_new(600000);
	ss[1].name = "web";
	ss[1].keys = lbkeys_new(600000);
}

static void
two_free(struct state_service ss[2])
{
	lbkeys_free(ss[0].keys);
	lbkeys_free(ss[1].keys);
}

START_TEST(none_then_round_trip)
{
	struct state_service	 ss[2], back[2];
	uint64_t		 inc = 99;
	bool			 created, changed;

	two(ss);
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res),
	    STATE_NONE);
	ck_assert_uint_eq(inc, 0);

	ss[0].has_decision = true;
	ss[0].decision.state = NODE_DRAIN;
	ss[0].decision.weight = 100;
	strcpy(ss[0].decision.reason, "kernel \"upgrade\"");
	lbkeys_claim(ss[0].keys, CLAIM_ADMIN);
	lbkeys_check(ss[0].keys, "127.0.0.2", "web", 3, 1000, &created, &changed,
	    NULL);
	lbkeys_check(ss[0].keys, "::1", "", 0, 1000, &created, &changed, NULL);
	ss[1].has_decision = true;
	ss[1].decision.state = NODE_UP;
	ss[1].decision.weight = 50;
	strcpy(ss[1].decision.reason, "preview: refused");
	lbkeys_claim(ss[1].keys, CLAIM_WEIGHT);
	lbkeys_check(ss[1].keys, "127.0.0.3", "web", 3, 1000, &created, &changed,
	    NULL);
	ck_assert_int_eq(state_save(dir, 7, ss, 2, clk(1000, 1700000000000, 0,
	    "b")), 0);
	ck_assert(exists("state.json"));
	ck_assert(!exists("state.json.tmp"));

	two(back);
	ck_assert_int_eq(state_load(dir, &inc, back, 2, clk(5, 1700000001000, 0,
	    "b"), &res),
	    STATE_LOADED);
	ck_assert_uint_eq(inc, 7);
	ck_assert(back[0].has_decision);
	ck_assert_int_eq(back[0].decision.state, NODE_DRAIN);
	ck_assert_str_eq(back[0].decision.reason, "kernel \"upgrade\"");
	ck_assert_uint_eq(lbkeys_claims(back[0].keys), CLAIM_ADMIN);
	ck_assert_uint_eq(lbkeys_count(back[0].keys), 2);
	ck_assert(back[1].has_decision);
	ck_assert_uint_eq(back[1].decision.weight, 50);
	ck_assert_uint_eq(lbkeys_claims(back[1].keys), CLAIM_WEIGHT);
	ck_assert_uint_eq(lbkeys_count(back[1].keys), 1);
	/* Released after the restart: every key that saw the claim is owed. */
	lbkeys_claim(back[0].keys, 0);
	ck_assert_uint_eq(lbkeys_owing(back[0].keys), 2);
	lbkeys_claim(back[1].keys, 0);
	ck_assert_uint_eq(lbkeys_owing(back[1].keys), 1);
	two_free(ss);
	two_free(back);
}
END_TEST

/*
 * What HAProxy holds (in shadow mode not the engine's state) survives a
 * restart, its since moved onto the new monotonic clock by wall time; a
 * file from before it was saved has none, and the engine stands for it.
 */
START_TEST(held_survives)
{
	struct state_service	 ss[2], back[2];
	uint64_t		 inc;

	two(ss);
	ss[0].has_held = true;
	ss[0].held.state = NODE_DOWN;
	strcpy(ss[0].held.reason, "api: HTTP 503");
	ss[0].held_since_ms = 400;
	ck_assert_int_eq(state_save(dir, 1, ss, 2, clk(1000, 1700000000000, 0,
	    "b")), 0);
	two(back);
	ck_assert_int_eq(state_load(dir, &inc, back, 2, clk(5, 1700000001000, 0,
	    "b"), &res), STATE_LOADED);
	ck_assert(back[0].has_held);
	ck_assert_int_eq(back[0].held.state, NODE_DOWN);
	ck_assert_uint_eq(back[0].held.weight, 0);
	ck_assert_str_eq(back[0].held.reason, "api: HTTP 503");
	/* 1.6 s before the load's wall time: 5 - 1,600 on the new clock. */
	ck_assert_int_eq(back[0].held_since_ms, -1595);
	ck_assert(!back[1].has_held);
	two_free(back);

	/* The wall clock went back past since: since is now. */
	two(back);
	ck_assert_int_eq(state_load(dir, &inc, back, 2, clk(5, 1699999990000, 0,
	    "b"), &res), STATE_LOADED);
	ck_assert(back[0].has_held);
	ck_assert_int_eq(back[0].held_since_ms, 5);
	two_free(back);

	free(tu_write(dir, "state.json", "{\"version\":1,\"incarnation\":1,"
	    "\"load_balancers\":[]}", -1));
	two(back);
	ck_assert_int_eq(state_load(dir, &inc, back, 2, clk(5, 1700000001000, 0,
	    "b"), &res), STATE_LOADED);
	ck_assert(!back[0].has_held);
	two_free(back);
	two_free(ss);
}
END_TEST

START_TEST(service_no_longer_configured_is_dropped)
{
	struct state_service	 ss[2], only;
	uint64_t		 inc;

	two(ss);
	ss[1].has_decision = true;
	ss[1].decision.state = NODE_DOWN;
	ck_assert_int_eq(state_save(dir, 3, ss, 2, clk(0, 0, 0, "b")), 0);
	memset(&only, 0, sizeof(only));
	only.name = "";
	only.keys = lbkeys_new(600000);
	ck_assert_int_eq(state_load(dir, &inc, &only, 1, clk(0, 0, 0, "b"),
	    &res), STATE_LOADED);
	ck_assert_uint_eq(inc, 3);
	lbkeys_free(only.keys);
	two_free(ss);
}
END_TEST

static void
expect_corrupt(const char *content)
{
	struct state_service	 ss[2];
	uint64_t		 inc = 5;
	char			 aside[1024];

	snprintf(aside, sizeof(aside), "%s/state.json.corrupt", dir);
	unlink(aside);
	free(tu_write(dir, "state.json", content, -1));
	two(ss);
	ck_assert_msg(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res) ==
	    STATE_CORRUPT,
	    "accepted: %s", content);
	ck_assert(!exists("state.json"));
	ck_assert(exists("state.json.corrupt"));
	ck_assert_uint_eq(inc, 0);
	ck_assert_uint_eq(lbkeys_count(ss[0].keys), 0);
	ck_assert_uint_eq(lbkeys_claims(ss[0].keys), 0);
	ck_assert_uint_eq(lbkeys_count(ss[1].keys), 0);
	ck_assert_uint_eq(lbkeys_claims(ss[1].keys), 0);
	ck_assert(!ss[0].has_decision);
	ck_assert(!ss[1].has_decision);
	ck_assert(!ss[0].has_held);
	ck_assert(!ss[1].has_held);
	two_free(ss);
}

START_TEST(corrupt_moved_aside)
{
	expect_corrupt("");
	expect_corrupt("{\"version\": 1, \"incarn");
	expect_corrupt("\x01\x02 binary");
	expect_corrupt("[]");
	expect_corrupt("{\"version\":2,\"incarnation\":1,\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":-1,\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"load_balancers\":{}}");
	expect_corrupt("{\"version\":1,\"incarnation\":1}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"sideways\",\"weight\":100,\"reason\":\"\"},"
	    "\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"up\",\"weight\":257,\"reason\":\"\"},"
	    "\"load_balancers\":[]}");
	/* A well-formed decision followed by a broken key: nothing half-loaded. */
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"drain\",\"weight\":100,\"reason\":\"\"},"
	    "\"load_balancers\":[{\"addr\":\"x\"}]}");
	expect_corrupt("{\"version\":1,\"version\":1,\"incarnation\":1,"
	    "\"load_balancers\":[]}");
	/* A good default service, then a broken named one: all or nothing. */
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"drain\",\"weight\":100,\"reason\":\"\"},"
	    "\"load_balancers\":[],\"services\":{\"web\":{\"decision\":"
	    "{\"state\":\"up\",\"weight\":-4,\"reason\":\"\"},"
	    "\"load_balancers\":[]}}}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,"
	    "\"load_balancers\":[],\"services\":[]}");
	/* What HAProxy holds: well formed, or the whole file is refused. */
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"held\":"
	    "{\"state\":\"down\",\"weight\":0,\"reason\":\"\"},"
	    "\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"held\":"
	    "{\"state\":\"sideways\",\"weight\":0,\"reason\":\"\","
	    "\"since\":1},\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"held\":"
	    "{\"state\":\"down\",\"weight\":0,\"reason\":\"\","
	    "\"since\":1},\"load_balancers\":[],\"services\":{\"web\":"
	    "{\"held\":[],\"load_balancers\":[]}}}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,"
	    "\"load_balancers\":[],\"services\":{\"\":{\"load_balancers\":[]}}}");
}
END_TEST

START_TEST(unreadable_moved_aside)
{
	struct state_service	 ss[2];
	uint64_t		 inc;
	char			 path[1024];

	snprintf(path, sizeof(path), "%s/state.json", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	two(ss);
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res),
	    STATE_CORRUPT);
	ck_assert(exists("state.json.corrupt"));
	two_free(ss);
}
END_TEST

START_TEST(reason_sanitized_on_load)
{
	struct state_service	 ss[2];
	uint64_t		 inc;

	free(tu_write(dir, "state.json", "{\"version\":1,\"incarnation\":3,"
	    "\"decision\":{\"state\":\"maint\",\"weight\":100,"
	    "\"reason\":\"evil\\nup\"},\"load_balancers\":[]}", -1));
	two(ss);
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res),
	    STATE_LOADED);
	ck_assert_str_eq(ss[0].decision.reason, "evil");
	two_free(ss);
}
END_TEST

/* The whole content of dir/name, or NULL. */
static char *
slurp(const char *d, const char *name)
{
	char	path[1024], *buf;
	FILE	*fp;
	size_t	n;

	snprintf(path, sizeof(path), "%s/%s", d, name);
	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	ck_assert_ptr_nonnull(buf = calloc(1, 65536));
	n = fread(buf, 1, 65535, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static bool
is_link(const char *name)
{
	char		path[1024];
	struct stat	sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
}

/*
 * Whoever may write in state_dir must not make lbagent write elsewhere:
 * a link (or a hard link) put where the temporary file goes is replaced,
 * never written through, and the state is saved all the same.
 */
START_TEST(save_never_writes_through_the_temporary_file)
{
	struct state_service	 ss[2];
	char			 tmp[1024], *victim, *text;
	uint64_t		 inc;

	victim = tu_write(dir, "victim", "precious\n", -1);
	snprintf(tmp, sizeof(tmp), "%s/state.json.tmp", dir);
	two(ss);
	ck_assert_int_eq(symlink(victim, tmp), 0);
	ck_assert_int_eq(state_save(dir, 5, ss, 2, clk(0, 0, 0, "b")), 0);
	ck_assert_str_eq(text = slurp(dir, "victim"), "precious\n");
	free(text);
	ck_assert(!exists("state.json.tmp"));
	ck_assert(!is_link("state.json"));
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res),
	    STATE_LOADED);
	ck_assert_uint_eq(inc, 5);
	/* A dangling one, and a hard link to a file of state_dir's. */
	ck_assert_int_eq(symlink("/nonexistent/x", tmp), 0);
	ck_assert_int_eq(state_save(dir, 6, ss, 2, clk(0, 0, 0, "b")), 0);
	ck_assert_int_eq(link(victim, tmp), 0);
	ck_assert_int_eq(state_save(dir, 7, ss, 2, clk(0, 0, 0, "b")), 0);
	ck_assert_str_eq(text = slurp(dir, "victim"), "precious\n");
	free(text);
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res),
	    STATE_LOADED);
	ck_assert_uint_eq(inc, 7);
	two_free(ss);
	free(victim);
}
END_TEST

/*
 * state.json that is a link is not read (its target could be any file,
 * its text shown in the log's parse error): moved aside, the link itself,
 * the target untouched; a save puts a regular file in its place.
 */
START_TEST(load_never_reads_through_a_link)
{
	struct state_service	 ss[2];
	char			 target[1024], path[1024], *other, *text, *again;
	uint64_t		 inc;

	other = tu_tmpdir();
	two(ss);
	ck_assert_int_eq(state_save(other, 9, ss, 2, clk(0, 0, 0, "b")), 0);
	ck_assert_ptr_nonnull(text = slurp(other, "state.json"));
	snprintf(target, sizeof(target), "%s/state.json", other);
	snprintf(path, sizeof(path), "%s/state.json", dir);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, clk(0, 0, 0, "b"), &res),
	    STATE_CORRUPT);
	ck_assert_uint_eq(inc, 0);
	ck_assert(!exists("state.json"));
	ck_assert(is_link("state.json.corrupt"));
	ck_assert_str_eq(again = slurp(other, "state.json"), text);
	free(again);
	ck_assert_int_eq(state_save(dir, 1, ss, 2, clk(0, 0, 0, "b")), 0);
	ck_assert(!is_link("state.json"));
	two_free(ss);
	free(text);
	tu_rmtree(other);
	free(other);
}
END_TEST

START_TEST(save_fails_cleanly)
{
	struct state_service	 ss[2];

	two(ss);
	ck_assert_int_eq(state_save("/nonexistent/dir", 1, ss, 2, clk(0, 0, 0,
	    "b")), -1);
	ck_assert_int_eq(errno, ENOENT);
	two_free(ss);
}
END_TEST

static const struct transition_conf tconf = {
	.down_after_ms = 30000, .degrade_after_ms = 10000,
	.up_after_ms = 60000, .restore_after_ms = 30000, .ramp_ms = 60000,
	.ramp_start = 25, .flap_limit = 3, .flap_window_ms = 600000,
};

/* One default service with a transition engine and a history. */
static void
with_engine(struct state_service *ss, struct history *h, int64_t now)
{
	memset(ss, 0, sizeof(*ss));
	memset(h, 0, sizeof(*h));
	ss->name = "";
	ss->keys = lbkeys_new(600000);
	ss->tr = transition_new(&tconf, now);
	ck_assert_ptr_nonnull(ss->tr);
	ss->history = h;
}

static void
engine_free(struct state_service *ss)
{
	lbkeys_free(ss->keys);
	transition_free(ss->tr);
}

/*
 * Down, then passing for 40 s at monotonic 100 s (boot time 500 s, wall
 * 1.7e12): what a save holds.
 */
static void
save_down_and_passing(void)
{
	struct state_service	ss;
	struct history		h;
	struct decision		down, up, out;
	int64_t			t;

	with_engine(&ss, &h, 0);
	decision_up(&up);
	decision_up(&down);
	down.state = NODE_DOWN;
	strcpy(down.reason, "api: HTTP 503");
	for (t = 0; t <= 30000; t += 250)
		transition_evaluate(ss.tr, &down, true, NULL, t, &out, NULL);
	ck_assert_int_eq(out.state, NODE_DOWN);
	for (t = 60000; t <= 100000; t += 250)
		transition_evaluate(ss.tr, &up, true, NULL, t, &out, NULL);
	ck_assert_int_eq(out.state, NODE_DOWN);
	history_add(&h, 1699999970000, "up", "down", "api: HTTP 503");
	ss.has_decision = true;
	ss.decision = out;
	ck_assert_int_eq(state_save(dir, 4, &ss, 1, clk(100000, 1700000000000,
	    500000, "boot-1")), 0);
	engine_free(&ss);
}

/* Loads it at monotonic 10 s with the clocks given; 40 s + credit passed. */
static int64_t
passing_after_load(int64_t wall, int64_t boot, const char *boot_id)
{
	struct state_service	ss;
	struct history		h;
	uint64_t		inc;
	int64_t			passing;

	with_engine(&ss, &h, 10000);
	ck_assert_int_eq(state_load(dir, &inc, &ss, 1, clk(10000, wall, boot,
	    boot_id), &res), STATE_LOADED);
	ck_assert_uint_eq(inc, 4);
	ck_assert_int_eq(transition_at(ss.tr), LEVEL_DOWN);
	ck_assert_str_eq(transition_reason(ss.tr), "api: HTTP 503");
	ck_assert_uint_eq(h.count, 1);
	ck_assert_str_eq(history_get(&h, 0)->to, "down");
	ck_assert_int_eq(history_get(&h, 0)->wall_ms, 1699999970000);
	passing = 10000 - transition_passing_since_ms(ss.tr, LEVEL_MAX);
	engine_free(&ss);
	return passing;
}

START_TEST(transitions_survive_and_clocks_may_jump)
{
	save_down_and_passing();
	/* Same boot, 5 s later by boot time: the 5 s count as passing. */
	ck_assert_int_eq(passing_after_load(1700000005000, 505000, "boot-1"),
	    45000);
	ck_assert(res.same_boot);
	ck_assert_int_eq(res.gap_ms, 5000);
	/* The wall clock jumped an hour back, or a day ahead: no matter. */
	ck_assert_int_eq(passing_after_load(1699996405000, 505000, "boot-1"),
	    45000);
	ck_assert_int_eq(passing_after_load(1700086405000, 505000, "boot-1"),
	    45000);
	/*
	 * After a reboot: the gap is not passing, whatever the wall clock
	 * says, so a clock far ahead gives no instant window...
	 */
	ck_assert_int_eq(passing_after_load(1700086405000, 20000, "boot-2"),
	    40000);
	ck_assert(!res.same_boot);
	ck_assert_int_eq(res.gap_ms, 86405000);
	/* ...and one behind the file gives no negative age. */
	ck_assert_int_eq(passing_after_load(1600000000000, 20000, "boot-2"),
	    40000);
	ck_assert_int_eq(res.gap_ms, 0);
	/* A boot time behind the file's cannot be the same boot. */
	ck_assert_int_eq(passing_after_load(1700000005000, 400000, "boot-1"),
	    40000);
	ck_assert(!res.same_boot);
	/* No boot id known: never "the same boot". */
	ck_assert_int_eq(passing_after_load(1700000005000, 505000, ""), 40000);
}
END_TEST

START_TEST(gap_rules)
{
	struct state_resume	r;

	r = state_gap(1000, 5000, "a", clk(0, 9000, 8000, "a"));
	ck_assert(r.same_boot);
	ck_assert_int_eq(r.gap_ms, 3000);
	r = state_gap(1000, 5000, "a", clk(0, 9000, 8000, "b"));
	ck_assert(!r.same_boot);
	ck_assert_int_eq(r.gap_ms, 8000);
	r = state_gap(9000, 5000, NULL, clk(0, 1000, 8000, "b"));
	ck_assert(!r.same_boot);
	ck_assert_int_eq(r.gap_ms, 0);
	r = state_gap(1000, -1, "a", clk(0, 2000, 8000, "a"));
	ck_assert(!r.same_boot);
	ck_assert_int_eq(r.gap_ms, 1000);
}
END_TEST

START_TEST(corrupt_transition_is_all_or_nothing)
{
	struct state_service	ss;
	struct history		h;
	uint64_t		inc;

	free(tu_write(dir, "state.json", "{\"version\":1,\"incarnation\":2,"
	    "\"load_balancers\":[],\"history\":[{\"at\":1,\"from\":\"up\","
	    "\"to\":\"down\",\"reason\":\"\"}],\"transition\":{\"level\":-1,"
	    "\"since_age_ms\":0,\"reason\":\"\",\"passing_runs\":[[3,0]],"
	    "\"ramp\":null,\"outs_age_ms\":[],\"damping\":1}}", -1));
	with_engine(&ss, &h, 0);
	ck_assert_int_eq(state_load(dir, &inc, &ss, 1, clk(0, 0, 0, "b"), &res),
	    STATE_CORRUPT);
	ck_assert_int_eq(transition_at(ss.tr), LEVEL_MAX);
	ck_assert_uint_eq(h.count, 0);
	engine_free(&ss);
	/* A file from before transitions were kept loads as it was. */
	free(tu_write(dir, "state.json", "{\"version\":1,\"incarnation\":2,"
	    "\"decision\":{\"state\":\"up\",\"weight\":100,\"reason\":\"\"},"
	    "\"load_balancers\":[]}", -1));
	with_engine(&ss, &h, 0);
	ck_assert_int_eq(state_load(dir, &inc, &ss, 1, clk(0, 0, 0, "b"), &res),
	    STATE_LOADED);
	ck_assert_int_eq(transition_at(ss.tr), LEVEL_MAX);
	engine_free(&ss);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("state");
	TCase	*tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, none_then_round_trip);
	tcase_add_test(tc, held_survives);
	tcase_add_test(tc, service_no_longer_configured_is_dropped);
	tcase_add_test(tc, corrupt_moved_aside);
	tcase_add_test(tc, unreadable_moved_aside);
	tcase_add_test(tc, reason_sanitized_on_load);
	tcase_add_test(tc, save_fails_cleanly);
	tcase_add_test(tc, save_never_writes_through_the_temporary_file);
	tcase_add_test(tc, load_never_reads_through_a_link);
	tcase_add_test(tc, transitions_survive_and_clocks_may_jump);
	tcase_add_test(tc, gap_rules);
	tcase_add_test(tc, corrupt_transition_is_all_or_nothing);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
