/*
 * The status document and the health verdict: the public part and the
 * detail of each service, the node's facts, the state file's saves. The
 * detail's peer guard and fleet parts are status_peers.c's; the metrics
 * are status_metrics.c's. No I/O.
 */
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
#include "lbagent/core/unknown_names.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/markers.h"
#include "lbagent/daemon/status.h"

#include "status_impl.h"

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
json_t *
status_iso_of(int64_t ms, const struct status_clock *c)
{
	char	buf[32];

	status_iso_time(c->wall_ms - (c->now_ms - ms), buf);
	return json_string(buf);
}

/* A wall-clock time (ms) as ISO 8601. */
static json_t *
status_iso_of_wall(int64_t wall_ms)
{
	char	buf[32];

	status_iso_time(wall_ms, buf);
	return json_string(buf);
}

double
status_seconds(int64_t ms)
{
	return (double)ms / 1000.0;
}

/*
 * What the service tells HAProxy, as state and weight. With automation
 * off or in shadow mode and no marker, it is what HAProxy was last told
 * by automation and still holds (in shadow mode the engine moves on, and
 * what it would say is the would-be decision).
 */
void
status_effective(const struct agent_service_view *v, struct decision *d)
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
	    "since", any ? status_iso_of(w->stats.oldest_ms, c) : json_null(),
	    "judging", w->judging,
	    "result", probe_result_name(w->result),
	    "reason", w->reason);
}

static json_t *
probes_json(const struct agent_view *ag, const struct agent_service_view *v,
    const struct status_clock *c)
{
	json_t	*a = json_array(), *last;
	size_t	 i;

	for (i = 0; a != NULL && i < v->nprobes; i++) {
		const struct probe_conf	 *pc;
		const struct probe_state *st;

		pc = ag->probe_conf(v->probes[i]);
		st = ag->probe_state(v->probes[i]);

		last = json_null();
		if (st->has_run)
			last = json_pack("{s:s, s:s, s:o, s:s, s:o, s:f, s:I}",
			    "result", probe_result_name(st->last.result),
			    "reason", st->last.reason,
			    "value", isfinite(st->last.value) ?
			    json_real(st->last.value) : json_null(),
			    "unit", st->last.unit,
			    "at", status_iso_of(st->last_run_ms, c),
			    "ago_s", status_seconds(c->now_ms - st->last_run_ms),
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
lb_warning_json(const struct agent_view *ag, size_t i, const struct lbkey *k,
    const char *text)
{
	if (i != 0 || !ag->names_no_service(ag, k->text, k->textlen))
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
lbs_json(const struct agent_view *ag, size_t si, const struct agent_service_view *v,
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
		    "last_seen_s", status_seconds(c->now_ms - k->last_seen_ms), "checks",
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
		    json_null() : json_real(status_seconds(p.for_ms)), "after_s",
		    status_seconds(p.after_ms), "text", text);
	}
	if (transition_ramp(t, &ramp_ms) && transition_at(t) >= 1)
		ramp = json_pack("{s:i, s:i, s:f, s:f}", "weight", (int)d.weight,
		    "to", transition_at(t), "started_s", status_seconds(c->now_ms -
		    ramp_ms), "ends_in_s", status_seconds((int64_t)tc->ramp_ms -
		    (c->now_ms - ramp_ms)));
	for (i = 0; i < transition_nouts(t); i++)
		if (c->now_ms - transition_out_ms(t, i) <
		    (int64_t)tc->flap_window_ms)
			outs++;
	return json_pack("{s:s, s:i, s:o, s:f, s:o, s:o, s:{s:i, s:I, s:f}}",
	    "state", decision_state_name(d.state), "weight",
	    d.state == NODE_UP ? (int)d.weight : 0, "since",
	    status_iso_of(transition_since_ms(t), c), "since_s", status_seconds(c->now_ms -
	    transition_since_ms(t)), "pending", pending, "ramp", ramp,
	    "damping", "factor", (int)transition_damping(t),
	    "outs_in_window", (json_int_t)outs, "up_after_s",
	    status_seconds((int64_t)transition_up_after_ms(t)));
}

/*
 * The backend the service is judged against on the load balancers (the
 * peer guard, drain --wait) and where that is said: {"name", "from":
 * "haproxy" or "service", "line": of that key (0: none), "inherited": a
 * [service] that names none and takes [haproxy]'s}, or null.
 */
static json_t *
backend_json(const struct agent_service_view *v)
{
	if (v->backend == NULL)
		return json_null();
	return json_pack("{s:s, s:s, s:I, s:b}", "name", v->backend, "from",
	    v->name[0] == '\0' || v->backend_inherited ? "haproxy" : "service",
	    "line", (json_int_t)v->backend_line, "inherited",
	    v->backend_inherited);
}

static json_t *
service_json(const struct agent_view *a, size_t i, bool detail,
    const struct status_clock *c)
{
	struct agent_service_view	 v;
	struct agent_info		 info;
	struct decision			 d;
	json_t				*o;

	a->service(a, i, &v);
	status_effective(&v, &d);
	a->info(a, &info);
	/* capacity: the estimate peers read, while it is published. */
	o = json_pack("{s:s, s:s, s:i, s:b, s:b, s:s, s:s, s:o}", "name", v.name,
	    "state", decision_state_name(d.state), "weight", d.state == NODE_UP ?
	    (int)d.weight : 0, "serving", serving(&d), "no_probes",
	    v.nprobes == 0, "automation",
	    mode_name(&v), "server",
	    config_server(info.cfg, transition_conf(v.tr)), "capacity",
	    status_capacity_public(&v, c));
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
	json_object_set_new(o, "since", v.since_wall_ms > 0 ?
	    status_iso_of_wall(v.since_wall_ms) : json_null());
	json_object_set_new(o, "automation_off_by",
	    v.off_by ? json_string(v.off_by) : json_null());
	json_object_set_new(o, "shadow_by",
	    v.shadow_by ? json_string(v.shadow_by) : json_null());
	json_object_set_new(o, "shadow_reason", v.would != NULL ?
	    json_string(v.would->reason) : json_null());
	json_object_set_new(o, "target", decision_json(v.target));
	json_object_set_new(o, "transition", engine_json(v.tr, c));
	json_object_set_new(o, "markers", markers_json(&v));
	json_object_set_new(o, "probes", probes_json(a, &v, c));
	json_object_set_new(o, "load_balancers", lbs_json(a, i, &v,
	    info.cfg->reply_reasons, c));
	json_object_set_new(o, "peer_guard", status_guard_json(a, i, &v, c));
	json_object_set_new(o, "backend", backend_json(&v));
	status_capacity_detail(o, &v, c);
	json_object_set_new(o, "history", history_json(v.history));
	return o;
}

/* The agent-send names no service has: the most recent kept. */
static json_t *
unknown_names_json(const struct agent_view *a)
{
	const struct unknown_names	*u = a->unknown_names(a);
	const struct unknown_name	*n;
	json_t				*arr;
	char				 first[32], last[32];
	size_t				 i;

	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; i < u->count; i++) {
		n = &u->v[i];
		status_iso_time(n->first_wall_ms, first);
		status_iso_time(n->last_wall_ms, last);
		json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:s, "
		    "s:s, s:b}", "name", n->name, "from", n->from, "checks",
		    (json_int_t)n->checks, "first_at", first, "last_at", last,
		    "recent", n->recent));
	}
	return arr;
}

