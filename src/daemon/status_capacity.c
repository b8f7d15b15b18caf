/*
 * A service's capacity weight and adaptive maxconn in the status
 * document: the estimate the public part publishes for the peers, and
 * the detail's inputs, factor, limit and why (docs/capacity.md).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbagent/core/name.h"

#include "status_impl.h"

static json_t *
real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* The age of what v took at v->view_ms, now. */
static int64_t
age_ms(const struct agent_capacity_view *v, uint64_t at_view,
    const struct status_clock *c)
{
	int64_t	since = c->now_ms - v->view_ms;

	return (int64_t)at_view + (since > 0 ? since : 0);
}

json_t *
status_capacity_public(const struct agent_service_view *v,
    const struct status_clock *c)
{
	const struct agent_capacity_view	*cv = v->capacity;

	if (cv == NULL || !cv->on || !cv->view.publish ||
	    !isfinite(cv->view.estimate))
		return json_null();
	return json_pack("{s:f, s:I}", "estimate", cv->view.estimate,
	    "age_ms", (json_int_t)age_ms(cv, cv->view.age_ms, c));
}

static json_t *
weight_json(const struct agent_capacity_view *cv, const struct status_clock *c)
{
	const struct capacity_view	*w = &cv->view;

	if (!cv->on)
		return json_null();
	return json_pack("{s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:i, s:o, "
	    "s:o, s:o, s:s}", "state", capacity_state_name(w->state),
	    "factor_pct", w->factor_pct, "target_pct", w->target_pct,
	    "estimate", real_or_null(w->estimate), "age_ms",
	    isfinite(w->estimate) ? json_integer(age_ms(cv, w->age_ms, c)) :
	    json_null(), "rate", real_or_null(w->rate), "utilization",
	    real_or_null(w->util), "fleet_mean", real_or_null(w->fleet_mean),
	    "fleet_n", w->fleet_n, "input_rate", real_or_null(cv->rate),
	    "input_utilization", real_or_null(cv->util), "input_age_ms",
	    cv->input_ms == INT64_MIN ? json_null() :
	    json_integer(c->now_ms - cv->input_ms), "reason", w->reason);
}

static json_t *
limit_json(const struct agent_capacity_view *cv)
{
	const struct conclimit	*l = cv->limit;

	if (!cv->adaptive || l == NULL)
		return json_null();
	return json_pack("{s:b, s:i, s:o, s:i, s:o, s:o, s:f, s:o, s:s}",
	    "learned", l->learned, "limit", conclimit_limit(l), "per_lb",
	    cv->maxconn > 0 ? json_integer(cv->maxconn) : json_null(),
	    "load_balancers", cv->nlbs, "latency_ms",
	    real_or_null(cv->latency_ms), "baseline_ms", l->learned ?
	    json_real(l->long_ms) : json_null(), "gradient", l->gradient,
	    "in_flight", real_or_null(cv->inflight), "reason",
	    cv->limit_reason);
}

void
status_capacity_detail(json_t *o, const struct agent_service_view *v,
    const struct status_clock *c)
{
	const struct agent_capacity_view	*cv = v->capacity;

	json_object_set_new(o, "capacity_weight", cv != NULL ?
	    weight_json(cv, c) : json_null());
	json_object_set_new(o, "maxconn", cv != NULL ? limit_json(cv) :
	    json_null());
}

/* One family over the services whose pick gives a finite value. */
static void
family(FILE *fp, const struct agent_view *a, const char *name,
    const char *help, double (*pick)(const struct agent_capacity_view *))
{
	struct agent_service_view	v;
	size_t				i;
	bool				head = false;
	double				x;

	for (i = 0; i < a->nservices(a); i++) {
		a->service(a, i, &v);
		if (v.capacity == NULL || !isfinite(x = pick(v.capacity)))
			continue;
		if (!head)
			fprintf(fp, "# HELP %s %s\n# TYPE %s gauge\n", name, help,
			    name);
		head = true;
		fprintf(fp, "%s{service=\"%s\"} %.10g\n", name, v.name[0] ?
		    v.name : NAME_DEFAULT_SERVICE, x);
	}
}

static double
pick_factor(const struct agent_capacity_view *v)
{
	return v->on ? v->view.factor_pct : NAN;
}

static double
pick_estimate(const struct agent_capacity_view *v)
{
	return v->on ? v->view.estimate : NAN;
}

static double
pick_rate(const struct agent_capacity_view *v)
{
	return v->on ? v->rate : NAN;
}

static double
pick_util(const struct agent_capacity_view *v)
{
	return v->on ? v->util : NAN;
}

static double
pick_active(const struct agent_capacity_view *v)
{
	return v->on ? v->view.state == CAPACITY_ACTIVE : NAN;
}

static double
pick_limit(const struct agent_capacity_view *v)
{
	return v->adaptive && v->maxconn > 0 ? v->maxconn : NAN;
}

static double
pick_latency(const struct agent_capacity_view *v)
{
	return v->adaptive ? v->latency_ms : NAN;
}

char *
status_capacity_metrics(const struct agent_view *a)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*fp;

	if ((fp = open_memstream(&text, &len)) == NULL)
		return NULL;
	family(fp, a, "lbagent_capacity_factor_percent", "The capacity "
	    "factor a service's weight carries (100 without an estimate).",
	    pick_factor);
	family(fp, a, "lbagent_capacity_active", "1 while a service's "
	    "capacity estimate is active, 0 in blackout, idle or stale.",
	    pick_active);
	family(fp, a, "lbagent_capacity_estimate", "The node's capacity "
	    "estimate, req/s at full utilization.", pick_estimate);
	family(fp, a, "lbagent_capacity_rate", "The latest rate served, "
	    "req/s (an input of the estimate).", pick_rate);
	family(fp, a, "lbagent_capacity_utilization", "The latest "
	    "utilization, 0 to 1 (an input of the estimate).", pick_util);
	family(fp, a, "lbagent_maxconn", "The maxconn:N each load "
	    "balancer is told (maxconn = adaptive).", pick_limit);
	family(fp, a, "lbagent_maxconn_latency_ms", "The latency the "
	    "limit follows, ms.", pick_latency);
	if (fclose(fp) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
