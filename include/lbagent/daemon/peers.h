/*
 * The peer guard's sources: the other nodes' lbagent (their public
 * /status) and the load balancers' stats (HAProxy's `show stat` CSV),
 * asked together in rounds, never on the reply path: at once when a
 * decision needs a fresh answer, every [peers] interval while a decision
 * waits on them (about to go out, just out), every [peers]
 * steady_interval while they are wanted otherwise (out, held out by a
 * marker, the detail read within PEERS_WATCH_MS), each round up to
 * PACE_JITTER_PCT sooner, drawn from a seed of the node's own, so that
 * a fleet does not ask in lockstep (pace.h). A detail read gets a round
 * begun within an interval. A node in and healthy, with nobody watching,
 * asks nobody. A round is whole (every peer, every server of the
 * backends) when a decision waits on the others (pace_whole, a decision
 * asking now, a detail read); else it asks each Runtime API source for
 * this node's own rows alone (hastats_request_own), their ids learnt
 * from a whole answer and learnt again when one is not found, and the
 * view of the others stays as the last whole round judged it. A round ends
 * when every source answered or timed out; its verdicts, per service,
 * go to the transition engine as a struct peer_view.
 *
 * The judging is pure and lives in peer_view.h (peer_view_judge,
 * peer_view_answer_parse, peer_view_lb), so unit tests drive it with
 * scripted answers.
 */
#ifndef LBAGENT_PEERS_H
#define LBAGENT_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "lbagent/core/pace.h"
#include "lbagent/core/peer_view.h"
#include "lbagent/core/settings.h"

#define PEERS_CSV_MAX		(8 * 1024 * 1024)	/* a load balancer's stats */
#define PEERS_WATCH_MS		10000	/* rounds go on after a detail read */

struct curl_loop;
struct peers;

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
/* The pace the services want (the fastest of theirs, each step). */
void		 peers_need(struct peers *, enum pace);
/*
 * Whether every round, own rows or whole, asks the peers too: a service
 * weighs its capacity estimate against theirs (their public /status).
 */
void		 peers_need_estimates(struct peers *, bool);
/*
 * The detail is being read: rounds go on at the steady pace for
 * PEERS_WATCH_MS (the own rows only, unless a service wants the whole
 * view). With fresh, whether the last whole round is fresh (begun within
 * an interval); when not, one begins at once (or after the one in flight)
 * and the caller waits for its end (agent_on_round). Without, true: the
 * read shows the whole view as it is, peers_whole_ms its age.
 */
bool		 peers_watch(struct peers *, bool fresh);
/* The start of the last whole round answered; INT64_MIN: none yet. */
int64_t		 peers_whole_ms(const struct peers *);
/* Whether a service wants rounds (peers_need: a pace but none). */
bool		 peers_needed(const struct peers *);
/* The pace the services want (peers_need). */
enum pace	 peers_pace(const struct peers *);
/* Rounds begun since lbagent started (reloads included). */
uint64_t	 peers_rounds(const struct peers *);
/* Service i (0 the default, i + 1 cfg->services[i]) as of the last round. */
void		 peers_view(const struct peers *, size_t i, struct peer_view *);

/* Read-only, for the status API. */
size_t				 peers_npeers(const struct peers *);
const struct peer_source	*peers_peer(const struct peers *, size_t i);
/* Peer j's verdict for service i, as of the last round. */
const struct peer_verdict	*peers_verdict(const struct peers *, size_t i,
				    size_t j);
/* The start of the last round answered; INT64_MIN: none yet. */
int64_t				 peers_round_ms(const struct peers *);
size_t				 peers_nlbs(const struct peers *);
const struct lb_source		*peers_lb(const struct peers *, size_t i);

/*
 * This node's server row (the service's backend, its server name) on one
 * load balancer, as of that load balancer's last answer: what a rate of
 * stot across rounds (core/rate.h) and the latency are taken from. The
 * Runtime API's "show stat" and the stats page give no process id or
 * uptime: a reload shows as a smaller stot.
 */
struct lb_server_sample {
	bool		found;		/* it answered, and has the row */
	long long	stot;		/* sessions, cumulative; -1 not given */
	long long	responses;	/* HTTP responses, cumulative; -1 not
					   given (mode tcp) */
	long		scur;		/* -1 not given, as the next ones */
	long		qcur;
	long		rtime_ms;
	long		qtime_ms;
	int64_t		at_ms;		/* when its last answer came
					   (clock_now_ms); INT64_MIN: the last
					   round had none */
	int64_t		round_ms;	/* the start of that round; INT64_MIN
					   as at_ms */
};

/*
 * Service i (as peers_view) on load balancer j (as peers_lb). Whether
 * the row was found (also in s->found); s says what is known either way.
 */
bool		 peers_this_node_stats(const struct peers *, size_t i,
		    size_t j, struct lb_server_sample *s);

#endif
