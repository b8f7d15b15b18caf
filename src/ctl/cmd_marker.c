/*
 * maint, drain and mode: write or remove the marker file as touch or rm
 * would, then ask lbagent until every service it applies to shows it,
 * and say what the load balancers get (with --wait, cmd_wait.c then
 * waits for them to drain).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lbagent/ctl/format.h"
#include "lbagent/ctl/markers.h"
#include "lbagent/daemon/markers.h"
#include "cmd.h"

/* One service the marker command waits for, with what it should show. */
struct target {
	char			name[72];
	struct ctl_expect	expect;
	struct markers		own, node;
};

static bool
config_has_service(const struct ctl_conf *conf, const char *name)
{
	size_t	i;

	for (i = 0; i < conf->nservices; i++)
		if (strcmp(conf->services[i], name) == 0)
			return true;
	return false;
}

/* Reads the markers that apply to t, as the daemon reads them. */
static void
target_read(struct target *t, const char *state_dir)
{
	char	dir[4096];

	memset(&t->node, 0, sizeof(t->node));
	memset(&t->own, 0, sizeof(t->own));
	markers_read(state_dir, &t->node);
	if (t->name[0] != '\0') {
		snprintf(dir, sizeof(dir), "%s/%s", state_dir, t->name);
		markers_read_service(dir, &t->own);
	}
	ctl_expect_from(&t->node, t->name[0] != '\0' ? &t->own : NULL,
	    &t->expect);
}

/* What a service shows now, in a few words, for the result lines. */
static void
shown(const json_t *svc, char *buf, size_t size)
{
	const char	*reply = json_string_value(json_object_get(svc,
	    "reply"));
	const char	*state = json_string_value(json_object_get(svc,
	    "state"));
	const char	*autom = json_string_value(json_object_get(svc,
			    "automation"));
	char		 a[256], b[32];

	if (svc == NULL)
		snprintf(buf, size, "not answered for by lbagent");
	else if (reply != NULL)
		snprintf(buf, size, "replies \"%s\"", cmd_safe(a, sizeof(a),
		    reply));
	else
		snprintf(buf, size, "state %s, automation %s",
		    cmd_safe(b, sizeof(b), state != NULL ? state : "?"),
		    cmd_safe(a, sizeof(a), autom != NULL ? autom : "?"));
}

/* What the command expects, in words, for a timeout message. */
static void
wanted(const struct ctl_opts *o, const struct ctl_expect *e, char *buf,
    size_t size)
{
	char	r[TEXT_TERM_SIZE(REASON_MAX)];

	if (o->cmd == CTL_MODE)
		snprintf(buf, size, "automation %s", e->off ? "off" : "auto");
	else if (e->state != NULL && e->reason != NULL && e->reason[0] != '\0')
		snprintf(buf, size, "state %s, reason \"%s\"", e->state,
		    cmd_safe(r, sizeof(r), e->reason));
	else if (e->state != NULL)
		snprintf(buf, size, "state %s", e->state);
	else
		snprintf(buf, size, "neither maint nor drain");
}

/* Notes on markers that still hold after an "off" or "mode auto". */
static void
remaining(const struct ctl *c, const struct target *t)
{
	char		 label[ERR_MAX], path[4096], p[ERR_MAX];
	int		 k;

	for (k = 0; k < MARKER_COUNT; k++) {
		bool	node = t->node.m[k].present, own = t->own.m[k].present;

		if (c->o->cmd == CTL_MODE ? k != MARKER_OFF :
		    k == MARKER_OFF)
			continue;
		if (!node && !own)
			continue;
		ctl_marker_path(path, sizeof(path), c->conf.state_dir,
		    own ? t->name : NULL, (enum marker_kind)k);
		fprintf(stderr, "lbagentctl: note: %s: %s is still there\n",
		    cmd_safe(label, sizeof(label), ctl_service_label(t->name)),
		    cmd_safe(p, sizeof(p), path));
	}
}

/* A wall-clock time in local time, with its zone. */
static void
local_time(int64_t wall_ms, char *buf, size_t size)
{
	time_t		t = (time_t)(wall_ms / 1000);
	struct tm	tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%d %H:%M:%S %Z", &tm) == 0)
		snprintf(buf, size, "%lld (unix time)", (long long)t);
}

