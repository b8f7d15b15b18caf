/*
 * lbagentctl status --short and why: a line per service, or a few lines
 * on why it replies what it does since when and what would change it;
 * and status's and why's exit status.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lbagent/ctl/args.h"
#include "lbagent/ctl/format.h"
#include "fmt.h"

int
ctl_status_exit(const json_t *root, const char *only)
{
	const json_t	*s;
	size_t		 i, shown = 0;

	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(fmt_str(s, "name"), only) != 0)
			continue;
		shown++;
		/* The daemon's word: up with a weight above 0, drain is not. */
		if (!json_is_true(json_object_get(s, "serving")))
			return CTL_EXIT_NOT_SERVING;
	}
	if (shown == 0)
		return CTL_EXIT_NOT_SERVING;
	return ctl_attention(root) ? CTL_EXIT_ATTENTION : CTL_EXIT_OK;
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

	fmt_clean(r, sizeof(r), fmt_str(svc, "reply"));
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
		if (strcmp(fmt_str(m, "kind"), kind) == 0)
			return m;
	return NULL;
}

/*
 * Since when the service replies what it does: the service's since (when
 * its reply last changed in kind, kept in state.json across a restart);
 * from an older lbagent, by the rules the transition engine's since,
 * under a marker or with automation off the newest history entry, else
 * the start.
 */
static const char *
decided_at(const json_t *root, const json_t *svc)
{
	const json_t	*h = json_object_get(svc, "history");
	const json_t	*tr = json_object_get(svc, "transition");
	const char	*st = fmt_str(svc, "state");
	size_t		 n = json_array_size(h);

	if (fmt_str(svc, "since")[0] != '\0')
		return fmt_str(svc, "since");
	if (strcmp(st, "maint") != 0 && strcmp(st, "drain") != 0 &&
	    strcmp(fmt_str(svc, "automation"), "off") != 0 &&
	    strcmp(fmt_str(svc, "automation"), "shadow") != 0 &&
	    fmt_str(tr, "since")[0] != '\0')
		return fmt_str(tr, "since");

	if (n > 0 && fmt_str(json_array_get(h, n - 1), "at")[0] != '\0')
		return fmt_str(json_array_get(h, n - 1), "at");
	if (fmt_str(root, "started_at")[0] != '\0')
		return fmt_str(root, "started_at");
	return fmt_str(json_object_get(svc, "transition"), "since");
}

