/*
 * GET /metrics: the Prometheus text exposition of the agent's view, one
 * step per group of families, in a fixed order. No I/O but the clock
 * (the age of the peers' last round).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/guard.h"
#include "lbagent/core/lbkeys.h"
#include "lbagent/core/marker.h"
#include "lbagent/core/name.h"
#include "lbagent/core/transition.h"
#include "lbagent/core/unknown_names.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/markers.h"
#include "lbagent/daemon/status.h"

#include "status_impl.h"

/*
 * The text as it is written. A family's HELP and TYPE wait in the text
 * until its first sample: a family that gets none is taken out again
 * (head() and families_end()), so that no family shows empty.
 */
struct buf {
	char	*p;
	size_t	 len, cap;
	bool	 failed;
	size_t	 fam_at;	/* where the latest family's HELP starts */
	size_t	 fam_body;	/* where its samples start; SIZE_MAX: none */
};

static void
put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	n;
	char	*grown;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		if ((grown = realloc(b->p, b->cap * 2 + (size_t)n)) == NULL) {
			b->failed = true;
			return;
		}
		b->p = grown;
		b->cap = b->cap * 2 + (size_t)n;
	}
}

/* A label value as the exposition format wants it: \\, \" and \n escaped. */
static const char *
label(const char *s, char *buf, size_t size)
{
	size_t	n = 0;

	for (; *s != '\0' && n + 3 < size; s++) {
		if (*s == '\\' || *s == '"') {
			buf[n++] = '\\';
			buf[n++] = *s;
		} else if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else
			buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * A service's label: the default service is "default" (an empty label
 * value is no label at all to Prometheus), which no [service] may be
 * called (name_service).
 */
static const char *
svc_label(const char *name, char *buf, size_t size)
{
	return label(name[0] == '\0' ? NAME_DEFAULT_SERVICE : name, buf, size);
}

/* The latest family, taken out again when it got no sample. */
static void
families_end(struct buf *b)
{
	if (!b->failed && b->fam_body != SIZE_MAX && b->len == b->fam_body) {
		b->len = b->fam_at;
		b->p[b->len] = '\0';
	}
	b->fam_body = SIZE_MAX;
}

static void
head(struct buf *b, const char *name, const char *type, const char *help)
{
	families_end(b);
	b->fam_at = b->len;
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	b->fam_body = b->len;
}

/* What each load balancer counts for this node: sessions, or the queue. */
static void
lb_counts(struct buf *b, const struct agent_view *a, const struct agent_info *info,
    const char *name, const char *help, bool sessions)
{
	struct agent_service_view	 v;
	struct lb_view			 lv;
	char				 sv[160], src[PEERS_TEXT_MAX * 2 + 1];
	size_t				 i, j;
	long				 n;

	head(b, name, "gauge", help);
	for (j = 0; info->has_peers && j < a->nlbs(a); j++) {
		const struct lb_source *lb = a->lb(a, j);

		for (i = 0; i < a->nservices(a); i++) {
			const struct transition_conf *tc;

			a->service(a, i, &v);
			tc = transition_conf(v.tr);
			peer_view_lb(lb, tc->backend, config_server(info->cfg,
			    tc), v.decision, &lv);
			n = sessions ? lv.row.scur : lv.row.qcur;
			if (lv.found && n >= 0)
				put(b, "%s{service=\"%s\",source=\"%s\"} %ld\n",
				    name, svc_label(v.name, sv, sizeof(sv)),
				    label(peer_view_lb_text(lb), src, sizeof(src)),
				    n);
		}
	}
}

/*
 * The factor to a value in unit to base units: seconds, a ratio for
 * percentages, bytes (the monitoring plugins' KB and MB are 1024 and
 * 1024^2, as check_disk counts them). Units without a base (a count,
 * "c", none) stay as they are.
 */
static double
value_scale(const char *unit)
{
	static const struct {
		const char	*unit;
		double		 factor;
	} scale[] = {
		{ "ms", 1e-3 }, { "us", 1e-6 }, { "%", 0.01 },
		{ "KB", 1024.0 }, { "MB", 1048576.0 },
		{ "GB", 1073741824.0 }, { "TB", 1099511627776.0 },
	};
	size_t	i;

	for (i = 0; i < sizeof(scale) / sizeof(scale[0]); i++)
		if (strcmp(unit, scale[i].unit) == 0)
			return scale[i].factor;
	return 1.0;
}

/* One probe's series of lbagent_probe_latency_seconds. */
static void
latency_summary(struct buf *b, const struct probe_conf *pc,
    const struct probe_state *st, const char *service)
{
	static const struct {
		const char	*q;
		size_t		 off;
	} qs[] = {
		{ "0.5", offsetof(struct window_stats, p50_ms) },
		{ "0.95", offsetof(struct window_stats, p95_ms) },
		{ "0.99", offsetof(struct window_stats, p99_ms) },
	};
	const struct probe_window_view	*w = &st->window;
	char				 pr[160], sv[160];
	uint32_t			 ms;
	size_t				 k;

	if (!w->on)
		return;
	label(pc->name, pr, sizeof(pr));
	svc_label(service, sv, sizeof(sv));
	for (k = 0; w->stats.samples > 0 && k < sizeof(qs) / sizeof(qs[0]);
	    k++) {
		memcpy(&ms, (const char *)&w->stats + qs[k].off, sizeof(ms));
		put(b, "lbagent_probe_latency_seconds{probe=\"%s\","
		    "service=\"%s\",quantile=\"%s\"} %.3f\n", pr, sv,
		    qs[k].q, status_seconds(ms));
	}
	put(b, "lbagent_probe_latency_seconds_sum{probe=\"%s\","
	    "service=\"%s\"} %.3f\n", pr, sv,
	    status_seconds((int64_t)w->total_latency_ms));
	put(b, "lbagent_probe_latency_seconds_count{probe=\"%s\","
	    "service=\"%s\"} %llu\n", pr, sv,
	    (unsigned long long)w->total_samples);
}

/* Whether the node's marker, or the service's own, of kind k is there. */
static bool
marker_present(const struct agent_service_view *v, int k)
{
	return v->node->m[k].present ||
	    (v->own != NULL && v->own->m[k].present);
}

/* The marker of kind k that applies: the service's own first. */
static const struct marker *
applying(const struct agent_service_view *v, int k)
{
	if (v->own != NULL && v->own->m[k].present)
		return &v->own->m[k];
	return v->node->m[k].present ? &v->node->m[k] : NULL;
}

/* One rendering of the metrics: the text, and what every family reads. */
struct metrics {
	struct buf			 b;
	const struct agent_view		*a;
	const struct status_daemon	*dm;
	struct agent_info		 info;
	size_t				 n;	/* services */
};

/* lbagent_build_info, _start_time_seconds and the configuration's loads. */
static void
metrics_node(struct metrics *m)
{
	struct buf			*b = &m->b;
	bool				 reload_ok;
	int64_t				 ok_wall_ms;

	head(b, "lbagent_build_info", "gauge", "lbagent's version.");
	put(b, "lbagent_build_info{version=\"%s\"} 1\n", LBAGENT_VERSION);
	head(b, "lbagent_start_time_seconds", "gauge", "When lbagent "
	    "started, in seconds since the epoch.");
	put(b, "lbagent_start_time_seconds %.3f\n",
	    status_seconds(m->info.started_wall_ms));
	/* The start is a successful load, as Prometheus counts its own. */
	reload_ok = !m->dm->has_reload || m->dm->reload_ok;
	ok_wall_ms = m->dm->reload_ok_wall_ms != 0 ? m->dm->reload_ok_wall_ms :
	    m->info.started_wall_ms;
	head(b, "lbagent_config_last_reload_successful", "gauge", "1 when "
	    "the latest load of the configuration (the start, or a reload) "
	    "succeeded, 0 when it failed and the one before still runs.");
	put(b, "lbagent_config_last_reload_successful %d\n", reload_ok);
	head(b, "lbagent_config_last_reload_success_timestamp_seconds",
	    "gauge", "When the configuration last loaded successfully (the "
	    "start counts), in seconds since the epoch.");
	put(b, "lbagent_config_last_reload_success_timestamp_seconds %.3f\n",
	    status_seconds(ok_wall_ms));
}

/* What each service tells HAProxy: its state and weight. */
static void
metrics_states(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	struct decision			 d;
	char				 sv[160];
	size_t				 i, n = m->n;
	int				 k;

	head(b, "lbagent_state", "gauge", "1 for the state a service is in "
	    "(what HAProxy is told), 0 for the others.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		status_effective(&v, &d);
		for (k = 0; k < NODE_STATE_COUNT; k++)
			put(b,
			    "lbagent_state{service=\"%s\",state=\"%s\"} %d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    decision_state_name((enum node_state)k),
			    (int)d.state == k);
	}
	head(b, "lbagent_weight_ratio", "gauge", "The weight a service "
	    "asks for, 0 to 1 (0 unless up).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		status_effective(&v, &d);
		put(b, "lbagent_weight_ratio{service=\"%s\"} %g\n",
		    svc_label(v.name, sv, sizeof(sv)), d.state == NODE_UP ?
		    (double)d.weight / 100.0 : 0.0);
	}
}

/* Each service's mode: automation off, shadow, and what shadow would say. */
static void
metrics_modes(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	char				 sv[160];
	size_t				 i, n = m->n;
	int				 k;

	head(b, "lbagent_automation_off", "gauge", "1 while automated "
	    "decisions are switched off for a service.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		put(b, "lbagent_automation_off{service=\"%s\"} %d\n",
		    svc_label(v.name, sv, sizeof(sv)), v.off_by != NULL);
	}
	head(b, "lbagent_shadow", "gauge", "1 while a service is in shadow "
	    "mode: automation runs, replies carry only its would-be line.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		put(b, "lbagent_shadow{service=\"%s\"} %d\n",
		    svc_label(v.name, sv, sizeof(sv)), v.shadow_by != NULL);
	}
	head(b, "lbagent_shadow_reply", "gauge", "In shadow mode, 1 for the "
	    "state a service would tell HAProxy (lbagent_state is what it "
	    "does), 0 for the others; all 0 outside shadow mode.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (k = 0; k < NODE_STATE_COUNT; k++)
			put(b, "lbagent_shadow_reply{service=\"%s\","
			    "state=\"%s\"} %d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    decision_state_name((enum node_state)k),
			    v.would != NULL && (int)v.would->state == k);
	}
	head(b, "lbagent_shadow_weight_ratio", "gauge", "In shadow mode, the "
	    "weight a service would ask for, 0 to 1 (0 unless up; 0 outside "
	    "shadow mode).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		put(b, "lbagent_shadow_weight_ratio{service=\"%s\"} %g\n",
		    svc_label(v.name, sv, sizeof(sv)), v.would != NULL &&
		    v.would->state == NODE_UP ? (double)v.would->weight / 100.0 :
		    0.0);
	}
}

/* The markers that apply to each service, and when they end. */
static void
metrics_markers(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	char				 sv[160];
	size_t				 i, n = m->n;
	int				 k;

	head(b, "lbagent_marker", "gauge", "1 while a marker of that kind "
	    "(maint, drain, off, shadow) applies to a service, the node's or its own; "
	    "0 when none.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (k = 0; k < MARKER_COUNT; k++)
			put(b, "lbagent_marker{service=\"%s\",marker=\"%s\"} "
			    "%d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    marker_name((enum marker_kind)k),
			    marker_present(&v, k));
	}
	head(b, "lbagent_marker_expiry_timestamp_seconds", "gauge", "When "
	    "the marker of that kind that applies to a service ends (its "
	    "until), in seconds since the epoch; only markers with an end.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (k = 0; k < MARKER_COUNT; k++) {
			const struct marker *mk = applying(&v, k);

			if (mk != NULL && mk->has_until)
				put(b, "lbagent_marker_expiry_timestamp_seconds"
				    "{service=\"%s\",marker=\"%s\"} %.3f\n",
				    svc_label(v.name, sv, sizeof(sv)),
				    marker_name((enum marker_kind)k),
				    (double)mk->until_wall_ms / 1000.0);
		}
	}
}

