/*
 * A probe's recent runs over a time window: each sample is when it ended,
 * how long it took and whether it was ok. The figures (error rate, p50,
 * p95, p99) are exact over the samples inside the window: percentiles by
 * nearest rank, the smallest sample at or above which lie p% of them.
 * Memory is fixed when the window is made: window_capacity() samples of
 * WINDOW_SAMPLE_BYTES each, whatever the number of runs; when the ring is
 * full the oldest sample goes first.
 */
#ifndef LBAGENT_WINDOW_H
#define LBAGENT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/probe_result.h"
#include "lbagent/core/settings.h"

/* What one sample costs: its slot in the ring and in the sort buffer. */
#define WINDOW_SAMPLE_BYTES	(sizeof(struct window_sample) + sizeof(uint32_t))
/* The most samples one window keeps; config refuses more. */
#define WINDOW_MAX_SAMPLES	100000

struct window_sample {
	int64_t		at_ms;		/* monotonic, when it ended */
	uint32_t	latency_ms;
	bool		ok;
};

struct window {
	uint64_t		 window_ms;
	struct window_sample	*ring;
	uint32_t		*sorted;	/* scratch for the percentiles */
	size_t			 cap, head, count;	/* head: the oldest */
	/* Since the window was made, for a Prometheus summary. */
	uint64_t		 total_samples;
	uint64_t		 total_latency_ms;
};

/* The figures of the samples inside the window at one moment. */
struct window_stats {
	size_t		samples;
	size_t		errors;
	double		error_rate;	/* percent; 0 with no samples */
	uint32_t	p50_ms, p95_ms, p99_ms;	/* 0 with no samples */
	int64_t		oldest_ms;	/* the oldest sample's at_ms */
};

/*
 * The most samples a window can hold: runs come every interval, less its
 * jitter of 10%, each with samples_per_run samples.
 */
size_t	window_capacity(uint64_t window_ms, uint64_t interval_ms,
	    uint64_t samples_per_run);
/* The samples a full window holds when runs come on time. */
uint64_t window_expected(uint64_t window_ms, uint64_t interval_ms,
	    uint64_t samples_per_run);

/* 0, or -1 when out of memory. */
int	window_init(struct window *, uint64_t window_ms, size_t capacity);
void	window_free(struct window *);
/* Adds a sample that ended at now_ms; drops those older than the window. */
void	window_add(struct window *, int64_t now_ms, uint64_t latency_ms,
	    bool ok);
/* The figures at now_ms (samples that ended within window_ms of it). */
void	window_stats(struct window *, int64_t now_ms, struct window_stats *);

/*
 * The window's verdict on its figures: ok, warn or crit, and the reason
 * naming the figure, the window and the threshold ("p99 1.8s over 1m
 * (warn 800ms)"). With fewer than min_samples it judges nothing: ok, and
 * *judging false. The worst figure wins; at the same level the error rate
 * comes first, then p99, then p95.
 */
enum probe_result window_judge(const struct window_conf *,
	    const struct window_stats *, bool *judging, char *reason,
	    size_t size);

#endif
