/* [service NAME]'s keys, and one service section interpreted. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_impl.h"

#define COFF(f)	offsetof(struct service_conf, capacity.f)

/* Keys of a [service NAME]. */
const struct config_key config_service_keys[] = {
	{ "service", "probes", KEY_NAMES, NULL, 0, 0, 0,
	  "The probes whose results decide this service, comma-separated." },
	{ "service", "listen", KEY_LISTEN, NULL, 0, 0,
	  offsetof(struct service_conf, listen),
	  "Optional ports of this service alone (HAProxy connects there and "
	  "needs no agent-send); without it, agent-send \"NAME\\n\" on the "
	  "shared port selects the service." },
	{ "service", "weight_from", KEY_NAME, "health", 0, 0, COFF(weight_from),
	  "health: the weight says how healthy the service is (100%, a "
	  "warn's 50%); capacity: that times the node's share of the fleet's "
	  "capacity (docs/capacity.md)." },
	{ "service", "capacity_rate", KEY_NAME, NULL, 0, 0, COFF(rate),
	  "With weight_from = capacity: haproxy (the growth of this server's "
	  "stot in [haproxy]'s sources), or the name of a probe whose value "
	  "is the rate served, req/s." },
	{ "service", "capacity_utilization", KEY_NAME, NULL, 0, 0,
	  COFF(utilization),
	  "With weight_from = capacity: the name of a probe whose value is "
	  "the utilization (a cpu probe's %, or an http probe's json_field, "
	  "a fraction from 0 to 1)." },
	{ "service", "capacity_reference", KEY_UINT, NULL, 1, 1000000000,
	  COFF(reference),
	  "The req/s at full utilization that count as 100% when no peer's "
	  "estimate is at hand; needed without [peers] agents." },
	{ "service", "capacity_min_rate", KEY_UINT, "1", 0, 1000000000,
	  COFF(min_rate),
	  "Under this many req/s the node is idle: its estimate is kept, not "
	  "updated." },
	{ "service", "capacity_blackout", KEY_DURATION, "10s", 0, 365 * DAY_MS,
	  COFF(blackout_ms),
	  "No sample this long after a start, a reload changing the capacity "
	  "keys, or the application's restart (its counter went back)." },
	{ "service", "capacity_expiry", KEY_DURATION, "30s", 1000,
	  365 * DAY_MS, COFF(expiry_ms),
	  "No sample this long: the weight falls back to the health weight "
	  "and the estimate is not published." },
	{ "service", "capacity_half_life", KEY_DURATION, "5s", 0, DAY_MS,
	  COFF(half_life_ms),
	  "The damping of the estimate (0: none); the factor also steps "
	  "at most once this long." },
	{ "service", "capacity_floor", KEY_PERCENT, "25%", 1, 100,
	  COFF(floor_pct),
	  "The least factor capacity alone gives the weight." },
	{ "service", "capacity_cap", KEY_PERCENT, "200%", 100, 256,
	  COFF(cap_pct),
	  "The greatest factor (HAProxy caps an effective weight at 256)." },
	{ "service", "maxconn", KEY_NAME, "off", 0, 0, COFF(maxconn),
	  "adaptive: replies carry maxconn:N, a concurrency limit from the "
	  "latency of the node's requests, shared by the load balancers that "
	  "ask; off: none." },
	{ "service", "maxconn_latency", KEY_NAME, NULL, 0, 0, COFF(latency),
	  "With maxconn = adaptive: haproxy (this server's rtime and scur in "
	  "[haproxy]'s sources), or the name of a probe whose value is the "
	  "latency, ms." },
	{ "service", "maxconn_min", KEY_UINT, "4", 1, 100000,
	  COFF(maxconn_min),
	  "The least limit the node's latency alone can give." },
	{ "service", "maxconn_max", KEY_UINT, "1000", 1, 100000,
	  COFF(maxconn_max),
	  "The greatest limit." },
};
const size_t config_service_nkeys = NKEYS_OF(config_service_keys);

/*
 * Which backend the service is judged against (the peer guard, drain
 * --wait) and where that was said: a service that names none takes
 * [haproxy]'s, which is right only when it is that backend's; say so.
 */
static void
backend_from(struct parse *p, size_t section, struct service_conf *svc)
{
	const struct section	*sec = &p->sections[section];
	const struct entry	*e;

	if (svc->transitions.backend[0] == '\0')
		return;
	if ((e = config_find_entry(p, section, "backend")) != NULL) {
		svc->backend_line = e->line;
		return;
	}
	svc->backend_inherited = true;
	svc->backend_line = p->cfg->backend_line;
	config_warning(p->errs, p->path, sec->line, "[service %s]: judged "
	    "against backend %s, inherited from [haproxy] backend (line %u): "
	    "name its own (backend = ...), or backend = %s to keep it",
	    sec->name, svc->transitions.backend, p->cfg->backend_line,
	    svc->transitions.backend);
}

void
config_build_service(struct parse *p, size_t section, struct service_conf *svc)
{
	const struct section	*sec = &p->sections[section];

	char			 where[NAME_MAX_LEN + 16];

	svc->line = sec->line;
	if ((svc->name = strdup(sec->name)) == NULL)
		return;
	svc->transitions = p->cfg->transitions;
	config_table_apply(p, section, config_service_keys,
	    config_service_nkeys, svc, config_transition_key,
	    &svc->transitions);
	snprintf(where, sizeof(where), "[service %s]: ", sec->name);
	config_check_transitions(p, section, &svc->transitions, where);
	config_check_guard(p, section, &svc->transitions, where);
	backend_from(p, section, svc);
	if (config_find_entry(p, section, "probes") == NULL)
		config_error(p->errs, p->path, sec->line,
		    "[service %s]: no probes (probes = name, name, ...)",
		    sec->name);
}