/* The peer guard and flap damping of each service. */
static void
metrics_guards(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	struct guard_view		 gv;
	char				 sv[160];
	size_t				 i, n = m->n;
	int				 k;

	head(b, "lbagent_peer_guard", "gauge", "1 for the peer guard's "
	    "state of a service (off, watching, asking, holding, back_alone, "
	    "latched), 0 for the others.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		guard_view(v.tr, &gv);
		for (k = GUARD_OFF; k <= GUARD_LATCHED; k++)
			put(b, "lbagent_peer_guard{service=\"%s\",state=\"%s\"} "
			    "%d\n", svc_label(v.name, sv, sizeof(sv)),
			    guard_state_name((enum guard_state)k),
			    (int)gv.state == k);
	}
	head(b, "lbagent_flap_damping_factor", "gauge", "How many times "
	    "up_after a service waits to come back: 1 without flap damping, "
	    "2, 4, 8, then 10 while it keeps going out within flap_window.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		put(b, "lbagent_flap_damping_factor{service=\"%s\"} %u\n",
		    svc_label(v.name, sv, sizeof(sv)), transition_damping(v.tr));
	}
	head(b, "lbagent_other_nodes_serving", "gauge", "1 when the last "
	    "round of the peer guard found another node serving a service, 0 "
	    "when none (absent without peers or before the first round).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		if (v.has_peers && v.peers.round_ms != INT64_MIN)
			put(b, "lbagent_other_nodes_serving{service=\"%s\"} %d\n",
			    svc_label(v.name, sv, sizeof(sv)),
			    v.peers.other_serving);
	}
}

