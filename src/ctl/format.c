/*
 * lbagentctl status as text: the /status document, in at most `width`
 * columns. Every string from the document is untrusted (probe reasons,
 * agent-send texts): control and non-ASCII bytes are shown as '?', so
 * that nothing can drive the terminal, and a column is a byte.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbagent/core/units.h"
#include "lbagent/ctl/format.h"
#include "lbagent/ctl/term.h"

#define HISTORY_SHOWN	10
#define LABEL_W		14	/* "  reply         value" */
#define NAME_COL	24	/* widest name column of the tables */
#define TEXT_MAX	1024	/* longer strings are cut: status, not a dump */

struct out {
	FILE		*fp;
	unsigned	 width;
};

/* ------------------------------------------------------------- helpers */

const char *
ctl_json_str(const json_t *obj, const char *key)
{
	const char	*s = json_string_value(json_object_get(obj, key));

	return s != NULL ? s : "";
}

static const char *
str(const json_t *obj, const char *key)
{
	return ctl_json_str(obj, key);
}

static bool
num(const json_t *obj, const char *key, double *v)
{
	const json_t	*j = json_object_get(obj, key);

	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return isfinite(*v);
}

void
ctl_printable(char *dst, size_t size, const char *src)
{
	ctl_term_text(dst, size, src);
}

/* Untrusted text made printable, at most TEXT_MAX bytes. */
static void
clean(char *dst, size_t size, const char *src)
{
	ctl_printable(dst, size < TEXT_MAX + 1 ? size : TEXT_MAX + 1, src);
}

/* Seconds from the status, in the house format of elapsed times. */
static void
format_age(char *buf, size_t size, double s)
{
	if (!isfinite(s) || s < 0)
		s = 0;
	if (s > 1e15)
		s = 1e15;
	units_format_age((uint64_t)llround(s * 1000), buf, size);
}

/* "2026-11-29T10:02:11Z" as "2026-11-29 10:02:11 UTC"; anything else as is. */
static void
format_time(char *buf, size_t size, const char *iso)
{
	char	c[64];

	clean(c, sizeof(c), iso);
	if (strlen(c) >= 19 && c[10] == 'T' && c[strlen(c) - 1] == 'Z')
		snprintf(buf, size, "%.10s %.8s UTC", c, c + 11);
	else if (size > 0)
		snprintf(buf, size, "%.*s", (int)(size - 1), c);
}

