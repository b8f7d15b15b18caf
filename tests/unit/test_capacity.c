/*
 * The capacity weight (core/capacity.c): every state and its way in and
 * out, the floor and cap, the deadband and step, bad inputs; and a fleet
 * of three nodes 2:2:1 simulated over a fake clock, whose weights must
 * settle near the ideal and stay there.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/capacity.h"
#include "testutil.h"

static struct capacity_settings
defaults(void)
{
	struct capacity_settings	s;

	capacity_settings_default(&s);
	return s;
}

/* Samples of (rate, util) every second from t0 to t1 (ms), viewed. */
static void
feed(struct capacity *c, double rate, double util, int64_t t0, int64_t t1,
    const double *peers, size_t n, struct capacity_view *v)
{
	int64_t	t;

	for (t = t0; t <= t1; t += 1000) {
		capacity_sample(c, rate, util, t);
		capacity_view(c, t, peers, n, v);
	}
}

START_TEST(blackout_then_active)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double				peers[] = { 300, 300 };

	capacity_init(&c, &s, 0);
	feed(&c, 150, 0.5, 0, 9000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_BLACKOUT);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert(!v.publish);
	ck_assert(isnan(v.estimate));
	ck_assert_ptr_nonnull(strstr(v.reason, "blackout"));
	/* The first sample after it is the estimate. */
	feed(&c, 150, 0.5, 10000, 10000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_ACTIVE);
	ck_assert(v.publish);
	ck_assert_double_eq_tol(v.estimate, 300, 1e-9);
	ck_assert_double_eq_tol(v.fleet_mean, 300, 1e-9);
	ck_assert_int_eq(v.fleet_n, 3);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert_str_eq(capacity_state_name(v.state), "active");
}
END_TEST

START_TEST(factor_steps_through_deadband)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double				peers[] = { 200, 200 };

	capacity_init(&c, &s, 0);
	/* 100 req/s: the mean 166.7, F 0.6: 60%, reached in steps of 20. */
	feed(&c, 50, 0.5, 10000, 10000, peers, 2, &v);
	ck_assert_int_eq(v.target_pct, 60);
	ck_assert_int_eq(v.factor_pct, 80);
	ck_assert(v.changed);
	ck_assert_ptr_nonnull(strstr(v.reason, "toward 60%"));
	feed(&c, 50, 0.5, 11000, 14000, peers, 2, &v);
	ck_assert_int_eq(v.factor_pct, 80);
	ck_assert(!v.changed);
	feed(&c, 50, 0.5, 15000, 15000, peers, 2, &v);
	ck_assert_int_eq(v.factor_pct, 60);
	ck_assert(v.changed);
	ck_assert_ptr_nonnull(strstr(v.reason, "capacity 60%: 50 req/s at "
	    "0.50 = 100 req/s, fleet mean 167 req/s of 3"));
	/* A peer's estimate 1% off: within the deadband, no change. */
	peers[0] = 206;
	feed(&c, 50, 0.5, 16000, 30000, peers, 2, &v);
	ck_assert_int_eq(v.target_pct, 59);
	ck_assert_int_eq(v.factor_pct, 60);
	/* 2 points off: it moves. */
	peers[0] = peers[1] = 212;
	feed(&c, 50, 0.5, 31000, 31000, peers, 2, &v);
	ck_assert_int_eq(v.factor_pct, 57);
}
END_TEST

START_TEST(floor_cap_reference)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double				peers[] = { 10000 };
	double				tiny[] = { 1, 1 };

	s.step_max_pct = 0;
	capacity_init(&c, &s, 0);
	feed(&c, 50, 0.5, 10000, 10000, peers, 1, &v);
	ck_assert_int_eq(v.factor_pct, 25);
	ck_assert_ptr_nonnull(strstr(v.reason, "floor"));
	feed(&c, 50, 0.5, 15000, 15000, tiny, 2, &v);
	ck_assert_int_eq(v.factor_pct, 200);
	ck_assert_ptr_nonnull(strstr(v.reason, "cap"));
	/* No peer's estimate: the reference; without one, 100%. */
	feed(&c, 50, 0.5, 20000, 20000, NULL, 0, &v);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert_int_eq(v.fleet_n, 1);
	s.reference = 80;
	capacity_init(&c, &s, 0);
	feed(&c, 50, 0.5, 10000, 10000, NULL, 0, &v);
	ck_assert_int_eq(v.fleet_n, 0);
	ck_assert_int_eq(v.factor_pct, 125);
	ck_assert_ptr_nonnull(strstr(v.reason, "reference 80 req/s"));
}
END_TEST

