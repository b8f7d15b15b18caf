/*
 * lbagentctl status as text: the /status document, in at most `width`
 * columns: the node, the summary table, then with the detail a section
 * per service (its transition, markers, probes, peer guard, load
 * balancers, HAProxy's view, history) and the peers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lbagent/ctl/format.h"
#include "fmt.h"

static void
header(struct fmt_out *o, const json_t *root, bool detail)
{
	char	node[128], ver[64], path[TEXT_MAX], t[64];
	double	inc = 0, pid = 0, reloads = 0;
	const json_t *lr;

	fmt_clean(node, sizeof(node), fmt_str(root, "node_id"));
	fmt_num(root, "incarnation", &inc);
	if (!detail) {
		fmt_paraf(o, 0, "", 0, "node %s, incarnation %.0f", node, inc);
		fmt_para(o, 0, "", 0, "(public view: the detail needs the unix "
		    "socket or the token of [http] token_file)");
		return;
	}
	fmt_clean(ver, sizeof(ver), fmt_str(root, "version"));
	fmt_clean(path, sizeof(path), fmt_str(root, "config"));
	fmt_num(root, "pid", &pid);
	fmt_num(root, "reloads", &reloads);
	fmt_paraf(o, 0, "", 2, "lbagent %s, pid %.0f, node %s, incarnation "
	    "%.0f", ver, pid, node, inc);
	fmt_time(t, sizeof(t), fmt_str(root, "started_at"));
	fmt_paraf(o, 0, "", 2, "config %s, started %s", path, t);
	lr = json_object_get(root, "last_reload");
	if (!json_is_object(lr)) {
		fmt_paraf(o, 0, "", 2, "reloads: %.0f", reloads);
		return;
	}
	fmt_time(t, sizeof(t), fmt_str(lr, "at"));
	if (json_is_true(json_object_get(lr, "ok"))) {
		fmt_paraf(o, 0, "", 2, "reloads: %.0f, the last at %s: ok",
		    reloads, t);
	} else {
		const json_t	*e;
		size_t		 i;
		char		 line[TEXT_MAX];

		fmt_paraf(o, 0, "", 2, "reloads: %.0f, the last at %s: FAILED, "
		    "still running the previous configuration:", reloads, t);
		json_array_foreach(json_object_get(lr, "errors"), i, e) {
			fmt_clean(line, sizeof(line), json_string_value(e) !=
			    NULL ? json_string_value(e) : "?");
			fmt_para(o, 2, "", 4, line);
		}
	}
}

/* Said only while the state file cannot be saved. */
static void
persistence(struct fmt_out *o, const json_t *root)
{
	const json_t	*p = json_object_get(root, "persistence");
	char		 why[TEXT_MAX], at[64];
	const char	*since;

	if (!json_is_object(p) || !json_is_false(json_object_get(p, "ok")))
		return;
	fmt_clean(why, sizeof(why), fmt_str(p, "reason"));
	fmt_clean(at, sizeof(at), fmt_str(p, "failing_since"));
	since = strlen(at) >= 19 && at[10] == 'T' ? at + 11 : at;
	fmt_paraf(o, 0, "", 2, "persistence: failing since %.8s UTC (%s)",
	    since, why);
}

static void
summary(struct fmt_out *o, const json_t *root, const char *only)
{
	const json_t	*s;
	size_t		 i, w = 9, n;
	char		 name[TEXT_MAX], st[32];
	double		 weight;

	/* Longer names than NAME_COL get a line of their own. */
	json_array_foreach(json_object_get(root, "services"), i, s) {
		n = strlen(ctl_service_label(fmt_str(s, "name")));
		if (n > w && n <= NAME_COL)
			w = n;
	}
	fprintf(o->fp, "%-*s  %-6s %6s  %-7s  %s\n", (int)w, "SERVICE", "STATE",
	    "WEIGHT", "SERVING", "AUTOMATION");
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(fmt_str(s, "name"), only) != 0)
			continue;
		fmt_clean(name, sizeof(name), ctl_service_label(fmt_str(s,
		    "name")));
		fmt_clean(st, sizeof(st), fmt_str(s, "state"));
		if (!fmt_num(s, "weight", &weight))
			weight = 0;
		/* A long name gets its own line; the columns stay put. */
		if (strlen(name) > w)
			fprintf(o->fp, "%s\n%-*s", name, (int)w, "");
		else
			fprintf(o->fp, "%-*s", (int)w, name);
		fprintf(o->fp, "  %-6s %6.0f  %-7s  %s\n", st, weight,
		    json_is_true(json_object_get(s, "serving")) ? "yes" : "no",
		    fmt_str(s, "automation")[0] == 'o' ? "off" :
		    fmt_str(s, "automation")[0] == 's' ? "shadow" : "auto");
		/* Shadow mode: what it would send, under what it does. */
		if (json_is_string(json_object_get(s, "shadow_reply"))) {
			char	would[TEXT_MAX];

			fmt_clean(would, sizeof(would), fmt_str(s,
			    "shadow_reply"));
			fprintf(o->fp, "%*s  shadow: would reply \"%s\"\n",
			    (int)w, "", would);
		}
	}
}