/*
 * Whether the state file is saved: {"ok": true, ...}, or failing since
 * when and why. Replies go on either way.
 */
static json_t *
persistence_json(const struct agent_view *a)
{
	struct agent_persistence	p;
	char				at[32];

	a->persistence(a, &p);
	if (!p.failing)
		return json_pack("{s:b, s:n, s:n, s:I}", "ok", 1,
		    "failing_since", "reason", "save_failures",
		    (json_int_t)p.failures);
	status_iso_time(p.since_wall_ms, at);
	return json_pack("{s:b, s:s, s:s, s:I}", "ok", 0, "failing_since", at,
	    "reason", p.reason, "save_failures", (json_int_t)p.failures);
}

json_t *
status_json(const struct agent_view *a, const struct status_daemon *dm,
    bool detail, const struct status_clock *c)
{
	struct agent_info	 info;
	json_t			*root, *svcs, *first, *errs, *last;
	char			 at[32];
	size_t			 i;

	a->info(a, &info);
	if ((svcs = json_array()) == NULL)
		return NULL;
	for (i = 0; i < a->nservices(a); i++)
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
		json_object_set_new(root, "unknown_names",
		    unknown_names_json(a));
		json_object_set_new(root, "unknown_names_dropped", json_integer(
		    (json_int_t)a->unknown_names(a)->dropped));
		json_object_set_new(root, "peers", status_peers_json(a, c));
		json_object_set_new(root, "peer_rounds", status_peer_rounds_json(a, c));
		json_object_set_new(root, "haproxy", status_haproxy_json(a, c));
		json_object_set_new(root, "persistence", persistence_json(a));
	}
	json_object_set_new(root, "services", svcs);
	return root;
}

json_t *
status_health(const struct agent_view *a, size_t i, bool *ok,
    bool *unchecked)
{
	struct agent_service_view	v;
	struct agent_persistence	p;
	struct decision			d;
	json_t				*o;

	a->service(a, i, &v);
	status_effective(&v, &d);
	*ok = serving(&d);
	o = json_pack("{s:s, s:s, s:i, s:b, s:b}", "service", v.name, "state",
	    decision_state_name(d.state), "weight", d.state == NODE_UP ?
	    (int)d.weight : 0, "serving", *ok, "no_probes", v.nprobes == 0);
	*unchecked = *ok && v.nprobes == 0;
	/* A state file that cannot be saved is said, not judged: the code
	 * stays serving's. */
	a->persistence(a, &p);
	if (o != NULL && p.failing)
		json_object_set_new(o, "persistence", persistence_json(a));
	return o;
}
