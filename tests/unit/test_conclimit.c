/*
 * The adaptive concurrency limit (core/conclimit.c): the first sample,
 * growing and shrinking, the bounds, the split among load balancers, bad
 * inputs; and a server of fixed concurrency simulated over a fake clock,
 * whose limit must settle near its knee and stay there.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/conclimit.h"
#include "testutil.h"

static void
start(struct conclimit *c)
{
	struct conclimit_settings	s;

	conclimit_settings_default(&s);
	conclimit_init(c, &s);
}

START_TEST(first_sample_and_growth)
{
	struct conclimit	c;
	char			buf[CONCLIMIT_REASON_MAX];
	int			i, before;

	start(&c);
	ck_assert(!c.learned);
	ck_assert_int_eq(conclimit_limit(&c), 1000);
	conclimit_reason(&c, buf, sizeof(buf));
	ck_assert_str_eq(buf, "maxconn 1000: no latency sample yet");
	/* No traffic at the start: the initial 20, not the min. */
	conclimit_sample(&c, 50, 0, 0);
	ck_assert_int_eq(conclimit_limit(&c), 20);
	/* Under half the limit in flight: it does not grow. */
	for (i = 1; i <= 10; i++)
		conclimit_sample(&c, 50, 9, i * 1000);
	ck_assert_int_eq(conclimit_limit(&c), 20);
	conclimit_reason(&c, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "not growing"));
	/* At the limit, latency flat: it grows by a share of sqrt(limit). */
	before = conclimit_limit(&c);
	for (i = 11; i <= 20; i++)
		conclimit_sample(&c, 50, conclimit_limit(&c), i * 1000);
	ck_assert_int_gt(conclimit_limit(&c), before + 5);
	conclimit_reason(&c, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "latency 50 ms, 50 ms without "
	    "queueing, gradient 1.00"));
	/* Latency doubled at the limit: it shrinks, at most 10% a sample. */
	before = conclimit_limit(&c);
	conclimit_sample(&c, 100, before, 21000);
	ck_assert_int_lt(conclimit_limit(&c), before);
	ck_assert_int_ge(conclimit_limit(&c), before * 0.9 - 1);
}
END_TEST

START_TEST(bounds_and_split)
{
	struct conclimit_settings	s;
	struct conclimit		c;
	int				i;

	conclimit_settings_default(&s);
	s.min = 4;
	s.max = 30;
	conclimit_init(&c, &s);
	conclimit_sample(&c, 10, 500, 0);
	ck_assert_int_eq(conclimit_limit(&c), 30);
	for (i = 1; i < 200; i++)
		conclimit_sample(&c, 10 * (1 + i), 30, i * 1000);
	ck_assert_int_eq(conclimit_limit(&c), 4);
	ck_assert_int_eq(conclimit_per_lb(&c, 1), 4);
	ck_assert_int_eq(conclimit_per_lb(&c, 3), 2);
	ck_assert_int_eq(conclimit_per_lb(&c, 4), 1);
	/* Never 0, whatever is asked. */
	ck_assert_int_eq(conclimit_per_lb(&c, 100), 1);
	ck_assert_int_eq(conclimit_per_lb(&c, 0), 4);
	ck_assert_int_eq(conclimit_per_lb(&c, -2), 4);
	/* Settings out of range are bounded. */
	s.min = 0;
	s.max = -1;
	s.tolerance = NAN;
	s.smoothing = 7;
	conclimit_init(&c, &s);
	ck_assert_int_eq(conclimit_limit(&c), 1);
	ck_assert_int_eq(conclimit_per_lb(&c, 5), 1);
}
END_TEST

START_TEST(bad_inputs_are_safe)
{
	struct conclimit	c;
	double	bad[] = { NAN, INFINITY, -INFINITY, -1, 1e300, DBL_MAX, 0,
	    1e-300 };
	char	buf[CONCLIMIT_REASON_MAX];
	size_t	i, j;
	int64_t	t = 0;

	start(&c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			conclimit_sample(&c, bad[i], bad[j], t);
			t += 1000;
			ck_assert_int_ge(conclimit_limit(&c), 4);
			ck_assert_int_le(conclimit_limit(&c), 1000);
			ck_assert_int_ge(conclimit_per_lb(&c, 2), 1);
			ck_assert(isfinite(c.limit));
			conclimit_reason(&c, buf, sizeof(buf));
		}
	/* Zero latencies (a tiny rtime) then real ones: finite, bounded. */
	conclimit_sample(&c, 0, 10, t);
	conclimit_sample(&c, 20, 10, t + 1000);
	ck_assert(isfinite(c.limit) && isfinite(c.gradient));
	/* Out of order: ignored. */
	i = (size_t)conclimit_limit(&c);
	conclimit_sample(&c, 5000, 1000, 0);
	ck_assert_int_eq(conclimit_limit(&c), (int)i);
}
END_TEST

