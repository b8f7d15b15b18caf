/* A service's adaptive concurrency limit (see conclimit.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/conclimit.h"

void
conclimit_settings_default(struct conclimit_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->min = CONCLIMIT_DEFAULT_MIN;
	s->max = CONCLIMIT_DEFAULT_MAX;
	s->tolerance = CONCLIMIT_DEFAULT_TOLERANCE;
	s->smoothing = CONCLIMIT_DEFAULT_SMOOTHING;
}

void
conclimit_init(struct conclimit *c, const struct conclimit_settings *set)
{
	memset(c, 0, sizeof(*c));
	c->set = *set;
	if (c->set.min < 1)
		c->set.min = 1;
	if (c->set.max < c->set.min)
		c->set.max = c->set.min;
	if (!(c->set.tolerance >= 1) || !isfinite(c->set.tolerance))
		c->set.tolerance = CONCLIMIT_DEFAULT_TOLERANCE;
	if (!(c->set.smoothing > 0 && c->set.smoothing <= 1))
		c->set.smoothing = CONCLIMIT_DEFAULT_SMOOTHING;
	c->limit = c->set.max;
	c->gradient = 1;
	c->sample_ms = INT64_MIN;
}

static double
bounded(const struct conclimit *c, double l)
{
	if (!(l >= c->set.min))
		return c->set.min;
	if (l > c->set.max)
		return c->set.max;
	return l;
}

static void
first(struct conclimit *c, double latency_ms, double inflight)
{
	c->short_ms = c->long_ms = latency_ms;
	c->limit = bounded(c, fmax(2 * inflight, CONCLIMIT_INITIAL));
	c->gradient = 1;
	c->learned = true;
}

/* B: down at once, up slowly and only from a sample without queueing. */
static void
learn_long(struct conclimit *c)
{
	if (c->short_ms < c->long_ms)
		c->long_ms = c->short_ms;
	else if (c->app_limited ||
	    c->short_ms <= c->set.tolerance * c->long_ms)
		c->long_ms += (c->short_ms - c->long_ms) /
		    CONCLIMIT_LONG_SAMPLES;
}

void
conclimit_sample(struct conclimit *c, double latency_ms, double inflight,
    int64_t at_ms)
{
	double	g, n;

	if (!isfinite(latency_ms) || latency_ms < 0 ||
	    latency_ms > CONCLIMIT_LATENCY_MAX_MS || !isfinite(inflight) ||
	    inflight < 0 || inflight > 1e9 || at_ms < c->sample_ms)
		return;
	c->sample_ms = at_ms;
	c->inflight = inflight;
	if (!c->learned) {
		first(c, latency_ms, inflight);
		return;
	}
	c->app_limited = inflight < c->limit / 2;
	c->short_ms += CONCLIMIT_SHORT_ALPHA * (latency_ms - c->short_ms);
	learn_long(c);
	g = c->short_ms > 0 ? c->set.tolerance * c->long_ms / c->short_ms : 1;
	c->gradient = g = fmin(1.0, fmax(0.5, g));
	n = c->limit * g + sqrt(c->limit);
	n = c->limit + c->set.smoothing * (n - c->limit);
	if (c->app_limited && n > c->limit)
		n = c->limit;
	c->limit = bounded(c, n);
}

int
conclimit_limit(const struct conclimit *c)
{
	return (int)lround(bounded(c, c->limit));
}

int
conclimit_per_lb(const struct conclimit *c, int n_lbs)
{
	int	l = conclimit_limit(c);

	if (n_lbs < 1)
		n_lbs = 1;
	l = (l + n_lbs - 1) / n_lbs;
	return l < 1 ? 1 : l;
}

void
conclimit_reason(const struct conclimit *c, char *buf, size_t size)
{
	int	l = conclimit_limit(c);

	if (!c->learned) {
		snprintf(buf, size, "maxconn %d: no latency sample yet", l);
		return;
	}
	snprintf(buf, size, "maxconn %d%s: latency %.*f ms, %.*f ms without "
	    "queueing, gradient %.2f; %.0f in flight%s", l,
	    l == c->set.min ? " (min)" : l == c->set.max ? " (max)" : "",
	    c->short_ms < 10 ? 1 : 0, c->short_ms, c->long_ms < 10 ? 1 : 0,
	    c->long_ms, c->gradient, c->inflight,
	    c->app_limited ? ", under half the limit: not growing" : "");
}
