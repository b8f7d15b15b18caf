/*
 * The HTTP API: a small HTTP/1.1 server of its own on the agent's event
 * loop, for GET and HEAD of a few paths. It owns each connection from
 * accept to close, so that everything a caller can hold is bounded: a
 * total deadline for the request (from accept to its last header, however
 * slowly the bytes come), another for writing the reply, a cap on
 * connections that leaves descriptors to the rest of the process, and a
 * pause, not a spin, when accept() runs out of them. One request per
 * connection: every reply says "Connection: close". TCP callers need the
 * bearer token for the detail of /status; unix-socket callers have it
 * (the socket's permissions are the access control), and only they may
 * POST /reload. Listening sockets whose address stays are kept across
 * reloads, with their connections. One address holds at most a share of
 * the connections; the parser takes only strict HTTP/1.1 (CR LF line ends,
 * no NUL, no folded headers); /metrics and the public /status come from
 * http_cache.c; the API's events run at the loop's lowest priority.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>

#include "lbagent/core/text.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/http_api.h"
#include "lbagent/daemon/http_cache.h"
#include "lbagent/sys/log.h"
#include "lbagent/sys/net.h"
#include "lbagent/sys/token_file.h"

#define HTTP_BACKLOG		64
#define HTTP_DRAIN_MAX		(64 * 1024)	/* read after the reply, at most */
#define HTTP_RESUME_AFTER_MS	100		/* after running out of descriptors */
#define HTTP_MIN_CONNECTIONS	4		/* however low the descriptor limit */
#define HTTP_KEY_MAX		(sizeof("unix:") + 108)
#define HTTP_ACCEPT_BATCH	16		/* per turn of the loop */
#define HTTP_ADDR_KEY		17		/* family and IPv6 bytes */

enum conn_state {
	CONN_REQUEST,	/* reading the request line and headers */
	CONN_FRESH,	/* the detail waits for the peers' round in flight */
	CONN_REPLY,	/* writing the reply */
	CONN_DRAIN,	/* reply written, write side shut: reading to EOF */
};

/* One listening socket. */
struct http_sock {
	struct http_api		*api;
	struct event		*ev;		/* the listening socket's */
	evutil_socket_t		 fd;
	bool			 trusted;	/* unix: the detail for every caller */
	bool			 passed;	/* by systemd: kept across reloads */
	bool			 wanted;	/* during a reload */
	char			 key[HTTP_KEY_MAX];	/* what a reload matches */
	char			*path;		/* our unix socket: unlinked at close */
};

struct http_conn {
	struct http_conn	*prev, *next;	/* http_api::conns */
	struct http_api		*api;
	evutil_socket_t		 fd;
	struct event		 ev;
	enum conn_state		 state;
	bool			 trusted;
	bool			 head;		/* CONN_FRESH: a HEAD request */
	unsigned char		 addr[HTTP_ADDR_KEY];	/* its share's */
	int64_t			 deadline_ms;
	size_t			 inlen, scanned, drained;
	struct evbuffer		*out;
	char			 in[HTTP_MAX_HEADERS_BYTES + 1];
};

struct http_api {
	struct event_base		*base;
	struct agent			*agent;
	const struct status_daemon	*dm;
	char				 token[HTTP_TOKEN_MAX + 1];
	size_t				 token_len;	/* 0: no token */
	uint64_t			 max_conns;	/* [http] max_connections */
	uint64_t			 agent_conns;	/* [agent] max_connections */
	struct http_sock		**socks;
	size_t				 nsocks;
	struct http_conn		*conns;
	size_t				 nconns;
	bool				 paused;
	bool				 starved;	/* out of descriptors; logged once */
	struct event			*resume_ev;
	struct event			*reload_ev;	/* runs reload_cb */
	void				(*reload_cb)(void *);
	void				*reload_arg;
	struct log_limit		 accept_limit;
	struct log_limit		 share_limit;	/* addresses over their share */
	uint64_t			 refused;	/* by the share, since start */
	struct http_cache		 cache;		/* /metrics, the public /status */
};

/* One request, parsed in place in its connection's buffer. */
struct http_req {
	struct http_conn	*c;
	bool			 head;		/* HEAD: the headers only */
	const char		*method;
	const char		*target;
	const char		*auth;		/* Authorization, or NULL */
};

static void	conn_cb(evutil_socket_t, short, void *);

bool
http_api_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char	diff = alen != blen;
	size_t		i;

	/* Over the presented token's bytes, whatever they hold. */
	for (i = 0; i < alen; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)(i < blen ? b[i] : 0);
	return diff == 0 && blen > 0;
}

/*
 * Queues the reply: status line, headers, then the body unless HEAD. On
 * failure (memory) the connection closes without one.
 */
