/*
 * A reload: probes with the same name and settings keep running with
 * their state, services of the same name keep what they lived through;
 * the rest is built as at start. Out of memory leaves everything as it
 * was.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/lbkeys.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/peers.h"
#include "lbagent/daemon/scheduler.h"

#include "agent_impl.h"

/* The old probe with pc's name and settings, not yet taken; or -1. */
static ssize_t
same_probe(struct probe **old, size_t n, const bool *taken,
    const struct probe_conf *pc)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		const struct probe_conf *o = scheduler_probe_conf(old[i]);

		if (!taken[i] && strcmp(o->name, pc->name) == 0 &&
		    strcmp(o->signature, pc->signature) == 0)
			return (ssize_t)i;
	}
	return -1;
}

/* Services of the same name keep what they lived through; -> carried. */
static size_t
carry_services(struct agent *a, struct svc *olds, size_t nolds)
{
	size_t	i, k, carried = 0;

	for (i = 0; i < a->nsvcs; i++) {
		for (k = 0; k < nolds; k++) {
			if (strcmp(olds[k].s.name, a->svcs[i].s.name) == 0 &&
			    olds[k].s.keys != NULL) {
				service_carry_over(&a->svcs[i].s, &olds[k].s);
				agent_capacity_carry(&a->svcs[i], &olds[k]);
				a->svcs[i].own = olds[k].own;
				carried++;
				break;
			}
		}
	}
	for (i = 0; i < nolds; i++)
		if (olds[i].s.keys != NULL && lbkeys_owing(olds[i].s.keys) > 0)
			log_warnx("reload: service %s is gone; the restore words "
			    "it owed %zu load balancer(s) will not be sent",
			    olds[i].s.name, lbkeys_owing(olds[i].s.keys));
	return carried;
}

/* One reload under way: the old probes and services, and the new. */
struct reload {
	const struct config	 *cfg, *old;
	struct probe		**oldp, **newp;
	struct svc		 *olds;
	size_t			  noldp, nolds;
	size_t			  kept;		/* probes kept with their state */
	bool			 *taken;	/* oldp[j] went on as a new one */
	bool			 *fresh;	/* newp[i] was created */
};

/* Each configured probe: the running one of the same settings, or new. */
static int
match_probes(struct agent *a, struct reload *r)
{
	size_t	i;
	ssize_t	j;

	for (i = 0; i < r->cfg->nprobes; i++) {
		const struct probe_conf *pc = &r->cfg->probes[i];

		if ((j = same_probe(r->oldp, r->noldp, r->taken, pc)) >= 0) {
			/*
			 * Same settings: it keeps running, with its state and
			 * the kind's settings it holds (a run in flight may
			 * point into them); it takes pc once nothing can fail.
			 */
			r->newp[i] = r->oldp[j];
			r->taken[j] = true;
			r->kept++;
		} else if ((r->newp[i] = scheduler_probe_new(pc, a->env,
		    agent_probe_ran, a)) == NULL)
			return -1;
		else
			r->fresh[i] = true;
	}
	return 0;
}

/* The services, built as at start over the new probes; -1: as they were. */
static int
build_services(struct agent *a, struct reload *r)
{
	a->cfg = r->cfg;
	a->probes = r->newp;
	a->nprobes = r->cfg->nprobes;
	a->svcs = NULL;
	if (agent_create_services(a) == -1) {
		agent_free_services(a->svcs, a->nsvcs);
		a->cfg = r->old;
		a->probes = r->oldp;
		a->nprobes = r->noldp;
		a->svcs = r->olds;
		a->nsvcs = r->nolds;
		return -1;
	}
	return 0;
}

/*
 * Nothing can fail from here: the kept probes take their new settings,
 * the services what they carry over, the rest of the old goes, the new
 * probes start. Returns the services kept.
 */
static size_t
commit_reload(struct agent *a, struct reload *r)
{
	size_t	i, carried;

	for (i = 0; i < a->nprobes; i++)
		if (!r->fresh[i])
			scheduler_probe_set_conf(a->probes[i],
			    &r->cfg->probes[i]);
	carried = carry_services(a, r->olds, r->nolds);
	agent_free_services(r->olds, r->nolds);
	for (i = 0; i < r->noldp; i++)
		if (!r->taken[i])
			scheduler_probe_free(r->oldp[i]);
	free(r->oldp);
	for (i = 0; i < a->nprobes; i++)
		if (r->fresh[i])
			scheduler_probe_start(a->probes[i]);
	return carried;
}

/* The guard's sources follow; a failure leaves the old ones asking. */
static void
reload_peers(struct agent *a, const struct config *cfg)
{
	bool	pfailed;

	if (a->peers != NULL)
		a->peers = peers_reload(a->peers, cfg, &pfailed);
	else
		a->peers = peers_new(a->base, a->env->curl, cfg, agent_peers_changed,
		    a, &pfailed);
	if (pfailed)
		log_warnx("reload: out of memory for the peer guard's sources; "
		    "it goes on with the ones it had");
}

int
agent_reload(struct agent *a, const struct config *cfg,
    const struct config *old)
{
	struct reload	 r = { cfg, old, a->probes, NULL, a->svcs, a->nprobes,
			    a->nsvcs, 0, NULL, NULL };
	size_t		 i, carried;

	a->generation++;	/* services, probes and names may change */
	r.newp = calloc(cfg->nprobes ? cfg->nprobes : 1, sizeof(*r.newp));
	r.taken = calloc(r.noldp ? r.noldp : 1, sizeof(*r.taken));
	r.fresh = calloc(cfg->nprobes ? cfg->nprobes : 1, sizeof(*r.fresh));
	if (r.newp == NULL || r.taken == NULL || r.fresh == NULL ||
	    match_probes(a, &r) == -1 || build_services(a, &r) == -1)
		goto fail;
	carried = commit_reload(a, &r);
	log_notice("reload: %zu probe(s) kept with their state, %zu new, %zu "
	    "gone; %zu service(s) kept, %zu new", r.kept, a->nprobes - r.kept,
	    r.noldp - r.kept, carried, a->nsvcs - carried);
	free(r.taken);
	free(r.fresh);
	reload_peers(a, cfg);
	agent_unknown_names_reload(a);
	agent_read_markers(a, false);
	agent_schedule_save(a);
	return 0;
fail:
	/* Nothing changed: the kept probes never left the old settings. */
	for (i = 0; r.newp != NULL && r.fresh != NULL && i < cfg->nprobes; i++)
		if (r.fresh[i])
			scheduler_probe_free(r.newp[i]);
	free(r.newp);
	free(r.taken);
	free(r.fresh);
	log_errx("reload: out of memory; keeping the running configuration");
	return -1;
}
