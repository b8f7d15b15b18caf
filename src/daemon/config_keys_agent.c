/*
 * [agent]'s keys: the agent port, the state directory, the mode; and how
 * decisions move (the transitions), which any [service NAME] may
 * override. Interprets [agent], which may be absent.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_impl.h"

const struct config_key config_agent_keys[] = {
	{ "agent", "listen", KEY_LISTEN, "*:9505", 0, 0, OFF(listen),
	  "Addresses for HAProxy's agent checks, comma-separated: *:PORT "
	  "(every IPv4 and IPv6 address), 127.0.0.1:PORT, [::1]:PORT." },
	{ "agent", "state_dir", KEY_PATH, "/var/lib/lbagent", 0, 0,
	  OFF(state_dir),
	  "Directory of the marker files (maint, drain) and of state.json, "
	  "what lbagent owes each load balancer across restarts." },
	{ "agent", "max_connections", KEY_UINT, "1024", 1, 65536,
	  OFF(max_connections),
	  "Agent connections open at once; beyond it, new ones wait in the "
	  "kernel's queue." },
	{ "agent", "reply_reasons", KEY_BOOL, "yes", 0, 0,
	  OFF(reply_reasons),
	  "Add '#reason' to replies (HAProxy shows it in its logs and stats "
	  "page)." },
	{ "agent", "no_probes", KEY_BOOL, "no", 0, 0, OFF(no_probes),
	  "The default service has no probes on purpose (it says up unless "
	  "a marker says otherwise): no warning about it." },
	{ "agent", "lb_forget_after", KEY_DURATION, "10m", 1000,
	  7ULL * 24 * 3600 * 1000, OFF(lb_forget_after_ms),
	  "Forget a load balancer (source address and agent-send text) not "
	  "seen for this long." },
	{ "agent", "request_timeout", KEY_DURATION, "1s", 10, 2000,
	  OFF(request_timeout_ms),
	  "On a port shared by several services, how long to wait for the "
	  "service name (agent-send) before answering for the default "
	  "service." },
	{ "agent", "proc_root", KEY_PATH, "/proc", 0, 0, OFF(proc_root),
	  "Where probes read /proc from (tests point it at fixed files)." },
	{ "agent", "mode", KEY_MODE, "auto", 0, 0, OFF(automation_off),
	  "auto; off: no automated decision, replies say only '# lbagent "
	  "automation off' so HAProxy keeps what it has (markers still act); "
	  "or shadow: everything runs, but replies carry no state word, only "
	  "'# lbagent shadow: would reply ...' (markers still act). The "
	  "environment variable LBAGENT_MODE replaces it; the markers "
	  "state_dir/off and state_dir/shadow override it, and off, from any "
	  "source, wins over shadow." },
	{ "agent", "node_id", KEY_NAME, NULL, 0, 0, OFF(node_id),
	  "This node's name in status, metrics and for peers; the host name "
	  "when not set." },
};
const size_t config_agent_nkeys = NKEYS_OF(config_agent_keys);

/*
 * How decisions move ([agent], and any [service NAME] to override them
 * for that service).
 */
const struct config_key config_transition_keys[] = {
	{ "agent", "down_after", KEY_DURATION, "30s", 0, DAY_MS,
	  TOFF(down_after_ms),
	  "Go down (or drain, when the rules say drain) only after the target "
	  "has been that bad on every evaluation for this long. Also the "
	  "least time from start-up to going out." },
	{ "agent", "degrade_after", KEY_DURATION, "10s", 0, DAY_MS,
	  TOFF(degrade_after_ms),
	  "Lower the weight only after the target has been that low or lower "
	  "on every evaluation for this long." },
	{ "agent", "up_after", KEY_DURATION, "60s", 0, DAY_MS,
	  TOFF(up_after_ms),
	  "Come back from down or drain only after passing on every "
	  "evaluation for this long; at least down_after." },
	{ "agent", "restore_after", KEY_DURATION, "30s", 0, DAY_MS,
	  TOFF(restore_after_ms),
	  "Raise the weight only after the target has been that high or "
	  "higher on every evaluation for this long." },
	{ "agent", "ramp", KEY_DURATION, "60s", 0, DAY_MS, TOFF(ramp_ms),
	  "Recovery window: back from down or drain, the weight rises "
	  "linearly from ramp_start to the rules' weight over this long "
	  "(steps of 5 points or more, at most one a second); 0 sends the "
	  "full weight at once." },
	{ "agent", "ramp_start", KEY_PERCENT, "25%", 1, 100,
	  TOFF(ramp_start), "The weight a recovery starts at." },
	{ "agent", "flap_limit", KEY_UINT, "3", 0, CONFIG_FLAP_LIMIT_MAX,
	  TOFF(flap_limit),
	  "Flap damping: after going out this many times within flap_window, "
	  "each further up_after doubles (10x at most) until a whole "
	  "flap_window passes without going out; 0 never damps." },
	{ "agent", "flap_window", KEY_DURATION, "10m", 1000, 7 * DAY_MS,
	  TOFF(flap_window_ms), "See flap_limit." },
};
const size_t config_transition_nkeys = NKEYS_OF(config_transition_keys);

/*
 * A key of the transitions in [agent] or [service], or of the guard's
 * (config_guard_keys, config_lb_keys) in [service]; arg: the
 * transition_conf it goes into.
 */
bool
config_transition_key(struct parse *p, struct entry *e, void *arg)
{
	if (config_table_key(p, e, config_transition_keys,
	    config_transition_nkeys, arg))
		return true;
	return p->sections[e->section].kind == SEC_SERVICE &&
	    (config_table_key(p, e, config_guard_keys, config_guard_nkeys,
	    arg) || config_table_key(p, e, config_lb_keys, config_lb_nkeys,
	    arg));
}

/*
 * [agent] (SIZE_MAX: absent, its defaults apply) and the transitions every
 * service starts from; node_id is the host name when not set.
 */
void
config_build_agent(struct parse *p, size_t agent)
{
	struct config	*cfg = p->cfg;
	char		 host[256];

	config_table_apply(p, agent, config_agent_keys, config_agent_nkeys,
	    cfg, config_transition_key, &cfg->transitions);
	config_table_defaults(p, config_transition_keys,
	    config_transition_nkeys, &cfg->transitions, agent);
	config_check_transitions(p, agent, &cfg->transitions, "");
	if (cfg->node_id == NULL) {
		if (gethostname(host, sizeof(host)) == -1 || host[0] == '\0')
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, " \t\r\n")] = '\0';
		if ((cfg->node_id = strdup(host)) == NULL)
			config_error(p->errs, p->path, 0, "out of memory");
	}
}
