/* Per-load-balancer restore bookkeeping, over a fake clock. */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/lbkeys.h"
#include "lbagent/core/unknown_names.h"
#include "testutil.h"

#define FORGET_MS	600000

static int64_t	now;

static unsigned
check(struct lbkeys *lbk, const char *addr, const char *text)
{
	bool	created, changed;

	return lbkeys_check(lbk, addr, text, strlen(text), now, &created,
	    &changed, NULL);
}

/* Two HAProxy instances; drain; released; each gets ready, then no more. */
START_TEST(two_lbs_each_get_ready_once_window_ends)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	int		 i;

	now = 1000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), 0);
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), 0);
	lbkeys_claim(lbk, CLAIM_ADMIN);
	/* Checks every 2 s: both see the drain. */
	for (i = 0; i < 3; i++) {
		now += 2000;
		ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), 0);
		ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), 0);
	}
	lbkeys_claim(lbk, 0);
	ck_assert_uint_eq(lbkeys_owing(lbk), 2);

	/* A newcomer never saw the drain: no ready for it. */
	ck_assert_uint_eq(check(lbk, "10.0.0.3", "web"), 0);

	/* .1 checks every 2 s: window 4 s from its first ready. */
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	/* .2 is 500 ms late once: longest gap 2.5 s, window 5 s. */
	now += 500;
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), CLAIM_ADMIN);
	now += 1500;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	now += 500;
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), CLAIM_ADMIN);
	now += 1500;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), 0);
	now += 500;
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), CLAIM_ADMIN);
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), 0);
	ck_assert_uint_eq(lbkeys_owing(lbk), 0);
	/* An operator's MAINT set now is never undone. */
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), 0);
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), 0);
	lbkeys_free(lbk);
}
END_TEST

/* Two backends of one HAProxy without agent-send share a key. */
START_TEST(shared_key_covers_both_checks)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	int		 i;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	/* Backend A at t, backend B at t+300, each every 2 s. */
	for (i = 0; i < 4; i++) {
		check(lbk, "10.0.0.1", "");
		now += 300;
		check(lbk, "10.0.0.1", "");
		now += 1700;
	}
	lbkeys_claim(lbk, 0);
	ck_assert_uint_eq(lbkeys_window_ms(lbkeys_get(lbk, 0)), 3400);
	ck_assert_uint_eq(check(lbk, "10.0.0.1", ""), CLAIM_ADMIN);	/* A */
	now += 300;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", ""), CLAIM_ADMIN);	/* B */
	now += 1700;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", ""), CLAIM_ADMIN);	/* A */
	now += 300;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", ""), CLAIM_ADMIN);	/* B */
	now += 1700;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", ""), 0);
	lbkeys_free(lbk);
}
END_TEST

START_TEST(default_window_and_at_least_once)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	int		 i;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	check(lbk, "10.0.0.1", "x");
	/* No gap known yet: HAProxy's default 2 s, so a 4 s window. */
	ck_assert_int_eq(lbkeys_window_ms(lbkeys_get(lbk, 0)), 4000);
	for (i = 0; i < LBKEY_GAPS; i++) {
		now += 100;
		check(lbk, "10.0.0.1", "x");
	}
	ck_assert_int_eq(lbkeys_window_ms(lbkeys_get(lbk, 0)), 200);
	lbkeys_claim(lbk, 0);
	/* The load balancer pauses (a reload) far longer than any window... */
	now += 30000;
	/* ...and still gets its ready, for twice the new longest gap. */
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "x"), CLAIM_ADMIN);
	ck_assert_int_eq(lbkeys_window_ms(lbkeys_get(lbk, 0)), 60000);
	lbkeys_free(lbk);
}
END_TEST

START_TEST(forgotten_after_silence)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);

	now = 1000;
	check(lbk, "10.0.0.1", "web");
	check(lbk, "10.0.0.2", "web");
	now += FORGET_MS - 1;
	check(lbk, "10.0.0.2", "web");
	ck_assert(!lbkeys_expire(lbk, now, NULL));
	now += 1;
	ck_assert(lbkeys_expire(lbk, now, NULL));
	ck_assert_uint_eq(lbkeys_count(lbk), 1);
	ck_assert_str_eq(lbkeys_get(lbk, 0)->addr, "10.0.0.2");
	lbkeys_free(lbk);
}
END_TEST

