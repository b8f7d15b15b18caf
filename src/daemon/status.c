/* The status document, the metrics and the health verdict. No I/O. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lbagent/core/guard.h"
#include "lbagent/core/history.h"
#include "lbagent/core/lbkeys.h"
#include "lbagent/core/marker.h"
#include "lbagent/core/name.h"
#include "lbagent/core/text.h"
#include "lbagent/core/transition.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/markers.h"
#include "lbagent/daemon/peers.h"
#include "lbagent/daemon/scheduler.h"
#include "lbagent/daemon/status.h"

void
status_iso_time(int64_t wall_ms, char buf[32])
{
	time_t		t = (time_t)(wall_ms / 1000);
	struct tm	tm;
	char		s[24];

	if (gmtime_r(&t, &tm) == NULL || strftime(s, sizeof(s),
	    "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(s, sizeof(s), "?");
	snprintf(buf, 32, "%s.%03dZ", s, (int)(wall_ms % 1000));
}

/* A monotonic time on the wall clock, as ISO 8601. */
static json_t *
iso_of(int64_t ms, const struct status_clock *c)
{
	char	buf[32];

	status_iso_time(c->wall_ms - (c->now_ms - ms), buf);
	return json_string(buf);
}

static double
seconds(int64_t ms)
{
	return (double)ms / 1000.0;
}

/*
 * What the service tells HAProxy, as state and weight. With automation
 * off or in shadow mode and no marker, it is what HAProxy was last told
 * by automation and still holds (in shadow mode the engine moves on, and
 * what it would say is the would-be decision).
 */
static void
effective(const struct agent_service_view *v, struct decision *d)
{
	*d = *v->decision;
	if (d->automation_off && d->state == NODE_UP) {
		if (d->shadow)
			*d = *v->held;
		else
			transition_current(v->tr, d);
	}
}

/* The service's mode: "auto", "off" or "shadow". */
static const char *
mode_name(const struct agent_service_view *v)
{
	return v->off_by != NULL ? "off" : v->shadow_by != NULL ? "shadow" :
	    "auto";
}

static bool
serving(const struct decision *d)
{
	return d->state == NODE_UP && d->weight > 0;
}

/* The line without its newline. */
static json_t *
line_json(const char *line)
{
	return json_stringn(line, strcspn(line, "\n"));
}

/* A marker file's time, as it said it (UTC), or null. */
static json_t *
marker_time_json(bool has, int64_t wall_ms)
{
	char	buf[MARKER_TIME_LEN + 1];

	if (!has)
		return json_null();
	marker_time_format(wall_ms, buf);
	return json_string(buf);
}

static json_t *
markers_json(const struct agent_service_view *v)
{
	json_t	*a = json_array();
	int	 k;

	for (k = 0; a != NULL && k < MARKER_COUNT; k++) {
		const struct marker *m = NULL;
		const char *scope = "node";

		if (v->own != NULL && v->own->m[k].present) {
			m = &v->own->m[k];
			scope = "service";
		} else if (v->node->m[k].present)
			m = &v->node->m[k];
		if (m == NULL)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:o, "
		    "s:o, s:o, s:o, s:o}",
		    "kind", marker_name((enum marker_kind)k), "scope", scope,
		    "reason", m->reason, "unreadable", m->unreadable,
		    "owner", m->owner[0] ? json_string(m->owner) : json_null(),
		    "host", m->host[0] ? json_string(m->host) : json_null(),
		    "since", marker_time_json(m->has_since, m->since_wall_ms),
		    "until", marker_time_json(m->has_until, m->until_wall_ms),
		    "note", m->note[0] ? json_string(m->note) : json_null()));
	}
	return a;
}

/* A windowed probe's figures as of its latest sample; null without. */
static json_t *
window_json(const struct probe_conf *pc, const struct probe_state *st,
    const struct status_clock *c)
{
	const struct probe_window_view	*w = &st->window;
	bool				 any = w->stats.samples > 0;

	if (!w->on)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, "
	    "s:b, s:s, s:s}",
	    "window_ms", (json_int_t)pc->window.window_ms,
	    "min_samples", (json_int_t)pc->window.min_samples,
	    "samples", (json_int_t)w->stats.samples,
	    "errors", (json_int_t)w->stats.errors,
	    "error_rate", any ? json_real(w->stats.error_rate) : json_null(),
	    "p50_ms", any ? json_integer(w->stats.p50_ms) : json_null(),
	    "p95_ms", any ? json_integer(w->stats.p95_ms) : json_null(),
	    "p99_ms", any ? json_integer(w->stats.p99_ms) : json_null(),
	    "since", any ? iso_of(w->stats.oldest_ms, c) : json_null(),
	    "judging", w->judging,
	    "result", probe_result_name(w->result),
	    "reason", w->reason);
}

static json_t *
probes_json(const struct agent_service_view *v, const struct status_clock *c)
{
	json_t	*a = json_array(), *last;
	size_t	 i;

	for (i = 0; a != NULL && i < v->nprobes; i++) {
		const struct probe_conf	 *pc;
		const struct probe_state *st;

		pc = scheduler_probe_conf(v->probes[i]);
		st = scheduler_probe_state(v->probes[i]);

		last = json_null();
		if (st->has_run)
			last = json_pack("{s:s, s:s, s:o, s:s, s:o, s:f, s:I}",
			    "result", probe_result_name(st->last.result),
			    "reason", st->last.reason,
			    "value", isfinite(st->last.value) ?
			    json_real(st->last.value) : json_null(),
			    "unit", st->last.unit,
			    "at", iso_of(st->last_run_ms, c),
			    "ago_s", seconds(c->now_ms - st->last_run_ms),
			    "duration_ms", (json_int_t)st->last_duration_ms);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:o, "
		    "s:o, s:{s:I, s:I, s:I, s:I}}", "name", pc->name, "type",
		    pc->ops->name, "counted", probe_result_name(st->counted),
		    "settled", st->settled, "last", last,
		    "window", window_json(pc, st, c), "runs",
		    "ok", (json_int_t)st->runs[PROBE_OK],
		    "warn", (json_int_t)st->runs[PROBE_WARN],
		    "crit", (json_int_t)st->runs[PROBE_CRIT],
		    "unknown", (json_int_t)st->runs[PROBE_UNKNOWN]));
	}
	return a;
}