/* A measured value: whole numbers as such, others with two decimals. */
static void
format_value(char *buf, size_t size, double v)
{
	if (fabs(v) < 1e15 && v == floor(v))
		snprintf(buf, size, "%.0f", v);
	else if (fabs(v) < 1)		/* 0.65, a plugin's 0.000164 s */
		snprintf(buf, size, "%.3g", v);
	else if (fabs(v) < 1e15)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

/* "up", "up 50%", "down", "drain", "maint". */
static void
state_words(char *buf, size_t size, const json_t *obj)
{
	char	 st[32];
	double	 w;

	clean(st, sizeof(st), str(obj, "state"));
	if (strcmp(st, "up") == 0 && num(obj, "weight", &w) && w < 100)
		snprintf(buf, size, "up %.0f%%", w);
	else
		snprintf(buf, size, "%s", st[0] != '\0' ? st : "?");
}

/*
 * Writes indent spaces, head, then text right after it, wrapped at the
 * width with every further line indented by hang columns. A word too long
 * for a line is cut where the line ends.
 */
static void
para(struct out *o, unsigned indent, const char *head, unsigned hang,
    const char *text)
{
	const char	*p = text;
	unsigned	 col;
	size_t		 wlen, room;
	bool		 first = true;

	if (hang + 10 > o->width)
		hang = 0;
	fprintf(o->fp, "%*s%s", (int)indent, "", head);
	col = indent + (unsigned)strlen(head);
	for (;;) {
		p += strspn(p, " ");
		if (*p == '\0')
			break;
		wlen = strcspn(p, " ");
		if (!first) {
			if (col + 1 + wlen > o->width) {
				fprintf(o->fp, "\n%*s", (int)hang, "");
				col = hang;
			} else {
				fputc(' ', o->fp);
				col++;
			}
		}
		while (col + wlen > o->width) {
			room = o->width > col ? o->width - col : 0;
			/* Not inside a character (escapes are ASCII). */
			while (room > 0 && room < wlen &&
			    ((unsigned char)p[room] & 0xc0) == 0x80)
				room--;
			fwrite(p, 1, room, o->fp);
			p += room;
			wlen -= room;
			fprintf(o->fp, "\n%*s", (int)hang, "");
			col = hang;
		}
		fwrite(p, 1, wlen, o->fp);
		col += (unsigned)wlen;
		p += wlen;
		first = false;
	}
	fputc('\n', o->fp);
}

/* A formatted paragraph. */
static void
paraf(struct out *o, unsigned indent, const char *head, unsigned hang,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
paraf(struct out *o, unsigned indent, const char *head, unsigned hang,
    const char *fmt, ...)
{
	char	buf[4 * TEXT_MAX];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	para(o, indent, head, hang, buf);
}

/* "  label       " + value, wrapped under the value's column. */
static void
field(struct out *o, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
field(struct out *o, const char *label, const char *fmt, ...)
{
	char	head[LABEL_W + 1], buf[4 * TEXT_MAX];
	va_list	ap;

	snprintf(head, sizeof(head), "%-*s ", LABEL_W - 3, label);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	para(o, 2, head, LABEL_W, buf);
}

const json_t *
ctl_service(const json_t *root, const char *name)
{
	const json_t	*services = json_object_get(root, "services");
	const json_t	*s;
	size_t		 i;

	json_array_foreach(services, i, s)
		if (json_is_object(s) && strcmp(str(s, "name"), name) == 0)
			return s;
	return NULL;
}

const char *
ctl_service_label(const char *name)
{
	return name[0] == '\0' ? "(default)" : name;
}

/* ------------------------------------------------------------ sections */

static void
header(struct out *o, const json_t *root, bool detail)
{
	char	node[128], ver[64], path[TEXT_MAX], t[64];
	double	inc = 0, pid = 0, reloads = 0;
	const json_t *lr;

	clean(node, sizeof(node), str(root, "node_id"));
	num(root, "incarnation", &inc);
	if (!detail) {
		paraf(o, 0, "", 0, "node %s, incarnation %.0f", node, inc);
		para(o, 0, "", 0, "(public view: the detail needs the unix "
		    "socket or the token of [http] token_file)");
		return;
	}
	clean(ver, sizeof(ver), str(root, "version"));
	clean(path, sizeof(path), str(root, "config"));
	num(root, "pid", &pid);
	num(root, "reloads", &reloads);
	paraf(o, 0, "", 2, "lbagent %s, pid %.0f, node %s, incarnation %.0f",
	    ver, pid, node, inc);
	format_time(t, sizeof(t), str(root, "started_at"));
	paraf(o, 0, "", 2, "config %s, started %s", path, t);
	lr = json_object_get(root, "last_reload");
	if (!json_is_object(lr)) {
		paraf(o, 0, "", 2, "reloads: %.0f", reloads);
		return;
	}
	format_time(t, sizeof(t), str(lr, "at"));
	if (json_is_true(json_object_get(lr, "ok"))) {
		paraf(o, 0, "", 2, "reloads: %.0f, the last at %s: ok", reloads,
		    t);
	} else {
		const json_t	*e;
		size_t		 i;
		char		 line[TEXT_MAX];

		paraf(o, 0, "", 2, "reloads: %.0f, the last at %s: FAILED, "
		    "still running the previous configuration:", reloads, t);
		json_array_foreach(json_object_get(lr, "errors"), i, e) {
			clean(line, sizeof(line), json_string_value(e) != NULL ?
			    json_string_value(e) : "?");
			para(o, 2, "", 4, line);
		}
	}
}

/* Said only while the state file cannot be saved. */
static void
persistence(struct out *o, const json_t *root)
{
	const json_t	*p = json_object_get(root, "persistence");
	char		 why[TEXT_MAX], at[64];
	const char	*since;

	if (!json_is_object(p) || !json_is_false(json_object_get(p, "ok")))
		return;
	clean(why, sizeof(why), str(p, "reason"));
	clean(at, sizeof(at), str(p, "failing_since"));
	since = strlen(at) >= 19 && at[10] == 'T' ? at + 11 : at;
	paraf(o, 0, "", 2, "persistence: failing since %.8s UTC (%s)", since,
	    why);
}

static void
summary(struct out *o, const json_t *root, const char *only)
{
	const json_t	*s;
	size_t		 i, w = 9, n;
	char		 name[TEXT_MAX], st[32];
	double		 weight;

	/* Longer names than NAME_COL get a line of their own. */
	json_array_foreach(json_object_get(root, "services"), i, s) {
		n = strlen(ctl_service_label(str(s, "name")));
		if (n > w && n <= NAME_COL)
			w = n;
	}
	fprintf(o->fp, "%-*s  %-6s %6s  %-7s  %s\n", (int)w, "SERVICE", "STATE",
	    "WEIGHT", "SERVING", "AUTOMATION");
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(str(s, "name"), only) != 0)
			continue;
		clean(name, sizeof(name), ctl_service_label(str(s, "name")));
		clean(st, sizeof(st), str(s, "state"));
		if (!num(s, "weight", &weight))
			weight = 0;
		/* A long name gets its own line; the columns stay put. */
		if (strlen(name) > w)
			fprintf(o->fp, "%s\n%-*s", name, (int)w, "");
		else
			fprintf(o->fp, "%-*s", (int)w, name);
		fprintf(o->fp, "  %-6s %6.0f  %-7s  %s\n", st, weight,
		    json_is_true(json_object_get(s, "serving")) ? "yes" : "no",
		    str(s, "automation")[0] == 'o' ? "off" :
		    str(s, "automation")[0] == 's' ? "shadow" : "auto");
		/* Shadow mode: what it would send, under what it does. */
		if (json_is_string(json_object_get(s, "shadow_reply"))) {
			char	would[TEXT_MAX];

			clean(would, sizeof(would), str(s, "shadow_reply"));
			fprintf(o->fp, "%*s  shadow: would reply \"%s\"\n",
			    (int)w, "", would);
		}
	}
}

static void
transition(struct out *o, const json_t *tr)
{
	const json_t	*p, *r, *d;
	char		 words[32], since[64], age[32], text[TEXT_MAX];
	double		 v, w, to, started, ends, factor, outs, upafter;

	if (!json_is_object(tr))
		return;
	state_words(words, sizeof(words), tr);
	format_time(since, sizeof(since), str(tr, "since"));
	if (num(tr, "since_s", &v)) {
		format_age(age, sizeof(age), v);
		field(o, "transition", "%s for %s (since %s)", words, age,
		    since);
	} else
		field(o, "transition", "%s since %s", words, since);
	if (json_is_object(p = json_object_get(tr, "pending"))) {
		clean(text, sizeof(text), str(p, "text"));
		if (text[0] == '\0') {
			char	towards[64];

			clean(towards, sizeof(towards), str(p, "towards"));
			snprintf(text, sizeof(text), "towards %s", towards);
		}
		field(o, "pending", "%s", text);
	}
	if (json_is_object(r = json_object_get(tr, "ramp"))) {
		char	a1[32], a2[32];

		if (!num(r, "weight", &w))
			w = 0;
		if (!num(r, "to", &to))
			to = 100;
		if (!num(r, "started_s", &started))
			started = 0;
		if (!num(r, "ends_in_s", &ends))
			ends = 0;
		format_age(a1, sizeof(a1), started);
		format_age(a2, sizeof(a2), ends);
		field(o, "ramp", "at %.0f%%, rising to %.0f%%; started %s ago, "
		    "ends in %s", w, to, a1, a2);
	}
	if (json_is_object(d = json_object_get(tr, "damping"))) {
		if (!num(d, "factor", &factor))
			factor = 1;
		if (!num(d, "outs_in_window", &outs))
			outs = 0;
		if (factor > 1 && num(d, "up_after_s", &upafter)) {
			format_age(age, sizeof(age), upafter);
			field(o, "damping", "up_after x%.0f (%.0f goings-out in "
			    "the flap window): back up after %s of passing",
			    factor, outs, age);
		} else if (factor > 1) {
			field(o, "damping", "up_after x%.0f (%.0f goings-out in "
			    "the flap window)", factor, outs);
		} else {
			field(o, "damping", "none (%.0f going%s-out in the flap "
			    "window)", outs, outs == 1 ? "" : "s");
		}
	}
}

/* Who set a marker, from where and when, then until when: lines of their own. */
static void
marker_trail(struct out *o, const json_t *m)
{
	char	owner[TEXT_MAX], host[TEXT_MAX], since[64], until[64];
	char	note[TEXT_MAX];

	clean(owner, sizeof(owner), str(m, "owner"));
	clean(host, sizeof(host), str(m, "host"));
	format_time(since, sizeof(since), str(m, "since"));
	format_time(until, sizeof(until), str(m, "until"));
	clean(note, sizeof(note), str(m, "note"));
	if (owner[0] != '\0' || host[0] != '\0' || since[0] != '\0')
		field(o, "", "  set by %s%s%s%s%s", owner[0] ? owner : "?",
		    host[0] ? "@" : "", host, since[0] ? " at " : "", since);
	if (until[0] != '\0')
		field(o, "", "  until %s", until);
	else if (owner[0] != '\0' || host[0] != '\0' || since[0] != '\0')
		field(o, "", "  no end");
	if (note[0] != '\0')
		field(o, "", "  note: %s", note);
}

static void
markers(struct out *o, const json_t *svc)
{
	const json_t	*ms = json_object_get(svc, "markers"), *m;
	char		 kind[16], reason[TEXT_MAX], label[LABEL_W];
	size_t		 i;

	if (!json_is_array(ms))
		return;
	if (json_array_size(ms) == 0) {
		field(o, "markers", "none");
		return;
	}
	json_array_foreach(ms, i, m) {
		clean(kind, sizeof(kind), str(m, "kind"));
		clean(reason, sizeof(reason), str(m, "reason"));
		snprintf(label, sizeof(label), "%s", i == 0 ? "markers" : "");
		field(o, label, "%s (%s): %s", kind,
		    strcmp(str(m, "scope"), "node") == 0 ? "node-wide" :
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

	format_value(n, sizeof(n), v);
	clean(u, sizeof(u), unit);
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

/* A windowed probe's figures: "window 1m: 57 runs since ...". */
static void
window_lines(struct out *o, const json_t *w)
{
	char	span[32], since[64], p50[16], p95[16], p99[16], rate[16];
	char	reason[TEXT_MAX], result[16];
	double	v, samples = 0, min = 0;

	if (!json_is_object(w))
		return;
	span[0] = since[0] = '\0';
	if (num(w, "window_ms", &v))
		format_age(span, sizeof(span), v / 1000);
	num(w, "samples", &samples);
	num(w, "min_samples", &min);
	clean(reason, sizeof(reason), str(w, "reason"));
	clean(result, sizeof(result), str(w, "result"));
	if (!json_is_true(json_object_get(w, "judging"))) {
		paraf(o, 6, "", 8, "window %s: %.0f of %.0f runs, not judged "
		    "yet", span, samples, min);
		return;
	}
	format_time(since, sizeof(since), str(w, "since"));
	snprintf(p50, sizeof(p50), "-");
	snprintf(p95, sizeof(p95), "-");
	snprintf(p99, sizeof(p99), "-");
	snprintf(rate, sizeof(rate), "-");
	if (num(w, "p50_ms", &v))
		format_ms(p50, sizeof(p50), v);
	if (num(w, "p95_ms", &v))
		format_ms(p95, sizeof(p95), v);
	if (num(w, "p99_ms", &v))
		format_ms(p99, sizeof(p99), v);
	if (num(w, "error_rate", &v))
		snprintf(rate, sizeof(rate), "%.1f%%", v);
	paraf(o, 6, "", 8, "window %s: p50 %s, p95 %s, p99 %s, error rate %s",
	    span, p50, p95, p99, rate);
	if (strcmp(result, "ok") == 0)
		paraf(o, 8, "", 8, "%.0f runs since %s", samples, since);
	else
		paraf(o, 8, "", 8, "%.0f runs since %s; %s: %s", samples, since,
		    result, reason);
}

static void
probes(struct out *o, const json_t *svc)
{
	const json_t	*ps = json_object_get(svc, "probes"), *p, *last, *runs;
	char		 name[TEXT_MAX], type[16], result[16], counted[16];
	char		 value[64], ago[40], took[32], reason[TEXT_MAX];
	char		 notes[256];
	size_t		 i, nw = 12, n;
	double		 v, ok, warn, crit;

	if (!json_is_array(ps))
		return;
	if (json_array_size(ps) == 0) {
		field(o, "probes", "none");
		return;
	}
	json_array_foreach(ps, i, p)
		if ((n = strlen(str(p, "name"))) > nw && n <= NAME_COL)
			nw = n;
	fprintf(o->fp, "  probes\n    %-*s %-8s %-6s %10s  %-10s %s\n", (int)nw,
	    "NAME", "TYPE", "RESULT", "VALUE", "LAST RUN", "TOOK");
	json_array_foreach(ps, i, p) {
		clean(name, sizeof(name), str(p, "name"));
		clean(type, sizeof(type), str(p, "type"));
		clean(counted, sizeof(counted), str(p, "counted"));
		last = json_object_get(p, "last");
		snprintf(result, sizeof(result), "-");
		snprintf(value, sizeof(value), "-");
		snprintf(ago, sizeof(ago), "not yet");
		snprintf(took, sizeof(took), "-");
		reason[0] = '\0';
		if (json_is_object(last)) {
			clean(result, sizeof(result), str(last, "result"));
			clean(reason, sizeof(reason), str(last, "reason"));
			if (num(last, "value", &v))
				format_value_unit(value, sizeof(value), v,
				    value_unit(last));
			if (num(last, "ago_s", &v)) {
				format_age(ago, sizeof(ago), v);
				strncat(ago, " ago", sizeof(ago) - strlen(ago) - 1);
			}
			if (num(last, "duration_ms", &v))
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
		notes[0] = '\0';
		if (!json_is_true(json_object_get(p, "settled")))
			snprintf(notes, sizeof(notes), "not settled yet");
		else if (counted[0] != '\0' && strcmp(counted, result) != 0)
			snprintf(notes, sizeof(notes), "counts as %s", counted);
		runs = json_object_get(p, "runs");
		if (json_is_object(runs) && num(runs, "ok", &ok) &&
		    num(runs, "warn", &warn) && num(runs, "crit", &crit)) {
			size_t	l = strlen(notes);

			snprintf(notes + l, sizeof(notes) - l,
			    "%sruns %.0f ok, %.0f warn, %.0f crit",
			    l > 0 ? "; " : "", ok, warn, crit);
			/* Runs lbagent could not make, when there were. */
			l = strlen(notes);
			if (num(runs, "unknown", &v) && v > 0)
				snprintf(notes + l, sizeof(notes) - l,
				    ", %.0f unknown", v);
		}
		if (reason[0] != '\0')
			paraf(o, 6, "", 6, "%s (%s)", reason, notes);
		else if (notes[0] != '\0')
			paraf(o, 6, "", 6, "(%s)", notes);
		window_lines(o, json_object_get(p, "window"));
	}
}

static void
load_balancers(struct out *o, const json_t *svc)
{
	const json_t	*lbs = json_object_get(svc, "load_balancers"), *lb, *w;
	char		 addr[128], text[TEXT_MAX], reply[TEXT_MAX], ago[32];
	char		 owed[256], word[32], last[TEXT_MAX + 16];
	size_t		 i, j;
	double		 seen, checks;

	if (!json_is_array(lbs))
		return;
	if (json_array_size(lbs) == 0) {
		field(o, "asked by", "no load balancer recently");
		return;
	}
	fprintf(o->fp, "  load balancers that asked\n");
	json_array_foreach(lbs, i, lb) {
		clean(addr, sizeof(addr), str(lb, "address"));
		clean(text, sizeof(text), str(lb, "text"));
		clean(reply, sizeof(reply), str(lb, "last_reply"));
		if (!num(lb, "last_seen_s", &seen))
			seen = 0;
		if (!num(lb, "checks", &checks))
			checks = 0;
		format_age(ago, sizeof(ago), seen);
		owed[0] = '\0';
		json_array_foreach(json_object_get(lb, "owed"), j, w) {
			clean(word, sizeof(word), json_string_value(w) != NULL ?
			    json_string_value(w) : "?");
			if (strlen(owed) + strlen(word) + 3 < sizeof(owed)) {
				if (owed[0] != '\0')
					strcat(owed, ", ");
				strcat(owed, word);
			}
		}
		/* Keys come back from the state file; their last line does not. */
		if (reply[0] != '\0')
			snprintf(last, sizeof(last), "last reply \"%s\"", reply);
		else
			snprintf(last, sizeof(last), "no reply since lbagent "
			    "started");
		if (text[0] != '\0')
			paraf(o, 4, "", 6, "%s \"%s\": asked %s ago (%.0f "
			    "checks), %s", addr, text, ago, checks, last);
		else
			paraf(o, 4, "", 6, "%s (no agent-send): asked %s ago "
			    "(%.0f checks), %s", addr, ago, checks, last);
		if (owed[0] != '\0')
			paraf(o, 6, "", 6, "still owed: %s", owed);
		/* A typo in agent-send, answered as the default service. */
		if (str(lb, "warning")[0] != '\0') {
			clean(reply, sizeof(reply), str(lb, "warning"));
			paraf(o, 6, "", 6, "%s", reply);
		}
	}
}

static void
history(struct out *o, const json_t *svc)
{
	const json_t	*h = json_object_get(svc, "history"), *t;
	char		 at[64], from[32], to[32], reason[TEXT_MAX], head[160];
	size_t		 i, n, first;

	if (!json_is_array(h))
		return;
	n = json_array_size(h);
	if (n == 0) {
		field(o, "history", "no transitions yet");
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
		format_time(at, sizeof(at), str(t, "at"));
		/* The date is the same for most lines; the time says enough. */
		if (strlen(at) > 4 && strcmp(at + strlen(at) - 4, " UTC") == 0)
			at[strlen(at) - 4] = '\0';
		clean(from, sizeof(from), str(t, "from"));
		clean(to, sizeof(to), str(t, "to"));
		clean(reason, sizeof(reason), str(t, "reason"));
		snprintf(head, sizeof(head), "%s  %s -> %s", at, from, to);
		if (reason[0] != '\0')
			paraf(o, 4, head, 8, ": %s", reason);
		else
			para(o, 4, head, 8, "");
	}
}

/* The peer guard of a service: what it holds and whom it asked. */
static void
peer_guard(struct out *o, const json_t *svc)
{
	const json_t	*g = json_object_get(svc, "peer_guard"), *p;
	char		 state[32], reason[TEXT_MAX], who[TEXT_MAX], why[TEXT_MAX];
	char		 id[TEXT_MAX], ago[32];
	double		 asked;
	size_t		 i;

	if (!json_is_object(g))
		return;
	clean(state, sizeof(state), str(g, "state"));
	if (strcmp(state, "off") == 0) {
		field(o, "peer guard", "off (no [peers] agents, no [haproxy] "
		    "sources)");
		return;
	}
	clean(reason, sizeof(reason), str(g, "reason"));
	field(o, "peer guard", "%s%s%s", state, reason[0] != '\0' ? ": " : "",
	    reason);
	clean(who, sizeof(who), str(g, "serving_peers"));
	clean(why, sizeof(why), str(g, "why"));
	if (!num(g, "asked_s", &asked))
		paraf(o, 6, "", 6, "the other nodes: not asked yet");
	else {
		format_age(ago, sizeof(ago), asked);
		if (json_is_true(json_object_get(g, "other_serving")))
			paraf(o, 6, "", 6, "serving elsewhere: %s (asked %s ago)",
			    who, ago);
		else
			paraf(o, 6, "", 6, "NO OTHER NODE SERVING (asked %s ago): "
			    "%s", ago, why);
	}
	json_array_foreach(json_object_get(g, "peers"), i, p) {
		clean(id, sizeof(id), str(p, "node_id"));
		clean(why, sizeof(why), str(p, "why_not"));
		if (json_is_true(json_object_get(p, "serving")))
			paraf(o, 8, "", 10, "%s: serving", id[0] ? id : "?");
		else
			paraf(o, 8, "", 10, "%s: not serving: %s", id[0] ? id :
			    "?", why);
	}
	clean(why, sizeof(why), str(g, "marker_warning"));
	if (why[0] != '\0')
		paraf(o, 6, "", 6, "WARNING: %s", why);
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
lb_load(struct out *o, const json_t *row)
{
	char	s[32], q[32], others[32];

	if (json_object_get(row, "sessions") == NULL &&
	    json_object_get(row, "queued") == NULL)
		return;
	count_text(s, sizeof(s), row, "sessions");
	count_text(q, sizeof(q), row, "queued");
	count_text(others, sizeof(others), row, "others_serving");
	if (json_object_get(row, "others_serving") == NULL)
		paraf(o, 6, "", 6, "sessions %s, queued %s", s, q);
	else
		paraf(o, 6, "", 6, "sessions %s, queued %s; other servers "
		    "serving: %s", s, q, others);
}

/* How each load balancer's stats show this service's server. */
static void
haproxy_view(struct out *o, const json_t *root, const json_t *svc)
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
		clean(src, sizeof(src), str(lb, "source"));
		json_array_foreach(json_object_get(lb, "this_node"), j, m) {
			if (strcmp(str(m, "service"), str(svc, "name")) != 0)
				continue;
			clean(be, sizeof(be), str(m, "backend"));
			clean(srv, sizeof(srv), str(m, "server"));
			if (!json_is_true(json_object_get(m, "found"))) {
				clean(err, sizeof(err), str(m, "error"));
				paraf(o, 4, "", 6, "%s: %s/%s: %s", src, be, srv,
				    err);
				continue;
			}
			clean(st, sizeof(st), str(m, "status"));
			clean(agent, sizeof(agent), str(m, "agent_status"));
			if (!num(m, "weight", &weight))
				weight = -1;
			if (num(m, "initial_weight", &iw))
				snprintf(init, sizeof(init), "%.0f", iw);
			else
				snprintf(init, sizeof(init), "unknown");
			paraf(o, 4, "", 6, "%s: %s/%s %s, weight %.0f (initial "
			    "%s), agent %s", src, be, srv, st, weight, init,
			    agent[0] ? agent : "-");
			lb_load(o, m);
			json_array_foreach(json_object_get(m, "warnings"), k, w) {
				clean(text, sizeof(text), json_string_value(w) ?
				    json_string_value(w) : "?");
				paraf(o, 6, "", 6, "WARNING: %s", text);
			}
		}
	}
}

/* Every peer the node asks, once (not per service). */
static void
peers_list(struct out *o, const json_t *root)
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
		clean(agent, sizeof(agent), str(p, "agent"));
		clean(id, sizeof(id), str(p, "node_id"));
		clean(why, sizeof(why), str(p, "why_not"));
		if (num(p, "last_seen_s", &s)) {
			format_age(ago, sizeof(ago), s);
			snprintf(seen, sizeof(seen), "answered %s ago", ago);
		} else
			snprintf(seen, sizeof(seen), "never answered");
		if (json_is_true(json_object_get(p, "self")))
			paraf(o, 2, "", 4, "%s: this node", agent);
		else if (json_is_true(json_object_get(p, "serving")))
			paraf(o, 2, "", 4, "%s (%s): serving, %s", id[0] ? id :
			    "?", agent, seen);
		else
			paraf(o, 2, "", 4, "%s (%s): not serving: %s; %s",
			    id[0] ? id : "?", agent, why, seen);
	}
}

static void
service(struct out *o, const json_t *root, const json_t *svc)
{
	char		 name[TEXT_MAX], words[32], reply[TEXT_MAX];
	char		 reason[TEXT_MAX], by[TEXT_MAX];
	const json_t	*target = json_object_get(svc, "target");

	clean(name, sizeof(name), ctl_service_label(str(svc, "name")));
	state_words(words, sizeof(words), svc);
	fputc('\n', o->fp);
	paraf(o, 0, "", 2, "service %s: %s, %s", name, words,
	    json_is_true(json_object_get(svc, "serving")) ? "serving" :
	    "not serving");
	clean(reply, sizeof(reply), str(svc, "reply"));
	field(o, "reply", "%s", reply[0] != '\0' ? reply : "(nothing yet)");
	if (json_is_string(json_object_get(svc, "shadow_reply"))) {
		clean(reply, sizeof(reply), str(svc, "shadow_reply"));
		field(o, "would reply", "%s (shadow mode: not sent)", reply);
	}
	clean(reason, sizeof(reason), str(svc, "reason"));
	field(o, "decision", "%s%s%s", words, reason[0] != '\0' ? ": " : "",
	    reason);
	if (json_is_object(target)) {
		state_words(words, sizeof(words), target);
		clean(reason, sizeof(reason), str(target, "reason"));
		field(o, "rules say", "%s%s%s", words,
		    reason[0] != '\0' ? ": " : "", reason);
	}
	if (strcmp(str(svc, "automation"), "off") == 0) {
		clean(by, sizeof(by), str(svc, "automation_off_by"));
		field(o, "automation", "OFF%s%s%s", by[0] != '\0' ? " (" : "",
		    by, by[0] != '\0' ? ")" : "");
	} else if (strcmp(str(svc, "automation"), "shadow") == 0) {
		clean(by, sizeof(by), str(svc, "shadow_by"));
		field(o, "automation", "SHADOW%s%s%s", by[0] != '\0' ? " (" :
		    "", by, by[0] != '\0' ? ")" : "");
	} else
		field(o, "automation", "auto");
	transition(o, json_object_get(svc, "transition"));
	markers(o, svc);
	probes(o, svc);
	peer_guard(o, svc);
	load_balancers(o, svc);
	haproxy_view(o, root, svc);
	history(o, svc);
}

/* ---------------------------------------------- status --short, and why */

int
ctl_status_exit(const json_t *root, const char *only)
{
	const json_t	*s;
	size_t		 i, shown = 0;

	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(str(s, "name"), only) != 0)
			continue;
		shown++;
		/* The daemon's word: up with a weight above 0, drain is not. */
		if (!json_is_true(json_object_get(s, "serving")))
			return 3;
	}
	return shown > 0 ? 0 : 3;
}

