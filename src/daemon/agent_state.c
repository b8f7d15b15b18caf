/*
 * The agent's state file: saved after a decision, soon after a window
 * moved, at once when a claim starts or ends, retried while it fails;
 * loaded once at start.
 */
#include <stdlib.h>

#include "lbagent/core/units.h"
#include "lbagent/daemon/clock.h"
#include "lbagent/daemon/log.h"

#include "agent_impl.h"

#define SAVE_RETRY_MS	1000	/* after a failed save (disk full, no fds) */
#define SAVE_SOON_MS	1000	/* coalesces saves of windows under way */

void
agent_schedule_save(struct agent *a)
{
	/* After this callback returns: never an fsync inside a reply. */
	event_active(a->save_ev, EV_TIMEOUT, 0);
}

/*
 * For windows under way (a target that changed, a ramp step): saved
 * within a second, so a flapping probe costs one fsync a second at most.
 */
void
agent_schedule_save_soon(struct agent *a)
{
	struct timeval	tv = { SAVE_SOON_MS / 1000, (SAVE_SOON_MS % 1000) * 1000 };

	if (!evtimer_pending(a->soon_ev, NULL))
		evtimer_add(a->soon_ev, &tv);
}

/* The services as the state file sees them; NULL when out of memory. */
static struct state_service *
state_services(const struct agent *a)
{
	struct state_service	*ss;
	size_t			 i;

	if ((ss = calloc(a->nsvcs, sizeof(*ss))) == NULL)
		return NULL;
	for (i = 0; i < a->nsvcs; i++) {
		struct service *s = &a->svcs[i].s;

		ss[i].name = s->name;
		ss[i].has_decision = s->has_decision;
		ss[i].decision = s->decision;
		ss[i].keys = s->keys;
		ss[i].tr = s->tr;
		ss[i].history = &s->history;
	}
	return ss;
}

void
agent_save_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent		*a = arg;
	struct state_service	*ss;
	struct state_clock	 c;
	struct timeval		 retry = { SAVE_RETRY_MS / 1000,
				    (SAVE_RETRY_MS % 1000) * 1000 };
	int			 rc;

	(void)fd;
	(void)what;
	/* This save covers whatever was waiting to be saved soon. */
	if (a->soon_ev != NULL)
		evtimer_del(a->soon_ev);
	state_clock_now(&c, a->boot_id);
	if ((ss = state_services(a)) == NULL)
		rc = -1;
	else {
		rc = state_save(a->cfg->state_dir, a->incarnation, ss, a->nsvcs,
		    &c);
		free(ss);
	}
	if (rc == -1) {
		if (!a->save_failed)
			log_warn("%s/%s: cannot save state; retrying every %d ms",
			    a->cfg->state_dir, STATE_FILE, SAVE_RETRY_MS);
		a->save_failed = true;
		/* What is owed must reach the disk even if nothing else changes. */
		if (a->retry_ev != NULL)
			evtimer_add(a->retry_ev, &retry);
	} else if (a->save_failed) {
		log_notice("%s/%s: saved again", a->cfg->state_dir, STATE_FILE);
		a->save_failed = false;
	}
}

void
agent_load_state(struct agent *a)
{
	struct state_service	*ss;
	struct state_clock	 c;
	struct state_resume	 r;
	char			 gap[32], wb[24];
	size_t			 i;

	if ((ss = state_services(a)) == NULL)
		return;
	state_clock_now(&c, a->boot_id);
	switch (state_load(a->cfg->state_dir, &a->incarnation, ss, a->nsvcs,
	    &c, &r)) {
	case STATE_LOADED:
		units_format_age((uint64_t)r.gap_ms, gap, sizeof(gap));
		log_notice("%s/%s: resumed after %s stopped (%s): last reply "
		    "was %s", a->cfg->state_dir, STATE_FILE, gap, r.same_boot ?
		    "same boot: windows of passing kept running" :
		    "after a reboot or with no boot id: windows of passing "
		    "resume where they were", ss[0].has_decision ?
		    decision_words(&ss[0].decision, wb) : "none");
		break;
	case STATE_NONE:
		log_notice("%s/%s: none yet: first start", a->cfg->state_dir,
		    STATE_FILE);
		break;
	case STATE_CORRUPT:
		break;
	}
	/* The old lines, so that the change at start-up is logged. */
	for (i = 0; i < a->nsvcs; i++)
		if (ss[i].has_decision)
			service_resume(&a->svcs[i].s, &ss[i].decision);
	free(ss);
}
