/*
 * A service's capacity weight and adaptive maxconn, the agent's half
 * (docs/capacity.md): before each step, the inputs that came since the
 * last (this node's server rows in the peer guard's last round of the
 * load balancers' stats, the probes' latest values, the peers' published
 * estimates) go to the pure models, core/capacity.h, core/conclimit.h
 * and core/rate.h, whose factor and limit the step puts in the reply.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/lbkeys.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/peers.h"
#include "lbagent/daemon/scheduler.h"

#include "agent_impl.h"

/* The probe of that name, for an input that is not haproxy; or NULL. */
static struct probe *
probe_named(const struct agent *a, const char *name)
{
	size_t	i;

	if (name == NULL || strcmp(name, "haproxy") == 0)
		return NULL;
	for (i = 0; i < a->nprobes; i++)
		if (strcmp(scheduler_probe_conf(a->probes[i])->name, name) == 0)
			return a->probes[i];
	return NULL;
}

/*
 * The unit of p's value when it is the measure: a json_field's number
 * has none, any other the kind's. A failed run's value may be another
 * (an http probe's latency when the body is not there).
 */
static const char *
measure_unit(const struct probe *p)
{
	const struct probe_conf	*pc;

	if (p == NULL)
		return "";
	pc = scheduler_probe_conf(p);
	if (strncmp(pc->signature, "json_field=", 11) == 0 ||
	    strstr(pc->signature, "\njson_field=") != NULL)
		return "";
	return pc->ops->unit != NULL ? pc->ops->unit : "";
}

static void
settings_of(const struct capacity_conf *cc, struct capacity_settings *cs,
    struct conclimit_settings *ls)
{
	capacity_settings_default(cs);
	cs->min_rate = (double)cc->min_rate;
	cs->reference = (double)cc->reference;
	cs->blackout_ms = cc->blackout_ms;
	cs->expiry_ms = cc->expiry_ms;
	cs->half_life_ms = cc->half_life_ms;
	/*
	 * The factor steps at most once a half-life: faster, it would chase
	 * an estimate that has moved only halfway; slower, a shorter
	 * half-life (the qualification's bounded tier scales every time)
	 * would settle no sooner.
	 */
	cs->step_interval_ms = cc->half_life_ms;
	cs->floor_pct = (int)cc->floor_pct;
	cs->cap_pct = (int)cc->cap_pct;
	conclimit_settings_default(ls);
	ls->min = (int)cc->maxconn_min;
	ls->max = (int)cc->maxconn_max;
}

/* What a reload compares: every setting and input of the model. */
static void
signature(const struct agent *a, const struct capacity_conf *cc, char *buf,
    size_t size)
{
	snprintf(buf, size, "%d %d %s %s %s %s %llu %llu %llu %llu %llu %llu "
	    "%llu %llu %llu %zu", cc->on, cc->adaptive,
	    cc->rate ? cc->rate : "", cc->utilization ? cc->utilization : "",
	    cc->latency ? cc->latency : "", cc->weight_from ? cc->weight_from :
	    "", (unsigned long long)cc->reference,
	    (unsigned long long)cc->min_rate,
	    (unsigned long long)cc->blackout_ms,
	    (unsigned long long)cc->expiry_ms,
	    (unsigned long long)cc->half_life_ms,
	    (unsigned long long)cc->floor_pct, (unsigned long long)cc->cap_pct,
	    (unsigned long long)cc->maxconn_min,
	    (unsigned long long)cc->maxconn_max, a->cfg->peers.haproxy.count);
}

void
agent_capacity_init(struct agent *a, struct svc *w,
    const struct service_conf *sc)
{
	struct svc_capacity		*c = &w->cap;
	const struct capacity_conf	*cc;
	struct capacity_settings	 cs;
	struct conclimit_settings	 ls;
	size_t				 i;

	memset(c, 0, sizeof(*c));
	c->v.rate = c->v.util = c->v.latency_ms = c->v.inflight = NAN;
	c->v.input_ms = INT64_MIN;
	c->stats_round_ms = INT64_MIN;
	c->stats_rate = c->stats_latency = c->stats_inflight = NAN;
	for (i = 0; i < CONFIG_PEERS_MAX; i++)
		counter_rate_init(&c->rates[i]);
	if (sc == NULL || (!sc->capacity.on && !sc->capacity.adaptive))
		return;
	cc = &sc->capacity;
	c->v.on = cc->on;
	c->v.adaptive = cc->adaptive;
	settings_of(cc, &cs, &ls);
	capacity_init(&c->cap, &cs, clock_now_ms());
	conclimit_init(&c->cl, &ls);
	c->v.limit = c->v.adaptive ? &c->cl : NULL;
	c->rate_hx = cc->on && strcmp(cc->rate, "haproxy") == 0;
	c->latency_hx = cc->adaptive && strcmp(cc->latency, "haproxy") == 0;
	c->rate_p = cc->on ? probe_named(a, cc->rate) : NULL;
	c->util_p = cc->on ? probe_named(a, cc->utilization) : NULL;
	c->latency_p = cc->adaptive ? probe_named(a, cc->latency) : NULL;
	c->rate_unit = measure_unit(c->rate_p);
	c->util_unit = measure_unit(c->util_p);
	c->latency_unit = measure_unit(c->latency_p);
	signature(a, cc, c->sig, sizeof(c->sig));
}

