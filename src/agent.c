/*
 * The agent core. Every input (a probe's run, a marker, the 250 ms tick)
 * ends in service_evaluate(): the rules give a target, the transition
 * engine moves towards it (or the kill switch stops it), the markers go
 * over that. A change of the decision goes through service_set_decision(),
 * which composes the lines once, logs the change, keeps the history and
 * settles the claims with lbkeys. The reply path only copies.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lbagent/agent.h"
#include "lbagent/clock.h"
#include "lbagent/decision.h"
#include "lbagent/history.h"
#include "lbagent/lbkeys.h"
#include "lbagent/log.h"
#include "lbagent/markers.h"
#include "lbagent/peers.h"
#include "lbagent/rules.h"
#include "lbagent/scheduler.h"
#include "lbagent/state.h"
#include "lbagent/systemd.h"
#include "lbagent/transition.h"
#include "lbagent/units.h"

#define MARKER_POLL_MS	250	/* markers show in replies well within 1 s */
#define EXPIRE_POLL_MS	5000
#define SAVE_RETRY_MS	1000	/* after a failed save (disk full, no fds) */
#define SAVE_SOON_MS	1000	/* coalesces saves of windows under way */

struct service {
	struct agent		*a;
	const char		*name;		/* "" for the default service */
	char			*marker_dir;	/* its own markers; NULL: none */
	struct markers		 own;
	struct probe		**probes;	/* agent::probes owns them */
	size_t			 nprobes;
	bool			 has_decision;
	struct decision		 decision;
	/* The line for each set of restore words, indexed by CLAIM_* bits. */
	char			 lines[CLAIM_ALL + 1][REPLY_MAX];
	size_t			 lens[CLAIM_ALL + 1];
	struct lbkeys		*keys;
	struct transition	*tr;
	struct history		 history;
	bool			 off;		/* automation off, as last seen */
	char			 off_by[PATH_MAX + 32];
	struct decision		 target;	/* the rules', last evaluated */
	uint64_t		 replies;
	uint64_t		 transitions[NODE_STATE_COUNT + 1]; /* [COUNT]: off */
	/* A marker taking the node out while no other node serves. */
	int64_t			 marker_out_ms;	/* since; INT64_MIN: no marker */
	bool			 marker_warned;
	char			 marker_warning[REASON_MAX + 64];
};

struct agent {
	struct event_base	*base;
	const struct config	*cfg;
	const struct probe_env	*env;
	struct probe		**probes;
	size_t			 nprobes;
	struct service		*svcs;		/* [0]: the default service */
	size_t			 nsvcs;
	struct markers		 node;		/* state_dir's own markers */
	uint64_t		 incarnation;
	int			 mode_env;	/* LBAGENT_MODE: -1 unset, 0, 1 off */
	char			 boot_id[BOOT_ID_MAX];
	int64_t			 started_wall_ms;
	struct event		*marker_ev, *expire_ev, *save_ev, *retry_ev;
	struct event		*soon_ev;
	bool			 save_failed;
	struct peers		*peers;		/* NULL: no peer guard */
};

/* "" for the default service, "service web: " for the others. */
static const char *
prefix(const struct service *s, char buf[96])
{
	if (s->name[0] == '\0')
		buf[0] = '\0';
	else
		snprintf(buf, 96, "service %s: ", s->name);
	return buf;
}

/* The line without its newline, for logs. */
static const char *
printable_line(const char *line, char buf[REPLY_MAX])
{
	size_t	n = strcspn(line, "\n");

	memcpy(buf, line, n);
	buf[n] = '\0';
	return buf;
}

static void
schedule_save(struct agent *a)
{
	/* After this callback returns: never an fsync inside a reply. */
	event_active(a->save_ev, EV_TIMEOUT, 0);
}

/*
 * For windows under way (a target that changed, a ramp step): saved
 * within a second, so a flapping probe costs one fsync a second at most.
 */
static void
schedule_save_soon(struct agent *a)
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
		ss[i].name = a->svcs[i].name;
		ss[i].has_decision = a->svcs[i].has_decision;
		ss[i].decision = a->svcs[i].decision;
		ss[i].keys = a->svcs[i].keys;
		ss[i].tr = a->svcs[i].tr;
		ss[i].history = &a->svcs[i].history;
	}
	return ss;
}