static void
reply(struct http_req *r, int code, const char *reason, const char *ctype,
    const char *body, size_t len, const char *extra)
{
	struct evbuffer	*out = r->c->out;

	if (evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n"
	    "%s\r\n", code, reason, ctype, len, extra ? extra : "") == -1 ||
	    (!r->head && len > 0 && evbuffer_add(out, body, len) == -1))
		evbuffer_drain(out, evbuffer_get_length(out));
}

/*
 * A 200 whose body is a cached document, added by reference, and tail
 * (the API's own lines, or NULL). Out of memory: a 500.
 */
static void
reply_blob(struct http_req *r, const char *ctype, struct http_blob *b,
    const char *tail, size_t tail_len)
{
	struct evbuffer	*out = r->c->out;

	if (b == NULL) {
		reply(r, 500, "Internal Server Error", "text/plain",
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

static void
send_json(struct http_req *r, int code, const char *reason, json_t *o,
    const char *extra)
{
	char	*text = o ? json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS |
		    JSON_REAL_PRECISION(6)) : NULL;
	size_t	 len;

	json_decref(o);
	if (text == NULL) {
		reply(r, 500, "Internal Server Error", "text/plain",
		    "out of memory\n", 14, NULL);
		return;
	}
	len = strlen(text);
	text[len] = '\n';	/* json_dumps' NUL: the body is text and '\n' */
	reply(r, code, reason, "application/json", text, len + 1, extra);
	free(text);
}

static void
send_error(struct http_req *r, int code, const char *reason, const char *msg)
{
	send_json(r, code, reason, json_pack("{s:s}", "error", msg), NULL);
}

/*
 * The caller's standing: 1 detail, 0 public, -1 a wrong token (answered
 * 401: a client that sends one expects the detail).
 */
static int
standing(const struct http_req *r)
{
	const struct http_api	*api = r->c->api;
	const char		*auth = r->auth;

	if (r->c->trusted)
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
send_status(struct http_req *r, bool detail)
{
	struct http_api		*api = r->c->api;
	struct status_clock	 c = { clock_now_ms(), clock_wall_ms() };

	send_json(r, 200, "OK", status_json(api->agent, api->dm, detail, &c),
	    NULL);
}

static void
get_status(struct http_req *r)
{
	struct http_api		*api = r->c->api;
	int			 who = standing(r);

	if (who == -1) {
		send_error(r, 401, "Unauthorized", api->token_len ?
		    "wrong token" : "no token is configured ([http] token_file)");
		return;
	}
	/*
	 * The detail shows the peers and load balancers as a round begun
	 * within an interval found them: without one (rounds stop while the
	 * node is in and healthy), one starts and the reply waits for it.
	 */
	if (who == 1 && !agent_peers_watch(api->agent)) {
		r->c->state = CONN_FRESH;
		r->c->head = r->head;
		return;
	}
	if (who == 0) {
		reply_blob(r, "application/json", http_cache_get(&api->cache,
		    HTTP_DOC_STATUS, api->agent, api->dm), NULL, 0);
		return;
	}
	send_status(r, true);
}

/* The detail a CONN_FRESH connection waited for, as it is now. */
static void
send_fresh(struct http_conn *c)
{
	struct http_req		 r = { c, c->head, NULL, NULL, NULL };

	send_status(&r, true);
}

/*
 * The cached metrics, then the API's own, as they are at this request
 * (they are about the API, and cost a few bytes).
 */
static void
get_metrics(struct http_req *r)
{
	struct http_api		*api = r->c->api;
	struct http_blob	*b = http_cache_get(&api->cache,
				    HTTP_DOC_METRICS, api->agent, api->dm);
	char			 tail[1024];
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
	    "lbagent_http_refused_total %llu\n",
	    (unsigned long long)api->cache.renders[HTTP_DOC_METRICS],
	    (unsigned long long)api->cache.renders[HTTP_DOC_STATUS],
	    (unsigned long long)api->refused);
	if (n < 0 || (size_t)n >= sizeof(tail))
		n = 0;
	reply_blob(r, "text/plain; version=0.0.4; charset=utf-8", b, tail,
	    (size_t)n);
}

static void
get_health(struct http_req *r, const char *name)
{
	const struct agent	*agent = r->c->api->agent;
	int			 i = agent_find_service(agent, name);
	bool			 ok;
	json_t			*o;

	if (i < 0) {
		send_error(r, 404, "Not Found", "no such service");
		return;
	}
	o = status_health(agent, (size_t)i, &ok);
	send_json(r, ok ? 200 : 503, ok ? "OK" : "Service Unavailable", o, NULL);
}

/*
 * POST /reload: the reload SIGHUP runs, from the loop once this reply is
 * queued (never within the request). Only on a unix socket: its
 * permissions are the access control, and the token lets TCP callers
 * read, not act. Requests before the reload runs share it; the answer
 * gives the count of reloads before it, which /status shows grown after.
 */
static void
post_reload(struct http_req *r)
{
	struct http_api	*api = r->c->api;

	if (strcmp(r->method, "POST") != 0) {
		send_json(r, 405, "Method Not Allowed", json_pack("{s:s}",
		    "error", "only POST"), "Allow: POST\r\n");
		return;
	}
	if (!r->c->trusted) {
		send_error(r, 403, "Forbidden", "reload is accepted on a unix "
		    "socket of [http] listen only (or send lbagent SIGHUP)");
		return;
	}
	if (api->reload_cb == NULL) {
		send_error(r, 503, "Service Unavailable", "not ready to reload");
		return;
	}
	event_active(api->reload_ev, EV_TIMEOUT, 0);
	send_json(r, 202, "Accepted", json_pack("{s:s,s:I}", "reload",
	    "scheduled", "reloads", (json_int_t)api->dm->reloads), NULL);
}

static void
route(struct http_req *r)
{
	struct evhttp_uri	*uri;
	const char		*path;
	char			*name;

	if ((uri = evhttp_uri_parse(r->target)) == NULL) {
		send_error(r, 400, "Bad Request", "malformed request target");
		return;
	}
	path = evhttp_uri_get_path(uri);
	if (path == NULL || path[0] == '\0')
		path = "/";
	if (strcmp(path, "/reload") == 0)
		post_reload(r);
	else if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0)
		send_json(r, 405, "Method Not Allowed", json_pack("{s:s}",
		    "error", "only GET and HEAD"), "Allow: GET, HEAD\r\n");
	else if (strcmp(path, "/status") == 0)
		get_status(r);
	else if (strcmp(path, "/metrics") == 0)
		get_metrics(r);
	else if (strcmp(path, "/health") == 0)
		get_health(r, "");
	else if (strncmp(path, "/health/", 8) == 0 && path[8] != '\0') {
		if ((name = evhttp_uridecode(path + 8, 0, NULL)) == NULL)
			reply(r, 500, "Internal Server Error", "text/plain",
			    "out of memory\n", 14, NULL);
		else {
			get_health(r, name);
			free(name);
		}
	} else
		send_error(r, 404, "Not Found",
		    "no such path (try /status, /metrics, /health, POST "
		    "/reload)");
	evhttp_uri_free(uri);
}

/* The next line of the head, its CR LF or LF cut; NULL after the last. */
static char *
next_line(char **p, char *end)
{
	char	*line = *p, *nl;

	if (line >= end)
		return NULL;
	if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
		nl = end;
	*nl = '\0';
	if (nl > line && nl[-1] == '\r')
		nl[-1] = '\0';
	*p = nl + 1;
	return line;
}

static bool
is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static bool
is_token(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return len > 0;
}

/*
 * What is wrong with a head in bytes (NULL: nothing): every line ends in
 * CR LF, and no NUL anywhere. A bare LF or CR, which some servers take as
 * a line end and others do not, is how one request is read as two by a
 * proxy and by us; a NUL would cut a value where a proxy sees more.
 */
static const char *
head_unclean(const char *p, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (p[i] == '\0')
			return "NUL in the request head";
		if (p[i] == '\r' && (i + 1 == len || p[i + 1] != '\n'))
			return "bare CR in the request head (lines end in CR LF)";
		if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
			return "bare LF in the request head (lines end in CR LF)";
	}
	return NULL;
}

