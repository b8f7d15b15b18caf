/*
 * lbagentctl fleet: the local lbagent's view of its peers as one table.
 * The daemon's detail carries what each peer answered in its last round
 * (a detail read gets one begun within an [peers] interval: it waits for
 * it when the rounds had stopped), the age of that answer and each
 * peer's liveness, so one request gives a consistent view, as old as its
 * last round, which the table says.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/ctl/fleet.h"
#include "lbagent/ctl/term.h"

/* A peer's service named name (""/NULL: the default), or NULL. */
static const json_t *
service_in(const json_t *svcs, const char *name)
{
	const json_t	*s;
	size_t		 i;

	json_array_foreach(svcs, i, s) {
		const char *n = json_string_value(json_object_get(s, "name"));

		if (n != NULL && strcmp(n, name != NULL ? name : "") == 0)
			return s;
	}
	return NULL;
}

static json_t *
copy_of(const json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return v != NULL ? json_deep_copy(v) : json_null();
}

/* This node's row, from the status's own services. */
static json_t *
self_row(const json_t *status, const char *service)
{
	const json_t	*s = service_in(json_object_get(status, "services"),
			    service);
	json_t		*lbs = json_array();
	const json_t	*lb, *mine;
	size_t		 i, k;

	/* How each load balancer shows this node, from the detail. */
	json_array_foreach(json_object_get(status, "haproxy"), i, lb)
		json_array_foreach(json_object_get(lb, "this_node"), k, mine) {
			const char *n = json_string_value(json_object_get(mine,
			    "service"));

			if (n == NULL || strcmp(n, service != NULL ? service :
			    "") != 0)
				continue;
			json_array_append_new(lbs, json_pack("{s:o, s:o, s:o, "
			    "s:o}", "source", copy_of(lb, "source"), "server",
			    copy_of(mine, "server"), "status", copy_of(mine,
			    "status"), "weight", copy_of(mine, "weight")));
		}
	return json_pack("{s:o, s:b, s:b, s:n, s:o, s:o, s:o, s:o, s:o, s:f, "
	    "s:s, s:o, s:I, s:o}", "node", copy_of(status, "node_id"),
	    "self", 1, "answered", 1, "error", "state", copy_of(s, "state"),
	    "no_probes", copy_of(s, "no_probes"),
	    "weight", copy_of(s, "weight"), "serving", copy_of(s, "serving"),
	    "automation", copy_of(s, "automation"), "last_seen_s", 0.0,
	    "liveness", "self", "incarnation", copy_of(status,
	    "incarnation"), "restarts", (json_int_t)0, "load_balancers", lbs);
}

static json_t *
peer_row(const json_t *p, const char *service)
{
	const json_t	*s = service_in(json_object_get(p, "services"), service);
	bool		 ok = json_is_true(json_object_get(p, "answered"));

	/* Its node_id, else the address it is asked at. */
	return json_pack("{s:o, s:o, s:o, s:b, s:b, s:o, s:o, s:o, s:o, s:o, "
	    "s:o, s:o, s:o, s:o, s:o}", "no_probes", ok ? copy_of(s,
	    "no_probes") : json_null(), "node", copy_of(p, json_is_string(
	    json_object_get(p, "node_id")) ? "node_id" : "agent"), "agent",
	    copy_of(p, "agent"), "self", json_is_true(json_object_get(p,
	    "self")), "answered", ok, "error", copy_of(p, "error"), "state",
	    ok ? copy_of(s, "state") : json_null(), "weight", ok ?
	    copy_of(s, "weight") : json_null(), "serving", ok ?
	    copy_of(s, "serving") : json_null(), "automation", ok ?
	    copy_of(s, "automation") : json_null(), "last_seen_s",
	    copy_of(p, "last_seen_s"), "liveness", copy_of(p, "liveness"),
	    "incarnation", copy_of(p, "incarnation"), "restarts",
	    copy_of(p, "restarts"), "load_balancers",
	    copy_of(s, "load_balancers"));
}