START_TEST(reclaimed_before_delivery_is_owed_again)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	check(lbk, "10.0.0.1", "web");
	lbkeys_claim(lbk, 0);		/* released... */
	lbkeys_claim(lbk, CLAIM_ADMIN);	/* ...and back */
	ck_assert_uint_eq(lbkeys_owing(lbk), 0);
	lbkeys_claim(lbk, 0);		/* released again */
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	lbkeys_free(lbk);
}
END_TEST

START_TEST(weight_claim_is_separate)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);

	now = 1000;
	lbkeys_claim(lbk, CLAIM_WEIGHT);
	check(lbk, "10.0.0.1", "web");
	lbkeys_claim(lbk, CLAIM_ADMIN);
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_WEIGHT);
	lbkeys_claim(lbk, 0);
	/* The 100% window (4 s) is still open: both words. */
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ALL);
	lbkeys_free(lbk);
}
END_TEST

START_TEST(late_text_moves_the_claim)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	bool		 created, changed;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	ck_assert(!lbkeys_addr_sends_text(lbk, "10.0.0.1"));
	/* Replied before the text came: filed under (addr, ""). */
	lbkeys_check(lbk, "10.0.0.1", "", 0, now, &created, &changed, NULL);
	ck_assert(created);
	ck_assert(lbkeys_late_text(lbk, "10.0.0.1", "web", 3, CLAIM_ADMIN,
	    created, now, NULL));
	ck_assert_uint_eq(lbkeys_count(lbk), 1);
	ck_assert_uint_eq(lbkeys_get(lbk, 0)->textlen, 3);
	ck_assert(lbkeys_addr_sends_text(lbk, "10.0.0.1"));
	ck_assert(!lbkeys_addr_sends_text(lbk, "10.0.0.2"));
	/* The late text moved the key: 10.0.0.1 sends text, and only that. */
	ck_assert_uint_eq(lbkeys_addr_texts(lbk, "10.0.0.1"), LBKEYS_ADDR_TEXT);
	ck_assert_uint_eq(lbkeys_addr_texts(lbk, "10.0.0.2"), 0);
	lbkeys_check(lbk, "10.0.0.2", "", 0, now, &created, &changed, NULL);
	ck_assert_uint_eq(lbkeys_addr_texts(lbk, "10.0.0.2"),
	    LBKEYS_ADDR_NO_TEXT);
	lbkeys_check(lbk, "10.0.0.1", "", 0, now, &created, &changed, NULL);
	ck_assert_uint_eq(lbkeys_addr_texts(lbk, "10.0.0.1"),
	    LBKEYS_ADDR_TEXT | LBKEYS_ADDR_NO_TEXT);
	lbkeys_claim(lbk, 0);
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	lbkeys_free(lbk);
}
END_TEST

START_TEST(flood_is_bounded)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	char		 addr[32], text[32];
	int		 i;

	now = 1000;
	for (i = 0; i < LBKEYS_MAX + 100; i++) {
		snprintf(addr, sizeof(addr), "10.9.%d.%d", i / 100, i % 100);
		snprintf(text, sizeof(text), "garbage%d", i);
		now++;
		check(lbk, addr, text);
	}
	ck_assert_uint_eq(lbkeys_count(lbk), LBKEYS_MAX);
	lbkeys_free(lbk);
}
END_TEST

/* A flood from one address only ever displaces that address's own keys. */
START_TEST(flood_from_one_address_keeps_the_others)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	char		 text[32];
	int		 i;

	now = 1000;
	check(lbk, "10.0.0.1", "web");
	for (i = 0; i < LBKEYS_MAX + 100; i++) {
		snprintf(text, sizeof(text), "garbage%d", i);
		now++;
		check(lbk, "10.9.9.9", text);
	}
	ck_assert_uint_eq(lbkeys_count(lbk), LBKEYS_PER_ADDR + 1);
	lbkeys_claim(lbk, CLAIM_ADMIN);
	now += 2000;
	check(lbk, "10.0.0.1", "web");
	lbkeys_claim(lbk, 0);
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	lbkeys_free(lbk);
}
END_TEST

/*
 * A flood from many addresses fills the table, but a key that saw a claim
 * or is owed a restore word is never the one to go: the newcomers take
 * each other's places, and once only such keys are left, a newcomer is
 * answered without being remembered.
 */