/* The why in a few words, for status --short. */
static void
why_words(char *buf, size_t size, const json_t *svc)
{
	const json_t	*m, *p;
	char		 st[16], reason[TEXT_MAX], by[TEXT_MAX], pend[TEXT_MAX];

	fmt_clean(st, sizeof(st), fmt_str(svc, "state"));
	fmt_clean(reason, sizeof(reason), fmt_str(svc, "reason"));
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
	if (strcmp(fmt_str(svc, "automation"), "off") == 0) {
		fmt_clean(by, sizeof(by), fmt_str(svc, "automation_off_by"));
		snprintf(buf, size, "automation off%s%s%s", by[0] ? " (" : "",
		    by, by[0] ? ")" : "");
		return;
	}
	if (strcmp(fmt_str(svc, "automation"), "shadow") == 0) {
		char	would[TEXT_MAX];

		fmt_clean(would, sizeof(would), fmt_str(svc, "shadow_reply"));
		snprintf(buf, size, "shadow mode: would reply \"%s\"", would);
		return;
	}
	if (reason[0] == '\0')
		fmt_clean(reason, sizeof(reason), fmt_str(json_object_get(svc,
		    "target"), "reason"));
	if (reason[0] == '\0' && json_is_true(json_object_get(svc,
	    "no_probes")))
		snprintf(reason, sizeof(reason), "no probes: up unless a "
		    "marker says otherwise");
	if (reason[0] == '\0')
		snprintf(reason, sizeof(reason), "%s", strcmp(st, "up") == 0 ?
		    "all probes passing" : "?");
	p = json_object_get(json_object_get(svc, "transition"), "pending");
	fmt_clean(pend, sizeof(pend), fmt_str(p, "text"));
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
	ctl_format_attention(fp, root, width);
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(fmt_str(s, "name"), only) != 0)
			continue;
		if ((n = strlen(ctl_service_label(fmt_str(s, "name")))) > nw &&
		    n <= NAME_COL)
			nw = n;
		if (detail)
			reply_words(reply, sizeof(reply), s);
		else
			fmt_state_words(reply, sizeof(reply), s);
		if ((n = strlen(reply)) > rw && n <= 16)
			rw = n;
	}
	/* What is left for WHY; a narrow terminal pushes SINCE out instead. */
	room = width > nw + rw + 8 + 6 + 10 ? width - nw - rw - 8 - 6 : 10;
	fprintf(fp, "%-*s  %-*s  %-*s  %s\n", (int)nw, "SERVICE", (int)rw,
	    "REPLY", (int)room, "WHY", "SINCE");
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(fmt_str(s, "name"), only) != 0)
			continue;
		fmt_clean(name, sizeof(name), ctl_service_label(fmt_str(s,
		    "name")));
		if (detail) {
			reply_words(reply, sizeof(reply), s);
			local_clock(since, sizeof(since), decided_at(root, s));
		} else {
			/* The public part: the state, no reason, no times. */
			fmt_state_words(reply, sizeof(reply), s);
			snprintf(since, sizeof(since), "-");
		}
		why_words(why, sizeof(why), s);
		/* Cut to its column; the full story is in `why`. */
		if (strlen(why) > room && room > 3)
			snprintf(why + room - 3, sizeof(why) - (room - 3),
			    "...");
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
	fmt_age(buf, size, s);
	return buf;
}

/* The marker command that would end a marker of this scope. */
static void
marker_undo(char *buf, size_t size, const json_t *svc, const json_t *m)
{
	char	name[TEXT_MAX], kind[32];

	fmt_clean(name, sizeof(name), fmt_str(svc, "name"));
	fmt_clean(kind, sizeof(kind), fmt_str(m, "kind"));
	if (strcmp(fmt_str(m, "scope"), "service") == 0)
		snprintf(buf, size, "lbagentctl %s off --service %s", kind,
		    name);
	else
		snprintf(buf, size, "lbagentctl %s off", kind);
}

/* What the probes' rules say under a marker or automation off. */
static void
why_underneath(struct fmt_out *o, const json_t *svc)
{
	const json_t	*t = json_object_get(svc, "target");
	char		 words[32], reason[TEXT_MAX];

	if (!json_is_object(t))
		return;
	fmt_state_words(words, sizeof(words), t);
	fmt_clean(reason, sizeof(reason), fmt_str(t, "reason"));
	fmt_paraf(o, 2, "", 4, "underneath, the probes say %s%s%s%s", words,
	    reason[0] ? " (" : "", reason, reason[0] ? ")" : "");
}

/* The first line: what it replies since when, and whether it serves. */
static void
why_head(struct fmt_out *o, const json_t *root, const json_t *svc,
    time_t now)
{
	char		 name[TEXT_MAX], words[32], at[16], a1[64], a2[32];
	time_t		 t;

	fmt_clean(name, sizeof(name), ctl_service_label(fmt_str(svc, "name")));
	fmt_state_words(words, sizeof(words), svc);
	local_clock(at, sizeof(at), decided_at(root, svc));
	if (iso_time(decided_at(root, svc), &t) && now >= t)
		snprintf(a1, sizeof(a1), " (%s ago)", age(a2, sizeof(a2),
		    (double)(now - t)));
	else
		a1[0] = '\0';
	fmt_paraf(o, 0, "", 2, "%s: %s since %s%s, %s", name, words, at, a1,
	    json_is_true(json_object_get(svc, "serving")) ? "serving" :
	    "not serving");
}

