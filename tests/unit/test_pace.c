/*
 * The peer guard's pace (core/pace.c): which states ask fast, which
 * steadily, which not at all, and the jitter, drawn from a fixed seed.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/pace.h"
#include "testutil.h"

static struct pace_in
state(enum guard_state g, bool in, bool marker)
{
	struct pace_in	p = { g, INT64_MIN, 100000, 10000, in, marker };

	return p;
}

START_TEST(what_each_state_wants)
{
	struct pace_in	p;

	/* In and healthy, the guard only watching: nobody is asked. */
	p = state(GUARD_WATCHING, true, false);
	ck_assert_int_eq(pace_of(&p), PACE_NONE);
	p = state(GUARD_LATCHED, true, false);
	ck_assert_int_eq(pace_of(&p), PACE_NONE);
	/* A decision waits: going out is due, or held in until one serves. */
	p = state(GUARD_ASKING, true, false);
	ck_assert_int_eq(pace_of(&p), PACE_FAST);
	p = state(GUARD_HOLDING, true, false);
	ck_assert_int_eq(pace_of(&p), PACE_FAST);
	/*
	 * Out by the rules: fast within just_out, steady after it, the
	 * whole backend still read (alone_grace waits on the others).
	 */
	p = state(GUARD_WATCHING, false, false);
	p.out_ms = p.now_ms - 10000;
	ck_assert_int_eq(pace_of(&p), PACE_FAST);
	p.out_ms = p.now_ms - 10001;
	ck_assert_int_eq(pace_of(&p), PACE_STEADY_WHOLE);
	p.out_ms = INT64_MIN;
	ck_assert_int_eq(pace_of(&p), PACE_STEADY_WHOLE);
	/* Out by the rules and held by a marker: the rules' need stands. */
	p = state(GUARD_WATCHING, false, true);
	ck_assert_int_eq(pace_of(&p), PACE_STEADY_WHOLE);
	/* Back alone: it goes out once another serves. */
	p = state(GUARD_BACK_ALONE, true, false);
	ck_assert_int_eq(pace_of(&p), PACE_STEADY_WHOLE);
	/* Held out by a marker, in by the rules: steady, its own row. */
	p = state(GUARD_WATCHING, true, true);
	ck_assert_int_eq(pace_of(&p), PACE_STEADY);
}
END_TEST

START_TEST(intervals)
{
	ck_assert_uint_eq(pace_interval_ms(PACE_NONE, false, 1000, 10000), 0);
	ck_assert_uint_eq(pace_interval_ms(PACE_NONE, true, 1000, 10000),
	    10000);
	ck_assert_uint_eq(pace_interval_ms(PACE_STEADY, false, 1000, 10000),
	    10000);
	ck_assert_uint_eq(pace_interval_ms(PACE_STEADY_WHOLE, false, 1000,
	    10000), 10000);
	ck_assert_uint_eq(pace_interval_ms(PACE_FAST, true, 1000, 10000),
	    1000);
	/* Only a decision waiting on the others reads them. */
	ck_assert(!pace_whole(PACE_NONE));
	ck_assert(!pace_whole(PACE_STEADY));
	ck_assert(pace_whole(PACE_STEADY_WHOLE));
	ck_assert(pace_whole(PACE_FAST));
}
END_TEST

/* Up to 20% sooner, never later; spread over that range; reproducible. */
START_TEST(jitter)
{
	uint32_t	seed = 12345, again = 12345, zero = 0;
	uint64_t	d, lo = UINT64_MAX, hi = 0, first[8];
	int		i;

	for (i = 0; i < 1000; i++) {
		d = pace_delay_ms(10000, &seed);
		ck_assert_uint_ge(d, 8000);
		ck_assert_uint_le(d, 10000);
		if (d < lo)
			lo = d;
		if (d > hi)
			hi = d;
		if (i < 8)
			first[i] = d;
	}
	ck_assert_uint_lt(lo, 8200);
	ck_assert_uint_gt(hi, 9800);
	for (i = 0; i < 8; i++)
		ck_assert_uint_eq(pace_delay_ms(10000, &again), first[i]);
	/* Two nodes' seeds draw apart. */
	seed = pace_seed("n1", 7);
	again = pace_seed("n2", 7);
	ck_assert_uint_ne(seed, again);
	ck_assert_uint_ne(pace_delay_ms(10000, &seed),
	    pace_delay_ms(10000, &again));
	/* A zero seed still draws, and is never left 0. */
	pace_delay_ms(1000, &zero);
	ck_assert_uint_ne(zero, 0);
	/* Too short to jitter: the interval itself. */
	ck_assert_uint_eq(pace_delay_ms(4, &seed), 4);
}
END_TEST

static Suite *
pace_suite(void)
{
	Suite	*s = suite_create("pace");
	TCase	*tc = tcase_create("pace");

	tcase_add_test(tc, what_each_state_wants);
	tcase_add_test(tc, intervals);
	tcase_add_test(tc, jitter);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(pace_suite());
}
