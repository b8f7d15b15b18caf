/*
 * The peer guard's keys: [peers] (the other nodes, the guard's timings,
 * which any [service NAME] may override) and [haproxy] (the load
 * balancers' stats, this node's backend and server on them), with the
 * deprecated [peers] spelling of the latter.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "lbagent/daemon/fetch.h"
#include "config_impl.h"

/* [peers]: whom the peer guard asks. */
const struct config_key config_peers_keys[] = {
	{ "peers", "agents", KEY_AGENTS, NULL, 0, 0, OFF(peers.agents),
	  "The other nodes' lbagent HTTP APIs, comma-separated base URLs "
	  "(http://10.0.0.12:9506); their public /status says whether they "
	  "serve. The same list may be used on every node: a node skips "
	  "the answer that carries its own node_id. Each node once: the "
	  "same address twice, credentials aside, is an error. A line holds "
	  "198 characters: give agents again on more lines, each adds to "
	  "the list (64 at most)." },
	{ "peers", "interval", KEY_DURATION, "1s", 100, 60 * 1000,
	  OFF(peers.interval_ms),
	  "How often the peers and load balancers are asked while a "
	  "decision waits on them: a node about to go out (the guard asks, "
	  "or holds it in) or within just_out of going out. A detail read "
	  "asked fresh (lbagentctl's, drain --wait's) gets a round begun "
	  "within this long. Each round "
	  "comes up to 20% sooner, at random, so that a fleet does not ask "
	  "in lockstep. A decision that needs a fresh answer asks at once; "
	  "a node in and healthy asks nobody." },
	{ "peers", "steady_interval", KEY_DURATION, "10s", 100, 3600 * 1000,
	  OFF(peers.steady_interval_ms),
	  "How often they are asked while rounds are wanted but no decision "
	  "waits: a node out by the rules (past just_out), held out by a "
	  "marker, back alone, or its /status detail read in the last 10 s. "
	  "Longer costs the load balancers less and shows their view later "
	  "(coming back alone may wait this long past alone_grace). Held out "
	  "by a marker or only watched, a Runtime API source is asked for "
	  "this node's own row alone, an answer that does not grow with the "
	  "backend; out or back alone, for every server of it. At least "
	  "interval; not set: 10s, or interval when that is longer." },
	{ "peers", "suspect_after", KEY_UINT, "3", 1, 100000,
	  OFF(peers.suspect_after),
	  "A peer without a good answer for this many rounds in a row is "
	  "suspect (the fleet view and the /status detail; information "
	  "only, the guard decides as before)." },
	{ "peers", "dead_after", KEY_UINT, "10", 1, 100000,
	  OFF(peers.dead_after),
	  "A peer without a good answer for this many rounds in a row is "
	  "dead; more than suspect_after. Information only." },
};
const size_t config_peers_nkeys = NKEYS_OF(config_peers_keys);

/*
 * The peer guard's settings: in [peers], and any [service NAME] may
 * override them for that service.
 */
/* [haproxy]: the load balancers' stats, for the guard and the status. */
const struct config_key config_haproxy_keys[] = {
	{ "haproxy", "sources", KEY_SOURCES, NULL, 0, 0, OFF(peers.haproxy),
	  "One per load balancer: HAProxy's stats as CSV over HTTP "
	  "(http://lb1:8404/stats;csv) or its Runtime API (unix:/PATH or "
	  "tcp:ADDR:PORT, command 'show stat'), asked in the guard's rounds "
	  "(one query per load balancer, whatever the fleet). What each "
	  "shows for this node's server (status, weight, sessions, queue) "
	  "is in the /status detail, and lbagentctl drain on --wait waits "
	  "on it. The peer guard reads it: without [peers] agents, another "
	  "node serves when another server of the backend is UP with a "
	  "weight above 0 on every load balancer that answered (at least "
	  "one); with agents, a peer serves only if it says so and every "
	  "load balancer that answered shows its server UP with a weight "
	  "above 0. Needs backend. Each load balancer once: the same "
	  "address twice, credentials aside, is an error. May be given "
	  "again on more lines, each adding to the list." },
};
const size_t config_haproxy_nkeys = NKEYS_OF(config_haproxy_keys);

/*
 * This node's server on the load balancers: in [haproxy], and any
 * [service NAME] may override them for that service.
 */
const struct config_key config_lb_keys[] = {
	{ "haproxy", "backend", KEY_NAME_BUF, NULL, 0, 0, TOFF(backend),
	  "The backend on the load balancers that this node's server (and "
	  "its peers') are in; required with sources." },
	{ "haproxy", "server", KEY_NAME_BUF, NULL, 0, 0, TOFF(server),
	  "This node's server name in that backend; node_id when not set. "
	  "Shown in the public /status, where peers look it up." },
};
const size_t config_lb_nkeys = NKEYS_OF(config_lb_keys);

const struct config_key config_guard_keys[] = {
	{ "peers", "timeout", KEY_DURATION, "2s", 10, 60 * 1000,
	  TOFF(peer_timeout_ms),
	  "A peer or load balancer that has not answered within this long "
	  "counts as not serving." },
	{ "peers", "alone_grace", KEY_DURATION, "30s", 0, DAY_MS,
	  TOFF(alone_grace_ms),
	  "Out by the rules: come back, although failing, when no other node "
	  "has served for this long." },
	{ "peers", "recheck_after", KEY_DURATION, "1.5s", 0, HOUR_MS,
	  TOFF(recheck_after_ms),
	  "After going out, ask the peers again this soon ..." },
	{ "peers", "just_out", KEY_DURATION, "10s", 0, HOUR_MS,
	  TOFF(just_out_ms),
	  "... and at every evaluation within this long of going out: if no "
	  "other node serves, come back at once and stay in (no automated "
	  "going out) until lbagent restarts." },
};
const size_t config_guard_nkeys = NKEYS_OF(config_guard_keys);

