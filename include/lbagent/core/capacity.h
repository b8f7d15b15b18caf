/*
 * A service's capacity weight: how many requests a second this node could
 * serve at full utilization, damped, relative to the fleet, as the factor
 * the reply carries. Pure: samples and the time come in, the view comes
 * out; what to log and what to reply is the caller's. docs/capacity.md
 * explains it for users.
 *
 * The equations (t: a sample's time, ms):
 *   sample estimate   e = rate / min(utilization, 1), taken only when
 *                     rate >= min_rate and utilization >= CAPACITY_UTIL_MIN
 *                     (else the node is idle: the estimate is kept)
 *   damped estimate   E += a * (e - E), a = 1 - 2^(-dt / half_life),
 *                     dt the time since the last taken sample (the first
 *                     taken sample is E itself)
 *   fleet mean        M = mean(E and every peer's fresh estimate); with no
 *                     peer's, the reference when set, else E (factor 1)
 *   raw factor        F = E / M
 *   target            T = round(100 * F), clamped to [floor, cap] percent
 *   replied           P moves toward T only when |T - P| >= deadband, by at
 *                     most step_max points, and at most once per
 *                     step_interval; blackout and stale reply 100 (the
 *                     health weight) at once.
 */
#ifndef LBAGENT_CAPACITY_H
#define LBAGENT_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Below this utilization a rate says too little of the capacity. */
#define CAPACITY_UTIL_MIN	0.05
/* Utilizations up to this count as 1 (a measure overshooting); above it
   the value is no fraction (a percentage sent as is): not taken. */
#define CAPACITY_UTIL_MAX	1.5
/* Rates and estimates above this (req/s) are no measure: not taken. */
#define CAPACITY_RATE_MAX	1e9
#define CAPACITY_REASON_MAX	192
/* Longer blackouts and expiries are taken as this (a year). */
#define CAPACITY_DURATION_MAX_MS	31536000000ULL

/*
 * The defaults, each chosen by the fleet simulation of
 * tests/unit/test_capacity.c (three nodes 2:2:1, samples every second,
 * peers' estimates a second old) and the qualification's targets:
 *  - min_rate 1 req/s: below one request a second the ratio is noise (a
 *    health check's traffic), and any service that is used passes it.
 *  - blackout 10 s: a started or restarted application warms up (caches,
 *    connections, JIT) for seconds; its rate then says little. Ten samples
 *    at the usual one a second, and HAProxy's stats rate settles in that.
 *  - expiry 30 s: three peer rounds or probe runs at their slowest usual
 *    pace (10 s) may be missed before the weight falls back.
 *  - half-life 5 s: the estimate e is independent of the load (a linear
 *    node: rate / utilization is its capacity at any load), so damping is
 *    only against noise. A capacity halving must settle within 30 s: to
 *    be within 10% of the new ideal the damped estimate must have moved
 *    ~86% of the way (2.9 half-lives), with the samples' own delay (peers
 *    a round late, HAProxy's rate over a second) that asks for a half-life
 *    well under 10 s. Measured, 30 s after the halving (ideal 75/150/75):
 *    20 s left 95/136/69, 10 s 84/144/72, 8 s passed narrowly, 5 s with
 *    margin. At 5 s a sample's noise reaches the estimate at 1/8 (its
 *    std over 3.8).
 *  - floor 25%, cap 200%: a node never takes less than a quarter of an
 *    equal share from capacity alone (a wrong measure cannot starve it),
 *    nor more than twice (a wrong measure cannot flood it); 2:1 fleets fit.
 *  - deadband 2 points: the simulation's noise (3% on utilization) moves
 *    the factor by under a point after damping; 2 keeps the reply (and
 *    the warning logged for every change) still, and costs at most 2% of
 *    accuracy.
 *  - step 20 points per 5 s: a start (100% to 62%) settles in two steps
 *    after the blackout; no reply jumps on one odd round (a peer gone,
 *    the mean changing at once), and at most 12 changes a minute.
 */
#define CAPACITY_DEFAULT_MIN_RATE		1.0
#define CAPACITY_DEFAULT_BLACKOUT_MS		10000
#define CAPACITY_DEFAULT_EXPIRY_MS		30000
#define CAPACITY_DEFAULT_HALF_LIFE_MS		5000
#define CAPACITY_DEFAULT_FLOOR_PCT		25
#define CAPACITY_DEFAULT_CAP_PCT		200
#define CAPACITY_DEFAULT_DEADBAND_PCT		2
#define CAPACITY_DEFAULT_STEP_MAX_PCT		20
#define CAPACITY_DEFAULT_STEP_INTERVAL_MS	5000