/* An ISO 8601 time of the status ("...T10:02:11.250Z") as a time_t. */
static bool
iso_time(const char *iso, time_t *t)
{
	struct tm	tm;
	int		y, mo, d, h, mi, s;

	memset(&tm, 0, sizeof(tm));
	if (sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi,
	    &s) != 6 || y < 1970 || y > 9999)
		return false;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	*t = timegm(&tm);
	return true;
}

/* That time as local HH:MM:SS. */
static void
local_clock(char *buf, size_t size, const char *iso)
{
	struct tm	lt;
	time_t		t;

	if (!iso_time(iso, &t) || localtime_r(&t, &lt) == NULL ||
	    strftime(buf, size, "%H:%M:%S", &lt) == 0)
		snprintf(buf, size, "?");
}

/* That time as local "YYYY-MM-DD HH:MM:SS". */
static void
local_date_time(char *buf, size_t size, const char *iso)
{
	struct tm	lt;
	time_t		t;

	if (!iso_time(iso, &t) || localtime_r(&t, &lt) == NULL ||
	    strftime(buf, size, "%Y-%m-%d %H:%M:%S", &lt) == 0)
		snprintf(buf, size, "?");
}

/* now + s, local HH:MM:SS. */
static void
local_clock_in(char *buf, size_t size, time_t now, double s)
{
	struct tm	lt;
	time_t		t;

	if (!isfinite(s) || s < 0)
		s = 0;
	if (s > 1e9)
		s = 1e9;
	t = now + (time_t)llround(s);
	if (localtime_r(&t, &lt) == NULL ||
	    strftime(buf, size, "%H:%M:%S", &lt) == 0)
		snprintf(buf, size, "?");
}

