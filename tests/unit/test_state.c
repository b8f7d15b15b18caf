/* The state file: round trip, corrupt files moved aside, atomic writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/state.h"
#include "testutil.h"

static char	*dir;

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

START_TEST(none_then_round_trip)
{
	struct state	 st, back;
	struct lbkeys	*lbk = lbkeys_new(600000), *lbk2;
	bool		 created, changed;

	ck_assert_int_eq(state_load(dir, &st, lbk, 0, 0), STATE_NONE);
	ck_assert_uint_eq(st.incarnation, 0);

	st.incarnation = 7;
	st.has_decision = true;
	st.decision.state = NODE_DRAIN;
	st.decision.weight = 100;
	strcpy(st.decision.reason, "kernel \"upgrade\"");
	lbkeys_claim(lbk, CLAIM_ADMIN, 1000);
	lbkeys_check(lbk, "127.0.0.2", "web", 3, 1000, &created, &changed);
	lbkeys_check(lbk, "::1", "", 0, 1000, &created, &changed);
	ck_assert_int_eq(state_save(dir, &st, lbk, 1000, 1700000000000), 0);
	ck_assert(exists("state.json"));
	ck_assert(!exists("state.json.tmp"));

	lbk2 = lbkeys_new(600000);
	ck_assert_int_eq(state_load(dir, &back, lbk2, 5, 1700000001000),
	    STATE_LOADED);
	ck_assert_uint_eq(back.incarnation, 7);
	ck_assert(back.has_decision);
	ck_assert_int_eq(back.decision.state, NODE_DRAIN);
	ck_assert_str_eq(back.decision.reason, "kernel \"upgrade\"");
	ck_assert_uint_eq(lbkeys_claims(lbk2), CLAIM_ADMIN);
	ck_assert_uint_eq(lbkeys_count(lbk2), 2);
	/* Released after the restart: both that saw the drain are owed. */
	lbkeys_claim(lbk2, 0, 10);
	ck_assert_uint_eq(lbkeys_owing(lbk2), 2);
	lbkeys_free(lbk);
	lbkeys_free(lbk2);
}
END_TEST

static void
expect_corrupt(const char *content)
{
	struct state	 st;
	struct lbkeys	*lbk = lbkeys_new(600000);
	char		 aside[1024];

	snprintf(aside, sizeof(aside), "%s/state.json.corrupt", dir);
	unlink(aside);
	free(tu_write(dir, "state.json", content, -1));
	ck_assert_msg(state_load(dir, &st, lbk, 0, 0) == STATE_CORRUPT,
	    "accepted: %s", content);
	ck_assert(!exists("state.json"));
	ck_assert(exists("state.json.corrupt"));
	ck_assert_uint_eq(lbkeys_count(lbk), 0);
	ck_assert_uint_eq(lbkeys_claims(lbk), 0);
	ck_assert(!st.has_decision);
	ck_assert_uint_eq(st.incarnation, 0);
	lbkeys_free(lbk);
}

START_TEST(corrupt_moved_aside)
{
	expect_corrupt("");
	expect_corrupt("{\"version\": 1, \"incarn");
	expect_corrupt("\x00\x01\x02 binary");
	expect_corrupt("[]");
	expect_corrupt("{\"version\":2,\"incarnation\":1,\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":-1,\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"load_balancers\":{}}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"sideways\",\"weight\":100,\"reason\":\"\"},"
	    "\"load_balancers\":[]}");
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"up\",\"weight\":101,\"reason\":\"\"},"
	    "\"load_balancers\":[]}");
	/* A well-formed decision followed by a broken key: nothing half-loaded. */
	expect_corrupt("{\"version\":1,\"incarnation\":1,\"decision\":"
	    "{\"state\":\"drain\",\"weight\":100,\"reason\":\"\"},"
	    "\"load_balancers\":[{\"addr\":\"x\"}]}");
	expect_corrupt("{\"version\":1,\"version\":1,\"incarnation\":1,"
	    "\"load_balancers\":[]}");
}
END_TEST

START_TEST(unreadable_moved_aside)
{
	struct state	 st;
	struct lbkeys	*lbk = lbkeys_new(600000);
	char		 path[1024];

	snprintf(path, sizeof(path), "%s/state.json", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(state_load(dir, &st, lbk, 0, 0), STATE_CORRUPT);
	ck_assert(exists("state.json.corrupt"));
	lbkeys_free(lbk);
}
END_TEST

START_TEST(reason_sanitized_on_load)
{
	struct state	 st;
	struct lbkeys	*lbk = lbkeys_new(600000);

	free(tu_write(dir, "state.json", "{\"version\":1,\"incarnation\":3,"
	    "\"decision\":{\"state\":\"maint\",\"weight\":100,"
	    "\"reason\":\"evil\\nup\"},\"load_balancers\":[]}", -1));
	ck_assert_int_eq(state_load(dir, &st, lbk, 0, 0), STATE_LOADED);
	ck_assert_str_eq(st.decision.reason, "evil");
	lbkeys_free(lbk);
}
END_TEST

START_TEST(save_fails_cleanly)
{
	struct state	 st;
	struct lbkeys	*lbk = lbkeys_new(600000);

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(state_save("/nonexistent/dir", &st, lbk, 0, 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	lbkeys_free(lbk);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("state");
	TCase	*tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, none_then_round_trip);
	tcase_add_test(tc, corrupt_moved_aside);
	tcase_add_test(tc, unreadable_moved_aside);
	tcase_add_test(tc, reason_sanitized_on_load);
	tcase_add_test(tc, save_fails_cleanly);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
