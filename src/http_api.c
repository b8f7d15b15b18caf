/*
 * The HTTP API on evhttp. Two servers share one request handler: one for
 * TCP callers (the detail of /status needs the bearer token) and one for
 * unix-socket callers (the socket's permissions are the access control).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "lbagent/clock.h"
#include "lbagent/http_api.h"
#include "lbagent/log.h"
#include "lbagent/net.h"
#include "lbagent/text.h"

#define HTTP_BACKLOG	64

struct http_server {
	struct http_api	*api;
	struct evhttp	*http;
	bool		 trusted;
};

struct http_api {
	const struct agent		*agent;
	const struct status_daemon	*dm;
	struct http_server		 tcp, local;
	char				 token[HTTP_TOKEN_MAX + 1];
	size_t				 token_len;	/* 0: no token */
	char				*unix_paths[CONFIG_MAX_LISTEN];
	size_t				 nunix;
};

bool
http_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char	diff = alen != blen;
	size_t		i;

	/* Over the presented token's bytes, whatever they hold. */
	for (i = 0; i < alen; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)(i < blen ? b[i] : 0);
	return diff == 0 && blen > 0;
}

static void
send_json(struct evhttp_request *req, int code, const char *reason,
    json_t *o)
{
	struct evbuffer	*buf = evbuffer_new();
	char		*text = o ? json_dumps(o, JSON_INDENT(1) |
			    JSON_SORT_KEYS | JSON_REAL_PRECISION(6)) :
			    NULL;

	json_decref(o);
	if (buf == NULL || text == NULL) {
		free(text);
		if (buf != NULL)
			evbuffer_free(buf);
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evbuffer_add(buf, text, strlen(text));
	evbuffer_add(buf, "\n", 1);
	free(text);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, code, reason, buf);
	evbuffer_free(buf);
}

static void
send_error(struct evhttp_request *req, int code, const char *reason,
    const char *msg)
{
	send_json(req, code, reason, json_pack("{s:s}", "error", msg));
}

/*
 * The caller's standing: 1 detail, 0 public, -1 a wrong token (answered
 * 401: a client that sends one expects the detail).
 */
static int
standing(const struct http_server *srv, struct evhttp_request *req)
{
	const struct http_api	*api = srv->api;
	const char		*auth;
	size_t			 len;

	if (srv->trusted)
		return 1;
	auth = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Authorization");
	if (auth == NULL)
		return 0;
	if (strncasecmp(auth, "Bearer ", 7) != 0)	/* schemes ignore case */
		return -1;
	auth += 7;
	len = strlen(auth);
	return http_token_equal(auth, len, api->token, api->token_len) ? 1 : -1;
}

static void
get_status(struct http_server *srv, struct evhttp_request *req)
{
	struct status_clock	c = { clock_now_ms(), clock_wall_ms() };
	int			who = standing(srv, req);

	if (who == -1) {
		send_error(req, 401, "Unauthorized", srv->api->token_len ?
		    "wrong token" : "no token is configured ([http] token_file)");
		return;
	}
	send_json(req, HTTP_OK, "OK", status_json(srv->api->agent,
	    srv->api->dm, who == 1, &c));
}

static void
get_metrics(struct http_server *srv, struct evhttp_request *req)
{
	struct evbuffer	*buf;
	size_t		 len;
	char		*text = status_metrics(srv->api->agent, &len);

	if (text == NULL || (buf = evbuffer_new()) == NULL) {
		free(text);
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evbuffer_add(buf, text, len);
	free(text);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", buf);
	evbuffer_free(buf);
}

static void
get_health(struct http_server *srv, struct evhttp_request *req,
    const char *name)
{
	int	i = agent_find_service(srv->api->agent, name);
	bool	ok;
	json_t	*o;

	if (i < 0) {
		send_error(req, HTTP_NOTFOUND, "Not Found", "no such service");
		return;
	}
	o = status_health(srv->api->agent, (size_t)i, &ok);
	send_json(req, ok ? HTTP_OK : 503, ok ? "OK" : "Service Unavailable",
	    o);
}

static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct http_server	*srv = arg;
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path = uri ? evhttp_uri_get_path(uri) : NULL;
	char			*name;

	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Cache-Control", "no-store");
	if (path == NULL || path[0] == '\0')
		path = "/";
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		send_error(req, 405, "Method Not Allowed", "only GET and HEAD");
		return;
	}
	if (strcmp(path, "/status") == 0)
		get_status(srv, req);
	else if (strcmp(path, "/metrics") == 0)
		get_metrics(srv, req);
	else if (strcmp(path, "/health") == 0)
		get_health(srv, req, "");
	else if (strncmp(path, "/health/", 8) == 0 && path[8] != '\0') {
		if ((name = evhttp_uridecode(path + 8, 0, NULL)) == NULL) {
			evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
			return;
		}
		get_health(srv, req, name);
		free(name);
	} else
		send_error(req, HTTP_NOTFOUND, "Not Found",
		    "no such path (try /status, /metrics, /health)");
}

