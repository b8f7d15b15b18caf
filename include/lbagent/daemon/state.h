/*
 * The state file, state_dir/state.json: what lbagent claimed and what it
 * owes each load balancer, per service, so a restart mid-release still
 * delivers every restore word. Written atomically; a bad file is moved
 * aside, never fatal.
 */
#ifndef LBAGENT_STATE_H
#define LBAGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/decision.h"
#include "lbagent/core/lbkeys.h"
#include "lbagent/core/service.h"
#include "lbagent/core/transition.h"

#define STATE_VERSION	1

/* One service's persisted part; the default service is named "". */
struct state_service {
	const char	*name;
	bool		 has_decision;
	struct decision	 decision;	/* the last one replied */
	/*
	 * What HAProxy holds from lbagent's automation: in shadow mode not
	 * the engine's state, which moves on without being told.
	 */
	bool		 has_held;
	struct decision	 held;
	int64_t		 held_since_ms;	/* monotonic, as the service keeps it */
	int64_t		 since_wall_ms;	/* the decision's, wall; 0: unknown */
	struct lbkeys	*keys;
	struct transition *tr;		/* may be NULL: not persisted */
	struct history	*history;	/* may be NULL */
};

/* What of s the state file saves; ss points into s (keys, tr, history). */
void		 state_service_of(struct state_service *ss, struct service *s);
/*
 * After state_load: the decision replied before the restart and what
 * HAProxy held, into s, whose keys, engine and history were loaded in place.
 */
void		 state_service_resume(struct service *s,
		    const struct state_service *ss);

#define BOOT_ID_MAX	40

/*
 * The clocks at a load or save: monotonic for what the process measures,
 * wall for people, boot time and the kernel's boot id to tell how long
 * lbagent was stopped without trusting a wall clock that may jump.
 */
struct state_clock {
	int64_t	now_ms;
	int64_t	wall_ms;
	int64_t	boot_ms;
	char	boot_id[BOOT_ID_MAX];	/* "" when unknown */
};

/* The clocks now; boot_id as read once by state_boot_id(). */
void		 state_clock_now(struct state_clock *, const char *boot_id);
/* Reads /proc/sys/kernel/random/boot_id; "" when it cannot. */
void		 state_boot_id(char buf[BOOT_ID_MAX]);

/* How long lbagent was stopped, as far as anyone can tell. */
struct state_resume {
	int64_t	gap_ms;		/* >= 0 */
	bool	same_boot;	/* the machine kept running meanwhile */
};

/*
 * The gap between a save (its wall time, boot time and boot id) and now:
 * by boot time within one boot, where a wall clock that jumped changes
 * nothing; by the wall clock across a reboot, never negative.
 */
struct state_resume state_gap(int64_t saved_wall_ms, int64_t saved_boot_ms,
		    const char *saved_boot_id, const struct state_clock *now);

enum state_load_result {
	STATE_LOADED,
	STATE_NONE,	/* no file: a first start */
	STATE_CORRUPT,	/* moved aside to state.json.corrupt; starting fresh */
};

/*
 * Loads dir/state.json into the services named in svcs (their keys must
 * be empty); services the file has and svcs lacks are dropped with a
 * notice. On STATE_CORRUPT everything is left empty and the reason logged.
 */
enum state_load_result state_load(const char *dir, uint64_t *incarnation,
		    struct state_service *svcs, size_t n,
		    const struct state_clock *, struct state_resume *);

/* Writes dir/state.json atomically (temp file, fsync, rename). 0 or -1. */
int		 state_save(const char *dir, uint64_t incarnation,
		    const struct state_service *svcs, size_t n,
		    const struct state_clock *);

#endif
