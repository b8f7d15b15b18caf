/*
 * warn/crit on a number (core/threshold.c): at or above, at or below when
 * crit is below warn, one of them alone; and the latency limits.
 */
#include "lbagent/core/threshold.h"
#include "testutil.h"

START_TEST(upwards)
{
	struct threshold	t = { true, true, 10, 20 };
	double			lim;

	ck_assert(threshold_any(&t));
	ck_assert(!threshold_lower_is_worse(&t));
	ck_assert_int_eq(threshold_level(&t, 9.99, &lim), PROBE_OK);
	ck_assert_int_eq(threshold_level(&t, 10, &lim), PROBE_WARN);
	ck_assert(lim == 10);
	ck_assert_int_eq(threshold_level(&t, 20, &lim), PROBE_CRIT);
	ck_assert(lim == 20);
	ck_assert_int_eq(threshold_level(&t, 1e300, &lim), PROBE_CRIT);
}
END_TEST

START_TEST(downwards)
{
	struct threshold	t = { true, true, 10, 5 };
	double			lim;

	ck_assert(threshold_lower_is_worse(&t));
	ck_assert_int_eq(threshold_level(&t, 11, &lim), PROBE_OK);
	ck_assert_int_eq(threshold_level(&t, 10, &lim), PROBE_WARN);
	ck_assert_int_eq(threshold_level(&t, 5, &lim), PROBE_CRIT);
	ck_assert(lim == 5);
	ck_assert_int_eq(threshold_level(&t, -3, &lim), PROBE_CRIT);
}
END_TEST

START_TEST(one_alone)
{
	struct threshold	w = { true, false, 10, 0 };
	struct threshold	c = { false, true, 0, 3 };
	struct threshold	none = { false, false, 0, 0 };
	double			lim;

	/* Alone, each is "at or above". */
	ck_assert(!threshold_lower_is_worse(&w));
	ck_assert_int_eq(threshold_level(&w, 100, &lim), PROBE_WARN);
	ck_assert_int_eq(threshold_level(&c, 2, &lim), PROBE_OK);
	ck_assert_int_eq(threshold_level(&c, 3, &lim), PROBE_CRIT);
	ck_assert(!threshold_any(&none));
	ck_assert_int_eq(threshold_level(&none, 1e9, &lim), PROBE_OK);
}
END_TEST

START_TEST(latency)
{
	struct latency_limit	l = { true, true, 500, 2000 };
	struct latency_limit	bad = { true, true, 2000, 2000 };
	struct latency_limit	crit_only = { false, true, 0, 100 };
	uint64_t		lim;

	ck_assert_int_eq(latency_level(&l, 499.9, &lim), PROBE_OK);
	ck_assert_int_eq(latency_level(&l, 500, &lim), PROBE_WARN);
	ck_assert_uint_eq(lim, 500);
	ck_assert_int_eq(latency_level(&l, 2000, &lim), PROBE_CRIT);
	ck_assert_uint_eq(lim, 2000);
	ck_assert_int_eq(latency_level(&crit_only, 99, &lim), PROBE_OK);
	ck_assert_int_eq(latency_level(&crit_only, 100, &lim), PROBE_CRIT);
	ck_assert_ptr_null(latency_limit_check(&l));
	ck_assert_str_eq(latency_limit_check(&bad),
	    "warn_latency must be below crit_latency");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("threshold");
	TCase	*tc = tcase_create("threshold");

	tcase_add_test(tc, upwards);
	tcase_add_test(tc, downwards);
	tcase_add_test(tc, one_alone);
	tcase_add_test(tc, latency);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
