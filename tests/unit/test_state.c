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
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, 0, 0), STATE_NONE);
	ck_assert_uint_eq(inc, 0);

	ss[0].has_decision = true;
	ss[0].decision.state = NODE_DRAIN;
	ss[0].decision.weight = 100;
	strcpy(ss[0].decision.reason, "kernel \"upgrade\"");
	lbkeys_claim(ss[0].keys, CLAIM_ADMIN, 1000);
	lbkeys_check(ss[0].keys, "127.0.0.2", "web", 3, 1000, &created, &changed);
	lbkeys_check(ss[0].keys, "::1", "", 0, 1000, &created, &changed);
	ss[1].has_decision = true;
	ss[1].decision.state = NODE_UP;
	ss[1].decision.weight = 50;
	strcpy(ss[1].decision.reason, "preview: refused");
	lbkeys_claim(ss[1].keys, CLAIM_WEIGHT, 1000);
	lbkeys_check(ss[1].keys, "127.0.0.3", "web", 3, 1000, &created, &changed);
	ck_assert_int_eq(state_save(dir, 7, ss, 2, 1000, 1700000000000), 0);
	ck_assert(exists("state.json"));
	ck_assert(!exists("state.json.tmp"));

	two(back);
	ck_assert_int_eq(state_load(dir, &inc, back, 2, 5, 1700000001000),
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
	lbkeys_claim(back[0].keys, 0, 10);
	ck_assert_uint_eq(lbkeys_owing(back[0].keys), 2);
	lbkeys_claim(back[1].keys, 0, 10);
	ck_assert_uint_eq(lbkeys_owing(back[1].keys), 1);
	two_free(ss);
	two_free(back);
}
END_TEST

START_TEST(service_no_longer_configured_is_dropped)
{
	struct state_service	 ss[2], only;
	uint64_t		 inc;

	two(ss);
	ss[1].has_decision = true;
	ss[1].decision.state = NODE_DOWN;
	ck_assert_int_eq(state_save(dir, 3, ss, 2, 0, 0), 0);
	memset(&only, 0, sizeof(only));
	only.name = "";
	only.keys = lbkeys_new(600000);
	ck_assert_int_eq(state_load(dir, &inc, &only, 1, 0, 0), STATE_LOADED);
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
	ck_assert_msg(state_load(dir, &inc, ss, 2, 0, 0) == STATE_CORRUPT,
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
	    "{\"state\":\"up\",\"weight\":101,\"reason\":\"\"},"
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
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, 0, 0), STATE_CORRUPT);
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
	ck_assert_int_eq(state_load(dir, &inc, ss, 2, 0, 0), STATE_LOADED);
	ck_assert_str_eq(ss[0].decision.reason, "evil");
	two_free(ss);
}
END_TEST

START_TEST(save_fails_cleanly)
{
	struct state_service	 ss[2];

	two(ss);
	ck_assert_int_eq(state_save("/nonexistent/dir", 1, ss, 2, 0, 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	two_free(ss);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("state");
	TCase	*tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, none_then_round_trip);
	tcase_add_test(tc, service_no_longer_configured_is_dropped);
	tcase_add_test(tc, corrupt_moved_aside);
	tcase_add_test(tc, unreadable_moved_aside);
	tcase_add_test(tc, reason_sanitized_on_load);
	tcase_add_test(tc, save_fails_cleanly);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