/* The reply's words without its comment: "drain up", "ready up 50%". */
static void
reply_words(char *buf, size_t size, const json_t *svc)
{
	char	r[TEXT_MAX];
	char	*hash;

	clean(r, sizeof(r), str(svc, "reply"));
	if ((hash = strchr(r, '#')) != NULL)
		*hash = '\0';
	while (r[0] != '\0' && r[strlen(r) - 1] == ' ')
		r[strlen(r) - 1] = '\0';
	snprintf(buf, size, "%s", r[0] != '\0' ? r : "-");
}

/* The marker of kind in the service's markers, or NULL. */
static const json_t *
marker_of(const json_t *svc, const char *kind)
{
	const json_t	*m;
	size_t		 i;

	json_array_foreach(json_object_get(svc, "markers"), i, m)
		if (strcmp(str(m, "kind"), kind) == 0)
			return m;
	return NULL;
}

/*
 * Since when the service replies what it does: by the rules, the
 * transition engine's since (carried over a restart); under a marker or
 * with automation off, the newest history entry; else the start.
 */
static const char *
decided_at(const json_t *root, const json_t *svc)
{
	const json_t	*h = json_object_get(svc, "history");
	const json_t	*tr = json_object_get(svc, "transition");
	const char	*st = str(svc, "state");
	size_t		 n = json_array_size(h);

	if (strcmp(st, "maint") != 0 && strcmp(st, "drain") != 0 &&
	    strcmp(str(svc, "automation"), "off") != 0 &&
	    strcmp(str(svc, "automation"), "shadow") != 0 &&
	    str(tr, "since")[0] != '\0')
		return str(tr, "since");

	if (n > 0 && str(json_array_get(h, n - 1), "at")[0] != '\0')
		return str(json_array_get(h, n - 1), "at");
	if (str(root, "started_at")[0] != '\0')
		return str(root, "started_at");
	return str(json_object_get(svc, "transition"), "since");
}

