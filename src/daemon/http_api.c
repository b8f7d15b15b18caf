/*
 * The HTTP API's routes on its own server (http_server.c): GET and HEAD
 * of /status, /metrics and /health[/SERVICE], and POST /reload on unix
 * sockets. TCP callers need the bearer token for the detail of /status;
 * unix-socket callers have it (the socket's permissions are the access
 * control), and only they may POST /reload. /metrics and the public
 * /status come from http_cache.c. What it shows it reads through the
 * agent's view (view.h), never blocking the agent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/http_api.h"
#include "lbagent/daemon/http_cache.h"
#include "lbagent/daemon/view.h"

struct http_api {
	struct http_server		*server;
	struct agent_view		 view;		/* the agent, as it shows */
	const struct status_daemon	*dm;
	char				 token[HTTP_TOKEN_MAX + 1];
	size_t				 token_len;	/* 0: no token */
	struct event			*reload_ev;	/* runs reload_cb */
	void				(*reload_cb)(void *);
	void				*reload_arg;
	struct http_cache		 cache;		/* /metrics, the public /status */
};

/*
 * A 200 whose body is a cached document, added by reference, and tail
 * (the API's own lines, or NULL). Out of memory: a 500.
 */
static void
reply_blob(struct http_req *r, const char *ctype, struct http_blob *b,
    const char *tail, size_t tail_len)
{
	struct evbuffer	*out = http_server_out(r);

	if (b == NULL) {
		http_server_reply(r, 500, "Internal Server Error", "text/plain",
		    "out of memory\n", 14, NULL);
		return;
	}
	if (evbuffer_add_printf(out, "HTTP/1.1 200 OK\r\n"
	    "Content-Type: %s\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n"
	    "\r\n", ctype, b->len + tail_len) == -1 ||
	    (!r->head && (http_cache_add(out, b) == -1 ||
	    (tail_len > 0 && evbuffer_add(out, tail, tail_len) == -1))))
		evbuffer_drain(out, evbuffer_get_length(out));
}

/*
 * The caller's standing: 1 detail, 0 public, -1 a wrong token (answered
 * 401: a client that sends one expects the detail).
 */
static int
standing(const struct http_api *api, const struct http_req *r)
{
	const char		*auth = r->auth;

	if (http_server_trusted(r))
		return 1;
	if (auth == NULL)
		return 0;
	if (strncasecmp(auth, "Bearer ", 7) != 0)	/* schemes ignore case */
		return -1;
	auth += 7;
	return http_api_token_equal(auth, strlen(auth), api->token,
	    api->token_len) ? 1 : -1;
}

/* The status as it is now: with the detail, or the public part. */
static void
send_status(struct http_api *api, struct http_req *r, bool detail)
{
	struct status_clock	 c = { clock_now_ms(), clock_wall_ms() };

	http_server_json(r, 200, "OK", status_json(&api->view, api->dm, detail, &c),
	    NULL);
}

/*
 * ?fresh=1: the detail waits for a whole round begun within the fast
 * interval (lbagentctl asks so); ?fresh=0 or none, it shows the whole view
 * as the last whole round left it. 0 when not asked, 1 asked, -1 wrong.
 */
static int
fresh_asked(const struct evhttp_uri *uri)
{
	struct evkeyvalq	 q;
	const char		*query = evhttp_uri_get_query(uri), *v;
	int			 fresh = 0;

	if (query == NULL)
		return 0;
	/* It initialises q; on a failure, q holds what it took. */
	if (evhttp_parse_query_str(query, &q) == -1)
		fresh = -1;
	else if ((v = evhttp_find_header(&q, "fresh")) != NULL)
		fresh = strcmp(v, "1") == 0 ? 1 : strcmp(v, "0") == 0 ? 0 : -1;
	evhttp_clear_headers(&q);
	return fresh;
}

static void
get_status(struct http_api *api, struct http_req *r,
    const struct evhttp_uri *uri)
{
	int			 who = standing(api, r);
	int			 fresh = fresh_asked(uri);

	if (who == -1) {
		http_server_error(r, 401, "Unauthorized", api->token_len ?
		    "wrong token" : "no token is configured ([http] token_file)");
		return;
	}
	if (fresh == -1) {
		http_server_error(r, 400, "Bad Request", "fresh is 1 or 0");
		return;
	}
	/*
	 * The detail asked fresh shows the peers and load balancers as a
	 * whole round begun within an interval found them: without one
	 * (rounds stop while the node is in and healthy), one starts and the
	 * reply waits for it.
	 */
	if (who == 1 && !api->view.peers_watch(&api->view, fresh == 1)) {
		http_server_wait(r);
		return;
	}
	if (who == 0) {
		reply_blob(r, "application/json", http_cache_get(&api->cache,
		    HTTP_DOC_STATUS, &api->view, api->dm), NULL, 0);
		return;
	}
	send_status(api, r, true);
}