/* The peer guard's rounds, and what the load balancers count. */
static void
metrics_rounds(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;

	if (m->info.has_peers) {
		head(b, "lbagent_peer_rounds_total", "counter", "Rounds of the "
		    "peer guard begun (every source asked once): at once when a "
		    "decision needs one, and every [peers] interval only while a "
		    "node is about to go out, is out, is held out by a marker, or "
		    "its /status detail was read in the last 10 s.");
		put(b, "lbagent_peer_rounds_total %llu\n",
		    (unsigned long long)a->rounds(a));
	}
	if (m->info.has_peers && a->round_ms(a) != INT64_MIN) {
		head(b, "lbagent_peer_round_age_seconds", "gauge", "Seconds "
		    "since the last answered round of the peer guard began: what "
		    "the peer and load-balancer figures here are as of.");
		put(b, "lbagent_peer_round_age_seconds %.3f\n",
		    (double)(clock_now_ms() - a->round_ms(a)) /
		    1000.0);
	}
	lb_counts(b, a, &m->info, "lbagent_lb_sessions", "This node's "
	    "sessions (scur) on each load balancer of [haproxy] sources, per "
	    "service, as of the last round (absent when the load balancer did "
	    "not answer).", true);
	lb_counts(b, a, &m->info, "lbagent_lb_queued", "Requests queued for this "
	    "node (qcur) on each load balancer of [haproxy] sources, per "
	    "service, as of the last round (absent when the load balancer did "
	    "not answer).", false);
}