/* The queue it allows does not teach the no-queue latency: no drift. */
START_TEST(no_drift_at_the_limit)
{
	struct conclimit	c;
	int			i, l;

	start(&c);
	conclimit_sample(&c, 50, 20, 0);
	for (i = 1; i < 3600; i++) {
		l = conclimit_limit(&c);
		/* Past a knee of 40, latency grows with in-flight. */
		conclimit_sample(&c, 50 * fmax(1, l / 40.0), l, i * 1000);
	}
	ck_assert_double_eq_tol(c.long_ms, 50, 0.5);
	ck_assert_int_le(conclimit_limit(&c), 60);
}
END_TEST

/*
 * A server of C workers, each request b ms alone; past C requests share
 * them (latency b * n / C), with 5% noise from a fixed-seed PRNG. An
 * open-loop client offers rate req/s; two load balancers each admit
 * per_lb() of the limit given a second ago; what they do not admit goes
 * elsewhere. One sample a second.
 */
#define WORKERS		40
#define BASE_MS		50.0
#define LBS		2
struct server {
	struct conclimit	c;
	uint32_t		seed;
	int64_t			t;
	double			worst;	/* in flight over the limit in force */
	double			latency;
};

static double
noise(struct server *s)
{
	s->seed ^= s->seed << 13;
	s->seed ^= s->seed >> 17;
	s->seed ^= s->seed << 5;
	return (s->seed % 2001) / 1000.0 - 1;
}

static void
server_run(struct server *s, double rate, int secs)
{
	double	bound, want, n;
	int	i, limit;

	for (i = 0; i < secs; i++, s->t += 1000) {
		limit = conclimit_limit(&s->c);
		bound = LBS * conclimit_per_lb(&s->c, LBS);
		want = rate * BASE_MS / 1000;
		/* Past C the queue grows for as long as rate exceeds C/b. */
		n = want > WORKERS ? bound : fmin(want, bound);
		s->latency = BASE_MS * fmax(1, n / WORKERS) *
		    (1 + 0.05 * noise(s));
		if (n / limit > s->worst)
			s->worst = n / limit;
		conclimit_sample(&s->c, s->latency, n, s->t);
	}
}

START_TEST(server_settles_at_the_knee)
{
	struct server	s;
	int		i, lo, hi;

	memset(&s, 0, sizeof(s));
	s.seed = 88172645u;
	start(&s.c);
	/* Half its capacity: never cut below what it serves. */
	server_run(&s, 400, 60);
	ck_assert_int_ge(conclimit_limit(&s.c), 20);
	/* One and a half: settled within a minute near the knee, and kept
	   there for three more (no drift, no oscillation). */
	server_run(&s, 1200, 60);
	lo = hi = conclimit_limit(&s.c);
	for (i = 0; i < 180; i++) {
		server_run(&s, 1200, 1);
		lo = conclimit_limit(&s.c) < lo ? conclimit_limit(&s.c) : lo;
		hi = conclimit_limit(&s.c) > hi ? conclimit_limit(&s.c) : hi;
		ck_assert_msg(s.latency <= 1.5 * BASE_MS, "%.1f ms",
		    s.latency);
	}
	ck_assert_msg(lo >= WORKERS && hi <= WORKERS * 1.5, "%d..%d", lo, hi);
	ck_assert_msg(s.worst <= 1.05, "in flight %.3f of the limit",
	    s.worst);
	/* The overload gone: the limit stays above the demand. */
	server_run(&s, 400, 60);
	ck_assert_int_ge(conclimit_limit(&s.c), 20);
}
END_TEST

static Suite *
conclimit_suite(void)
{
	Suite	*s = suite_create("conclimit");
	TCase	*tc = tcase_create("conclimit");

	tcase_add_test(tc, first_sample_and_growth);
	tcase_add_test(tc, bounds_and_split);
	tcase_add_test(tc, bad_inputs_are_safe);
	tcase_add_test(tc, no_drift_at_the_limit);
	tcase_add_test(tc, server_settles_at_the_knee);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(conclimit_suite());
}
