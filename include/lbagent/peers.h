/*
 * The peer guard's sources: the other nodes' lbagent (their public
 * /status) and the load balancers' stats (HAProxy's `show stat` CSV),
 * asked together in rounds, every [peers] interval and at once when a
 * decision needs a fresh answer; never on the reply path. A round ends
 * when every source answered or timed out; its verdicts, per service,
 * go to the transition engine as a struct peer_view.
 *
 * The judging is pure (peers_judge, peer_answer_parse, peers_lb_*), so
 * unit tests drive it with scripted answers.
 */
#ifndef LBAGENT_PEERS_H
#define LBAGENT_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "lbagent/config.h"
#include "lbagent/decision.h"
#include "lbagent/fetch.h"
#include "lbagent/hastats.h"
#include "lbagent/transition.h"

#define PEERS_ANSWER_MAX	(64 * 1024)		/* a peer's /status */
#define PEERS_CSV_MAX		(8 * 1024 * 1024)	/* a load balancer's stats */
#define PEERS_WHY_MAX		512

struct curl_loop;

/* One service in a peer's public /status. */
struct peer_service {
	char	name[CONFIG_NAME_MAX + 1];	/* "" for the default */
	bool	serving;
	char	server[CONFIG_NAME_MAX + 1];	/* its server name; "": node_id */
};

struct peer_answer {
	char			 node_id[CONFIG_NAME_MAX + 1];
	struct peer_service	*svc;
	size_t			 nsvc;
};

/*
 * A public /status document. 0, or -1 with *why ("not JSON", "no
 * node_id", ...); the answer is left empty then. Free with
 * peer_answer_free either way.
 */
int	peer_answer_parse(const char *body, size_t len, struct peer_answer *,
	    const char **why);
void	peer_answer_free(struct peer_answer *);

/* What a round learned from one peer. */
struct peers;

struct peer_source {
	struct peers		*owner;
	struct fetch_source	 src;
	struct fetch		*fetch;		/* in flight */
	bool			 answered;	/* a valid document, last round */
	char			 error[PEERS_WHY_MAX];	/* else why not */
	struct peer_answer	 ans;
	int64_t			 took_ms;	/* how long the answer took */
	int64_t			 seen_ms;	/* last valid answer; INT64_MIN */
	/* The node_id this address first answered with: another one later
	 * is not the node we were told to ask. */
	char			 pinned[CONFIG_NAME_MAX + 1];
};

/* What a round learned from one load balancer. */
struct lb_source {
	struct peers		*owner;
	struct fetch_source	 src;
	struct fetch		*fetch;
	bool			 answered;
	char			 error[PEERS_WHY_MAX];
	char			*csv;		/* the last answer, NUL-terminated */
	size_t			 len;		/* of its CSV part */
	const char		*state;		/* its servers state (Runtime API
						   sources), in csv; or NULL */
	size_t			 state_len;
	int64_t			 took_ms;
	int64_t			 seen_ms;
};

/*
 * Whether a source answered, with what it answered: judging and the
 * status read a source only then.
 */
bool	peer_source_ok(const struct peer_source *);
bool	lb_source_ok(const struct lb_source *);

/* One peer for one service. */
struct peer_verdict {
	bool	self;		/* this node's own answer: not counted */
	bool	serving;
	char	node_id[CONFIG_NAME_MAX + 1];	/* "" when unknown */
	char	why[PEERS_WHY_MAX];		/* when not serving */
};

/*
 * Judges one peer for a service: it serves when its answer came within
 * timeout_ms, is from the node that address first answered as, is not
 * this node (my_id), says the service serves, and, with load balancers,
 * at least one answered within timeout_ms and every one that did shows
 * the peer's server in backend UP with a weight above 0.
 */
void	peers_judge(const struct peer_source *, const struct lb_source *lbs,
	    size_t nlbs, const char *service, const char *backend,
	    const char *my_id, uint64_t timeout_ms, struct peer_verdict *);

/*
 * A round's view for one service: every peer judged (into verdicts, one
 * per peer), who serves, why the others do not; served_ms moves to
 * round_ms when another node serves (else it keeps its value).
 */
void	peers_aggregate(const struct peer_source *, size_t npeers,
	    const struct lb_source *lbs, size_t nlbs, const char *service,
	    const struct transition_conf *, const char *my_id, int64_t round_ms,
	    struct peer_verdict *verdicts, struct peer_view *);

/* How one load balancer sees this node, and what the on-call should know. */
#define LB_WARNINGS_MAX	2

struct lb_view {
	bool			found;
	struct hastats_row	row;
	char			error[PEERS_WHY_MAX];	/* when not found */
	char			warnings[LB_WARNINGS_MAX][200];
	size_t			nwarnings;
};

/*
 * This node's server (backend/server) on lb; told is what lbagent tells
 * HAProxy now (a MAINT or DRAIN it did not ask for is an operator's).
 */
void	peers_lb_view(const struct lb_source *, const char *backend,
	    const char *server, const struct decision *told, struct lb_view *);

/* --- the rounds --- */

/*
 * NULL when cfg has no peers (or out of memory: *failed). changed is
 * called after each round, from the loop.
 */
struct peers	*peers_new(struct event_base *, struct curl_loop *,
		    const struct config *, void (*changed)(void *), void *arg,
		    bool *failed);
void		 peers_free(struct peers *);
/*
 * A new configuration: sources at the same address (credentials
 * included) keep what they learned, services of the same name their
 * served time. Returns the new module
 * (old freed), NULL when the new config has no peers.
 */
struct peers	*peers_reload(struct peers *, const struct config *,
		    bool *failed);
/* A round now, or right after the one in flight. */
void		 peers_ask(struct peers *);
/* Service i (0 the default, i + 1 cfg->services[i]) as of the last round. */
void		 peers_view(const struct peers *, size_t i, struct peer_view *);

/* Read-only, for the status API. */
size_t				 peers_npeers(const struct peers *);
const struct peer_source	*peers_peer(const struct peers *, size_t i);
/* Peer j's verdict for service i, as of the last round. */
const struct peer_verdict	*peers_verdict(const struct peers *, size_t i,
				    size_t j);
size_t				 peers_nlbs(const struct peers *);
const struct lb_source		*peers_lb(const struct peers *, size_t i);

#endif
