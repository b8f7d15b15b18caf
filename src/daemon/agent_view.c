/*
 * The agent's read-only views: a service as status shows it, the node's
 * facts, and struct agent_view (view.h), the narrow interface through
 * which the status documents and the HTTP API read the agent, the peer
 * guard's sources and the probes without knowing them.
 */
#include <string.h>

#include "lbagent/core/name.h"
#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/peers.h"
#include "lbagent/daemon/scheduler.h"
#include "lbagent/daemon/view.h"

#include "agent_impl.h"

bool
agent_peers_watch(struct agent *a, bool fresh)
{
	return peers_watch(a->peers, fresh);
}

void
agent_on_round(struct agent *a, void (*cb)(void *), void *arg)
{
	a->round_cb = cb;
	a->round_arg = arg;
}

uint64_t
agent_generation(const struct agent *a, uint64_t *ticks)
{
	*ticks = a->ticks;
	return a->generation;
}

size_t
agent_nservices(const struct agent *a)
{
	return a->nsvcs;
}

int
agent_find_service(const struct agent *a, const char *name)
{
	size_t	i;

	/* Its name in the metrics, which no [service] may take. */
	if (strcmp(name, NAME_DEFAULT_SERVICE) == 0)
		name = "";
	for (i = 0; i < a->nsvcs; i++)
		if (strcmp(a->svcs[i].s.name, name) == 0)
			return (int)i;
	return -1;
}

/* Which backend service i is judged against, and where that was said. */
static void
backend_view(const struct agent *a, size_t i, struct agent_service_view *v)
{
	const struct service_conf	*sc;

	if (i == 0) {
		v->backend_line = a->cfg->backend_line;
		v->backend = a->cfg->transitions.backend;
	} else {
		sc = &a->cfg->services[i - 1];
		v->backend_line = sc->backend_line;
		v->backend_inherited = sc->backend_inherited;
		v->backend = sc->transitions.backend;
	}
	if (v->backend[0] == '\0')
		v->backend = NULL;
}

void
agent_service_view(const struct agent *a, size_t i,
    struct agent_service_view *v)
{
	const struct svc	*w = &a->svcs[i];
	const struct service	*s = &w->s;

	memset(v, 0, sizeof(*v));
	v->name = s->name;
	v->reply = s->lines[0];
	v->decision = &s->decision;
	v->target = &s->target;
	v->tr = s->tr;
	v->history = &s->history;
	v->since_wall_ms = s->since_wall_ms;
	v->node = &a->node;
	v->own = s->marker_dir != NULL ? &w->own : NULL;
	v->probes = w->probes;
	v->nprobes = w->nprobes;
	v->keys = s->keys;
	v->off_by = s->off ? s->off_by : NULL;
	v->shadow_by = s->shadow ? s->shadow_by : NULL;
	v->would = s->shadow && s->has_would ? &s->would : NULL;
	v->would_reply = v->would != NULL ? s->would_lines[0] : NULL;
	v->would_lines = (const char (*)[REPLY_MAX])s->would_lines;
	v->would_keys = s->would_keys;
	v->held = &s->held;
	v->replies = s->replies;
	v->transitions = s->transitions;
	v->marker_warning = s->marker_warning;
	backend_view(a, i, v);
	v->capacity = &w->cap.v;
	if (a->peers != NULL) {
		peers_view(a->peers, i, &v->peers);
		v->has_peers = true;
	}
}

void
agent_info(const struct agent *a, struct agent_info *info)
{
	info->cfg = a->cfg;
	info->incarnation = a->incarnation;
	info->started_wall_ms = a->started_wall_ms;
	info->has_peers = a->peers != NULL;
}

/* --- struct agent_view: the agent's functions, given its view --- */

static size_t
view_nservices(const struct agent_view *v)
{
	return agent_nservices(v->agent);
}

static int
view_find_service(const struct agent_view *v, const char *name)
{
	return agent_find_service(v->agent, name);
}

static void
view_service(const struct agent_view *v, size_t i,
    struct agent_service_view *sv)
{
	agent_service_view(v->agent, i, sv);
}

static bool
view_names_no_service(const struct agent_view *v, const char *text,
    size_t len)
{
	return agent_names_no_service(v->agent, text, len);
}

static void
view_info(const struct agent_view *v, struct agent_info *info)
{
	agent_info(v->agent, info);
}

static void
view_persistence(const struct agent_view *v, struct agent_persistence *p)
{
	agent_persistence(v->agent, p);
}

static const struct unknown_names *
view_unknown_names(const struct agent_view *v)
{
	return &v->agent->unknown;
}

static uint64_t
view_generation(const struct agent_view *v, uint64_t *ticks)
{
	return agent_generation(v->agent, ticks);
}

static bool
view_peers_watch(const struct agent_view *v, bool fresh)
{
	return agent_peers_watch(v->agent, fresh);
}

static void
view_on_round(const struct agent_view *v, void (*cb)(void *), void *arg)
{
	agent_on_round(v->agent, cb, arg);
}

/* --- the peer guard's sources --- */

static size_t
view_npeers(const struct agent_view *v)
{
	return peers_npeers(v->agent->peers);
}

static const struct peer_source *
view_peer(const struct agent_view *v, size_t j)
{
	return peers_peer(v->agent->peers, j);
}

static const struct peer_verdict *
view_verdict(const struct agent_view *v, size_t i, size_t j)
{
	return peers_verdict(v->agent->peers, i, j);
}

static size_t
view_nlbs(const struct agent_view *v)
{
	return peers_nlbs(v->agent->peers);
}

static const struct lb_source *
view_lb(const struct agent_view *v, size_t k)
{
	return peers_lb(v->agent->peers, k);
}

static int64_t
view_round_ms(const struct agent_view *v)
{
	return peers_round_ms(v->agent->peers);
}

static int64_t
view_whole_ms(const struct agent_view *v)
{
	return peers_whole_ms(v->agent->peers);
}

static uint64_t
view_rounds(const struct agent_view *v)
{
	return peers_rounds(v->agent->peers);
}

static bool
view_needed(const struct agent_view *v)
{
	return peers_needed(v->agent->peers);
}

void
agent_view(struct agent *a, struct agent_view *v)
{
	memset(v, 0, sizeof(*v));
	v->agent = a;
	v->nservices = view_nservices;
	v->find_service = view_find_service;
	v->service = view_service;
	v->names_no_service = view_names_no_service;
	v->unknown_names = view_unknown_names;
	v->probe_conf = scheduler_probe_conf;
	v->probe_state = scheduler_probe_state;
	v->info = view_info;
	v->persistence = view_persistence;
	v->generation = view_generation;
	v->peers_watch = view_peers_watch;
	v->on_round = view_on_round;
	v->npeers = view_npeers;
	v->peer = view_peer;
	v->verdict = view_verdict;
	v->nlbs = view_nlbs;
	v->lb = view_lb;
	v->round_ms = view_round_ms;
	v->whole_ms = view_whole_ms;
	v->rounds = view_rounds;
	v->needed = view_needed;
}