static void
transition(struct fmt_out *o, const json_t *tr)
{
	const json_t	*p, *r, *d;
	char		 words[32], since[64], age[32], text[TEXT_MAX];
	double		 v, w, to, started, ends, factor, outs, upafter;

	if (!json_is_object(tr))
		return;
	fmt_state_words(words, sizeof(words), tr);
	fmt_time(since, sizeof(since), fmt_str(tr, "since"));
	if (fmt_num(tr, "since_s", &v)) {
		fmt_age(age, sizeof(age), v);
		fmt_field(o, "transition", "%s for %s (since %s)", words, age,
		    since);
	} else
		fmt_field(o, "transition", "%s since %s", words, since);
	if (json_is_object(p = json_object_get(tr, "pending"))) {
		fmt_clean(text, sizeof(text), fmt_str(p, "text"));
		if (text[0] == '\0') {
			char	towards[64];

			fmt_clean(towards, sizeof(towards), fmt_str(p,
			    "towards"));
			snprintf(text, sizeof(text), "towards %s", towards);
		}
		fmt_field(o, "pending", "%s", text);
	}
	if (json_is_object(r = json_object_get(tr, "ramp"))) {
		char	a1[32], a2[32];

		if (!fmt_num(r, "weight", &w))
			w = 0;
		if (!fmt_num(r, "to", &to))
			to = 100;
		if (!fmt_num(r, "started_s", &started))
			started = 0;
		if (!fmt_num(r, "ends_in_s", &ends))
			ends = 0;
		fmt_age(a1, sizeof(a1), started);
		fmt_age(a2, sizeof(a2), ends);
		fmt_field(o, "ramp", "at %.0f%%, rising to %.0f%%; started %s "
		    "ago, ends in %s", w, to, a1, a2);
	}
	if (json_is_object(d = json_object_get(tr, "damping"))) {
		if (!fmt_num(d, "factor", &factor))
			factor = 1;
		if (!fmt_num(d, "outs_in_window", &outs))
			outs = 0;
		if (factor > 1 && fmt_num(d, "up_after_s", &upafter)) {
			fmt_age(age, sizeof(age), upafter);
			fmt_field(o, "damping", "up_after x%.0f (%.0f "
			    "goings-out in the flap window): back up after %s "
			    "of passing", factor, outs, age);
		} else if (factor > 1) {
			fmt_field(o, "damping", "up_after x%.0f (%.0f "
			    "goings-out in the flap window)", factor, outs);
		} else {
			fmt_field(o, "damping", "none (%.0f going%s-out in the "
			    "flap window)", outs, outs == 1 ? "" : "s");
		}
	}
}

/* Who set a marker, from where and when, then until when: lines of their own. */
static void
marker_trail(struct fmt_out *o, const json_t *m)
{
	char	owner[TEXT_MAX], host[TEXT_MAX], since[64], until[64];
	char	note[TEXT_MAX];

	fmt_clean(owner, sizeof(owner), fmt_str(m, "owner"));
	fmt_clean(host, sizeof(host), fmt_str(m, "host"));
	fmt_time(since, sizeof(since), fmt_str(m, "since"));
	fmt_time(until, sizeof(until), fmt_str(m, "until"));
	fmt_clean(note, sizeof(note), fmt_str(m, "note"));
	if (owner[0] != '\0' || host[0] != '\0' || since[0] != '\0')
		fmt_field(o, "", "  set by %s%s%s%s%s", owner[0] ? owner : "?",
		    host[0] ? "@" : "", host, since[0] ? " at " : "", since);
	if (until[0] != '\0')
		fmt_field(o, "", "  until %s", until);
	else if (owner[0] != '\0' || host[0] != '\0' || since[0] != '\0')
		fmt_field(o, "", "  no end");
	if (note[0] != '\0')
		fmt_field(o, "", "  note: %s", note);
}