START_TEST(flood_never_evicts_what_is_owed)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
	char		 addr[32], text[32];
	bool		 created, changed;
	int		 i;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	check(lbk, "10.0.0.1", "web");		/* saw the drain */
	check(lbk, "10.0.0.2", "web");
	lbkeys_claim(lbk, 0);		/* both owed ready */
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), CLAIM_ADMIN);
	lbkeys_claim(lbk, CLAIM_ADMIN);	/* 10.0.0.2 saw it again */
	for (i = 0; i < 3 * LBKEYS_MAX; i++) {
		snprintf(addr, sizeof(addr), "10.8.%d.%d", i / 100, i % 100);
		snprintf(text, sizeof(text), "flood%d", i);
		now++;
		check(lbk, addr, text);
	}
	ck_assert_uint_eq(lbkeys_count(lbk), LBKEYS_MAX);
	lbkeys_claim(lbk, 0);
	now += 1000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	ck_assert_uint_eq(check(lbk, "10.0.0.2", "web"), CLAIM_ADMIN);

	/* Every key protected now (all saw the claim): no room at all. */
	lbkeys_claim(lbk, CLAIM_ADMIN);
	for (i = 0; i < LBKEYS_MAX; i++)
		check(lbk, lbkeys_get(lbk, (size_t)i)->addr,
		    lbkeys_get(lbk, (size_t)i)->text);
	ck_assert_uint_eq(lbkeys_check(lbk, "10.7.7.7", "new", 3, now,
	    &created, &changed, NULL), 0);
	ck_assert(!created);
	ck_assert_uint_eq(lbkeys_count(lbk), LBKEYS_MAX);
	lbkeys_free(lbk);
}
END_TEST

/*
 * lbkeys logs nothing itself: a restore word started and done, crowding
 * (at most once every LBKEYS_WARN_EVERY_MS) and a key forgotten come back
 * as notes with the text the caller logs.
 */
