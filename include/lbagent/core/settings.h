/*
 * The settings lbagent runs on, as values: what config.c's loader makes of
 * a configuration file, and all the pure modules need of it. A struct
 * config is immutable once loaded; a reload builds a new one. The one
 * behaviour here (settings.c): the count of a kind's shared settings.
 */
#ifndef LBAGENT_SETTINGS_H
#define LBAGENT_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATE_FILE		"state.json"	/* in state_dir */
#define CONFIG_DEFAULT_PATH	"/etc/lbagent/lbagent.conf"
#define CONFIG_MAX_LISTEN	16
#define CONFIG_FLAP_LIMIT_MAX	32
#define CONFIG_NAME_MAX		64	/* section, probe, node, server names */
#define CONFIG_PEERS_MAX	64	/* [peers] agents, haproxy */

/* One listen address as written: host NULL means every address. */
struct config_listen {
	char	host[64];	/* numeric address, or "" for '*' */
	char	port[8];
	char	text[80];	/* as the user wrote it, for logs */
};

struct config_listens {
	struct config_listen	addr[CONFIG_MAX_LISTEN];
	size_t			count;
	unsigned		line;	/* of the key; 0: the default */
};

/* One [http] listen address: ADDR:PORT, or unix:PATH. */
struct config_http_listen {
	bool			is_unix;
	char			path[108];	/* sun_path */
	struct config_listen	tcp;
};

struct config_http {
	struct config_http_listen	addr[CONFIG_MAX_LISTEN];
	size_t				count;		/* 0: no HTTP API */
	unsigned			line;		/* of listen; 0: default */
	char				*token_file;	/* NULL: none */
	uint64_t			 max_connections;
	uint64_t			 per_address;	/* 0: the share */
	uint64_t			 max_rate;	/* TCP accepts a second;
							   0: no limit */
};

/* What a probe's warn or crit result does to its service. */
enum reaction_kind {
	REACT_IGNORE,	/* logged and shown, changes nothing */
	REACT_WEIGHT,	/* up at `weight` percent (1-99) */
	REACT_DRAIN,	/* no new sessions: sent as 0%, never as "drain" */
	REACT_DOWN,
};

struct reaction {
	enum reaction_kind	kind;
	unsigned		weight;
};

/*
 * How a service moves towards its rules' target ([agent], overridable per
 * [service]); see transition.h.
 */
struct transition_conf {
	uint64_t	down_after_ms;		/* before down or drain by rules */
	uint64_t	degrade_after_ms;	/* before a lower weight */
	uint64_t	up_after_ms;		/* before back from out */
	uint64_t	restore_after_ms;	/* before a higher weight */
	uint64_t	ramp_ms;		/* recovery window; 0: none */
	uint64_t	ramp_start;		/* percent the ramp starts at */
	uint64_t	flap_limit;		/* goings-out before damping; 0: never */
	uint64_t	flap_window_ms;
	/*
	 * The peer guard ([peers], overridable per [service]; see peers.h):
	 * this node's backend and server name on the load balancers, and
	 * its timings.
	 */
	char		backend[CONFIG_NAME_MAX + 1];	/* "": none */
	char		server[CONFIG_NAME_MAX + 1];	/* "": node_id */
	uint64_t	peer_timeout_ms;	/* an answer later counts as none */
	uint64_t	alone_grace_ms;		/* out: back when alone this long */
	uint64_t	recheck_after_ms;	/* out: look again this soon */
	uint64_t	just_out_ms;		/* ... and at every evaluation */
};

/* [peers]: the other nodes' lbagent APIs and the load balancers' stats. */
struct config_list {
	char		**items;
	size_t		  count;
};

struct config_peers {
	struct config_list agents;	/* http(s) base URLs, as written */
	struct config_list haproxy;	/* http(s) URL, unix:PATH, tcp:HOST:PORT */
	uint64_t	  interval_ms;	/* how often, a decision waiting */
	uint64_t	  steady_interval_ms;	/* how often, none waiting */
	uint64_t	  suspect_after;	/* rounds without a good answer */
	uint64_t	  dead_after;		/* the same, longer */
	/*
	 * Resolved by the loader for the guard (peers.c), which takes them
	 * as they are: each agent's /status URL (an item NULL when it does
	 * not fit a fetch), and whether there is a guard at all (agents or
	 * haproxy given).
	 */
	struct config_list agent_status;
	bool		  on;
};