/* A marker over everything (maint wins over drain): false when none. */
static bool
why_marker(struct fmt_out *o, const json_t *svc, const char *st,
    const char *reason)
{
	const json_t	*m;
	char		 undo[2 * TEXT_MAX], until[32];

	if ((strcmp(st, "maint") != 0 && strcmp(st, "drain") != 0) ||
	    (m = marker_of(svc, st)) == NULL)
		return false;
	marker_undo(undo, sizeof(undo), svc, m);
	fmt_paraf(o, 2, "", 4, "because of the %s marker (%s)%s%s", st,
	    strcmp(fmt_str(m, "scope"), "node") == 0 ? "node-wide" :
	    "this service's", reason[0] ? ": " : "", reason);
	if (json_is_string(json_object_get(m, "until"))) {
		local_date_time(until, sizeof(until), fmt_str(m, "until"));
		fmt_paraf(o, 2, "", 4, "ends by itself at %s, or with `%s`",
		    until, undo);
	} else
		fmt_paraf(o, 2, "", 4, "ends with `%s`", undo);
	why_underneath(o, svc);
	return true;
}

/* Automation off, by whom and how it ends: false when it is not off. */
static bool
why_off(struct fmt_out *o, const json_t *svc)
{
	const json_t	*m;
	char		 name[TEXT_MAX], by[TEXT_MAX];

	if (strcmp(fmt_str(svc, "automation"), "off") != 0)
		return false;
	fmt_clean(name, sizeof(name), ctl_service_label(fmt_str(svc, "name")));
	fmt_clean(by, sizeof(by), fmt_str(svc, "automation_off_by"));
	fmt_paraf(o, 2, "", 4, "automation is off (%s): the load balancers "
	    "keep what they were last told", by[0] ? by : "?");
	if ((m = marker_of(svc, "off")) != NULL)
		fmt_paraf(o, 2, "", 4, "ends with `lbagentctl mode auto%s%s`",
		    strcmp(fmt_str(m, "scope"), "service") == 0 ?
		    " --service " : "", strcmp(fmt_str(m, "scope"),
		    "service") == 0 ? name : "");
	else if (strncmp(by, "LBAGENT_MODE", 12) == 0)
		fmt_paraf(o, 2, "", 4, "ends when lbagent restarts without "
		    "LBAGENT_MODE=off in its environment");
	else if (strncmp(by, "mode = off", 10) == 0)
		fmt_paraf(o, 2, "", 4, "ends with mode = auto in the "
		    "configuration and a reload");
	why_underneath(o, svc);
	return true;
}

/* Shadow mode, what it would reply and how it ends: false when not. */
static bool
why_shadow(struct fmt_out *o, const json_t *svc)
{
	char	by[TEXT_MAX], would[TEXT_MAX];

	if (strcmp(fmt_str(svc, "automation"), "shadow") != 0)
		return false;
	fmt_clean(by, sizeof(by), fmt_str(svc, "shadow_by"));
	fmt_clean(would, sizeof(would), fmt_str(svc, "shadow_reply"));
	fmt_paraf(o, 2, "", 4, "shadow mode (%s): the load balancers keep "
	    "what they were last told; automation would reply \"%s\"",
	    by[0] ? by : "?", would);
	if (strncmp(by, "marker ", 7) == 0)
		fmt_paraf(o, 2, "", 4, "ends when %s is removed", by + 7);
	else if (strncmp(by, "LBAGENT_MODE", 12) == 0)
		fmt_paraf(o, 2, "", 4, "ends when lbagent restarts without "
		    "LBAGENT_MODE=shadow in its environment");
	else if (strncmp(by, "mode = shadow", 13) == 0)
		fmt_paraf(o, 2, "", 4, "ends with mode = auto in the "
		    "configuration and a reload");
	why_underneath(o, svc);
	return true;
}

/*
 * By the rules, through the transition engine: the reason (without the
 * "recovering" the ramp says itself: reason loses it), whether it is held
 * over a restart.
 */