/*
 * Parses the head (the first len bytes of c->in, ending in an empty line)
 * and queues the reply. A body is never needed: it is read and dropped
 * after the reply, as is anything else the client sends.
 */
static void
conn_request(struct http_conn *c, size_t len)
{
	struct http_req	 r = { c, false, NULL, NULL, NULL };
	char		*p = c->in, *end = c->in + len, *line, *sp, *colon;
	char		*v, *e;
	const char	*why;
	unsigned long	 clen;

	if ((why = head_unclean(c->in, len)) != NULL) {
		send_error(&r, 400, "Bad Request", why);
		return;
	}
	while (p < end && (*p == '\r' || *p == '\n'))
		p++;
	/* The request line: METHOD SP TARGET SP HTTP/1.x */
	if ((line = next_line(&p, end)) == NULL ||
	    (sp = strchr(line, ' ')) == NULL) {
		send_error(&r, 400, "Bad Request", "malformed request line");
		return;
	}
	*sp = '\0';
	r.method = line;
	r.target = sp + 1;
	r.head = strcmp(r.method, "HEAD") == 0;
	if ((sp = strchr(sp + 1, ' ')) == NULL || sp == r.target ||
	    !is_token(r.method, strlen(r.method)) ||
	    strncmp(sp + 1, "HTTP/1.", 7) != 0 || sp[8] < '0' || sp[8] > '9' ||
	    sp[9] != '\0') {
		send_error(&r, 400, "Bad Request", "malformed request line");
		return;
	}
	*sp = '\0';
	while ((line = next_line(&p, end)) != NULL && line[0] != '\0') {
		if (line[0] == ' ' || line[0] == '\t') {
			send_error(&r, 400, "Bad Request", "obsolete line "
			    "folding (a header line begins with a blank)");
			return;
		}
		if ((colon = strchr(line, ':')) == NULL ||
		    !is_token(line, (size_t)(colon - line))) {
			send_error(&r, 400, "Bad Request", "malformed header");
			return;
		}
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		for (e = v + strlen(v); e > v && (e[-1] == ' ' ||
		    e[-1] == '\t'); e--)
			;
		*e = '\0';
		if (strcasecmp(line, "Authorization") == 0)
			r.auth = v;
		else if (strcasecmp(line, "Content-Length") == 0) {
			if (v[0] < '0' || v[0] > '9' || (errno = 0,
			    clen = strtoul(v, &e, 10), *e != '\0') ||
			    errno == ERANGE) {
				send_error(&r, 400, "Bad Request",
				    "malformed Content-Length");
				return;
			}
			if (clen > HTTP_MAX_BODY_BYTES) {
				send_error(&r, 413, "Payload Too Large",
				    "at most " HTTP_MAX_BODY_TEXT " bytes of body");
				return;
			}
		}
	}
	route(&r);
}