static void
save_cb(evutil_socket_t fd, short what, void *arg)
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
		const struct service *s = &a->svcs[i];

		if (!s->has_decision)
			continue;
		printable_line(s->lines[0], line);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s%s%s",
		    n ? "; " : "", s->name, s->name[0] ? ": " : "", line);
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

/* Says who a claim's end is owed to, or that nobody saw it. */
static void
log_release(struct service *s, const char *what, const char *word)
{
	char	p[96];
	size_t	n = lbkeys_owing(s->keys);

	if (n == 0)
		log_warnx("%s%s ended; no load balancer saw it, so no %s is "
		    "sent", prefix(s, p), what, word);
	else
		log_warnx("%s%s ended: sending %s to the %zu load balancer(s) "
		    "that saw it", prefix(s, p), what, word, n);
}

static void
compose(struct service *s, const struct decision *d)
{
	unsigned	mask;

	for (mask = 0; mask <= CLAIM_ALL; mask++)
		s->lens[mask] = reply_compose(d, mask, s->a->cfg->reply_reasons,
		    s->lines[mask]);
}

/* Makes d the service's decision: new lines, a log line, claims settled. */
static void
service_set_decision(struct service *s, const struct decision *d,
    bool at_start)
{
	char		 was[REPLY_MAX], now[REPLY_MAX], p[96], wb[24], nb[24];
	unsigned	 claims, released, held;
	const char	*what, *from, *to;

	if (s->has_decision && decision_equal(&s->decision, d) && !at_start)
		return;
	/* A transition for the history; a step of a ramp is not one. */
	from = s->has_decision ? decision_words(&s->decision, wb) : "start";
	to = decision_words(d, nb);
	if (strcmp(from, to) != 0 &&
	    !(s->has_decision && s->decision.ramping && d->ramping)) {
		history_add(&s->history, clock_wall_ms(), from, to,
		    d->automation_off && d->reason[0] == '\0' ?
		    "lbagent automation off" : d->reason);
		s->transitions[d->automation_off && d->state == NODE_UP ?
		    NODE_STATE_COUNT : d->state]++;
	}
	if (s->has_decision)
		printable_line(s->lines[0], was);
	compose(s, d);
	printable_line(s->lines[0], now);
	if (!s->has_decision)
		log_notice("%sreplying \"%s\"", prefix(s, p), now);
	else if (strcmp(was, now) != 0)
		log_warnx("%sreply changed%s: \"%s\" (was \"%s\")", prefix(s, p),
		    at_start ? " at start-up" : "", now, was);

	claims = reply_claims(d);
	/*
	 * Off leaves the load balancers as they are: a weight lbagent set is
	 * still held there, so it stays claimed (and a restore word not yet
	 * delivered stays owed) until automation decides again.
	 */
	if (d->automation_off)
		claims |= (lbkeys_claims(s->keys) | lbkeys_owed(s->keys)) &
		    CLAIM_WEIGHT;
	held = lbkeys_claims(s->keys);
	released = held & ~claims;
	lbkeys_claim(s->keys, claims);
	what = s->has_decision ? node_state_name(s->decision.state) : "claim";
	if (released & CLAIM_ADMIN)
		log_release(s, what, "'ready'");
	if (released & CLAIM_WEIGHT)
		log_release(s, "reduced weight", "'100%'");
	s->decision = *d;
	s->has_decision = true;
	notify_status(s->a);
	/*
	 * A claim that starts or ends is on disk before any reply carries its
	 * lines: a restart must know what the load balancers may hold. This
	 * is a marker's or a probe's turn of the loop, never a reply's.
	 */
	if (claims != held)
		save_cb(-1, 0, s->a);
	else
		schedule_save(s->a);
}

