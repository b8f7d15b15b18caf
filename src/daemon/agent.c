/*
 * The agent: the wiring around each service's pipeline (service.h). Every
 * input (a probe's run, a marker, the 250 ms tick, a round of the peer
 * guard) ends in evaluate(), which gathers the inputs, lets the service
 * step and applies its effects: the log lines, systemd's status, the
 * state file, a fresh round of the guard. The reply path only copies.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lbagent/core/guard.h"
#include "lbagent/core/lbkeys.h"
#include "lbagent/core/name.h"
#include "lbagent/daemon/agent.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/peers.h"
#include "lbagent/daemon/scheduler.h"
#include "lbagent/daemon/systemd.h"

#include "agent_impl.h"

#define MARKER_POLL_MS	250	/* markers show in replies well within 1 s */
#define EXPIRE_POLL_MS	5000

/*
 * systemd's STATUS=: every service's reply ("up; web: down #x"), cut by
 * systemd_status() at its limit; sent only when it changed.
 */
static void
notify_status(const struct agent *a)
{
	char	buf[SYSTEMD_STATUS_MAX + 1], line[REPLY_MAX];
	size_t	i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < a->nsvcs && n < sizeof(buf) - 1; i++) {
		const struct service *s = &a->svcs[i].s;

		if (!s->has_decision)
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s%s%s",
		    n ? "; " : "", s->name, s->name[0] ? ": " : "",
		    service_line(s, line));
	}
	systemd_status(buf);
}

/* What the load-balancer keys had to say, as they said it. */
static void
log_lbkeys_note(const struct lbkeys_note *n)
{
	if (n->level == LBKEYS_WARNING)
		log_warnx("%s", n->text);
	else if (n->level == LBKEYS_NOTICE)
		log_notice("%s", n->text);
	else
		log_info("%s", n->text);
}

static void
log_lbkeys_notes(const struct lbkeys_notes *ns)
{
	size_t	i;

	for (i = 0; i < ns->count; i++)
		log_lbkeys_note(&ns->n[i]);
}

/* What a step asks for, in the order it happened. */
static void
apply(struct agent *a, const struct service_effects *fx)
{
	size_t	i;

	for (i = 0; i < fx->nnotes; i++) {
		if (fx->notes[i].debug)
			log_debug("%s", fx->notes[i].text);
		else if (fx->notes[i].warning)
			log_warnx("%s", fx->notes[i].text);
		else
			log_notice("%s", fx->notes[i].text);
	}
	if (fx->ask_peers)
		peers_ask(a->peers);
	if (fx->decided)
		notify_status(a);
	if (fx->save_soon)
		agent_schedule_save_soon(a);
	/*
	 * A claim that starts or ends is on disk before any reply carries its
	 * lines. This is a marker's or a probe's turn of the loop, never a
	 * reply's.
	 */
	if (fx->save_now)
		agent_save_cb(-1, 0, a);
	else if (fx->save)
		agent_schedule_save(a);
}

/* Rounds at the fastest pace any service wants. */
static void
keep_peers(struct agent *a)
{
	enum pace	p = PACE_NONE;
	bool		estimates = false;
	size_t		i;

	for (i = 0; i < a->nsvcs; i++) {
		if (a->svcs[i].peers_pace > p)
			p = a->svcs[i].peers_pace;
		estimates |= a->svcs[i].cap.v.on;
	}
	peers_need_estimates(a->peers, estimates);
	peers_need(a->peers, p);
}

/* What the public documents show of a service, to tell a step changed it. */
struct public_sig {
	int		state, weight, would_state, would_weight, guard;
	unsigned	damping;
	bool		off, shadow, would;
	uint64_t	transitions;
};

static void
public_sig(const struct service *s, struct public_sig *g)
{
	struct guard_view	gv;
	int			k;

	memset(g, 0, sizeof(*g));
	g->state = (int)s->decision.state;
	g->weight = (int)s->decision.weight;
	g->off = s->off;
	g->shadow = s->shadow;
	g->would = s->has_would;
	g->would_state = (int)s->would.state;
	g->would_weight = (int)s->would.weight;
	guard_view(s->tr, &gv);
	g->guard = (int)gv.state;
	g->damping = transition_damping(s->tr);
	for (k = 0; k <= NODE_STATE_COUNT; k++)
		g->transitions += s->transitions[k];
}

