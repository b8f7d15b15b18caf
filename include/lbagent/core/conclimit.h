/*
 * A service's adaptive concurrency limit (its `maxconn:N`), Gradient2
 * style: grow while the latency stays near the latency without queueing,
 * shrink as it rises. Pure: samples come in, the limit comes out.
 * docs/capacity.md explains it for users.
 *
 * The equations, once per sample (latency x ms, in flight n):
 *   short latency   S += 0.5 * (x - S)  (the first sample: S = x)
 *   long latency    B, the latency without queueing: the first sample's
 *                   S; then B = S at once when S < B (a lower latency
 *                   proves less); up only slowly, B += (S - B) / 300,
 *                   and only from a sample that shows no queueing we
 *                   allowed: S <= tolerance * B, or n < limit / 2 (the
 *                   node is not at its limit). A latency above the
 *                   tolerance at the limit is queueing: it never teaches
 *                   B (else B would follow the queue up and the limit
 *                   with it, without end: Gradient2's drift).
 *   gradient        g = clamp(tolerance * B / S, 0.5, 1.0)
 *   new limit       N = limit * g + sqrt(limit)   (a queue allowance)
 *   smoothed        limit += smoothing * (N - limit), within [min, max];
 *                   while n < limit / 2 (the demand, not the limit, sets
 *                   the in-flight) it does not grow.
 *   the first       limit = max(2 * n, CONCLIMIT_INITIAL) within [min,
 *   sample          max] (the node served n without a limit; the
 *                   gradient goes on from there)
 *   per LB          ceil(limit / n_lbs), at least 1: never 0, which
 *                   HAProxy reads as no limit.
 * At rest past the knee (g < 1) the limit sits where
 * limit * (1 - g) = sqrt(limit): the latency is tolerance / g times B,
 * for a knee of 40 about 1.2 * tolerance.
 */
#ifndef LBAGENT_CONCLIMIT_H
#define LBAGENT_CONCLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONCLIMIT_REASON_MAX	160
/* Latencies above this (ms: a day) are no measure: not taken. */
#define CONCLIMIT_LATENCY_MAX_MS	86400000.0
#define CONCLIMIT_SHORT_ALPHA	0.5
#define CONCLIMIT_LONG_SAMPLES	300
/* Gradient2's initial limit: a node that starts before its traffic is
   not cut to min while it learns (growing from 4 to 40 takes 43 samples,
   from 20 18). */
#define CONCLIMIT_INITIAL	20

/*
 * The defaults, chosen by the simulation in tests/unit/test_conclimit.c
 * (a server of 40 workers, 50 ms a request, offered 0.5 and 1.5 times
 * what it completes) and the qualification's overload target (client
 * p99 at most 1.5 times the unloaded one):
 *  - min 4: a node is never cut to nothing by its latency alone, and a
 *    single slow request does not close it.
 *  - max 1000: above HAProxy's usual server maxconn; a limit there is
 *    no limit, and it bounds the growth of an idle estimate.
 *  - tolerance 1.1: at rest the latency is tolerance / g times the
 *    latency without queueing (1.23 measured at a knee of 40); Gradient2's 1.5
 *    let it sit at 1.8, over the 1.5 the qualification allows.
 *  - smoothing 0.2 (Gradient2's): a step moves the limit at most 10%
 *    down, so in-flight admitted under the last limit stays within it.
 */
#define CONCLIMIT_DEFAULT_MIN		4
#define CONCLIMIT_DEFAULT_MAX		1000
#define CONCLIMIT_DEFAULT_TOLERANCE	1.1
#define CONCLIMIT_DEFAULT_SMOOTHING	0.2

struct conclimit_settings {
	int		min;		/* >= 1 */
	int		max;		/* >= min */
	double		tolerance;	/* >= 1 */
	double		smoothing;	/* (0, 1] */
};

struct conclimit {
	struct conclimit_settings set;
	bool		learned;	/* a sample was taken */
	double		limit;
	double		short_ms;	/* S */
	double		long_ms;	/* B */
	double		gradient;	/* the last g */
	double		inflight;	/* the last n */
	int64_t		sample_ms;
	bool		app_limited;	/* the last sample: n < limit / 2 */
};

/* The defaults above. */
void	 conclimit_settings_default(struct conclimit_settings *);
/* Starts (or restarts: a reload that changed its keys, the application
   restarted): nothing learned, the limit max. */
void	 conclimit_init(struct conclimit *, const struct conclimit_settings *);
/*
 * One sample: the latency of the node's requests (ms, an average over
 * the last ones, like HAProxy's rtime) and the requests in flight (all
 * load balancers'). Not taken when either is not finite, negative or
 * over its bound, or at_ms is before the last sample's.
 */
void	 conclimit_sample(struct conclimit *, double latency_ms,
	    double inflight, int64_t at_ms);
/* The limit, rounded, within [min, max]; max until learned. */
int	 conclimit_limit(const struct conclimit *);
/* What each of n_lbs load balancers may send: ceil(limit / n_lbs), at
   least 1 (n_lbs 0 counts as 1). */
int	 conclimit_per_lb(const struct conclimit *, int n_lbs);
/* "maxconn 47: latency 61 ms over 50 ms without queueing, gradient
   0.90; 45 in flight", or why it is what it is. */
void	 conclimit_reason(const struct conclimit *, char *, size_t);

#endif