START_TEST(idle_keeps_or_100)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double				peers[] = { 200, 200 };

	capacity_init(&c, &s, 0);
	/* Idle from the start: no estimate, 100%. */
	feed(&c, 0.5, 0.01, 10000, 20000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_IDLE);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert_ptr_nonnull(strstr(v.reason, "0.5 req/s under "
	    "capacity_min_rate"));
	/* A rate but no utilization to speak of: idle too. */
	feed(&c, 50, 0.01, 21000, 21000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_IDLE);
	ck_assert_ptr_nonnull(strstr(v.reason, "utilization under"));
	/* Active, then idle for a minute: the estimate and weight kept. */
	feed(&c, 50, 0.5, 22000, 40000, peers, 2, &v);
	ck_assert_int_eq(v.factor_pct, 60);
	feed(&c, 0, 0, 41000, 100000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_IDLE);
	ck_assert_int_eq(v.factor_pct, 60);
	ck_assert(v.publish);
	ck_assert_uint_eq(v.age_ms, 60000);
	ck_assert_ptr_nonnull(strstr(v.reason, "idle, kept"));
}
END_TEST

START_TEST(stale_and_back)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double				peers[] = { 200, 200 };

	capacity_init(&c, &s, 0);
	feed(&c, 50, 0.5, 10000, 20000, peers, 2, &v);
	ck_assert_int_eq(v.factor_pct, 60);
	/* No utilization: not fresh; stale after the expiry, 100% at once. */
	feed(&c, 50, NAN, 21000, 50000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_ACTIVE);
	ck_assert_int_eq(v.factor_pct, 60);
	feed(&c, 50, NAN, 51000, 51000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_STALE);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert(v.changed);
	ck_assert(!v.publish);
	ck_assert_ptr_nonnull(strstr(v.reason, "stale, no sample for 31s"));
	/* Samples again: the estimate it had, at once a step. */
	feed(&c, 50, 0.5, 52000, 52000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_ACTIVE);
	ck_assert_int_eq(v.factor_pct, 80);
	/* Never a sample after the blackout: stale once the expiry passes. */
	capacity_init(&c, &s, 0);
	capacity_view(&c, 40000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_IDLE);
	capacity_view(&c, 40001, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_STALE);
}
END_TEST

START_TEST(counter_reset)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double				peers[] = { 200, 200 };

	capacity_init(&c, &s, 0);
	feed(&c, 50, 0.5, 10000, 20000, peers, 2, &v);
	ck_assert_int_eq(v.factor_pct, 60);
	capacity_counter_reset(&c, 21000);
	feed(&c, 200, 0.5, 21000, 30000, peers, 2, &v);
	ck_assert_int_eq(v.state, CAPACITY_BLACKOUT);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert_ptr_nonnull(strstr(v.reason, "the rate counter reset"));
	/* The old estimate is gone: the new one alone. */
	feed(&c, 200, 0.5, 31000, 31000, peers, 2, &v);
	ck_assert_double_eq_tol(v.estimate, 400, 1e-9);
	ck_assert_int_eq(v.target_pct, 150);
}
END_TEST

