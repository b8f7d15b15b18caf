/* Reply composition. */
#include <string.h>

#include "lbagent/core/reply.h"
#include "testutil.h"

static struct decision
mk(enum node_state s, unsigned weight, const char *reason)
{
	struct decision	d;

	memset(&d, 0, sizeof(d));
	d.state = s;
	d.weight = weight;
	strcpy(d.reason, reason);
	return d;
}

static const char *
line(struct decision d, unsigned restore, bool reasons)
{
	static char	buf[REPLY_MAX];
	size_t		n = reply_compose(&d, restore, reasons, buf);

	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_int_eq(buf[n - 1], '\n');
	return buf;
}

START_TEST(states)
{
	ck_assert_str_eq(line(mk(NODE_UP, 100, ""), 0, true), "up\n");
	ck_assert_str_eq(line(mk(NODE_DRAIN, 100, "maintenance: kernel upgrade"),
	    0, true), "drain up #maintenance: kernel upgrade\n");
	ck_assert_str_eq(line(mk(NODE_MAINT, 100, "maint marker"), 0, true),
	    "maint up #maint marker\n");
	ck_assert_str_eq(line(mk(NODE_UP, 50, "preview: refused"), 0, true),
	    "up 50% #preview: refused\n");
	ck_assert_str_eq(line(mk(NODE_UP, 0, ""), 0, true), "up 0%\n");
	ck_assert_str_eq(line(mk(NODE_DOWN, 100, "client-api: HTTP 503"), 0,
	    true), "down #client-api: HTTP 503\n");
	/* A marker over failing rules keeps saying down along with it. */
	{
		struct decision f = mk(NODE_DRAIN, 100, "deploy");

		f.failing = true;
		ck_assert_str_eq(line(f, 0, true), "drain down #deploy\n");
	}
}
END_TEST

START_TEST(reasons_off)
{
	ck_assert_str_eq(line(mk(NODE_DRAIN, 100, "secret-ish"), 0, false),
	    "drain up\n");
}
END_TEST

START_TEST(restore_words)
{
	ck_assert_str_eq(line(mk(NODE_UP, 100, ""), CLAIM_ADMIN, true),
	    "ready up\n");
	ck_assert_str_eq(line(mk(NODE_UP, 100, ""), CLAIM_WEIGHT, true),
	    "up 100%\n");
	ck_assert_str_eq(line(mk(NODE_UP, 100, "x"), CLAIM_ALL, true),
	    "ready up 100% #x\n");
	/* A marker removed while the rules say down: clear it, stay down. */
	ck_assert_str_eq(line(mk(NODE_DOWN, 100, "x"), CLAIM_ADMIN, true),
	    "ready down #x\n");
	/* "ready" never goes out with a drain or maint it would undo. */
	ck_assert_str_eq(line(mk(NODE_DRAIN, 100, ""), CLAIM_ADMIN, true),
	    "drain up\n");
	/* A reduced weight is sent as itself, not as 100%. */
	ck_assert_str_eq(line(mk(NODE_UP, 75, ""), CLAIM_WEIGHT, true),
	    "up 75%\n");
}
END_TEST

START_TEST(claims)
{
	struct decision	d = mk(NODE_UP, 100, "");

	ck_assert_uint_eq(reply_claims(&d), 0);
	d = mk(NODE_DRAIN, 100, "");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_ADMIN);
	d = mk(NODE_MAINT, 100, "");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_ADMIN);
	d = mk(NODE_UP, 60, "");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_WEIGHT);
	d = mk(NODE_UP, 0, "");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_WEIGHT);
	d = mk(NODE_DOWN, 100, "");
	ck_assert_uint_eq(reply_claims(&d), 0);
	ck_assert_str_eq(reply_restore_word(CLAIM_ADMIN), "ready");
	ck_assert_str_eq(reply_restore_word(CLAIM_WEIGHT), "100%");
}
END_TEST

START_TEST(longest_fits)
{
	struct decision	d = mk(NODE_MAINT, 100, "");
	const char	*l;

	memset(d.reason, 'r', REASON_MAX);
	d.reason[REASON_MAX] = '\0';
	l = line(d, CLAIM_ALL, true);
	ck_assert_uint_eq(strlen(l), strlen("maint up 100% #") + REASON_MAX + 1);
	d.failing = true;
	l = line(d, CLAIM_ALL, true);
	ck_assert_uint_eq(strlen(l), strlen("maint down 100% #") + REASON_MAX + 1);
}
END_TEST

/* Automation off: no word of lbagent's own, a marker's word, the comment. */
START_TEST(automation_off)
{
	struct decision	d;
	char		b[24];

	decision_off(&d);
	ck_assert_str_eq(line(d, 0, true), "# lbagent automation off\n");
	ck_assert_str_eq(line(d, 0, false), "# lbagent automation off\n");
	/* Never 100%: a weight HAProxy holds stays held. */
	ck_assert_str_eq(line(d, CLAIM_WEIGHT, true),
	    "# lbagent automation off\n");
	/* A marker that ended is an operator's act: its "ready" still goes. */
	ck_assert_str_eq(line(d, CLAIM_ALL, true),
	    "ready # lbagent automation off\n");
	ck_assert_uint_eq(reply_claims(&d), 0);
	ck_assert_str_eq(decision_words(&d, b), "automation off");
	d.state = NODE_MAINT;
	strcpy(d.reason, "kernel upgrade");
	d.failing = true;
	ck_assert_str_eq(line(d, CLAIM_ALL, true),
	    "maint #kernel upgrade; lbagent automation off\n");
	ck_assert_str_eq(line(d, 0, false), "maint # lbagent automation off\n");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_ADMIN);
	d.state = NODE_DRAIN;
	ck_assert_str_eq(line(d, 0, true),
	    "drain #kernel upgrade; lbagent automation off\n");
	memset(d.reason, 'x', REASON_MAX);
	d.reason[REASON_MAX] = '\0';
	ck_assert_uint_eq(strlen(line(d, CLAIM_ALL, true)), strlen("drain #") +
	    REASON_MAX + strlen("; lbagent automation off\n"));
	/* In words, for the history. */
	decision_up(&d);
	ck_assert_str_eq(decision_words(&d, b), "up");
	d.weight = 40;
	ck_assert_str_eq(decision_words(&d, b), "up 40%");
	d.state = NODE_DOWN;
	ck_assert_str_eq(decision_words(&d, b), "down");
}
END_TEST