START_TEST(notes_say_what_to_log)
{
	struct lbkeys		*lbk = lbkeys_new(FORGET_MS);
	struct lbkeys_notes	 ns;
	struct lbkeys_note	 gone;
	bool			 created, changed;
	char			 addr[32], text[32];
	int			 i;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	check(lbk, "10.0.0.1", "web");
	lbkeys_claim(lbk, 0);
	now += 2000;
	ck_assert_uint_eq(lbkeys_check(lbk, "10.0.0.1", "web", 3, now,
	    &created, &changed, &ns), CLAIM_ADMIN);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_int_eq(ns.n[0].level, LBKEYS_NOTICE);
	ck_assert_str_eq(ns.n[0].text, "10.0.0.1 \"web\": sending 'ready' for "
	    "4000 ms");
	now += 2000;
	ck_assert_uint_eq(lbkeys_check(lbk, "10.0.0.1", "web", 3, now,
	    &created, &changed, &ns), CLAIM_ADMIN);
	ck_assert_uint_eq(ns.count, 0);
	now += 2000;
	ck_assert_uint_eq(lbkeys_check(lbk, "10.0.0.1", "web", 3, now,
	    &created, &changed, &ns), 0);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_int_eq(ns.n[0].level, LBKEYS_INFO);
	ck_assert_str_eq(ns.n[0].text, "10.0.0.1 \"web\": restore word "
	    "'ready' delivered 2 times in 4000 ms; done");

	/* Every key protected: newcomers are refused, said once in 10 s. */
	lbkeys_claim(lbk, CLAIM_ADMIN);
	for (i = 1; i < LBKEYS_MAX; i++) {
		snprintf(addr, sizeof(addr), "10.8.%d.%d", i / 100, i % 100);
		snprintf(text, sizeof(text), "k%d", i);
		check(lbk, addr, text);
	}
	check(lbk, "10.0.0.1", "web");
	ck_assert_uint_eq(lbkeys_count(lbk), LBKEYS_MAX);
	lbkeys_check(lbk, "10.7.7.7", "new", 3, now, &created, &changed, &ns);
	ck_assert(!created);
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_int_eq(ns.n[0].level, LBKEYS_WARNING);
	ck_assert_str_eq(ns.n[0].text, "load-balancer keys: every key matters: "
	    "a new key is not remembered (latest from 10.7.7.7; 1 such in the "
	    "last 10 s); keys that saw a claim or are owed a restore word are "
	    "kept");
	now += LBKEYS_WARN_EVERY_MS - 1;
	lbkeys_check(lbk, "10.7.7.8", "new", 3, now, &created, &changed, &ns);
	ck_assert_uint_eq(ns.count, 0);
	ck_assert(!lbkeys_late_text(lbk, "10.7.7.8", "late", 4, 0, false, now,
	    &ns));
	ck_assert_uint_eq(ns.count, 0);
	now += 1;
	ck_assert(!lbkeys_late_text(lbk, "10.7.7.9", "late", 4, 0, false, now,
	    &ns));
	ck_assert_uint_eq(ns.count, 1);
	ck_assert_str_eq(ns.n[0].text, "load-balancer keys: every key matters: "
	    "a new key is not remembered (latest from 10.7.7.9; 3 such in the "
	    "last 10 s); keys that saw a claim or are owed a restore word are "
	    "kept");

	/* Forgotten, one key a call, each with its line. */
	lbkeys_claim(lbk, 0);
	check(lbk, "10.0.0.1", "web");
	now += FORGET_MS;
	check(lbk, "10.8.0.1", "k1");
	ck_assert(lbkeys_expire(lbk, now, &gone));
	ck_assert_int_eq(gone.level, LBKEYS_WARNING);
	ck_assert_str_eq(gone.text, "10.0.0.1 \"web\": not seen for 600 s; "
	    "forgetting it with a restore word still owed");
	for (i = 1; lbkeys_expire(lbk, now, &gone); i++)
		ck_assert_ptr_nonnull(strstr(gone.text, ": not seen for 610 s; "
		    "forgetting it with a restore word still owed"));
	ck_assert_int_eq(i, LBKEYS_MAX - 1);
	ck_assert(!lbkeys_expire(lbk, now, &gone));
	ck_assert_uint_eq(lbkeys_count(lbk), 1);
	ck_assert_str_eq(lbkeys_get(lbk, 0)->addr, "10.8.0.1");
	lbkeys_free(lbk);

	/* Owing nothing, a key is just forgotten. */
	lbk = lbkeys_new(FORGET_MS);
	check(lbk, "10.0.0.3", "");
	now += FORGET_MS + 999;
	ck_assert(lbkeys_expire(lbk, now, &gone));
	ck_assert_int_eq(gone.level, LBKEYS_INFO);
	ck_assert_str_eq(gone.text, "10.0.0.3 \"\": not seen for 600 s; "
	    "forgotten");
	ck_assert(!lbkeys_expire(lbk, now, &gone));
	lbkeys_free(lbk);
}
END_TEST

/*
 * lbagent died just after a load balancer's first drain reply: the file
 * has the claim but not the key's "saw". Loaded, the key counts as having
 * seen it; a key the file lacks, new within a restore window of the load,
 * is owed what was released since.
 */
START_TEST(claim_in_file_without_saw_is_owed)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS), *back;
	const char	*why = NULL;
	json_t		*j;
	int64_t		 wall = 1700000000000;

	now = 1000;
	check(lbk, "10.0.0.1", "web");		/* seen while up */
	j = lbkeys_to_json(lbk, now, wall);	/* saved before the drain */
	lbkeys_free(lbk);

	back = lbkeys_new(FORGET_MS);
	now = 10;
	lbkeys_claim(back, CLAIM_ADMIN);	/* the file's claim */
	ck_assert_msg(lbkeys_from_json(back, j, now, wall + 500, &why) == 0,
	    "%s", why);
	json_decref(j);
	lbkeys_claim(back, 0);		/* restarted without the marker */
	now += 100;
	ck_assert_uint_eq(check(back, "10.0.0.1", "web"), CLAIM_ADMIN);
	/* A key the file never had, within the window: owed too. */
	ck_assert_uint_eq(check(back, "10.0.0.2", "web"), CLAIM_ADMIN);
	/* Past the window, a newcomer is just a newcomer. */
	now += 2 * LBKEY_DEFAULT_GAP_MS;
	ck_assert_uint_eq(check(back, "10.0.0.3", "web"), 0);
	lbkeys_free(back);
}
END_TEST

