/*
 * The peer guard's rounds: other nodes' lbagent and the load balancers
 * asked on the loop; their answers judged by peer_view.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/core/hastats_reader.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/fetch.h"
#include "lbagent/daemon/peers.h"

#define NO_TIME		INT64_MIN

/* A source as the rounds ask it: its address and the fetch in flight. */
struct asked {
	struct peers		*owner;		/* NULL: taken by a reload */
	struct fetch_source	 src;
	struct fetch		*fetch;		/* in flight */
	struct hastats_reader	*reader;	/* a load balancer's, in flight */
	size_t			 i;		/* in peers or lbs */
};

_Static_assert(sizeof(((struct fetch_source *)0)->text) == PEERS_TEXT_MAX,
    "a source is shown as fetch.c writes it");

struct svc_guard {
	char			 name[CONFIG_NAME_MAX + 1];
	const struct transition_conf *tc;
	struct peer_view	 view;
	struct peer_verdict	*verdicts;	/* one per peer */
};

struct peers {
	struct event_base	*base;
	struct curl_loop	*curl;
	const struct config	*cfg;
	void			(*changed)(void *);
	void			*arg;
	struct peer_source	*peers;		/* what they answered */
	struct asked		*peers_asked;	/* how they are asked */
	size_t			 npeers;
	struct lb_source	*lbs;
	struct asked		*lbs_asked;
	size_t			 nlbs;
	struct svc_guard	*svcs;
	size_t			 nsvcs;
	const char		**backends;	/* every service's, once: the
						   rows read (in cfg) */
	size_t			 nbackends;
	uint64_t		 timeout_ms;	/* the longest any service allows */
	/*
	 * To the Runtime API (HTTP sources get the stats page's CSV): the
	 * backends' servers only, then their configured weights, which
	 * 2.6's CSV does not have (hastats_request).
	 */
	char			 request[HASTATS_REQUEST_MAX];
	bool			 in_flight, again;
	bool			 kick;		/* the timer's round is due anyway */
	enum pace		 pace;		/* the services want */
	uint32_t		 seed;		/* the jitter's */
	uint64_t		 due_in_ms;	/* the scheduled round's wait */
	int64_t			 watched_ms;	/* the detail was last read */
	uint64_t		 rounds;	/* begun, since start */
	size_t			 waiting;	/* answers the round waits for */
	int64_t			 round_ms;	/* the round in flight's start */
	int64_t			 done_ms;	/* the last answered round's start */
	struct event		*timer;
};

static void	round_start(struct peers *);

/*
 * How often rounds go on (0: they do not): at the pace a service wants
 * (fast, a decision waiting; steady, a node out or held out), at least
 * steady while someone reads the detail. A node in and healthy asks
 * nobody.
 */
static uint64_t
wanted(const struct peers *ps)
{
	return pace_interval_ms(ps->pace, ps->watched_ms != NO_TIME &&
	    clock_now_ms() - ps->watched_ms < PEERS_WATCH_MS,
	    ps->cfg->peers.interval_ms, ps->cfg->peers.steady_interval_ms);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peers	*ps = arg;

	(void)fd;
	(void)what;
	if (ps->kick || wanted(ps))
		round_start(ps);
}

/* The next round at the pace's interval (jittered) from the last start. */
static void
schedule(struct peers *ps)
{
	int64_t		in;
	struct timeval	tv;

	ps->due_in_ms = pace_delay_ms(wanted(ps), &ps->seed);
	in = ps->round_ms + (int64_t)ps->due_in_ms - clock_now_ms();
	if (in < 0)
		in = 0;
	tv.tv_sec = (time_t)(in / 1000);
	tv.tv_usec = (suseconds_t)(in % 1000 * 1000);
	evtimer_add(ps->timer, &tv);
}

/* The first round of a module: from the loop, not from its creator. */
static void
soon(struct peers *ps)
{
	struct timeval	tv = { 0, 0 };

	ps->kick = true;
	evtimer_add(ps->timer, &tv);
}

/* Verdicts for every service, once every source has answered or not. */
static void
judge_all(struct peers *ps)
{
	size_t	i;

	for (i = 0; i < ps->nsvcs; i++)
		peer_view_aggregate(ps->peers, ps->npeers, ps->lbs, ps->nlbs,
		    ps->svcs[i].name, ps->svcs[i].tc, ps->cfg->node_id,
		    ps->round_ms, ps->svcs[i].verdicts, &ps->svcs[i].view);
}

