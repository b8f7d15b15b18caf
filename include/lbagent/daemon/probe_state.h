/*
 * What has been observed of a probe, kept apart from its settings (struct
 * probe_conf): the scheduler keeps it, the agent's view shows it.
 */
#ifndef LBAGENT_PROBE_STATE_H
#define LBAGENT_PROBE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/window.h"
#include "lbagent/probes/probe.h"

/* A probe's window as of its latest sample (on: it has one). */
struct probe_window_view {
	bool			on;
	struct window_stats	stats;
	bool			judging;	/* stats.samples >= min_samples */
	enum probe_result	result;		/* ok, warn or crit */
	char			reason[PROBE_REASON_MAX + 1];
	uint64_t		total_samples;	/* since the probe started */
	uint64_t		total_latency_ms;
};

/* What has been observed of a probe. */
struct probe_state {
	bool			has_run;
	/*
	 * What it counts as rests on evidence: `fall` bad runs or `rise` good
	 * ones in a row, at least once. Before that, its "ok" is only the
	 * starting assumption, and decisions do not count it as passing.
	 */
	bool			settled;
	/*
	 * What it counts as: the worse of what its runs count as after
	 * fall/rise (run_counted) and its window's verdict. The reason is
	 * the one of the verdict that changed it.
	 */
	enum probe_result	counted;
	char			counted_reason[PROBE_REASON_MAX + 1];
	enum probe_result	run_counted;
	char			run_counted_reason[PROBE_REASON_MAX + 1];
	struct probe_window_view window;
	struct probe_outcome	last;		/* the latest run */
	int64_t			last_run_ms;	/* monotonic start of it */
	int64_t			last_duration_ms;
	unsigned		bad_streak, ok_streak;
	uint64_t		runs[PROBE_RESULT_COUNT];
};

#endif
