/*
 * The agent's state file: saved after a decision, soon after a window
 * moved, at once when a claim starts or ends, retried while it fails;
 * loaded once at start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lbagent/core/units.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"

#include "agent_impl.h"

#define SAVE_RETRY_MS	1000	/* after a failed save (disk full, no fds) */
#define SAVE_SOON_MS	1000	/* coalesces saves of windows under way */
#define PERSIST_LOG_MS	60000	/* an error line while saves keep failing */

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
	for (i = 0; i < a->nsvcs; i++)
		state_service_of(&ss[i], &a->svcs[i].s);
	return ss;
}

/*
 * Why a save failed, in words. A state_dir gone since the start is made
 * again first (0: it was, the save may be tried again).
 */
static int
save_failure(struct agent *a, int err, char *buf, size_t size)
{
	const char	*dir = a->cfg->state_dir;

	if (err == ENOENT || err == ENOTDIR) {
		if (mkdir(dir, 0755) == 0)
			return 0;
		snprintf(buf, size, "state_dir %s is missing and cannot be "
		    "created: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(buf, size, "cannot write %s/%s: %s", dir, STATE_FILE,
	    strerror(err));
	return -1;
}

/*
 * Saving fails: replies go on. An error when it starts and every minute
 * while it lasts, counted and shown in the status.
 */
static void
persist_failed(struct agent *a, const char *why)
{
	struct agent_persistence	*p = &a->persist;
	int64_t				 now = clock_now_ms();
	char				 d[32];

	p->failures++;
	a->generation++;
	snprintf(p->reason, sizeof(p->reason), "%s", why);
	if (!p->failing) {
		p->failing = true;
		p->since_ms = now;
		p->since_wall_ms = clock_wall_ms();
		a->persist_log_ms = now;
		log_errx("cannot save state: %s; still answering checks, but a "
		    "restart now forgets what the load balancers were told "
		    "(retrying every %d ms)", why, SAVE_RETRY_MS);
		return;
	}
	if (now - a->persist_log_ms < PERSIST_LOG_MS)
		return;
	a->persist_log_ms = now;
	units_format_age((uint64_t)(now - p->since_ms), d, sizeof(d));
	log_errx("still cannot save state after %s: %s (%llu failed saves)", d,
	    why, (unsigned long long)p->failures);
}

void
agent_save_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent		*a = arg;
	struct state_service	*ss;
	struct state_clock	 c;
	struct timeval		 retry = { SAVE_RETRY_MS / 1000,
				    (SAVE_RETRY_MS % 1000) * 1000 };
	char			 why[sizeof(a->persist.reason)], d[32];
	int			 rc, err, tries;

	(void)fd;
	(void)what;
	/* This save covers whatever was waiting to be saved soon. */
	if (a->soon_ev != NULL)
		evtimer_del(a->soon_ev);
	state_clock_now(&c, a->boot_id);
	if ((ss = state_services(a)) == NULL) {
		rc = -1;
		snprintf(why, sizeof(why), "out of memory");
	} else {
		/* A second try when the directory had to be made again. */
		for (tries = 0, rc = -1; tries < 2 && rc == -1; tries++) {
			rc = state_save(a->cfg->state_dir, a->incarnation, ss,
			    a->nsvcs, &c);
			err = errno;
			if (rc == -1 && save_failure(a, err, why,
			    sizeof(why)) == -1)
				break;
		}
		free(ss);
	}
	if (rc == -1) {
		persist_failed(a, why);
		a->save_failed = true;
		/* What is owed must reach the disk even if nothing else changes. */
		if (a->retry_ev != NULL)
			evtimer_add(a->retry_ev, &retry);
	} else if (a->save_failed) {
		units_format_age((uint64_t)(clock_now_ms() - a->persist.since_ms),
		    d, sizeof(d));
		log_notice("%s/%s: saved again, after %s of failing",
		    a->cfg->state_dir, STATE_FILE, d);
		a->save_failed = false;
		a->persist.failing = false;
		a->generation++;
	}
}

void
agent_persistence(const struct agent *a, struct agent_persistence *p)
{
	*p = a->persist;
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
	/*
	 * The old lines, so that the change at start-up is logged; and what
	 * HAProxy holds, which in shadow mode is not the engine's state.
	 */
	for (i = 0; i < a->nsvcs; i++)
		state_service_resume(&a->svcs[i].s, &ss[i]);
	free(ss);
}