static void
markers(struct fmt_out *o, const json_t *svc)
{
	const json_t	*ms = json_object_get(svc, "markers"), *m;
	char		 kind[16], reason[TEXT_MAX], label[LABEL_W];
	size_t		 i;

	if (!json_is_array(ms))
		return;
	if (json_array_size(ms) == 0) {
		fmt_field(o, "markers", "none");
		return;
	}
	json_array_foreach(ms, i, m) {
		fmt_clean(kind, sizeof(kind), fmt_str(m, "kind"));
		fmt_clean(reason, sizeof(reason), fmt_str(m, "reason"));
		snprintf(label, sizeof(label), "%s", i == 0 ? "markers" : "");
		fmt_field(o, label, "%s (%s): %s", kind,
		    strcmp(fmt_str(m, "scope"), "node") == 0 ? "node-wide" :
		    "this service",
		    json_is_true(json_object_get(m, "unreadable")) ?
		    "present, unreadable" : reason);
		marker_trail(o, m);
	}
}

/* The unit of a probe's last value, as the daemon gives it ("" none). */
static const char *
value_unit(const json_t *last)
{
	const char	*u = json_string_value(json_object_get(last, "unit"));

	return u != NULL ? u : "";
}

/* A value with its unit: "86.25%", "12 ms", "0.5". */
static void
format_value_unit(char *buf, size_t size, double v, const char *unit)
{
	char	n[32], u[16];

	fmt_value(n, sizeof(n), v);
	fmt_clean(u, sizeof(u), unit);
	snprintf(buf, size, "%s%s%s", n, u[0] != '\0' && strcmp(u, "%") != 0 ?
	    " " : "", u);
}

/* A latency as the window's reasons write it: 850ms, 1.8s, 12s. */
static void
format_ms(char *buf, size_t size, double ms)
{
	if (!isfinite(ms) || ms < 0)
		ms = 0;
	if (ms < 1000)
		snprintf(buf, size, "%.0fms", floor(ms));
	else if (ms < 10000)
		snprintf(buf, size, "%.0f.%.0fs", floor(ms / 1000),
		    floor(fmod(ms, 1000) / 100));
	else if (ms < 1e12)
		snprintf(buf, size, "%.0fs", floor(ms / 1000));
	else
		snprintf(buf, size, "%.3gs", ms / 1000);
}

/* A windowed probe's figures: "window 1m: 57 samples since ...". */
static void
window_lines(struct fmt_out *o, const json_t *w)
{
	char	span[32], since[64], p50[16], p95[16], p99[16], rate[16];
	char	reason[TEXT_MAX], result[16];
	double	v, samples = 0, min = 0;

	if (!json_is_object(w))
		return;
	span[0] = since[0] = '\0';
	if (fmt_num(w, "window_ms", &v))
		fmt_age(span, sizeof(span), v / 1000);
	fmt_num(w, "samples", &samples);
	fmt_num(w, "min_samples", &min);
	fmt_clean(reason, sizeof(reason), fmt_str(w, "reason"));
	fmt_clean(result, sizeof(result), fmt_str(w, "result"));
	if (!json_is_true(json_object_get(w, "judging"))) {
		fmt_paraf(o, 6, "", 8, "window %s: %.0f of %.0f samples, not "
		    "judged yet", span, samples, min);
		return;
	}
	fmt_time(since, sizeof(since), fmt_str(w, "since"));
	snprintf(p50, sizeof(p50), "-");
	snprintf(p95, sizeof(p95), "-");
	snprintf(p99, sizeof(p99), "-");
	snprintf(rate, sizeof(rate), "-");
	if (fmt_num(w, "p50_ms", &v))
		format_ms(p50, sizeof(p50), v);
	if (fmt_num(w, "p95_ms", &v))
		format_ms(p95, sizeof(p95), v);
	if (fmt_num(w, "p99_ms", &v))
		format_ms(p99, sizeof(p99), v);
	if (fmt_num(w, "error_rate", &v))
		snprintf(rate, sizeof(rate), "%.1f%%", v);
	fmt_paraf(o, 6, "", 8, "window %s: p50 %s, p95 %s, p99 %s, error rate "
	    "%s", span, p50, p95, p99, rate);
	if (strcmp(result, "ok") == 0)
		fmt_paraf(o, 8, "", 8, "%.0f samples since %s", samples, since);
	else
		fmt_paraf(o, 8, "", 8, "%.0f samples since %s; %s: %s", samples,
		    since, result, reason);
}