/*
 * Each peer's liveness, one round more: a good answer is a valid one
 * from the node first seen there (information only; judging ignores it).
 */
static void
count_liveness(struct peers *ps)
{
	size_t	i;

	for (i = 0; i < ps->npeers; i++) {
		struct peer_source	*p = &ps->peers[i];
		bool			 good = peer_view_peer_ok(p) &&
					    (p->pinned[0] == '\0' ||
					    strcmp(p->pinned, p->ans.node_id) == 0);

		peer_liveness_round(&p->live, good,
		    good ? p->ans.incarnation : -1);
	}
}

static void
round_done(struct peers *ps)
{
	ps->in_flight = false;
	ps->done_ms = ps->round_ms;
	count_liveness(ps);
	judge_all(ps);
	if (ps->again) {
		ps->again = false;
		round_start(ps);
	} else if (wanted(ps))
		schedule(ps);
	ps->changed(ps->arg);
}

static void
peer_done(void *arg, bool ok, const char *body, size_t len, const char *error)
{
	struct asked		*q = arg;
	struct peers		*ps = q->owner;
	struct peer_source	*p = &ps->peers[q->i];
	struct peer_answer	 ans;
	const char		*why;

	q->fetch = NULL;
	p->took_ms = clock_now_ms() - ps->round_ms;
	peer_view_answer_free(&p->ans);
	p->answered = false;
	if (!ok)
		snprintf(p->error, sizeof(p->error), "%s", error);
	else if (peer_view_answer_parse(body, len, &ans, &why) == -1)
		snprintf(p->error, sizeof(p->error), "bad answer: %s", why);
	else {
		p->ans = ans;
		p->answered = true;
		p->error[0] = '\0';
		p->seen_ms = clock_now_ms();
		if (p->pinned[0] == '\0')
			snprintf(p->pinned, sizeof(p->pinned), "%s", ans.node_id);
	}
	if (--ps->waiting == 0)
		round_done(ps);
}

/* A piece of a load balancer's answer, read as it comes. */
static int
lb_piece(void *arg, const char *data, size_t len, const char **why)
{
	struct asked	*q = arg;

	return hastats_reader_feed(q->reader, data, len, why);
}

static void
lb_done(void *arg, bool ok, const char *body, size_t len, const char *error)
{
	struct asked		*q = arg;
	struct peers		*ps = q->owner;
	struct lb_source	*lb = &ps->lbs[q->i];
	struct hastats_table	*t = NULL;
	int64_t			 now = clock_now_ms();

	(void)body;
	(void)len;
	q->fetch = NULL;
	/* One reading: seen - took is the round's start, exactly. */
	lb->took_ms = now - ps->round_ms;
	/* Over a limit, the answer is no answer: never a part of one. */
	if (ok && (t = hastats_reader_finish(q->reader, &error)) == NULL)
		ok = false;
	hastats_table_free(lb->table);
	lb->table = t;
	lb->answered = ok;
	if (!ok)
		snprintf(lb->error, sizeof(lb->error), "%s", error);
	else {
		lb->error[0] = '\0';
		lb->seen_ms = now;
	}
	hastats_reader_free(q->reader);
	q->reader = NULL;
	if (--ps->waiting == 0)
		round_done(ps);
}

/* Asks every source at once; the round ends with the last answer. */
static void
round_start(struct peers *ps)
{
	size_t	i;

	evtimer_del(ps->timer);
	ps->kick = false;
	ps->in_flight = true;
	ps->rounds++;
	ps->round_ms = clock_now_ms();
	ps->waiting = 1;	/* until every fetch is started */
	for (i = 0; i < ps->npeers; i++) {
		struct peer_source *p = &ps->peers[i];
		struct asked *q = &ps->peers_asked[i];

		if ((q->fetch = fetch_start(ps->base, ps->curl, &q->src, NULL,
		    ps->timeout_ms, PEERS_ANSWER_MAX, peer_done, q)) != NULL)
			ps->waiting++;
		else {
			peer_view_answer_free(&p->ans);
			p->answered = false;
			snprintf(p->error, sizeof(p->error), "cannot ask (out "
			    "of resources)");
		}
	}
	for (i = 0; i < ps->nlbs; i++) {
		struct lb_source *lb = &ps->lbs[i];
		struct asked *q = &ps->lbs_asked[i];

		hastats_reader_free(q->reader);
		if ((q->reader = hastats_reader_new(ps->backends,
		    ps->nbackends, NULL)) != NULL &&
		    (q->fetch = fetch_start_pieces(ps->base, ps->curl, &q->src,
		    ps->request, ps->timeout_ms, PEERS_CSV_MAX, lb_piece, lb_done,
		    q)) != NULL)
			ps->waiting++;
		else {
			hastats_reader_free(q->reader);
			q->reader = NULL;
			lb->answered = false;
			snprintf(lb->error, sizeof(lb->error), "cannot ask (out "
			    "of resources)");
		}
	}
	if (--ps->waiting == 0)
		round_done(ps);
}