static int
server_init(struct http_api *api, struct http_server *srv,
    struct event_base *base, bool trusted)
{
	srv->api = api;
	srv->trusted = trusted;
	if ((srv->http = evhttp_new(base)) == NULL)
		return -1;
	evhttp_set_max_headers_size(srv->http, HTTP_MAX_HEADERS_BYTES);
	evhttp_set_max_body_size(srv->http, HTTP_MAX_BODY_BYTES);
	evhttp_set_timeout(srv->http, HTTP_TIMEOUT_S);
	/* Every method evhttp knows reaches request_cb, which says 405. */
	evhttp_set_allowed_methods(srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_gencb(srv->http, request_cb, srv);
	return 0;
}

/* Takes a bound socket: listen, and the TCP server accepts on it. */
static int
accept_on(struct http_server *srv, int fd, const char *what)
{
	if (listen(fd, HTTP_BACKLOG) == -1 ||
	    evhttp_accept_socket(srv->http, fd) == -1) {
		log_err("http listen %s", what);
		close(fd);
		return -1;
	}
	return 0;
}

static int
tcp_bound(int fd, const struct sockaddr *sa, void *arg)
{
	struct http_server	*srv = arg;
	char			 text[80];

	net_addr_text(sa, text, sizeof(text));
	if (accept_on(srv, fd, text) == -1)
		return -1;
	log_notice("http API on %s", text);
	return 0;
}

/*
 * A unix socket at path, mode 0660: a socket left by an earlier run is
 * replaced, anything else there is an error.
 */
static int
bind_unix(struct http_api *api, const char *path)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd, rc;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_errx("http listen unix:%s: exists and is not a socket",
			    path);
			return -1;
		}
		unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		log_err("http listen unix:%s: socket", path);
		return -1;
	}
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == -1) {
		log_err("http listen unix:%s: bind", path);
		close(fd);
		return -1;
	}
	if ((api->unix_paths[api->nunix] = strdup(path)) != NULL)
		api->nunix++;
	if (accept_on(&api->local, fd, path) == -1)
		return -1;
	log_notice("http API on unix:%s (detail for every caller there)", path);
	return 0;
}

ssize_t
http_token_read(const char *path, char *out, const char **why)
{
	char	buf[HTTP_TOKEN_MAX + 2], *start, *end;
	ssize_t	n;
	size_t	len;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		*why = strerror(errno);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n == -1) {
		*why = strerror(errno);
		return -1;
	}
	buf[n] = '\0';
	start = buf + strspn(buf, " \t");
	end = start + strcspn(start, "\r\n");
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	len = (size_t)(end - start);
	if (len == 0)
		*why = "empty";
	else if (len > HTTP_TOKEN_MAX)
		*why = "longer than " HTTP_TOKEN_MAX_TEXT " bytes";
	else {
		memcpy(out, start, len);
		out[len] = '\0';
	}
	explicit_bzero(buf, sizeof(buf));
	return len == 0 || len > HTTP_TOKEN_MAX ? -1 : (ssize_t)len;
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
	if ((n = http_token_read(file, api->token, &why)) == -1) {
		log_warnx("[http] token_file %s: %s; the detail of /status is "
		    "only on unix sockets", file, why);
		return;
	}
	api->token_len = (size_t)n;
}

struct http_api *
http_api_new(struct event_base *base, const struct config *cfg,
    const struct agent *agent, const struct status_daemon *dm,
    const int *fds, size_t nfds)
{
	struct http_api		*api;
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	size_t			 i;
	int			 fd;

	if ((api = calloc(1, sizeof(*api))) == NULL)
		return NULL;
	api->agent = agent;
	api->dm = dm;
	if (server_init(api, &api->tcp, base, false) == -1 ||
	    server_init(api, &api->local, base, true) == -1) {
		log_errx("cannot start the http API");
		goto fail;
	}
	read_token(api, cfg->http.token_file);
	for (i = 0; i < cfg->http.count; i++) {
		const struct config_http_listen *l = &cfg->http.addr[i];

		if (l->is_unix ? bind_unix(api, l->path) == -1 :
		    net_bind(&l->tcp, tcp_bound, &api->tcp) == -1)
			goto fail;
	}
	for (i = 0; i < nfds; i++) {
		len = sizeof(ss);
		/* evhttp closes what it accepts on; main closes the original. */
		if (getsockname(fds[i], (struct sockaddr *)&ss, &len) == -1 ||
		    (fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) == -1) {
			log_err("http: passed descriptor %d", fds[i]);
			goto fail;
		}
		if (evhttp_accept_socket(ss.ss_family == AF_UNIX ?
		    api->local.http : api->tcp.http, fd) == -1) {
			log_err("http: passed descriptor %d", fds[i]);
			close(fd);
			goto fail;
		}
		log_notice("http API on the socket systemd passed (%s)",
		    ss.ss_family == AF_UNIX ? "unix: detail for every caller" :
		    "TCP");
	}
	return api;
fail:
	http_api_free(api);
	return NULL;
}

void
http_api_free(struct http_api *api)
{
	size_t	i;

	if (api == NULL)
		return;
	if (api->tcp.http != NULL)
		evhttp_free(api->tcp.http);
	if (api->local.http != NULL)
		evhttp_free(api->local.http);
	for (i = 0; i < api->nunix; i++) {
		unlink(api->unix_paths[i]);
		free(api->unix_paths[i]);
	}
	explicit_bzero(api->token, sizeof(api->token));
	free(api);
}