/*
 * A probe's notes: whether it settled, what its last run counts as when
 * not its result, its runs by result.
 */
static void
probe_notes(char *notes, size_t size, const json_t *p, const char *counted,
    const char *result)
{
	const json_t	*runs;
	double		 v, ok, warn, crit;

	notes[0] = '\0';
	if (!json_is_true(json_object_get(p, "settled")))
		snprintf(notes, size, "not settled yet");
	else if (counted[0] != '\0' && strcmp(counted, result) != 0)
		snprintf(notes, size, "counts as %s", counted);
	runs = json_object_get(p, "runs");
	if (json_is_object(runs) && fmt_num(runs, "ok", &ok) &&
	    fmt_num(runs, "warn", &warn) && fmt_num(runs, "crit", &crit)) {
		size_t	l = strlen(notes);

		snprintf(notes + l, size - l,
		    "%sruns %.0f ok, %.0f warn, %.0f crit",
		    l > 0 ? "; " : "", ok, warn, crit);
		/* Runs lbagent could not make, when there were. */
		l = strlen(notes);
		if (fmt_num(runs, "unknown", &v) && v > 0)
			snprintf(notes + l, size - l, ", %.0f unknown", v);
	}
}

static void
probes(struct fmt_out *o, const json_t *svc)
{
	const json_t	*ps = json_object_get(svc, "probes"), *p, *last;
	char		 name[TEXT_MAX], type[16], result[16], counted[16];
	char		 value[64], ago[40], took[32], reason[TEXT_MAX];
	char		 notes[256];
	size_t		 i, nw = 12, n;
	double		 v;

	if (!json_is_array(ps))
		return;
	if (json_array_size(ps) == 0) {
		fmt_field(o, "probes", "none");
		return;
	}
	json_array_foreach(ps, i, p)
		if ((n = strlen(fmt_str(p, "name"))) > nw && n <= NAME_COL)
			nw = n;
	fprintf(o->fp, "  probes\n    %-*s %-8s %-6s %10s  %-10s %s\n", (int)nw,
	    "NAME", "TYPE", "RESULT", "VALUE", "LAST RUN", "TOOK");
	json_array_foreach(ps, i, p) {
		fmt_clean(name, sizeof(name), fmt_str(p, "name"));
		fmt_clean(type, sizeof(type), fmt_str(p, "type"));
		fmt_clean(counted, sizeof(counted), fmt_str(p, "counted"));
		last = json_object_get(p, "last");
		snprintf(result, sizeof(result), "-");
		snprintf(value, sizeof(value), "-");
		snprintf(ago, sizeof(ago), "not yet");
		snprintf(took, sizeof(took), "-");
		reason[0] = '\0';
		if (json_is_object(last)) {
			fmt_clean(result, sizeof(result), fmt_str(last,
			    "result"));
			fmt_clean(reason, sizeof(reason), fmt_str(last,
			    "reason"));
			if (fmt_num(last, "value", &v))
				format_value_unit(value, sizeof(value), v,
				    value_unit(last));
			if (fmt_num(last, "ago_s", &v)) {
				fmt_age(ago, sizeof(ago), v);
				strncat(ago, " ago", sizeof(ago) - strlen(ago) -
				    1);
			}
			if (fmt_num(last, "duration_ms", &v))
				snprintf(took, sizeof(took), v < 1000 ?
				    "%.0f ms" : "%.1f s", v < 1000 ? v :
				    v / 1000);
		}
		if (strlen(name) > nw)
			fprintf(o->fp, "    %s\n    %-*s", name, (int)nw, "");
		else
			fprintf(o->fp, "    %-*s", (int)nw, name);
		fprintf(o->fp, " %-8s %-6s %10s  %-10s %s\n", type, result,
		    value, ago, took);
		/* What the rules go by, when it is not the last run's word. */
		probe_notes(notes, sizeof(notes), p, counted, result);
		if (reason[0] != '\0')
			fmt_paraf(o, 6, "", 6, "%s (%s)", reason, notes);
		else if (notes[0] != '\0')
			fmt_paraf(o, 6, "", 6, "(%s)", notes);
		window_lines(o, json_object_get(p, "window"));
	}
}