struct capacity_settings {
	double		min_rate;	/* req/s; below: idle */
	double		reference;	/* req/s at 100% with no peer; 0: none */
	uint64_t	blackout_ms;
	uint64_t	expiry_ms;	/* no sample for this long: stale */
	uint64_t	half_life_ms;
	int		floor_pct;	/* 1..100 */
	int		cap_pct;	/* 100..1000 */
	int		deadband_pct;	/* 0: every change of a point */
	int		step_max_pct;	/* 0: no step limit */
	uint64_t	step_interval_ms;
};

enum capacity_state {
	CAPACITY_BLACKOUT,	/* started, reloaded or the counter reset */
	CAPACITY_IDLE,		/* too little traffic: no estimate or the last */
	CAPACITY_STALE,		/* no sample within expiry */
	CAPACITY_ACTIVE,
};

/* Why the last sample was not taken (for the reason text). */
enum capacity_skip {
	CAPACITY_TAKEN,
	CAPACITY_NO_RATE,	/* missing or not a number */
	CAPACITY_NO_UTIL,
	CAPACITY_LOW_RATE,	/* under min_rate: idle */
	CAPACITY_LOW_UTIL,	/* under CAPACITY_UTIL_MIN: idle */
	CAPACITY_IN_BLACKOUT,
};

struct capacity {
	struct capacity_settings set;
	int64_t		blackout_until_ms;
	int64_t		blackout_from_ms;
	bool		counter_reset;	/* the blackout's cause */
	bool		has_estimate;
	double		estimate;	/* E, req/s */
	int64_t		estimate_ms;	/* the last taken sample */
	double		rate, util;	/* the last taken sample's inputs */
	bool		has_input;	/* a sample since the blackout ended */
	int64_t		input_ms;	/* the last taken or idle sample */
	bool		idle;		/* that sample was idle */
	double		last_rate;	/* the last sample's, NAN: none */
	enum capacity_skip skip;	/* the last sample's fate */
	int		replied_pct;
	int64_t		changed_ms;	/* INT64_MIN: no step yet */
};

struct capacity_view {
	enum capacity_state state;
	double		estimate;	/* E, req/s; NAN: none */
	uint64_t	age_ms;		/* of E; 0 when none */
	bool		publish;	/* peers may count E (active or idle) */
	double		rate, util;	/* E's last inputs; NAN: none */
	double		fleet_mean;	/* M, req/s; NAN: none */
	int		fleet_n;	/* estimates in M, this node's too;
					   0: M is the reference */
	double		raw_factor;	/* F; NAN: none */
	int		target_pct;	/* T */
	int		factor_pct;	/* P: what the reply carries */
	bool		changed;	/* P differs from the last view's */
	char		reason[CAPACITY_REASON_MAX];
};

/* The defaults above, reference 0. */
void	 capacity_settings_default(struct capacity_settings *);
/* Starts (or restarts, on a reload that changed its keys): a blackout
   from now_ms, no estimate, 100%. */
void	 capacity_init(struct capacity *, const struct capacity_settings *,
	    int64_t now_ms);
/* The application restarted (its rate counter reset): a blackout from
   at_ms and the estimate dropped (it may be another release). */
void	 capacity_counter_reset(struct capacity *, int64_t at_ms);
/*
 * One sample: the rate this node served (req/s) and its utilization
 * (0..1), NAN when missing; anything not finite, negative or over the
 * bounds above counts as missing. A sample with either missing is not
 * taken and does not keep the estimate fresh, except a rate under
 * min_rate, which says idle on its own. Samples out of order (at_ms
 * before the last) are ignored.
 */
void	 capacity_sample(struct capacity *, double rate, double utilization,
	    int64_t at_ms);
/*
 * The view at now_ms given the peers' estimates (req/s; NAN, or anything
 * not finite or not above 0, for a peer with none fresh). Advances the
 * replied factor (deadband, step), so call it once per evaluation and
 * keep the view for status.
 */
void	 capacity_view(struct capacity *, int64_t now_ms,
	    const double *peers, size_t npeers, struct capacity_view *);
/* "blackout", "idle", "stale", "active". */
const char *capacity_state_name(enum capacity_state);

#endif