/* The detail a waiting request waited for, as it is now. */
static void
send_fresh(struct http_req *r, void *arg)
{
	send_status(arg, r, true);
}

/*
 * The cached metrics, then the API's own, as they are at this request
 * (they are about the API, and cost a few bytes).
 */
static void
get_metrics(struct http_api *api, struct http_req *r)
{
	struct http_blob	*b = http_cache_get(&api->cache,
				    HTTP_DOC_METRICS, &api->view, api->dm);
	char			 tail[2048];
	int			 n;

	n = snprintf(tail, sizeof(tail),
	    "# HELP lbagent_http_renders_total Renderings of a document the "
	    "HTTP API caches (metrics, status: the public part), once per "
	    "change of what it shows, counters at most once a second.\n"
	    "# TYPE lbagent_http_renders_total counter\n"
	    "lbagent_http_renders_total{document=\"metrics\"} %llu\n"
	    "lbagent_http_renders_total{document=\"status\"} %llu\n"
	    "# HELP lbagent_http_refused_total HTTP API connections closed "
	    "with a 503 because their address held its share of the API's "
	    "connections.\n"
	    "# TYPE lbagent_http_refused_total counter\n"
	    "lbagent_http_refused_total %llu\n"
	    "# HELP lbagent_http_rate_waits_total Times the HTTP API stopped "
	    "accepting TCP connections for a while: more came than [http] "
	    "max_rate a second.\n"
	    "# TYPE lbagent_http_rate_waits_total counter\n"
	    "lbagent_http_rate_waits_total %llu\n",
	    (unsigned long long)api->cache.renders[HTTP_DOC_METRICS],
	    (unsigned long long)api->cache.renders[HTTP_DOC_STATUS],
	    (unsigned long long)http_server_refused(api->server),
	    (unsigned long long)http_server_rate_waits(api->server));
	if (n < 0 || (size_t)n >= sizeof(tail))
		n = 0;
	reply_blob(r, "text/plain; version=0.0.4; charset=utf-8", b, tail,
	    (size_t)n);
}

static void
get_health(struct http_api *api, struct http_req *r, const char *name)
{
	const struct agent_view	*view = &api->view;
	int			 i = view->find_service(view, name);
	bool			 ok, unchecked;
	json_t			*o;

	if (i < 0) {
		http_server_error(r, 404, "Not Found", "no such service");
		return;
	}
	o = status_health(view, (size_t)i, &ok, &unchecked);
	/* Serving with no probe behind it: 203, a 2xx that HAProxy's
	 * http-check and readiness probes take, that `expect status 200`
	 * can refuse. */
	if (unchecked)
		http_server_json(r, 203, "Non-Authoritative Information", o,
		    NULL);
	else
		http_server_json(r, ok ? 200 : 503, ok ? "OK" :
		    "Service Unavailable", o, NULL);
}

/*
 * POST /reload: the reload SIGHUP runs, from the loop once this reply is
 * queued (never within the request). Only on a unix socket: its
 * permissions are the access control, and the token lets TCP callers
 * read, not act. Requests before the reload runs share it; the answer
 * gives the count of reloads before it, which /status shows grown after.
 */
static void
post_reload(struct http_api *api, struct http_req *r)
{

	if (strcmp(r->method, "POST") != 0) {
		http_server_json(r, 405, "Method Not Allowed", json_pack("{s:s}",
		    "error", "only POST"), "Allow: POST\r\n");
		return;
	}
	if (!http_server_trusted(r)) {
		http_server_error(r, 403, "Forbidden", "reload is accepted on a unix "
		    "socket of [http] listen only (or send lbagent SIGHUP)");
		return;
	}
	if (api->reload_cb == NULL) {
		http_server_error(r, 503, "Service Unavailable", "not ready to reload");
		return;
	}
	event_active(api->reload_ev, EV_TIMEOUT, 0);
	http_server_json(r, 202, "Accepted", json_pack("{s:s,s:I}", "reload",
	    "scheduled", "reloads", (json_int_t)api->dm->reloads), NULL);
}