static void
load_balancers(struct fmt_out *o, const json_t *svc)
{
	const json_t	*lbs = json_object_get(svc, "load_balancers"), *lb, *w;
	char		 addr[128], text[TEXT_MAX], reply[TEXT_MAX], ago[32];
	char		 owed[256], word[32], last[TEXT_MAX + 16];
	size_t		 i, j;
	double		 seen, checks;

	if (!json_is_array(lbs))
		return;
	if (json_array_size(lbs) == 0) {
		fmt_field(o, "asked by", "no load balancer recently");
		return;
	}
	fprintf(o->fp, "  load balancers that asked\n");
	json_array_foreach(lbs, i, lb) {
		fmt_clean(addr, sizeof(addr), fmt_str(lb, "address"));
		fmt_clean(text, sizeof(text), fmt_str(lb, "text"));
		fmt_clean(reply, sizeof(reply), fmt_str(lb, "last_reply"));
		if (!fmt_num(lb, "last_seen_s", &seen))
			seen = 0;
		if (!fmt_num(lb, "checks", &checks))
			checks = 0;
		fmt_age(ago, sizeof(ago), seen);
		owed[0] = '\0';
		json_array_foreach(json_object_get(lb, "owed"), j, w) {
			fmt_clean(word, sizeof(word), json_string_value(w) !=
			    NULL ? json_string_value(w) : "?");
			if (strlen(owed) + strlen(word) + 3 < sizeof(owed)) {
				if (owed[0] != '\0')
					strcat(owed, ", ");
				strcat(owed, word);
			}
		}
		/* Keys come back from the state file; their last line does not. */
		if (reply[0] != '\0')
			snprintf(last, sizeof(last), "last reply \"%s\"",
			    reply);
		else
			snprintf(last, sizeof(last), "no reply since lbagent "
			    "started");
		if (text[0] != '\0')
			fmt_paraf(o, 4, "", 6, "%s \"%s\": asked %s ago (%.0f "
			    "checks), %s", addr, text, ago, checks, last);
		else
			fmt_paraf(o, 4, "", 6, "%s (no agent-send): asked %s "
			    "ago (%.0f checks), %s", addr, ago, checks, last);
		if (owed[0] != '\0')
			fmt_paraf(o, 6, "", 6, "still owed: %s", owed);
		/* A typo in agent-send, answered as the default service. */
		if (fmt_str(lb, "warning")[0] != '\0') {
			fmt_clean(reply, sizeof(reply), fmt_str(lb, "warning"));
			fmt_paraf(o, 6, "", 6, "%s", reply);
		}
	}
}

static void
history(struct fmt_out *o, const json_t *svc)
{
	const json_t	*h = json_object_get(svc, "history"), *t;
	char		 at[64], from[32], to[32], reason[TEXT_MAX], head[160];
	size_t		 i, n, first;

	if (!json_is_array(h))
		return;
	n = json_array_size(h);
	if (n == 0) {
		fmt_field(o, "history", "no transitions yet");
		return;
	}
	first = n > HISTORY_SHOWN ? n - HISTORY_SHOWN : 0;
	if (first > 0)
		fprintf(o->fp, "  last %d of %zu transitions, newest last\n",
		    HISTORY_SHOWN, n);
	else
		fprintf(o->fp, "  transitions, newest last\n");
	for (i = first; i < n; i++) {
		t = json_array_get(h, i);
		fmt_time(at, sizeof(at), fmt_str(t, "at"));
		/* The date is the same for most lines; the time says enough. */
		if (strlen(at) > 4 && strcmp(at + strlen(at) - 4, " UTC") == 0)
			at[strlen(at) - 4] = '\0';
		fmt_clean(from, sizeof(from), fmt_str(t, "from"));
		fmt_clean(to, sizeof(to), fmt_str(t, "to"));
		fmt_clean(reason, sizeof(reason), fmt_str(t, "reason"));
		snprintf(head, sizeof(head), "%s  %s -> %s", at, from, to);
		if (reason[0] != '\0')
			fmt_paraf(o, 4, head, 8, ": %s", reason);
		else
			fmt_para(o, 4, head, 8, "");
	}
}