/* A file without a claim makes no debts. */
START_TEST(no_claim_in_file_no_debts)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS), *back;
	const char	*why = NULL;
	json_t		*j;

	now = 1000;
	check(lbk, "10.0.0.1", "web");
	j = lbkeys_to_json(lbk, now, 1700000000000);
	lbkeys_free(lbk);
	back = lbkeys_new(FORGET_MS);
	now = 10;
	ck_assert_int_eq(lbkeys_from_json(back, j, now, 1700000000000, &why), 0);
	json_decref(j);
	ck_assert_uint_eq(check(back, "10.0.0.1", "web"), 0);
	ck_assert_uint_eq(check(back, "10.0.0.2", "web"), 0);
	ck_assert_uint_eq(lbkeys_owing(back), 0);
	lbkeys_free(back);
}
END_TEST

/* Saved mid-release, loaded into a new table: every debt survives. */
START_TEST(restart_in_the_middle)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS), *back;
	const char	*why = NULL;
	json_t		*j;
	int64_t		 wall = 1700000000000;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	check(lbk, "10.0.0.1", "web");
	check(lbk, "10.0.0.2", "web\\\x01");
	now += 2000;
	check(lbk, "10.0.0.1", "web");
	check(lbk, "10.0.0.2", "web\\\x01");
	lbkeys_claim(lbk, 0);
	now += 2000;
	/* The first got its ready; the second has not been asked since. */
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	j = lbkeys_to_json(lbk, now, wall);
	ck_assert_ptr_nonnull(j);
	lbkeys_free(lbk);

	/* Back 1 s later (wall clock), on a monotonic clock that restarted. */
	back = lbkeys_new(FORGET_MS);
	now = 50;
	ck_assert_msg(lbkeys_from_json(back, j, now, wall + 1000, &why) == 0,
	    "%s", why);
	json_decref(j);
	ck_assert_uint_eq(lbkeys_count(back), 2);
	ck_assert_uint_eq(lbkeys_owing(back), 2);
	now += 500;
	ck_assert_uint_eq(check(back, "10.0.0.2", "web\\\x01"), CLAIM_ADMIN);
	/* 10.0.0.1's window (4 s from its first ready) is 1.5 s along... */
	ck_assert_uint_eq(check(back, "10.0.0.1", "web"), CLAIM_ADMIN);
	now += 2000;
	ck_assert_uint_eq(check(back, "10.0.0.1", "web"), CLAIM_ADMIN);
	/* ...and ends 4 s after the ready sent before the restart. */
	now += 2000;
	ck_assert_uint_eq(check(back, "10.0.0.1", "web"), 0);
	lbkeys_free(back);
}
END_TEST

START_TEST(wall_clock_backwards_is_age_zero)
{
	struct lbkeys	*lbk = lbkeys_new(FORGET_MS), *back;
	const char	*why;
	json_t		*j;

	now = 1000;
	lbkeys_claim(lbk, CLAIM_ADMIN);
	check(lbk, "10.0.0.1", "web");
	lbkeys_claim(lbk, 0);
	now += 2000;
	ck_assert_uint_eq(check(lbk, "10.0.0.1", "web"), CLAIM_ADMIN);
	j = lbkeys_to_json(lbk, now, 1700000000000);
	back = lbkeys_new(FORGET_MS);
	/* The wall clock now reads an hour earlier: the window restarts. */
	ck_assert_int_eq(lbkeys_from_json(back, j, 10, 1700000000000 - 3600000,
	    &why), 0);
	now = 10 + 3000;
	ck_assert_uint_eq(check(back, "10.0.0.1", "web"), CLAIM_ADMIN);
	json_decref(j);
	lbkeys_free(lbk);
	lbkeys_free(back);
}
END_TEST