static const char *
shadow_line(struct decision d, unsigned restore, const char *would)
{
	static char	buf[REPLY_MAX];
	size_t		n = reply_compose_shadow(&d, restore, would, buf);

	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_int_eq(buf[n - 1], '\n');
	return buf;
}

/*
 * Shadow: off's words only (a marker's, a ready owed), then the line
 * automation would send as the comment; the longest of both fits.
 */
START_TEST(shadow)
{
	struct decision	d, w = mk(NODE_MAINT, 100, "");
	char		b[24], would[REPLY_MAX];
	const char	*l;

	decision_shadow(&d);
	ck_assert(d.automation_off);
	ck_assert_str_eq(shadow_line(d, 0, "down #dep: gone"),
	    "# lbagent shadow: would reply down #dep: gone\n");
	/* Its newline, if given, is not repeated. */
	ck_assert_str_eq(shadow_line(d, 0, "up 50%\n"),
	    "# lbagent shadow: would reply up 50%\n");
	/* Never a weight of its own: a weight HAProxy holds stays held. */
	ck_assert_str_eq(shadow_line(d, CLAIM_WEIGHT, "up"),
	    "# lbagent shadow: would reply up\n");
	ck_assert_str_eq(shadow_line(d, CLAIM_ALL, "ready up"),
	    "ready # lbagent shadow: would reply ready up\n");
	ck_assert_uint_eq(reply_claims(&d), 0);
	ck_assert_str_eq(decision_words(&d, b), "shadow");
	d.state = NODE_DRAIN;
	ck_assert_str_eq(shadow_line(d, CLAIM_ALL, "drain down #patching"),
	    "drain # lbagent shadow: would reply drain down #patching\n");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_ADMIN);
	ck_assert_str_eq(decision_words(&d, b), "drain");

	/* The longest would-be line, quoted after the longest words. */
	w.failing = true;
	memset(w.reason, 'r', REASON_MAX);
	w.reason[REASON_MAX] = '\0';
	reply_compose(&w, CLAIM_ALL, true, would);
	d.state = NODE_MAINT;
	l = shadow_line(d, CLAIM_ALL, would);
	ck_assert_uint_eq(strlen(l), strlen("maint # lbagent shadow: would "
	    "reply ") + strlen(would));
	ck_assert_ptr_nonnull(strstr(l, would));
}
END_TEST

/*
 * Capacity weights (issue 31): the factor over the health weight, above
 * 100% too (claimed, restored with 100%), maxconn:N when learned, never
 * maxconn:0; down and markers untouched.
 */
START_TEST(capacity)
{
	struct decision	d = mk(NODE_UP, 100, "");

	decision_capacity(&d, 125, 17);
	ck_assert_str_eq(line(d, 0, true), "up 125% maxconn:17\n");
	ck_assert_uint_eq(reply_claims(&d), CLAIM_WEIGHT);
	ck_assert_uint_eq(d.health_weight, 100);
	/* A warn's 50% halves it, rounded down as HAProxy rounds. */
	d = mk(NODE_UP, 50, "p: slow");
	decision_capacity(&d, 125, 0);
	ck_assert_str_eq(line(d, 0, true), "up 62% #p: slow\n");
	/* Never over HAProxy's 256, never 0 from a weight above 0. */
	d = mk(NODE_UP, 100, "");
	decision_capacity(&d, 400, 0);
	ck_assert_uint_eq(d.weight, 256);
	d = mk(NODE_UP, 1, "");
	decision_capacity(&d, 25, 0);
	ck_assert_uint_eq(d.weight, 1);
	/* No factor: the health weight, the limit still said. */
	d = mk(NODE_UP, 100, "");
	decision_capacity(&d, 0, 4);
	ck_assert_str_eq(line(d, CLAIM_WEIGHT, true), "up 100% maxconn:4\n");
	ck_assert_uint_eq(d.capacity_pct, 0);
	d = mk(NODE_DOWN, 100, "x");
	decision_capacity(&d, 150, 9);
	ck_assert_str_eq(line(d, 0, true), "down #x\n");
	d = mk(NODE_DRAIN, 100, "");
	decision_capacity(&d, 150, 9);
	ck_assert_str_eq(line(d, 0, true), "drain up\n");
	/* The words of the history: the health weight's kind. */
	{
		char	buf[24];

		d = mk(NODE_UP, 100, "");
		decision_capacity(&d, 80, 0);
		ck_assert_str_eq(decision_words(&d, buf), "up");
	}
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("reply");
	TCase	*tc = tcase_create("reply");

	tcase_add_test(tc, states);
	tcase_add_test(tc, reasons_off);
	tcase_add_test(tc, restore_words);
	tcase_add_test(tc, claims);
	tcase_add_test(tc, longest_fits);
	tcase_add_test(tc, automation_off);
	tcase_add_test(tc, shadow);
	tcase_add_test(tc, capacity);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