/* (Re)arms the connection's event for `what`, until its deadline. */
static void
conn_wait(struct http_conn *c, short what)
{
	int64_t		left = c->deadline_ms - clock_now_ms();
	struct timeval	tv;

	if (left < 0)
		left = 0;
	tv.tv_sec = (time_t)(left / 1000);
	tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
	event_del(&c->ev);
	event_assign(&c->ev, c->api->base, c->fd, what, conn_cb, c);
	event_priority_set(&c->ev, HTTP_PRIORITY);
	event_add(&c->ev, &tv);
}

static void
api_pause(struct http_api *api)
{
	size_t	i;

	if (api->paused)
		return;
	for (i = 0; i < api->nsocks; i++)
		event_del(api->socks[i]->ev);
	api->paused = true;
}

/*
 * How many connections the API may hold now: [http] max_connections, but
 * never more than the descriptor limit leaves after the agent port's
 * max_connections and HTTP_NOFILE_RESERVE for probes, the state file,
 * listening sockets, libevent and libcurl. Read at each accept, so that a
 * limit lowered while running is honoured.
 */
static size_t
api_cap(const struct http_api *api)
{
	struct rlimit	rl;
	uint64_t	cap = api->max_conns, room, least;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		room = rl.rlim_cur > api->agent_conns + HTTP_NOFILE_RESERVE ?
		    rl.rlim_cur - api->agent_conns - HTTP_NOFILE_RESERVE : 0;
		if (room < cap)
			cap = room;
	}
	least = api->max_conns < HTTP_MIN_CONNECTIONS ? api->max_conns :
	    HTTP_MIN_CONNECTIONS;
	return (size_t)(cap < least ? least : cap);
}

static void
api_resume(struct http_api *api)
{
	size_t	i;

	if (!api->paused || api->nconns >= api_cap(api))
		return;
	for (i = 0; i < api->nsocks; i++)
		event_add(api->socks[i]->ev, NULL);
	api->paused = false;
}

static void
conn_close(struct http_conn *c)
{
	struct http_api	*api = c->api;

	event_del(&c->ev);
	evutil_closesocket(c->fd);
	evbuffer_free(c->out);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		api->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	api->nconns--;
	free(c);
	if (!evtimer_pending(api->resume_ev, NULL))
		api_resume(api);
}

/* Reads and drops what comes after the reply, until EOF or a bound. */
static void
conn_drain(struct http_conn *c)
{
	char	buf[4096];
	ssize_t	n;

	for (;;) {
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			c->drained += (size_t)n;
			if (c->drained > HTTP_DRAIN_MAX)
				break;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			conn_wait(c, EV_READ);
			return;
		}
		break;		/* EOF, or gone */
	}
	conn_close(c);
}

static void
conn_flush(struct http_conn *c)
{
	int	n;

	while (evbuffer_get_length(c->out) > 0) {
		if ((n = evbuffer_write(c->out, c->fd)) > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
			conn_wait(c, EV_WRITE);
			return;
		}
		conn_close(c);		/* reset or gone: nothing to finish */
		return;
	}
	/*
	 * Our FIN ends the reply; reading until the client's keeps unread
	 * input (a body, a pipelined request) from turning into a reset
	 * that could cost it the reply.
	 */
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_DRAIN;
	conn_drain(c);
}

static void	conn_send(struct http_conn *);

/*
 * Until the round ends (round_cb) or HTTP_FRESH_MS pass: then the detail
 * as known, its rounds' age in it.
 */
static void
conn_wait_fresh(struct http_conn *c)
{
	struct timeval	tv = { HTTP_FRESH_MS / 1000,
			    (HTTP_FRESH_MS % 1000) * 1000 };

	c->deadline_ms = clock_now_ms() + HTTP_FRESH_MS;
	event_del(&c->ev);
	evtimer_assign(&c->ev, c->api->base, conn_cb, c);
	event_priority_set(&c->ev, HTTP_PRIORITY);
	evtimer_add(&c->ev, &tv);
}