json_t *
ctl_fleet_json(const json_t *status, const char *service)
{
	const json_t	*rounds = json_object_get(status, "peer_rounds");
	const json_t	*p;
	json_t		*rows, *row, *out;
	size_t		 i;
	bool		 self_listed = false;

	if ((rows = json_array()) == NULL)
		return NULL;
	json_array_foreach(json_object_get(status, "peers"), i, p)
		if (json_is_true(json_object_get(p, "self")) &&
		    json_is_true(json_object_get(p, "answered")))
			self_listed = true;
	/* This node first, from its own status (fresher than its answer). */
	json_array_append_new(rows, self_row(status, service));
	json_array_foreach(json_object_get(status, "peers"), i, p) {
		if (self_listed && json_is_true(json_object_get(p, "self")))
			continue;
		if ((row = peer_row(p, service)) != NULL)
			json_array_append_new(rows, row);
	}
	out = json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o}", "node_id",
	    copy_of(status, "node_id"), "service", service != NULL ?
	    service : "", "last_round_s", copy_of(rounds, "last_round_s"),
	    "interval_ms", copy_of(rounds, "interval_ms"), "suspect_after",
	    copy_of(rounds, "suspect_after"), "dead_after",
	    copy_of(rounds, "dead_after"), "rows", rows);
	if (out == NULL)
		json_decref(rows);
	return out;
}

/* An age as a few characters: 0.4s, 12s, 5m, 3h, 2d; "never". */
static void
age(const json_t *v, char *buf, size_t size)
{
	double	s;

	if (!json_is_number(v)) {
		snprintf(buf, size, "never");
		return;
	}
	s = json_number_value(v);
	if (s < 10)
		snprintf(buf, size, "%.1fs", s);
	else if (s < 120)
		snprintf(buf, size, "%.0fs", s);
	else if (s < 7200)
		snprintf(buf, size, "%.0fm", s / 60);
	else if (s < 172800)
		snprintf(buf, size, "%.0fh", s / 3600);
	else
		snprintf(buf, size, "%.0fd", s / 86400);
}

static const char *
str(const json_t *o, const char *key, const char *none)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : none;
}

/* Writes s cut to width columns (a '~' ends what was cut). */
static void
put_cut(FILE *fp, const char *s, int width)
{
	int	len = (int)strlen(s);

	if (width <= 0)
		return;
	if (len <= width)
		fprintf(fp, "%s", s);
	else {
		int	cut = width - 1;

		/* Not inside a character. */
		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
		fprintf(fp, "%.*s~", cut, s);
	}
}

#define W_NODE	14
#define W_STATE	6
#define W_WT	4
#define W_SERVE	5
#define W_AUTO	7
#define W_SEEN	6
#define W_LIVE	8
#define W_INC	4
/* The columns before the load balancers', each with its space. */
#define W_FIXED	(W_NODE + W_STATE + W_WT + W_SERVE + W_AUTO + W_SEEN + \
	    W_LIVE + W_INC + 8)

/*
 * The load balancers' column within room: whole entries ("1:UP/100"), and
 * when they do not all fit, as many as leave room for "+N more".
 */
static void
lb_column(FILE *fp, const json_t *lbs, int room)
{
	char		 e[64], more[24];
	const json_t	*lb, *lw;
	size_t		 i, n = json_array_size(lbs);
	int		 used = 0, len;

	if (n == 0 || room <= 0)
		return;
	json_array_foreach(lbs, i, lb) {
		lw = json_object_get(lb, "weight");
		if (json_is_integer(lw))
			snprintf(e, sizeof(e), "%zu:%s/%lld", i + 1,
			    str(lb, "status", "?"),
			    (long long)json_integer_value(lw));
		else
			snprintf(e, sizeof(e), "%zu:%s", i + 1,
			    str(lb, "status", "?"));
		len = (int)strlen(e) + 1;
		snprintf(more, sizeof(more), " +%zu more", n - i - 1);
		/* This one fits, with room for what says the rest. */
		if (used + len + (i + 1 < n ? (int)strlen(more) : 0) > room)
			break;
		fprintf(fp, " %s", e);
		used += len;
	}
	if (i < n)
		fprintf(fp, " +%zu more", n - i);
}