/* The why in a few words, for status --short. */
static void
why_words(char *buf, size_t size, const json_t *svc)
{
	const json_t	*m, *p;
	char		 st[16], reason[TEXT_MAX], by[TEXT_MAX], pend[TEXT_MAX];

	clean(st, sizeof(st), str(svc, "state"));
	clean(reason, sizeof(reason), str(svc, "reason"));
	if (!json_is_string(json_object_get(svc, "reply"))) {
		snprintf(buf, size, "-");
		return;
	}
	if ((strcmp(st, "maint") == 0 || strcmp(st, "drain") == 0) &&
	    (m = marker_of(svc, st)) != NULL) {
		snprintf(buf, size, "%s marker%s%s", st, reason[0] ? ": " : "",
		    reason);
		return;
	}
	if (strcmp(str(svc, "automation"), "off") == 0) {
		clean(by, sizeof(by), str(svc, "automation_off_by"));
		snprintf(buf, size, "automation off%s%s%s", by[0] ? " (" : "",
		    by, by[0] ? ")" : "");
		return;
	}
	if (strcmp(str(svc, "automation"), "shadow") == 0) {
		char	would[TEXT_MAX];

		clean(would, sizeof(would), str(svc, "shadow_reply"));
		snprintf(buf, size, "shadow mode: would reply \"%s\"", would);
		return;
	}
	if (reason[0] == '\0')
		clean(reason, sizeof(reason), str(json_object_get(svc, "target"),
		    "reason"));
	if (reason[0] == '\0')
		snprintf(reason, sizeof(reason), "%s", strcmp(st, "up") == 0 ?
		    "all probes passing" : "?");
	p = json_object_get(json_object_get(svc, "transition"), "pending");
	clean(pend, sizeof(pend), str(p, "text"));
	snprintf(buf, size, "%s%s%s", reason, pend[0] ? "; " : "", pend);
}

