/*
 * Driving one probe kind in a unit test: its settings, and real runs on a
 * real event loop, bounded by a timer so that a hung run fails the test
 * instead of hanging it.
 */
#ifndef LBAGENT_PROBEUTIL_H
#define LBAGENT_PROBEUTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "lbagent/probe.h"

struct pu {
	struct event_base	*base;
	struct probe_env	 env;
	const struct probe_ops	*ops;
	void			*conf;
	struct probe_run	 run;
	struct probe_outcome	 out;
	int			 nreports;
	int			 own_base;
};

/* A fresh loop and a fresh conf of the kind. */
void	pu_init(struct pu *, const struct probe_ops *);
/* The same on another pu's loop, as probes share lbagent's. */
void	pu_init_on(struct pu *, const struct probe_ops *, struct event_base *);
/* Frees the conf, the kind's keep and the loop if its own. */
void	pu_done(struct pu *);

/* conf_set that must succeed / must fail (returns the reason). */
void		 pu_set(struct pu *, const char *key, const char *value);
const char	*pu_set_bad(struct pu *, const char *key, const char *value);
void		 pu_check(struct pu *);
const char	*pu_check_bad(struct pu *);

/* Starts a run; it may report at once. */
void	pu_start(struct pu *);
/* Runs the loop until the run reports; fails after limit_ms. */
const struct probe_outcome *pu_wait(struct pu *, int64_t limit_ms);
/* pu_start, then pu_wait. */
const struct probe_outcome *pu_run(struct pu *, int64_t limit_ms);
/* Runs the loop for about ms (whatever happens in between). */
void	pu_loop_ms(struct pu *, int64_t ms);
/* Runs the loop until no event is left on it; fails after limit_ms. */
void	pu_drain(struct pu *, int64_t limit_ms);
/* Cancels the run in flight, as the scheduler does at the timeout. */
void	pu_cancel(struct pu *);

/* Descriptors open in this process. */
int	pu_count_fds(void);
/* Children of this process, and how many of them are zombies. */
int	pu_count_children(int *zombies);
/* Whether pid is alive: exists and is neither a zombie nor dead. */
int	pu_alive(pid_t);
/* Waits (polling, at most limit_ms) until pid is no longer alive. */
int	pu_wait_dead(pid_t, int64_t limit_ms);

#endif