static json_t *
owed_json(unsigned owes)
{
	json_t		*a = json_array();
	unsigned	 b;

	for (b = 0; a != NULL && b < CLAIM_COUNT; b++)
		if (owes & (1u << b))
			json_array_append_new(a,
			    json_string(reply_restore_word(1u << b)));
	return a;
}

/* What is wrong with a key of service i, or null. */
static json_t *
lb_warning_json(const struct agent *ag, size_t i, const struct lbkey *k,
    const char *text)
{
	if (i != 0 || !agent_names_no_service(ag, k->text, k->textlen))
		return json_null();
	return json_sprintf("asks for service '%s', which does not exist; "
	    "answered as the default", text);
}

/*
 * In shadow mode, the line automation would send to the load balancer of
 * key k at its next check: with the would-be restore words it is owed.
 */
static const char *
would_next(const struct agent_service_view *v, const struct lbkey *k,
    int64_t now_ms)
{
	size_t	i;

	for (i = 0; i < lbkeys_count(v->would_keys); i++) {
		const struct lbkey *w = lbkeys_get(v->would_keys, i);

		if (strcmp(w->addr, k->addr) == 0 && w->textlen == k->textlen &&
		    memcmp(w->text, k->text, k->textlen) == 0)
			return v->would_lines[lbkeys_next_restore(w, now_ms)];
	}
	return v->would_lines[0];
}

static json_t *
lbs_json(const struct agent *ag, size_t si, const struct agent_service_view *v,
    bool reasons, const struct status_clock *c)
{
	json_t	*a = json_array();
	char	 text[4 * LBKEY_TEXT_MAX + 1], next[REPLY_MAX];
	size_t	 i;

	for (i = 0; a != NULL && i < lbkeys_count(v->keys); i++) {
		const struct lbkey *k = lbkeys_get(v->keys, i);

		text_escape(text, k->text, k->textlen);
		/* What this load balancer gets when it checks now. */
		if (v->decision->shadow && v->would != NULL)
			reply_compose_shadow(v->decision, lbkeys_next_restore(k,
			    c->now_ms), would_next(v, k, c->now_ms), next);
		else
			reply_compose(v->decision, lbkeys_next_restore(k,
			    c->now_ms), reasons, next);
		json_array_append_new(a, json_pack("{s:s, s:s, s:f, s:I, s:o, "
		    "s:o, s:o, s:o}", "address", k->addr, "text", text,
		    "last_seen_s", seconds(c->now_ms - k->last_seen_ms), "checks",
		    (json_int_t)k->checks, "last_reply", line_json(k->last_reply),
		    "next_reply", line_json(next), "owed", owed_json(k->owes),
		    "warning", lb_warning_json(ag, si, k, text)));
	}
	return a;
}

static json_t *
history_json(const struct history *h)
{
	json_t	*a = json_array();
	char	 at[32];
	size_t	 i;

	for (i = 0; a != NULL && i < history_count(h); i++) {
		const struct history_entry *e = history_get(h, i);

		status_iso_time(e->wall_ms, at);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}", "at",
		    at, "from", e->from, "to", e->to, "reason", e->reason));
	}
	return a;
}

static json_t *
decision_json(const struct decision *d)
{
	return json_pack("{s:s, s:i, s:s}", "state",
	    decision_state_name(d->state), "weight",
	    d->state == NODE_UP ? (int)d->weight : 0, "reason", d->reason);
}

static json_t *
engine_json(const struct transition *t, const struct status_clock *c)
{
	const struct transition_conf	*tc = transition_conf(t);
	struct transition_pending	 p;
	struct decision			 d;
	json_t				*pending = json_null(), *ramp = json_null();
	char				 text[160], lb[16];
	size_t				 outs = 0, i;
	int64_t				 ramp_ms;

	transition_current(t, &d);
	if (transition_pending(t, c->now_ms, &p)) {
		transition_pending_text(t, &p, text, sizeof(text));
		pending = json_pack("{s:s, s:o, s:f, s:s}", "towards",
		    transition_level_text(p.towards, lb), "for_s", p.for_ms < 0 ?
		    json_null() : json_real(seconds(p.for_ms)), "after_s",
		    seconds(p.after_ms), "text", text);
	}
	if (transition_ramp(t, &ramp_ms) && transition_at(t) >= 1)
		ramp = json_pack("{s:i, s:i, s:f, s:f}", "weight", (int)d.weight,
		    "to", transition_at(t), "started_s", seconds(c->now_ms -
		    ramp_ms), "ends_in_s", seconds((int64_t)tc->ramp_ms -
		    (c->now_ms - ramp_ms)));
	for (i = 0; i < transition_nouts(t); i++)
		if (c->now_ms - transition_out_ms(t, i) <
		    (int64_t)tc->flap_window_ms)
			outs++;
	return json_pack("{s:s, s:i, s:o, s:f, s:o, s:o, s:{s:i, s:I, s:f}}",
	    "state", decision_state_name(d.state), "weight",
	    d.state == NODE_UP ? (int)d.weight : 0, "since",
	    iso_of(transition_since_ms(t), c), "since_s", seconds(c->now_ms -
	    transition_since_ms(t)), "pending", pending, "ramp", ramp,
	    "damping", "factor", (int)transition_damping(t),
	    "outs_in_window", (json_int_t)outs, "up_after_s",
	    seconds((int64_t)transition_up_after_ms(t)));
}

/* An age in seconds, or null for a time that never was. */
static json_t *
age_json(int64_t ms, const struct status_clock *c)
{
	return ms == INT64_MIN ? json_null() : json_real(seconds(c->now_ms - ms));
}

static json_t *
text_or_null(const char *s)
{
	return s == NULL || s[0] == '\0' ? json_null() : json_string(s);
}

/* Why a peer does not serve, or null when it does. */
static json_t *
why_not_json(const struct peer_verdict *d)
{
	return d->serving ? json_null() : json_string(d->why);
}