/* Per probe, what it counts as, how long it took, what it measured. */
static void
metrics_probe_results(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	char				 sv[160], pr[160];
	size_t				 i, j, n = m->n;

	/*
	 * Per probe, one series for each service that lists it: every
	 * per-probe family has the same labels, so any of them joins on
	 * service. A probe two services share shows the same values twice.
	 */
	head(b, "lbagent_probe_status", "gauge", "What a probe counts as: "
	    "0 ok, 1 warn, 2 crit, 3 unknown (when on_unknown counts it).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++)
			put(b, "lbagent_probe_status{probe=\"%s\","
			    "service=\"%s\"} %d\n",
			    label(a->probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    (int)a->probe_state(v.probes[j])->counted);
	}
	head(b, "lbagent_probe_duration_seconds", "gauge", "How long the "
	    "probe's latest run took.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = a->probe_state(v.probes[j]);
			if (!st->has_run)
				continue;
			put(b, "lbagent_probe_duration_seconds{probe=\"%s\","
			    "service=\"%s\"} %.3f\n",
			    label(a->probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    status_seconds(st->last_duration_ms));
		}
	}
	head(b, "lbagent_probe_value", "gauge", "The value the probe's "
	    "latest run measured, in base units: seconds for http and tcp "
	    "latency and for a file's age, a ratio 0 to 1 for disk, inodes, "
	    "memory, swap and cpu use, the load per CPU, the number of "
	    "processes, an http probe's JSON field as it is, an exec "
	    "plugin's first performance value in seconds, bytes or a ratio "
	    "for its units s, ms, us, B, KB, MB, GB, TB (1024s), % (absent "
	    "for probes that measure nothing).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_conf *pc;
			const struct probe_state *st;

			pc = a->probe_conf(v.probes[j]);
			st = a->probe_state(v.probes[j]);
			if (!st->has_run || !isfinite(st->last.value))
				continue;
			put(b, "lbagent_probe_value{probe=\"%s\","
			    "service=\"%s\"} %.15g\n", label(pc->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    st->last.value * value_scale(st->last.unit));
		}
	}
}

/* Per probe, its latest result and its runs by result. */
static void
metrics_probe_runs(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	char				 sv[160], pr[160];
	size_t				 i, j, n = m->n;
	int				 r;

	head(b, "lbagent_probe_last_result", "gauge", "The probe's latest "
	    "run: 0 ok, 1 warn, 2 crit, 3 unknown (the check could not tell, "
	    "counted as on_unknown says, or lbagent could not run it, never "
	    "counted).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = a->probe_state(v.probes[j]);
			if (!st->has_run)
				continue;
			put(b, "lbagent_probe_last_result{probe=\"%s\","
			    "service=\"%s\"} %d\n",
			    label(a->probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    (int)st->last.result);
		}
	}
	head(b, "lbagent_probe_runs_total", "counter", "Probe runs by "
	    "result.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = a->probe_state(v.probes[j]);
			for (r = 0; r < PROBE_RESULT_COUNT; r++)
				put(b, "lbagent_probe_runs_total{probe=\"%s\","
				    "service=\"%s\",result=\"%s\"} %llu\n",
				    label(a->probe_conf(v.probes[j])->name,
				    pr, sizeof(pr)),
				    svc_label(v.name, sv, sizeof(sv)),
				    probe_result_name((enum probe_result)r),
				    (unsigned long long)st->runs[r]);
		}
	}
}