/* Why automation is off for s ("LBAGENT_MODE=off", ...); NULL: it is on. */
static const char *
off_source(const struct service *s, char *buf, size_t size)
{
	const struct agent	*a = s->a;

	if (a->node.m[MARKER_OFF].present)
		snprintf(buf, size, "marker %s/off", a->cfg->state_dir);
	else if (s->marker_dir != NULL && s->own.m[MARKER_OFF].present)
		snprintf(buf, size, "marker %s/off", s->marker_dir);
	else if (a->mode_env == 1)
		snprintf(buf, size, "LBAGENT_MODE=off");
	else if (a->mode_env == -1 && a->cfg->automation_off)
		snprintf(buf, size, "mode = off in %s", a->cfg->path);
	else
		return NULL;
	return buf;
}

/* A monotonic time as the wall clock's date and time, for people. */
static const char *
clock_text(int64_t ms, char buf[32])
{
	time_t		t = (time_t)((clock_wall_ms() - (clock_now_ms() - ms)) / 1000);
	struct tm	tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, 32, "?");
	return buf;
}

/* Switched off: says what the load balancers may still hold from lbagent. */
static void
log_switched_off(struct service *s, const char *why)
{
	struct decision	d;
	char		p[96], since[32], held[160];

	transition_current(s->tr, &d);
	if (d.state == NODE_DOWN)
		snprintf(held, sizeof(held), "down since %s, held by HAProxy "
		    "until an operator or lbagent says otherwise",
		    clock_text(transition_since_ms(s->tr), since));
	else if (d.weight < 100)
		snprintf(held, sizeof(held), "weight %u%% since %s, held by "
		    "HAProxy until an operator or lbagent says otherwise",
		    d.weight, clock_text(transition_since_ms(s->tr), since));
	else
		snprintf(held, sizeof(held), "nothing: lbagent last said up at "
		    "full weight");
	log_warnx("%sautomation off (%s): no automated decisions; replies say "
	    "only '# lbagent automation off' and markers still act. The load "
	    "balancers may still hold from lbagent: %s", prefix(s, p), why,
	    held);
}

/* True when every probe's verdict rests on evidence (scheduler.h). */
static bool
probes_settled(const struct service *s)
{
	size_t	i;

	for (i = 0; i < s->nprobes; i++)
		if (!probe_state(s->probes[i])->settled)
			return false;
	return true;
}

/*
 * A marker takes the node out whatever the peers say; the peer guard
 * only warns, once per marker, when no other node serves (asked after
 * the marker took effect).
 */
static void
marker_guard(struct service *s, const struct decision *d,
    const struct peer_view *pv)
{
	char		 p[96];
	const char	*kind;

	if (d->state != NODE_MAINT && d->state != NODE_DRAIN) {
		s->marker_out_ms = INT64_MIN;
		s->marker_warned = false;
		s->marker_warning[0] = '\0';
		return;
	}
	kind = d->state == NODE_MAINT ? "maint" : "drain";
	if (s->marker_out_ms == INT64_MIN)
		s->marker_out_ms = clock_now_ms();
	if (pv->round_ms == INT64_MIN || pv->round_ms < s->marker_out_ms) {
		peers_ask(s->a->peers);
		return;
	}
	if (pv->other_serving) {
		s->marker_warning[0] = '\0';
		s->marker_warned = false;
		return;
	}
	snprintf(s->marker_warning, sizeof(s->marker_warning), "%s marker "
	    "obeyed, but no other node is serving", kind);
	if (!s->marker_warned)
		log_warnx("%speer-guard: %s (%s)", prefix(s, p),
		    s->marker_warning, pv->why);
	s->marker_warned = true;
}

static void	service_evaluate(struct service *, bool);

static bool
loopback_host(const char *h)
{
	return strncmp(h, "127.", 4) == 0 || strcmp(h, "::1") == 0 ||
	    strcmp(h, "localhost") == 0;
}

/*
 * The other nodes read this node's public /status: an API on loopback
 * (the default) alone cannot serve peers on other hosts. Said once.
 */