/* The peer guard of one service: its state and the round it rests on. */
static json_t *
guard_json(const struct agent *a, size_t i,
    const struct agent_service_view *v, const struct status_clock *c)
{
	const struct peer_view	*pv = &v->peers;
	const struct peers	*ps;
	struct agent_info	 info;
	struct guard_view	 gv;
	json_t			*o, *peers;
	bool			 asked;
	size_t			 j;

	if (!v->has_peers)
		return json_pack("{s:s}", "state", "off");
	agent_info(a, &info);
	ps = info.peers;
	asked = pv->round_ms != INT64_MIN;
	if ((peers = json_array()) != NULL)
		for (j = 0; j < peers_npeers(ps); j++) {
			const struct peer_verdict *pd = peers_verdict(ps, i, j);

			if (pd->self)
				continue;
			json_array_append_new(peers, json_pack("{s:o, s:b, s:o}",
			    "node_id", text_or_null(pd->node_id), "serving",
			    pd->serving, "why_not", why_not_json(pd)));
		}
	guard_view(v->tr, &gv);
	o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "state", guard_state_name(gv.state), "since",
	    iso_of(gv.since_ms, c), "reason",
	    text_or_null(gv.reason), "other_serving", asked ?
	    json_boolean(pv->other_serving) : json_null(), "serving_peers",
	    asked && pv->other_serving ? json_string(pv->who) : json_null(),
	    "why", asked && !pv->other_serving ? json_string(pv->why) :
	    json_null(), "asked_s", asked ? age_json(pv->round_ms, c) :
	    json_null(), "alone_s", asked && !pv->other_serving ?
	    age_json(pv->served_ms, c) : json_null(), "marker_warning",
	    text_or_null(v->marker_warning), "peers", peers);
	/* What "another node serving" rests on. */
	if (o != NULL)
		json_object_set_new(o, "judged_by", json_string(
		    peers_npeers(ps) == 0 ? "load_balancers" :
		    peers_nlbs(ps) == 0 ? "peers" :
		    "peers_and_load_balancers"));
	return o;
}

/* A peer's service as it answered: NULL when it did not, or has none. */
static const struct peer_service *
peer_service_of(const struct peer_source *p, const char *name)
{
	size_t	k;

	if (!peer_view_peer_ok(p))
		return NULL;
	for (k = 0; k < p->ans.nsvc; k++)
		if (strcmp(p->ans.svc[k].name, name) == 0)
			return &p->ans.svc[k];
	return NULL;
}

/* How each load balancer shows a peer's server (the fleet view). */
static json_t *
peer_lbs_json(const struct peers *ps, const struct peer_source *p,
    const struct peer_service *s, const char *backend)
{
	json_t			*arr = json_array();
	struct hastats_row	 row;
	const char		*server, *why;
	size_t			 k;
	int			 found;

	if (arr == NULL || backend[0] == '\0')
		return arr;
	server = s != NULL && s->server[0] != '\0' ? s->server :
	    peer_view_peer_node_id(p);
	for (k = 0; k < peers_nlbs(ps); k++) {
		const struct lb_source *lb = peers_lb(ps, k);

		found = server[0] != '\0' && peer_view_lb_ok(lb) ?
		    hastats_table_find(lb->table, backend, server, &row, &why) :
		    -1;
		json_array_append_new(arr, json_pack("{s:s, s:o, s:o, s:o}",
		    "source", peer_view_lb_text(lb), "server", text_or_null(
		    server), "status", found == 1 ? json_string(row.status) :
		    json_null(), "weight", found == 1 && row.weight >= 0 ?
		    json_integer(row.weight) : json_null()));
	}
	return arr;
}