/* Per windowed probe, its run times and its error share. */
static void
metrics_probe_windows(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	char				 sv[160], pr[160];
	size_t				 i, j, n = m->n;

	head(b, "lbagent_probe_latency_seconds", "summary", "A windowed "
	    "probe's run times: quantiles 0.5, 0.95 and 0.99 over the runs in "
	    "its window, by nearest rank (absent while the window is empty); "
	    "_sum and _count over every run since the probe started.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++)
			latency_summary(b, a->probe_conf(v.probes[j]),
			    a->probe_state(v.probes[j]), v.name);
	}
	head(b, "lbagent_probe_error_ratio", "gauge", "The share of a "
	    "windowed probe's runs in its window that were not ok, 0 to 1 "
	    "(absent while the window is empty).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (j = 0; j < v.nprobes; j++) {
			const struct probe_state *st;

			st = a->probe_state(v.probes[j]);
			if (!st->window.on || st->window.stats.samples == 0)
				continue;
			put(b, "lbagent_probe_error_ratio{probe=\"%s\","
			    "service=\"%s\"} %.6g\n",
			    label(a->probe_conf(v.probes[j])->name, pr,
			    sizeof(pr)), svc_label(v.name, sv, sizeof(sv)),
			    st->window.stats.error_rate / 100.0);
		}
	}
}

/*
 * The same checks by the name they asked for: the UNKNOWN_NAMES_MAX most
 * recent names (already escaped: printable ASCII), so that a sender of
 * ever new names cannot grow the page; a name that gave way starts again
 * from 0 if it comes back.
 */
