/*
 * lbagentctl, the control CLI: its command line, its way to the daemon's
 * HTTP API, the marker files it writes and the text it shows. Everything
 * here but ctl_http_get is pure or touches only files, so that the unit
 * tests can drive it without a daemon.
 */
#ifndef LBAGENT_CTL_H
#define LBAGENT_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "lbagent/config.h"
#include "lbagent/markers.h"

/* Exit statuses. */
#define CTL_EXIT_OK	0
#define CTL_EXIT_FAIL	1	/* daemon missing, timeout, bad config */
#define CTL_EXIT_USAGE	2

#define CTL_TIMEOUT_DEFAULT_S	10
#define CTL_REQUEST_TIMEOUT_MS	2000
#define CTL_POLL_MS		100

/* ---------------------------------------------------------- command line */

enum ctl_cmd {
	CTL_STATUS,
	CTL_MAINT,
	CTL_DRAIN,
	CTL_MODE,
	CTL_CHECK,
	CTL_RELOAD,
	CTL_HELP,	/* -h */
	CTL_VERSION,	/* -V */
};

struct ctl_opts {
	enum ctl_cmd	 cmd;
	const char	*config;	/* -f; NULL: CONFIG_DEFAULT_PATH */
	const char	*address;	/* -s; NULL: the config's [http] listen */
	double		 timeout_s;	/* -t */
	bool		 json;		/* status --json */
	const char	*service;	/* status SERVICE, --service; NULL: all/node */
	bool		 on;		/* maint/drain on, mode off */
	const char	*reason;	/* --reason; NULL: an empty marker */
};

/*
 * Parses argv. Returns 0, or CTL_EXIT_USAGE with a one-line complaint in
 * why. The strings in opts point into argv.
 */
int		 ctl_parse_args(int argc, char *argv[], struct ctl_opts *,
		    char *why, size_t whysize);
void		 ctl_usage(FILE *, bool full);

/* ------------------------------------------------------- configuration */

/*
 * What lbagentctl needs of lbagent's configuration. From config_load()
 * when the file loads; when it has errors (an edit under way, a reload
 * about to fail), from the file's own lines for these keys alone, over
 * config_load()'s defaults, so that status, markers and reload still work.
 */
struct ctl_conf {
	char	*state_dir;
	char	*listen[CONFIG_MAX_LISTEN];	/* [http] listen, as written */
	size_t	 nlisten;
	char	*token_file;			/* NULL: none */
	char	**services;			/* [service NAME] names */
	size_t	 nservices;
	size_t	 nerrors;			/* errors of config_load() */
};

/*
 * Loads path into c. Returns 0 (c->nerrors > 0 when it was read leniently),
 * or -1 when the file cannot be read at all, with why.
 */
int		 ctl_conf_load(const char *path, struct ctl_conf *, char *why,
		    size_t whysize);
void		 ctl_conf_free(struct ctl_conf *);

/* ---------------------------------------------------- reaching the daemon */

/* One address of the HTTP API. */
struct ctl_addr {
	char	text[160];	/* as written, for messages */
	char	url[160];	/* "http://127.0.0.1:9506" ("http://localhost" for unix) */
	char	unix_path[108];	/* "" for TCP */
};

/*
 * Parses an address as -s takes it: "unix:/path", "http://HOST:PORT" or
 * "HOST:PORT" ("[::1]:9506"). A wildcard listen address ("*", 0.0.0.0,
 * [::]) becomes its loopback one. Returns 0, or -1 with a reason in why.
 */
int		 ctl_addr_parse(const char *s, struct ctl_addr *, const char **why);

/* Whether addr stays on this host: a unix socket, 127.0.0.0/8, [::1], localhost. */
bool		 ctl_addr_is_local(const struct ctl_addr *);

/*
 * Orders the [http] listen entries the way lbagentctl tries them: unix
 * sockets first (detail without a token), then TCP in the config's order.
 * Fills at most max addresses; returns how many, or -1 with the entry and
 * why when one cannot be used.
 */
int		 ctl_addr_list(const char *const *entries, size_t n,
		    struct ctl_addr *out, size_t max, const char **bad,
		    const char **why);

enum ctl_http_result {
	CTL_HTTP_OK,		/* an HTTP answer, any status */
	CTL_HTTP_NOT_RUNNING,	/* refused, no socket: nothing listens */
	CTL_HTTP_DENIED,	/* the unix socket exists but is not ours to use */
	CTL_HTTP_TIMEOUT,
	CTL_HTTP_ERROR,
};

/*
 * GET path on addr, with "Authorization: Bearer token" when token is not
 * NULL, within CTL_REQUEST_TIMEOUT_MS, never through a proxy. On
 * CTL_HTTP_OK *status and *body (NUL-terminated, the caller frees) are
 * set; otherwise err says why.
 */
enum ctl_http_result ctl_http_get(const struct ctl_addr *, const char *token,
		    const char *path, long *status, char **body, char *err,
		    size_t errsize);

/*
 * Reads a token file: its first line without surrounding blanks. Returns
 * a string to free, or NULL with errno's words (or "empty") in why.
 */
char		*ctl_read_token(const char *path, const char **why);

/* ------------------------------------------------------------- markers */

/* A marker's path: state_dir/KIND or state_dir/SERVICE/KIND. */
int		 ctl_marker_path(char *buf, size_t size, const char *state_dir,
		    const char *service, enum marker_kind);

/*
 * Creates the marker atomically (a temporary file in the same directory,
 * fsync, rename, then the directory synced), holding reason and a newline,
 * or nothing when reason is NULL; mode 0666 less the umask, as touch
 * makes it. A service's directory is created when missing. Returns 0, or
 * -1 with a message in err.
 */
int		 ctl_marker_set(const char *state_dir, const char *service,
		    enum marker_kind, const char *reason, char *err,
		    size_t errsize);
/* Removes the marker; one that is not there is fine. */
int		 ctl_marker_clear(const char *state_dir, const char *service,
		    enum marker_kind, char *err, size_t errsize);

/*
 * What the daemon should show for one service given the markers that
 * apply to it (the node's, and the service's own; NULL for the default
 * service), read from disk with markers_read() as the daemon reads them.
 */
struct ctl_expect {
	const char	*state;		/* "maint", "drain", or NULL: neither */
	bool		 off;		/* an off marker applies */
};

void		 ctl_expect_from(const struct markers *node,
		    const struct markers *own, struct ctl_expect *);

/*
 * Whether a service object of /status shows e: for the state, exactly that
 * word, or (NULL) neither maint nor drain; for automation, "off" when an
 * off marker applies. With check_automation false only the state counts;
 * with check_state false only automation (and an off that is not by a
 * marker is then left to the caller: see ctl_off_not_by_marker).
 */
bool		 ctl_reflects(const json_t *svc, const struct ctl_expect *e,
		    bool check_state, bool check_automation);

/*
 * With detail: automation stays off though no off marker applies and the
 * daemon lists none (LBAGENT_MODE or the configuration). Returns the
 * daemon's words for it, or NULL.
 */
const char	*ctl_off_not_by_marker(const json_t *svc);

/* ------------------------------------------------------------- status */

/* The service object of that name in a /status document, or NULL. */
const json_t	*ctl_service(const json_t *root, const char *name);

/* "(default)" for "", the name otherwise. */
const char	*ctl_service_label(const char *name);

/*
 * Writes the status document as text in at most width columns: a summary
 * of every service, then, with detail, one section per service (only that
 * one when service is not NULL).
 */
void		 ctl_format_status(FILE *, const json_t *root,
		    const char *service, unsigned width);

#endif
