/*
 * lbagentctl fleet: every configured peer and this node in one table,
 * from the local lbagent's detailed /status (its peers' rounds).
 */
#ifndef LBAGENT_CTL_FLEET_H
#define LBAGENT_CTL_FLEET_H

#include <stdio.h>

#include <jansson.h>

/*
 * The fleet of a detailed status document for service (NULL or "": the
 * default one): {"node_id", "service", "last_round_s", "interval_ms",
 * "suspect_after", "dead_after", "rows": [...]}, one row per configured
 * peer, this node first (added when the peer list does not name it).
 * NULL when out of memory.
 */
json_t	*ctl_fleet_json(const json_t *status, const char *service);

/* That fleet as a table of width columns at most. */
void	 ctl_fleet_format(FILE *, const json_t *fleet, int width);

#endif