static void
format_row(FILE *fp, const json_t *r, int width)
{
	char		 node[64], seen[16], inc[24], buf[512];
	const json_t	*w = json_object_get(r, "weight");

	snprintf(node, sizeof(node), "%s%s", str(r, "node", "?"),
	    json_is_true(json_object_get(r, "self")) ? "*" : "");
	if (json_is_true(json_object_get(r, "self")))
		snprintf(seen, sizeof(seen), "now");
	else
		age(json_object_get(r, "last_seen_s"), seen, sizeof(seen));
	if (json_is_integer(json_object_get(r, "incarnation")))
		snprintf(inc, sizeof(inc), "%lld", (long long)json_integer_value(
		    json_object_get(r, "incarnation")));
	else
		snprintf(inc, sizeof(inc), "-");
	put_cut(fp, node, W_NODE);
	fprintf(fp, "%*s", W_NODE - (int)(strlen(node) < W_NODE ?
	    strlen(node) : W_NODE) + 1, "");
	if (!json_is_true(json_object_get(r, "answered"))) {
		/* A peer that does not answer: said across its columns. */
		snprintf(buf, sizeof(buf), "no answer: %s", str(r, "error",
		    "no answer yet"));
		put_cut(fp, buf, W_STATE + W_WT + W_SERVE + W_AUTO + 3);
		fprintf(fp, "%*s", W_STATE + W_WT + W_SERVE + W_AUTO + 4 -
		    (int)(strlen(buf) < W_STATE + W_WT + W_SERVE + W_AUTO + 3 ?
		    strlen(buf) : W_STATE + W_WT + W_SERVE + W_AUTO + 3), "");
	} else {
		char	st[W_STATE + 2];

		/* "up?": up with no probe behind it (the legend says). */
		snprintf(st, sizeof(st), "%.*s%s", W_STATE - 1, str(r, "state",
		    "-"), json_is_true(json_object_get(r, "no_probes")) ? "?" :
		    "");
		snprintf(buf, sizeof(buf), "%lld", json_is_integer(w) ?
		    (long long)json_integer_value(w) : -1LL);
		fprintf(fp, "%-*.*s %-*s %-*s %-*.*s ", W_STATE, W_STATE, st, W_WT, json_is_integer(w) ? buf : "-",
		    W_SERVE, json_is_true(json_object_get(r, "serving")) ?
		    "yes" : "no", W_AUTO, W_AUTO, str(r, "automation", "-"));
	}
	fprintf(fp, "%-*s %-*.*s %-*.*s", W_SEEN, seen, W_LIVE, W_LIVE,
	    str(r, "liveness", "-"), W_INC, W_INC, inc);
	lb_column(fp, json_object_get(r, "load_balancers"), width - W_FIXED);
	fprintf(fp, "\n");
}

static void	format(FILE *, const json_t *, int);

/* Every string in j (keys aside) replaced by its escaped form. */
static void
escape_strings(json_t *j)
{
	const char	*key;
	json_t		*v;
	size_t		 i;
	char		 buf[1024];

	if (json_is_object(j)) {
		json_object_foreach(j, key, v) {
			if (json_is_string(v)) {
				ctl_term_text(buf, sizeof(buf),
				    json_string_value(v));
				json_object_set_new(j, key, json_string(buf));
			} else
				escape_strings(v);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			if (json_is_string(v)) {
				ctl_term_text(buf, sizeof(buf),
				    json_string_value(v));
				json_array_set_new(j, i, json_string(buf));
			} else
				escape_strings(v);
		}
	}
}

/*
 * Through a buffer: what the documents carry (names, errors, addresses,
 * HAProxy's words) is escaped before it is laid out (ctl_term_text).
 */
void
ctl_fleet_format(FILE *out, const json_t *f, int width)
{
	char	*text = NULL, *p;
	size_t	 len = 0;
	FILE	*fp;
	json_t	*safe;

	if ((safe = json_deep_copy(f)) == NULL)
		return;
	escape_strings(safe);
	if ((fp = open_memstream(&text, &len)) == NULL) {
		json_decref(safe);
		return;
	}
	format(fp, safe, width);
	json_decref(safe);
	if (fclose(fp) != 0 || text == NULL) {
		free(text);
		return;
	}
	/* Lines without the spaces that end them. */
	for (p = text; *p != '\0'; ) {
		size_t	n = strcspn(p, "\n"), end = n;

		while (end > 0 && p[end - 1] == ' ')
			end--;
		fprintf(out, "%.*s%s", (int)end, p, p[n] == '\n' ? "\n" : "");
		p += n + (p[n] == '\n');
	}
	free(text);
}

