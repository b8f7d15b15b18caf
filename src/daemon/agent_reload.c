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

int
agent_reload(struct agent *a, const struct config *cfg,
    const struct config *old)
{
	struct probe	**oldp = a->probes, **newp;
	struct svc	 *olds = a->svcs;
	size_t		  noldp = a->nprobes, nolds = a->nsvcs, i, kept = 0;
	size_t		  carried;
	bool		 *taken, *fresh, pfailed;
	ssize_t		  j;

	a->generation++;	/* services, probes and names may change */
	newp = calloc(cfg->nprobes ? cfg->nprobes : 1, sizeof(*newp));
	taken = calloc(noldp ? noldp : 1, sizeof(*taken));
	fresh = calloc(cfg->nprobes ? cfg->nprobes : 1, sizeof(*fresh));
	if (newp == NULL || taken == NULL || fresh == NULL)
		goto fail;
	for (i = 0; i < cfg->nprobes; i++) {
		const struct probe_conf *pc = &cfg->probes[i];

		if ((j = same_probe(oldp, noldp, taken, pc)) >= 0) {
			/*
			 * Same settings: it keeps running, with its state and
			 * the kind's settings it holds (a run in flight may
			 * point into them); it takes pc once nothing can fail.
			 */
			newp[i] = oldp[j];
			taken[j] = true;
			kept++;
		} else if ((newp[i] = scheduler_probe_new(pc, a->env,
		    agent_probe_ran, a)) == NULL)
			goto fail;
		else
			fresh[i] = true;
	}
	/* The services, built as at start over the new probes. */
	a->cfg = cfg;
	a->probes = newp;
	a->nprobes = cfg->nprobes;
	a->svcs = NULL;
	if (agent_create_services(a) == -1) {
		agent_free_services(a->svcs, a->nsvcs);
		a->cfg = old;
		a->probes = oldp;
		a->nprobes = noldp;
		a->svcs = olds;
		a->nsvcs = nolds;
		goto fail;
	}
	for (i = 0; i < a->nprobes; i++)
		if (!fresh[i])
			scheduler_probe_set_conf(a->probes[i], &cfg->probes[i]);
	carried = carry_services(a, olds, nolds);
	agent_free_services(olds, nolds);
	for (i = 0; i < noldp; i++)
		if (!taken[i])
			scheduler_probe_free(oldp[i]);
	free(oldp);
	for (i = 0; i < a->nprobes; i++)
		if (fresh[i])
			scheduler_probe_start(a->probes[i]);
	log_notice("reload: %zu probe(s) kept with their state, %zu new, %zu "
	    "gone; %zu service(s) kept, %zu new", kept, a->nprobes - kept,
	    noldp - kept, carried, a->nsvcs - carried);
	free(taken);
	free(fresh);
	/* The guard's sources follow; a failure leaves the old ones asking. */
	if (a->peers != NULL)
		a->peers = peers_reload(a->peers, cfg, &pfailed);
	else
		a->peers = peers_new(a->base, a->env->curl, cfg, agent_peers_changed,
		    a, &pfailed);
	if (pfailed)
		log_warnx("reload: out of memory for the peer guard's sources; "
		    "it goes on with the ones it had");
	agent_read_markers(a, false);
	agent_schedule_save(a);
	return 0;
fail:
	/* Nothing changed: the kept probes never left the old settings. */
	for (i = 0; newp != NULL && fresh != NULL && i < cfg->nprobes; i++)
		if (fresh[i])
			scheduler_probe_free(newp[i]);
	free(newp);
	free(taken);
	free(fresh);
	log_errx("reload: out of memory; keeping the running configuration");
	return -1;
}
