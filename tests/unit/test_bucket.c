/*
 * The token bucket (core/bucket.c) over a fake clock: the burst at once,
 * then the rate, the wait it tells, no limit at 0, and a change of
 * settings that keeps the credit.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/bucket.h"
#include "testutil.h"

/* How many events the bucket lets through at now_ms, taking them all. */
static int
drain(struct bucket *b, int64_t now_ms)
{
	int	n = 0;

	while (n < 1000000 && bucket_take(b, now_ms))
		n++;
	return n;
}

START_TEST(burst_then_rate)
{
	struct bucket	b;
	int64_t		t;
	int		total = 0;

	bucket_init(&b, 500, 125, 1000);
	ck_assert_int_eq(drain(&b, 1000), 125);
	ck_assert_uint_eq(bucket_wait_ms(&b, 1000, 1), 2);
	/* Sixteen at once: 32 ms; more than the burst: the burst's. */
	ck_assert_uint_eq(bucket_wait_ms(&b, 1000, 16), 32);
	ck_assert_uint_eq(bucket_wait_ms(&b, 1000, 1000), 250);
	/* One every 2 ms, over 10 s: 5,000, never more. */
	for (t = 1001; t <= 11000; t++)
		total += drain(&b, t);
	ck_assert_int_eq(total, 5000);
	/* Idle for a long while: the burst again, not more. */
	ck_assert_int_eq(drain(&b, 1000000), 125);
}
END_TEST

START_TEST(slow_rates)
{
	struct bucket	b;

	/* Three a second: one each 334 ms at most. */
	bucket_init(&b, 3, 1, 0);
	ck_assert(bucket_take(&b, 0));
	ck_assert(!bucket_take(&b, 0));
	ck_assert_uint_eq(bucket_wait_ms(&b, 0, 1), 334);
	ck_assert(!bucket_take(&b, 333));
	ck_assert_uint_eq(bucket_wait_ms(&b, 333, 1), 1);
	ck_assert(bucket_take(&b, 334));
	/* A clock that goes back changes nothing. */
	ck_assert(!bucket_take(&b, 100));
	ck_assert_uint_eq(bucket_wait_ms(&b, 100, 1), 334);
}
END_TEST

START_TEST(no_limit_and_changes)
{
	struct bucket	b;

	bucket_init(&b, 0, 0, 0);
	ck_assert_int_eq(drain(&b, 0), 1000000);
	ck_assert_uint_eq(bucket_wait_ms(&b, 0, 1), 0);
	/* A limit set later starts from a full burst of the new size. */
	bucket_set(&b, 10, 4, 0);
	ck_assert_int_eq(drain(&b, 0), 4);
	/* Emptied, then a reload: still empty (no way around the limit). */
	bucket_set(&b, 10, 8, 50);
	ck_assert_int_eq(drain(&b, 50), 0);
	ck_assert_int_eq(drain(&b, 100), 1);
	/* A smaller burst caps the credit. */
	bucket_set(&b, 10, 2, 10000);
	ck_assert_int_eq(drain(&b, 10000), 2);
	/* Huge settings do not overflow. */
	bucket_init(&b, UINT64_MAX, UINT64_MAX, 0);
	ck_assert(bucket_take(&b, INT64_MAX));
}
END_TEST

static Suite *
bucket_suite(void)
{
	Suite	*s = suite_create("bucket");
	TCase	*tc = tcase_create("bucket");

	tcase_add_test(tc, burst_then_rate);
	tcase_add_test(tc, slow_rates);
	tcase_add_test(tc, no_limit_and_changes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(bucket_suite());
}