static void
why_rules(struct fmt_out *o, const json_t *root, const json_t *svc,
    const char *st, char *reason)
{
	const json_t	*tr = json_object_get(svc, "transition");
	const json_t	*ramp = json_object_get(tr, "ramp");
	char		 by[TEXT_MAX], gs[32], started[16];
	bool		 held_over = false;

	if (fmt_str(root, "started_at")[0] != '\0' &&
	    decided_at(root, svc)[0] != '\0' &&
	    strcmp(decided_at(root, svc), fmt_str(root, "started_at")) < 0)
		held_over = true;
	fmt_clean(by, sizeof(by), fmt_str(json_object_get(svc, "target"),
	    "reason"));
	fmt_state_words(gs, sizeof(gs), json_object_get(svc, "target"));
	/* The ramp says "recovering" itself, below. */
	if (json_is_object(ramp) && strncmp(reason, "recovering", 10) == 0)
		memmove(reason, reason + 10 + strspn(reason + 10, "; "),
		    strlen(reason + 10 + strspn(reason + 10, "; ")) + 1);
	if (reason[0] != '\0')
		fmt_paraf(o, 2, "", 4, "because %s", reason);
	else if (by[0] != '\0')
		/* Not moved yet: the window is under way (pending, below). */
		fmt_paraf(o, 2, "", 4, "the probes say %s: %s", gs, by);
	else if (json_array_size(json_object_get(svc, "probes")) == 0 &&
	    json_is_array(json_object_get(svc, "probes")))
		fmt_paraf(o, 2, "", 4, "no probes: up unless a marker says "
		    "otherwise");
	else if (strcmp(st, "up") == 0)
		fmt_paraf(o, 2, "", 4, "every probe passing");
	if (held_over) {
		local_clock(started, sizeof(started), fmt_str(root,
		    "started_at"));
		fmt_paraf(o, 2, "", 4, "held from before lbagent started at %s "
		    "(the state file)", started);
	}
}

/* The peer guard, when it holds the service in or asks. */
static void
why_guard(struct fmt_out *o, const json_t *g)
{
	char	gs[32], by[TEXT_MAX];

	if (!json_is_object(g))
		return;
	fmt_clean(gs, sizeof(gs), fmt_str(g, "state"));
	if (strcmp(gs, "holding") == 0 || strcmp(gs, "latched") == 0 ||
	    strcmp(gs, "back_alone") == 0 || strcmp(gs, "asking") == 0) {
		fmt_clean(by, sizeof(by), fmt_str(g, "reason"));
		fmt_paraf(o, 2, "", 4, "the peer guard is %s%s%s", gs,
		    by[0] ? ": " : "", by);
		if (strcmp(gs, "latched") == 0)
			fmt_paraf(o, 2, "", 4, "latched: stays in until "
			    "lbagent restarts");
	}
}

/* The recovery ramp: where the weight is and by when it is full. */
static void
why_ramp(struct fmt_out *o, const json_t *ramp, time_t now)
{
	char	a1[64], a2[32];
	double	w, to, ends;

	if (!json_is_object(ramp))
		return;
	if (!fmt_num(ramp, "weight", &w))
		w = 0;
	if (!fmt_num(ramp, "to", &to))
		to = 100;
	if (!fmt_num(ramp, "ends_in_s", &ends))
		ends = 0;
	local_clock_in(a2, sizeof(a2), now, ends);
	fmt_paraf(o, 2, "", 4, "recovering: %.0f%% now, %.0f%% by %s (in %s)",
	    w, to, a2, age(a1, sizeof(a1), ends));
}