static void
route(struct http_req *r, void *arg)
{
	struct http_api		*api = arg;
	struct evhttp_uri	*uri;
	const char		*path;
	char			*name;

	if ((uri = evhttp_uri_parse(r->target)) == NULL) {
		http_server_error(r, 400, "Bad Request", "malformed request target");
		return;
	}
	path = evhttp_uri_get_path(uri);
	if (path == NULL || path[0] == '\0')
		path = "/";
	if (strcmp(path, "/reload") == 0)
		post_reload(api, r);
	else if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0)
		http_server_json(r, 405, "Method Not Allowed", json_pack("{s:s}",
		    "error", "only GET and HEAD"), "Allow: GET, HEAD\r\n");
	else if (strcmp(path, "/status") == 0)
		get_status(api, r, uri);
	else if (strcmp(path, "/metrics") == 0)
		get_metrics(api, r);
	else if (strcmp(path, "/health") == 0)
		get_health(api, r, "");
	else if (strncmp(path, "/health/", 8) == 0 && path[8] != '\0') {
		if ((name = evhttp_uridecode(path + 8, 0, NULL)) == NULL)
			http_server_reply(r, 500, "Internal Server Error", "text/plain",
			    "out of memory\n", 14, NULL);
		else {
			get_health(api, r, name);
			free(name);
		}
	} else
		http_server_error(r, 404, "Not Found",
		    "no such path (try /status, /metrics, /health, POST "
		    "/reload)");
	evhttp_uri_free(uri);
}

static void
reload_fire(evutil_socket_t fd, short what, void *arg)
{
	struct http_api	*api = arg;

	(void)fd;
	(void)what;
	if (api->reload_cb != NULL)
		api->reload_cb(api->reload_arg);
}

/* The token for the detail; none when unreadable (logged, never shown). */
static void
read_token(struct http_api *api, const char *file)
{
	const char	*why;
	ssize_t		 n;

	api->token_len = 0;
	if (file == NULL)
		return;
	if ((n = http_api_token_read(file, api->token, &why)) == -1) {
		log_warnx("[http] token_file %s: %s; the detail of /status is "
		    "only on unix sockets", file, why);
		return;
	}
	api->token_len = (size_t)n;
}

static void
api_settings(struct http_api *api, const struct config *cfg)
{
	http_server_settings(api->server, cfg->http.max_connections,
	    cfg->http.per_address, cfg->max_connections, cfg->http.max_rate);
	read_token(api, cfg->http.token_file);
}

/* The peers' round ended: every detail waiting for it is answered. */
static void
round_cb(void *arg)
{
	struct http_api	*api = arg;

	http_server_answer_waiting(api->server);
}

struct http_api *
http_api_new(struct event_base *base, const struct config *cfg,
    struct agent *agent, const struct status_daemon *dm,
    const int *fds, size_t nfds)
{
	struct http_server_hooks	 hooks = { route, send_fresh, NULL };
	struct http_api			*api;

	if ((api = calloc(1, sizeof(*api))) == NULL)
		return NULL;
	agent_view(agent, &api->view);
	api->dm = dm;
	api->view.on_round(&api->view, round_cb, api);
	hooks.arg = api;
	if ((api->server = http_server_new(base, &hooks)) == NULL ||
	    (api->reload_ev = event_new(base, -1, 0, reload_fire, api)) ==
	    NULL) {
		log_errx("cannot start the http API");
		goto fail;
	}
	event_priority_set(api->reload_ev, HTTP_PRIORITY);
	api_settings(api, cfg);
	if (http_server_listen(api->server, cfg) == -1 ||
	    http_server_adopt(api->server, fds, nfds) == -1)
		goto fail;
	return api;
fail:
	http_api_free(api);
	return NULL;
}

int
http_api_reload(struct http_api *api, const struct config *cfg)
{
	api_settings(api, cfg);
	return http_server_reload(api->server, cfg);
}

void
http_api_on_reload(struct http_api *api, void (*cb)(void *), void *arg)
{
	api->reload_cb = cb;
	api->reload_arg = arg;
}

void
http_api_free(struct http_api *api)
{
	if (api == NULL)
		return;
	api->view.on_round(&api->view, NULL, NULL);
	http_server_free(api->server);
	if (api->reload_ev != NULL)
		event_free(api->reload_ev);
	http_cache_clear(&api->cache);
	explicit_bzero(api->token, sizeof(api->token));
	free(api);
}
