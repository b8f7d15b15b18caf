/*
 * lbagentctl: the operator's side of lbagent. It writes the same marker
 * files a touch would, then asks the daemon's HTTP API until the answer
 * shows the change; it shows the status, checks a configuration and asks
 * for a reload. It never talks to HAProxy and never needs the network.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lbagent/ctl/args.h"
#include "lbagent/ctl/client.h"
#include "lbagent/ctl/conf.h"
#include "lbagent/ctl/fleet.h"
#include "lbagent/ctl/format.h"
#include "lbagent/ctl/markers.h"
#include "lbagent/ctl/term.h"
#include "lbagent/ctl/wait.h"
#include "lbagent/core/units.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/markers.h"

#ifndef LBAGENT_VERSION
#define LBAGENT_VERSION "unknown"
#endif

#define WIDTH		80
#define MAX_ADDRS	(CONFIG_MAX_LISTEN + 1)
#define ERR_MAX		512

struct ctl {
	const struct ctl_opts	*o;
	const char		*config_path;
	struct ctl_conf		 conf;
	bool			 have_conf;
	struct ctl_addr		 addrs[MAX_ADDRS];
	size_t			 naddrs;
	const struct ctl_addr	*addr;		/* the one that answered */
	const char		*token_file;
	char			*token;		/* never printed */
	bool			 token_read;
	bool			 token_refused;
};

