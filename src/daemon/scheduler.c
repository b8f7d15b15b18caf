/* The probe scheduler: intervals, jitter, timeouts, fall/rise. */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/scheduler.h"

/* Unknown runs are logged at most this often per probe, with a count. */
#define UNKNOWN_LOG_EVERY_MS	60000

struct probe {
	const struct probe_conf	*conf;
	struct probe_kconf	*kconf;		/* held: what run.conf points into */
	struct probe_run	 run;
	struct probe_state	 st;
	struct event		*next_ev;	/* the next run */
	struct event		*timeout_ev;	/* the run in flight's deadline */
	/*
	 * With a window: the samples_per_run - 1 runs after each judged one,
	 * every interval / samples_per_run, feed the window only.
	 */
	bool			 has_window;
	struct window		 win;
	struct event		*sample_ev;
	uint64_t		 sample_next;	/* 1..samples_per_run - 1 */
	bool			 sampling;	/* the run in flight is one */
	int64_t			 started_ms;	/* of the run in flight */
	scheduler_ran_fn		 ran;
	void			*arg;
	/* Unknown runs not logged yet, and when we last logged one. */
	unsigned		 unknown_unlogged;
	bool			 unknown_logged;
	int64_t			 unknown_logged_ms;
	char			 unknown_reason[PROBE_REASON_MAX + 1];
	/* The latest run that said anything was the check's own unknown. */
	bool			 check_unknown;
};

static void	probe_reported(struct probe_run *, const struct probe_outcome *);

/* lbagent could not run the check: it says nothing of the service. */
static bool
own_trouble(const struct probe_outcome *out)
{
	return out->result == PROBE_UNKNOWN && !out->from_check;
}

bool
scheduler_state_combine(struct probe_state *st)
{
	const struct probe_window_view	*w = &st->window;
	enum probe_result		 r = st->run_counted;
	const char			*why = st->run_counted_reason;

	if (w->on && w->judging && w->result != PROBE_OK &&
	    (r == PROBE_OK || (r == PROBE_WARN && w->result == PROBE_CRIT))) {
		r = w->result;
		why = w->reason;
		st->settled = true;	/* a judged window is evidence */
	}
	if (r == st->counted)
		return false;
	st->counted = r;
	if (r == PROBE_OK)
		st->counted_reason[0] = '\0';
	else
		memmove(st->counted_reason, why, sizeof(st->counted_reason));
	return true;
}

static void	apply_run(struct probe_state *, uint64_t, uint64_t, bool,
		    const struct probe_outcome *);

bool
scheduler_state_apply(struct probe_state *st, uint64_t fall, uint64_t rise,
    bool unknown_counts, const struct probe_outcome *out)
{
	apply_run(st, fall, rise, unknown_counts, out);
	return scheduler_state_combine(st);
}

/* fall/rise: what the runs count as. */
static void
apply_run(struct probe_state *st, uint64_t fall, uint64_t rise,
    bool unknown_counts, const struct probe_outcome *out)
{
	st->has_run = true;
	st->last = *out;
	st->runs[out->result]++;
	/*
	 * Nothing is learnt of the service when lbagent could not run the
	 * check, nor from the check's own unknown with on_unknown = ignore:
	 * streaks, what it counts as and whether it is settled stay. The
	 * check's unknown that counts is a bad run like warn and crit.
	 */
	if (out->result == PROBE_UNKNOWN && (!out->from_check ||
	    !unknown_counts))
		return;
	if (out->result == PROBE_OK) {
		st->ok_streak++;
		st->bad_streak = 0;
		if (st->ok_streak >= rise)
			st->settled = true;
		if (st->run_counted != PROBE_OK && st->ok_streak >= rise) {
			st->run_counted = PROBE_OK;
			st->run_counted_reason[0] = '\0';
		}
		return;
	}
	st->bad_streak++;
	st->ok_streak = 0;
	if (st->bad_streak >= fall)
		st->settled = true;
	/*
	 * Failing after `fall` bad runs; once failing, a change between warn,
	 * crit and unknown counts at once. The reason is the one of the run
	 * that changed what the probe counts as, so that replies stay steady
	 * while a measured number moves.
	 */
	if ((st->run_counted == PROBE_OK && st->bad_streak >= fall) ||
	    (st->run_counted != PROBE_OK && st->run_counted != out->result)) {
		st->run_counted = out->result;
		memcpy(st->run_counted_reason, out->reason, sizeof(out->reason));
	}
}

/* interval +/- 10%, so that probes do not fire in lockstep. */
static struct timeval
next_delay(const struct probe *p)
{
	int64_t		ms = (int64_t)p->conf->interval_ms;
	int64_t		span = ms / 5;
	struct timeval	tv;

	if (span > 0)
		ms += random() % (span + 1) - span / 2;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return tv;
}

static struct timeval
tv_of_ms(uint64_t ms)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return tv;
}