void
ctl_format_short(FILE *fp, const json_t *root, const char *only,
    unsigned width)
{
	const json_t	*s;
	char		 name[TEXT_MAX], reply[TEXT_MAX], why[4 * TEXT_MAX];
	char		 since[16];
	size_t		 i, nw = 9, rw = 5, n, room;
	bool		 detail = json_is_true(json_object_get(root, "detail"));

	if (width < 40)
		width = 40;
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(str(s, "name"), only) != 0)
			continue;
		if ((n = strlen(ctl_service_label(str(s, "name")))) > nw &&
		    n <= NAME_COL)
			nw = n;
		if (detail)
			reply_words(reply, sizeof(reply), s);
		else
			state_words(reply, sizeof(reply), s);
		if ((n = strlen(reply)) > rw && n <= 16)
			rw = n;
	}
	/* What is left for WHY; a narrow terminal pushes SINCE out instead. */
	room = width > nw + rw + 8 + 6 + 10 ? width - nw - rw - 8 - 6 : 10;
	fprintf(fp, "%-*s  %-*s  %-*s  %s\n", (int)nw, "SERVICE", (int)rw,
	    "REPLY", (int)room, "WHY", "SINCE");
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(str(s, "name"), only) != 0)
			continue;
		clean(name, sizeof(name), ctl_service_label(str(s, "name")));
		if (detail) {
			reply_words(reply, sizeof(reply), s);
			local_clock(since, sizeof(since), decided_at(root, s));
		} else {
			/* The public part: the state, no reason, no times. */
			state_words(reply, sizeof(reply), s);
			snprintf(since, sizeof(since), "-");
		}
		why_words(why, sizeof(why), s);
		/* Cut to its column; the full story is in `why`. */
		if (strlen(why) > room && room > 3)
			snprintf(why + room - 3, sizeof(why) - (room - 3), "...");
		if (strlen(name) > nw)
			fprintf(fp, "%s\n%-*s", name, (int)nw, "");
		else
			fprintf(fp, "%-*s", (int)nw, name);
		if (strlen(reply) > rw)
			fprintf(fp, "  %s\n%*s", reply, (int)(nw + 2 + rw), "");
		else
			fprintf(fp, "  %-*s", (int)rw, reply);
		fprintf(fp, "  %-*s  %s\n", (int)room, why, since);
	}
}

/* "12s" from seconds of the status. */
static const char *
age(char *buf, size_t size, double s)
{
	format_age(buf, size, s);
	return buf;
}

/* The marker command that would end a marker of this scope. */
static void
marker_undo(char *buf, size_t size, const json_t *svc, const json_t *m)
{
	char	name[TEXT_MAX], kind[32];

	clean(name, sizeof(name), str(svc, "name"));
	clean(kind, sizeof(kind), str(m, "kind"));
	if (strcmp(str(m, "scope"), "service") == 0)
		snprintf(buf, size, "lbagentctl %s off --service %s", kind,
		    name);
	else
		snprintf(buf, size, "lbagentctl %s off", kind);
}

/* What the probes' rules say under a marker or automation off. */
static void
why_underneath(struct out *o, const json_t *svc)
{
	const json_t	*t = json_object_get(svc, "target");
	char		 words[32], reason[TEXT_MAX];

	if (!json_is_object(t))
		return;
	state_words(words, sizeof(words), t);
	clean(reason, sizeof(reason), str(t, "reason"));
	paraf(o, 2, "", 4, "underneath, the probes say %s%s%s%s", words,
	    reason[0] ? " (" : "", reason, reason[0] ? ")" : "");
}

