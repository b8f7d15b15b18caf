/* The two clocks: monotonic for every interval, wall for the state file. */
#ifndef LBAGENT_CLOCK_H
#define LBAGENT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
clock_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t
clock_wall_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Monotonic including suspend: comparable across restarts in one boot. */
static inline int64_t
clock_boot_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