/* The until line of a marker's content, for people ("" without). */
static const char *
body_until(const char *body)
{
	static char	buf[64];
	struct marker	m;

	memset(&m, 0, sizeof(m));
	marker_parse(&m, MARKER_DRAIN, body, strlen(body), false);
	if (!m.has_until)
		return "";
	local_time(m.until_wall_ms, buf, sizeof(buf));
	return buf;
}

/* The marker's content with its end: --for from now, or --until. */
static int
marker_content(const struct ctl_opts *o, char *buf, size_t size)
{
	int64_t		 now = (int64_t)time(NULL) * 1000, until;
	const char	*why;

	if (o->until != NULL && ctl_until(o->until, time(NULL), &until,
	    &why) == -1) {
		cmd_errx("--until '%s': %s", o->until, why);
		return -1;
	}
	if (o->until == NULL)
		until = now + (int64_t)o->for_ms;
	if (ctl_marker_content(buf, size, o->reason, now, until) == -1) {
		cmd_errx("the marker does not fit in %zu bytes", size);
		return -1;
	}
	return 0;
}

/* A marker command under way: what it wrote, and what it waits for. */
struct marker_run {
	struct ctl	*c;
	const char	*path;
	const char	*verb;		/* "wrote", "removed" */
	struct target	*targets;
	size_t		 ntargets;
	json_t		*root;		/* the last status */
	bool		 check_state;	/* maint, drain; mode: automation */
};

/*
 * Writes the marker at path, or removes it, and says so on stdout.
 * Returns its verb ("wrote", "removed"), or NULL said why.
 */
static const char *
marker_write(struct ctl *c, enum marker_kind kind, const char *path)
{
	const struct ctl_opts	*o = c->o;
	char			 err[ERR_MAX], body[MARKER_FILE_MAX];
	const char		*verb;

	if (o->on) {
		const char	*content = o->reason;

		if ((o->for_ms != 0 || o->until != NULL) &&
		    marker_content(o, body, sizeof(body)) == -1)
			return NULL;
		if (o->for_ms != 0 || o->until != NULL)
			content = body;
		if (ctl_marker_set(c->conf.state_dir, o->service, kind,
		    content, err, sizeof(err)) == -1) {
			cmd_errx("%s", err);
			return NULL;
		}
		verb = "wrote";
	} else {
		if (ctl_marker_clear(c->conf.state_dir, o->service, kind, err,
		    sizeof(err)) == -1) {
			cmd_errx("%s", err);
			return NULL;
		}
		verb = "removed";
	}
	printf("%s %s\n", verb, path);
	if (o->on && (o->for_ms != 0 || o->until != NULL))
		printf("it ends at %s\n", body_until(body));
	fflush(stdout);
	return verb;
}

/* The services the marker applies to, from the first status: -1 said why. */
static int
targets_make(struct marker_run *m)
{
	const struct ctl_opts	*o = m->c->o;
	size_t			 i;

	m->ntargets = o->service != NULL ? 1 :
	    json_array_size(json_object_get(m->root, "services"));
	if ((m->targets = calloc(m->ntargets ? m->ntargets : 1,
	    sizeof(*m->targets))) == NULL) {
		cmd_errx("out of memory");
		return -1;
	}
	for (i = 0; i < m->ntargets; i++) {
		const char *n = o->service != NULL ? o->service :
		    json_string_value(json_object_get(json_array_get(
		    json_object_get(m->root, "services"), i), "name"));

		snprintf(m->targets[i].name, sizeof(m->targets[i].name), "%s",
		    n != NULL ? n : "");
	}
	return 0;
}

/* How many targets the last status shows as their markers say. */
static size_t
targets_done(struct marker_run *m)
{
	const json_t	*svc;
	size_t		 i, done = 0;
	bool		 check_state = m->check_state;

	for (i = 0; m->root != NULL && i < m->ntargets; i++) {
		/* Markers on disk, read again: another may change. */
		target_read(&m->targets[i], m->c->conf.state_dir);
		svc = ctl_service(m->root, m->targets[i].name);
		if (svc != NULL && ctl_reflects(svc, &m->targets[i].expect,
		    check_state, !check_state))
			done++;
		else if (svc != NULL && !check_state &&
		    !m->targets[i].expect.off &&
		    ctl_off_not_by_marker(svc) != NULL)
			done++;		/* reported below */
	}
	return done;
}