static void
start_run(struct probe *p, bool sampling)
{
	struct timeval	limit = tv_of_ms(p->conf->timeout_ms);

	evtimer_add(p->timeout_ev, &limit);
	p->started_ms = clock_now_ms();
	p->sampling = sampling;
	if (!sampling)
		p->st.last_run_ms = p->started_ms;
	p->run.in_flight = true;
	p->run.ops->start(&p->run);
}

/* A run that only feeds the window gives way to the judged one. */
static void
drop_sample(struct probe *p)
{
	if (!p->run.in_flight || !p->sampling)
		return;
	evtimer_del(p->timeout_ev);
	if (p->run.ops->cancel != NULL)
		p->run.ops->cancel(&p->run);
	p->run.in_flight = false;
}

static void
run_cb(evutil_socket_t fd, short what, void *arg)
{
	struct probe	*p = arg;
	struct timeval	 next = next_delay(p), step;

	(void)fd;
	(void)what;
	evtimer_add(p->next_ev, &next);
	drop_sample(p);
	if (p->run.in_flight)
		return;		/* cannot happen: timeout < interval */
	start_run(p, false);
	p->sample_next = 0;
	if (p->has_window && p->conf->window.samples_per_run > 1) {
		p->sample_next = 1;
		step = tv_of_ms(p->conf->interval_ms /
		    p->conf->window.samples_per_run);
		evtimer_add(p->sample_ev, &step);
	}
}

static void
sample_cb(evutil_socket_t fd, short what, void *arg)
{
	struct probe	*p = arg;
	uint64_t	 n = p->conf->window.samples_per_run;
	int64_t		 at, now = clock_now_ms();
	struct timeval	 delay;

	(void)fd;
	(void)what;
	if (p->sample_next == 0 || p->sample_next >= n)
		return;
	/* The k-th at k * interval / n from the judged run's start. */
	if (++p->sample_next < n) {
		at = p->st.last_run_ms + (int64_t)(p->sample_next *
		    p->conf->interval_ms / n);
		delay = tv_of_ms(at > now ? (uint64_t)(at - now) : 0);
		evtimer_add(p->sample_ev, &delay);
	}
	/* Cannot happen either: timeout <= interval / samples_per_run. */
	if (!p->run.in_flight)
		start_run(p, true);
}

/* The window's figures and verdict, after a sample. */
static void
window_update(struct probe *p, int64_t now_ms)
{
	struct probe_window_view	*v = &p->st.window;

	window_stats(&p->win, now_ms, &v->stats);
	v->result = window_judge(&p->conf->window, &v->stats, &v->judging,
	    v->reason, sizeof(v->reason));
	v->total_samples = p->win.total_samples;
	v->total_latency_ms = p->win.total_latency_ms;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct probe	*p = arg;
	char		 limit[32];

	(void)fd;
	(void)what;
	if (!p->run.in_flight)
		return;
	if (p->run.ops->cancel != NULL)
		p->run.ops->cancel(&p->run);
	units_format_ms(p->conf->timeout_ms, limit, sizeof(limit));
	probe_report(&p->run, PROBE_CRIT, NAN, "timed out after %s", limit);
}

/*
 * A shortage of lbagent's own may last and hit every run: the first
 * unknown run is logged, later ones at most once a minute with how many
 * there were since, so that the log neither floods nor hides them.
 */
static void
log_unknown(struct probe *p, const struct probe_outcome *out)
{
	int64_t	now = clock_now_ms();

	if (own_trouble(out)) {
		p->unknown_unlogged++;
		memcpy(p->unknown_reason, out->reason, sizeof(out->reason));
	}
	if (p->unknown_unlogged == 0 || (p->unknown_logged &&
	    now - p->unknown_logged_ms < UNKNOWN_LOG_EVERY_MS))
		return;
	if (!own_trouble(out))
		log_warnx("probe %s: %u unknown run%s not counted since the "
		    "last such message, the last: %s", p->conf->name,
		    p->unknown_unlogged, p->unknown_unlogged == 1 ? "" : "s",
		    p->unknown_reason);
	else if (p->unknown_unlogged == 1)
		log_warnx("probe %s: unknown, not counted: %s", p->conf->name,
		    p->unknown_reason);
	else
		log_warnx("probe %s: unknown, not counted: %s (%u unknown runs "
		    "since the last such message)", p->conf->name,
		    p->unknown_reason, p->unknown_unlogged);
	p->unknown_unlogged = 0;
	p->unknown_logged = true;
	p->unknown_logged_ms = now;
}

/*
 * The check's own unknown is a broken check rather than a broken
 * service: a warning when the probe turns unknown, whatever on_unknown
 * makes of it, and a notice when a run says something again while such
 * runs were not counted. changed: this run changed what it counts as
 * (logged by the caller).
 */
