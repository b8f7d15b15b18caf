/*
 * A token bucket (bucket.h). The credit is kept in thousandths of an
 * event, so that a millisecond's refill is exact at any rate up to
 * UINT64_MAX / 1000: rate events a second give rate thousandths a
 * millisecond.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/bucket.h"

#define UNIT	1000ULL		/* one event, in thousandths */

static void
refill(struct bucket *b, int64_t now_ms)
{
	uint64_t	dt, room;

	if (now_ms <= b->at_ms)		/* the clock never goes back here */
		return;
	dt = (uint64_t)(now_ms - b->at_ms);
	b->at_ms = now_ms;
	room = b->cap - b->credit;
	if (b->rate != 0 && dt >= room / b->rate + 1)
		b->credit = b->cap;
	else
		b->credit += dt * b->rate;
}

void
bucket_set(struct bucket *b, uint64_t rate, uint64_t burst, int64_t now_ms)
{
	refill(b, now_ms);
	if (rate > UINT64_MAX / UNIT / 2)
		rate = UINT64_MAX / UNIT / 2;
	if (burst == 0)
		burst = 1;
	if (burst > UINT64_MAX / UNIT / 2)
		burst = UINT64_MAX / UNIT / 2;
	/* From no limit to one: a full burst, as at the start. */
	if (b->rate == 0)
		b->credit = burst * UNIT;
	b->rate = rate;
	b->cap = burst * UNIT;
	if (b->credit > b->cap)
		b->credit = b->cap;
}

void
bucket_init(struct bucket *b, uint64_t rate, uint64_t burst, int64_t now_ms)
{
	b->rate = 0;
	b->credit = 0;
	b->cap = 0;
	b->at_ms = now_ms;
	bucket_set(b, rate, burst, now_ms);
}

bool
bucket_take(struct bucket *b, int64_t now_ms)
{
	if (b->rate == 0)
		return true;
	refill(b, now_ms);
	if (b->credit < UNIT)
		return false;
	b->credit -= UNIT;
	return true;
}

uint64_t
bucket_wait_ms(struct bucket *b, int64_t now_ms, uint64_t n)
{
	uint64_t	want, need;

	if (b->rate == 0)
		return 0;
	refill(b, now_ms);
	want = n == 0 ? UNIT : n > b->cap / UNIT ? b->cap : n * UNIT;
	if (b->credit >= want)
		return 0;
	need = want - b->credit;
	return (need + b->rate - 1) / b->rate;
}