START_TEST(bad_inputs_are_safe)
{
	struct capacity_settings	s = defaults();
	struct capacity			c;
	struct capacity_view		v;
	double	bad[] = { NAN, INFINITY, -INFINITY, -1, 1e300, -0.0, 0,
	    DBL_MAX, 1e-300 };
	double	peers[] = { NAN, INFINITY, -5, 0, 1e300 };
	size_t	i, j;
	int64_t	t = 10000;

	capacity_init(&c, &s, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			capacity_sample(&c, bad[i], bad[j], t);
			capacity_view(&c, t, peers, 5, &v);
			ck_assert(v.factor_pct >= 25 && v.factor_pct <= 200);
			ck_assert(!isnan((double)v.factor_pct));
			ck_assert(isnan(v.estimate) || isfinite(v.estimate));
			ck_assert(v.reason[0] != '\0');
			t += 1000;
		}
	ck_assert_int_eq(v.factor_pct, 100);
	/* The bad peers are none: a huge own estimate is capped. */
	feed(&c, 1e9, 0.05, t, t, peers, 5, &v);
	ck_assert_int_eq(v.fleet_n, 1);
	ck_assert_int_eq(v.factor_pct, 100);
	ck_assert(isfinite(v.raw_factor));
	/* A utilization over 1 counts as 1; a percentage is none. */
	capacity_init(&c, &s, 0);
	feed(&c, 50, 1.2, 10000, 10000, NULL, 0, &v);
	ck_assert_double_eq_tol(v.estimate, 50, 1e-9);
	feed(&c, 50, 60, 11000, 11000, NULL, 0, &v);
	ck_assert_double_eq_tol(v.estimate, 50, 1e-9);
	/* Out of order: ignored. Settings out of range: bounded. */
	capacity_sample(&c, 100, 0.5, 5000);
	capacity_view(&c, 12000, NULL, 0, &v);
	ck_assert_double_eq_tol(v.estimate, 50, 1e-9);
	s.floor_pct = -3;
	s.cap_pct = 5;
	s.min_rate = NAN;
	s.blackout_ms = UINT64_MAX;
	capacity_init(&c, &s, INT64_MAX / 2);
	capacity_view(&c, INT64_MAX / 2, NULL, 0, &v);
	ck_assert_int_eq(v.state, CAPACITY_BLACKOUT);
	ck_assert_int_eq(v.factor_pct, 100);
}
END_TEST

/*
 * The fleet: node i of true capacity cap[i] gets offered * w_i / sum(w)
 * (HAProxy's share by the weights replied a second ago), serves up to its
 * capacity, and measures utilization = served / capacity with up to 3%
 * noise from a fixed-seed PRNG. Peers' estimates are a second old.
 */
#define NODES	3
struct fleet {
	struct capacity	c[NODES];
	double		cap[NODES];
	double		published[NODES];
	int		w[NODES];
	uint32_t	seed;
	int64_t		t;
};

static double
noise(struct fleet *f)
{
	f->seed ^= f->seed << 13;
	f->seed ^= f->seed >> 17;
	f->seed ^= f->seed << 5;
	return (f->seed % 2001) / 1000.0 - 1;	/* -1..1 */
}

static void
fleet_init(struct fleet *f, double c0, double c1, double c2)
{
	struct capacity_settings	s;
	int				i;

	capacity_settings_default(&s);
	memset(f, 0, sizeof(*f));
	f->cap[0] = c0;
	f->cap[1] = c1;
	f->cap[2] = c2;
	f->seed = 2463534242u;
	for (i = 0; i < NODES; i++) {
		capacity_init(&f->c[i], &s, 0);
		f->w[i] = 100;
		f->published[i] = NAN;
	}
}

static double
ideal(const struct fleet *f, int i)
{
	return 100 * f->cap[i] * NODES / (f->cap[0] + f->cap[1] + f->cap[2]);
}

/* One second: served, sampled, each node viewed with the others'. */
static void
fleet_second(struct fleet *f, double offered)
{
	struct capacity_view	v;
	double			peers[NODES - 1], next[NODES], served;
	int			i, j, k, sum = 0;

	for (i = 0; i < NODES; i++)
		sum += f->w[i];
	for (i = 0; i < NODES; i++) {
		served = fmin(offered * f->w[i] / sum, f->cap[i]);
		capacity_sample(&f->c[i], served, fmin(1, served / f->cap[i]) *
		    (1 + 0.03 * noise(f)), f->t);
		for (j = k = 0; j < NODES; j++)
			if (j != i)
				peers[k++] = f->published[j];
		capacity_view(&f->c[i], f->t, peers, NODES - 1, &v);
		ck_assert(v.factor_pct >= 25 && v.factor_pct <= 200);
		next[i] = v.publish ? v.estimate : NAN;
		f->w[i] = v.factor_pct;
	}
	memcpy(f->published, next, sizeof(next));
	f->t += 1000;
}

