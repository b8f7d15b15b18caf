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

int
cmd_marker(struct ctl *c)
{
	const struct ctl_opts	*o = c->o;
	enum marker_kind	 kind = o->cmd == CTL_MAINT ? MARKER_MAINT :
				    o->cmd == CTL_DRAIN ? MARKER_DRAIN : MARKER_OFF;
	struct target		*targets = NULL;
	size_t			 ntargets = 0, i, done;
	char			 path[4096], err[ERR_MAX], what[4 * ERR_MAX];
	char			 now[ERR_MAX], want[4 * REASON_MAX + 64];
	char			 label[ERR_MAX], by_[ERR_MAX];
	char			 body[MARKER_FILE_MAX];
	const char		*verb;
	json_t			*root = NULL;
	const json_t		*svc;
	enum ctl_http_result	 r;
	double			 deadline;
	bool			 first = true, check_state = o->cmd != CTL_MODE;
	int			 rc = CTL_EXIT_FAIL;

	if (cmd_load_config(c, CMD_NEED) == -1 || cmd_setup_addresses(c) == -1)
		return CTL_EXIT_FAIL;
	if (o->service != NULL && !config_has_service(&c->conf, o->service)) {
		cmd_errx("%s has no [service %s]", c->config_path, o->service);
		return CTL_EXIT_FAIL;
	}
	ctl_marker_path(path, sizeof(path), c->conf.state_dir, o->service,
	    kind);
	/* The whole of --wait's timeout, from now. */
	deadline = cmd_now_s() + o->timeout_s;
	if (o->wait && cmd_wait_possible(c, path) == -1)
		return CTL_EXIT_FAIL;
	if (o->on) {
		const char	*content = o->reason;

		if ((o->for_ms != 0 || o->until != NULL) &&
		    marker_content(o, body, sizeof(body)) == -1)
			return CTL_EXIT_FAIL;
		if (o->for_ms != 0 || o->until != NULL)
			content = body;
		if (ctl_marker_set(c->conf.state_dir, o->service, kind,
		    content, err, sizeof(err)) == -1) {
			cmd_errx("%s", err);
			return CTL_EXIT_FAIL;
		}
		verb = "wrote";
	} else {
		if (ctl_marker_clear(c->conf.state_dir, o->service, kind, err,
		    sizeof(err)) == -1) {
			cmd_errx("%s", err);
			return CTL_EXIT_FAIL;
		}
		verb = "removed";
	}
	printf("%s %s\n", verb, path);
	if (o->on && (o->for_ms != 0 || o->until != NULL))
		printf("it ends at %s\n", body_until(body));
	fflush(stdout);

	/* Wait until every service the marker applies to shows it. */
	if (!o->wait)
		deadline = cmd_now_s() + o->timeout_s;
	for (;;) {
		json_decref(root);
		r = cmd_get_status(c, &root, err, sizeof(err));
		if (r != CTL_HTTP_OK && first) {
			cmd_report_unreachable(c, r, err);
			cmd_errx("%s %s, but lbagent was not there to confirm "
			    "it; the marker acts once lbagent runs", verb,
			    path);
			goto out;
		}
		first = false;
		if (r == CTL_HTTP_OK && root == NULL) {
			cmd_errx("%s", err);
			goto out;
		}
		if (root != NULL && targets == NULL) {
			ntargets = o->service != NULL ? 1 :
			    json_array_size(json_object_get(root, "services"));
			if ((targets = calloc(ntargets ? ntargets : 1,
			    sizeof(*targets))) == NULL) {
				cmd_errx("out of memory");
				goto out;
			}
			for (i = 0; i < ntargets; i++) {
				const char *n = o->service != NULL ?
				    o->service :
				    json_string_value(json_object_get(
				    json_array_get(json_object_get(root,
				    "services"), i), "name"));

				snprintf(targets[i].name,
				    sizeof(targets[i].name), "%s", n != NULL ?
				    n : "");
			}
		}
		done = 0;
		for (i = 0; root != NULL && i < ntargets; i++) {
			/* Markers on disk, read again: another may change. */
			target_read(&targets[i], c->conf.state_dir);
			svc = ctl_service(root, targets[i].name);
			if (svc != NULL && ctl_reflects(svc, &targets[i].expect,
			    check_state, !check_state))
				done++;
			else if (svc != NULL && !check_state &&
			    !targets[i].expect.off &&
			    ctl_off_not_by_marker(svc) != NULL)
				done++;		/* reported below */
		}
		if (root != NULL && done == ntargets)
			break;
		if (cmd_now_s() >= deadline) {
			for (i = 0; root != NULL && i < ntargets; i++) {
				svc = ctl_service(root, targets[i].name);
				if (svc != NULL && ctl_reflects(svc,
				    &targets[i].expect, check_state,
				    !check_state))
					continue;
				shown(svc, now, sizeof(now));
				wanted(o, &targets[i].expect, want,
				    sizeof(want));
				snprintf(what, sizeof(what), "service %s %s, "
				    "expected %s", cmd_safe(label,
				    sizeof(label),
				    ctl_service_label(targets[i].name)), now,
				    want);
				break;
			}
			if (root == NULL)
				snprintf(what, sizeof(what), "%s", err);
			cmd_errx("%s %s, but lbagent did not reflect it within "
			    "%gs: %s", verb, path, o->timeout_s, what);
			if (o->cmd == CTL_MODE && !o->on &&
			    !cmd_has_detail(root))
				cmd_errx("automation may stay off by "
				    "LBAGENT_MODE or mode = off; lbagent's "
				    "detail (the unix socket or the token) "
				    "would say");
			goto out;
		}
		cmd_sleep_ms(CTL_POLL_MS);
	}

	rc = CTL_EXIT_OK;
	for (i = 0; i < ntargets; i++) {
		const char	*by;

		svc = ctl_service(root, targets[i].name);
		/* What the load balancers get, not the plain reply. */
		ctl_format_replies(stdout, svc, ctl_service_label(
		    targets[i].name), WIDTH);
		if (!o->on)
			remaining(c, &targets[i]);
		if (o->cmd == CTL_MODE && !o->on && !targets[i].expect.off &&
		    (by = ctl_off_not_by_marker(svc)) != NULL)
			fprintf(stderr, "lbagentctl: note: %s: automation "
			    "stays off: %s\n", cmd_safe(label, sizeof(label),
			    ctl_service_label(targets[i].name)), cmd_safe(by_,
			    sizeof(by_), by));
		if (o->cmd == CTL_MODE && !o->on &&
		    (by = ctl_shadow_by(svc)) != NULL)
			fprintf(stderr, "lbagentctl: note: %s: in shadow mode "
			    "(%s): replies say only what automation would "
			    "reply\n", cmd_safe(label, sizeof(label),
			    ctl_service_label(targets[i].name)), cmd_safe(by_,
			    sizeof(by_), by));
	}
	if (o->wait) {
		fflush(stdout);
		rc = cmd_wait_drained(c, deadline);
	}
out:
	free(targets);
	json_decref(root);
	return rc;
}
