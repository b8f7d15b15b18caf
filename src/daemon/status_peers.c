/*
 * The status detail's peer guard and fleet parts: each service's guard,
 * every peer as it answered, the peers' rounds, and how each load
 * balancer sees this node. Read through the agent's view; no I/O.
 */
#include <stdint.h>
#include <string.h>

#include "lbagent/core/guard.h"
#include "lbagent/core/peer_view.h"
#include "lbagent/core/transition.h"
#include "lbagent/daemon/status.h"

#include "status_impl.h"

/* An age in seconds, or null for a time that never was. */
static json_t *
age_json(int64_t ms, const struct status_clock *c)
{
	return ms == INT64_MIN ? json_null() : json_real(status_seconds(c->now_ms - ms));
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
json_t *
status_guard_json(const struct agent_view *a, size_t i,
    const struct agent_service_view *v, const struct status_clock *c)
{
	const struct peer_view	*pv = &v->peers;
	struct guard_view	 gv;
	json_t			*o, *peers;
	bool			 asked;
	size_t			 j;

	if (!v->has_peers)
		return json_pack("{s:s}", "state", "off");
	asked = pv->round_ms != INT64_MIN;
	if ((peers = json_array()) != NULL)
		for (j = 0; j < a->npeers(a); j++) {
			const struct peer_verdict *pd = a->verdict(a, i, j);

			if (pd->self)
				continue;
			json_array_append_new(peers, json_pack("{s:o, s:b, s:o}",
			    "node_id", text_or_null(pd->node_id), "serving",
			    pd->serving, "why_not", why_not_json(pd)));
		}
	guard_view(v->tr, &gv);
	o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "state", guard_state_name(gv.state), "since",
	    status_iso_of(gv.since_ms, c), "reason",
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
		    a->npeers(a) == 0 ? "load_balancers" :
		    a->nlbs(a) == 0 ? "peers" :
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
peer_lbs_json(const struct agent_view *a, const struct peer_source *p,
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
	for (k = 0; k < a->nlbs(a); k++) {
		const struct lb_source *lb = a->lb(a, k);

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
json_t *
status_peers_json(const struct agent_view *a, const struct status_clock *c)
{
	struct agent_info	 info;
	json_t			*arr = json_array(), *svcs;
	size_t			 i, j;

	a->info(a, &info);
	if (!info.has_peers || arr == NULL)
		return arr;
	for (j = 0; j < a->npeers(a); j++) {
		const struct peer_source *p = a->peer(a, j);
		const struct peer_verdict *d0 = a->verdict(a, 0, j);
		const struct peer_liveness *l = &p->live;
		const char *id = peer_view_peer_node_id(p);
		json_t *o;

		if ((svcs = json_array()) != NULL)
			for (i = 0; i < a->nservices(a); i++) {
				const struct peer_verdict *d =
				    a->verdict(a, i, j);
				struct agent_service_view v;
				const struct peer_service *s;

				a->service(a, i, &v);
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
				    "load_balancers", peer_lbs_json(a, p, s,
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

/*
 * The peers' rounds: how old the last one is (of the own rows or whole)
 * and the last whole one (what the other nodes and servers are shown
 * from), and the liveness bounds.
 */
json_t *
status_peer_rounds_json(const struct agent_view *a, const struct status_clock *c)
{
	struct agent_info	info;

	a->info(a, &info);
	if (!info.has_peers)
		return json_null();
	return json_pack("{s:o, s:o, s:I, s:I, s:b, s:I, s:I}", "last_round_s",
	    age_json(a->round_ms(a), c), "last_whole_round_s",
	    age_json(a->whole_ms(a), c), "interval_ms",
	    (json_int_t)info.cfg->peers.interval_ms, "rounds",
	    (json_int_t)a->rounds(a), "needed",
	    a->needed(a), "suspect_after",
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
json_t *
status_haproxy_json(const struct agent_view *a, const struct status_clock *c)
{
	struct agent_info	 info;
	json_t			*arr = json_array(), *mine, *warns;
	struct lb_view		 lv;
	size_t			 i, j, k;

	a->info(a, &info);
	if (!info.has_peers || arr == NULL)
		return arr;
	for (j = 0; j < a->nlbs(a); j++) {
		const struct lb_source *lb = a->lb(a, j);

		if ((mine = json_array()) != NULL)
			for (i = 0; i < a->nservices(a); i++) {
				struct agent_service_view v;
				const struct transition_conf *tc;
				const char *server;

				a->service(a, i, &v);
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
