/*
 * What the HTTP API shows: the status document (public part and detail),
 * the Prometheus metrics, the health verdict. Built from the agent's
 * read-only view (view.h) at the moment of the request; no I/O. In
 * status.c (the document), status_peers.c (its peer guard and fleet
 * parts) and status_metrics.c (the metrics).
 */
#ifndef LBAGENT_STATUS_H
#define LBAGENT_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lbagent/daemon/view.h"

/* The clocks of one request: monotonic for ages, wall for timestamps. */
struct status_clock {
	int64_t	now_ms;
	int64_t	wall_ms;
};

/* Extra facts of the daemon for the detail (reload is main's business). */
struct status_daemon {
	uint64_t	 reloads;
	bool		 has_reload;
	int64_t		 reload_wall_ms;
	bool		 reload_ok;
	int64_t		 reload_ok_wall_ms;	/* the last good one; 0: none */
	char		**reload_errors;
	size_t		 nreload_errors;
};

/*
 * GET /status. The public part (node_id, incarnation, and per service
 * state, weight, serving, automation) for anyone; with detail, everything
 * an on-call engineer needs.
 */
json_t	*status_json(const struct agent_view *, const struct status_daemon *,
	    bool detail, const struct status_clock *);

/*
 * GET /health[/SERVICE]: the service's verdict; *serving for the code,
 * *unchecked when it serves with no probe behind it (203).
 */
json_t	*status_health(const struct agent_view *, size_t service, bool *serving,
	    bool *unchecked);

/* GET /metrics: Prometheus text exposition; malloc'd, NULL on ENOMEM. */
char	*status_metrics(const struct agent_view *, const struct status_daemon *,
	    size_t *len);

/* "2026-11-29T10:02:11.123Z" */
void	 status_iso_time(int64_t wall_ms, char buf[32]);

#endif