/* The header in lines of width at most, cut at spaces. */
static void
header_lines(FILE *fp, const char *s, int width)
{
	while (strlen(s) > (size_t)width) {
		int cut = width;

		while (cut > 0 && s[cut] != ' ')
			cut--;
		if (cut == 0)
			cut = width;
		fprintf(fp, "%.*s\n", cut, s);
		s += cut;
		while (*s == ' ')
			s++;
	}
	fprintf(fp, "%s\n", s);
}

static void
format(FILE *fp, const json_t *f, int width)
{
	const json_t	*rows = json_object_get(f, "rows"), *r, *lb;
	const json_t	*first;
	char		 round[16], line[512];
	const char	*svc = str(f, "service", "");
	size_t		 i;
	int		 n;

	if (json_is_null(json_object_get(f, "interval_ms")) ||
	    json_object_get(f, "interval_ms") == NULL)
		n = snprintf(line, sizeof(line), "fleet of %s%s%s: no [peers] "
		    "agents configured, this node only", str(f, "node_id", "?"),
		    svc[0] ? ", service " : "", svc);
	else {
		age(json_object_get(f, "last_round_s"), round, sizeof(round));
		char		asked[48], every[24];
		long long	iv = (long long)json_integer_value(
				    json_object_get(f, "interval_ms"));

		age(json_object_get(f, "last_round_s"), round, sizeof(round));
		if (strcmp(round, "never") == 0)
			snprintf(asked, sizeof(asked), "no round of the peers "
			    "yet");
		else if (json_number_value(json_object_get(f,
		    "last_round_s")) * 1000 > 3.0 * (double)iv + 60000)
			/* A detail read gets a round begun within an interval. */
			snprintf(asked, sizeof(asked), "peers asked %s ago, "
			    "STALE", round);
		else
			snprintf(asked, sizeof(asked), "peers asked %s ago",
			    round);
		if (iv % 1000 == 0)
			snprintf(every, sizeof(every), "%llds", iv / 1000);
		else
			snprintf(every, sizeof(every), "%lldms", iv);
		n = snprintf(line, sizeof(line), "fleet as %s sees it%s%s: "
		    "%s (every %s); suspect after %lld, dead after %lld "
		    "rounds", str(f, "node_id", "?"), svc[0] ? ", service " :
		    "", svc, asked, every, (long long)
		    json_integer_value(json_object_get(f, "suspect_after")),
		    (long long)json_integer_value(json_object_get(f,
		    "dead_after")));
	}
	(void)n;
	header_lines(fp, line, width);
	fprintf(fp, "%-*s %-*s %-*s %-*s %-*s %-*s %-*s %-*s", W_NODE, "NODE",
	    W_STATE, "STATE", W_WT, "WT", W_SERVE, "SERVE", W_AUTO, "AUTO",
	    W_SEEN, "SEEN", W_LIVE, "LIVENESS", W_INC, "INC");
	first = json_array_get(rows, 0);
	if (json_array_size(json_object_get(first, "load_balancers")) > 0)
		fprintf(fp, " LB");
	fprintf(fp, "\n");
	json_array_foreach(rows, i, r)
		format_row(fp, r, width);
	fprintf(fp, "* this node. SEEN: the last good answer, as of that "
	    "round.\n");
	json_array_foreach(rows, i, r)
		if (json_is_true(json_object_get(r, "no_probes"))) {
			fprintf(fp, "?: no probes, up unless a marker says "
			    "otherwise.\n");
			break;
		}
	json_array_foreach(json_object_get(first, "load_balancers"), i, lb) {
		snprintf(line, sizeof(line), "LB %zu: %s", i + 1,
		    str(lb, "source", "?"));
		put_cut(fp, line, width);
		fprintf(fp, "\n");
	}
}
