/*
 * The probe scheduler: runs each configured probe on its interval
 * (jittered), enforces its timeout, applies fall/rise, and tells its owner
 * after every run. What the probe counts as is observed state, kept apart
 * from its settings (struct probe_conf).
 */
#ifndef LBAGENT_SCHEDULER_H
#define LBAGENT_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/window.h"
#include "lbagent/core/settings.h"
#include "lbagent/daemon/probe_state.h"
#include "lbagent/probes/probe.h"

struct probe;

/* Called after every completed run; counted_changed tells transitions. */
typedef void (*scheduler_ran_fn)(struct probe *, bool counted_changed,
	    void *arg);

struct probe	*scheduler_probe_new(const struct probe_conf *,
		    const struct probe_env *, scheduler_ran_fn, void *arg);
/* Cancels a run in flight (never reported) and frees. */
void		 scheduler_probe_free(struct probe *);
/* The first run now, then every interval. */
int		 scheduler_probe_start(struct probe *);

/*
 * A reload: the same settings in a new configuration. The probe goes on
 * with the kind's settings it holds since scheduler_probe_new (a run in
 * flight may point into them), not conf->kconf, their twin.
 */
void				 scheduler_probe_set_conf(struct probe *,
				    const struct probe_conf *);
const struct probe_conf	*scheduler_probe_conf(const struct probe *);
const struct probe_state *scheduler_probe_state(const struct probe *);

/*
 * fall/rise over one outcome, then what the probe counts as with its
 * window; exposed for unit tests. Returns true when what the probe counts
 * as changed. unknown_counts: the check's own
 * unknown (from_check) is a bad run (on_unknown is not ignore); any other
 * unknown never counts.
 */
bool		 scheduler_state_apply(struct probe_state *, uint64_t fall,
		    uint64_t rise, bool unknown_counts,
		    const struct probe_outcome *);
/*
 * counted from run_counted and the window's verdict: the window can only
 * make it worse (ok to warn or crit, warn to crit), never hide what the
 * runs say. Returns true when counted changed.
 */
bool		 scheduler_state_combine(struct probe_state *);

#endif
