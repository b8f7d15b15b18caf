/* A service's capacity weight (see capacity.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/capacity.h"
#include "lbagent/core/units.h"

void
capacity_settings_default(struct capacity_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->min_rate = CAPACITY_DEFAULT_MIN_RATE;
	s->blackout_ms = CAPACITY_DEFAULT_BLACKOUT_MS;
	s->expiry_ms = CAPACITY_DEFAULT_EXPIRY_MS;
	s->half_life_ms = CAPACITY_DEFAULT_HALF_LIFE_MS;
	s->floor_pct = CAPACITY_DEFAULT_FLOOR_PCT;
	s->cap_pct = CAPACITY_DEFAULT_CAP_PCT;
	s->deadband_pct = CAPACITY_DEFAULT_DEADBAND_PCT;
	s->step_max_pct = CAPACITY_DEFAULT_STEP_MAX_PCT;
	s->step_interval_ms = CAPACITY_DEFAULT_STEP_INTERVAL_MS;
}

static void
blackout(struct capacity *c, int64_t at_ms, bool counter_reset)
{
	c->blackout_from_ms = at_ms;
	c->blackout_until_ms = at_ms + (int64_t)c->set.blackout_ms;
	c->counter_reset = counter_reset;
	c->has_estimate = false;
	c->estimate = NAN;
	c->estimate_ms = at_ms;
	c->rate = c->util = NAN;
	c->has_input = false;
	c->idle = false;
	c->input_ms = at_ms;
	c->last_rate = NAN;
	c->skip = CAPACITY_IN_BLACKOUT;
	c->replied_pct = 100;
	c->changed_ms = INT64_MIN;
}

void
capacity_init(struct capacity *c, const struct capacity_settings *set,
    int64_t now_ms)
{
	memset(c, 0, sizeof(*c));
	c->set = *set;
	if (c->set.floor_pct < 1)
		c->set.floor_pct = 1;
	if (c->set.cap_pct < 100)
		c->set.cap_pct = 100;
	if (c->set.floor_pct > 100)
		c->set.floor_pct = 100;
	if (!(c->set.min_rate >= 0) || !isfinite(c->set.min_rate))
		c->set.min_rate = CAPACITY_DEFAULT_MIN_RATE;
	if (!(c->set.reference > 0) || !isfinite(c->set.reference))
		c->set.reference = 0;
	if (c->set.blackout_ms > CAPACITY_DURATION_MAX_MS)
		c->set.blackout_ms = CAPACITY_DURATION_MAX_MS;
	if (c->set.expiry_ms > CAPACITY_DURATION_MAX_MS)
		c->set.expiry_ms = CAPACITY_DURATION_MAX_MS;
	blackout(c, now_ms, false);
}

void
capacity_counter_reset(struct capacity *c, int64_t at_ms)
{
	blackout(c, at_ms, true);
}

static bool
valid_rate(double r)
{
	return isfinite(r) && r >= 0 && r <= CAPACITY_RATE_MAX;
}

static bool
valid_util(double u)
{
	return isfinite(u) && u >= 0 && u <= CAPACITY_UTIL_MAX;
}

/* The time-weighted EWMA step: a = 1 - 2^(-dt / half_life). */
static void
take(struct capacity *c, double e, int64_t at_ms)
{
	double	a = 1;

	if (c->has_estimate && c->set.half_life_ms > 0)
		a = 1 - exp2(-(double)(at_ms - c->estimate_ms) /
		    (double)c->set.half_life_ms);
	c->estimate = c->has_estimate ? c->estimate + a * (e - c->estimate) : e;
	c->has_estimate = true;
	c->estimate_ms = at_ms;
}