/* Every configured peer: who answered, whether it serves, and why not. */
static json_t *
peers_json(const struct agent *a, const struct status_clock *c)
{
	struct agent_info	 info;
	const struct peers	*ps;
	json_t			*arr = json_array(), *svcs;
	size_t			 i, j;

	agent_info(a, &info);
	if ((ps = info.peers) == NULL || arr == NULL)
		return arr;
	for (j = 0; j < peers_npeers(ps); j++) {
		const struct peer_source *p = peers_peer(ps, j);
		const struct peer_verdict *d0 = peers_verdict(ps, 0, j);
		const struct peer_liveness *l = &p->live;
		const char *id = peer_view_peer_node_id(p);
		json_t *o;

		if ((svcs = json_array()) != NULL)
			for (i = 0; i < agent_nservices(a); i++) {
				const struct peer_verdict *d =
				    peers_verdict(ps, i, j);
				struct agent_service_view v;
				const struct peer_service *s;

				agent_service_view(a, i, &v);
				s = peer_service_of(p, v.name);
				json_array_append_new(svcs, json_pack("{s:s, s:b, "
				    "s:o, s:o, s:o, s:o, s:o}", "name", v.name,
				    "serving", d->serving, "why_not",
				    why_not_json(d), "state", s != NULL ?
				    text_or_null(s->state) : json_null(),
				    "weight", s != NULL && s->weight >= 0 ?
				    json_integer(s->weight) : json_null(),
				    "automation", s != NULL ?
				    text_or_null(s->automation) : json_null(),
				    "load_balancers", peer_lbs_json(ps, p, s,
				    transition_conf(v.tr)->backend)));
			}
		o = json_pack("{s:s, s:o, s:b, s:b, s:o, s:o, s:o}", "agent",
		    peer_view_peer_text(p), "node_id", text_or_null(id), "self",
		    d0->self, "serving", d0->serving, "why_not", d0->self ?
		    json_null() : why_not_json(d0), "last_seen_s",
		    age_json(peer_view_peer_seen_ms(p), c), "services", svcs);
		if (o == NULL)
			continue;
		/* Liveness: information only, as rounds pass. */
		json_object_set_new(o, "answered", json_boolean(
		    peer_view_peer_ok(p)));
		json_object_set_new(o, "error", peer_view_peer_ok(p) ?
		    json_null() : json_string(peer_view_peer_error(p)));
		json_object_set_new(o, "liveness", l->rounds == 0 ? json_null() :
		    json_string(peer_alive_name(peer_liveness_verdict(l,
		    info.cfg->peers.suspect_after,
		    info.cfg->peers.dead_after))));
		json_object_set_new(o, "rounds_missed",
		    json_integer((json_int_t)l->missed));
		json_object_set_new(o, "incarnation", l->incarnation >= 0 ?
		    json_integer((json_int_t)l->incarnation) : json_null());
		json_object_set_new(o, "restarts",
		    json_integer((json_int_t)l->restarts));
		json_object_set_new(o, "restarted", json_boolean(l->restarted));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* The peers' rounds: how old the last one is, and the liveness bounds. */
static json_t *
peer_rounds_json(const struct agent *a, const struct status_clock *c)
{
	struct agent_info	info;

	agent_info(a, &info);
	if (info.peers == NULL)
		return json_null();
	return json_pack("{s:o, s:I, s:I, s:b, s:I, s:I}", "last_round_s",
	    age_json(peers_round_ms(info.peers), c), "interval_ms",
	    (json_int_t)info.cfg->peers.interval_ms, "rounds",
	    (json_int_t)peers_rounds(info.peers), "needed",
	    peers_needed(info.peers), "suspect_after",
	    (json_int_t)info.cfg->peers.suspect_after, "dead_after",
	    (json_int_t)info.cfg->peers.dead_after);
}

/* A count the load balancer gave, or null. */
static json_t *
count_json(bool known, long n)
{
	return known && n >= 0 ? json_integer(n) : json_null();
}

/* How each load balancer sees this node, service by service. */
static json_t *
haproxy_json(const struct agent *a, const struct status_clock *c)
{
	struct agent_info	 info;
	const struct peers	*ps;
	json_t			*arr = json_array(), *mine, *warns;
	struct lb_view		 lv;
	size_t			 i, j, k;

	agent_info(a, &info);
	if ((ps = info.peers) == NULL || arr == NULL)
		return arr;
	for (j = 0; j < peers_nlbs(ps); j++) {
		const struct lb_source *lb = peers_lb(ps, j);

		if ((mine = json_array()) != NULL)
			for (i = 0; i < agent_nservices(a); i++) {
				struct agent_service_view v;
				const struct transition_conf *tc;
				const char *server;

				agent_service_view(a, i, &v);
				tc = transition_conf(v.tr);
				server = config_server(info.cfg, tc);
				peer_view_lb(lb, tc->backend, server,
				    v.decision, &lv);
				if ((warns = json_array()) != NULL)
					for (k = 0; k < lv.nwarnings; k++)
						json_array_append_new(warns,
						    json_string(lv.warnings[k]));
				json_array_append_new(mine, json_pack("{s:s, s:s, "
				    "s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
				    "s:o, s:o}",
				    "service", v.name, "backend", tc->backend,
				    "server", server, "found", lv.found, "status",
				    lv.found ? json_string(lv.row.status) :
				    json_null(), "weight", lv.found &&
				    lv.row.weight >= 0 ? json_integer(lv.row.weight)
				    : json_null(), "initial_weight", lv.found &&
				    lv.row.initial_weight >= 0 ?
				    json_integer(lv.row.initial_weight) :
				    json_null(), "agent_status", lv.found ?
				    json_string(lv.row.agent_status) : json_null(),
				    "sessions", count_json(lv.found,
				    lv.row.scur), "queued", count_json(lv.found,
				    lv.row.qcur), "others_serving", count_json(
				    lv.others_serving >= 0, lv.others_serving),
				    "error", text_or_null(lv.error), "warnings",
				    warns));
			}
		json_array_append_new(arr, json_pack("{s:s, s:b, s:o, s:o, s:o}",
		    "source", peer_view_lb_text(lb), "ok", peer_view_lb_ok(lb),
		    "error", peer_view_lb_ok(lb) ? json_null() :
		    json_string(peer_view_lb_error(lb)), "last_seen_s",
		    age_json(peer_view_lb_seen_ms(lb), c), "this_node", mine));
	}
	return arr;
}

static json_t *
service_json(const struct agent *a, size_t i, bool detail,
    const struct status_clock *c)
{
	struct agent_service_view	 v;
	struct agent_info		 info;
	struct decision			 d;
	json_t				*o;

	agent_service_view(a, i, &v);
	effective(&v, &d);
	agent_info(a, &info);
	o = json_pack("{s:s, s:s, s:i, s:b, s:s, s:s}", "name", v.name,
	    "state", decision_state_name(d.state), "weight", d.state == NODE_UP ?
	    (int)d.weight : 0, "serving", serving(&d), "automation",
	    mode_name(&v), "server",
	    config_server(info.cfg, transition_conf(v.tr)));
	if (o == NULL || !detail)
		return o;
	json_object_set_new(o, "mode", json_string(mode_name(&v)));
	/* Shadow mode: the reply automation would send, beside the real. */
	if (v.would != NULL) {
		json_object_set_new(o, "shadow_reply", line_json(v.would_reply));
		json_object_set_new(o, "shadow_state",
		    json_string(decision_state_name(v.would->state)));
		json_object_set_new(o, "shadow_weight", json_integer(
		    v.would->state == NODE_UP ? (int)v.would->weight : 0));
	} else {
		json_object_set_new(o, "shadow_reply", json_null());
		json_object_set_new(o, "shadow_state", json_null());
		json_object_set_new(o, "shadow_weight", json_null());
	}
	json_object_set_new(o, "reply", line_json(v.reply));
	json_object_set_new(o, "reason", json_string(v.decision->reason));
	json_object_set_new(o, "automation_off_by",
	    v.off_by ? json_string(v.off_by) : json_null());
	json_object_set_new(o, "shadow_by",
	    v.shadow_by ? json_string(v.shadow_by) : json_null());
	json_object_set_new(o, "shadow_reason", v.would != NULL ?
	    json_string(v.would->reason) : json_null());
	json_object_set_new(o, "target", decision_json(v.target));
	json_object_set_new(o, "transition", engine_json(v.tr, c));
	json_object_set_new(o, "markers", markers_json(&v));
	json_object_set_new(o, "probes", probes_json(&v, c));
	json_object_set_new(o, "load_balancers", lbs_json(a, i, &v,
	    info.cfg->reply_reasons, c));
	json_object_set_new(o, "peer_guard", guard_json(a, i, &v, c));
	json_object_set_new(o, "history", history_json(v.history));
	return o;
}

/*
 * Whether the state file is saved: {"ok": true, ...}, or failing since
 * when and why. Replies go on either way.
 */
static json_t *
persistence_json(const struct agent *a)
{
	struct agent_persistence	p;
	char				at[32];

	agent_persistence(a, &p);
	if (!p.failing)
		return json_pack("{s:b, s:n, s:n, s:I}", "ok", 1,
		    "failing_since", "reason", "save_failures",
		    (json_int_t)p.failures);
	status_iso_time(p.since_wall_ms, at);
	return json_pack("{s:b, s:s, s:s, s:I}", "ok", 0, "failing_since", at,
	    "reason", p.reason, "save_failures", (json_int_t)p.failures);
}

json_t *
status_json(const struct agent *a, const struct status_daemon *dm,
    bool detail, const struct status_clock *c)
{
	struct agent_info	 info;
	json_t			*root, *svcs, *first, *errs, *last;
	char			 at[32];
	size_t			 i;

	agent_info(a, &info);
	if ((svcs = json_array()) == NULL)
		return NULL;
	for (i = 0; i < agent_nservices(a); i++)
		json_array_append_new(svcs, service_json(a, i, detail, c));
	first = json_array_get(svcs, 0);
	root = json_pack("{s:s, s:I, s:O, s:O, s:O, s:O, s:b}",
	    "node_id", info.cfg->node_id, "incarnation",
	    (json_int_t)info.incarnation, "state", json_object_get(first, "state"),
	    "weight", json_object_get(first, "weight"), "serving",
	    json_object_get(first, "serving"), "automation",
	    json_object_get(first, "automation"), "detail", detail);
	if (root == NULL) {
		json_decref(svcs);
		return NULL;
	}
	if (detail) {
		status_iso_time(info.started_wall_ms, at);
		last = json_null();
		if (dm->has_reload) {
			if ((errs = json_array()) != NULL)
				for (i = 0; i < dm->nreload_errors; i++)
					json_array_append_new(errs,
					    json_string(dm->reload_errors[i]));
			status_iso_time(dm->reload_wall_ms, at);
			last = json_pack("{s:s, s:b, s:o}", "at", at, "ok",
			    dm->reload_ok, "errors", errs);
			status_iso_time(info.started_wall_ms, at);
		}
		json_object_set_new(root, "version", json_string(LBAGENT_VERSION));
		json_object_set_new(root, "pid", json_integer(getpid()));
		json_object_set_new(root, "config", json_string(info.cfg->path));
		json_object_set_new(root, "started_at", json_string(at));
		json_object_set_new(root, "reloads",
		    json_integer((json_int_t)dm->reloads));
		json_object_set_new(root, "last_reload", last);
		json_object_set_new(root, "peers", peers_json(a, c));
		json_object_set_new(root, "peer_rounds", peer_rounds_json(a, c));
		json_object_set_new(root, "haproxy", haproxy_json(a, c));
		json_object_set_new(root, "persistence", persistence_json(a));
	}
	json_object_set_new(root, "services", svcs);
	return root;
}

json_t *
status_health(const struct agent *a, size_t i, bool *ok)
{
	struct agent_service_view	v;
	struct agent_persistence	p;
	struct decision			d;
	json_t				*o;

	agent_service_view(a, i, &v);
	effective(&v, &d);
	*ok = serving(&d);
	o = json_pack("{s:s, s:s, s:i, s:b}", "service", v.name, "state",
	    decision_state_name(d.state), "weight", d.state == NODE_UP ?
	    (int)d.weight : 0, "serving", *ok);
	/* A state file that cannot be saved is said, not judged: the code
	 * stays serving's. */
	agent_persistence(a, &p);
	if (o != NULL && p.failing)
		json_object_set_new(o, "persistence", persistence_json(a));
	return o;
}

/* --- metrics --- */

/*
 * The text as it is written. A family's HELP and TYPE wait in the text
 * until its first sample: a family that gets none is taken out again
 * (head() and families_end()), so that no family shows empty.
 */
struct buf {
	char	*p;
	size_t	 len, cap;
	bool	 failed;
	size_t	 fam_at;	/* where the latest family's HELP starts */
	size_t	 fam_body;	/* where its samples start; SIZE_MAX: none */
};

static void
put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	n;
	char	*grown;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		if ((grown = realloc(b->p, b->cap * 2 + (size_t)n)) == NULL) {
			b->failed = true;
			return;
		}
		b->p = grown;
		b->cap = b->cap * 2 + (size_t)n;
	}
}