static void
errx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An error for the operator, on stderr, as "lbagentctl: ...". */
static void
errx_(const char *fmt, ...)
{
	va_list	ap;

	fputs("lbagentctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Untrusted text (the daemon's, a peer's, HAProxy's, a file's) for a message. */
static const char *
safe(char *buf, size_t size, const char *s)
{
	ctl_term_text(buf, size, s);
	return buf;
}

static double
now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ------------------------------------------------------ configuration */

/* How a command takes a configuration it cannot read, or with errors. */
enum need {
	NEED,		/* cannot go on without it */
	NEED_QUIET,	/* reload: the daemon reports the errors itself */
	OPTIONAL,	/* -s given: only the token comes from it */
};

/*
 * Loads what lbagentctl needs of the configuration. A file with errors is
 * read for those keys alone (see ctl_conf.c), with a warning.
 */
static int
load_config(struct ctl *c, enum need need)
{
	char	why[ERR_MAX];

	if (ctl_conf_load(c->config_path, &c->conf, why, sizeof(why)) == -1) {
		if (need == OPTIONAL)
			return 0;
		errx_("cannot read the configuration: %s", why);
		return -1;
	}
	c->have_conf = true;
	if (c->conf.nerrors > 0 && need != NEED_QUIET)
		errx_("warning: %s has %zu error%s (see lbagentctl check -f "
		    "%s); using its state_dir and [http] as written",
		    c->config_path, c->conf.nerrors, c->conf.nerrors == 1 ? "" :
		    "s", c->config_path);
	return 0;
}

/* Whether a is one of the configuration's [http] listen addresses. */
static bool
configured(const struct ctl *c, const struct ctl_addr *a)
{
	struct ctl_addr	 list[MAX_ADDRS];
	const char	*bad, *why;
	int		 n, i;

	n = ctl_addr_list((const char *const *)c->conf.listen, c->conf.nlisten,
	    list, MAX_ADDRS, &bad, &why);
	for (i = 0; i < n; i++)
		if (strcmp(list[i].url, a->url) == 0)
			return true;
	return false;
}

/* Where to find the daemon: -s, else the config's [http] listen. */
static int
setup_addresses(struct ctl *c)
{
	const char	*bad, *why;
	int		 got;

	if (c->have_conf)
		c->token_file = c->conf.token_file;
	if (c->o->address != NULL) {
		if (ctl_addr_parse(c->o->address, &c->addrs[0], &why) == -1) {
			errx_("-s '%s': %s", c->o->address, why);
			return -1;
		}
		c->naddrs = 1;
		/*
		 * The token goes to this host only: loopback, or an address
		 * the configuration has lbagent listen on.
		 */
		if (c->token_file != NULL && !ctl_addr_is_local(&c->addrs[0]) &&
		    !configured(c, &c->addrs[0])) {
			errx_("not sending the token to %s (neither loopback nor "
			    "in [http] listen): the status has its public part "
			    "only", c->addrs[0].text);
			c->token_file = NULL;
		}
		return 0;
	}
	got = ctl_addr_list((const char *const *)c->conf.listen,
	    c->conf.nlisten, c->addrs, MAX_ADDRS, &bad, &why);
	if (got == -1) {
		errx_("%s: [http] listen '%s': %s", c->config_path, bad, why);
		return -1;
	}
	if (got == 0) {
		errx_("%s: [http] listen = none: lbagent has no HTTP API to "
		    "ask (give its address with -s)", c->config_path);
		return -1;
	}
	c->naddrs = (size_t)got;
	return 0;
}

/* The token, read once, for TCP addresses only (the socket needs none). */
static const char *
token_for(struct ctl *c, const struct ctl_addr *a)
{
	const char	*why;

	if (a->unix_path[0] != '\0' || c->token_file == NULL ||
	    c->token_refused)
		return NULL;
	if (!c->token_read) {
		c->token_read = true;
		if ((c->token = ctl_read_token(c->token_file, &why)) == NULL)
			errx_("cannot read the token in %s (%s): the status "
			    "has its public part only", c->token_file, why);
	}
	return c->token;
}

/* ----------------------------------------------------- talking to it */

static void
describe_addrs(const struct ctl *c, char *buf, size_t size)
{
	size_t	i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < c->naddrs && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    i > 0 ? ", " : "", c->addrs[i].text);
}

/*
 * GET /status from the daemon, as JSON. The first call picks the first
 * address that answers. Returns the HTTP outcome; with CTL_HTTP_OK *root
 * is the document (or NULL when it was not one, with err set).
 */
static enum ctl_http_result
get_status(struct ctl *c, json_t **root, char *err, size_t errsize)
{
	enum ctl_http_result	 r = CTL_HTTP_ERROR, first = CTL_HTTP_ERROR;
	char			 e[ERR_MAX], firsterr[ERR_MAX + 256] = "";
	char			 m[256];
	char			*body = NULL;
	const json_t		*msg;
	json_error_t		 jerr;
	long			 status;
	size_t			 i;

	*root = NULL;
	for (i = 0; i < c->naddrs; i++) {
		const struct ctl_addr *a = c->addr != NULL ? c->addr :
		    &c->addrs[i];

		r = ctl_http_get(a, token_for(c, a), "/status", &status,
		    &body, e, sizeof(e));
		if (r == CTL_HTTP_OK && status == 401 && !c->token_refused) {
			/* Wrong token: say so once, go on with the public part. */
			errx_("%s refused the token in %s (HTTP 401): the status "
			    "has its public part only", a->text, c->token_file);
			c->token_refused = true;
			free(body);
			r = ctl_http_get(a, NULL, "/status", &status, &body, e,
			    sizeof(e));
		}
		if (r == CTL_HTTP_OK) {
			c->addr = a;
			break;
		}
		if (i == 0) {
			first = r;
			snprintf(firsterr, sizeof(firsterr), "%s: %s", a->text,
			    e);
		}
		if (c->addr != NULL)
			break;
	}
	if (r != CTL_HTTP_OK) {
		/* Name the preferred address: the others were fallbacks. */
		snprintf(err, errsize, "%s", firsterr);
		return first;
	}
	*root = json_loads(body, 0, &jerr);
	if (status != 200) {
		msg = json_object_get(*root, "error");
		snprintf(err, errsize, "%s answered HTTP %ld%s%s", c->addr->text,
		    status, json_is_string(msg) ? ": " : "",
		    safe(m, sizeof(m), json_string_value(msg)));
		json_decref(*root);
		*root = NULL;
	} else if (!json_is_object(*root) ||
	    !json_is_array(json_object_get(*root, "services"))) {
		snprintf(err, errsize, "%s: not lbagent's status (%s)",
		    c->addr->text, *root == NULL ? safe(m, sizeof(m),
		    jerr.text) : "no services");
		json_decref(*root);
		*root = NULL;
	}
	free(body);
	return CTL_HTTP_OK;
}

/* The message for a daemon that could not be asked at all. */
static void
report_unreachable(const struct ctl *c, enum ctl_http_result r,
    const char *err)
{
	char	addrs[ERR_MAX];

	describe_addrs(c, addrs, sizeof(addrs));
	switch (r) {
	case CTL_HTTP_NOT_RUNNING:
		errx_("lbagent is not running (no answer on %s)", addrs);
		break;
	case CTL_HTTP_DENIED:
		errx_("cannot reach lbagent: %s (lbagentctl needs to be root, "
		    "or in the socket's group)", err);
		break;
	case CTL_HTTP_TIMEOUT:
		errx_("lbagent did not answer: %s", err);
		break;
	default:
		errx_("cannot reach lbagent: %s", err);
		break;
	}
}

/* One status document, or an error reported and NULL. */
static json_t *
status_once(struct ctl *c)
{
	char			 err[ERR_MAX];
	json_t			*root;
	enum ctl_http_result	 r;

	if ((r = get_status(c, &root, err, sizeof(err))) != CTL_HTTP_OK) {
		report_unreachable(c, r, err);
		return NULL;
	}
	if (root == NULL)
		errx_("%s", err);
	return root;
}

static bool
has_detail(const json_t *root)
{
	return json_is_true(json_object_get(root, "detail"));
}

static void
list_services(const json_t *root, char *buf, size_t size)
{
	const json_t	*s;
	size_t		 i, len = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(root, "services"), i, s) {
		const char *n = json_string_value(json_object_get(s, "name"));
		char name[ERR_MAX];

		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
			    i > 0 ? ", " : "", safe(name, sizeof(name),
			    ctl_service_label(n ? n : "")));
	}
}