/* The request is in (or is refused): the reply has its own deadline. */
static void
conn_reply(struct http_conn *c, size_t headlen)
{
	if (headlen > 0)
		conn_request(c, headlen);
	else {
		struct http_req r = { c, false, NULL, NULL, NULL };

		send_error(&r, 431, "Request Header Fields Too Large",
		    "at most " HTTP_MAX_HEADERS_TEXT " bytes of headers");
	}
	if (c->state == CONN_FRESH) {
		conn_wait_fresh(c);
		return;
	}
	conn_send(c);
}

/* The reply is queued (none: out of memory): write it. */
static void
conn_send(struct http_conn *c)
{
	if (evbuffer_get_length(c->out) == 0) {
		conn_close(c);		/* no memory for a reply */
		return;
	}
	c->state = CONN_REPLY;
	c->deadline_ms = clock_now_ms() + HTTP_REPLY_MS;
	conn_flush(c);
}

/* The length of the head once its empty line is in, else 0. */
static size_t
head_length(struct http_conn *c)
{
	size_t	i = c->scanned > 0 ? c->scanned : 1;

	for (; i < c->inlen; i++)
		if (c->in[i] == '\n' && (c->in[i - 1] == '\n' ||
		    (i >= 2 && c->in[i - 1] == '\r' && c->in[i - 2] == '\n')))
			return i + 1;
	c->scanned = c->inlen;
	return 0;
}

static void
conn_read(struct http_conn *c)
{
	size_t	len;
	ssize_t	n;

	while (c->inlen < HTTP_MAX_HEADERS_BYTES) {
		n = recv(c->fd, c->in + c->inlen, HTTP_MAX_HEADERS_BYTES -
		    c->inlen, 0);
		if (n > 0) {
			c->inlen += (size_t)n;
			if ((len = head_length(c)) > 0) {
				conn_reply(c, len);
				return;
			}
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			conn_wait(c, EV_READ);
			return;
		}
		conn_close(c);		/* gone before a whole request */
		return;
	}
	conn_reply(c, 0);		/* the headers are too large */
}

static void
conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	(void)fd;
	if (c->state == CONN_FRESH) {
		/* The round did not end in time: what is known. */
		send_fresh(c);
		conn_send(c);
		return;
	}
	if ((what & EV_TIMEOUT) && clock_now_ms() >= c->deadline_ms) {
		/* Too slow to send its request, or to read the reply. */
		conn_close(c);
		return;
	}
	switch (c->state) {
	case CONN_REQUEST:
		conn_read(c);
		return;
	case CONN_FRESH:
		return;		/* handled above */
	case CONN_REPLY:
		conn_flush(c);
		return;
	case CONN_DRAIN:
		conn_drain(c);
		return;
	}
}