static bool
public_sig_equal(const struct public_sig *a, const struct public_sig *b)
{
	return a->state == b->state && a->weight == b->weight &&
	    a->would_state == b->would_state &&
	    a->would_weight == b->would_weight && a->guard == b->guard &&
	    a->damping == b->damping && a->off == b->off &&
	    a->shadow == b->shadow && a->would == b->would &&
	    a->transitions == b->transitions;
}

/* Service i looks again at its probes, markers, switch and peers. */
static void
evaluate(struct agent *a, size_t i, bool at_start)
{
	struct svc		*w = &a->svcs[i];
	struct service_effects	 fx;
	struct service_switch	 sw = { a->mode_env, a->cfg->automation_off,
				    a->cfg->shadow, a->cfg->path,
				    a->cfg->state_dir };
	struct peer_view	 pv = { .round_ms = INT64_MIN };
	struct service_input	 in;
	struct public_sig	 before, after;
	size_t			 j;

	public_sig(&w->s, &before);
	for (j = 0; j < w->nprobes; j++) {
		const struct probe_conf	 *pc;
		const struct probe_state *st;

		pc = scheduler_probe_conf(w->probes[j]);
		st = scheduler_probe_state(w->probes[j]);

		w->in[j].name = pc->name;
		w->in[j].counted = st->counted;
		w->in[j].reason = st->counted_reason;
		w->in[j].on_warn = pc->on_warn;
		w->in[j].on_crit = pc->on_crit;
		w->in[j].on_unknown = pc->on_unknown;
		w->settled[j] = st->settled;
	}
	/* The peer guard's view, once, for the engine and the markers. */
	if (a->peers != NULL)
		peers_view(a->peers, i, &pv);
	memset(&in, 0, sizeof(in));
	in.probes = w->in;
	in.settled = w->settled;
	in.nprobes = w->nprobes;
	in.node = &a->node;
	in.own = w->s.marker_dir != NULL ? &w->own : NULL;
	in.sw = &sw;
	in.peers = a->peers != NULL ? &pv : NULL;
	in.at_start = at_start;
	in.now_ms = clock_now_ms();
	in.wall_ms = clock_wall_ms();
	agent_capacity_step(a, i, in.now_ms, &in.capacity_pct, &in.maxconn);
	service_step(&w->s, &in, &fx);
	public_sig(&w->s, &after);
	if (fx.line_changed || !public_sig_equal(&before, &after))
		a->generation++;
	apply(a, &fx);
	w->peers_pace = fx.peers_pace;
	/* Capacity reads every round: the stats, the peers' estimates. */
	if (agent_capacity_rounds(a, w) && w->peers_pace < PACE_STEADY)
		w->peers_pace = PACE_STEADY;
	keep_peers(a);
}

/* A round of the peer guard ended: every service looks again. */
void
agent_peers_changed(void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	a->generation++;	/* the round's counts and what it found */
	for (i = 0; i < a->nsvcs; i++)
		evaluate(a, i, false);
	if (a->round_cb != NULL)
		a->round_cb(a->round_arg);
}

void
agent_read_markers(struct agent *a, bool at_start)
{
	struct markers	ms = a->node;
	char		where[80];
	size_t		i;

	markers_read(a->cfg->state_dir, &ms);
	if (agent_markers_take(a->cfg->state_dir, "", &a->node, &ms))
		a->generation++;
	for (i = 0; i < a->nsvcs; i++) {
		struct svc *w = &a->svcs[i];

		if (w->s.marker_dir != NULL) {
			ms = w->own;
			markers_read_service(w->s.marker_dir, &ms);
			snprintf(where, sizeof(where), "%s/", w->s.name);
			if (agent_markers_take(w->s.marker_dir, where, &w->own,
			    &ms))
				a->generation++;
		}
		evaluate(a, i, at_start);
	}
}

static void
marker_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	agent_read_markers(arg, false);
	agent_unknown_names_age(arg);
}

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent		*a = arg;
	struct lbkeys_note	 gone;
	size_t			 i;
	int64_t			 now;
	bool			 changed = false;

	(void)fd;
	(void)what;
	for (i = 0; i < a->nsvcs; i++) {
		for (now = clock_now_ms(); lbkeys_expire(a->svcs[i].s.keys, now,
		    &gone); changed = true)
			log_lbkeys_note(&gone);
		/* The would-be keys of shadow mode: not saved, not logged. */
		while (lbkeys_expire(a->svcs[i].s.would_keys, now, NULL))
			;
	}
	if (changed)
		agent_schedule_save_soon(a);
}