static void
why_service(struct out *o, const json_t *root, const json_t *svc, time_t now)
{
	const json_t	*tr = json_object_get(svc, "transition");
	const json_t	*p = json_object_get(tr, "pending");
	const json_t	*ramp = json_object_get(tr, "ramp");
	const json_t	*damp = json_object_get(tr, "damping");
	const json_t	*g = json_object_get(svc, "peer_guard");
	const json_t	*m;
	char		 name[TEXT_MAX], words[32], st[16], at[16], a1[64], a2[32];
	char		 reason[TEXT_MAX], by[TEXT_MAX], undo[2 * TEXT_MAX], gs[32];
	char		 until[32];
	char		 started[16];
	double		 v, fs, as, w, to, ends, factor, outs, upafter;
	time_t		 t;
	bool		 held_over = false;

	clean(name, sizeof(name), ctl_service_label(str(svc, "name")));
	clean(st, sizeof(st), str(svc, "state"));
	state_words(words, sizeof(words), svc);
	clean(reason, sizeof(reason), str(svc, "reason"));
	local_clock(at, sizeof(at), decided_at(root, svc));
	if (iso_time(decided_at(root, svc), &t) && now >= t)
		snprintf(a1, sizeof(a1), " (%s ago)", age(a2, sizeof(a2),
		    (double)(now - t)));
	else
		a1[0] = '\0';
	paraf(o, 0, "", 2, "%s: %s since %s%s, %s", name, words, at, a1,
	    json_is_true(json_object_get(svc, "serving")) ? "serving" :
	    "not serving");

	/* A marker over everything: maint wins over drain. */
	if ((strcmp(st, "maint") == 0 || strcmp(st, "drain") == 0) &&
	    (m = marker_of(svc, st)) != NULL) {
		marker_undo(undo, sizeof(undo), svc, m);
		paraf(o, 2, "", 4, "because of the %s marker (%s)%s%s", st,
		    strcmp(str(m, "scope"), "node") == 0 ? "node-wide" :
		    "this service's", reason[0] ? ": " : "", reason);
		if (json_is_string(json_object_get(m, "until"))) {
			local_date_time(until, sizeof(until), str(m, "until"));
			paraf(o, 2, "", 4, "ends by itself at %s, or with `%s`",
			    until, undo);
		} else
			paraf(o, 2, "", 4, "ends with `%s`", undo);
		why_underneath(o, svc);
		return;
	}
	if (strcmp(str(svc, "automation"), "off") == 0) {
		clean(by, sizeof(by), str(svc, "automation_off_by"));
		paraf(o, 2, "", 4, "automation is off (%s): the load balancers "
		    "keep what they were last told", by[0] ? by : "?");
		if ((m = marker_of(svc, "off")) != NULL)
			paraf(o, 2, "", 4, "ends with `lbagentctl mode auto%s%s`",
			    strcmp(str(m, "scope"), "service") == 0 ?
			    " --service " : "", strcmp(str(m, "scope"),
			    "service") == 0 ? name : "");
		else if (strncmp(by, "LBAGENT_MODE", 12) == 0)
			paraf(o, 2, "", 4, "ends when lbagent restarts without "
			    "LBAGENT_MODE=off in its environment");
		else if (strncmp(by, "mode = off", 10) == 0)
			paraf(o, 2, "", 4, "ends with mode = auto in the "
			    "configuration and a reload");
		why_underneath(o, svc);
		return;
	}
	if (strcmp(str(svc, "automation"), "shadow") == 0) {
		char	would[TEXT_MAX];

		clean(by, sizeof(by), str(svc, "shadow_by"));
		clean(would, sizeof(would), str(svc, "shadow_reply"));
		paraf(o, 2, "", 4, "shadow mode (%s): the load balancers keep "
		    "what they were last told; automation would reply \"%s\"",
		    by[0] ? by : "?", would);
		if (strncmp(by, "marker ", 7) == 0)
			paraf(o, 2, "", 4, "ends when %s is removed", by + 7);
		else if (strncmp(by, "LBAGENT_MODE", 12) == 0)
			paraf(o, 2, "", 4, "ends when lbagent restarts without "
			    "LBAGENT_MODE=shadow in its environment");
		else if (strncmp(by, "mode = shadow", 13) == 0)
			paraf(o, 2, "", 4, "ends with mode = auto in the "
			    "configuration and a reload");
		why_underneath(o, svc);
		return;
	}

	/* By the rules, through the transition engine. */
	if (json_is_object(tr) && strcmp(str(tr, "since"), "") != 0 &&
	    str(root, "started_at")[0] != '\0' &&
	    strcmp(str(tr, "since"), str(root, "started_at")) < 0)
		held_over = true;
	clean(by, sizeof(by), str(json_object_get(svc, "target"), "reason"));
	state_words(gs, sizeof(gs), json_object_get(svc, "target"));
	/* The ramp says "recovering" itself, below. */
	if (json_is_object(ramp) && strncmp(reason, "recovering", 10) == 0)
		memmove(reason, reason + 10 + strspn(reason + 10, "; "),
		    strlen(reason + 10 + strspn(reason + 10, "; ")) + 1);
	if (reason[0] != '\0')
		paraf(o, 2, "", 4, "because %s", reason);
	else if (by[0] != '\0')
		/* Not moved yet: the window is under way (pending, below). */
		paraf(o, 2, "", 4, "the probes say %s: %s", gs, by);
	else if (json_array_size(json_object_get(svc, "probes")) == 0 &&
	    json_is_array(json_object_get(svc, "probes")))
		paraf(o, 2, "", 4, "no probes: up unless a marker says "
		    "otherwise");
	else if (strcmp(st, "up") == 0)
		paraf(o, 2, "", 4, "every probe passing");
	if (held_over) {
		local_clock(started, sizeof(started), str(root, "started_at"));
		paraf(o, 2, "", 4, "held from before lbagent started at %s "
		    "(the state file)", started);
	}
	if (json_is_object(g)) {
		clean(gs, sizeof(gs), str(g, "state"));
		if (strcmp(gs, "holding") == 0 || strcmp(gs, "latched") == 0 ||
		    strcmp(gs, "back_alone") == 0 || strcmp(gs, "asking") == 0) {
			clean(by, sizeof(by), str(g, "reason"));
			paraf(o, 2, "", 4, "the peer guard is %s%s%s", gs,
			    by[0] ? ": " : "", by);
			if (strcmp(gs, "latched") == 0)
				paraf(o, 2, "", 4, "latched: stays in until "
				    "lbagent restarts");
		}
	}
	if (json_is_object(ramp)) {
		if (!num(ramp, "weight", &w))
			w = 0;
		if (!num(ramp, "to", &to))
			to = 100;
		if (!num(ramp, "ends_in_s", &ends))
			ends = 0;
		local_clock_in(a2, sizeof(a2), now, ends);
		paraf(o, 2, "", 4, "recovering: %.0f%% now, %.0f%% by %s (in %s)",
		    w, to, a2, age(a1, sizeof(a1), ends));
	}
	if (json_is_object(p)) {
		char	towards[32], text[TEXT_MAX];

		clean(towards, sizeof(towards), str(p, "towards"));
		clean(text, sizeof(text), str(p, "text"));
		if (!num(p, "after_s", &as))
			as = 0;
		if (!num(p, "for_s", &fs))
			paraf(o, 2, "", 4, "towards %s: waiting for every probe's "
			    "first verdict", towards);
		else if (strstr(text, "held in") != NULL ||
		    strstr(text, "asking") != NULL)
			paraf(o, 2, "", 4, "%s", text);
		else if (strcmp(towards, "up") == 0 || (strcmp(st, "up") != 0 &&
		    strncmp(text, "passing", 7) == 0))
			paraf(o, 2, "", 4, "comes back after %s of passing; %s so "
			    "far", age(a1, sizeof(a1), as), age(a2, sizeof(a2),
			    fs));
		else if (strcmp(towards, "down") == 0)
			paraf(o, 2, "", 4, "goes down after %s of failing; %s so "
			    "far", age(a1, sizeof(a1), as), age(a2, sizeof(a2),
			    fs));
		else
			paraf(o, 2, "", 4, "goes to %s after %s; %s so far",
			    towards, age(a1, sizeof(a1), as), age(a2, sizeof(a2),
			    fs));
	} else if (strcmp(st, "up") != 0 && num(damp, "up_after_s", &upafter))
		paraf(o, 2, "", 4, "comes back after %s of passing, once the "
		    "probes pass", age(a1, sizeof(a1), upafter));
	else if (strcmp(st, "up") == 0 && num(tr, "weight", &v) && v >= 100 &&
	    reason[0] == '\0' && json_array_size(json_object_get(svc,
	    "probes")) > 0)
		paraf(o, 2, "", 4, "goes out when a probe fails for its "
		    "window (down_after, degrade_after)");
	else if (strcmp(st, "up") == 0 && !json_is_object(ramp) &&
	    num(svc, "weight", &v) && v < 100)
		paraf(o, 2, "", 4, "back to 100%% once the probes pass for "
		    "restore_after");
	if (json_is_object(damp) && num(damp, "factor", &factor) && factor > 1) {
		if (!num(damp, "outs_in_window", &outs))
			outs = 0;
		paraf(o, 2, "", 4, "flap damping: up_after x%.0f (%.0f goings-out "
		    "in the flap window)", factor, outs);
	}
}