/* The share's key of an address: family and bytes; unix callers are one. */
static void
addr_key(const struct sockaddr *sa, unsigned char key[HTTP_ADDR_KEY])
{
	memset(key, 0, HTTP_ADDR_KEY);
	key[0] = (unsigned char)sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(key + 1, &((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(key + 1, &((const struct sockaddr_in6 *)(const void *)sa)->
		    sin6_addr, 16);
}

/* Connections one address may hold: the cap's share (http_api.h). */
static size_t
addr_max(const struct http_api *api)
{
	size_t	n = api_cap(api) / HTTP_ADDR_SHARE;

	return n < HTTP_ADDR_MIN ? HTTP_ADDR_MIN : n;
}

/* Whether the address of key holds its share already. */
static bool
addr_over_share(const struct http_api *api, const unsigned char *key)
{
	const struct http_conn	*c;
	size_t			 n = 0, max = addr_max(api);

	for (c = api->conns; c != NULL; c = c->next)
		if (memcmp(c->addr, key, HTTP_ADDR_KEY) == 0 && ++n >= max)
			return true;
	return false;
}

/*
 * Over its share: a 503 if the socket takes it at once, and closed. What
 * the client sent already is read first, so that the close is a FIN and
 * not a reset that could cost it the 503.
 */
static void
refuse(struct http_api *api, evutil_socket_t fd, const struct sockaddr *sa)
{
	static const char	 msg[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: 59\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n"
	    "\r\n"
	    "{\"error\": \"this address holds its share of the connections\"}\n";
	char			 buf[HTTP_MAX_HEADERS_BYTES], text[80];
	ssize_t			 n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	n = send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)n;
	evutil_closesocket(fd);
	api->refused++;
	if (sa->sa_family == AF_UNIX)
		snprintf(text, sizeof(text), "a unix-socket caller");
	else if (getnameinfo(sa, sa->sa_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in), text,
	    sizeof(text), NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(text, sizeof(text), "an address");
	log_limited(&api->share_limit, LOG_WARNING, "http API: %s holds %zu "
	    "connections, its share of max_connections: refusing more from it "
	    "(503)", text, addr_max(api));
}

static void
accept_conn(struct http_sock *sock, evutil_socket_t fd,
    const struct sockaddr *sa)
{
	struct http_api		*api = sock->api;
	struct http_conn	*c;
	unsigned char		 key[HTTP_ADDR_KEY];

	if (api->starved) {
		log_notice("http API: accepting again (%zu connections open)",
		    api->nconns);
		api->starved = false;
	}
	/* Fairness: one address cannot take every slot (a /health of others). */
	addr_key(sa, key);
	if (addr_over_share(api, key)) {
		refuse(api, fd, sa);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->out = evbuffer_new()) == NULL) {
		log_limited(&api->accept_limit, LOG_WARNING,
		    "http API: out of memory for a connection");
		free(c);
		evutil_closesocket(fd);
		return;
	}
	c->api = api;
	c->fd = fd;
	memcpy(c->addr, key, sizeof(c->addr));
	c->trusted = sock->trusted;
	c->state = CONN_REQUEST;
	/* The whole request, however slowly it comes, within this. */
	c->deadline_ms = clock_now_ms() + HTTP_REQUEST_MS;
	event_assign(&c->ev, api->base, fd, EV_READ, conn_cb, c);
	c->next = api->conns;
	if (api->conns != NULL)
		api->conns->prev = c;
	api->conns = c;
	if (++api->nconns >= api_cap(api))
		api_pause(api);
	conn_wait(c, EV_READ);
}

/* accept() failed with err. */
static void
accept_failed(struct http_api *api, int err)
{
	struct timeval	 tv = { 0, HTTP_RESUME_AFTER_MS * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Pause instead of spinning on a socket we cannot serve. */
		if (!api->starved)
			log_warnx("http API: accept: %s (%zu connections "
			    "open): pausing, retrying every %d ms",
			    strerror(err), api->nconns, HTTP_RESUME_AFTER_MS);
		api->starved = true;
		api_pause(api);
		event_add(api->resume_ev, &tv);
		return;
	}
	log_limited(&api->accept_limit, LOG_WARNING, "http API: accept: %s",
	    strerror(err));
}

/* A listening socket is readable: a few accepts, then the loop's turn. */
static void
accept_ready(evutil_socket_t lfd, short what, void *arg)
{
	struct http_sock	*sock = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	evutil_socket_t		 fd;
	int			 i;

	(void)what;
	for (i = 0; i < HTTP_ACCEPT_BATCH && !sock->api->paused; i++) {
		len = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				accept_failed(sock->api, errno);
			return;
		}
		if (len == 0)		/* an unnamed unix peer */
			ss.ss_family = AF_UNIX;
		accept_conn(sock, fd, (struct sockaddr *)&ss);
	}
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	api_resume(arg);
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

/*
 * Accepts on fd, a listening socket (bound, and listening when backlog is
 * 0). The API owns fd from now on, failure included, and path (a unix
 * socket to unlink at close) too.
 */
static int
sock_add(struct http_api *api, int fd, int backlog, bool trusted,
    const char *key, char *path)
{
	struct http_sock	*sock, **grown;

	grown = realloc(api->socks, (api->nsocks + 1) * sizeof(*grown));
	if (grown != NULL)
		api->socks = grown;
	if (grown == NULL || (sock = calloc(1, sizeof(*sock))) == NULL) {
		log_errx("http listen %s: out of memory", key);
		goto fail;
	}
	sock->api = api;
	sock->trusted = trusted;
	sock->passed = key[0] == '\0';
	sock->wanted = true;
	sock->path = path;
	snprintf(sock->key, sizeof(sock->key), "%s", key);
	sock->fd = fd;
	if ((backlog > 0 && listen(fd, backlog) == -1) ||
	    evutil_make_socket_nonblocking(fd) == -1 ||
	    (sock->ev = event_new(api->base, fd, EV_READ | EV_PERSIST,
	    accept_ready, sock)) == NULL) {
		log_err("http listen %s", key[0] ? key : "(passed socket)");
		free(sock);
		goto fail;
	}
	event_priority_set(sock->ev, HTTP_PRIORITY);
	if (!api->paused)
		event_add(sock->ev, NULL);
	api->socks[api->nsocks++] = sock;
	return 0;
fail:
	close(fd);
	if (path != NULL) {
		unlink(path);
		free(path);
	}
	return -1;
}

static void
sock_free(struct http_sock *sock)
{
	event_free(sock->ev);
	evutil_closesocket(sock->fd);
	if (sock->path != NULL) {
		unlink(sock->path);
		free(sock->path);
	}
	free(sock);
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
	if ((n = token_file_read(file, api->token, &why)) == -1) {
		log_warnx("[http] token_file %s: %s; the detail of /status is "
		    "only on unix sockets", file, why);
		return;
	}
	api->token_len = (size_t)n;
}

struct bind_ctx {
	struct http_api	*api;
	const char	*key;
};

static int
tcp_bound(int fd, const struct sockaddr *sa, void *arg)
{
	struct bind_ctx	*ctx = arg;
	char		 text[80];

	if (sock_add(ctx->api, fd, HTTP_BACKLOG, false, ctx->key, NULL) == -1)
		return -1;
	net_addr_text(sa, text, sizeof(text));
	log_notice("http API on %s", text);
	return 0;
}

/*
 * Why binding a unix socket at path failed with err, in words with what
 * to do about it.
 */
static const char *
unix_why(int err, const char *path, char *buf, size_t size)
{
	const char	*slash = strrchr(path, '/');
	int		 dirlen = slash == NULL || slash == path ? 1 :
			    (int)(slash - path);

	switch (err) {
	case ENOENT:
		snprintf(buf, size, "directory %.*s does not exist (create it, "
		    "e.g. with RuntimeDirectory= in the unit or tmpfiles.d)",
		    dirlen, path);
		break;
	case EACCES:
	case EPERM:
		snprintf(buf, size, "permission denied (lbagent's user needs "
		    "to write in %.*s)", dirlen, path);
		break;
	case ENOTDIR:
		snprintf(buf, size, "a part of %.*s is not a directory", dirlen,
		    path);
		break;
	case ENAMETOOLONG:
		snprintf(buf, size, "path too long (a unix socket's is at most "
		    "107 bytes)");
		break;
	case EROFS:
		snprintf(buf, size, "%.*s is on a read-only file system",
		    dirlen, path);
		break;
	case EADDRINUSE:
		snprintf(buf, size, "address already in use (is another "
		    "lbagent running? ss -lxp src %s)", path);
		break;
	default:
		snprintf(buf, size, "%s", strerror(err));
		break;
	}
	return buf;
}

/*
 * Whether a process listens on the unix socket sun: a connect that is
 * refused is a socket left by a run that ended. Never waits: a full
 * backlog (EAGAIN) is someone listening too.
 */
static bool
unix_live(const struct sockaddr_un *sun)
{
	int	fd, rc;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return false;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	rc = rc == 0 || errno == EAGAIN || errno == EINPROGRESS;
	close(fd);
	return rc;
}

/*
 * A unix socket at path, mode 0660: a socket left by an earlier run is
 * replaced; one that a running process listens on (another lbagent: the
 * shipped configuration's path is fixed), or anything else there, is an
 * error. where: net_where()'s.
 */
static int
bind_unix(struct http_api *api, const char *path, const char *key,
    const char *where)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	char			*copy, why[320];
	size_t			 len;
	int			 fd, rc, err;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((len = strlen(path)) >= sizeof(sun.sun_path)) {
		log_errx("%s unix:%s: %s", where, path,
		    unix_why(ENAMETOOLONG, path, why, sizeof(why)));
		return -1;
	}
	/*
	 * From here on the copy in sun is the path: gcc's -fsanitize=undefined
	 * at -O2 otherwise sees a NULL path in its format checks (false, but
	 * -Werror).
	 */
	memcpy(sun.sun_path, path, len + 1);
	path = sun.sun_path;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_errx("%s unix:%s: exists and is not a socket (move "
			    "it away or choose another path)", where, path);
			return -1;
		}
		if (unix_live(&sun)) {
			log_errx("%s unix:%s: %s", where, path, unix_why(
			    EADDRINUSE, path, why, sizeof(why)));
			return -1;
		}
		unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		log_err("%s unix:%s: socket", where, path);
		return -1;
	}
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	err = errno;
	umask(old);
	if (rc == -1) {
		log_errx("%s unix:%s: %s", where, path,
		    unix_why(err, path, why, sizeof(why)));
		close(fd);
		return -1;
	}
	if ((copy = strdup(path)) == NULL) {
		log_errx("%s unix:%s: out of memory", where, path);
		close(fd);
		unlink(path);
		return -1;
	}
	if (sock_add(api, fd, HTTP_BACKLOG, true, key, copy) == -1)
		return -1;
	log_notice("http API on unix:%s (detail for every caller there)", path);
	return 0;
}