static void
metrics_unknown_names(struct metrics *m)
{
	const struct unknown_names	*u = m->a->unknown_names(m->a);
	struct buf			*b = &m->b;
	char				 lv[2 * sizeof(u->v[0].name)];
	size_t				 i;

	head(b, "lbagent_unknown_service_name_checks_total", "counter",
	    "Agent checks by the agent-send name no service has (the most "
	    "recent names only).");
	for (i = 0; i < u->count; i++)
		put(b, "lbagent_unknown_service_name_checks_total{name=\"%s\"} "
		    "%llu\n", label(u->v[i].name, lv, sizeof(lv)),
		    (unsigned long long)u->v[i].checks);
}

/* The agent checks answered and the changes of what they say. */
static void
metrics_replies(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_service_view	 v;
	char				 sv[160];
	size_t				 i, n = m->n;
	int				 k;

	head(b, "lbagent_replies_total", "counter", "Agent checks answered.");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		put(b, "lbagent_replies_total{service=\"%s\"} %llu\n",
		    svc_label(v.name, sv, sizeof(sv)),
		    (unsigned long long)v.replies);
	}
	a->service(a, 0, &v);
	head(b, "lbagent_unknown_service_checks_total", "counter", "Agent "
	    "checks whose agent-send text named no service, answered as the "
	    "default service (status lists their load balancers).");
	put(b, "lbagent_unknown_service_checks_total %llu\n",
	    (unsigned long long)lbkeys_unknown_checks(v.keys));
	metrics_unknown_names(m);
	head(b, "lbagent_transitions_total", "counter", "Changes of what a "
	    "service tells HAProxy, by the state changed to (off: automation "
	    "switched off or to shadow mode).");
	for (i = 0; i < n; i++) {
		a->service(a, i, &v);
		for (k = 0; k <= NODE_STATE_COUNT; k++)
			put(b, "lbagent_transitions_total{service=\"%s\",to=\"%s\"} "
			    "%llu\n", svc_label(v.name, sv, sizeof(sv)),
			    k == NODE_STATE_COUNT ? "off" :
			    decision_state_name((enum node_state)k),
			    (unsigned long long)v.transitions[k]);
	}
}

/* The state file's saves. */
static void
metrics_saves(struct metrics *m)
{
	const struct agent_view		*a = m->a;
	struct buf			*b = &m->b;
	struct agent_persistence	 persist;

	a->persistence(a, &persist);
	head(b, "lbagent_state_save_failures_total", "counter", "Saves of "
	    "the state file that failed (lbagent goes on answering; a restart "
	    "would forget what the load balancers were told).");
	put(b, "lbagent_state_save_failures_total %llu\n",
	    (unsigned long long)persist.failures);
}

/* The capacity weights and maxconn (status_capacity.c). */
static void
metrics_capacity(struct metrics *m)
{
	char	*text = status_capacity_metrics(m->a);

	families_end(&m->b);
	if (text == NULL)
		m->b.failed = true;
	else
		put(&m->b, "%s", text);
	free(text);
}

/* The families by step, in the order they are written. */
static void (*const steps[])(struct metrics *) = {
	metrics_node,
	metrics_states,
	metrics_modes,
	metrics_markers,
	metrics_guards,
	metrics_rounds,
	metrics_probe_results,
	metrics_probe_runs,
	metrics_probe_windows,
	metrics_replies,
	metrics_capacity,
	metrics_saves,
};

char *
status_metrics(const struct agent_view *a, const struct status_daemon *dm,
    size_t *lenp)
{
	struct metrics	m = { { NULL, 0, 4096, false, 0, SIZE_MAX }, a, dm,
			    { NULL, 0, 0, false }, a->nservices(a) };
	size_t		i;

	if ((m.b.p = malloc(m.b.cap)) == NULL)
		return NULL;
	m.b.p[0] = '\0';
	a->info(a, &m.info);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		steps[i](&m);
	if (m.b.failed) {
		free(m.b.p);
		return NULL;
	}
	families_end(&m.b);
	*lenp = m.b.len;
	return m.b.p;
}
