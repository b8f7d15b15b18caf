/*
 * A cumulative counter's rate (core/rate.c): per second over the last
 * interval, resets (a smaller value, another epoch) giving no sample and
 * a new base, the same round fed again changing nothing, the sum over
 * sources.
 */
#include <math.h>
#include <stddef.h>

#include "lbagent/core/rate.h"
#include "testutil.h"

#define near(a, b)	ck_assert_double_eq_tol((a), (b), 1e-9)

START_TEST(rate_over_the_interval)
{
	struct counter_rate	r;

	counter_rate_init(&r);
	ck_assert(isnan(r.per_s));
	ck_assert_int_eq(counter_rate_feed(&r, 1000, 5000, 42), RATE_BASE);
	ck_assert(isnan(r.per_s));
	/* 150 sessions in 1.5 s: 100 a second. */
	ck_assert_int_eq(counter_rate_feed(&r, 1150, 6500, 42), RATE_SAMPLE);
	near(r.per_s, 100.0);
	ck_assert_int_eq(r.interval_ms, 1500);
	/* Nothing new: 0 a second, a rate still. */
	ck_assert_int_eq(counter_rate_feed(&r, 1150, 7500, 42), RATE_SAMPLE);
	near(r.per_s, 0.0);
	/* The last interval only, not since the start. */
	ck_assert_int_eq(counter_rate_feed(&r, 1155, 8000, 42), RATE_SAMPLE);
	near(r.per_s, 10.0);
	ck_assert_uint_eq(r.resets, 0);
}
END_TEST

/* Fed each step what the last round saw: only a new round counts. */
START_TEST(same_round_again)
{
	struct counter_rate	r;

	counter_rate_init(&r);
	counter_rate_feed(&r, 10, 1000, RATE_EPOCH_NONE);
	counter_rate_feed(&r, 30, 2000, RATE_EPOCH_NONE);
	near(r.per_s, 20.0);
	ck_assert_int_eq(counter_rate_feed(&r, 30, 2000, RATE_EPOCH_NONE),
	    RATE_SAME);
	near(r.per_s, 20.0);
	/* Not later (a clock that went back): ignored, even when smaller. */
	ck_assert_int_eq(counter_rate_feed(&r, 5, 1500, RATE_EPOCH_NONE),
	    RATE_SAME);
	near(r.per_s, 20.0);
	ck_assert_int_eq(r.value, 30);
	ck_assert_uint_eq(r.resets, 0);
}
END_TEST

START_TEST(resets)
{
	struct counter_rate	r;

	counter_rate_init(&r);
	counter_rate_feed(&r, 500, 1000, 7);
	counter_rate_feed(&r, 600, 2000, 7);
	near(r.per_s, 100.0);
	/* HAProxy reloaded: the counter starts over, no sample, new base. */
	ck_assert_int_eq(counter_rate_feed(&r, 40, 3000, 7), RATE_RESET);
	ck_assert(isnan(r.per_s));
	ck_assert_uint_eq(r.resets, 1);
	ck_assert_int_eq(counter_rate_feed(&r, 90, 4000, 7), RATE_SAMPLE);
	near(r.per_s, 50.0);
	/* Another pid, even with a larger value: a reset. */
	ck_assert_int_eq(counter_rate_feed(&r, 5000, 5000, 8), RATE_RESET);
	ck_assert(isnan(r.per_s));
	ck_assert_uint_eq(r.resets, 2);
	ck_assert_int_eq(counter_rate_feed(&r, 5020, 6000, 8), RATE_SAMPLE);
	near(r.per_s, 20.0);
	/* An epoch not known this time compares with nothing. */
	ck_assert_int_eq(counter_rate_feed(&r, 5030, 7000, RATE_EPOCH_NONE),
	    RATE_SAMPLE);
	near(r.per_s, 10.0);
	ck_assert_int_eq(r.epoch, 8);
	ck_assert_int_eq(counter_rate_feed(&r, 5040, 8000, 8), RATE_SAMPLE);
	ck_assert_uint_eq(r.resets, 2);
}
END_TEST

START_TEST(unknown_and_missed)
{
	struct counter_rate	r;

	counter_rate_init(&r);
	counter_rate_feed(&r, 100, 1000, 1);
	counter_rate_feed(&r, 200, 2000, 1);
	/* A round without an answer: no rate, the base kept. */
	counter_rate_miss(&r);
	ck_assert(isnan(r.per_s));
	ck_assert_int_eq(counter_rate_feed(&r, 500, 4000, 1), RATE_SAMPLE);
	near(r.per_s, 150.0);	/* over the whole gap */
	ck_assert_int_eq(r.interval_ms, 2000);
	/* The column went away: base and rate gone; back, a new base. */
	ck_assert_int_eq(counter_rate_feed(&r, -1, 5000, 1), RATE_UNKNOWN);
	ck_assert(isnan(r.per_s));
	ck_assert_int_eq(counter_rate_feed(&r, 20, 6000, 1), RATE_BASE);
	ck_assert(isnan(r.per_s));
	ck_assert_int_eq(counter_rate_feed(&r, 30, 7000, 1), RATE_SAMPLE);
	near(r.per_s, 10.0);
	ck_assert_uint_eq(r.resets, 0);
}
END_TEST

/* This node's server on two load balancers: the node's rate is the sum. */
START_TEST(sum_over_sources)
{
	struct counter_rate	lb[3];
	size_t			counted = 99;

	counter_rate_init(&lb[0]);
	counter_rate_init(&lb[1]);
	counter_rate_init(&lb[2]);
	ck_assert(isnan(counter_rate_sum(lb, 3, &counted)));
	ck_assert_uint_eq(counted, 0);
	counter_rate_feed(&lb[0], 0, 0, 1);
	counter_rate_feed(&lb[0], 60, 1000, 1);
	counter_rate_feed(&lb[1], 1000, 100, 2);
	counter_rate_feed(&lb[1], 1040, 1100, 2);
	counter_rate_feed(&lb[2], 7, 100, 3);	/* a base only */
	near(counter_rate_sum(lb, 3, &counted), 100.0);
	ck_assert_uint_eq(counted, 2);
	near(counter_rate_sum(lb, 3, NULL), 100.0);
	/* One reset: the others still count, and counted says so. */
	counter_rate_feed(&lb[1], 3, 2100, 2);
	near(counter_rate_sum(lb, 3, &counted), 60.0);
	ck_assert_uint_eq(counted, 1);
	ck_assert(isnan(counter_rate_sum(lb, 0, &counted)));
}
END_TEST

static Suite *
rate_suite(void)
{
	Suite	*s = suite_create("rate");
	TCase	*tc = tcase_create("rate");

	tcase_add_test(tc, rate_over_the_interval);
	tcase_add_test(tc, same_round_again);
	tcase_add_test(tc, resets);
	tcase_add_test(tc, unknown_and_missed);
	tcase_add_test(tc, sum_over_sources);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(rate_suite());
}