void
ctl_format_why(FILE *fp, const json_t *root, const char *only,
    unsigned width, time_t now)
{
	struct out	 o = { fp, width < 40 ? 40 : width };
	const json_t	*s;
	size_t		 i, n = 0;

	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(str(s, "name"), only) != 0)
			continue;
		if (n++ > 0)
			fputc('\n', fp);
		why_service(&o, root, s, now);
	}
}

/* ------------------------------------------------ after a marker change */

#define KEYS_NAMED	3	/* load balancers named per line, then "N more" */

/* "127.0.0.1 \"web\"" or "127.0.0.1": a load-balancer key in words. */
static void
key_words(char *buf, size_t size, const json_t *lb)
{
	char	addr[128], text[128];

	clean(addr, sizeof(addr), str(lb, "address"));
	clean(text, sizeof(text), str(lb, "text"));
	if (text[0] != '\0')
		snprintf(buf, size, "%s \"%s\"", addr, text);
	else
		snprintf(buf, size, "%s", addr);
}

/* The line a load balancer gets now: the daemon's next_reply, else the reply. */
static const char *
lb_reply(const json_t *svc, const json_t *lb)
{
	const char	*n = json_string_value(json_object_get(lb, "next_reply"));

	return n != NULL ? n : str(svc, "reply");
}

void
ctl_format_replies(FILE *fp, const json_t *svc, const char *label,
    unsigned width)
{
	struct out	 o = { fp, width < 40 ? 40 : width };
	const json_t	*lbs = json_object_get(svc, "load_balancers"), *lb, *l2;
	char		 head[TEXT_MAX], reply[TEXT_MAX], who[4 * TEXT_MAX];
	char		 key[TEXT_MAX];
	const char	*r;
	size_t		 i, j, n, named, hang;
	bool		 same = true;

	clean(head, sizeof(head), label);
	snprintf(head + strlen(head), sizeof(head) - strlen(head), "%*s",
	    strlen(head) < 12 ? (int)(12 - strlen(head)) : 0, "");
	strncat(head, " ", sizeof(head) - strlen(head) - 1);
	hang = strlen(head) < 24 ? strlen(head) : 4;
	if (!json_is_object(svc)) {
		para(&o, 0, head, (unsigned)hang, "not answered for by lbagent");
		return;
	}
	if (!json_is_string(json_object_get(svc, "reply"))) {
		/* The public part: no reply, only the state. */
		clean(reply, sizeof(reply), str(svc, "state"));
		clean(who, sizeof(who), str(svc, "automation"));
		paraf(&o, 0, head, (unsigned)hang, "state %s, automation %s",
		    reply[0] ? reply : "?", who[0] ? who : "?");
		return;
	}
	if (!json_is_array(lbs) || json_array_size(lbs) == 0) {
		clean(reply, sizeof(reply), str(svc, "reply"));
		paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" (no load "
		    "balancer has asked yet)", reply);
		return;
	}
	r = lb_reply(svc, json_array_get(lbs, 0));
	json_array_foreach(lbs, i, lb)
		if (strcmp(lb_reply(svc, lb), r) != 0)
			same = false;
	if (same) {
		clean(reply, sizeof(reply), r);
		n = json_array_size(lbs);
		if (n == 1) {
			key_words(key, sizeof(key), json_array_get(lbs, 0));
			paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" to %s",
			    reply, key);
		} else
			paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" to "
			    "all %zu load balancers that ask", reply, n);
		return;
	}
	/* One line per different reply, with the first few that get it. */
	json_array_foreach(lbs, i, lb) {
		bool	 seen = false;

		r = lb_reply(svc, lb);
		for (j = 0; j < i && !seen; j++)
			seen = strcmp(lb_reply(svc, json_array_get(lbs, j)),
			    r) == 0;
		if (seen)
			continue;
		who[0] = '\0';
		named = n = 0;
		json_array_foreach(lbs, j, l2) {
			if (j < i || strcmp(lb_reply(svc, l2), r) != 0)
				continue;
			if (named++ >= KEYS_NAMED) {
				n++;
				continue;
			}
			key_words(key, sizeof(key), l2);
			snprintf(who + strlen(who), sizeof(who) - strlen(who),
			    "%s%s", who[0] ? ", " : "", key);
		}
		if (n > 0)
			snprintf(who + strlen(who), sizeof(who) - strlen(who),
			    " and %zu more", n);
		clean(reply, sizeof(reply), r);
		paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" to %s", reply,
		    who);
		memset(head, ' ', strlen(head));
	}
}

void
ctl_format_status(FILE *fp, const json_t *root, const char *only,
    unsigned width)
{
	struct out	 o = { fp, width < 40 ? 40 : width };
	bool		 detail = json_is_true(json_object_get(root, "detail"));
	const json_t	*s;
	size_t		 i;

	header(&o, root, detail);
	persistence(&o, root);
	fputc('\n', fp);
	summary(&o, root, only);
	if (!detail)
		return;
	json_array_foreach(json_object_get(root, "services"), i, s)
		if (only == NULL || strcmp(str(s, "name"), only) == 0)
			service(&o, root, s);
	peers_list(&o, root);
}