/* What a reload matches a socket by: unix:PATH, or the address as written. */
static void
listen_key(const struct config_http_listen *l, char key[HTTP_KEY_MAX])
{
	if (l->is_unix)
		snprintf(key, HTTP_KEY_MAX, "unix:%s", l->path);
	else
		snprintf(key, HTTP_KEY_MAX, "%s", l->tcp.text);
}

/*
 * Binds every configured address except those a socket serves already
 * (marked wanted instead); with mark_only, binds nothing.
 */
static int
listen_all(struct http_api *api, const struct config *cfg, bool mark_only)
{
	struct bind_ctx	ctx;
	char		key[HTTP_KEY_MAX], where[PATH_MAX + 96];
	size_t		i, k;
	bool		have;
	int		rc = 0;

	net_where(where, sizeof(where), cfg->path, cfg->http.line, "http");
	for (i = 0; i < cfg->http.count; i++) {
		const struct config_http_listen *l = &cfg->http.addr[i];

		listen_key(l, key);
		for (k = 0, have = false; k < api->nsocks; k++) {
			if (!api->socks[k]->passed &&
			    strcmp(api->socks[k]->key, key) == 0) {
				api->socks[k]->wanted = true;
				have = true;
			}
		}
		if (have || mark_only)
			continue;
		ctx.api = api;
		ctx.key = key;
		if (l->is_unix ? bind_unix(api, l->path, key, where) == -1 :
		    net_bind(&l->tcp, where, tcp_bound, &ctx) == -1)
			rc = -1;
	}
	return rc;
}

