/*
 * The agent: probes and markers in, a decision per service, reply lines
 * composed once per change, the load-balancer bookkeeping and its
 * persistence. The listener asks it which service a check is for and for
 * that service's line, nothing else.
 *
 * Services are numbered: 0 is the default service (the node-wide markers
 * and the probes no [service] names); i + 1 is cfg->services[i].
 */
#ifndef LBAGENT_AGENT_H
#define LBAGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

#include "lbagent/core/reply.h"
#include "lbagent/core/transition.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/view.h"
#include "lbagent/probes/probe.h"

struct history;
struct lbkeys;
struct markers;
struct peers;

#define AGENT_SHARED_PORT	(-1)	/* the [agent] listen addresses */

struct agent;

/* What one reply did, kept by the connection in case its text comes late. */
struct agent_check {
	unsigned	carried;	/* CLAIM_* bits the reply carried */
	unsigned	restore;	/* restore words (CLAIM_* bits) it carried */
	bool		created;	/* the reply created its key */
	bool		would_created;	/* ... its would-be key (shadow) */
};

/*
 * Loads the state file, reads the markers and starts every probe; NULL on
 * fatal errors. env is the daemon's and outlives the agent. mode_env is
 * LBAGENT_MODE: -1 unset, else a service_mode (see agent_mode_env).
 */
struct agent	*agent_new(struct event_base *, const struct config *,
		    const struct probe_env *, int mode_env);
/*
 * LBAGENT_MODE from the environment: -1 unset, else a service_mode
 * (auto, off, shadow); -2 with the value escaped in buf when it is none.
 */
int		 agent_mode_env(char *buf, size_t size);
void		 agent_free(struct agent *);
/*
 * A reload: cfg replaces old (which the caller frees afterwards). Probes
 * with the same name and settings keep running with their state; services
 * of the same name keep their load balancers, transitions, history and
 * markers. -1 (out of memory) leaves everything as it was.
 */
int		 agent_reload(struct agent *, const struct config *cfg,
		    const struct config *old);

/*
 * The service a check on port (a service number, or AGENT_SHARED_PORT)
 * with request text is for: the port's own service, else the one the text
 * names (any service, own port or not), else the default.
 */
int		 agent_select(const struct agent *, int port, const char *text,
		    size_t len);
/*
 * True when text, the agent-send text of a check answered as the default
 * service, names no service: the node has [service] sections, the text is
 * not empty, not one of their names and not NAME_DEFAULT_SERVICE (which
 * asks for the default by name).
 */
bool		 agent_names_no_service(const struct agent *, const char *text,
		    size_t len);
/*
 * True when the shared port serves a service that only its name reaches
 * (one without its own port): then the name decides, so wait for it.
 */
bool		 agent_wants_name(const struct agent *, int port);

/* Copies the reply for a check from (addr, text) into buf; returns its length. */
size_t		 agent_reply(struct agent *, int service, const char *addr,
		    const char *text, size_t len, char buf[REPLY_MAX],
		    struct agent_check *);
void		 agent_late_text(struct agent *, int service, const char *addr,
		    const char *text, size_t len, const struct agent_check *);
/* True when checks from addr have sent text before: worth waiting for it. */
bool		 agent_addr_sends_text(const struct agent *, const char *addr);
/*
 * True when addr is known to send no text: it has checked without any,
 * and never with (as far as the keys remember).
 */
bool		 agent_addr_quiet(const struct agent *, const char *addr);

/* --- read-only views (view.h; in agent_view.c) --- */

/* In agent_state.c. */
void	agent_persistence(const struct agent *, struct agent_persistence *);

size_t	agent_nservices(const struct agent *);
/* The service of that name ("" or "default": the default), or -1. */
int	agent_find_service(const struct agent *, const char *name);
void	agent_service_view(const struct agent *, size_t i,
	    struct agent_service_view *);
void	agent_info(const struct agent *, struct agent_info *);
/*
 * The /status detail is read: the peers' rounds go on a while (see
 * peers_watch). With fresh, whether their last whole round is fresh; when
 * not, one is due and the agent calls the on_round callback at its end.
 */
bool	agent_peers_watch(struct agent *, bool fresh);
/* cb(arg) after each round of the peers, once every service looked. */
void	agent_on_round(struct agent *, void (*cb)(void *), void *arg);
/*
 * What the public documents (/metrics, the public /status) show changes:
 * the generation grows with every change of a state, weight, mode,
 * marker, guard state, probe result, peer round, reload or save failure;
 * *ticks with every count or measurement that moves on its own (an agent
 * check answered, a probe run). The HTTP API renders anew when the
 * generation moved, and at most once a second when only the ticks did.
 */
uint64_t agent_generation(const struct agent *, uint64_t *ticks);

#endif