/*
 * The backend it is judged against and where that is said; a [service]
 * that names none and takes [haproxy]'s gets told how to say so.
 */
static void
backend(struct fmt_out *o, const json_t *svc)
{
	const json_t	*b = json_object_get(svc, "backend");
	char		 name[TEXT_MAX], svcname[TEXT_MAX];
	double		 line;

	if (!json_is_object(b))
		return;
	fmt_clean(name, sizeof(name), fmt_str(b, "name"));
	fmt_clean(svcname, sizeof(svcname), fmt_str(svc, "name"));
	if (!fmt_num(b, "line", &line))
		line = 0;
	if (json_is_true(json_object_get(b, "inherited")))
		fmt_field(o, "backend", "%s, inherited from [haproxy] (line "
		    "%.0f): name it in [service %s]", name, line, svcname);
	else if (strcmp(fmt_str(b, "from"), "service") == 0)
		fmt_field(o, "backend", "%s ([service %s] backend, line %.0f)",
		    name, svcname, line);
	else
		fmt_field(o, "backend", "%s ([haproxy] backend, line %.0f)",
		    name, line);
}

/* The peer guard of a service: what it holds and whom it asked. */
static void
peer_guard(struct fmt_out *o, const json_t *svc)
{
	const json_t	*g = json_object_get(svc, "peer_guard"), *p;
	char		 state[32], reason[TEXT_MAX], who[TEXT_MAX],
	    why[TEXT_MAX];
	char		 id[TEXT_MAX], ago[32];
	double		 asked;
	size_t		 i;

	if (!json_is_object(g))
		return;
	fmt_clean(state, sizeof(state), fmt_str(g, "state"));
	if (strcmp(state, "off") == 0) {
		fmt_field(o, "peer guard", "off (no [peers] agents, no "
		    "[haproxy] sources)");
		return;
	}
	fmt_clean(reason, sizeof(reason), fmt_str(g, "reason"));
	fmt_field(o, "peer guard", "%s%s%s", state, reason[0] != '\0' ? ": " :
	    "", reason);
	fmt_clean(who, sizeof(who), fmt_str(g, "serving_peers"));
	fmt_clean(why, sizeof(why), fmt_str(g, "why"));
	if (!fmt_num(g, "asked_s", &asked))
		fmt_paraf(o, 6, "", 6, "the other nodes: not asked yet");
	else {
		fmt_age(ago, sizeof(ago), asked);
		if (json_is_true(json_object_get(g, "other_serving")))
			fmt_paraf(o, 6, "", 6, "serving elsewhere: %s (asked "
			    "%s ago)", who, ago);
		else
			fmt_paraf(o, 6, "", 6, "NO OTHER NODE SERVING (asked "
			    "%s ago): %s", ago, why);
	}
	json_array_foreach(json_object_get(g, "peers"), i, p) {
		fmt_clean(id, sizeof(id), fmt_str(p, "node_id"));
		fmt_clean(why, sizeof(why), fmt_str(p, "why_not"));
		if (json_is_true(json_object_get(p, "serving")))
			fmt_paraf(o, 8, "", 10, "%s: serving", id[0] ? id :
			    "?");
		else
			fmt_paraf(o, 8, "", 10, "%s: not serving: %s", id[0] ?
			    id : "?", why);
	}
	fmt_clean(why, sizeof(why), fmt_str(g, "marker_warning"));
	if (why[0] != '\0')
		fmt_paraf(o, 6, "", 6, "WARNING: %s", why);
}