/* The timeout: the first service that does not show it, or err. */
static void
not_reflected(const struct marker_run *m, const char *err)
{
	const struct ctl_opts	*o = m->c->o;
	const json_t		*svc;
	char			 what[4 * ERR_MAX], now[ERR_MAX];
	char			 want[4 * REASON_MAX + 64], label[ERR_MAX];
	size_t			 i;

	what[0] = '\0';
	for (i = 0; m->root != NULL && i < m->ntargets; i++) {
		svc = ctl_service(m->root, m->targets[i].name);
		if (svc != NULL && ctl_reflects(svc, &m->targets[i].expect,
		    m->check_state, !m->check_state))
			continue;
		shown(svc, now, sizeof(now));
		wanted(o, &m->targets[i].expect, want, sizeof(want));
		snprintf(what, sizeof(what), "service %s %s, expected %s",
		    cmd_safe(label, sizeof(label),
		    ctl_service_label(m->targets[i].name)), now, want);
		break;
	}
	if (m->root == NULL)
		snprintf(what, sizeof(what), "%s", err);
	cmd_errx("%s %s, but lbagent did not reflect it within %gs: %s",
	    m->verb, m->path, o->timeout_s, what);
	if (o->cmd == CTL_MODE && !o->on && !cmd_has_detail(m->root))
		cmd_errx("automation may stay off by LBAGENT_MODE or mode = "
		    "off; lbagent's detail (the unix socket or the token) "
		    "would say");
}

/*
 * Asks lbagent until every service the marker applies to shows it, or
 * deadline: 0, or -1 said why.
 */
static int
reflected(struct marker_run *m, double deadline)
{
	char			err[ERR_MAX];
	enum ctl_http_result	r;
	bool			first = true;

	for (;;) {
		json_decref(m->root);
		r = cmd_get_status(m->c, &m->root, err, sizeof(err));
		if (r != CTL_HTTP_OK && first) {
			cmd_report_unreachable(m->c, r, err);
			cmd_errx("%s %s, but lbagent was not there to confirm "
			    "it; the marker acts once lbagent runs", m->verb,
			    m->path);
			return -1;
		}
		first = false;
		if (r == CTL_HTTP_OK && m->root == NULL) {
			cmd_errx("%s", err);
			return -1;
		}
		if (m->root != NULL && m->targets == NULL &&
		    targets_make(m) == -1)
			return -1;
		if (m->root != NULL && targets_done(m) == m->ntargets)
			return 0;
		if (cmd_now_s() >= deadline) {
			not_reflected(m, err);
			return -1;
		}
		cmd_sleep_ms(CTL_POLL_MS);
	}
}

/* What the load balancers get now, and what still holds after an off. */
static void
report(const struct marker_run *m)
{
	const struct ctl_opts	*o = m->c->o;
	const json_t		*svc;
	const char		*by;
	char			 label[ERR_MAX], by_[ERR_MAX];
	size_t			 i;

	for (i = 0; i < m->ntargets; i++) {
		svc = ctl_service(m->root, m->targets[i].name);
		/* What the load balancers get, not the plain reply. */
		ctl_format_replies(stdout, svc, ctl_service_label(
		    m->targets[i].name), WIDTH);
		if (!o->on)
			remaining(m->c, &m->targets[i]);
		if (o->cmd == CTL_MODE && !o->on &&
		    !m->targets[i].expect.off &&
		    (by = ctl_off_not_by_marker(svc)) != NULL)
			fprintf(stderr, "lbagentctl: note: %s: automation "
			    "stays off: %s\n", cmd_safe(label, sizeof(label),
			    ctl_service_label(m->targets[i].name)),
			    cmd_safe(by_, sizeof(by_), by));
		if (o->cmd == CTL_MODE && !o->on &&
		    (by = ctl_shadow_by(svc)) != NULL)
			fprintf(stderr, "lbagentctl: note: %s: in shadow mode "
			    "(%s): replies say only what automation would "
			    "reply\n", cmd_safe(label, sizeof(label),
			    ctl_service_label(m->targets[i].name)),
			    cmd_safe(by_, sizeof(by_), by));
	}
}