static void
warn_unreachable_api(const struct config *cfg)
{
	char		host[256];
	const char	*u, *end;
	size_t		i, len;
	bool		remote_peer = false;

	for (i = 0; i < cfg->http.count; i++)
		if (!cfg->http.addr[i].is_unix &&
		    !loopback_host(cfg->http.addr[i].tcp.host))
			return;
	for (i = 0; i < cfg->peers.agents.count && !remote_peer; i++) {
		if ((u = strstr(cfg->peers.agents.items[i], "://")) == NULL)
			continue;
		u += 3;
		if ((end = strchr(u, '@')) != NULL && end < u + strcspn(u, "/"))
			u = end + 1;
		if (*u == '[')
			len = strcspn(++u, "]");
		else
			len = strcspn(u, ":/");
		if (len >= sizeof(host))
			len = sizeof(host) - 1;
		memcpy(host, u, len);
		host[len] = '\0';
		remote_peer = !loopback_host(host);
	}
	if (remote_peer)
		log_warnx("peer-guard: [http] listen has no address other nodes "
		    "can reach, so they cannot ask this node whether it serves "
		    "(they will count it as not serving)");
}

/* A round of the peer guard ended: every service looks again. */
static void
peers_changed(void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	for (i = 0; i < a->nsvcs; i++)
		service_evaluate(&a->svcs[i], false);
}

/*
 * The rules over the service's probes, the transition engine over the
 * rules (unless automation is off), then its markers over that.
 */
static void
service_evaluate(struct service *s, bool at_start)
{
	struct rules_input	*in = NULL;
	struct decision		 target, auto_d, d;
	struct transition_notes	 notes;
	struct peer_view	 pv = { .round_ms = INT64_MIN };
	char			 wb[PATH_MAX + 32], p[96];
	const char		*why;
	char			 da[32];
	size_t			 i;

	if (s->nprobes > 0 && (in = calloc(s->nprobes, sizeof(*in))) != NULL) {
		for (i = 0; i < s->nprobes; i++) {
			const struct probe_conf *pc = probe_conf(s->probes[i]);
			const struct probe_state *st = probe_state(s->probes[i]);

			in[i].name = pc->name;
			in[i].counted = st->counted;
			in[i].reason = st->counted_reason;
			in[i].on_warn = pc->on_warn;
			in[i].on_crit = pc->on_crit;
		}
	}
	rules_evaluate(in, in != NULL ? s->nprobes : 0, &target);
	free(in);
	s->target = target;
	/* The peer guard's view, once, for the engine and the markers. */
	if (s->a->peers != NULL)
		peers_view(s->a->peers, (size_t)(s - s->a->svcs), &pv);
	if ((why = off_source(s, wb, sizeof(wb))) != NULL) {
		snprintf(s->off_by, sizeof(s->off_by), "%s", why);
		if (!s->off)
			log_switched_off(s, why);
		s->off = true;
		decision_off(&auto_d);
	} else {
		if (s->off) {
			/* Like a start: no going out sooner than down_after. */
			transition_restart_counts(s->tr);
			units_format_ms(transition_conf(s->tr)->down_after_ms,
			    da, sizeof(da));
			log_warnx("%sautomation on again: counting starts now "
			    "(no going out within down_after %s)", prefix(s, p),
			    da);
		}
		s->off = false;
		if (transition_evaluate(s->tr, &target, probes_settled(s),
		    s->a->peers != NULL ? &pv : NULL, clock_now_ms(), &auto_d,
		    &notes))
			schedule_save_soon(s->a);
		if (guard_need_ms(s->tr) != INT64_MIN &&
		    pv.round_ms < guard_need_ms(s->tr))
			peers_ask(s->a->peers);
		for (i = 0; i < notes.count; i++) {
			if (notes.n[i].warning)
				log_warnx("%s%s", prefix(s, p), notes.n[i].text);
			else
				log_notice("%s%s", prefix(s, p), notes.n[i].text);
		}
	}
	decision_make(&s->a->node, s->marker_dir ? &s->own : NULL, &auto_d, &d);
	if (s->a->peers != NULL)
		marker_guard(s, &d, &pv);
	service_set_decision(s, &d, at_start);
}