struct probe_ops;

/*
 * A kind's own settings (ops->conf_new), counted: the configuration that
 * parsed them holds one reference and each probe running with them
 * another, so a probe kept across a reload goes on with its own (which a
 * run in flight may point into) while the old configuration is freed
 * whole.
 */
struct probe_kconf {
	void			*conf;
	void			(*conf_free)(void *);	/* the kind's ops' */
	unsigned		 refs;
};

/* Another reference to k (NULL stays NULL). */
struct probe_kconf	*settings_kconf_hold(struct probe_kconf *k);
/* Drops one; the last frees the settings. */
void			 settings_kconf_release(struct probe_kconf *k);

/*
 * A probe's window (the kinds with ops->windowed): its runs' latencies
 * and results over window_ms, judged against thresholds (0: none).
 */
struct window_conf {
	uint64_t	window_ms;		/* 0: no window */
	uint64_t	warn_p95_ms, crit_p95_ms;
	uint64_t	warn_p99_ms, crit_p99_ms;
	uint64_t	warn_error_rate, crit_error_rate;	/* percent */
	uint64_t	min_samples;		/* fewer: no verdict */
	uint64_t	samples_per_run;	/* runs each interval */
};

/* One [probe NAME] section. */
struct probe_conf {
	char			*name;
	unsigned		 line;		/* of its section header */
	const struct probe_ops	*ops;
	struct probe_kconf	*kconf;		/* the kind's own settings */
	uint64_t		 interval_ms;
	uint64_t		 timeout_ms;
	struct reaction		 on_warn, on_crit;
	struct reaction		 on_unknown;	/* the check's own unknown */
	uint64_t		 fall, rise;
	struct window_conf	 window;
	/*
	 * Its lines as written, in order ("key=value\n"): two probes with
	 * the same name and signature have the same settings (a reload keeps
	 * such a probe running, with its state).
	 */
	char			*signature;
};

/*
 * A [service]'s capacity weight and adaptive maxconn (docs/capacity.md):
 * the keys as given (the words and probe names as written, NULL when not
 * given), and what the loader resolved of them.
 */
struct capacity_conf {
	char		*weight_from;	/* "health" or "capacity" */
	char		*rate;		/* "haproxy" or a probe's name */
	char		*utilization;	/* a probe's name */
	char		*maxconn;	/* "adaptive" or "off" */
	char		*latency;	/* "haproxy" or a probe's name */
	uint64_t	 reference;	/* req/s at 100% without peers; 0: none */
	uint64_t	 min_rate;	/* req/s */
	uint64_t	 blackout_ms, expiry_ms, half_life_ms;
	uint64_t	 floor_pct, cap_pct;
	uint64_t	 maxconn_min, maxconn_max;
	/* Resolved: weight_from = capacity, maxconn = adaptive. */
	bool		 on;
	bool		 adaptive;
};

/* One [service NAME] section. */
struct service_conf {
	char			*name;
	unsigned		 line;
	char			**probes;	/* names of [probe] sections */
	size_t			 nprobes;
	struct config_listens	 listen;	/* none: the shared agent port */
	struct transition_conf	 transitions;	/* [agent]'s unless overridden */
	/*
	 * Where its transitions.backend is set: its own section's line, or
	 * (inherited) the [haproxy] backend's; 0 when it has none.
	 */
	unsigned		 backend_line;
	bool			 backend_inherited;
	struct capacity_conf	 capacity;
};

struct config {
	char			*path;
	struct config_listens	 listen;
	char			*state_dir;
	char			*proc_root;
	uint64_t		 max_connections;
	bool			 reply_reasons;
	bool			 no_probes;	/* the default's none is meant */
	uint64_t		 lb_forget_after_ms;
	uint64_t		 request_timeout_ms;
	bool			 automation_off;	/* mode = off */
	bool			 shadow;		/* mode = shadow */
	char			*node_id;		/* the host name unless set */
	unsigned		 backend_line;	/* [haproxy] backend's; 0: unset */
	struct config_http	 http;
	struct config_peers	 peers;		/* none: no peer guard */
	struct transition_conf	 transitions;
	struct probe_conf	*probes;
	size_t			 nprobes;
	struct service_conf	*services;
	size_t			 nservices;
};

#endif
