/*
 * What the status documents and the HTTP API see of the agent: a narrow,
 * read-only view the agent fills (agent_view.c), so that they show the
 * services, the node and the peer guard's sources without knowing the
 * agent, the peers or the scheduler. Every function takes the view it
 * came in; the agent behind it outlives the view.
 *
 * Services are numbered as in the agent: 0 is the default service, i + 1
 * is cfg->services[i].
 */
#ifndef LBAGENT_VIEW_H
#define LBAGENT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/capacity.h"
#include "lbagent/core/conclimit.h"
#include "lbagent/core/peer_view.h"
#include "lbagent/core/reply.h"
#include "lbagent/core/transition.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/probe_state.h"
#include "lbagent/probes/probe.h"

struct agent;
struct history;
struct lbkeys;
struct markers;
struct probe;
struct unknown_names;

/*
 * A service's capacity weight and adaptive maxconn as of its last
 * evaluation (agent_capacity.c; docs/capacity.md): its inputs, the
 * model's view and the limit.
 */
struct agent_capacity_view {
	bool			 on;		/* weight_from = capacity */
	bool			 adaptive;	/* maxconn = adaptive */
	struct capacity_view	 view;		/* when on */
	int64_t			 view_ms;	/* when it was taken */
	/* The latest inputs (NAN: none), and when they came. */
	double			 rate, util, latency_ms, inflight;
	int64_t			 input_ms;	/* INT64_MIN: none yet */
	const struct conclimit	*limit;		/* when adaptive */
	int			 maxconn;	/* each load balancer's; 0: none */
	int			 nlbs;		/* the load balancers asking */
	char			 limit_reason[CONCLIMIT_REASON_MAX];
};

struct agent_service_view {
	const char		*name;		/* "" for the default service */
	const char		*reply;		/* the line, with its newline */
	const struct decision	*decision;	/* what the reply says */
	const struct decision	*target;	/* what the rules say */
	const struct transition	*tr;
	const struct history	*history;
	int64_t			 since_wall_ms;	/* the reply's kind, since */
	const struct markers	*node, *own;	/* own: NULL for the default */
	struct probe *const	*probes;	/* see agent_view::probe_conf */
	size_t			 nprobes;
	const struct lbkeys	*keys;
	const char		*off_by;	/* NULL while automation is on */
	const char		*shadow_by;	/* NULL unless in shadow mode */
	const struct decision	*would;		/* shadow: what automation
						   would reply; else NULL */
	const char		*would_reply;	/* its line, with newline */
	/* Its lines by would-be restore words, and the keys that owe them. */
	const char		(*would_lines)[REPLY_MAX];
	const struct lbkeys	*would_keys;
	const struct decision	*held;		/* what HAProxy holds from
						   lbagent's automation */
	uint64_t		 replies;
	const uint64_t		*transitions;	/* by node_state; [COUNT]: off */
	bool			 has_peers;	/* the peer guard is on */
	struct peer_view	 peers;		/* its view, when on */
	const char		*marker_warning; /* "" unless a marker leaves
						    no other node serving */
	/* The backend it is judged against (NULL: none), where it is set
	 * (0: a default), and whether it is [haproxy]'s, not named. */
	const char		*backend;
	unsigned		 backend_line;
	bool			 backend_inherited;
	const struct agent_capacity_view *capacity;
};

struct agent_info {
	const struct config	*cfg;
	uint64_t		 incarnation;
	int64_t			 started_wall_ms;
	bool			 has_peers;	/* the peer guard is on: the
						   view's peer functions answer */
};

/*
 * Whether the state file is saved: while saves fail lbagent goes on
 * answering (the load balancers matter more), and says so.
 */
struct agent_persistence {
	bool		 failing;
	int64_t		 since_wall_ms;		/* the first failure of this run */
	int64_t		 since_ms;		/* the same, monotonic */
	char		 reason[320];		/* the latest failure's */
	uint64_t	 failures;		/* failed saves since start */
};

struct agent_view {
	struct agent	*agent;		/* what the functions below read */

	/* --- the services --- */
	size_t		 (*nservices)(const struct agent_view *);
	/* The service of that name ("" or "default": the default), or -1. */
	int		 (*find_service)(const struct agent_view *,
			    const char *name);
	void		 (*service)(const struct agent_view *, size_t i,
			    struct agent_service_view *);
	/* See agent_names_no_service (agent.h). */
	bool		 (*names_no_service)(const struct agent_view *,
			    const char *text, size_t len);
	/* The agent-send names no service has, the most recent kept. */
	const struct unknown_names *(*unknown_names)(const struct agent_view *);
	/* A probe of a service view: its settings and its state. */
	const struct probe_conf	 *(*probe_conf)(const struct probe *);
	const struct probe_state *(*probe_state)(const struct probe *);

	/* --- the node --- */
	void		 (*info)(const struct agent_view *, struct agent_info *);
	void		 (*persistence)(const struct agent_view *,
			    struct agent_persistence *);
	/* See agent_generation (agent.h): what the documents show moved. */
	uint64_t	 (*generation)(const struct agent_view *,
			    uint64_t *ticks);

	/* --- the peers' rounds --- */
	/* The detail is read (agent_peers_watch): with fresh, whether the
	 * last whole round is fresh (else one is due, and on_round's callback
	 * runs at its end); without, true. */
	bool		 (*peers_watch)(const struct agent_view *, bool fresh);
	/* cb(arg) after each round of the peers, once every service looked. */
	void		 (*on_round)(const struct agent_view *,
			    void (*cb)(void *), void *arg);

	/* --- the peer guard's sources (only when info.has_peers) --- */
	size_t		 (*npeers)(const struct agent_view *);
	const struct peer_source *(*peer)(const struct agent_view *, size_t j);
	/* Peer j's verdict for service i, as of the last round. */
	const struct peer_verdict *(*verdict)(const struct agent_view *,
			    size_t i, size_t j);
	size_t		 (*nlbs)(const struct agent_view *);
	const struct lb_source *(*lb)(const struct agent_view *, size_t k);
	/* The start of the last round answered; INT64_MIN: none yet. */
	int64_t		 (*round_ms)(const struct agent_view *);
	/* The start of the last whole round (the peers, every server of the
	 * backends) answered; INT64_MIN: none yet. */
	int64_t		 (*whole_ms)(const struct agent_view *);
	/* Rounds begun since lbagent started (reloads included). */
	uint64_t	 (*rounds)(const struct agent_view *);
	/* Whether a service wants rounds every interval. */
	bool		 (*needed)(const struct agent_view *);
};

/*
 * The agent's view, filled by the agent (agent_view.c). Declared here,
 * not in agent.h, for the HTTP API, which main hands the agent itself and
 * which takes its view once, at the start.
 */
void	agent_view(struct agent *, struct agent_view *);

#endif