/* Logs a marker that appeared, went, or became unreadable. */
static void
log_marker_changes(const char *where, const struct markers *old,
    const struct markers *new)
{
	int	i;

	for (i = 0; i < MARKER_COUNT; i++) {
		const struct marker *o = &old->m[i], *n = &new->m[i];
		const char *name = marker_name((enum marker_kind)i);

		if (n->unreadable && (!o->unreadable ||
		    strcmp(o->error, n->error) != 0))
			log_warnx("marker %s%s exists but cannot be read (%s): "
			    "counting it as present", where, name, n->error);
		if (n->present && !o->present)
			log_notice("marker %s%s appeared: %s", where, name,
			    n->reason);
		else if (!n->present && o->present)
			log_notice("marker %s%s removed", where, name);
	}
}

static void
read_markers(struct agent *a, bool at_start)
{
	struct markers	ms = a->node;
	char		where[80];
	size_t		i;

	markers_read(a->cfg->state_dir, &ms);
	log_marker_changes("", &a->node, &ms);
	a->node = ms;
	for (i = 0; i < a->nsvcs; i++) {
		struct service *s = &a->svcs[i];

		if (s->marker_dir != NULL) {
			ms = s->own;
			markers_read_service(s->marker_dir, &ms);
			snprintf(where, sizeof(where), "%s/", s->name);
			log_marker_changes(where, &s->own, &ms);
			s->own = ms;
		}
		service_evaluate(s, at_start);
	}
}

static void
marker_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	read_markers(arg, false);
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
	for (i = 0; i < a->nsvcs; i++)
		for (now = clock_now_ms(); lbkeys_expire(a->svcs[i].keys, now,
		    &gone); changed = true)
			log_lbkeys_note(&gone);
	if (changed)
		schedule_save_soon(a);
}

/* A probe finished a run: the services it belongs to look again. */
static void
probe_ran(struct probe *p, bool changed, void *arg)
{
	struct agent	*a = arg;
	size_t		 i, j;

	if (!changed)
		return;
	for (i = 0; i < a->nsvcs; i++)
		for (j = 0; j < a->svcs[i].nprobes; j++)
			if (a->svcs[i].probes[j] == p)
				service_evaluate(&a->svcs[i], false);
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
		if (strcmp(probe_conf(a->probes[i])->name, name) == 0)
			return a->probes[i];
	return NULL;
}

static bool
named_by_a_service(const struct config *cfg, const char *name)
{
	size_t	i, j;

	for (i = 0; i < cfg->nservices; i++)
		for (j = 0; j < cfg->services[i].nprobes; j++)
			if (strcmp(cfg->services[i].probes[j], name) == 0)
				return true;
	return false;
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
		a->probes[i] = probe_new(&a->cfg->probes[i], a->env, probe_ran, a);
		if (a->probes[i] == NULL)
			return -1;
		a->nprobes++;
	}
	return 0;
}

/* The default service, then one per [service]; each with its probes. */
static int
create_services(struct agent *a)
{
	const struct config	*cfg = a->cfg;
	struct service		*s;
	size_t			 i, j;

	a->nsvcs = cfg->nservices + 1;
	if ((a->svcs = calloc(a->nsvcs, sizeof(*a->svcs))) == NULL)
		return -1;
	for (i = 0; i < a->nsvcs; i++) {
		s = &a->svcs[i];
		s->a = a;
		s->marker_out_ms = INT64_MIN;
		if ((s->tr = transition_new(i == 0 ? &cfg->transitions :
		    &cfg->services[i - 1].transitions, clock_now_ms())) == NULL)
			return -1;
		if ((s->keys = lbkeys_new((int64_t)cfg->lb_forget_after_ms)) == NULL)
			return -1;
		s->probes = calloc(a->nprobes ? a->nprobes : 1, sizeof(*s->probes));
		if (s->probes == NULL)
			return -1;
		if (i == 0) {
			s->name = "";
			for (j = 0; j < a->nprobes; j++)
				if (!named_by_a_service(cfg,
				    probe_conf(a->probes[j])->name))
					s->probes[s->nprobes++] = a->probes[j];
			continue;
		}
		s->name = cfg->services[i - 1].name;
		if (asprintf(&s->marker_dir, "%s/%s", cfg->state_dir,
		    s->name) == -1) {
			s->marker_dir = NULL;
			return -1;
		}
		/* So that `touch state_dir/NAME/drain` works at once. */
		if (mkdir(s->marker_dir, 0755) == -1 && errno != EEXIST)
			log_warn("%s: cannot create the service's marker "
			    "directory", s->marker_dir);
		for (j = 0; j < cfg->services[i - 1].nprobes; j++)
			s->probes[s->nprobes++] = find_probe(a,
			    cfg->services[i - 1].probes[j]);
	}
	return 0;
}

