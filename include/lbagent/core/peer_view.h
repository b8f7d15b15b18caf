/*
 * The peer guard's judging, pure: what the other nodes' lbagent answered
 * (their public /status) and what the load balancers' stats show, judged
 * into a struct peer_view per service. The rounds that ask them, with
 * their timers and fetches, are peers.c's; unit tests script the answers.
 */
#ifndef LBAGENT_PEER_VIEW_H
#define LBAGENT_PEER_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/decision.h"
#include "lbagent/core/hastats.h"
#include "lbagent/core/hastats_reader.h"
#include "lbagent/core/settings.h"

#define PEERS_ANSWER_MAX	(64 * 1024)		/* a peer's /status */
#define PEERS_WHY_MAX		512
#define PEERS_TEXT_MAX		256	/* a source as shown */

/*
 * What the peer guard knows for a service (peers.h fills it): NULL when
 * no peers are configured.
 */
struct peer_view {
	int64_t	round_ms;	/* start of the last round answered; INT64_MIN: none */
	bool	other_serving;	/* in that round, another node served */
	int64_t	served_ms;	/* start of the last round where one did (or
				   the guard's start, when none has yet) */
	char	who[96];	/* those serving: "n2, n3" */
	char	why[256];	/* why the others are not: "n2: timeout; ..." */
};

/* One service in a peer's public /status. */
struct peer_service {
	char	name[CONFIG_NAME_MAX + 1];	/* "" for the default */
	bool	serving;
	char	state[8];		/* "up", "drain", ...; "" not given */
	long	weight;			/* -1: not given */
	char	automation[16];		/* "auto", "off", ...; "" not given */
	char	server[CONFIG_NAME_MAX + 1];	/* its server name; "": node_id */
	/*
	 * Its capacity estimate ("capacity": {"estimate": R, "age_ms": A},
	 * requests a second at full utilization) and how old it was when
	 * it answered: NAN and -1 when absent, null, negative, not finite,
	 * or without a valid age. peer_service_capacity judges the age.
	 */
	double	capacity;
	int64_t	capacity_age_ms;
};

struct peer_answer {
	char			 node_id[CONFIG_NAME_MAX + 1];
	int64_t			 incarnation;	/* -1: not given */
	struct peer_service	*svc;
	size_t			 nsvc;
};

/*
 * A public /status document. 0, or -1 with *why ("not JSON", "no
 * node_id", ...); the answer is left empty then. Free with
 * peer_view_answer_free either way.
 */
int	peer_view_answer_parse(const char *body, size_t len,
	    struct peer_answer *, const char **why);
void	peer_view_answer_free(struct peer_answer *);
/*
 * A peer's estimate when it was at most max_age_ms old as it answered
 * (add the time since the answer to be exact); else NAN.
 */
double	peer_service_capacity(const struct peer_service *,
	    uint64_t max_age_ms);

/*
 * A peer's liveness, as rounds pass (node-liveness: information only,
 * nothing the guard decides reads it).
 */
enum peer_alive {
	PEER_ALIVE,
	PEER_SUSPECT,	/* no good answer for suspect_after rounds */
	PEER_DEAD	/* none for dead_after rounds */
};

struct peer_liveness {
	uint64_t	missed;		/* rounds in a row without a good answer */
	uint64_t	rounds;		/* rounds counted */
	bool		ever;		/* a good answer, once */
	int64_t		incarnation;	/* last seen; -1: none */
	uint64_t	restarts;	/* rises of incarnation seen */
	bool		restarted;	/* the last good answer was such a rise */
};

/* No round yet. */
void		 peer_liveness_init(struct peer_liveness *);
/*
 * One round: good is a valid answer from the node pinned there, with its
 * incarnation (-1 when it gives none). A rise counts as a restart.
 */
void		 peer_liveness_round(struct peer_liveness *, bool good,
		    int64_t incarnation);
/* The verdict after the rounds counted so far. */
enum peer_alive	 peer_liveness_verdict(const struct peer_liveness *,
		    uint64_t suspect_after, uint64_t dead_after);
const char	*peer_alive_name(enum peer_alive);

/*
 * What the rounds learned from one peer. The rounds (and tests) write
 * it; the status reads it through the accessors below.
 */
struct peer_source {
	char			 text[PEERS_TEXT_MAX];	/* its address, as
							   shown (redacted) */
	bool			 answered;	/* a valid document, last round */
	char			 error[PEERS_WHY_MAX];	/* else why not */
	struct peer_answer	 ans;
	int64_t			 took_ms;	/* how long the answer took */
	int64_t			 seen_ms;	/* last valid answer; INT64_MIN */
	/* The node_id this address first answered with: another one later
	 * is not the node we were told to ask. */
	char			 pinned[CONFIG_NAME_MAX + 1];
	struct peer_liveness	 live;
};

/* What the rounds learned from one load balancer. */
struct lb_source {
	char			 text[PEERS_TEXT_MAX];
	bool			 answered;
	char			 error[PEERS_WHY_MAX];
	struct hastats_table	*table;		/* the last answer's rows of the
						   backends read; or NULL */
	int64_t			 took_ms;
	int64_t			 seen_ms;
};

/*
 * Whether a source answered, with what it answered: judging and the
 * status read a source only then.
 */
bool		 peer_view_peer_ok(const struct peer_source *);
bool		 peer_view_lb_ok(const struct lb_source *);

/* Its address as shown; when it last answered (INT64_MIN: never). */
const char	*peer_view_peer_text(const struct peer_source *);
int64_t		 peer_view_peer_seen_ms(const struct peer_source *);
/* The node_id it answers as, else the one first seen there; "": none. */
const char	*peer_view_peer_node_id(const struct peer_source *);
/* Why it has no answer: the last error, or "no answer yet". */
const char	*peer_view_peer_error(const struct peer_source *);

const char	*peer_view_lb_text(const struct lb_source *);
int64_t		 peer_view_lb_seen_ms(const struct lb_source *);
const char	*peer_view_lb_error(const struct lb_source *);

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
void	peer_view_judge(const struct peer_source *,
	    const struct lb_source *lbs, size_t nlbs, const char *service, const char *backend,
	    const char *my_id, uint64_t timeout_ms, struct peer_verdict *);

/*
 * A round's view for one service: every peer judged (into verdicts, one
 * per peer), who serves, why the others do not; served_ms moves to
 * round_ms when another node serves (else it keeps its value). With no
 * peers but load balancers, the load balancers alone: another server of
 * the backend serves when every load balancer that answered in time (at
 * least one) shows it UP with a weight above 0; who then names servers.
 */
void	peer_view_aggregate(const struct peer_source *, size_t npeers,
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
	long			others_serving;	/* other servers of the backend
						   UP with a weight above 0;
						   -1: not known */
};

/*
 * This node's server (backend/server) on lb; told is what lbagent tells
 * HAProxy now (a MAINT or DRAIN it did not ask for is an operator's).
 */
void	peer_view_lb(const struct lb_source *, const char *backend,
	    const char *server, const struct decision *told, struct lb_view *);

#endif