/*
 * A round of the load balancers' stats not taken yet: the rate of this
 * node's stot summed over them (NAN while one that has the row gives no
 * rate: its share would be missing), their mean rtime, the sum of scur.
 * *reset: a counter went back (HAProxy or the application restarted).
 */
static bool
take_stats(struct agent *a, size_t i, struct svc_capacity *c, bool *reset)
{
	struct lb_server_sample	s;
	int64_t			round;
	size_t			j, n, found = 0, counted, nlat = 0;
	double			lat = 0, inflight = 0;
	bool			any = false;

	*reset = false;
	if (a->peers == NULL || (round = peers_round_ms(a->peers)) ==
	    INT64_MIN || round == c->stats_round_ms)
		return false;
	c->stats_round_ms = round;
	if ((n = peers_nlbs(a->peers)) > CONFIG_PEERS_MAX)
		n = CONFIG_PEERS_MAX;
	for (j = 0; j < n; j++) {
		if (!peers_this_node_stats(a->peers, i, j, &s) ||
		    s.at_ms == INT64_MIN) {
			counter_rate_miss(&c->rates[j]);
			continue;
		}
		found++;
		/*
		 * The rate served: the responses given where HAProxy counts
		 * them (mode http), else the sessions begun. Past saturation
		 * a node begins more than it completes (the rest queue in
		 * the application): its sessions would overstate it.
		 */
		if (counter_rate_feed(&c->rates[j], s.responses >= 0 ?
		    s.responses : s.stot, s.at_ms,
		    RATE_EPOCH_NONE) == RATE_RESET)
			*reset = true;
		if (s.rtime_ms >= 0) {
			lat += (double)s.rtime_ms;
			nlat++;
		}
		if (s.scur >= 0) {
			inflight += (double)s.scur;
			any = true;
		}
	}
	c->stats_rate = counter_rate_sum(c->rates, n, &counted);
	if (counted < found)
		c->stats_rate = NAN;
	c->stats_latency = nlat > 0 ? lat / (double)nlat : NAN;
	c->stats_inflight = any ? inflight : NAN;
	return true;
}

/*
 * A probe's value when it finished a run since *seen (its count of
 * runs, which moves): NAN when it is not in the measure's unit; a
 * percentage as a fraction. False: no new run.
 */
static bool
probe_value(struct probe *p, const char *unit, uint64_t *seen, double *value)
{
	const struct probe_state	*st;
	uint64_t			 runs = 0;
	int				 k;

	if (p == NULL)
		return false;
	st = scheduler_probe_state(p);
	for (k = 0; k < PROBE_RESULT_COUNT; k++)
		runs += st->runs[k];
	if (!st->has_run || runs == *seen)
		return false;
	*seen = runs;
	*value = strcmp(st->last.unit, unit) == 0 ? st->last.value : NAN;
	if (strcmp(unit, "%") == 0)
		*value /= 100;
	return true;
}

/* The peers' estimates of the service still fresh within the expiry. */
static size_t
peer_estimates(const struct agent *a, size_t i, const struct svc_capacity *c,
    int64_t now_ms, double *out)
{
	const char	*name = a->svcs[i].s.name;
	size_t		 j, k, n = 0;
	int64_t		 since;

	for (j = 0; a->peers != NULL && j < peers_npeers(a->peers) &&
	    n < CONFIG_PEERS_MAX; j++) {
		const struct peer_source *src = peers_peer(a->peers, j);

		if (!peer_view_peer_ok(src) || strcmp(
		    peer_view_peer_node_id(src), a->cfg->node_id) == 0)
			continue;
		since = now_ms - peer_view_peer_seen_ms(src);
		since = since < 0 ? 0 : since;
		if ((uint64_t)since >= c->cap.set.expiry_ms)
			continue;
		for (k = 0; k < src->ans.nsvc; k++)
			if (strcmp(src->ans.svc[k].name, name) == 0) {
				out[n++] = peer_service_capacity(&src->ans.svc[k],
				    c->cap.set.expiry_ms - (uint64_t)since);
				break;
			}
	}
	return n;
}

