/* The rules engine: most severe reaction wins, reasons in severity order. */
#include <string.h>

#include "lbagent/core/rules.h"
#include "lbagent/daemon/config.h"
#include "testutil.h"

static struct rules_input
in(const char *name, enum probe_result r, const char *reason,
    const char *on_warn, const char *on_crit)
{
	struct rules_input	 x;
	const char		*why;

	memset(&x, 0, sizeof(x));
	x.name = name;
	x.counted = r;
	x.reason = reason;
	ck_assert_int_eq(config_parse_reaction(on_warn, &x.on_warn, &why), 0);
	ck_assert_int_eq(config_parse_reaction(on_crit, &x.on_crit, &why), 0);
	return x;
}

START_TEST(all_ok_is_up)
{
	struct rules_input	v[2];
	struct decision		d;

	v[0] = in("a", PROBE_OK, "", "50%", "down");
	v[1] = in("b", PROBE_OK, "", "ignore", "down");
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 100);
	ck_assert_str_eq(d.reason, "");
	rules_evaluate(NULL, 0, &d);
	ck_assert_int_eq(d.state, NODE_UP);
}
END_TEST

/* The RX layout: client-api down, preview 50%, log 75%. */
START_TEST(most_severe_wins)
{
	struct rules_input	v[4];
	struct decision		d;

	v[0] = in("log", PROBE_CRIT, "HTTP 500", "ignore", "75%");
	v[1] = in("preview", PROBE_CRIT, "connection refused", "ignore", "50%");
	v[2] = in("client-api", PROBE_OK, "", "ignore", "down");
	v[3] = in("disk", PROBE_WARN, "86% used (warn 85%)", "50%", "down");
	rules_evaluate(v, 4, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 50);
	/* Ties keep config order; the 75% comes after the 50% ones. */
	ck_assert_str_eq(d.reason, "preview: connection refused; "
	    "disk: 86% used (warn 85%); log: HTTP 500");

	v[2] = in("client-api", PROBE_CRIT, "HTTP 503", "ignore", "down");
	rules_evaluate(v, 4, &d);
	ck_assert_int_eq(d.state, NODE_DOWN);
	ck_assert(strncmp(d.reason, "client-api: HTTP 503; preview: ", 31) == 0);
}
END_TEST

START_TEST(drain_is_zero_weight_below_down)
{
	struct rules_input	v[2];
	struct decision		d;

	v[0] = in("a", PROBE_CRIT, "x", "ignore", "drain");
	v[1] = in("b", PROBE_CRIT, "y", "ignore", "10%");
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 0);
	ck_assert_str_eq(d.reason, "a: x; b: y");
	v[1] = in("b", PROBE_WARN, "y", "down", "10%");
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_DOWN);
	ck_assert_str_eq(d.reason, "b: y; a: x");
}
END_TEST

START_TEST(ignore_changes_nothing)
{
	struct rules_input	v[1];
	struct decision		d;

	v[0] = in("swap", PROBE_CRIT, "99% used", "ignore", "ignore");
	rules_evaluate(v, 1, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 100);
	ck_assert_str_eq(d.reason, "");
}
END_TEST

/* A probe counts as unknown only when on_unknown counts: its reaction. */
START_TEST(unknown_reacts_with_on_unknown)
{
	struct rules_input	 v[2];
	struct decision		 d;
	const char		*why;

	v[0] = in("plugin", PROBE_UNKNOWN, "UNKNOWN - bad option", "50%",
	    "down");
	v[1] = in("disk", PROBE_WARN, "86% used", "75%", "down");
	/* ignore, as a probe with no on_unknown: only the warn counts. */
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 75);
	ck_assert_str_eq(d.reason, "disk: 86% used");
	/* Neither on_warn nor on_crit: on_unknown decides. */
	ck_assert_int_eq(config_parse_reaction("40%", &v[0].on_unknown, &why),
	    0);
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 40);
	ck_assert_str_eq(d.reason, "plugin: UNKNOWN - bad option; "
	    "disk: 86% used");
	ck_assert_int_eq(config_parse_reaction("down", &v[0].on_unknown, &why),
	    0);
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_DOWN);
	/* on_unknown reacts to unknown alone. */
	v[0].counted = PROBE_WARN;
	rules_evaluate(v, 2, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 50);
}
END_TEST

START_TEST(reason_cut_at_limit)
{
	struct rules_input	v[5];
	struct decision		d;
	char			long_reason[150];
	int			i;

	memset(long_reason, 'x', sizeof(long_reason) - 1);
	long_reason[sizeof(long_reason) - 1] = '\0';
	for (i = 0; i < 5; i++)
		v[i] = in("p", PROBE_CRIT, long_reason, "ignore", "down");
	rules_evaluate(v, 5, &d);
	ck_assert_uint_eq(strlen(d.reason), REASON_MAX);
}
END_TEST

START_TEST(reactions_parse)
{
	struct reaction	 r;
	const char	*why;
	char		 buf[8];

	ck_assert_int_eq(config_parse_reaction("75%", &r, &why), 0);
	ck_assert_int_eq(r.kind, REACT_WEIGHT);
	ck_assert_uint_eq(r.weight, 75);
	ck_assert_str_eq(config_reaction_text(&r, buf), "75%");
	ck_assert_int_eq(config_parse_reaction("1%", &r, &why), 0);
	ck_assert_int_eq(config_parse_reaction("99%", &r, &why), 0);
	ck_assert_int_eq(config_parse_reaction("0%", &r, &why), -1);
	ck_assert_int_eq(config_parse_reaction("100%", &r, &why), -1);
	ck_assert_int_eq(config_parse_reaction("50.5%", &r, &why), -1);
	ck_assert_int_eq(config_parse_reaction("maint", &r, &why), -1);
	ck_assert_str_eq(why,
	    "expected down, drain, ignore or a weight from 1% to 99%");
	ck_assert_int_eq(config_parse_reaction("drain", &r, &why), 0);
	ck_assert_str_eq(config_reaction_text(&r, buf), "drain");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("rules");
	TCase	*tc = tcase_create("rules");

	tcase_add_test(tc, all_ok_is_up);
	tcase_add_test(tc, most_severe_wins);
	tcase_add_test(tc, drain_is_zero_weight_below_down);
	tcase_add_test(tc, ignore_changes_nothing);
	tcase_add_test(tc, unknown_reacts_with_on_unknown);
	tcase_add_test(tc, reason_cut_at_limit);
	tcase_add_test(tc, reactions_parse);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