void
capacity_sample(struct capacity *c, double rate, double util, int64_t at_ms)
{
	if (at_ms < c->input_ms)
		return;
	if (at_ms < c->blackout_until_ms) {
		c->skip = CAPACITY_IN_BLACKOUT;
		return;
	}
	c->last_rate = valid_rate(rate) ? rate : NAN;
	if (!valid_rate(rate)) {
		c->skip = CAPACITY_NO_RATE;
		return;
	}
	if (rate < c->set.min_rate || rate == 0)
		c->skip = CAPACITY_LOW_RATE;
	else if (!valid_util(util))
		c->skip = CAPACITY_NO_UTIL;
	else if (util < CAPACITY_UTIL_MIN)
		c->skip = CAPACITY_LOW_UTIL;
	else {
		util = util > 1 ? 1 : util;
		c->skip = CAPACITY_TAKEN;
		c->rate = rate;
		c->util = util;
		take(c, rate / util, at_ms);
	}
	if (c->skip == CAPACITY_NO_UTIL)
		return;
	c->idle = c->skip != CAPACITY_TAKEN;
	c->has_input = true;
	c->input_ms = at_ms;
}

const char *
capacity_state_name(enum capacity_state s)
{
	switch (s) {
	case CAPACITY_BLACKOUT:
		return "blackout";
	case CAPACITY_IDLE:
		return "idle";
	case CAPACITY_STALE:
		return "stale";
	case CAPACITY_ACTIVE:
		break;
	}
	return "active";
}

static enum capacity_state
state_at(const struct capacity *c, int64_t now_ms)
{
	int64_t	since;

	if (now_ms < c->blackout_until_ms)
		return CAPACITY_BLACKOUT;
	since = c->has_input ? c->input_ms : c->blackout_until_ms;
	if (now_ms - since > (int64_t)c->set.expiry_ms)
		return CAPACITY_STALE;
	if (!c->has_estimate || c->idle)
		return CAPACITY_IDLE;
	return CAPACITY_ACTIVE;
}

static bool
valid_estimate(double e)
{
	return isfinite(e) && e > 0 && e <= CAPACITY_RATE_MAX;
}

/* M and how many estimates made it (0: the reference). */
static void
fleet(const struct capacity *c, const double *peers, size_t npeers,
    struct capacity_view *v)
{
	double	sum = c->estimate;
	size_t	i;
	int	n = 1;

	for (i = 0; peers != NULL && i < npeers; i++)
		if (valid_estimate(peers[i])) {
			sum += peers[i];
			n++;
		}
	if (n == 1 && c->set.reference > 0) {
		v->fleet_mean = c->set.reference;
		v->fleet_n = 0;
	} else {
		v->fleet_mean = sum / n;
		v->fleet_n = n;
	}
	v->raw_factor = c->estimate / v->fleet_mean;
}

static int
clamp_pct(const struct capacity *c, double f)
{
	double	p = round(100 * f);

	if (!(p >= c->set.floor_pct))
		return c->set.floor_pct;
	if (p > c->set.cap_pct)
		return c->set.cap_pct;
	return (int)p;
}

/* P toward T: the deadband, then at most step_max per step_interval. */
static void
step(struct capacity *c, int target, int64_t now_ms)
{
	int	d = target - c->replied_pct;

	if (abs(d) < c->set.deadband_pct || d == 0)
		return;
	if (c->changed_ms != INT64_MIN &&
	    now_ms - c->changed_ms < (int64_t)c->set.step_interval_ms)
		return;
	if (c->set.step_max_pct > 0 && d > c->set.step_max_pct)
		d = c->set.step_max_pct;
	if (c->set.step_max_pct > 0 && d < -c->set.step_max_pct)
		d = -c->set.step_max_pct;
	c->replied_pct += d;
	c->changed_ms = now_ms;
}

static void
fmt_rate(double r, char *buf, size_t size)
{
	snprintf(buf, size, r < 10 ? "%.1f req/s" : "%.0f req/s", r);
}

