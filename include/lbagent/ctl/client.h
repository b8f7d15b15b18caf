/*
 * lbagentctl: its way to the daemon's HTTP API (the only part that talks to the
 * daemon; the rest is pure or touches only files, so unit tests drive it
 * without one).
 */
#ifndef LBAGENT_CTL_CLIENT_H
#define LBAGENT_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

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
/* The same with POST and an empty body (POST /reload). */
enum ctl_http_result ctl_http_post(const struct ctl_addr *, const char *token,
		    const char *path, long *status, char **body, char *err,
		    size_t errsize);

/*
 * Reads a token file: its first line without surrounding blanks. Returns
 * a string to free, or NULL with errno's words (or "empty") in why.
 */
char		*ctl_read_token(const char *path, const char **why);

#endif