START_TEST(malformed_json_rejected)
{
	const char	*bad[] = {
		"{}",
		"[1]",
		"[{\"addr\":\"\",\"send\":\"\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[],\"saw\":[],\"owes\":[]}]",
		"[{\"addr\":\"a\",\"send\":\"\\\\q\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[],\"saw\":[],\"owes\":[]}]",
		"[{\"addr\":\"a\",\"send\":\"\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[-5],\"saw\":[],\"owes\":[]}]",
		"[{\"addr\":\"a\",\"send\":\"\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[],\"saw\":[\"bogus\"],\"owes\":[]}]",
		"[{\"addr\":\"a\",\"send\":\"\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[],\"saw\":[\"admin\"],\"owes\":[{\"claim\":"
		    "\"admin\",\"started\":null,\"sent\":0}]}]",
		"[{\"addr\":\"a\",\"send\":\"\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[],\"saw\":[],\"owes\":[]},"
		    "{\"addr\":\"a\",\"send\":\"\",\"last_seen\":0,\"checks\":0,"
		    "\"gaps_ms\":[],\"saw\":[],\"owes\":[]}]",
	};
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lbkeys	*lbk = lbkeys_new(FORGET_MS);
		json_t		*j = json_loads(bad[i], 0, NULL);

		ck_assert_ptr_nonnull(j);
		ck_assert_msg(lbkeys_from_json(lbk, j, 0, 0, &why) == -1,
		    "accepted %s", bad[i]);
		ck_assert_uint_eq(lbkeys_count(lbk), 0);
		json_decref(j);
		lbkeys_free(lbk);
	}
}
END_TEST

/*
 * A key that asks for a service that does not exist: every check counted,
 * the warning once per key, at most LBKEYS_UNKNOWN_WARNS of them per
 * LBKEYS_WARN_EVERY_MS; a key held back is warned about at a later check.
 */
START_TEST(unknown_service_warned_once_per_key)
{
	struct lbkeys		*lbk = lbkeys_new(FORGET_MS);
	struct lbkeys_note	 n;
	char			 addr[32];
	bool			 created;
	int			 i;

	now = 1000;
	check(lbk, "10.0.0.1", "aip");
	ck_assert(lbkeys_unknown_service(lbk, now, &n));
	ck_assert_int_eq(n.level, LBKEYS_WARNING);
	ck_assert_str_eq(n.text, "10.0.0.1 \"aip\": asks for service 'aip', "
	    "which does not exist; answered as the default");
	for (i = 0; i < 5; i++) {
		now += 2000;
		check(lbk, "10.0.0.1", "aip");
		ck_assert(!lbkeys_unknown_service(lbk, now, &n));
	}
	ck_assert_uint_eq(lbkeys_unknown_checks(lbk), 6);

	/* A flood of names: 8 lines per 10 s, the rest later. */
	now += LBKEYS_WARN_EVERY_MS;
	for (i = 0; i < 20; i++) {
		snprintf(addr, sizeof(addr), "10.0.1.%d", i);
		check(lbk, addr, "x");
		ck_assert(lbkeys_unknown_service(lbk, now, &n) ==
		    (i < LBKEYS_UNKNOWN_WARNS));
	}
	now += LBKEYS_WARN_EVERY_MS;
	check(lbk, "10.0.1.19", "x");
	ck_assert(lbkeys_unknown_service(lbk, now, &n));
	ck_assert_str_eq(n.text, "10.0.1.19 \"x\": asks for service 'x', "
	    "which does not exist; answered as the default");
	check(lbk, "10.0.1.0", "x");
	ck_assert(!lbkeys_unknown_service(lbk, now, &n));

	/* Text that came late: the key it moved to is the one warned about. */
	ck_assert_uint_eq(check(lbk, "10.0.2.1", ""), 0);
	lbkeys_late_text(lbk, "10.0.2.1", "late", 4, 0, true, now, NULL);
	ck_assert(lbkeys_unknown_service(lbk, now, &n));
	ck_assert_str_eq(n.text, "10.0.2.1 \"late\": asks for service 'late', "
	    "which does not exist; answered as the default");

	/* A key the table could not keep is counted, never warned about. */
	lbkeys_free(lbk);
	lbk = lbkeys_new(FORGET_MS);
	lbkeys_claim(lbk, CLAIM_ADMIN);
	for (i = 0; i < LBKEYS_PER_ADDR; i++) {
		snprintf(addr, sizeof(addr), "k%d", i);
		check(lbk, "10.0.3.1", addr);
	}
	lbkeys_check(lbk, "10.0.3.1", "one too many", 12, now, &created,
	    &created, NULL);
	ck_assert(!lbkeys_unknown_service(lbk, now, &n));
	ck_assert_uint_eq(lbkeys_unknown_checks(lbk), 1);
	lbkeys_free(lbk);
}
END_TEST