static void
free_services(struct service *svcs, size_t n)
{
	size_t	i;

	for (i = 0; svcs != NULL && i < n; i++) {
		lbkeys_free(svcs[i].keys);
		transition_free(svcs[i].tr);
		free(svcs[i].probes);
		free(svcs[i].marker_dir);
	}
	free(svcs);
}

/* The old probe with pc's name and settings, not yet taken; or -1. */
static ssize_t
same_probe(struct probe **old, size_t n, const bool *taken,
    const struct probe_conf *pc)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		const struct probe_conf *o = probe_conf(old[i]);

		if (!taken[i] && strcmp(o->name, pc->name) == 0 &&
		    strcmp(o->signature, pc->signature) == 0)
			return (ssize_t)i;
	}
	return -1;
}

/* Moves what a service has lived through into its successor. */
static void
carry_over(struct service *to, struct service *from)
{
	lbkeys_free(to->keys);
	to->keys = from->keys;
	from->keys = NULL;
	transition_carry(to->tr, from->tr);
	to->history = from->history;
	to->own = from->own;
	to->off = from->off;
	memcpy(to->off_by, from->off_by, sizeof(to->off_by));
	to->target = from->target;
	to->replies = from->replies;
	memcpy(to->transitions, from->transitions, sizeof(to->transitions));
	to->has_decision = from->has_decision;
	to->decision = from->decision;
	to->marker_out_ms = from->marker_out_ms;
	to->marker_warned = from->marker_warned;
	memcpy(to->marker_warning, from->marker_warning,
	    sizeof(to->marker_warning));
	if (to->has_decision)
		compose(to, &to->decision);	/* reply_reasons may differ */
}