static void
api_settings(struct http_api *api, const struct config *cfg)
{
	api->max_conns = cfg->http.max_connections;
	api->agent_conns = cfg->max_connections;
	read_token(api, cfg->http.token_file);
}

/* The peers' round ended: every detail waiting for it is answered. */
static void
round_cb(void *arg)
{
	struct http_api		*api = arg;
	struct http_conn	*c, *next;

	for (c = api->conns; c != NULL; c = next) {
		next = c->next;		/* conn_send may free c */
		if (c->state != CONN_FRESH)
			continue;
		send_fresh(c);
		conn_send(c);
	}
}

struct http_api *
http_api_new(struct event_base *base, const struct config *cfg,
    struct agent *agent, const struct status_daemon *dm,
    const int *fds, size_t nfds)
{
	struct http_api		*api;
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	size_t			 i;
	int			 fd;

	if ((api = calloc(1, sizeof(*api))) == NULL)
		return NULL;
	api->base = base;
	api->agent = agent;
	api->dm = dm;
	agent_on_round(agent, round_cb, api);
	api->accept_limit.interval_ms = LOG_LIMIT_MS;
	api->share_limit.interval_ms = LOG_LIMIT_MS;
	if ((api->resume_ev = evtimer_new(base, resume_cb, api)) == NULL ||
	    (api->reload_ev = event_new(base, -1, 0, reload_fire, api)) ==
	    NULL) {
		log_errx("cannot start the http API");
		goto fail;
	}
	event_priority_set(api->resume_ev, HTTP_PRIORITY);
	event_priority_set(api->reload_ev, HTTP_PRIORITY);
	api_settings(api, cfg);
	if (listen_all(api, cfg, false) == -1)
		goto fail;
	for (i = 0; i < nfds; i++) {
		len = sizeof(ss);
		/* The API closes what it accepts on; main keeps the original. */
		if (getsockname(fds[i], (struct sockaddr *)&ss, &len) == -1 ||
		    (fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) == -1) {
			log_err("http: passed descriptor %d", fds[i]);
			goto fail;
		}
		if (sock_add(api, fd, 0, ss.ss_family == AF_UNIX, "", NULL) == -1)
			goto fail;
		log_notice("http API on the socket systemd passed (%s)",
		    ss.ss_family == AF_UNIX ? "unix: detail for every caller" :
		    "TCP");
	}
	return api;
fail:
	http_api_free(api);
	return NULL;
}

int
http_api_reload(struct http_api *api, const struct config *cfg)
{
	size_t	i, k;
	int	rc;

	api_settings(api, cfg);
	for (i = 0; i < api->nsocks; i++)
		api->socks[i]->wanted = api->socks[i]->passed;
	/* Mark what stays, close what goes (a path may be bound anew), bind. */
	listen_all(api, cfg, true);
	for (i = 0, k = 0; i < api->nsocks; i++) {
		struct http_sock *sock = api->socks[i];

		if (sock->wanted) {
			api->socks[k++] = sock;
			continue;
		}
		log_notice("reload: the http API no longer listens on %s",
		    sock->key);
		sock_free(sock);
	}
	api->nsocks = k;
	rc = listen_all(api, cfg, false);
	/* max_connections may have grown. */
	if (!evtimer_pending(api->resume_ev, NULL))
		api_resume(api);
	return rc;
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
	size_t	i;

	if (api == NULL)
		return;
	agent_on_round(api->agent, NULL, NULL);
	for (i = 0; i < api->nsocks; i++)
		sock_free(api->socks[i]);
	free(api->socks);
	api->socks = NULL;
	api->nsocks = 0;
	api->paused = true;
	while (api->conns != NULL)
		conn_close(api->conns);
	if (api->resume_ev != NULL)
		event_free(api->resume_ev);
	if (api->reload_ev != NULL)
		event_free(api->reload_ev);
	http_cache_clear(&api->cache);
	explicit_bzero(api->token, sizeof(api->token));
	free(api);
}