/* "capacity 125%: 180 req/s at 0.60 = 300 req/s, fleet mean 240 req/s". */
static void
reason_estimate(const struct capacity *c, const struct capacity_view *v,
    char *buf, size_t size)
{
	char	rate[32], est[32], mean[32], age[24], tail[64] = "";
	int	n;

	fmt_rate(v->rate, rate, sizeof(rate));
	fmt_rate(v->estimate, est, sizeof(est));
	fmt_rate(v->fleet_mean, mean, sizeof(mean));
	if (v->target_pct != v->factor_pct)
		snprintf(tail, sizeof(tail), ", toward %d%%", v->target_pct);
	else if (v->target_pct == c->set.floor_pct && v->raw_factor * 100 <
	    c->set.floor_pct)
		snprintf(tail, sizeof(tail), ", floor");
	else if (v->target_pct == c->set.cap_pct && v->raw_factor * 100 >
	    c->set.cap_pct)
		snprintf(tail, sizeof(tail), ", cap");
	n = snprintf(buf, size, "capacity %d%%%s: %s at %.2f = %s, %s %s",
	    v->factor_pct, v->state == CAPACITY_IDLE ? " (idle, kept)" : "",
	    rate, v->util, est, v->fleet_n == 0 ? "reference" : "fleet mean",
	    mean);
	if (n < 0 || (size_t)n >= size)
		return;
	if (v->fleet_n > 1)
		n += snprintf(buf + n, size - n, " of %d", v->fleet_n);
	units_format_age(v->age_ms, age, sizeof(age));
	snprintf(buf + n, size - n, "%s, %s old", tail, age);
}

/* Why the last sample gave no estimate, in buf. */
static const char *
skip_text(const struct capacity *c, char *buf, size_t size)
{
	char	r[32];

	switch (c->skip) {
	case CAPACITY_NO_RATE:
		return "no rate";
	case CAPACITY_NO_UTIL:
		return "no utilization";
	case CAPACITY_LOW_UTIL:
		return "utilization under 0.05";
	case CAPACITY_LOW_RATE:
		fmt_rate(c->last_rate, r, sizeof(r));
		snprintf(buf, size, "%s under capacity_min_rate", r);
		return buf;
	case CAPACITY_TAKEN:
	case CAPACITY_IN_BLACKOUT:
		break;
	}
	return "no sample yet";
}

static void
reason_other(const struct capacity *c, const struct capacity_view *v,
    int64_t now_ms, char *buf, size_t size)
{
	char	t[24], r[64];

	if (v->state == CAPACITY_BLACKOUT) {
		units_format_age((uint64_t)(c->blackout_until_ms - now_ms), t,
		    sizeof(t));
		snprintf(buf, size, "capacity 100%%: blackout %s more (%s)", t,
		    c->counter_reset ? "the rate counter reset" :
		    "started or reloaded");
	} else if (v->state == CAPACITY_STALE) {
		units_format_age((uint64_t)(now_ms - (c->has_input ?
		    c->input_ms : c->blackout_from_ms)), t, sizeof(t));
		snprintf(buf, size, "capacity 100%%: stale, no sample for %s "
		    "(capacity_expiry)", t);
	} else
		snprintf(buf, size, "capacity 100%%: idle, no estimate yet (%s)",
		    skip_text(c, r, sizeof(r)));
}

static void
view_estimate(struct capacity *c, int64_t now_ms, const double *peers,
    size_t npeers, struct capacity_view *v)
{
	v->estimate = c->estimate;
	v->age_ms = now_ms > c->estimate_ms ?
	    (uint64_t)(now_ms - c->estimate_ms) : 0;
	v->publish = true;
	v->rate = c->rate;
	v->util = c->util;
	fleet(c, peers, npeers, v);
	v->target_pct = clamp_pct(c, v->raw_factor);
	step(c, v->target_pct, now_ms);
}

void
capacity_view(struct capacity *c, int64_t now_ms, const double *peers,
    size_t npeers, struct capacity_view *v)
{
	int	before = c->replied_pct;

	memset(v, 0, sizeof(*v));
	v->state = state_at(c, now_ms);
	v->estimate = v->rate = v->util = v->fleet_mean = NAN;
	v->raw_factor = NAN;
	v->target_pct = 100;
	if (c->has_estimate && (v->state == CAPACITY_ACTIVE ||
	    v->state == CAPACITY_IDLE))
		view_estimate(c, now_ms, peers, npeers, v);
	else {
		c->replied_pct = 100;
		c->changed_ms = INT64_MIN;
	}
	v->factor_pct = c->replied_pct;
	v->changed = c->replied_pct != before;
	if (isfinite(v->estimate))
		reason_estimate(c, v, v->reason, sizeof(v->reason));
	else
		reason_other(c, v, now_ms, v->reason, sizeof(v->reason));
}