int
agent_reload(struct agent *a, struct config *cfg, struct config *old)
{
	struct probe	**oldp = a->probes, **newp;
	struct service	 *olds = a->svcs;
	size_t		  noldp = a->nprobes, nolds = a->nsvcs, i, kept = 0;
	size_t		  carried = 0;
	bool		 *taken, *fresh, pfailed;
	ssize_t		  j;

	(void)old;
	newp = calloc(cfg->nprobes ? cfg->nprobes : 1, sizeof(*newp));
	taken = calloc(noldp ? noldp : 1, sizeof(*taken));
	fresh = calloc(cfg->nprobes ? cfg->nprobes : 1, sizeof(*fresh));
	if (newp == NULL || taken == NULL || fresh == NULL)
		goto fail;
	for (i = 0; i < cfg->nprobes; i++) {
		struct probe_conf *pc = &cfg->probes[i];

		if ((j = same_probe(oldp, noldp, taken, pc)) >= 0) {
			/*
			 * Same settings: it keeps running, with its state. Its
			 * run may point into its kind's settings: those move
			 * into the new configuration, the twin goes with the
			 * old one.
			 */
			struct probe_conf *opc =
			    (struct probe_conf *)probe_conf(oldp[j]);
			void *k = pc->kconf;

			pc->kconf = opc->kconf;
			opc->kconf = k;
			probe_set_conf(oldp[j], pc);
			newp[i] = oldp[j];
			taken[j] = true;
			kept++;
		} else if ((newp[i] = probe_new(pc, a->env, probe_ran, a)) ==
		    NULL)
			goto fail;
		else
			fresh[i] = true;
	}
	/* The services, built as at start over the new probes. */
	a->cfg = cfg;
	a->probes = newp;
	a->nprobes = cfg->nprobes;
	a->svcs = NULL;
	if (create_services(a) == -1) {
		free_services(a->svcs, a->nsvcs);
		a->cfg = old;
		a->probes = oldp;
		a->nprobes = noldp;
		a->svcs = olds;
		a->nsvcs = nolds;
		goto fail;
	}
	for (i = 0; i < a->nsvcs; i++) {
		size_t k;

		for (k = 0; k < nolds; k++) {
			if (strcmp(olds[k].name, a->svcs[i].name) == 0 &&
			    olds[k].keys != NULL) {
				carry_over(&a->svcs[i], &olds[k]);
				carried++;
				break;
			}
		}
	}
	for (i = 0; i < nolds; i++)
		if (olds[i].keys != NULL && lbkeys_owing(olds[i].keys) > 0)
			log_warnx("reload: service %s is gone; the restore words "
			    "it owed %zu load balancer(s) will not be sent",
			    olds[i].name, lbkeys_owing(olds[i].keys));
	free_services(olds, nolds);
	for (i = 0; i < noldp; i++)
		if (!taken[i])
			probe_free(oldp[i]);
	free(oldp);
	for (i = 0; i < a->nprobes; i++)
		if (fresh[i])
			probe_schedule(a->probes[i]);
	log_notice("reload: %zu probe(s) kept with their state, %zu new, %zu "
	    "gone; %zu service(s) kept, %zu new", kept, a->nprobes - kept,
	    noldp - kept, carried, a->nsvcs - carried);
	free(taken);
	free(fresh);
	/* The guard's sources follow; a failure leaves the old ones asking. */
	if (a->peers != NULL)
		a->peers = peers_reload(a->peers, cfg, &pfailed);
	else
		a->peers = peers_new(a->base, a->env->curl, cfg, peers_changed,
		    a, &pfailed);
	if (pfailed)
		log_warnx("reload: out of memory for the peer guard's sources; "
		    "it goes on with the ones it had");
	read_markers(a, false);
	schedule_save(a);
	return 0;
fail:
	/* Nothing changed: kept probes go back to the old settings. */
	for (i = 0; newp != NULL && i < cfg->nprobes; i++) {
		if (newp[i] == NULL)
			continue;
		if (fresh != NULL && fresh[i])
			probe_free(newp[i]);
		else {
			struct probe_conf *pc = &cfg->probes[i];
			struct probe_conf *opc = (struct probe_conf *)
			    config_probe(old, pc->name);
			void *x = pc->kconf;

			pc->kconf = opc->kconf;
			opc->kconf = x;
			probe_set_conf(newp[i], opc);
		}
	}
	free(newp);
	free(taken);
	free(fresh);
	log_errx("reload: out of memory; keeping the running configuration");
	return -1;
}

/* Loads the state file into the services and composes the old lines. */
static void
load_state(struct agent *a)
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
	for (i = 0; i < a->nsvcs; i++) {
		if (!ss[i].has_decision)
			continue;
		/* The old line, so that the change at start-up is logged. */
		a->svcs[i].has_decision = true;
		a->svcs[i].decision = ss[i].decision;
		compose(&a->svcs[i], &ss[i].decision);
	}
	free(ss);
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
	if (create_probes(a) == -1 || create_services(a) == -1)
		goto fail;
	load_state(a);
	a->incarnation++;
	a->peers = peers_new(base, env->curl, cfg, peers_changed, a, &failed);
	if (failed)
		goto fail;
	if (a->peers != NULL)
		warn_unreachable_api(cfg);
	if ((a->save_ev = event_new(base, -1, 0, save_cb, a)) == NULL ||
	    (a->retry_ev = evtimer_new(base, save_cb, a)) == NULL ||
	    (a->soon_ev = evtimer_new(base, save_cb, a)) == NULL ||
	    (a->marker_ev = add_timer(a, MARKER_POLL_MS, marker_cb)) == NULL ||
	    (a->expire_ev = add_timer(a, EXPIRE_POLL_MS, expire_cb)) == NULL)
		goto fail;
	read_markers(a, true);
	for (i = 0; i < a->nprobes; i++)
		if (probe_schedule(a->probes[i]) == -1)
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
		probe_free(a->probes[i]);
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
		save_cb(-1, 0, a);
		event_free(a->save_ev);
	}
	free_services(a->svcs, a->nsvcs);
	free(a);
}