/* Each weight within pct percent of its ideal. */
static int
fleet_off(const struct fleet *f, double pct)
{
	int	i, off = 0;

	for (i = 0; i < NODES; i++)
		if (fabs(f->w[i] - ideal(f, i)) > ideal(f, i) * pct / 100)
			off++;
	return off;
}

/* Runs secs seconds; *lo and *hi, the range each weight took. */
static void
fleet_run(struct fleet *f, double offered, int secs, int lo[NODES],
    int hi[NODES], double within_pct)
{
	int	s, i;

	for (i = 0; i < NODES; i++)
		lo[i] = hi[i] = f->w[i];
	for (s = 0; s < secs; s++) {
		fleet_second(f, offered);
		for (i = 0; i < NODES; i++) {
			lo[i] = f->w[i] < lo[i] ? f->w[i] : lo[i];
			hi[i] = f->w[i] > hi[i] ? f->w[i] : hi[i];
		}
		if (within_pct > 0)
			ck_assert_msg(fleet_off(f, within_pct) == 0,
			    "t=%lds: %d %d %d", (long)(f->t / 1000), f->w[0],
			    f->w[1], f->w[2]);
	}
}

/* No weight moves more than 10% of its ideal in any minute. */
static void
fleet_steady(struct fleet *f, double offered, int minutes)
{
	int	lo[NODES], hi[NODES], m, i;

	for (m = 0; m < minutes; m++) {
		fleet_run(f, offered, 60, lo, hi, 10);
		for (i = 0; i < NODES; i++)
			ck_assert_msg(hi[i] - lo[i] <= ideal(f, i) / 10,
			    "node %d moved %d..%d", i, lo[i], hi[i]);
	}
}

START_TEST(fleet_converges_and_holds)
{
	struct fleet	f;
	int		lo[NODES], hi[NODES];

	fleet_init(&f, 200, 200, 100);
	fleet_run(&f, 350, 30, lo, hi, 0);	/* 70% of capacity */
	ck_assert_msg(fleet_off(&f, 10) == 0, "%d %d %d", f.w[0], f.w[1],
	    f.w[2]);
	fleet_steady(&f, 350, 3);
	/* A node's capacity halves: settled within 30 s, then still. */
	f.cap[0] = 100;
	fleet_run(&f, 280, 30, lo, hi, 0);
	ck_assert_msg(fleet_off(&f, 10) == 0, "%d %d %d", f.w[0], f.w[1],
	    f.w[2]);
	fleet_steady(&f, 280, 3);
}
END_TEST

START_TEST(fleet_load_step)
{
	struct fleet	f;
	int		lo[NODES], hi[NODES];

	fleet_init(&f, 200, 200, 100);
	fleet_run(&f, 200, 30, lo, hi, 0);	/* 40% */
	fleet_run(&f, 200, 30, lo, hi, 15);
	fleet_run(&f, 400, 90, lo, hi, 15);	/* 80% */
	fleet_run(&f, 200, 90, lo, hi, 15);	/* 40% again */
}
END_TEST

/* Overloaded (offered over capacity): the estimate is still the capacity. */
START_TEST(fleet_overloaded)
{
	struct fleet	f;
	int		lo[NODES], hi[NODES];

	fleet_init(&f, 200, 200, 100);
	fleet_run(&f, 600, 30, lo, hi, 0);
	fleet_run(&f, 600, 120, lo, hi, 10);
}
END_TEST

static Suite *
capacity_suite(void)
{
	Suite	*s = suite_create("capacity");
	TCase	*tc = tcase_create("capacity");

	tcase_add_test(tc, blackout_then_active);
	tcase_add_test(tc, factor_steps_through_deadband);
	tcase_add_test(tc, floor_cap_reference);
	tcase_add_test(tc, idle_keeps_or_100);
	tcase_add_test(tc, stale_and_back);
	tcase_add_test(tc, counter_reset);
	tcase_add_test(tc, bad_inputs_are_safe);
	tcase_add_test(tc, fleet_converges_and_holds);
	tcase_add_test(tc, fleet_load_step);
	tcase_add_test(tc, fleet_overloaded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(capacity_suite());
}
