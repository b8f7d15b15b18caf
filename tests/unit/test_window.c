/*
 * A probe's window (core/window.c): nearest-rank percentiles and error
 * rates over known samples, expiry as time passes, min_samples, the
 * capacity bound and the ring's overwrite, the verdict and its reason.
 */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/window.h"
#include "testutil.h"

static struct window	w;

static void
setup(void)
{
	ck_assert_int_eq(window_init(&w, 60000, 1000), 0);
}

static void
teardown(void)
{
	window_free(&w);
}

START_TEST(nearest_rank)
{
	struct window_stats	st;
	unsigned		i;

	/* 1..100 ms in a shuffled order: pN is exactly N ms. */
	for (i = 0; i < 100; i++)
		window_add(&w, 1000 + i, (i * 37) % 100 + 1, true);
	window_stats(&w, 1100, &st);
	ck_assert_uint_eq(st.samples, 100);
	ck_assert_uint_eq(st.p50_ms, 50);
	ck_assert_uint_eq(st.p95_ms, 95);
	ck_assert_uint_eq(st.p99_ms, 99);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert(st.error_rate == 0);
	ck_assert_int_eq(st.oldest_ms, 1000);
}
END_TEST

START_TEST(few_samples)
{
	struct window_stats	st;

	/* Nearest rank over 3: p50 the 2nd, p95 and p99 the 3rd. */
	window_add(&w, 10, 300, true);
	window_add(&w, 20, 100, true);
	window_add(&w, 30, 200, false);
	window_stats(&w, 30, &st);
	ck_assert_uint_eq(st.p50_ms, 200);
	ck_assert_uint_eq(st.p95_ms, 300);
	ck_assert_uint_eq(st.p99_ms, 300);
	ck_assert_uint_eq(st.errors, 1);
	ck_assert_msg(st.error_rate > 33.33 && st.error_rate < 33.34, "%g",
	    st.error_rate);
	/* One sample is every percentile. */
	window_free(&w);
	ck_assert_int_eq(window_init(&w, 60000, 10), 0);
	window_add(&w, 5, 42, true);
	window_stats(&w, 5, &st);
	ck_assert_uint_eq(st.p50_ms, 42);
	ck_assert_uint_eq(st.p99_ms, 42);
	/* None: zeros, and no verdict. */
	window_free(&w);
	ck_assert_int_eq(window_init(&w, 60000, 10), 0);
	window_stats(&w, 5, &st);
	ck_assert_uint_eq(st.samples, 0);
	ck_assert_uint_eq(st.p99_ms, 0);
}
END_TEST

START_TEST(ten_percent_slow)
{
	struct window_stats	st;
	unsigned		i;

	/* 10% of 200 at 2 s: p95 and p99 see them, p50 does not. */
	for (i = 0; i < 200; i++)
		window_add(&w, i * 100, i % 10 == 0 ? 2000 : 20, true);
	window_stats(&w, 19900, &st);
	ck_assert_uint_eq(st.p50_ms, 20);
	ck_assert_uint_eq(st.p95_ms, 2000);
	ck_assert_uint_eq(st.p99_ms, 2000);
	/* 4% slow: p95 does not, p99 does. */
	window_free(&w);
	ck_assert_int_eq(window_init(&w, 60000, 1000), 0);
	for (i = 0; i < 100; i++)
		window_add(&w, i, i < 4 ? 900 : 10, true);
	window_stats(&w, 100, &st);
	ck_assert_uint_eq(st.p95_ms, 10);
	ck_assert_uint_eq(st.p99_ms, 900);
}
END_TEST

START_TEST(expiry)
{
	struct window_stats	st;

	window_free(&w);
	ck_assert_int_eq(window_init(&w, 10000, 100), 0);
	window_add(&w, 0, 900, false);
	window_add(&w, 5000, 10, true);
	window_add(&w, 9000, 20, true);
	window_stats(&w, 10000, &st);	/* 0 is exactly 10 s old: kept */
	ck_assert_uint_eq(st.samples, 3);
	ck_assert_uint_eq(st.errors, 1);
	window_stats(&w, 10001, &st);	/* older than the window: gone */
	ck_assert_uint_eq(st.samples, 2);
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_uint_eq(st.p99_ms, 20);
	ck_assert_int_eq(st.oldest_ms, 5000);
	window_stats(&w, 30000, &st);
	ck_assert_uint_eq(st.samples, 0);
	/* The totals for the summary stay. */
	ck_assert_uint_eq(w.total_samples, 3);
	ck_assert_uint_eq(w.total_latency_ms, 930);
}
END_TEST

