/*
 * The peer guard's rounds: other nodes' lbagent and the load balancers
 * asked on the loop; their answers judged by peer_view.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/sys/clock.h"
#include "peers_impl.h"

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

void
peers_timer_cb(evutil_socket_t fd, short what, void *arg)
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
void
peers_soon(struct peers *ps)
{
	struct timeval	tv = { 0, 0 };

	ps->kick = true;
	evtimer_add(ps->timer, &tv);
}

/* Verdicts for every service, once every source has answered or not. */
void
peers_judge_all(struct peers *ps)
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

/*
 * A round of the own rows only leaves the view of the others (the peers,
 * the other servers) as the last whole round judged it: it has not read
 * them again. When a whole one follows at once (a detail read waits for
 * it), nobody is told of this one.
 */
static void
round_done(struct peers *ps)
{
	bool	was_whole = ps->whole;

	ps->in_flight = false;
	ps->done_ms = ps->round_ms;
	if (was_whole) {
		ps->whole_ms = ps->round_ms;
		count_liveness(ps);
		peers_judge_all(ps);
	}
	if (ps->again) {
		ps->again = false;
		round_start(ps);
		if (!was_whole && ps->whole)
			return;
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

/*
 * An answer of the own rows, well formed, with every one of them: merged
 * into the whole table read before (the others' rows stay as they were
 * read). Without one of them (a reload renumbered or removed it, or the
 * answer is malformed), it replaces that table, and the next round, at
 * once, asks this load balancer the whole backends again: the ids are
 * learnt afresh.
 */
static struct hastats_table *
own_answer(struct peers *ps, struct lb_source *lb, struct hastats_table *t)
{
	if (lb->table != NULL && hastats_table_has_all(t, ps->own_be,
	    ps->own_srv, ps->nown) && hastats_table_merge(lb->table, t) == 0) {
		hastats_table_free(t);
		t = lb->table;
		lb->table = NULL;
		return t;
	}
	ps->again = true;
	return t;
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
	if (ok && q->own)
		t = own_answer(ps, lb, t);
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

/*
 * Load balancer i's question: its own rows alone when the round is not
 * whole, the source a Runtime API socket, and their ids known from a
 * table read before; else every server of the backends.
 */
static struct hastats_reader *
lb_question(struct peers *ps, size_t i, const char **request)
{
	struct asked		*q = &ps->lbs_asked[i];
	struct hastats_reader	*r;

	q->own = !ps->whole && q->src.kind != FETCH_HTTP &&
	    peer_view_lb_ok(&ps->lbs[i]) && hastats_table_own_request(
	    ps->lbs[i].table, ps->own_be, ps->own_srv, ps->nown,
	    q->request) == 0;
	*request = q->own ? q->request : ps->request;
	if ((r = hastats_reader_new(ps->backends, ps->nbackends, NULL)) !=
	    NULL && q->own && hastats_reader_weights(r, ps->own_be,
	    ps->own_srv, ps->nown) == -1) {
		hastats_reader_free(r);
		return NULL;
	}
	return r;
}

/*
 * Asks every source at once; the round ends with the last answer. A
 * whole round (a decision waits on the other servers) asks the peers and
 * every server of the backends; another, the own rows alone, and the
 * peers too when a capacity weight needs their estimates (a peer's
 * answer is small, and asks no load balancer).
 */
static void
round_start(struct peers *ps)
{
	const char	*request;
	size_t		 i;

	evtimer_del(ps->timer);
	ps->kick = false;
	ps->in_flight = true;
	ps->rounds++;
	ps->round_ms = clock_now_ms();
	ps->whole = ps->whole_due || pace_whole(ps->pace);
	ps->whole_due = false;
	ps->waiting = 1;	/* until every fetch is started */
	for (i = 0; (ps->whole || ps->estimates) && i < ps->npeers; i++) {
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
		if ((q->reader = lb_question(ps, i, &request)) != NULL &&
		    (q->fetch = fetch_start_pieces(ps->base, ps->curl, &q->src,
		    request, ps->timeout_ms, PEERS_CSV_MAX, lb_piece, lb_done,
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
	ps->whole_due = true;
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
peers_need_estimates(struct peers *ps, bool on)
{
	if (ps != NULL)
		ps->estimates = on;
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
peers_watch(struct peers *ps, bool fresh_wanted)
{
	int64_t	now = clock_now_ms();
	bool	fresh;

	if (ps == NULL)
		return true;
	ps->watched_ms = now;
	fresh = ps->whole_ms != NO_TIME && now - ps->whole_ms <=
	    (int64_t)ps->cfg->peers.interval_ms;
	/*
	 * A detail read asking for a fresh view gets a whole round begun
	 * within the fast interval: it shows the other nodes and servers as
	 * they are now. One of the own rows in flight is followed by a whole
	 * one at once. Any other read (a dashboard's, every few seconds)
	 * shows the whole view as the last whole round left it, its age
	 * beside it, and keeps only the own rows coming: with every node read
	 * so, each load balancer still answers a few KB a node a round.
	 */
	if (fresh_wanted && !fresh && !(ps->in_flight && ps->whole)) {
		ps->whole_due = true;
		if (ps->in_flight)
			ps->again = true;
		else
			peers_soon(ps);
		return false;
	}
	resume(ps);
	return fresh || !fresh_wanted;
}

int64_t
peers_whole_ms(const struct peers *ps)
{
	return ps->whole_ms;	/* NO_TIME is INT64_MIN */
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

void
peers_sources_free(struct peers *ps)
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
	free(ps->own_be);
	free(ps->own_srv);
	ps->backends = ps->own_be = ps->own_srv = NULL;
	ps->npeers = ps->nlbs = ps->nsvcs = ps->nbackends = ps->nown = 0;
}

void
peers_free(struct peers *ps)
{
	if (ps == NULL)
		return;
	peers_sources_free(ps);
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

/* Asks for server of backend in the own rows (once a pair, not ""). */
static void
add_own(struct peers *ps, const char *backend, const char *server)
{
	size_t	i;

	if (backend[0] == '\0')
		return;
	for (i = 0; i < ps->nown; i++)
		if (strcmp(ps->own_be[i], backend) == 0 &&
		    strcmp(ps->own_srv[i], server) == 0)
			return;
	ps->own_be[ps->nown] = backend;
	ps->own_srv[ps->nown++] = server;
}

/* Builds the sources and services of cfg into an empty module. */
int
peers_build(struct peers *ps, const struct config *cfg)
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
	ps->own_be = calloc(ps->nsvcs, sizeof(*ps->own_be));
	ps->own_srv = calloc(ps->nsvcs, sizeof(*ps->own_srv));
	if (ps->peers == NULL || ps->peers_asked == NULL || ps->lbs == NULL ||
	    ps->lbs_asked == NULL || ps->svcs == NULL || ps->backends == NULL ||
	    ps->own_be == NULL || ps->own_srv == NULL)
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
		add_own(ps, tc->backend, config_server(cfg, tc));
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
	ps->done_ms = ps->whole_ms = NO_TIME;
	ps->watched_ms = NO_TIME;
	ps->seed = pace_seed(cfg->node_id, (uint64_t)getpid() ^
	    (uint64_t)clock_now_ms());
	if ((ps->timer = evtimer_new(base, peers_timer_cb, ps)) == NULL ||
	    peers_build(ps, cfg) == -1) {
		peers_free(ps);
		*failed = true;
		return NULL;
	}
	ps->whole_due = true;
	peers_soon(ps);
	return ps;
}