static void
log_check_unknown(struct probe *p, const struct probe_outcome *out,
    bool counts, bool changed)
{
	const char	*name = p->conf->name;

	if (own_trouble(out))
		return;
	if (out->result == PROBE_UNKNOWN) {
		if (!p->check_unknown && !changed && !counts)
			log_warnx("probe %s: unknown (on_unknown = ignore: not "
			    "counted): %s", name, out->reason);
		else if (!p->check_unknown && !changed)
			log_warnx("probe %s: unknown, not counted yet (fall "
			    "%llu): %s", name,
			    (unsigned long long)p->conf->fall, out->reason);
		p->check_unknown = true;
		return;
	}
	if (p->check_unknown && !counts && !changed)
		log_notice("probe %s: no longer unknown (%s): %s", name,
		    probe_result_name(out->result), out->reason);
	p->check_unknown = false;
}

static void
probe_reported(struct probe_run *run, const struct probe_outcome *out)
{
	struct probe	*p = run->owner;
	bool		 changed, counts;
	int64_t		 now = clock_now_ms();

	evtimer_del(p->timeout_ev);
	/* lbagent's own trouble says nothing of the service's latency. */
	if (p->has_window && !own_trouble(out)) {
		window_add(&p->win, now, (uint64_t)(now - p->started_ms),
		    out->result == PROBE_OK);
		window_update(p, now);
	}
	counts = p->conf->on_unknown.kind != REACT_IGNORE;
	if (p->sampling)
		changed = scheduler_state_combine(&p->st);
	else {
		p->st.last_duration_ms = now - p->st.last_run_ms;
		changed = scheduler_state_apply(&p->st, p->conf->fall,
		    p->conf->rise, counts, out);
		log_unknown(p, out);
		log_check_unknown(p, out, counts, changed);
	}
	log_unknown(p, out);
	log_check_unknown(p, out, counts, changed);
	if (changed && p->st.counted == PROBE_OK)
		log_notice("probe %s: ok again (%s)", p->conf->name, out->reason);
	else if (changed && p->st.counted == PROBE_UNKNOWN)
		log_warnx("probe %s: unknown: %s", p->conf->name,
		    p->st.counted_reason);
	else if (changed)
		log_notice("probe %s: %s: %s", p->conf->name,
		    probe_result_name(p->st.counted), p->st.counted_reason);
	p->sampling = false;
	if (p->ran != NULL)
		p->ran(p, changed, p->arg);
}

struct probe *
scheduler_probe_new(const struct probe_conf *conf, const struct probe_env *env,
    scheduler_ran_fn ran, void *arg)
{
	struct probe	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->conf = conf;
	p->ran = ran;
	p->arg = arg;
	p->run.ops = conf->ops;
	p->run.name = conf->name;
	p->kconf = settings_kconf_hold(conf->kconf);
	p->run.conf = p->kconf != NULL ? p->kconf->conf : NULL;
	p->run.env = env;
	p->run.timeout_ms = (int64_t)conf->timeout_ms;
	p->run.reported = probe_reported;
	p->run.owner = p;
	if ((p->next_ev = evtimer_new(env->base, run_cb, p)) == NULL ||
	    (p->timeout_ev = evtimer_new(env->base, timeout_cb, p)) == NULL ||
	    (p->sample_ev = evtimer_new(env->base, sample_cb, p)) == NULL) {
		scheduler_probe_free(p);
		return NULL;
	}
	if (conf->window.window_ms > 0) {
		if (window_init(&p->win, conf->window.window_ms,
		    window_capacity(conf->window.window_ms, conf->interval_ms,
		    conf->window.samples_per_run)) == -1) {
			scheduler_probe_free(p);
			return NULL;
		}
		p->has_window = true;
		p->st.window.on = true;
		window_update(p, clock_now_ms());
	}
	return p;
}

int
scheduler_probe_start(struct probe *p)
{
	struct timeval	now = { 0, 0 };

	return evtimer_add(p->next_ev, &now);
}

void
scheduler_probe_free(struct probe *p)
{
	if (p == NULL)
		return;
	if (p->run.in_flight && p->run.ops->cancel != NULL)
		p->run.ops->cancel(&p->run);
	p->run.in_flight = false;
	if (p->run.keep != NULL && p->run.ops->keep_free != NULL)
		p->run.ops->keep_free(p->run.keep);
	if (p->next_ev != NULL)
		event_free(p->next_ev);
	if (p->timeout_ev != NULL)
		event_free(p->timeout_ev);
	if (p->sample_ev != NULL)
		event_free(p->sample_ev);
	if (p->has_window)
		window_free(&p->win);
	settings_kconf_release(p->kconf);
	free(p);
}

void
scheduler_probe_set_conf(struct probe *p, const struct probe_conf *conf)
{
	/* The same settings: the kind's own stay the ones it holds. */
	p->conf = conf;
	p->run.name = conf->name;
}

const struct probe_conf *
scheduler_probe_conf(const struct probe *p)
{
	return p->conf;
}

const struct probe_state *
scheduler_probe_state(const struct probe *p)
{
	return &p->st;
}