/*
 * maint on, drain on: whether this node is the last one serving a backend
 * the marker takes it out of, as a load balancer that answered the peer
 * guard's last round showed it (this node UP with a weight above 0, no
 * other server serving). Said with the backend and the load balancer;
 * refused (-1) without --force. lbagent not there, or no [haproxy]
 * sources: nothing known, nothing refused.
 */
static int
last_node(struct ctl *c)
{
	const json_t	*lb, *row, *w;
	json_t		*root;
	char		 err[ERR_MAX], be[4 * 64 + 1], src[4 * 256 + 1];
	size_t		 i, j;
	int		 rv = 0;

	if (cmd_get_status(c, &root, err, sizeof(err)) != CTL_HTTP_OK ||
	    root == NULL)
		return 0;
	json_array_foreach(json_object_get(root, "haproxy"), i, lb) {
		if (!json_is_true(json_object_get(lb, "ok")))
			continue;
		json_array_foreach(json_object_get(lb, "this_node"), j, row) {
			w = json_object_get(row, "weight");
			if ((c->o->service != NULL && strcmp(ctl_json_str(row,
			    "service"), c->o->service) != 0) ||
			    !json_is_true(json_object_get(row, "found")) ||
			    strcmp(ctl_json_str(row, "status"), "UP") != 0 ||
			    !json_is_integer(w) || json_integer_value(w) <= 0 ||
			    !json_is_integer(json_object_get(row,
			    "others_serving")) || json_integer_value(
			    json_object_get(row, "others_serving")) != 0)
				continue;
			cmd_safe(be, sizeof(be), ctl_json_str(row, "backend"));
			cmd_safe(src, sizeof(src), ctl_json_str(lb, "source"));
			if (c->o->force)
				cmd_errx("--force: this node is the last one "
				    "serving backend %s on %s", be, src);
			else {
				cmd_errx("this node is the last one serving "
				    "backend %s on %s (no other server UP with "
				    "a weight there): not %s; --force to do it "
				    "anyway", be, src, c->o->cmd == CTL_MAINT ?
				    "maint" : "draining");
				rv = -1;
			}
		}
	}
	json_decref(root);
	return rv;
}

int
cmd_marker(struct ctl *c)
{
	const struct ctl_opts	*o = c->o;
	enum marker_kind	 kind = o->cmd == CTL_MAINT ? MARKER_MAINT :
				    o->cmd == CTL_DRAIN ? MARKER_DRAIN :
				    MARKER_OFF;
	struct marker_run	 m = { .c = c,
				    .check_state = o->cmd != CTL_MODE };
	char			 path[4096];
	double			 deadline;
	int			 rc = CTL_EXIT_FAIL;

	if (cmd_load_config(c, CMD_NEED) == -1 || cmd_setup_addresses(c) == -1)
		return CTL_EXIT_FAIL;
	if (o->service != NULL && !config_has_service(&c->conf, o->service)) {
		cmd_errx("%s has no [service %s]", c->config_path, o->service);
		return CTL_EXIT_FAIL;
	}
	ctl_marker_path(path, sizeof(path), c->conf.state_dir, o->service,
	    kind);
	m.path = path;
	/* The whole of --wait's timeout, from now. */
	deadline = cmd_now_s() + o->timeout_s;
	if (o->wait && cmd_wait_possible(c, path) == -1)
		return CTL_EXIT_FAIL;
	if (o->on && o->cmd != CTL_MODE && last_node(c) == -1)
		return CTL_EXIT_FAIL;
	if ((m.verb = marker_write(c, kind, path)) == NULL)
		return CTL_EXIT_FAIL;

	/* Wait until every service the marker applies to shows it. */
	if (!o->wait)
		deadline = cmd_now_s() + o->timeout_s;
	if (reflected(&m, deadline) == 0) {
		report(&m);
		rc = CTL_EXIT_OK;
		if (o->wait) {
			fflush(stdout);
			rc = cmd_wait_drained(c, deadline);
		}
	}
	free(m.targets);
	json_decref(m.root);
	return rc;
}
