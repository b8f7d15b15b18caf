/*
 * What lbagentctl's commands share: the configuration they read, the
 * addresses and the token to reach lbagent with, the status document
 * asked of it, and the messages for the operator.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lbagent/ctl/format.h"
#include "lbagent/ctl/term.h"
#include "cmd.h"

/* An error for the operator, on stderr, as "lbagentctl: ...". */
void
cmd_errx(const char *fmt, ...)
{
	va_list	ap;

	fputs("lbagentctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Untrusted text (the daemon's, a peer's, HAProxy's, a file's) for a message. */
const char *
cmd_safe(char *buf, size_t size, const char *s)
{
	ctl_term_text(buf, size, s);
	return buf;
}

double
cmd_now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
cmd_sleep_ms(long ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ------------------------------------------------------ configuration */

/*
 * Loads what lbagentctl needs of the configuration. A file with errors is
 * read for those keys alone (see ctl_conf.c), with a warning.
 */
int
cmd_load_config(struct ctl *c, enum cmd_need need)
{
	char	why[ERR_MAX];

	if (ctl_conf_load(c->config_path, &c->conf, why, sizeof(why)) == -1) {
		if (need == CMD_OPTIONAL)
			return 0;
		cmd_errx("cannot read the configuration: %s", why);
		return -1;
	}
	c->have_conf = true;
	if (c->conf.nerrors > 0 && need != CMD_NEED_QUIET)
		cmd_errx("warning: %s has %zu error%s (see lbagentctl check -f "
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
int
cmd_setup_addresses(struct ctl *c)
{
	const char	*bad, *why;
	int		 got;

	if (c->have_conf)
		c->token_file = c->conf.token_file;
	if (c->o->address != NULL) {
		if (ctl_addr_parse(c->o->address, &c->addrs[0], &why) == -1) {
			cmd_errx("-s '%s': %s", c->o->address, why);
			return -1;
		}
		c->naddrs = 1;
		/*
		 * The token goes to this host only: loopback, or an address
		 * the configuration has lbagent listen on.
		 */
		if (c->token_file != NULL && !ctl_addr_is_local(&c->addrs[0]) &&
		    !configured(c, &c->addrs[0])) {
			cmd_errx("not sending the token to %s (neither "
			    "loopback nor in [http] listen): the status has "
			    "its public part only", c->addrs[0].text);
			c->token_file = NULL;
		}
		return 0;
	}
	got = ctl_addr_list((const char *const *)c->conf.listen,
	    c->conf.nlisten, c->addrs, MAX_ADDRS, &bad, &why);
	if (got == -1) {
		cmd_errx("%s: [http] listen '%s': %s", c->config_path, bad,
		    why);
		return -1;
	}
	if (got == 0) {
		cmd_errx("%s: [http] listen = none: lbagent has no HTTP API to "
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
			cmd_errx("cannot read the token in %s (%s): the status "
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
enum ctl_http_result
cmd_get_status(struct ctl *c, json_t **root, char *err, size_t errsize)
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

		/* The operator sees the other nodes and servers as they are
		 * now: the daemon waits for a round of them (fresh=1). */
		r = ctl_http_get(a, token_for(c, a), "/status?fresh=1",
		    &status, &body, e, sizeof(e));
		if (r == CTL_HTTP_OK && status == 401 && !c->token_refused) {
			/* Wrong token: say so once, go on with the public part. */
			cmd_errx("%s refused the token in %s (HTTP 401): the "
			    "status has its public part only", a->text,
			    c->token_file);
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
		snprintf(err, errsize, "%s answered HTTP %ld%s%s",
		    c->addr->text, status, json_is_string(msg) ? ": " : "",
		    cmd_safe(m, sizeof(m), json_string_value(msg)));
		json_decref(*root);
		*root = NULL;
	} else if (!json_is_object(*root) ||
	    !json_is_array(json_object_get(*root, "services"))) {
		snprintf(err, errsize, "%s: not lbagent's status (%s)",
		    c->addr->text, *root == NULL ? cmd_safe(m, sizeof(m),
		    jerr.text) : "no services");
		json_decref(*root);
		*root = NULL;
	}
	free(body);
	return CTL_HTTP_OK;
}

/* The message for a daemon that could not be asked at all. */
void
cmd_report_unreachable(const struct ctl *c, enum ctl_http_result r,
    const char *err)
{
	char	addrs[ERR_MAX];

	describe_addrs(c, addrs, sizeof(addrs));
	switch (r) {
	case CTL_HTTP_NOT_RUNNING:
		cmd_errx("lbagent is not running (no answer on %s)", addrs);
		break;
	case CTL_HTTP_DENIED:
		cmd_errx("cannot reach lbagent: %s (lbagentctl needs to be "
		    "root, or in the socket's group)", err);
		break;
	case CTL_HTTP_TIMEOUT:
		cmd_errx("lbagent did not answer: %s", err);
		break;
	default:
		cmd_errx("cannot reach lbagent: %s", err);
		break;
	}
}

/* One status document, or an error reported and NULL. */
json_t *
cmd_status_once(struct ctl *c)
{
	char			 err[ERR_MAX];
	json_t			*root;
	enum ctl_http_result	 r;

	if ((r = cmd_get_status(c, &root, err, sizeof(err))) != CTL_HTTP_OK) {
		cmd_report_unreachable(c, r, err);
		return NULL;
	}
	if (root == NULL)
		cmd_errx("%s", err);
	return root;
}

bool
cmd_has_detail(const json_t *root)
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
			    i > 0 ? ", " : "", cmd_safe(name, sizeof(name),
			    ctl_service_label(n ? n : "")));
	}
}

/*
 * The status that status, why and fleet show: asked once, with --service
 * checked against it. cmd and detail_for say, when the command needs the
 * detail, what it reads there. NULL, said why, on failure.
 */
json_t *
cmd_status_for(struct ctl *c, const char *cmd, const char *detail_for)
{
	json_t	*root;
	char	 names[ERR_MAX], asked[ERR_MAX];

	if (cmd_load_config(c, c->o->address != NULL ? CMD_OPTIONAL :
	    CMD_NEED) == -1 || cmd_setup_addresses(c) == -1)
		return NULL;
	if ((root = cmd_status_once(c)) == NULL)
		return NULL;
	if (c->o->service != NULL && ctl_service(root, c->o->service) == NULL) {
		list_services(root, names, sizeof(names));
		cmd_errx("lbagent has no service '%s' (it has %s)",
		    cmd_safe(asked, sizeof(asked), c->o->service), names);
		json_decref(root);
		return NULL;
	}
	if (cmd != NULL && !cmd_has_detail(root)) {
		cmd_errx("%s needs lbagent's detailed status (%s): use its "
		    "unix socket, or set [http] token_file", cmd, detail_for);
		json_decref(root);
		return NULL;
	}
	return root;
}