/* The capacity's sample, when its rate came (a round, the rate's probe). */
static bool
capacity_inputs(struct svc_capacity *c, bool stats, int64_t now_ms)
{
	double	rate = NAN, util;

	if (probe_value(c->util_p, c->util_unit, &c->util_runs, &util))
		c->v.util = util;
	if (c->rate_hx ? !stats : !probe_value(c->rate_p, c->rate_unit,
	    &c->rate_runs, &rate))
		return false;
	if (c->rate_hx)
		rate = c->stats_rate;
	c->v.rate = rate;
	c->v.input_ms = now_ms;
	capacity_sample(&c->cap, rate, c->v.util, now_ms);
	return true;
}

/* The limit's sample, when its latency came; each load balancer's share. */
static bool
limit_inputs(struct svc_capacity *c, const struct lbkeys *keys, bool stats,
    int64_t now_ms)
{
	double	lat = NAN;
	bool	fresh = false;

	if (c->latency_hx ? stats : probe_value(c->latency_p,
	    c->latency_unit, &c->latency_runs, &lat)) {
		c->v.latency_ms = c->latency_hx ? c->stats_latency : lat;
		/* Without [haproxy] sources nothing says what is in flight. */
		c->v.inflight = isnan(c->stats_inflight) ? 0 : c->stats_inflight;
		conclimit_sample(&c->cl, c->v.latency_ms, c->v.inflight, now_ms);
		fresh = true;
	}
	c->v.nlbs = (int)lbkeys_count(keys);
	c->v.nlbs = c->v.nlbs < 1 ? 1 : c->v.nlbs;
	c->v.maxconn = c->cl.learned ? conclimit_per_lb(&c->cl, c->v.nlbs) : 0;
	conclimit_reason(&c->cl, c->v.limit_reason, sizeof(c->v.limit_reason));
	return fresh;
}

void
agent_capacity_step(struct agent *a, size_t i, int64_t now_ms,
    unsigned *factor_pct, unsigned *maxconn)
{
	struct svc		*w = &a->svcs[i];
	struct svc_capacity	*c = &w->cap;
	struct conclimit_settings ls;
	double			 peers[CONFIG_PEERS_MAX];
	bool			 stats = false, reset = false, fresh = false;

	*factor_pct = 0;
	*maxconn = 0;
	if (!c->v.on && !c->v.adaptive)
		return;
	if (c->rate_hx || c->latency_hx)
		stats = take_stats(a, i, c, &reset);
	if (reset && c->v.on)
		capacity_counter_reset(&c->cap, now_ms);
	if (reset && c->v.adaptive) {
		ls = c->cl.set;
		conclimit_init(&c->cl, &ls);
	}
	if (c->v.on) {
		fresh = capacity_inputs(c, stats, now_ms);
		capacity_view(&c->cap, now_ms, peers, peer_estimates(a, i, c,
		    now_ms, peers), &c->v.view);
		c->v.view_ms = now_ms;
		if (isfinite(c->v.view.estimate))
			*factor_pct = (unsigned)c->v.view.factor_pct;
		if (c->v.view.changed)
			a->generation++;
	}
	if (c->v.adaptive) {
		fresh = limit_inputs(c, w->s.keys, stats, now_ms) || fresh;
		*maxconn = (unsigned)c->v.maxconn;
	}
	/* The documents show the estimate and its age: rendered anew. */
	if (fresh)
		a->ticks++;
}

bool
agent_capacity_rounds(const struct agent *a, const struct svc *w)
{
	return a->peers != NULL && (w->cap.v.on || w->cap.v.adaptive);
}

void
agent_capacity_carry(struct svc *to, const struct svc *from)
{
	struct svc_capacity		*t = &to->cap;
	const struct svc_capacity	*f = &from->cap;

	if ((!t->v.on && !t->v.adaptive) || strcmp(t->sig, f->sig) != 0)
		return;
	t->cap = f->cap;
	t->cl = f->cl;
	memcpy(t->rates, f->rates, sizeof(t->rates));
	t->stats_round_ms = f->stats_round_ms;
	t->rate_runs = f->rate_runs;
	t->util_runs = f->util_runs;
	t->latency_runs = f->latency_runs;
	t->stats_rate = f->stats_rate;
	t->stats_latency = f->stats_latency;
	t->stats_inflight = f->stats_inflight;
	/* The units are the new probes' (the signature has their names). */
	t->v.view = f->v.view;
	t->v.view_ms = f->v.view_ms;
	t->v.rate = f->v.rate;
	t->v.util = f->v.util;
	t->v.latency_ms = f->v.latency_ms;
	t->v.inflight = f->v.inflight;
	t->v.input_ms = f->v.input_ms;
	t->v.maxconn = f->v.maxconn;
	t->v.nlbs = f->v.nlbs;
	memcpy(t->v.limit_reason, f->v.limit_reason, sizeof(t->v.limit_reason));
}