/*
 * The names no service has: recent for UNKNOWN_NAME_RECENT_MS after the
 * latest ask, the one asked for longest ago giving way, kept escaped, and
 * dropped when keep() says a service now has it.
 */
static bool
keep_but_n3(const char *name, void *arg)
{
	(void)arg;
	return strcmp(name, "n3") != 0;
}

START_TEST(unknown_names_recent_bounded_escaped)
{
	static struct unknown_names	u;
	char				name[16];
	int64_t				t0 = 1000;
	int				i;

	memset(&u, 0, sizeof(u));
	ck_assert(unknown_names_seen(&u, "10.0.0.1", "aip", 3, t0, 5));
	ck_assert(!unknown_names_seen(&u, "10.0.0.1", "aip", 3, t0 + 1, 6));
	ck_assert(unknown_names_recent(&u));
	ck_assert(!unknown_names_age(&u, t0 + 1 + UNKNOWN_NAME_RECENT_MS - 1));
	ck_assert(unknown_names_age(&u, t0 + 1 + UNKNOWN_NAME_RECENT_MS));
	ck_assert(!unknown_names_recent(&u));
	/* Asked again: recent, and said so (what status shows changed). */
	ck_assert(unknown_names_seen(&u, "10.0.0.1", "aip", 3, t0 + 70000, 7));
	ck_assert_uint_eq(u.v[0].checks, 3);
	ck_assert(unknown_names_recent(&u));
	/* A new asker is shown too. */
	ck_assert(unknown_names_seen(&u, "10.0.0.2", "aip", 3, t0 + 70001, 8));
	ck_assert_str_eq(u.v[0].from, "10.0.0.2");
	ck_assert(unknown_names_seen(&u, "10.0.0.1", "a\"b\x01", 4, t0 + 70002,
	    9));
	ck_assert_str_eq(u.v[1].name, "a\\x22b\\x01");
	for (i = 0; i < 2 * UNKNOWN_NAMES_MAX; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		unknown_names_seen(&u, "10.0.0.1", name, strlen(name),
		    t0 + 80000 + i, 10);
	}
	ck_assert_uint_eq(u.count, UNKNOWN_NAMES_MAX);
	ck_assert_uint_eq(u.dropped, UNKNOWN_NAMES_MAX + 2);
	/* The 16 most recent: n16 to n31. */
	for (i = 0; i < UNKNOWN_NAMES_MAX; i++) {
		int	k = -1;

		ck_assert_int_eq(sscanf(u.v[i].name, "n%d", &k), 1);
		ck_assert_int_ge(k, UNKNOWN_NAMES_MAX);
	}
	ck_assert(unknown_names_seen(&u, "10.0.0.1", "n3", 2, t0 + 90000, 11));
	ck_assert(unknown_names_keep(&u, keep_but_n3, NULL));
	ck_assert_uint_eq(u.count, UNKNOWN_NAMES_MAX - 1);
	for (i = 0; i < (int)u.count; i++)
		ck_assert_str_ne(u.v[i].name, "n3");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("lbkeys");
	TCase	*tc = tcase_create("lbkeys");

	tcase_add_test(tc, two_lbs_each_get_ready_once_window_ends);
	tcase_add_test(tc, shared_key_covers_both_checks);
	tcase_add_test(tc, default_window_and_at_least_once);
	tcase_add_test(tc, forgotten_after_silence);
	tcase_add_test(tc, reclaimed_before_delivery_is_owed_again);
	tcase_add_test(tc, weight_claim_is_separate);
	tcase_add_test(tc, late_text_moves_the_claim);
	tcase_add_test(tc, flood_is_bounded);
	tcase_add_test(tc, flood_from_one_address_keeps_the_others);
	tcase_add_test(tc, flood_never_evicts_what_is_owed);
	tcase_add_test(tc, claim_in_file_without_saw_is_owed);
	tcase_add_test(tc, no_claim_in_file_no_debts);
	tcase_add_test(tc, restart_in_the_middle);
	tcase_add_test(tc, wall_clock_backwards_is_age_zero);
	tcase_add_test(tc, malformed_json_rejected);
	tcase_add_test(tc, notes_say_what_to_log);
	tcase_add_test(tc, unknown_service_warned_once_per_key);
	tcase_add_test(tc, unknown_names_recent_bounded_escaped);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
