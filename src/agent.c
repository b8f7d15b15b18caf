/*
 * The agent core. Everything that changes a reply goes through
 * agent_set_decision(), which composes the lines once, logs the change and
 * settles the claims with lbkeys; the reply path only copies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lbagent/agent.h"
#include "lbagent/clock.h"
#include "lbagent/decision.h"
#include "lbagent/lbkeys.h"
#include "lbagent/log.h"
#include "lbagent/markers.h"
#include "lbagent/state.h"

#define MARKER_POLL_MS	250	/* markers show in replies well within 1 s */
#define EXPIRE_POLL_MS	5000
#define SAVE_RETRY_MS	1000	/* after a failed save (disk full, no fds) */

struct agent {
	struct event_base	*base;
	const struct config	*cfg;
	struct lbkeys		*keys;
	struct state		 state;		/* state.decision: the current one */
	struct markers		 markers;
	/* The line for each set of restore words, indexed by CLAIM_* bits. */
	char			 lines[CLAIM_ALL + 1][REPLY_MAX];
	size_t			 lens[CLAIM_ALL + 1];
	struct event		*marker_ev, *expire_ev, *save_ev, *retry_ev;
	bool			 save_failed;
};

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

static void
save_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent	*a = arg;

	(void)fd;
	(void)what;
	struct timeval	 retry = { SAVE_RETRY_MS / 1000,
			    (SAVE_RETRY_MS % 1000) * 1000 };

	if (state_save(a->cfg->state_dir, &a->state, a->keys, clock_now_ms(),
	    clock_wall_ms()) == -1) {
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

/* Says who a claim's end is owed to, or that nobody saw it. */
static void
log_release(struct agent *a, const char *word)
{
	size_t	n = lbkeys_owing(a->keys);

	if (n == 0)
		log_warnx("%s ended; no load balancer saw it, so no %s is "
		    "sent", node_state_name(a->state.decision.state), word);
	else
		log_warnx("%s ended: sending %s to the %zu load balancer(s) "
		    "that saw it", node_state_name(a->state.decision.state),
		    word, n);
}

/* Makes d the decision: new lines, a log line, claims settled. */
static void
agent_set_decision(struct agent *a, const struct decision *d, bool at_start)
{
	char		 was[REPLY_MAX], now[REPLY_MAX];
	unsigned	 mask, released;
	int64_t		 now_ms = clock_now_ms();

	if (a->state.has_decision && decision_equal(&a->state.decision, d) &&
	    !at_start)
		return;
	if (a->state.has_decision)
		printable_line(a->lines[0], was);
	for (mask = 0; mask <= CLAIM_ALL; mask++)
		a->lens[mask] = reply_compose(d, mask, a->cfg->reply_reasons,
		    a->lines[mask]);
	printable_line(a->lines[0], now);
	if (!a->state.has_decision)
		log_notice("replying \"%s\"", now);
	else if (strcmp(was, now) != 0)
		log_warnx("reply changed%s: \"%s\" (was \"%s\")",
		    at_start ? " at start-up" : "", now, was);

	released = lbkeys_claims(a->keys) & ~reply_claims(d);
	lbkeys_claim(a->keys, reply_claims(d), now_ms);
	if (released & CLAIM_ADMIN)
		log_release(a, "'ready'");
	if (released & CLAIM_WEIGHT)
		log_release(a, "'100%'");
	a->state.decision = *d;
	a->state.has_decision = true;
	schedule_save(a);
}

/* Logs a marker that appeared, went, or became unreadable. */
static void
log_marker_changes(const struct markers *old, const struct markers *new)
{
	int	i;

	for (i = 0; i < MARKER_COUNT; i++) {
		const struct marker *o = &old->m[i], *n = &new->m[i];

		if (n->unreadable && (!o->unreadable ||
		    strcmp(o->error, n->error) != 0))
			log_warnx("marker %s exists but cannot be read (%s): "
			    "counting it as present",
			    marker_name((enum marker_kind)i), n->error);
		if (n->present && !o->present)
			log_notice("marker %s appeared: %s",
			    marker_name((enum marker_kind)i), n->reason);
		else if (!n->present && o->present)
			log_notice("marker %s removed",
			    marker_name((enum marker_kind)i));
	}
}

static void
read_markers(struct agent *a, bool at_start)
{
	struct markers	ms = a->markers;
	struct decision	d;

	markers_read(a->cfg->state_dir, &ms);
	log_marker_changes(&a->markers, &ms);
	a->markers = ms;
	decision_from_markers(&ms, &d);
	agent_set_decision(a, &d, at_start);
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
	struct agent	*a = arg;

	(void)fd;
	(void)what;
	if (lbkeys_expire(a->keys, clock_now_ms()))
		schedule_save(a);
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

struct agent *
agent_new(struct event_base *base, const struct config *cfg)
{
	struct agent	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->base = base;
	a->cfg = cfg;
	if ((a->keys = lbkeys_new((int64_t)cfg->lb_forget_after_ms)) == NULL)
		goto fail;
	if (mkdir(cfg->state_dir, 0755) == -1 && errno != EEXIST)
		log_warn("%s: cannot create state directory", cfg->state_dir);
	switch (state_load(cfg->state_dir, &a->state, a->keys, clock_now_ms(),
	    clock_wall_ms())) {
	case STATE_LOADED:
		log_notice("%s/%s: resumed: last reply was %s, %zu load "
		    "balancer(s) known", cfg->state_dir, STATE_FILE,
		    a->state.has_decision ?
		    node_state_name(a->state.decision.state) : "none",
		    lbkeys_count(a->keys));
		break;
	case STATE_NONE:
		log_notice("%s/%s: none yet: first start", cfg->state_dir,
		    STATE_FILE);
		break;
	case STATE_CORRUPT:
		break;
	}
	a->state.incarnation++;
	if ((a->save_ev = event_new(base, -1, 0, save_cb, a)) == NULL ||
	    (a->retry_ev = evtimer_new(base, save_cb, a)) == NULL ||
	    (a->marker_ev = add_timer(a, MARKER_POLL_MS, marker_cb)) == NULL ||
	    (a->expire_ev = add_timer(a, EXPIRE_POLL_MS, expire_cb)) == NULL)
		goto fail;
	/* The loaded decision composes the old line, so a change is logged. */
	if (a->state.has_decision) {
		struct decision old = a->state.decision;
		unsigned mask;

		for (mask = 0; mask <= CLAIM_ALL; mask++)
			a->lens[mask] = reply_compose(&old, mask,
			    cfg->reply_reasons, a->lines[mask]);
	}
	read_markers(a, true);
	return a;
fail:
	agent_free(a);
	return NULL;
}

void
agent_free(struct agent *a)
{
	if (a == NULL)
		return;
	if (a->marker_ev != NULL)
		event_free(a->marker_ev);
	if (a->expire_ev != NULL)
		event_free(a->expire_ev);
	if (a->retry_ev != NULL)
		event_free(a->retry_ev);
	a->retry_ev = NULL;
	if (a->save_ev != NULL) {
		/* A save still pending must not be lost at shutdown. */
		save_cb(-1, 0, a);
		event_free(a->save_ev);
	}
	lbkeys_free(a->keys);
	free(a);
}

size_t
agent_reply(struct agent *a, const char *addr, const char *text, size_t len,
    char buf[REPLY_MAX], struct agent_check *ck)
{
	bool		changed;
	unsigned	restore;

	restore = lbkeys_check(a->keys, addr, text, len, clock_now_ms(),
	    &ck->created, &changed);
	ck->carried = reply_claims(&a->state.decision);
	memcpy(buf, a->lines[restore], a->lens[restore] + 1);
	if (changed)
		schedule_save(a);
	return a->lens[restore];
}

void
agent_late_text(struct agent *a, const char *addr, const char *text,
    size_t len, const struct agent_check *ck)
{
	if (lbkeys_late_text(a->keys, addr, text, len, ck->carried, ck->created,
	    clock_now_ms()))
		schedule_save(a);
}

bool
agent_addr_sends_text(struct agent *a, const char *addr)
{
	return lbkeys_addr_sends_text(a->keys, addr);
}
