/*
 * The status module's own parts, shared by its files: status.c (the
 * document, and the helpers below), status_peers.c (the detail's peer
 * guard and fleet parts) and status_metrics.c (the metrics).
 */
#ifndef LBAGENT_STATUS_IMPL_H
#define LBAGENT_STATUS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lbagent/daemon/status.h"
#include "lbagent/daemon/view.h"

/* status.c */
double	 status_seconds(int64_t ms);
/* A monotonic time on the wall clock, as ISO 8601. */
json_t	*status_iso_of(int64_t ms, const struct status_clock *);
/*
 * What the service tells HAProxy, as state and weight (with automation
 * off or in shadow mode: what HAProxy was last told and still holds).
 */
void	 status_effective(const struct agent_service_view *,
	    struct decision *);

/* status_peers.c */
/* The peer guard of service i: its state and the round it rests on. */
json_t	*status_guard_json(const struct agent_view *, size_t i,
	    const struct agent_service_view *, const struct status_clock *);
/* Every configured peer: who answered, whether it serves, and why not. */
json_t	*status_peers_json(const struct agent_view *,
	    const struct status_clock *);
/* The peers' rounds: how old the last one is, and the liveness bounds. */
json_t	*status_peer_rounds_json(const struct agent_view *,
	    const struct status_clock *);
/* How each load balancer sees this node, service by service. */
json_t	*status_haproxy_json(const struct agent_view *,
	    const struct status_clock *);

/* status_capacity.c */
/* What peers count: {"estimate", "age_ms"} while published, else null. */
json_t	*status_capacity_public(const struct agent_service_view *,
	    const struct status_clock *);
/* The detail's capacity_weight and maxconn (null when off). */
void	 status_capacity_detail(json_t *, const struct agent_service_view *,
	    const struct status_clock *);
/* Their metrics families, as text (NULL: out of memory). */
char	*status_capacity_metrics(const struct agent_view *);

#endif
