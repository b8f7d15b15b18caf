/*
 * The peer guard's module, shared by peers.c (the rounds) and
 * peers_reload.c (a reload, and what the status API reads).
 */
#ifndef LBAGENT_PEERS_IMPL_H
#define LBAGENT_PEERS_IMPL_H

#include <event2/event.h>

#include "lbagent/core/hastats_reader.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/fetch.h"
#include "lbagent/daemon/peers.h"

#define NO_TIME		INT64_MIN

/* A source as the rounds ask it: its address and the fetch in flight. */
struct asked {
	struct peers		*owner;		/* NULL: taken by a reload */
	struct fetch_source	 src;
	struct fetch		*fetch;		/* in flight */
	struct hastats_reader	*reader;	/* a load balancer's, in flight */
	size_t			 i;		/* in peers or lbs */
	bool			 own;		/* asked for the own rows only */
	char			 request[HASTATS_REQUEST_MAX];	/* own's */
};

_Static_assert(sizeof(((struct fetch_source *)0)->text) == PEERS_TEXT_MAX,
    "a source is shown as fetch.c writes it");

struct svc_guard {
	char			 name[CONFIG_NAME_MAX + 1];
	const struct transition_conf *tc;
	struct peer_view	 view;
	struct peer_verdict	*verdicts;	/* one per peer */
};

struct peers {
	struct event_base	*base;
	struct curl_loop	*curl;
	const struct config	*cfg;
	void			(*changed)(void *);
	void			*arg;
	struct peer_source	*peers;		/* what they answered */
	struct asked		*peers_asked;	/* how they are asked */
	size_t			 npeers;
	struct lb_source	*lbs;
	struct asked		*lbs_asked;
	size_t			 nlbs;
	struct svc_guard	*svcs;
	size_t			 nsvcs;
	const char		**backends;	/* every service's, once: the
						   rows read (in cfg) */
	size_t			 nbackends;
	const char		**own_be, **own_srv; /* this node's server in
						   each service's backend,
						   once a pair (in cfg) */
	size_t			 nown;
	uint64_t		 timeout_ms;	/* the longest any service allows */
	/*
	 * To the Runtime API (HTTP sources get the stats page's CSV): the
	 * backends' servers only, then their configured weights, which
	 * 2.6's CSV does not have (hastats_request).
	 */
	char			 request[HASTATS_REQUEST_MAX];
	bool			 in_flight, again;
	bool			 kick;		/* the timer's round is due anyway */
	bool			 whole_due;	/* a decision asked: every server */
	bool			 whole;		/* the round in flight reads them */
	bool			 estimates;	/* every round asks the peers
						   (peers_need_estimates) */
	enum pace		 pace;		/* the services want */
	uint32_t		 seed;		/* the jitter's */
	uint64_t		 due_in_ms;	/* the scheduled round's wait */
	int64_t			 watched_ms;	/* the detail was last read */
	uint64_t		 rounds;	/* begun, since start */
	size_t			 waiting;	/* answers the round waits for */
	int64_t			 round_ms;	/* the round in flight's start */
	int64_t			 done_ms;	/* the last answered round's start */
	int64_t			 whole_ms;	/* the same, of a whole round */
	struct event		*timer;
};

void	peers_timer_cb(evutil_socket_t, short, void *);
/* The first round of a module: from the loop, not from its creator. */
void	peers_soon(struct peers *);
/* Verdicts for every service, once every source has answered or not. */
void	peers_judge_all(struct peers *);
/* Builds the sources and services of cfg into an empty module. */
int	peers_build(struct peers *, const struct config *);
void	peers_sources_free(struct peers *);

#endif