/* ---------------------------------------------------------- commands */

/*
 * The status that status, why and fleet show: asked once, with --service
 * checked against it. cmd and detail_for say, when the command needs the
 * detail, what it reads there. NULL, said why, on failure.
 */
static json_t *
status_for(struct ctl *c, const char *cmd, const char *detail_for)
{
	json_t	*root;
	char	 names[ERR_MAX], asked[ERR_MAX];

	if (load_config(c, c->o->address != NULL ? OPTIONAL : NEED) == -1 ||
	    setup_addresses(c) == -1)
		return NULL;
	if ((root = status_once(c)) == NULL)
		return NULL;
	if (c->o->service != NULL && ctl_service(root, c->o->service) == NULL) {
		list_services(root, names, sizeof(names));
		errx_("lbagent has no service '%s' (it has %s)",
		    safe(asked, sizeof(asked), c->o->service), names);
		json_decref(root);
		return NULL;
	}
	if (cmd != NULL && !has_detail(root)) {
		errx_("%s needs lbagent's detailed status (%s): use its unix "
		    "socket, or set [http] token_file", cmd, detail_for);
		json_decref(root);
		return NULL;
	}
	return root;
}

static int
cmd_status(struct ctl *c)
{
	json_t		*root;
	const json_t	*svc = NULL;
	int		 rc = CTL_EXIT_OK;

	if ((root = status_for(c, NULL, NULL)) == NULL)
		return CTL_EXIT_FAIL;
	if (c->o->service != NULL)
		svc = ctl_service(root, c->o->service);
	if (c->o->json) {
		if (ctl_term_json(stdout, svc != NULL ? svc : root,
		    JSON_INDENT(2) | JSON_PRESERVE_ORDER) == -1) {
			errx_("out of memory");
			rc = CTL_EXIT_FAIL;
		}
	} else if (c->o->brief)
		ctl_format_short(stdout, root, c->o->service, WIDTH);
	else
		ctl_format_status(stdout, root, c->o->service, WIDTH);
	/* Like systemctl is-active: whether what is shown serves. */
	if (rc == CTL_EXIT_OK)
		rc = ctl_status_exit(root, c->o->service);
	json_decref(root);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		errx_("writing the status: %s", strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

static int
cmd_why(struct ctl *c)
{
	json_t		*root;
	int		 rc;

	if ((root = status_for(c, "why", "the reasons")) == NULL)
		return CTL_EXIT_FAIL;
	ctl_format_why(stdout, root, c->o->service, WIDTH, time(NULL));
	rc = ctl_status_exit(root, c->o->service);
	json_decref(root);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		errx_("writing: %s", strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

/*
 * The fleet from the local lbagent's detail: its rounds already ask every
 * peer (each within its timeout, in parallel), so one request gives one
 * consistent view, whose age the table shows.
 */
static int
cmd_fleet(struct ctl *c)
{
	json_t		*root, *fleet;
	int		 rc = CTL_EXIT_OK;

	if ((root = status_for(c, "fleet", "its peers")) == NULL)
		return CTL_EXIT_FAIL;
	if ((fleet = ctl_fleet_json(root, c->o->service)) == NULL) {
		errx_("out of memory");
		json_decref(root);
		return CTL_EXIT_FAIL;
	}
	if (c->o->json) {
		if (ctl_term_json(stdout, fleet, JSON_INDENT(2) |
		    JSON_PRESERVE_ORDER) == -1) {
			errx_("out of memory");
			rc = CTL_EXIT_FAIL;
		}
	} else
		ctl_fleet_format(stdout, fleet, WIDTH);
	json_decref(fleet);
	json_decref(root);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		errx_("writing: %s", strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

static int
cmd_check(struct ctl *c)
{
	struct config_errors	 errs;
	struct config		*cfg;
	bool			 ok;

	/* Exactly what lbagent -c prints, for the same file. */
	cfg = config_load(c->config_path, &errs);
	config_errors_print(stdout, &errs);
	ok = cfg != NULL;
	if (ok)
		printf("configuration OK\n");
	config_errors_free(&errs);
	config_free(cfg);
	return ok ? CTL_EXIT_OK : CTL_EXIT_FAIL;
}

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
	const char	*reply = json_string_value(json_object_get(svc, "reply"));
	const char	*state = json_string_value(json_object_get(svc, "state"));
	const char	*autom = json_string_value(json_object_get(svc,
			    "automation"));
	char		 a[256], b[32];

	if (svc == NULL)
		snprintf(buf, size, "not answered for by lbagent");
	else if (reply != NULL)
		snprintf(buf, size, "replies \"%s\"", safe(a, sizeof(a), reply));
	else
		snprintf(buf, size, "state %s, automation %s",
		    safe(b, sizeof(b), state != NULL ? state : "?"),
		    safe(a, sizeof(a), autom != NULL ? autom : "?"));
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
		    safe(r, sizeof(r), e->reason));
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
		    safe(label, sizeof(label), ctl_service_label(t->name)),
		    safe(p, sizeof(p), path));
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
		errx_("--until '%s': %s", o->until, why);
		return -1;
	}
	if (o->until == NULL)
		until = now + (int64_t)o->for_ms;
	if (ctl_marker_content(buf, size, o->reason, now, until) == -1) {
		errx_("the marker does not fit in %zu bytes", size);
		return -1;
	}
	return 0;
}

/*
 * --wait needs what only lbagent's detail has, the load balancers' view
 * of this node: without it, refuse before the marker takes the node out.
 */
static int
wait_possible(struct ctl *c, const char *path)
{
	json_t	*root;
	int	 rc = -1;

	if ((root = status_once(c)) == NULL)
		errx_("--wait: lbagent must run to tell when the load balancers "
		    "have drained; %s not written", path);
	else if (!has_detail(root))
		errx_("--wait needs lbagent's detailed status (the load "
		    "balancers' sessions): use its unix socket, or set [http] "
		    "token_file; %s not written", path);
	else if (ctl_drain_nlbs(root) == 0)
		errx_("--wait: lbagent asks no load balancer how it sees this "
		    "node: set [haproxy] sources and backend in %s; %s not "
		    "written", c->config_path, path);
	else
		rc = 0;
	json_decref(root);
	return rc;
}

/* What each load balancer has left, one line each, to fp. */
static void
drain_lines(FILE *fp, const struct ctl_drain_lb *lbs, size_t n)
{
	char	what[512];
	size_t	i;

	for (i = 0; i < n; i++) {
		ctl_drain_describe(&lbs[i], what, sizeof(what));
		fprintf(fp, "  %s: %s\n", lbs[i].source, what);
	}
}

/*
 * After the reply carries the marker: polls the detail until every load
 * balancer answered since, sends the node no new traffic, and has no
 * session and no queue left on it. On a terminal, stderr shows what is
 * left once a second (stdout stays the result, for scripts).
 */
static int
wait_drained(struct ctl *c, double deadline)
{
	struct ctl_drain_lb	*lbs = NULL;
	char			 err[ERR_MAX], took[32], line[1024];
	double			 start = now_s(), sent, shown = start;
	size_t			 n = 0, i;
	json_t			*root = NULL;
	enum ctl_http_result	 r;
	bool			 tty = isatty(STDERR_FILENO), asked = false;
	int			 rc = CTL_EXIT_NOT_DRAINED;

	err[0] = '\0';
	for (;;) {
		sent = now_s();
		json_decref(root);
		r = get_status(c, &root, err, sizeof(err));
		if (r == CTL_HTTP_OK && root != NULL) {
			struct ctl_drain_lb *more;
			size_t want = ctl_drain_nlbs(root);

			if ((more = realloc(lbs, (want ? want : 1) *
			    sizeof(*lbs))) == NULL) {
				errx_("out of memory");
				rc = CTL_EXIT_FAIL;
				goto out;
			}
			lbs = more;
			n = ctl_drain_check(root, c->o->service, sent - start,
			    lbs, want);
			asked = true;
			if (ctl_drain_done(lbs, n))
				break;
		} else if (r != CTL_HTTP_OK)
			asked = false;
		if (now_s() >= deadline) {
			units_format_age((uint64_t)(c->o->timeout_s * 1000), took,
			    sizeof(took));
			if (!asked) {
				errx_("not drained within %s: lbagent did not "
				    "answer: %s", took, err);
				goto out;
			}
			errx_("not drained within %s; left:", took);
			if (n == 0)
				fprintf(stderr, "  no load balancer in lbagent's "
				    "status\n");
			drain_lines(stderr, lbs, n);
			goto out;
		}
		if (tty && now_s() - shown >= 1) {
			shown = now_s();
			units_format_age((uint64_t)((shown - start) * 1000), took,
			    sizeof(took));
			/* A line per load balancer, each within 80 columns. */
			if (!asked)
				snprintf(line, sizeof(line), "waiting %s: lbagent "
				    "did not answer: %s", took, err);
			else
				snprintf(line, sizeof(line), "waiting %s:", took);
			fprintf(stderr, "%.79s\n", line);
			for (i = 0; asked && i < n; i++) {
				char what[512];

				ctl_drain_describe(&lbs[i], what, sizeof(what));
				snprintf(line, sizeof(line), "  %s: %s",
				    lbs[i].source, what);
				fprintf(stderr, "%.79s\n", line);
			}
		}
		sleep_ms(CTL_WAIT_POLL_MS);
	}
	units_format_age((uint64_t)((now_s() - start) * 1000), took,
	    sizeof(took));
	printf("drained: %zu load balancer%s show%s no session and no queue "
	    "left, after %s\n", n, n == 1 ? "" : "s", n == 1 ? "s" : "",
	    took);
	rc = CTL_EXIT_OK;
out:
	free(lbs);
	json_decref(root);
	return rc;
}

static int
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

	if (load_config(c, NEED) == -1 || setup_addresses(c) == -1)
		return CTL_EXIT_FAIL;
	if (o->service != NULL && !config_has_service(&c->conf, o->service)) {
		errx_("%s has no [service %s]", c->config_path, o->service);
		return CTL_EXIT_FAIL;
	}
	ctl_marker_path(path, sizeof(path), c->conf.state_dir, o->service,
	    kind);
	/* The whole of --wait's timeout, from now. */
	deadline = now_s() + o->timeout_s;
	if (o->wait && wait_possible(c, path) == -1)
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
			errx_("%s", err);
			return CTL_EXIT_FAIL;
		}
		verb = "wrote";
	} else {
		if (ctl_marker_clear(c->conf.state_dir, o->service, kind, err,
		    sizeof(err)) == -1) {
			errx_("%s", err);
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
		deadline = now_s() + o->timeout_s;
	for (;;) {
		json_decref(root);
		r = get_status(c, &root, err, sizeof(err));
		if (r != CTL_HTTP_OK && first) {
			report_unreachable(c, r, err);
			errx_("%s %s, but lbagent was not there to confirm it; "
			    "the marker acts once lbagent runs", verb, path);
			goto out;
		}
		first = false;
		if (r == CTL_HTTP_OK && root == NULL) {
			errx_("%s", err);
			goto out;
		}
		if (root != NULL && targets == NULL) {
			ntargets = o->service != NULL ? 1 :
			    json_array_size(json_object_get(root, "services"));
			if ((targets = calloc(ntargets ? ntargets : 1,
			    sizeof(*targets))) == NULL) {
				errx_("out of memory");
				goto out;
			}
			for (i = 0; i < ntargets; i++) {
				const char *n = o->service != NULL ? o->service :
				    json_string_value(json_object_get(
				    json_array_get(json_object_get(root,
				    "services"), i), "name"));

				snprintf(targets[i].name, sizeof(targets[i].name),
				    "%s", n != NULL ? n : "");
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
		if (now_s() >= deadline) {
			for (i = 0; root != NULL && i < ntargets; i++) {
				svc = ctl_service(root, targets[i].name);
				if (svc != NULL && ctl_reflects(svc,
				    &targets[i].expect, check_state,
				    !check_state))
					continue;
				shown(svc, now, sizeof(now));
				wanted(o, &targets[i].expect, want, sizeof(want));
				snprintf(what, sizeof(what), "service %s %s, "
				    "expected %s", safe(label, sizeof(label),
				    ctl_service_label(targets[i].name)), now,
				    want);
				break;
			}
			if (root == NULL)
				snprintf(what, sizeof(what), "%s", err);
			errx_("%s %s, but lbagent did not reflect it within "
			    "%gs: %s", verb, path, o->timeout_s, what);
			if (o->cmd == CTL_MODE && !o->on && !has_detail(root))
				errx_("automation may stay off by LBAGENT_MODE "
				    "or mode = off; lbagent's detail (the unix "
				    "socket or the token) would say");
			goto out;
		}
		sleep_ms(CTL_POLL_MS);
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
			fprintf(stderr, "lbagentctl: note: %s: automation stays "
			    "off: %s\n", safe(label, sizeof(label),
			    ctl_service_label(targets[i].name)), safe(by_,
			    sizeof(by_), by));
		if (o->cmd == CTL_MODE && !o->on &&
		    (by = ctl_shadow_by(svc)) != NULL)
			fprintf(stderr, "lbagentctl: note: %s: in shadow mode "
			    "(%s): replies say only what automation would "
			    "reply\n", safe(label, sizeof(label),
			    ctl_service_label(targets[i].name)), safe(by_,
			    sizeof(by_), by));
	}
	if (o->wait) {
		fflush(stdout);
		rc = wait_drained(c, deadline);
	}
out:
	free(targets);
	json_decref(root);
	return rc;
}

/* Whether pid runs lbagent here: never SIGHUP a stranger (another pid
 * namespace, a stale document). */
static bool
is_lbagent(long pid)
{
	char	path[64], comm[64];
	FILE	*fp;
	bool	 ok = false;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if ((fp = fopen(path, "r")) == NULL)
		return false;
	if (fgets(comm, sizeof(comm), fp) != NULL)
		ok = strncmp(comm, "lbagent", 7) == 0 && strncmp(comm,
		    "lbagentctl", 10) != 0;
	fclose(fp);
	return ok;
}

/*
 * Asks for the reload on c->addr, a unix socket: whoever may use it may
 * reload, even when not allowed to signal lbagent. 1 when lbagent took
 * it, 0 when it has no POST /reload (an older version: signal it), -1
 * when not (reported).
 */
static int
ask_reload(struct ctl *c)
{
	char			 err[ERR_MAX], *body = NULL, m[ERR_MAX];
	const json_t		*msg;
	json_t			*doc;
	long			 status;
	enum ctl_http_result	 r;

	r = ctl_http_post(c->addr, NULL, "/reload", &status, &body, err,
	    sizeof(err));
	if (r != CTL_HTTP_OK) {
		report_unreachable(c, r, err);
		return -1;
	}
	doc = json_loads(body, 0, NULL);
	free(body);
	if (status != 202 && status != 404 && status != 405) {
		msg = json_object_get(doc, "error");
		errx_("%s answered POST /reload with HTTP %ld%s%s",
		    c->addr->text, status, json_is_string(msg) ? ": " : "",
		    safe(m, sizeof(m), json_string_value(msg)));
	}
	json_decref(doc);
	return status == 202 ? 1 : status == 404 || status == 405 ? 0 : -1;
}

static int
cmd_reload(struct ctl *c)
{
	json_t		*root;
	const json_t	*lr, *e;
	double		 deadline, before, after, pid;
	size_t		 i;
	int		 rc = CTL_EXIT_FAIL, asked = 0;
	char		 how[ERR_MAX];

	if (load_config(c, c->o->address != NULL ? OPTIONAL : NEED_QUIET) ==
	    -1 || setup_addresses(c) == -1 || (root = status_once(c)) == NULL)
		return CTL_EXIT_FAIL;
	if (!has_detail(root) || !json_is_number(json_object_get(root,
	    "reloads")) || !json_is_number(json_object_get(root, "pid"))) {
		errx_("reload needs lbagent's detailed status (its pid): use "
		    "its unix socket, or set [http] token_file");
		goto out;
	}
	before = json_number_value(json_object_get(root, "reloads"));
	pid = json_number_value(json_object_get(root, "pid"));
	snprintf(how, sizeof(how), "sent SIGHUP to lbagent (pid %.0f)", pid);
	if (c->addr->unix_path[0] != '\0' && (asked = ask_reload(c)) == -1)
		goto out;
	if (asked)
		snprintf(how, sizeof(how), "asked lbagent on %s to reload",
		    c->addr->text);
	else if (pid < 2 || pid > 1 << 30 || !is_lbagent((long)pid)) {
		errx_("pid %.0f from lbagent's status is not an lbagent process "
		    "here (another pid namespace?): not signalling it", pid);
		goto out;
	} else if (kill((pid_t)pid, SIGHUP) == -1) {
		errx_("cannot signal lbagent (pid %.0f): %s", pid,
		    strerror(errno));
		goto out;
	}
	deadline = now_s() + c->o->timeout_s;
	for (;;) {
		char			err[ERR_MAX];
		enum ctl_http_result	r;

		sleep_ms(CTL_POLL_MS);
		json_decref(root);
		r = get_status(c, &root, err, sizeof(err));
		if (r == CTL_HTTP_OK && root != NULL &&
		    (after = json_number_value(json_object_get(root,
		    "reloads"))) > before)
			break;
		if (now_s() >= deadline) {
			errx_("%s, but it did not report a reload within "
			    "%gs%s%s", how, c->o->timeout_s,
			    root == NULL ? ": " : "", root == NULL ? err :
			    " (its log says why; a version without reload only "
			    "logs the signal)");
			goto out;
		}
	}
	lr = json_object_get(root, "last_reload");
	if (json_is_object(lr) && json_is_true(json_object_get(lr, "ok"))) {
		printf("reloaded %s\n", safe(how, sizeof(how),
		    json_string_value(json_object_get(root, "config"))));
		rc = CTL_EXIT_OK;
		goto out;
	}
	json_array_foreach(json_object_get(lr, "errors"), i, e)
		printf("%s\n", json_string_value(e) != NULL ?
		    safe(how, sizeof(how), json_string_value(e)) : "?");
	errx_("reload failed: lbagent keeps running its previous "
	    "configuration");
out:
	json_decref(root);
	return rc;
}

int
main(int argc, char *argv[])
{
	struct ctl_opts	 o;
	struct ctl	 c;
	char		 why[256];
	int		 rc;

	/* Before anything is written: every byte goes out escaped. */
	if (ctl_term_setup() == -1) {
		perror("lbagentctl: cannot set up the output");
		return CTL_EXIT_FAIL;
	}
	if (ctl_parse_args(argc, argv, &o, why, sizeof(why)) != 0) {
		errx_("%s", why);
		ctl_usage(stderr, false);
		return CTL_EXIT_USAGE;
	}
	switch (o.cmd) {
	case CTL_HELP:
		ctl_usage(stdout, true);
		return CTL_EXIT_OK;
	case CTL_VERSION:
		printf("lbagentctl %s\n", LBAGENT_VERSION);
		return CTL_EXIT_OK;
	default:
		break;
	}
	memset(&c, 0, sizeof(c));
	c.o = &o;
	c.config_path = o.config != NULL ? o.config : CONFIG_DEFAULT_PATH;
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		errx_("cannot start libcurl");
		return CTL_EXIT_FAIL;
	}
	switch (o.cmd) {
	case CTL_STATUS:
		rc = cmd_status(&c);
		break;
	case CTL_MAINT:
	case CTL_DRAIN:
	case CTL_MODE:
		rc = cmd_marker(&c);
		break;
	case CTL_WHY:
		rc = cmd_why(&c);
		break;
	case CTL_FLEET:
		rc = cmd_fleet(&c);
		break;
	case CTL_CHECK:
		rc = cmd_check(&c);
		break;
	case CTL_RELOAD:
		rc = cmd_reload(&c);
		break;
	default:
		rc = CTL_EXIT_USAGE;
		break;
	}
	ctl_conf_free(&c.conf);
	if (c.token != NULL) {
		memset(c.token, 0, strlen(c.token));
		free(c.token);
	}
	curl_global_cleanup();
	return rc;
}