/* A label value as the exposition format wants it: \\, \" and \n escaped. */
static const char *
label(const char *s, char *buf, size_t size)
{
	size_t	n = 0;

	for (; *s != '\0' && n + 3 < size; s++) {
		if (*s == '\\' || *s == '"') {
			buf[n++] = '\\';
			buf[n++] = *s;
		} else if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else
			buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * A service's label: the default service is "default" (an empty label
 * value is no label at all to Prometheus), which no [service] may be
 * called (name_service).
 */
static const char *
svc_label(const char *name, char *buf, size_t size)
{
	return label(name[0] == '\0' ? NAME_DEFAULT_SERVICE : name, buf, size);
}

/* The latest family, taken out again when it got no sample. */
static void
families_end(struct buf *b)
{
	if (!b->failed && b->fam_body != SIZE_MAX && b->len == b->fam_body) {
		b->len = b->fam_at;
		b->p[b->len] = '\0';
	}
	b->fam_body = SIZE_MAX;
}

static void
head(struct buf *b, const char *name, const char *type, const char *help)
{
	families_end(b);
	b->fam_at = b->len;
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	b->fam_body = b->len;
}

/* What each load balancer counts for this node: sessions, or the queue. */
static void
lb_counts(struct buf *b, const struct agent *a, const struct agent_info *info,
    const char *name, const char *help, bool sessions)
{
	struct agent_service_view	 v;
	struct lb_view			 lv;
	char				 sv[160], src[PEERS_TEXT_MAX * 2 + 1];
	size_t				 i, j;
	long				 n;

	head(b, name, "gauge", help);
	for (j = 0; info->peers != NULL && j < peers_nlbs(info->peers); j++) {
		const struct lb_source *lb = peers_lb(info->peers, j);

		for (i = 0; i < agent_nservices(a); i++) {
			const struct transition_conf *tc;

			agent_service_view(a, i, &v);
			tc = transition_conf(v.tr);
			peer_view_lb(lb, tc->backend, config_server(info->cfg,
			    tc), v.decision, &lv);
			n = sessions ? lv.row.scur : lv.row.qcur;
			if (lv.found && n >= 0)
				put(b, "%s{service=\"%s\",source=\"%s\"} %ld\n",
				    name, svc_label(v.name, sv, sizeof(sv)),
				    label(peer_view_lb_text(lb), src, sizeof(src)),
				    n);
		}
	}
}

/*
 * The factor to a value in unit to base units: seconds, a ratio for
 * percentages, bytes (the monitoring plugins' KB and MB are 1024 and
 * 1024^2, as check_disk counts them). Units without a base (a count,
 * "c", none) stay as they are.
 */
static double
value_scale(const char *unit)
{
	static const struct {
		const char	*unit;
		double		 factor;
	} scale[] = {
		{ "ms", 1e-3 }, { "us", 1e-6 }, { "%", 0.01 },
		{ "KB", 1024.0 }, { "MB", 1048576.0 },
		{ "GB", 1073741824.0 }, { "TB", 1099511627776.0 },
	};
	size_t	i;

	for (i = 0; i < sizeof(scale) / sizeof(scale[0]); i++)
		if (strcmp(unit, scale[i].unit) == 0)
			return scale[i].factor;
	return 1.0;
}

/* One probe's series of lbagent_probe_latency_seconds. */
static void
latency_summary(struct buf *b, const struct probe_conf *pc,
    const struct probe_state *st, const char *service)
{
	static const struct {
		const char	*q;
		size_t		 off;
	} qs[] = {
		{ "0.5", offsetof(struct window_stats, p50_ms) },
		{ "0.95", offsetof(struct window_stats, p95_ms) },
		{ "0.99", offsetof(struct window_stats, p99_ms) },
	};
	const struct probe_window_view	*w = &st->window;
	char				 pr[160], sv[160];
	uint32_t			 ms;
	size_t				 k;

	if (!w->on)
		return;
	label(pc->name, pr, sizeof(pr));
	svc_label(service, sv, sizeof(sv));
	for (k = 0; w->stats.samples > 0 && k < sizeof(qs) / sizeof(qs[0]);
	    k++) {
		memcpy(&ms, (const char *)&w->stats + qs[k].off, sizeof(ms));
		put(b, "lbagent_probe_latency_seconds{probe=\"%s\","
		    "service=\"%s\",quantile=\"%s\"} %.3f\n", pr, sv,
		    qs[k].q, seconds(ms));
	}
	put(b, "lbagent_probe_latency_seconds_sum{probe=\"%s\","
	    "service=\"%s\"} %.3f\n", pr, sv,
	    seconds((int64_t)w->total_latency_ms));
	put(b, "lbagent_probe_latency_seconds_count{probe=\"%s\","
	    "service=\"%s\"} %llu\n", pr, sv,
	    (unsigned long long)w->total_samples);
}

/* Whether the node's marker, or the service's own, of kind k is there. */
static bool
marker_present(const struct agent_service_view *v, int k)
{
	return v->node->m[k].present ||
	    (v->own != NULL && v->own->m[k].present);
}

/* The marker of kind k that applies: the service's own first. */
static const struct marker *
applying(const struct agent_service_view *v, int k)
{
	if (v->own != NULL && v->own->m[k].present)
		return &v->own->m[k];
	return v->node->m[k].present ? &v->node->m[k] : NULL;
}

char *
status_metrics(const struct agent *a, const struct status_daemon *dm,
    size_t *lenp)
{
	struct agent_service_view	 v;
	struct agent_info		 info;
	struct decision			 d;
	struct guard_view		 gv;
	struct buf			 b = { NULL, 0, 4096, false, 0,
					    SIZE_MAX };
	struct agent_persistence	 persist;
	char				 sv[160], pr[160];
	size_t				 i, j, n = agent_nservices(a);
	int				 k, r;
	bool				 reload_ok;
	int64_t				 ok_wall_ms;

	if ((b.p = malloc(b.cap)) == NULL)
		return NULL;
	b.p[0] = '\0';
	agent_info(a, &info);
	head(&b, "lbagent_build_info", "gauge", "lbagent's version.");
	put(&b, "lbagent_build_info{version=\"%s\"} 1\n", LBAGENT_VERSION);
	head(&b, "lbagent_start_time_seconds", "gauge", "When lbagent "
	    "started, in seconds since the epoch.");
	put(&b, "lbagent_start_time_seconds %.3f\n",
	    seconds(info.started_wall_ms));
	/* The start is a successful load, as Prometheus counts its own. */
	reload_ok = !dm->has_reload || dm->reload_ok;
	ok_wall_ms = dm->reload_ok_wall_ms != 0 ? dm->reload_ok_wall_ms :
	    info.started_wall_ms;
	head(&b, "lbagent_config_last_reload_successful", "gauge", "1 when "
	    "the latest load of the configuration (the start, or a reload) "
	    "succeeded, 0 when it failed and the one before still runs.");
	put(&b, "lbagent_config_last_reload_successful %d\n", reload_ok);
	head(&b, "lbagent_config_last_reload_success_timestamp_seconds",
	    "gauge", "When the configuration last loaded successfully (the "
	    "start counts), in seconds since the epoch.");
	put(&b, "lbagent_config_last_reload_success_timestamp_seconds %.3f\n",
	    seconds(ok_wall_ms));
	head(&b, "lbagent_state", "gauge", "1 for the state a service is in "
	    "(what HAProxy is told), 0 for the others.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		effective(&v, &d);
		for (k = 0; k < NODE_STATE_COUNT; k++)
			put(&b,
			    "lbagent_state{service=\"%s\",state=\"%s\"} %d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    decision_state_name((enum node_state)k),
			    (int)d.state == k);
	}
	head(&b, "lbagent_weight_ratio", "gauge", "The weight a service "
	    "asks for, 0 to 1 (0 unless up).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		effective(&v, &d);
		put(&b, "lbagent_weight_ratio{service=\"%s\"} %g\n",
		    svc_label(v.name, sv, sizeof(sv)), d.state == NODE_UP ?
		    (double)d.weight / 100.0 : 0.0);
	}
	head(&b, "lbagent_automation_off", "gauge", "1 while automated "
	    "decisions are switched off for a service.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		put(&b, "lbagent_automation_off{service=\"%s\"} %d\n",
		    svc_label(v.name, sv, sizeof(sv)), v.off_by != NULL);
	}
	head(&b, "lbagent_shadow", "gauge", "1 while a service is in shadow "
	    "mode: automation runs, replies carry only its would-be line.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		put(&b, "lbagent_shadow{service=\"%s\"} %d\n",
		    svc_label(v.name, sv, sizeof(sv)), v.shadow_by != NULL);
	}
	head(&b, "lbagent_shadow_reply", "gauge", "In shadow mode, 1 for the "
	    "state a service would tell HAProxy (lbagent_state is what it "
	    "does), 0 for the others; all 0 outside shadow mode.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (k = 0; k < NODE_STATE_COUNT; k++)
			put(&b, "lbagent_shadow_reply{service=\"%s\","
			    "state=\"%s\"} %d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    decision_state_name((enum node_state)k),
			    v.would != NULL && (int)v.would->state == k);
	}
	head(&b, "lbagent_shadow_weight_ratio", "gauge", "In shadow mode, the "
	    "weight a service would ask for, 0 to 1 (0 unless up; 0 outside "
	    "shadow mode).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		put(&b, "lbagent_shadow_weight_ratio{service=\"%s\"} %g\n",
		    svc_label(v.name, sv, sizeof(sv)), v.would != NULL &&
		    v.would->state == NODE_UP ? (double)v.would->weight / 100.0 :
		    0.0);
	}
	head(&b, "lbagent_marker", "gauge", "1 while a marker of that kind "
	    "(maint, drain, off, shadow) applies to a service, the node's or its own; "
	    "0 when none.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (k = 0; k < MARKER_COUNT; k++)
			put(&b, "lbagent_marker{service=\"%s\",marker=\"%s\"} "
			    "%d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    marker_name((enum marker_kind)k),
			    marker_present(&v, k));
	}
	head(&b, "lbagent_marker_expiry_timestamp_seconds", "gauge", "When "
	    "the marker of that kind that applies to a service ends (its "
	    "until), in seconds since the epoch; only markers with an end.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (k = 0; k < MARKER_COUNT; k++) {
			const struct marker *m = applying(&v, k);

			if (m != NULL && m->has_until)
				put(&b, "lbagent_marker_expiry_timestamp_seconds"
				    "{service=\"%s\",marker=\"%s\"} %.3f\n",
				    svc_label(v.name, sv, sizeof(sv)),
				    marker_name((enum marker_kind)k),
				    (double)m->until_wall_ms / 1000.0);
		}
	}
	head(&b, "lbagent_peer_guard", "gauge", "1 for the peer guard's "
	    "state of a service (off, watching, asking, holding, back_alone, "
	    "latched), 0 for the others.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		guard_view(v.tr, &gv);
		for (k = GUARD_OFF; k <= GUARD_LATCHED; k++)
			put(&b, "lbagent_peer_guard{service=\"%s\",state=\"%s\"} "
			    "%d\n", svc_label(v.name, sv, sizeof(sv)),
			    guard_state_name((enum guard_state)k),
			    (int)gv.state == k);
	}
	head(&b, "lbagent_flap_damping_factor", "gauge", "How many times "
	    "up_after a service waits to come back: 1 without flap damping, "
	    "2, 4, 8, then 10 while it keeps going out within flap_window.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		put(&b, "lbagent_flap_damping_factor{service=\"%s\"} %u\n",
		    svc_label(v.name, sv, sizeof(sv)), transition_damping(v.tr));
	}
	head(&b, "lbagent_other_nodes_serving", "gauge", "1 when the last "
	    "round of the peer guard found another node serving a service, 0 "
	    "when none (absent without peers or before the first round).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		if (v.has_peers && v.peers.round_ms != INT64_MIN)
			put(&b, "lbagent_other_nodes_serving{service=\"%s\"} %d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    v.peers.other_serving);
	}
	if (info.peers != NULL) {
		head(&b, "lbagent_peer_rounds_total", "counter", "Rounds of the "
		    "peer guard begun (every source asked once): at once when a "
		    "decision needs one, and every [peers] interval only while a "
		    "node is about to go out, is out, is held out by a marker, or "
		    "its /status detail was read in the last 10 s.");
		put(&b, "lbagent_peer_rounds_total %llu\n",
		    (unsigned long long)peers_rounds(info.peers));
	}
	if (info.peers != NULL && peers_round_ms(info.peers) != INT64_MIN) {
		head(&b, "lbagent_peer_round_age_seconds", "gauge", "Seconds "
		    "since the last answered round of the peer guard began: what "
		    "the peer and load-balancer figures here are as of.");
		put(&b, "lbagent_peer_round_age_seconds %.3f\n",
		    (double)(clock_now_ms() - peers_round_ms(info.peers)) /
		    1000.0);
	}
	lb_counts(&b, a, &info, "lbagent_lb_sessions", "This node's "
	    "sessions (scur) on each load balancer of [haproxy] sources, per "
	    "service, as of the last round (absent when the load balancer did "
	    "not answer).", true);
	lb_counts(&b, a, &info, "lbagent_lb_queued", "Requests queued for this "
	    "node (qcur) on each load balancer of [haproxy] sources, per "
	    "service, as of the last round (absent when the load balancer did "
	    "not answer).", false);
	/*
	 * Per probe, one series for each service that lists it: every
	 * per-probe family has the same labels, so any of them joins on
	 * service. A probe two services share shows the same values twice.
	 */
	head(&b, "lbagent_probe_status", "gauge", "What a probe counts as: "
	    "0 ok, 1 warn, 2 crit, 3 unknown (when on_unknown counts it).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++)
			put(&b, "lbagent_probe_status{probe=\"%s\","
			    "service=\"%s\"} %d\n",
			    label(scheduler_probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    (int)scheduler_probe_state(v.probes[j])->counted);
	}
	head(&b, "lbagent_probe_duration_seconds", "gauge", "How long the "
	    "probe's latest run took.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = scheduler_probe_state(v.probes[j]);
			if (!st->has_run)
				continue;
			put(&b, "lbagent_probe_duration_seconds{probe=\"%s\","
			    "service=\"%s\"} %.3f\n",
			    label(scheduler_probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    seconds(st->last_duration_ms));
		}
	}
	head(&b, "lbagent_probe_value", "gauge", "The value the probe's "
	    "latest run measured, in base units: seconds for http and tcp "
	    "latency and for a file's age, a ratio 0 to 1 for disk, inodes, "
	    "memory, swap and cpu use, the load per CPU, the number of "
	    "processes, an http probe's JSON field as it is, an exec "
	    "plugin's first performance value in seconds, bytes or a ratio "
	    "for its units s, ms, us, B, KB, MB, GB, TB (1024s), % (absent "
	    "for probes that measure nothing).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_conf *pc;
			const struct probe_state *st;

			pc = scheduler_probe_conf(v.probes[j]);
			st = scheduler_probe_state(v.probes[j]);
			if (!st->has_run || !isfinite(st->last.value))
				continue;
			put(&b, "lbagent_probe_value{probe=\"%s\","
			    "service=\"%s\"} %.15g\n", label(pc->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    st->last.value * value_scale(st->last.unit));
		}
	}
	head(&b, "lbagent_probe_last_result", "gauge", "The probe's latest "
	    "run: 0 ok, 1 warn, 2 crit, 3 unknown (the check could not tell, "
	    "counted as on_unknown says, or lbagent could not run it, never "
	    "counted).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = scheduler_probe_state(v.probes[j]);
			if (!st->has_run)
				continue;
			put(&b, "lbagent_probe_last_result{probe=\"%s\","
			    "service=\"%s\"} %d\n",
			    label(scheduler_probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    (int)st->last.result);
		}
	}
	head(&b, "lbagent_probe_runs_total", "counter", "Probe runs by "
	    "result.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = scheduler_probe_state(v.probes[j]);
			for (r = 0; r < PROBE_RESULT_COUNT; r++)
				put(&b, "lbagent_probe_runs_total{probe=\"%s\","
				    "service=\"%s\",result=\"%s\"} %llu\n",
				    label(scheduler_probe_conf(v.probes[j])->name,
				    pr, sizeof(pr)),
				    svc_label(v.name, sv, sizeof(sv)),
				    probe_result_name((enum probe_result)r),
				    (unsigned long long)st->runs[r]);
		}
	}
	head(&b, "lbagent_probe_latency_seconds", "summary", "A windowed "
	    "probe's run times: quantiles 0.5, 0.95 and 0.99 over the runs in "
	    "its window, by nearest rank (absent while the window is empty); "
	    "_sum and _count over every run since the probe started.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++)
			latency_summary(&b, scheduler_probe_conf(v.probes[j]),
			    scheduler_probe_state(v.probes[j]), v.name);
	}
	head(&b, "lbagent_probe_error_ratio", "gauge", "The share of a "
	    "windowed probe's runs in its window that were not ok, 0 to 1 "
	    "(absent while the window is empty).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = scheduler_probe_state(v.probes[j]);
			if (!st->window.on || st->window.stats.samples == 0)
				continue;
			put(&b, "lbagent_probe_error_ratio{probe=\"%s\","
			    "service=\"%s\"} %.6g\n",
			    label(scheduler_probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    st->window.stats.error_rate / 100.0);
		}
	}
	head(&b, "lbagent_replies_total", "counter", "Agent checks answered.");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		put(&b, "lbagent_replies_total{service=\"%s\"} %llu\n",
		    svc_label(v.name, sv, sizeof(sv)),
		    (unsigned long long)v.replies);
	}
	agent_service_view(a, 0, &v);
	head(&b, "lbagent_unknown_service_checks_total", "counter", "Agent "
	    "checks whose agent-send text named no service, answered as the "
	    "default service (status lists their load balancers).");
	put(&b, "lbagent_unknown_service_checks_total %llu\n",
	    (unsigned long long)lbkeys_unknown_checks(v.keys));
	head(&b, "lbagent_transitions_total", "counter", "Changes of what a "
	    "service tells HAProxy, by the state changed to (off: automation "
	    "switched off or to shadow mode).");
	for (i = 0; i < n; i++) {
		agent_service_view(a, i, &v);
		for (k = 0; k <= NODE_STATE_COUNT; k++)
			put(&b, "lbagent_transitions_total{service=\"%s\",to=\"%s\"} "
			    "%llu\n", svc_label(v.name, sv, sizeof(sv)),
			    k == NODE_STATE_COUNT ? "off" :
			    decision_state_name((enum node_state)k),
			    (unsigned long long)v.transitions[k]);
	}
	/* The state file's saves. */
	agent_persistence(a, &persist);
	head(&b, "lbagent_state_save_failures_total", "counter", "Saves of "
	    "the state file that failed (lbagent goes on answering; a restart "
	    "would forget what the load balancers were told).");
	put(&b, "lbagent_state_save_failures_total %llu\n",
	    (unsigned long long)persist.failures);
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	families_end(&b);
	*lenp = b.len;
	return b.p;
}