/* A change under way: towards what, after how long, how long so far. */
static void
why_pending(struct fmt_out *o, const json_t *p, const char *st)
{
	char	towards[32], text[TEXT_MAX], a1[64], a2[32];
	double	fs, as;

	fmt_clean(towards, sizeof(towards), fmt_str(p, "towards"));
	fmt_clean(text, sizeof(text), fmt_str(p, "text"));
	if (!fmt_num(p, "after_s", &as))
		as = 0;
	if (!fmt_num(p, "for_s", &fs))
		fmt_paraf(o, 2, "", 4, "towards %s: waiting for every probe's "
		    "first verdict", towards);
	else if (strstr(text, "held in") != NULL ||
	    strstr(text, "asking") != NULL)
		fmt_paraf(o, 2, "", 4, "%s", text);
	else if (strcmp(towards, "up") == 0 || (strcmp(st, "up") != 0 &&
	    strncmp(text, "passing", 7) == 0))
		fmt_paraf(o, 2, "", 4, "comes back after %s of passing; %s so "
		    "far", age(a1, sizeof(a1), as), age(a2, sizeof(a2), fs));
	else if (strcmp(towards, "down") == 0)
		fmt_paraf(o, 2, "", 4, "goes down after %s of failing; %s so "
		    "far", age(a1, sizeof(a1), as), age(a2, sizeof(a2), fs));
	else
		fmt_paraf(o, 2, "", 4, "goes to %s after %s; %s so far",
		    towards, age(a1, sizeof(a1), as), age(a2, sizeof(a2), fs));
}

/* What would change it: a change under way, else what it waits for. */
static void
why_next(struct fmt_out *o, const json_t *svc, const char *st,
    const char *reason)
{
	const json_t	*tr = json_object_get(svc, "transition");
	const json_t	*p = json_object_get(tr, "pending");
	const json_t	*damp = json_object_get(tr, "damping");
	char		 a1[64];
	double		 v, factor, outs, upafter;

	if (json_is_object(p))
		why_pending(o, p, st);
	else if (strcmp(st, "up") != 0 && fmt_num(damp, "up_after_s", &upafter))
		fmt_paraf(o, 2, "", 4, "comes back after %s of passing, once "
		    "the probes pass", age(a1, sizeof(a1), upafter));
	else if (strcmp(st, "up") == 0 && fmt_num(tr, "weight", &v) &&
	    v >= 100 && reason[0] == '\0' &&
	    json_array_size(json_object_get(svc, "probes")) > 0)
		fmt_paraf(o, 2, "", 4, "goes out when a probe fails for its "
		    "window (down_after, degrade_after)");
	else if (strcmp(st, "up") == 0 &&
	    !json_is_object(json_object_get(tr, "ramp")) &&
	    fmt_num(svc, "weight", &v) && v < 100)
		fmt_paraf(o, 2, "", 4, "back to 100%% once the probes pass for "
		    "restore_after");
	if (json_is_object(damp) && fmt_num(damp, "factor", &factor) &&
	    factor > 1) {
		if (!fmt_num(damp, "outs_in_window", &outs))
			outs = 0;
		fmt_paraf(o, 2, "", 4, "flap damping: up_after x%.0f (%.0f "
		    "goings-out in the flap window)", factor, outs);
	}
}

static void
why_service(struct fmt_out *o, const json_t *root, const json_t *svc,
    time_t now)
{
	const json_t	*tr = json_object_get(svc, "transition");
	char		 st[16], reason[TEXT_MAX];

	fmt_clean(st, sizeof(st), fmt_str(svc, "state"));
	fmt_clean(reason, sizeof(reason), fmt_str(svc, "reason"));
	why_head(o, root, svc, now);
	if (why_marker(o, svc, st, reason) || why_off(o, svc) ||
	    why_shadow(o, svc))
		return;
	why_rules(o, root, svc, st, reason);
	fmt_capacity(o, svc, true);
	why_guard(o, json_object_get(svc, "peer_guard"));
	why_ramp(o, json_object_get(tr, "ramp"), now);
	why_next(o, svc, st, reason);
}

void
ctl_format_why(FILE *fp, const json_t *root, const char *only,
    unsigned width, time_t now)
{
	struct fmt_out	 o = { fp, width < 40 ? 40 : width };
	const json_t	*s;
	size_t		 i, n = 0;

	ctl_format_attention(fp, root, width);
	if (ctl_attention(root))
		fputc('\n', fp);
	json_array_foreach(json_object_get(root, "services"), i, s) {
		if (only != NULL && strcmp(fmt_str(s, "name"), only) != 0)
			continue;
		if (n++ > 0)
			fputc('\n', fp);
		why_service(&o, root, s, now);
	}
}