int
agent_mode_env(char *buf, size_t size)
{
	const char	*v = getenv("LBAGENT_MODE");
	char		 esc[4 * 64 + 1];
	bool		 off;

	if (v == NULL)
		return -1;
	if (config_parse_mode(v, &off) == 0)
		return off ? 1 : 0;
	text_escape(esc, v, strnlen(v, 64));
	snprintf(buf, size, "%s", esc);
	return -2;
}

int
agent_select(const struct agent *a, int port, const char *text, size_t len)
{
	size_t	i;

	if (port != AGENT_SHARED_PORT)	/* a connection older than a reload */
		return (size_t)port < a->nsvcs ? port : 0;
	for (i = 1; i < a->nsvcs; i++) {
		const struct service_conf *sc = &a->cfg->services[i - 1];

		/* A service with its own port answers to its name here too. */
		if (strlen(sc->name) == len && memcmp(sc->name, text, len) == 0)
			return (int)i;
	}
	return 0;
}

bool
agent_wants_name(const struct agent *a, int port)
{
	size_t	i;

	if (port != AGENT_SHARED_PORT)
		return false;
	for (i = 0; i < a->cfg->nservices; i++)
		if (a->cfg->services[i].listen.count == 0)
			return true;
	return false;
}

size_t
agent_reply(struct agent *a, int service, const char *addr, const char *text,
    size_t len, char buf[REPLY_MAX], struct agent_check *ck)
{
	struct service		*s = &a->svcs[service];
	struct lbkeys_notes	 notes;
	bool			 changed;
	unsigned		 restore;

	restore = lbkeys_check(s->keys, addr, text, len, clock_now_ms(),
	    &ck->created, &changed, &notes);
	log_lbkeys_notes(&notes);
	ck->carried = reply_claims(&s->decision);
	ck->restore = restore;
	memcpy(buf, s->lines[restore], s->lens[restore] + 1);
	lbkeys_note_reply(s->keys, buf, s->lens[restore] - 1);
	s->replies++;
	/* Key bookkeeping: saved within a second, never in a reply's turn. */
	if (changed)
		schedule_save_soon(a);
	return s->lens[restore];
}

size_t
agent_nservices(const struct agent *a)
{
	return a->nsvcs;
}

int
agent_find_service(const struct agent *a, const char *name)
{
	size_t	i;

	for (i = 0; i < a->nsvcs; i++)
		if (strcmp(a->svcs[i].name, name) == 0)
			return (int)i;
	return -1;
}

void
agent_service_view(const struct agent *a, size_t i,
    struct agent_service_view *v)
{
	const struct service	*s = &a->svcs[i];

	memset(v, 0, sizeof(*v));
	v->name = s->name;
	v->reply = s->lines[0];
	v->decision = &s->decision;
	v->target = &s->target;
	v->tr = s->tr;
	v->history = &s->history;
	v->node = &a->node;
	v->own = s->marker_dir != NULL ? &s->own : NULL;
	v->probes = s->probes;
	v->nprobes = s->nprobes;
	v->keys = s->keys;
	v->off_by = s->off ? s->off_by : NULL;
	v->replies = s->replies;
	v->transitions = s->transitions;
	v->marker_warning = s->marker_warning;
	if (a->peers != NULL) {
		peers_view(a->peers, i, &v->peers);
		v->has_peers = true;
	}
}

void
agent_info(const struct agent *a, struct agent_info *info)
{
	info->cfg = a->cfg;
	info->incarnation = a->incarnation;
	info->started_wall_ms = a->started_wall_ms;
	info->peers = a->peers;
}

void
agent_late_text(struct agent *a, int service, const char *addr,
    const char *text, size_t len, const struct agent_check *ck)
{
	struct lbkeys_notes	notes;
	bool			changed;

	changed = lbkeys_late_text(a->svcs[service].keys, addr, text, len,
	    ck->carried, ck->created, clock_now_ms(), &notes);
	log_lbkeys_notes(&notes);
	if (changed)
		schedule_save_soon(a);
}

bool
agent_addr_sends_text(const struct agent *a, const char *addr)
{
	size_t	i;

	for (i = 0; i < a->nsvcs; i++)
		if (lbkeys_addr_sends_text(a->svcs[i].keys, addr))
			return true;
	return false;
}