/* A count of a row, or "unknown" for null (HAProxy left it empty). */
static void
count_text(char *buf, size_t size, const json_t *row, const char *key)
{
	const json_t	*j = json_object_get(row, key);

	if (json_is_integer(j))
		snprintf(buf, size, "%lld", (long long)json_integer_value(j));
	else
		snprintf(buf, size, "unknown");
}

/*
 * What the load balancer has on this node now: a drain that never empties
 * (a websocket, a long download) shows here. Older lbagents have no such
 * fields: nothing then.
 */
static void
lb_load(struct fmt_out *o, const json_t *row)
{
	char	s[32], q[32], others[32];

	if (json_object_get(row, "sessions") == NULL &&
	    json_object_get(row, "queued") == NULL)
		return;
	count_text(s, sizeof(s), row, "sessions");
	count_text(q, sizeof(q), row, "queued");
	count_text(others, sizeof(others), row, "others_serving");
	if (json_object_get(row, "others_serving") == NULL)
		fmt_paraf(o, 6, "", 6, "sessions %s, queued %s", s, q);
	else
		fmt_paraf(o, 6, "", 6, "sessions %s, queued %s; other servers "
		    "serving: %s", s, q, others);
}

/* How each load balancer's stats show this service's server. */
static void
haproxy_view(struct fmt_out *o, const json_t *root, const json_t *svc)
{
	const json_t	*lbs = json_object_get(root, "haproxy"), *lb, *m, *w;
	char		 src[TEXT_MAX], st[64], agent[64], err[TEXT_MAX];
	char		 be[TEXT_MAX], srv[TEXT_MAX], text[TEXT_MAX];
	char		 init[32];
	double		 weight, iw;
	size_t		 i, j, k;

	if (!json_is_array(lbs) || json_array_size(lbs) == 0)
		return;
	fprintf(o->fp, "  as the load balancers show it\n");
	json_array_foreach(lbs, i, lb) {
		fmt_clean(src, sizeof(src), fmt_str(lb, "source"));
		json_array_foreach(json_object_get(lb, "this_node"), j, m) {
			if (strcmp(fmt_str(m, "service"), fmt_str(svc,
			    "name")) != 0)
				continue;
			fmt_clean(be, sizeof(be), fmt_str(m, "backend"));
			fmt_clean(srv, sizeof(srv), fmt_str(m, "server"));
			if (!json_is_true(json_object_get(m, "found"))) {
				fmt_clean(err, sizeof(err), fmt_str(m,
				    "error"));
				fmt_paraf(o, 4, "", 6, "%s: %s/%s: %s", src, be,
				    srv, err);
				continue;
			}
			fmt_clean(st, sizeof(st), fmt_str(m, "status"));
			fmt_clean(agent, sizeof(agent), fmt_str(m,
			    "agent_status"));
			if (!fmt_num(m, "weight", &weight))
				weight = -1;
			if (fmt_num(m, "initial_weight", &iw))
				snprintf(init, sizeof(init), "%.0f", iw);
			else
				snprintf(init, sizeof(init), "unknown");
			fmt_paraf(o, 4, "", 6, "%s: %s/%s %s, weight %.0f "
			    "(initial %s), agent %s", src, be, srv, st, weight,
			    init, agent[0] ? agent : "-");
			lb_load(o, m);
			json_array_foreach(json_object_get(m, "warnings"), k, w)
			    {
				fmt_clean(text, sizeof(text),
				    json_string_value(w) ?
				    json_string_value(w) : "?");
				fmt_paraf(o, 6, "", 6, "WARNING: %s", text);
			}
		}
	}
}