/* A probe finished a run: the services it belongs to look again. */
void
agent_probe_ran(struct probe *p, bool changed, void *arg)
{
	struct agent	*a = arg;
	size_t		 i, j;

	a->ticks++;		/* its runs, duration and value */
	if (!changed)
		return;
	a->generation++;	/* what it counts as */
	for (i = 0; i < a->nsvcs; i++)
		for (j = 0; j < a->svcs[i].nprobes; j++)
			if (a->svcs[i].probes[j] == p)
				evaluate(a, i, false);
}

static struct event *
add_timer(struct agent *a, int ms, event_callback_fn cb)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*ev;

	if ((ev = event_new(a->base, -1, EV_PERSIST, cb, a)) == NULL ||
	    event_add(ev, &tv) == -1) {
		if (ev != NULL)
			event_free(ev);
		return NULL;
	}
	return ev;
}

/* The probe of that name, created by create_probes(). */
static struct probe *
find_probe(struct agent *a, const char *name)
{
	size_t	i;

	for (i = 0; i < a->nprobes; i++)
		if (strcmp(scheduler_probe_conf(a->probes[i])->name, name) == 0)
			return a->probes[i];
	return NULL;
}

static int
create_probes(struct agent *a)
{
	size_t	i;

	if (a->cfg->nprobes == 0)
		return 0;
	if ((a->probes = calloc(a->cfg->nprobes, sizeof(*a->probes))) == NULL)
		return -1;
	for (i = 0; i < a->cfg->nprobes; i++) {
		a->probes[i] = scheduler_probe_new(&a->cfg->probes[i], a->env,
		    agent_probe_ran, a);
		if (a->probes[i] == NULL)
			return -1;
		a->nprobes++;
	}
	return 0;
}

/* The default service, then one per [service]; each with its probes. */
int
agent_create_services(struct agent *a)
{
	const struct config	*cfg = a->cfg;
	struct svc		*w;
	size_t			 i, j, n = a->nprobes ? a->nprobes : 1;

	a->nsvcs = cfg->nservices + 1;
	if ((a->svcs = calloc(a->nsvcs, sizeof(*a->svcs))) == NULL)
		return -1;
	for (i = 0; i < a->nsvcs; i++) {
		const struct service_conf *sc = i ? &cfg->services[i - 1] : NULL;

		w = &a->svcs[i];
		if (service_init(&w->s, sc ? sc->name : "", cfg->state_dir,
		    sc ? &sc->transitions : &cfg->transitions,
		    cfg->reply_reasons, cfg->lb_forget_after_ms,
		    clock_now_ms()) == -1 ||
		    (w->probes = calloc(n, sizeof(*w->probes))) == NULL ||
		    (w->in = calloc(n, sizeof(*w->in))) == NULL ||
		    (w->settled = calloc(n, sizeof(*w->settled))) == NULL)
			return -1;
		agent_capacity_init(a, w, sc);
		if (sc == NULL) {
			for (j = 0; j < a->nprobes; j++)
				if (!config_probe_named(cfg,
				    scheduler_probe_conf(a->probes[j])->name))
					w->probes[w->nprobes++] = a->probes[j];
			continue;
		}
		/* So that `touch state_dir/NAME/drain` works at once. */
		if (mkdir(w->s.marker_dir, 0755) == -1 && errno != EEXIST)
			log_warn("%s: cannot create the service's marker "
			    "directory", w->s.marker_dir);
		for (j = 0; j < sc->nprobes; j++)
			w->probes[w->nprobes++] = find_probe(a, sc->probes[j]);
	}
	return 0;
}

void
agent_free_services(struct svc *svcs, size_t n)
{
	size_t	i;

	for (i = 0; svcs != NULL && i < n; i++) {
		service_free(&svcs[i].s);
		free(svcs[i].probes);
		free(svcs[i].in);
		free(svcs[i].settled);
	}
	free(svcs);
}