START_TEST(bounded)
{
	struct window_stats	st;
	unsigned		i;

	/* 60 s at 1 s with 5 per run: 66 jittered runs + 2, times 5. */
	ck_assert_uint_eq(window_capacity(60000, 1000, 5), 340);
	ck_assert_uint_eq(window_capacity(10000, 5000, 1), 4);
	ck_assert_uint_eq(window_expected(60000, 1000, 5), 300);
	ck_assert_uint_eq(window_capacity(0, 1000, 1), 0);
	ck_assert(window_capacity(24ULL * 3600 * 1000, 100, 100) >
	    WINDOW_MAX_SAMPLES);
	/* A full ring drops its oldest, however many samples come. */
	window_free(&w);
	ck_assert_int_eq(window_init(&w, 60000, 4), 0);
	for (i = 0; i < 1000; i++)
		window_add(&w, i, i, i % 2 == 0);
	window_stats(&w, 1000, &st);
	ck_assert_uint_eq(st.samples, 4);
	ck_assert_int_eq(st.oldest_ms, 996);
	ck_assert_uint_eq(st.p99_ms, 999);
	ck_assert_uint_eq(st.p50_ms, 997);
	ck_assert_uint_eq(st.errors, 2);
	ck_assert_uint_eq(w.total_samples, 1000);
	ck_assert_uint_le(WINDOW_SAMPLE_BYTES, 20);
}
END_TEST

static struct window_conf
conf(void)
{
	struct window_conf	c;

	memset(&c, 0, sizeof(c));
	c.window_ms = 60000;
	c.min_samples = 10;
	c.samples_per_run = 1;
	return c;
}

START_TEST(verdicts)
{
	struct window_conf	c = conf();
	struct window_stats	st;
	char			reason[200];
	bool			judging;
	unsigned		i;

	c.warn_p99_ms = 800;
	c.crit_p99_ms = 3000;
	c.warn_error_rate = 10;
	c.crit_error_rate = 20;
	/* Below min_samples: no verdict, however slow. */
	for (i = 0; i < 9; i++)
		window_add(&w, i, 5000, false);
	window_stats(&w, 9, &st);
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_OK);
	ck_assert(!judging);
	ck_assert_str_eq(reason, "9 of 10 samples over 1m: not judged yet");

	window_free(&w);
	ck_assert_int_eq(window_init(&w, 60000, 1000), 0);
	for (i = 0; i < 100; i++)
		window_add(&w, i, i < 2 ? 1800 : 50, true);
	window_stats(&w, 100, &st);
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_WARN);
	ck_assert(judging);
	ck_assert_str_eq(reason, "p99 1.8s over 1m (warn 800ms)");

	/* 30 of 100 failing: the error rate is crit, and comes first. */
	for (i = 0; i < 30; i++)
		w.ring[(w.head + i) % w.cap].ok = false;
	window_stats(&w, 100, &st);
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_CRIT);
	ck_assert_str_eq(reason, "error rate 30% over 1m (crit 20%)");

	/* The same level: error rate before p99. */
	c.crit_error_rate = 0;
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_WARN);
	ck_assert_str_eq(reason, "error rate 30% over 1m (warn 10%)");

	/* A crit p99 beats a warn error rate. */
	c.crit_p99_ms = 1000;
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_CRIT);
	ck_assert_str_eq(reason, "p99 1.8s over 1m (crit 1s)");

	/* p95 only when asked, and the figures when all is well. */
	memset(&c, 0, sizeof(c));
	c = conf();
	c.warn_p95_ms = 40;
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_WARN);
	ck_assert_str_eq(reason, "p95 50ms over 1m (warn 40ms)");
	c.warn_p95_ms = 0;
	ck_assert_int_eq(window_judge(&c, &st, &judging, reason,
	    sizeof(reason)), PROBE_OK);
	ck_assert_str_eq(reason, "p99 1.8s, error rate 30% over 1m");
}
END_TEST

START_TEST(formats)
{
	struct window_conf	c = conf();
	struct window_stats	st;
	char			reason[200];
	bool			judging;
	unsigned		i;

	c.min_samples = 1;
	c.warn_p99_ms = 1;
	c.warn_error_rate = 1;
	window_add(&w, 0, 12345, true);
	window_stats(&w, 0, &st);
	window_judge(&c, &st, &judging, reason, sizeof(reason));
	ck_assert_str_eq(reason, "p99 12s over 1m (warn 1ms)");
	/* Tenths of a percent below 10%. */
	window_free(&w);
	ck_assert_int_eq(window_init(&w, 60000, 1000), 0);
	for (i = 0; i < 40; i++)
		window_add(&w, i, 0, i != 0);
	window_stats(&w, 40, &st);
	window_judge(&c, &st, &judging, reason, sizeof(reason));
	ck_assert_str_eq(reason, "error rate 2.5% over 1m (warn 1%)");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("window");
	TCase	*tc = tcase_create("window");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nearest_rank);
	tcase_add_test(tc, few_samples);
	tcase_add_test(tc, ten_percent_slow);
	tcase_add_test(tc, expiry);
	tcase_add_test(tc, bounded);
	tcase_add_test(tc, verdicts);
	tcase_add_test(tc, formats);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