/* Every peer the node asks, once (not per service). */
static void
peers_list(struct fmt_out *o, const json_t *root)
{
	const json_t	*ps = json_object_get(root, "peers"), *p;
	char		 agent[TEXT_MAX], id[TEXT_MAX], why[TEXT_MAX], ago[32];
	char		 seen[48];
	double		 s;
	size_t		 i;

	if (!json_is_array(ps) || json_array_size(ps) == 0)
		return;
	fprintf(o->fp, "\npeers\n");
	json_array_foreach(ps, i, p) {
		fmt_clean(agent, sizeof(agent), fmt_str(p, "agent"));
		fmt_clean(id, sizeof(id), fmt_str(p, "node_id"));
		fmt_clean(why, sizeof(why), fmt_str(p, "why_not"));
		if (fmt_num(p, "last_seen_s", &s)) {
			fmt_age(ago, sizeof(ago), s);
			snprintf(seen, sizeof(seen), "answered %s ago", ago);
		} else
			snprintf(seen, sizeof(seen), "never answered");
		if (json_is_true(json_object_get(p, "self")))
			fmt_paraf(o, 2, "", 4, "%s: this node", agent);
		else if (json_is_true(json_object_get(p, "serving")))
			fmt_paraf(o, 2, "", 4, "%s (%s): serving, %s", id[0] ?
			    id : "?", agent, seen);
		else
			fmt_paraf(o, 2, "", 4, "%s (%s): not serving: %s; %s",
			    id[0] ? id : "?", agent, why, seen);
	}
}

static void
service(struct fmt_out *o, const json_t *root, const json_t *svc)
{
	char		 name[TEXT_MAX], words[32], reply[TEXT_MAX];
	char		 reason[TEXT_MAX], by[TEXT_MAX];
	const json_t	*target = json_object_get(svc, "target");

	fmt_clean(name, sizeof(name), ctl_service_label(fmt_str(svc, "name")));
	fmt_state_words(words, sizeof(words), svc);
	fputc('\n', o->fp);
	fmt_paraf(o, 0, "", 2, "service %s: %s, %s", name, words,
	    json_is_true(json_object_get(svc, "serving")) ? "serving" :
	    "not serving");
	fmt_clean(reply, sizeof(reply), fmt_str(svc, "reply"));
	fmt_field(o, "reply", "%s", reply[0] != '\0' ? reply : "(nothing yet)");
	if (json_is_string(json_object_get(svc, "shadow_reply"))) {
		fmt_clean(reply, sizeof(reply), fmt_str(svc, "shadow_reply"));
		fmt_field(o, "would reply", "%s (shadow mode: not sent)",
		    reply);
	}
	fmt_clean(reason, sizeof(reason), fmt_str(svc, "reason"));
	fmt_field(o, "decision", "%s%s%s", words, reason[0] != '\0' ? ": " : "",
	    reason);
	if (json_is_object(target)) {
		fmt_state_words(words, sizeof(words), target);
		fmt_clean(reason, sizeof(reason), fmt_str(target, "reason"));
		fmt_field(o, "rules say", "%s%s%s", words,
		    reason[0] != '\0' ? ": " : "", reason);
	}
	if (strcmp(fmt_str(svc, "automation"), "off") == 0) {
		fmt_clean(by, sizeof(by), fmt_str(svc, "automation_off_by"));
		fmt_field(o, "automation", "OFF%s%s%s", by[0] != '\0' ? " (" :
		    "", by, by[0] != '\0' ? ")" : "");
	} else if (strcmp(fmt_str(svc, "automation"), "shadow") == 0) {
		fmt_clean(by, sizeof(by), fmt_str(svc, "shadow_by"));
		fmt_field(o, "automation", "SHADOW%s%s%s", by[0] != '\0' ? " "
		    "(" : "", by, by[0] != '\0' ? ")" : "");
	} else
		fmt_field(o, "automation", "auto");
	fmt_capacity(o, svc, false);
	transition(o, json_object_get(svc, "transition"));
	markers(o, svc);
	probes(o, svc);
	backend(o, svc);
	peer_guard(o, svc);
	load_balancers(o, svc);
	haproxy_view(o, root, svc);
	history(o, svc);
}


void
ctl_format_status(FILE *fp, const json_t *root, const char *only,
    unsigned width)
{
	struct fmt_out	 o = { fp, width < 40 ? 40 : width };
	bool		 detail = json_is_true(json_object_get(root, "detail"));
	const json_t	*s;
	size_t		 i;

	ctl_format_attention(fp, root, width);
	header(&o, root, detail);
	persistence(&o, root);
	fputc('\n', fp);
	summary(&o, root, only);
	if (!detail)
		return;
	json_array_foreach(json_object_get(root, "services"), i, s)
		if (only == NULL || strcmp(fmt_str(s, "name"), only) == 0)
			service(&o, root, s);
	peers_list(&o, root);
}
