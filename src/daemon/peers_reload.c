/*
 * The peer guard's module across a reload (what each source learnt stays
 * learnt), and what the status API reads of it.
 */
#include <stdlib.h>
#include <string.h>

#include "peers_impl.h"

/* The same address, credentials included: what a fetch would ask. */
static bool
same_source(const struct fetch_source *a, const struct fetch_source *b)
{
	return a->kind == b->kind && strcmp(a->url, b->url) == 0 &&
	    strcmp(a->path, b->path) == 0 && strcmp(a->host, b->host) == 0 &&
	    strcmp(a->port, b->port) == 0;
}

/*
 * What a source at the same address learned stays learned: the full
 * address, credentials included (the shown text has them redacted, and
 * cut), and each old source's data to one new source at most.
 */
static void
take_peers(struct peers *ps, struct peers *old)
{
	size_t	i, j;

	for (i = 0; i < ps->npeers; i++)
		for (j = 0; j < old->npeers; j++) {
			struct peer_source *n = &ps->peers[i], *o = &old->peers[j];
			struct asked *oq = &old->peers_asked[j];

			if (oq->owner == NULL ||
			    !same_source(&ps->peers_asked[i].src, &oq->src))
				continue;
			n->answered = peer_view_peer_ok(o);
			memcpy(n->error, o->error, sizeof(n->error));
			n->ans = o->ans;
			memset(&o->ans, 0, sizeof(o->ans));
			n->took_ms = o->took_ms;
			n->seen_ms = o->seen_ms;
			n->live = o->live;
			/* A reload accepts whoever answers there now. */
			snprintf(n->pinned, sizeof(n->pinned), "%s",
			    n->answered ? n->ans.node_id : "");
			/* Taken; old is freed below, nothing reads owner again. */
			o->answered = false;
			oq->owner = NULL;
			break;
		}
}

/* The same for the load balancers: their tables as last read. */
static void
take_lbs(struct peers *ps, struct peers *old)
{
	size_t	i, j;

	for (i = 0; i < ps->nlbs; i++)
		for (j = 0; j < old->nlbs; j++) {
			struct lb_source *n = &ps->lbs[i], *o = &old->lbs[j];
			struct asked *oq = &old->lbs_asked[j];

			if (oq->owner == NULL ||
			    !same_source(&ps->lbs_asked[i].src, &oq->src))
				continue;
			n->answered = peer_view_lb_ok(o);
			memcpy(n->error, o->error, sizeof(n->error));
			/* A backend the new settings add is "not read" in
			 * it until the round that follows at once. */
			n->table = o->table;
			n->took_ms = o->took_ms;
			n->seen_ms = o->seen_ms;
			o->table = NULL;
			o->answered = false;
			oq->owner = NULL;
			break;
		}
}

/* A service kept by name keeps when it was last served (alone_grace). */
static void
take_served(struct peers *ps, const struct peers *old)
{
	size_t	i, j;

	for (i = 0; i < ps->nsvcs; i++)
		for (j = 0; j < old->nsvcs; j++)
			if (strcmp(ps->svcs[i].name, old->svcs[j].name) == 0)
				ps->svcs[i].view.served_ms =
				    old->svcs[j].view.served_ms;
}

/* A module built for cfg on old's loop, with old's rounds; NULL: failed. */
static struct peers *
reload_new(const struct peers *old, const struct config *cfg)
{
	struct peers	*ps;

	if ((ps = calloc(1, sizeof(*ps))) == NULL ||
	    (ps->timer = evtimer_new(old->base, peers_timer_cb, ps)) == NULL ||
	    peers_build(ps, cfg) == -1) {
		if (ps != NULL) {
			peers_sources_free(ps);
			if (ps->timer != NULL)
				event_free(ps->timer);
			free(ps);
		}
		return NULL;
	}
	ps->base = old->base;
	ps->curl = old->curl;
	ps->changed = old->changed;
	ps->arg = old->arg;
	ps->done_ms = old->done_ms;
	ps->whole_ms = old->whole_ms;
	ps->round_ms = old->done_ms;
	ps->pace = old->pace;
	ps->estimates = old->estimates;
	ps->seed = old->seed;
	ps->watched_ms = old->watched_ms;
	ps->rounds = old->rounds;
	return ps;
}

struct peers *
peers_reload(struct peers *old, const struct config *cfg, bool *failed)
{
	struct peers	*ps;

	if (old == NULL)
		return NULL;	/* the caller creates one with peers_new */
	if (!cfg->peers.on) {
		peers_free(old);
		*failed = false;
		return NULL;
	}
	if ((ps = reload_new(old, cfg)) == NULL) {
		*failed = true;
		return old;
	}
	*failed = false;
	take_peers(ps, old);
	take_lbs(ps, old);
	take_served(ps, old);
	peers_free(old);
	/* Verdicts under the new settings from what is known, then ask. */
	if (ps->done_ms != NO_TIME)
		peers_judge_all(ps);
	ps->whole_due = true;
	peers_soon(ps);
	return ps;
}

size_t
peers_npeers(const struct peers *ps)
{
	return ps->npeers;
}

const struct peer_source *
peers_peer(const struct peers *ps, size_t i)
{
	return &ps->peers[i];
}

const struct peer_verdict *
peers_verdict(const struct peers *ps, size_t i, size_t j)
{
	return &ps->svcs[i].verdicts[j];
}

int64_t
peers_round_ms(const struct peers *ps)
{
	return ps->done_ms;
}

bool
peers_needed(const struct peers *ps)
{
	return ps->pace != PACE_NONE;
}

enum pace
peers_pace(const struct peers *ps)
{
	return ps->pace;
}

uint64_t
peers_rounds(const struct peers *ps)
{
	return ps->rounds;
}

size_t
peers_nlbs(const struct peers *ps)
{
	return ps->nlbs;
}

const struct lb_source *
peers_lb(const struct peers *ps, size_t i)
{
	return &ps->lbs[i];
}

bool
peers_this_node_stats(const struct peers *ps, size_t i, size_t j,
    struct lb_server_sample *s)
{
	const struct lb_source		*lb = &ps->lbs[j];
	const struct transition_conf	*tc = ps->svcs[i].tc;
	struct hastats_row		 row;
	const char			*why;

	memset(s, 0, sizeof(*s));
	s->stot = s->responses = -1;
	s->scur = s->qcur = s->rtime_ms = s->qtime_ms = -1;
	s->at_ms = s->round_ms = NO_TIME;
	if (!peer_view_lb_ok(lb))
		return false;
	s->at_ms = lb->seen_ms;
	s->round_ms = lb->seen_ms - lb->took_ms;
	if (tc->backend[0] == '\0' ||
	    hastats_table_find(lb->table, tc->backend, config_server(ps->cfg,
	    tc), &row, &why) != 1)
		return false;
	s->found = true;
	s->stot = row.stot;
	s->responses = row.responses;
	s->scur = row.scur;
	s->qcur = row.qcur;
	s->rtime_ms = row.rtime_ms;
	s->qtime_ms = row.qtime_ms;
	return true;
}