void
peers_ask(struct peers *ps)
{
	if (ps == NULL)
		return;
	if (ps->in_flight)
		ps->again = true;
	else
		round_start(ps);
}

/*
 * Rounds wanted again, none in flight: the next at its time, sooner than
 * the one due when the pace is now faster.
 */
static void
resume(struct peers *ps)
{
	uint64_t	every = wanted(ps);

	if (ps->in_flight || every == 0)
		return;
	if (evtimer_pending(ps->timer, NULL)) {
		if (ps->kick || ps->due_in_ms <= every)
			return;
		evtimer_del(ps->timer);
	}
	schedule(ps);
}

void
peers_need(struct peers *ps, enum pace pace)
{
	if (ps == NULL)
		return;
	ps->pace = pace;
	resume(ps);
}

bool
peers_watch(struct peers *ps)
{
	int64_t	now = clock_now_ms();
	bool	fresh;

	if (ps == NULL)
		return true;
	ps->watched_ms = now;
	fresh = ps->done_ms != NO_TIME && now - ps->done_ms <=
	    (int64_t)ps->cfg->peers.interval_ms;
	/* A detail read gets a round begun within the fast interval. */
	if (!fresh && !ps->in_flight)
		soon(ps);
	else
		resume(ps);
	return fresh;
}

void
peers_view(const struct peers *ps, size_t i, struct peer_view *v)
{
	*v = ps->svcs[i].view;
}

/* The ([peers] or service) settings and name of service i. */
static void
service_of(const struct config *cfg, size_t i, const char **name,
    const struct transition_conf **tc)
{
	*name = i == 0 ? "" : cfg->services[i - 1].name;
	*tc = i == 0 ? &cfg->transitions : &cfg->services[i - 1].transitions;
}

static void
sources_free(struct peers *ps)
{
	size_t	i;

	for (i = 0; ps->peers_asked != NULL && i < ps->npeers; i++)
		if (ps->peers_asked[i].fetch != NULL)
			fetch_cancel(ps->peers_asked[i].fetch);
	for (i = 0; ps->peers != NULL && i < ps->npeers; i++)
		peer_view_answer_free(&ps->peers[i].ans);
	for (i = 0; ps->lbs_asked != NULL && i < ps->nlbs; i++) {
		if (ps->lbs_asked[i].fetch != NULL)
			fetch_cancel(ps->lbs_asked[i].fetch);
		hastats_reader_free(ps->lbs_asked[i].reader);
	}
	for (i = 0; ps->lbs != NULL && i < ps->nlbs; i++)
		hastats_table_free(ps->lbs[i].table);
	for (i = 0; ps->svcs != NULL && i < ps->nsvcs; i++)
		free(ps->svcs[i].verdicts);
	free(ps->peers);
	free(ps->peers_asked);
	free(ps->lbs);
	free(ps->lbs_asked);
	free(ps->svcs);
	free(ps->backends);
	ps->backends = NULL;
	ps->npeers = ps->nlbs = ps->nsvcs = ps->nbackends = 0;
}

void
peers_free(struct peers *ps)
{
	if (ps == NULL)
		return;
	sources_free(ps);
	if (ps->timer != NULL)
		event_free(ps->timer);
	free(ps);
}

/* Reads backend's rows from the load balancers (once, and not ""). */
static void
add_backend(struct peers *ps, const char *backend)
{
	size_t	i;

	if (backend[0] == '\0')
		return;
	for (i = 0; i < ps->nbackends; i++)
		if (strcmp(ps->backends[i], backend) == 0)
			return;
	ps->backends[ps->nbackends++] = backend;
}

