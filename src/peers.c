/* The peer guard's sources: other nodes' lbagent and the load balancers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lbagent/clock.h"
#include "lbagent/peers.h"

#define NO_TIME		INT64_MIN
#define PEER_SERVICES_MAX	1024	/* in one answer; beyond: malformed */
/*
 * To the Runtime API (HTTP sources get the stats page's CSV): the CSV,
 * then the configured weights, which 2.6's CSV does not have.
 */
#define LB_REQUEST	"show stat;show servers state\n"

/* --- judging (pure) --- */

void
peer_answer_free(struct peer_answer *a)
{
	free(a->svc);
	memset(a, 0, sizeof(*a));
}

/* A name as the config allows it; other text is not a name we match. */
static int
copy_name(char dst[CONFIG_NAME_MAX + 1], const json_t *v, bool empty_ok)
{
	const char	*s;
	size_t		 len;

	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	len = json_string_length(v);
	if (len > CONFIG_NAME_MAX || (len == 0 && !empty_ok) ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-.") != len)
		return -1;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

int
peer_answer_parse(const char *body, size_t len, struct peer_answer *a,
    const char **why)
{
	json_error_t	 err;
	json_t		*root, *svcs, *o;
	size_t		 i;

	memset(a, 0, sizeof(*a));
	if (len > PEERS_ANSWER_MAX) {
		*why = "answer too large";
		return -1;
	}
	if ((root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err)) == NULL) {
		*why = "not JSON";
		return -1;
	}
	*why = NULL;
	if (!json_is_object(root))
		*why = "not a status document";
	else if (copy_name(a->node_id, json_object_get(root, "node_id"),
	    false) == -1)
		*why = "no valid node_id";
	else if (!json_is_array(svcs = json_object_get(root, "services")) ||
	    json_array_size(svcs) == 0 ||
	    json_array_size(svcs) > PEER_SERVICES_MAX)
		*why = "no services";
	else if ((a->svc = calloc(json_array_size(svcs),
	    sizeof(*a->svc))) == NULL)
		*why = "out of memory";
	if (*why != NULL) {
		json_decref(root);
		peer_answer_free(a);
		return -1;
	}
	json_array_foreach(svcs, i, o) {
		struct peer_service	*s = &a->svc[i];
		json_t			*server = json_object_get(o, "server");

		if (!json_is_object(o) ||
		    copy_name(s->name, json_object_get(o, "name"), true) == -1 ||
		    !json_is_boolean(json_object_get(o, "serving")) ||
		    (server != NULL && copy_name(s->server, server, false) == -1)) {
			*why = "a service without a valid name, serving or "
			    "server";
			json_decref(root);
			peer_answer_free(a);
			return -1;
		}
		s->serving = json_is_true(json_object_get(o, "serving"));
	}
	a->nsvc = json_array_size(svcs);
	json_decref(root);
	return 0;
}

static const struct peer_service *
answer_service(const struct peer_answer *a, const char *name)
{
	size_t	i;

	for (i = 0; i < a->nsvc; i++)
		if (strcmp(a->svc[i].name, name) == 0)
			return &a->svc[i];
	return NULL;
}

bool
peer_source_ok(const struct peer_source *p)
{
	return p->answered && p->ans.svc != NULL;
}

bool
lb_source_ok(const struct lb_source *lb)
{
	return lb->answered && lb->csv != NULL;
}

/* An answer later than the service allows counts as none. */
static bool
in_time(bool answered, int64_t took_ms, uint64_t timeout_ms)
{
	return answered && took_ms <= (int64_t)timeout_ms;
}

void
peers_judge(const struct peer_source *p, const struct lb_source *lbs,
    size_t nlbs, const char *service, const char *backend, const char *my_id,
    uint64_t timeout_ms, struct peer_verdict *v)
{
	const struct peer_service	*s;
	const char			*server, *why;
	struct hastats_row		 row;
	size_t				 i, answered = 0;
	int				 found;

	memset(v, 0, sizeof(*v));
	if (!peer_source_ok(p)) {
		snprintf(v->why, sizeof(v->why), "%s", p->error[0] ? p->error :
		    "no answer yet");
		return;
	}
	snprintf(v->node_id, sizeof(v->node_id), "%s", p->ans.node_id);
	if (strcmp(p->ans.node_id, my_id) == 0) {
		v->self = true;
		snprintf(v->why, sizeof(v->why), "this node");
		return;
	}
	if (!in_time(true, p->took_ms, timeout_ms)) {
		snprintf(v->why, sizeof(v->why), "timeout");
		return;
	}
	if (p->pinned[0] != '\0' && strcmp(p->pinned, p->ans.node_id) != 0) {
		snprintf(v->why, sizeof(v->why), "answered as %s, not %s (the "
		    "node first seen there; a reload accepts it)",
		    p->ans.node_id, p->pinned);
		return;
	}
	if ((s = answer_service(&p->ans, service)) == NULL) {
		snprintf(v->why, sizeof(v->why), "has no service '%s'", service);
		return;
	}
	if (!s->serving) {
		snprintf(v->why, sizeof(v->why), "not serving");
		return;
	}
	server = s->server[0] != '\0' ? s->server : p->ans.node_id;
	for (i = 0; i < nlbs; i++) {
		const struct lb_source *lb = &lbs[i];

		if (!in_time(lb_source_ok(lb), lb->took_ms, timeout_ms))
			continue;
		answered++;
		found = hastats_find(lb->csv, lb->len, backend, server, &row,
		    &why);
		if (found == -1) {
			snprintf(v->why, sizeof(v->why), "%s: %s", lb->src.text,
			    why);
			return;
		}
		if (found == 0) {
			snprintf(v->why, sizeof(v->why), "no server %s/%s on %s",
			    backend, server, lb->src.text);
			return;
		}
		if (!hastats_serving(&row)) {
			if (row.status[0] != '\0' && strncmp(row.status, "UP",
			    2) != 0 && strcmp(row.status, "no check") != 0)
				snprintf(v->why, sizeof(v->why), "%s on %s",
				    row.status, lb->src.text);
			else
				snprintf(v->why, sizeof(v->why), "weight %ld on "
				    "%s", row.weight, lb->src.text);
			return;
		}
	}
	if (nlbs > 0 && answered == 0) {
		snprintf(v->why, sizeof(v->why), "no load balancer answered");
		return;
	}
	v->serving = true;
}

static void
lb_warn(struct lb_view *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
lb_warn(struct lb_view *v, const char *fmt, ...)
{
	va_list	ap;

	if (v->nwarnings == LB_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(v->warnings[v->nwarnings++], sizeof(v->warnings[0]), fmt, ap);
	va_end(ap);
}

void
peers_lb_view(const struct lb_source *lb, const char *backend,
    const char *server, const struct decision *told, struct lb_view *v)
{
	const char	*why, *admin;
	int		 found;
	long		 iw;

	memset(v, 0, sizeof(*v));
	if (!lb_source_ok(lb)) {
		snprintf(v->error, sizeof(v->error), "%s", lb->error[0] ?
		    lb->error : "no answer yet");
		return;
	}
	found = hastats_find(lb->csv, lb->len, backend, server, &v->row, &why);
	if (found != 1) {
		if (found == -1)
			snprintf(v->error, sizeof(v->error), "%s", why);
		else
			snprintf(v->error, sizeof(v->error), "no server %s/%s",
			    backend, server);
		return;
	}
	v->found = true;
	/*
	 * The configured weight: from the servers state where the source
	 * gives it; 2.6's CSV has only the current one (an agent's
	 * percentage applied), so otherwise it is not known.
	 */
	iw = -1;
	if (lb->state != NULL && hastats_initial_weight(lb->state,
	    lb->state_len, backend, server, &iw, &why) != 1)
		iw = -1;
	v->row.initial_weight = iw;
	if (iw >= 0 && iw < 10)
		lb_warn(v, "initial weight %ld is below 10: percentages truncate "
		    "(50%% gives %ld%s)", iw, iw / 2, iw == 1 ?
		    ", every percentage below 100% gives 0" : "");
	admin = hastats_admin(&v->row);
	if (admin != NULL && !(strcmp(admin, "MAINT") == 0 &&
	    told->state == NODE_MAINT) && !(strcmp(admin, "DRAIN") == 0 &&
	    told->state == NODE_DRAIN))
		lb_warn(v, "shows %s, which lbagent did not ask for (an "
		    "operator's hand? lbagent leaves it as it is)",
		    v->row.status);
}

/* --- rounds --- */

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
	struct peer_source	*peers;
	size_t			 npeers;
	struct lb_source	*lbs;
	size_t			 nlbs;
	struct svc_guard	*svcs;
	size_t			 nsvcs;
	uint64_t		 timeout_ms;	/* the longest any service allows */
	bool			 in_flight, again;
	size_t			 waiting;	/* answers the round waits for */
	int64_t			 round_ms;	/* the round in flight's start */
	int64_t			 done_ms;	/* the last answered round's start */
	struct event		*timer;
};

static void	round_start(struct peers *);

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	round_start(arg);
}

/* The next round at the interval from the last one's start. */
static void
schedule(struct peers *ps)
{
	int64_t		in = ps->round_ms + (int64_t)ps->cfg->peers.interval_ms -
			    clock_now_ms();
	struct timeval	tv;

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

	evtimer_add(ps->timer, &tv);
}

void
peers_aggregate(const struct peer_source *peers, size_t npeers,
    const struct lb_source *lbs, size_t nlbs, const char *service,
    const struct transition_conf *tc, const char *my_id, int64_t round_ms,
    struct peer_verdict *verdicts, struct peer_view *v)
{
	size_t	wholen = 0, whylen = 0, j;
	int	n;

	v->round_ms = round_ms;
	v->other_serving = false;
	v->who[0] = v->why[0] = '\0';
	for (j = 0; j < npeers; j++) {
		struct peer_verdict	*pv = &verdicts[j];
		const char		*id;

		peers_judge(&peers[j], lbs, nlbs, service, tc->backend, my_id,
		    tc->peer_timeout_ms, pv);
		if (pv->self)
			continue;
		id = pv->node_id[0] ? pv->node_id : peers[j].src.text;
		if (pv->serving) {
			v->other_serving = true;
			n = snprintf(v->who + wholen, sizeof(v->who) - wholen,
			    "%s%s", wholen ? ", " : "", id);
			if (n > 0 && (size_t)n < sizeof(v->who) - wholen)
				wholen += (size_t)n;
		} else {
			n = snprintf(v->why + whylen, sizeof(v->why) - whylen,
			    "%s%s: %s", whylen ? "; " : "", id, pv->why);
			if (n > 0 && (size_t)n < sizeof(v->why) - whylen)
				whylen += (size_t)n;
		}
	}
	if (v->other_serving)
		v->served_ms = round_ms;
	if (v->why[0] == '\0')
		snprintf(v->why, sizeof(v->why), "no other node listed");
}

/* Verdicts for every service, once every source has answered or not. */
static void
judge_all(struct peers *ps)
{
	size_t	i;

	for (i = 0; i < ps->nsvcs; i++)
		peers_aggregate(ps->peers, ps->npeers, ps->lbs, ps->nlbs,
		    ps->svcs[i].name, ps->svcs[i].tc, ps->cfg->node_id,
		    ps->round_ms, ps->svcs[i].verdicts, &ps->svcs[i].view);
}

static void
round_done(struct peers *ps)
{
	ps->in_flight = false;
	ps->done_ms = ps->round_ms;
	judge_all(ps);
	if (ps->again) {
		ps->again = false;
		round_start(ps);
	} else
		schedule(ps);
	ps->changed(ps->arg);
}

static void
peer_done(void *arg, bool ok, const char *body, size_t len, const char *error)
{
	struct peer_source	*p = arg;
	struct peers		*ps = p->owner;
	struct peer_answer	 ans;
	const char		*why;

	p->fetch = NULL;
	p->took_ms = clock_now_ms() - ps->round_ms;
	peer_answer_free(&p->ans);
	p->answered = false;
	if (!ok)
		snprintf(p->error, sizeof(p->error), "%s", error);
	else if (peer_answer_parse(body, len, &ans, &why) == -1)
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

static void
lb_done(void *arg, bool ok, const char *body, size_t len, const char *error)
{
	struct lb_source	*lb = arg;
	struct peers		*ps = lb->owner;
	char			*copy = NULL;

	lb->fetch = NULL;
	lb->took_ms = clock_now_ms() - ps->round_ms;
	if (ok && (copy = malloc(len + 1)) == NULL) {
		ok = false;
		error = "out of memory";
	}
	free(lb->csv);
	lb->csv = NULL;
	lb->len = 0;
	lb->state = NULL;
	lb->state_len = 0;
	lb->answered = ok;
	if (!ok)
		snprintf(lb->error, sizeof(lb->error), "%s", error);
	else {
		memcpy(copy, body, len);
		copy[len] = '\0';
		lb->csv = copy;
		lb->len = hastats_split(copy, len, &lb->state, &lb->state_len);
		lb->error[0] = '\0';
		lb->seen_ms = clock_now_ms();
	}
	if (--ps->waiting == 0)
		round_done(ps);
}

/* Asks every source at once; the round ends with the last answer. */
static void
round_start(struct peers *ps)
{
	size_t	i;

	evtimer_del(ps->timer);
	ps->in_flight = true;
	ps->round_ms = clock_now_ms();
	ps->waiting = 1;	/* until every fetch is started */
	for (i = 0; i < ps->npeers; i++) {
		struct peer_source *p = &ps->peers[i];

		if ((p->fetch = fetch_start(ps->base, ps->curl, &p->src, NULL,
		    ps->timeout_ms, PEERS_ANSWER_MAX, peer_done, p)) != NULL)
			ps->waiting++;
		else {
			peer_answer_free(&p->ans);
			p->answered = false;
			snprintf(p->error, sizeof(p->error), "cannot ask (out "
			    "of resources)");
		}
	}
	for (i = 0; i < ps->nlbs; i++) {
		struct lb_source *lb = &ps->lbs[i];

		if ((lb->fetch = fetch_start(ps->base, ps->curl, &lb->src,
		    LB_REQUEST, ps->timeout_ms, PEERS_CSV_MAX, lb_done,
		    lb)) != NULL)
			ps->waiting++;
		else {
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

	for (i = 0; i < ps->npeers; i++) {
		if (ps->peers[i].fetch != NULL)
			fetch_cancel(ps->peers[i].fetch);
		peer_answer_free(&ps->peers[i].ans);
	}
	for (i = 0; i < ps->nlbs; i++) {
		if (ps->lbs[i].fetch != NULL)
			fetch_cancel(ps->lbs[i].fetch);
		free(ps->lbs[i].csv);
	}
	for (i = 0; i < ps->nsvcs; i++)
		free(ps->svcs[i].verdicts);
	free(ps->peers);
	free(ps->lbs);
	free(ps->svcs);
	ps->npeers = ps->nlbs = ps->nsvcs = 0;
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

/* Builds the sources and services of cfg into an empty module. */
static int
build(struct peers *ps, const struct config *cfg)
{
	const struct config_list	*ag = &cfg->peers.agents;
	const struct config_list	*hx = &cfg->peers.haproxy;
	const char			*why, *name;
	const struct transition_conf	*tc;
	int64_t				 now = clock_now_ms();
	char				 url[sizeof(ps->peers[0].src.url)];
	size_t				 i;

	ps->cfg = cfg;
	ps->npeers = ag->count;
	ps->nlbs = hx->count;
	ps->nsvcs = 1 + cfg->nservices;
	ps->peers = calloc(ps->npeers ? ps->npeers : 1, sizeof(*ps->peers));
	ps->lbs = calloc(ps->nlbs ? ps->nlbs : 1, sizeof(*ps->lbs));
	ps->svcs = calloc(ps->nsvcs, sizeof(*ps->svcs));
	if (ps->peers == NULL || ps->lbs == NULL || ps->svcs == NULL)
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
	}
	for (i = 0; i < ps->npeers; i++) {
		struct peer_source *p = &ps->peers[i];

		p->owner = ps;
		p->seen_ms = NO_TIME;
		/* The API's base URL; its /status is what we read. */
		if (config_agent_status_url(ag->items[i], url,
		    sizeof(url)) == -1 ||
		    fetch_source_parse(url, &p->src, &why) == -1)
			return -1;	/* the config checked the same */
	}
	for (i = 0; i < ps->nlbs; i++) {
		ps->lbs[i].owner = ps;
		ps->lbs[i].seen_ms = NO_TIME;
		if (fetch_source_parse(hx->items[i], &ps->lbs[i].src, &why) == -1)
			return -1;
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
	if (!config_peers_on(cfg))
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

struct peers *
peers_reload(struct peers *old, const struct config *cfg, bool *failed)
{
	struct peers	*ps;
	size_t		 i, j;

	if (old == NULL)
		return NULL;	/* the caller creates one with peers_new */
	if (!config_peers_on(cfg)) {
		peers_free(old);
		*failed = false;
		return NULL;
	}
	if ((ps = calloc(1, sizeof(*ps))) == NULL ||
	    (ps->timer = evtimer_new(old->base, timer_cb, ps)) == NULL ||
	    build(ps, cfg) == -1) {
		if (ps != NULL) {
			sources_free(ps);
			if (ps->timer != NULL)
				event_free(ps->timer);
			free(ps);
		}
		*failed = true;
		return old;
	}
	*failed = false;
	ps->base = old->base;
	ps->curl = old->curl;
	ps->changed = old->changed;
	ps->arg = old->arg;
	ps->done_ms = old->done_ms;
	ps->round_ms = old->done_ms;
	/*
	 * What a source at the same address learned stays learned: the full
	 * address, credentials included (the shown text has them redacted,
	 * and cut), and each old source's data to one new source at most.
	 */
	for (i = 0; i < ps->npeers; i++)
		for (j = 0; j < old->npeers; j++) {
			struct peer_source *n = &ps->peers[i], *o = &old->peers[j];

			if (o->owner == NULL || !same_source(&n->src, &o->src))
				continue;
			n->answered = peer_source_ok(o);
			memcpy(n->error, o->error, sizeof(n->error));
			n->ans = o->ans;
			memset(&o->ans, 0, sizeof(o->ans));
			n->took_ms = o->took_ms;
			n->seen_ms = o->seen_ms;
			/* A reload accepts whoever answers there now. */
			snprintf(n->pinned, sizeof(n->pinned), "%s",
			    n->answered ? n->ans.node_id : "");
			/* Taken; old is freed below, nothing reads owner again. */
			o->answered = false;
			o->owner = NULL;
			break;
		}
	for (i = 0; i < ps->nlbs; i++)
		for (j = 0; j < old->nlbs; j++) {
			struct lb_source *n = &ps->lbs[i], *o = &old->lbs[j];

			if (o->owner == NULL || !same_source(&n->src, &o->src))
				continue;
			n->answered = lb_source_ok(o);
			memcpy(n->error, o->error, sizeof(n->error));
			n->csv = o->csv;
			n->len = o->len;
			n->state = o->state;
			n->state_len = o->state_len;
			n->took_ms = o->took_ms;
			n->seen_ms = o->seen_ms;
			o->csv = NULL;
			o->len = o->state_len = 0;
			o->state = NULL;
			o->answered = false;
			o->owner = NULL;
			break;
		}
	for (i = 0; i < ps->nsvcs; i++)
		for (j = 0; j < old->nsvcs; j++)
			if (strcmp(ps->svcs[i].name, old->svcs[j].name) == 0)
				ps->svcs[i].view.served_ms =
				    old->svcs[j].view.served_ms;
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