/* The section [haproxy] is, or SIZE_MAX. */
static size_t
haproxy_section(const struct parse *p)
{
	size_t	i;

	for (i = 0; i < p->nsections; i++)
		if (p->sections[i].kind == SEC_HAPROXY && !p->sections[i].bad)
			return i;
	return SIZE_MAX;
}

/*
 * A key of config_guard_keys in [peers]; arg: the [agent]'s transitions.
 * Before [haproxy], the load balancers were [peers] haproxy, backend and
 * server: still read, with a warning saying where they go now.
 */
static bool
guard_key(struct parse *p, struct entry *e, void *arg)
{
	const char	*now = strcmp(e->key, "haproxy") == 0 ? "sources" :
			    e->key;
	size_t		 hx;

	if (config_table_key(p, e, config_guard_keys, config_guard_nkeys, arg))
		return true;
	if (strcmp(e->key, "haproxy") != 0 && config_find_key(config_lb_keys,
	    config_lb_nkeys, e->key) == NULL)
		return false;
	hx = haproxy_section(p);
	if (hx != SIZE_MAX && config_first_line(p, hx, now, NULL) != 0) {
		config_error(p->errs, p->path, e->line, "%s: given in "
		    "[haproxy] as %s too (line %u); keep that one", e->key, now,
		    config_first_line(p, hx, now, NULL));
		return true;
	}
	config_warning(p->errs, p->path, e->line, "[peers] %s is deprecated: "
	    "write it as %s in [haproxy]", e->key, now);
	if (strcmp(e->key, "haproxy") == 0)
		return config_entry_key(p, e,
		    config_find_key(config_haproxy_keys, config_haproxy_nkeys,
		    "sources"), p->cfg);
	return config_table_key(p, e, config_lb_keys, config_lb_nkeys, arg);
}

/* A key of config_lb_keys in [haproxy]; arg: the [agent]'s transitions. */
static bool
lb_key(struct parse *p, struct entry *e, void *arg)
{
	return config_table_key(p, e, config_lb_keys, config_lb_nkeys, arg);
}

/*
 * The URL the peer guard reads of one of [peers] agents: its base URL with
 * /status appended. 0, or -1 when it does not fit in size.
 */
int
config_agent_status_url(const char *base, char *buf, size_t size)
{
	size_t	len = strlen(base);
	int	n;

	n = snprintf(buf, size, "%s%s", base, len > 0 && base[len - 1] == '/' ?
	    "status" : "/status");
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/*
 * What the guard is handed: each agent's /status URL as it reads it (NULL
 * when it does not fit a fetch's URL: the guard then refuses the
 * configuration, as it did when it made the URL itself), and whether it
 * runs at all.
 */
static void
resolve_peers(struct parse *p)
{
	struct config_peers	*pc = &p->cfg->peers;
	char			 url[sizeof(((struct fetch_source *)0)->url)];
	size_t			 i;

	pc->on = pc->agents.count > 0 || pc->haproxy.count > 0;
	if (pc->agents.count == 0)
		return;
	if ((pc->agent_status.items = calloc(pc->agents.count,
	    sizeof(*pc->agent_status.items))) == NULL) {
		config_error(p->errs, p->path, 0, "out of memory");
		return;
	}
	pc->agent_status.count = pc->agents.count;
	for (i = 0; i < pc->agents.count; i++) {
		if (config_agent_status_url(pc->agents.items[i], url,
		    sizeof(url)) == -1)
			continue;
		if ((pc->agent_status.items[i] = strdup(url)) == NULL)
			config_error(p->errs, p->path, 0, "out of memory");
	}
}

/*
 * The steady pace is never the faster one: not set, it is at least
 * interval; set shorter, an error.
 */
static void
check_steady(struct parse *p, size_t peers)
{
	struct config_peers	*pc = &p->cfg->peers;
	const struct entry	*e;
	char			 t1[32], t2[32];

	if (pc->steady_interval_ms >= pc->interval_ms)
		return;
	if ((e = config_find_entry(p, peers, "steady_interval")) == NULL) {
		pc->steady_interval_ms = pc->interval_ms;
		return;
	}
	units_format_ms(pc->steady_interval_ms, t1, sizeof(t1));
	units_format_ms(pc->interval_ms, t2, sizeof(t2));
	config_error(p->errs, p->path, e->line, "[peers] steady_interval %s must be at least interval %s", t1, t2);
}

/*
 * [peers] (before the services, which start from its guard settings),
 * then [haproxy], which checks [peers]' deprecated haproxy keys.
 */
void
config_build_peers(struct parse *p, size_t peers, size_t hx)
{
	struct config	*cfg = p->cfg;

	config_table_apply(p, peers, config_peers_keys, config_peers_nkeys,
	    cfg, guard_key, &cfg->transitions);
	config_table_defaults(p, config_guard_keys, config_guard_nkeys,
	    &cfg->transitions, peers);
	config_table_apply(p, hx, config_haproxy_keys, config_haproxy_nkeys,
	    cfg, lb_key, &cfg->transitions);
	config_backend_line(p, peers, hx);
	check_steady(p, peers);
	resolve_peers(p);
}

/* Where the backend every [service] starts from is set, for its status. */
void
config_backend_line(struct parse *p, size_t peers, size_t hx)
{
	const struct entry	*e;

	if ((e = config_find_entry(p, hx, "backend")) == NULL)
		e = config_find_entry(p, peers, "backend");
	p->cfg->backend_line = e != NULL ? e->line : 0;
}
