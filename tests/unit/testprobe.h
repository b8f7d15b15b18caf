/*
 * Driving probe runs in the unit tests the way the scheduler does: fill a
 * probe_run, start it, run the event loop until it reports (bounded, so
 * a hung run fails the test instead of hanging it).
 */
#ifndef LBAGENT_TESTPROBE_H
#define LBAGENT_TESTPROBE_H

#include <stdbool.h>

#include "lbagent/curl_loop.h"
#include "lbagent/probe.h"

struct tp_runner {
	struct event_base	*base;
	struct probe_env	 env;
	struct probe_run	 run;
	struct probe_outcome	 out;
	unsigned		 reported;
	unsigned		*pending;	/* shared count; break at 0 */
};

/* The base, the curl loop and the env shared by every runner. */
void	tp_env_init(struct probe_env *, struct event_base *);
void	tp_env_free(struct probe_env *);

/* A conf from key/value pairs (NULL-terminated); each must be accepted. */
void	*tp_conf(const struct probe_ops *, const char *const *kv);
/* The why of the first key/value pair refused, or of conf_check. */
const char *tp_conf_error(const struct probe_ops *, const char *const *kv);

void	tp_runner_init(struct tp_runner *, const struct probe_ops *,
	    const struct probe_env *, const void *conf, int64_t timeout_ms);
/* Releases what runs kept across runs. */
void	tp_runner_free(struct tp_runner *);
/* Starts a run (the runner must not be in flight). */
void	tp_start(struct tp_runner *);
/* Runs the loop until *pending is 0 or ms passed; false when timed out. */
bool	tp_loop(struct event_base *, unsigned *pending, int ms);
/* Starts one run and waits (20s at most) for its report. */
void	tp_run(struct tp_runner *);

#endif
