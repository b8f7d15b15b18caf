/*
 * The agent's own parts, shared by its files: agent.c (the services'
 * wiring: probes, markers, timers, the reply path), agent_view.c (the
 * views), agent_markers.c (taking in a read of the markers),
 * agent_state.c (the state file) and agent_reload.c (a reload).
 */
#ifndef LBAGENT_AGENT_IMPL_H
#define LBAGENT_AGENT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "lbagent/core/capacity.h"
#include "lbagent/core/conclimit.h"
#include "lbagent/core/rate.h"
#include "lbagent/core/rules.h"
#include "lbagent/core/service.h"
#include "lbagent/core/unknown_names.h"
#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/markers.h"
#include "lbagent/daemon/state.h"

/*
 * A service's capacity weight and maxconn (agent_capacity.c): the model's
 * state apart from its settings, the inputs' sources and the rates of
 * this node's stot on each load balancer.
 */
struct svc_capacity {
	struct agent_capacity_view v;		/* what status shows */
	char			 sig[256];	/* the settings: a reload that
						   changes them starts over */
	struct capacity		 cap;
	struct conclimit	 cl;
	struct counter_rate	 rates[CONFIG_PEERS_MAX];
	bool			 rate_hx, latency_hx;	/* from [haproxy] */
	struct probe		*rate_p, *util_p, *latency_p;
	int64_t			 stats_round_ms;	/* the round last taken */
	uint64_t		 rate_runs, util_runs, latency_runs; /* taken */
	/* The unit each probe's value has when it is the measure ("": a
	   json_field's number); a run's value of another is none. */
	const char		*rate_unit, *util_unit, *latency_unit;
	double			 stats_rate, stats_latency, stats_inflight;
};

/* A service and what feeds it. */
struct svc {
	struct service		 s;
	struct probe		**probes;	/* agent::probes owns them */
	size_t			 nprobes;
	struct rules_input	*in;		/* the probes, for each step */
	bool			*settled;
	struct markers		 own;		/* its directory's, last read */
	enum pace		 peers_pace;	/* its last step's (pace.h) */
	struct svc_capacity	 cap;
};

struct agent {
	struct event_base	*base;
	const struct config	*cfg;
	const struct probe_env	*env;
	struct probe		**probes;
	size_t			 nprobes;
	struct svc		*svcs;		/* [0]: the default service */
	size_t			 nsvcs;
	struct markers		 node;		/* state_dir's own markers */
	uint64_t		 incarnation;
	int			 mode_env;	/* LBAGENT_MODE: -1 unset, else a
						   service_mode */
	char			 boot_id[BOOT_ID_MAX];
	int64_t			 started_wall_ms;
	struct event		*marker_ev, *expire_ev, *save_ev, *retry_ev;
	struct event		*soon_ev;
	void			(*round_cb)(void *);	/* agent_on_round */
	void			*round_arg;
	bool			 save_failed;
	struct agent_persistence persist;	/* agent_state.c's */
	int64_t			 persist_log_ms; /* its last error line */
	struct peers		*peers;		/* NULL: no peer guard */
	/* agent_generation's: what the documents show, and its counters. */
	uint64_t		 generation;
	uint64_t		 ticks;
	struct unknown_names	 unknown;	/* agent_select.c's */
};

/* agent.c */
int	agent_create_services(struct agent *);
void	agent_free_services(struct svc *, size_t n);
void	agent_read_markers(struct agent *, bool at_start);
void	agent_probe_ran(struct probe *, bool changed, void *agent);
void	agent_peers_changed(void *agent);

/* agent_capacity.c */
/* Service w's capacity from its [service] (NULL: the default's, off). */
void	agent_capacity_init(struct agent *, struct svc *,
	    const struct service_conf *);
/*
 * Before service i's step: the inputs that came since the last, the
 * model's view at now_ms; the factor and maxconn for the step.
 */
void	agent_capacity_step(struct agent *, size_t i, int64_t now_ms,
	    unsigned *factor_pct, unsigned *maxconn);
/* Whether service w needs the peers' rounds (the stats, the estimates). */
bool	agent_capacity_rounds(const struct agent *, const struct svc *);
/* A reload: the state of from goes on in to when its settings are the same. */
void	agent_capacity_carry(struct svc *to, const struct svc *from);

/* agent_select.c */
/* A check from addr answered as the default for a text naming no
 * service: kept for /metrics, status and why. */
void	agent_unknown_name(struct agent *, const char *addr, const char *text,
	    size_t len, int64_t now_ms);
/* The tick: names no longer asked for stop being recent. */
void	agent_unknown_names_age(struct agent *);
/* After a reload: names a service now has are dropped. */
void	agent_unknown_names_reload(struct agent *);

/* agent_markers.c */
/*
 * ms, the markers just read from dir, against cur (the last read): those
 * past their end expired and renamed, the changes logged (where: "" for
 * the node's, "NAME/" for a service's); cur becomes ms. Whether they
 * changed in what the documents show.
 */
bool	agent_markers_take(const char *dir, const char *where,
	    struct markers *cur, struct markers *ms);

/* agent_state.c */
void	agent_schedule_save(struct agent *);
void	agent_schedule_save_soon(struct agent *);
void	agent_save_cb(evutil_socket_t, short, void *agent);
/* Loads the state file into the services and composes the old lines. */
void	agent_load_state(struct agent *);

#endif