/* Builds the sources and services of cfg into an empty module. */
static int
build(struct peers *ps, const struct config *cfg)
{
	const struct config_list	*ag = &cfg->peers.agents;
	const struct config_list	*hx = &cfg->peers.haproxy;
	const struct config_list	*st = &cfg->peers.agent_status;
	const char			*why, *name;
	const struct transition_conf	*tc;
	int64_t				 now = clock_now_ms();
	size_t				 i;

	ps->cfg = cfg;
	ps->npeers = ag->count;
	ps->nlbs = hx->count;
	ps->nsvcs = 1 + cfg->nservices;
	ps->peers = calloc(ps->npeers ? ps->npeers : 1, sizeof(*ps->peers));
	ps->peers_asked = calloc(ps->npeers ? ps->npeers : 1,
	    sizeof(*ps->peers_asked));
	ps->lbs = calloc(ps->nlbs ? ps->nlbs : 1, sizeof(*ps->lbs));
	ps->lbs_asked = calloc(ps->nlbs ? ps->nlbs : 1, sizeof(*ps->lbs_asked));
	ps->svcs = calloc(ps->nsvcs, sizeof(*ps->svcs));
	ps->backends = calloc(ps->nsvcs, sizeof(*ps->backends));
	if (ps->peers == NULL || ps->peers_asked == NULL || ps->lbs == NULL ||
	    ps->lbs_asked == NULL || ps->svcs == NULL || ps->backends == NULL)
		return -1;
	ps->timeout_ms = 0;
	for (i = 0; i < ps->nsvcs; i++) {
		struct svc_guard *g = &ps->svcs[i];

		service_of(cfg, i, &name, &tc);
		snprintf(g->name, sizeof(g->name), "%s", name);
		g->tc = tc;
		g->view.round_ms = NO_TIME;
		g->view.served_ms = now;	/* alone_grace counts from here */
		snprintf(g->view.why, sizeof(g->view.why), "not asked yet");
		if ((g->verdicts = calloc(ps->npeers ? ps->npeers : 1,
		    sizeof(*g->verdicts))) == NULL)
			return -1;
		if (tc->peer_timeout_ms > ps->timeout_ms)
			ps->timeout_ms = tc->peer_timeout_ms;
		add_backend(ps, tc->backend);
	}
	hastats_request(ps->backends, ps->nbackends, ps->request);
	for (i = 0; i < ps->npeers; i++) {
		struct peer_source *p = &ps->peers[i];
		struct asked *q = &ps->peers_asked[i];

		q->owner = ps;
		q->i = i;
		p->seen_ms = NO_TIME;
		peer_liveness_init(&p->live);
		/* The API's /status, as the loader made it of the base URL. */
		if (st->items[i] == NULL ||
		    fetch_source_parse(st->items[i], &q->src, &why) == -1)
			return -1;	/* the config checked the same */
		memcpy(p->text, q->src.text, sizeof(p->text));
	}
	for (i = 0; i < ps->nlbs; i++) {
		struct asked *q = &ps->lbs_asked[i];

		q->owner = ps;
		q->i = i;
		ps->lbs[i].seen_ms = NO_TIME;
		if (fetch_source_parse(hx->items[i], &q->src, &why) == -1)
			return -1;
		memcpy(ps->lbs[i].text, q->src.text, sizeof(ps->lbs[i].text));
	}
	return 0;
}

struct peers *
peers_new(struct event_base *base, struct curl_loop *curl,
    const struct config *cfg, void (*changed)(void *), void *arg,
    bool *failed)
{
	struct peers	*ps;

	*failed = false;
	if (!cfg->peers.on)
		return NULL;
	if ((ps = calloc(1, sizeof(*ps))) == NULL) {
		*failed = true;
		return NULL;
	}
	ps->base = base;
	ps->curl = curl;
	ps->changed = changed;
	ps->arg = arg;
	ps->done_ms = NO_TIME;
	ps->watched_ms = NO_TIME;
	ps->seed = pace_seed(cfg->node_id, (uint64_t)getpid() ^
	    (uint64_t)clock_now_ms());
	if ((ps->timer = evtimer_new(base, timer_cb, ps)) == NULL ||
	    build(ps, cfg) == -1) {
		peers_free(ps);
		*failed = true;
		return NULL;
	}
	soon(ps);
	return ps;
}

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
	    (ps->timer = evtimer_new(old->base, timer_cb, ps)) == NULL ||
	    build(ps, cfg) == -1) {
		if (ps != NULL) {
			sources_free(ps);
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
	ps->round_ms = old->done_ms;
	ps->pace = old->pace;
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
		judge_all(ps);
	soon(ps);
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
	s->stot = s->scur = s->qcur = s->rtime_ms = s->qtime_ms = -1;
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
	s->scur = row.scur;
	s->qcur = row.qcur;
	s->rtime_ms = row.rtime_ms;
	s->qtime_ms = row.qtime_ms;
	return true;
}