struct agent *
agent_new(struct event_base *base, const struct config *cfg,
    const struct probe_env *env, int mode_env)
{
	struct agent	*a;
	size_t		 i;
	bool		 failed;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->base = base;
	a->cfg = cfg;
	a->env = env;
	a->mode_env = mode_env;
	a->started_wall_ms = clock_wall_ms();
	state_boot_id(a->boot_id);
	if (mkdir(cfg->state_dir, 0755) == -1 && errno != EEXIST)
		log_warn("%s: cannot create state directory", cfg->state_dir);
	if (create_probes(a) == -1 || agent_create_services(a) == -1)
		goto fail;
	agent_load_state(a);
	a->incarnation++;
	a->peers = peers_new(base, env->curl, cfg, agent_peers_changed, a, &failed);
	if (failed)
		goto fail;
	if (a->peers != NULL && config_api_unreachable(cfg) != NULL)
		log_warnx("%s", config_api_unreachable(cfg));
	if ((a->save_ev = event_new(base, -1, 0, agent_save_cb, a)) == NULL ||
	    (a->retry_ev = evtimer_new(base, agent_save_cb, a)) == NULL ||
	    (a->soon_ev = evtimer_new(base, agent_save_cb, a)) == NULL ||
	    (a->marker_ev = add_timer(a, MARKER_POLL_MS, marker_cb)) == NULL ||
	    (a->expire_ev = add_timer(a, EXPIRE_POLL_MS, expire_cb)) == NULL)
		goto fail;
	agent_read_markers(a, true);
	for (i = 0; i < a->nprobes; i++)
		if (scheduler_probe_start(a->probes[i]) == -1)
			goto fail;
	return a;
fail:
	agent_free(a);
	return NULL;
}

void
agent_free(struct agent *a)
{
	size_t	i;

	if (a == NULL)
		return;
	peers_free(a->peers);
	a->peers = NULL;
	for (i = 0; i < a->nprobes; i++)
		scheduler_probe_free(a->probes[i]);
	free(a->probes);
	a->nprobes = 0;
	if (a->marker_ev != NULL)
		event_free(a->marker_ev);
	if (a->expire_ev != NULL)
		event_free(a->expire_ev);
	if (a->retry_ev != NULL)
		event_free(a->retry_ev);
	a->retry_ev = NULL;
	if (a->soon_ev != NULL)
		event_free(a->soon_ev);
	a->soon_ev = NULL;
	if (a->save_ev != NULL) {
		/* A save still pending must not be lost at shutdown. */
		agent_save_cb(-1, 0, a);
		event_free(a->save_ev);
	}
	agent_free_services(a->svcs, a->nsvcs);
	free(a);
}

int
agent_mode_env(char *buf, size_t size)
{
	const char	*v = getenv("LBAGENT_MODE");
	char		 esc[4 * 64 + 1];
	int		 mode;

	if (v == NULL)
		return -1;
	if (config_parse_mode(v, &mode) == 0)
		return mode;
	text_escape(esc, v, strnlen(v, 64));
	snprintf(buf, size, "%s", esc);
	return -2;
}

/*
 * A check answered as the default service whose text names no service
 * (a typo: "aip" for "api"). Still answered so: taking servers out over
 * a name would be worse. Counted, and said once per load-balancer key.
 */
static void
unknown_service(struct agent *a, int service, const char *addr,
    const char *text, size_t len, int64_t now_ms)
{
	struct lbkeys_note	n;

	if (service != 0 || !agent_names_no_service(a, text, len))
		return;
	if (lbkeys_unknown_service(a->svcs[0].s.keys, now_ms, &n))
		log_lbkeys_note(&n);
	agent_unknown_name(a, addr, text, len, now_ms);
}

size_t
agent_reply(struct agent *a, int service, const char *addr, const char *text,
    size_t len, char buf[REPLY_MAX], struct agent_check *ck)
{
	struct service_check	sc;
	struct lbkeys_notes	notes;
	size_t			n;
	bool			changed;
	int64_t			now_ms = clock_now_ms();

	a->ticks++;		/* lbagent_replies_total */
	n = service_reply(&a->svcs[service].s, addr, text, len, now_ms,
	    buf, &sc, &changed, &notes);
	log_lbkeys_notes(&notes);
	unknown_service(a, service, addr, text, len, now_ms);
	ck->carried = sc.carried;
	ck->restore = sc.restore;
	ck->created = sc.created;
	ck->would_created = sc.would_created;
	/* Key bookkeeping: saved within a second, never in a reply's turn. */
	if (changed)
		agent_schedule_save_soon(a);
	return n;
}

void
agent_late_text(struct agent *a, int service, const char *addr,
    const char *text, size_t len, const struct agent_check *ck)
{
	struct service_check	sc = { ck->carried, ck->restore, ck->created,
				    ck->would_created };
	struct lbkeys_notes	notes;
	bool			changed;
	int64_t			now_ms = clock_now_ms();

	a->ticks++;		/* the unknown-service count */
	changed = service_late_text(&a->svcs[service].s, addr, text, len, &sc,
	    now_ms, &notes);
	log_lbkeys_notes(&notes);
	unknown_service(a, service, addr, text, len, now_ms);
	if (changed)
		agent_schedule_save_soon(a);
}
