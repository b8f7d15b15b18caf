/*
 * The HTTP API's server (http_server.h): connections from accept to
 * close, their deadlines, the cap and each address's share of it, the
 * pause when accept() runs out of descriptors, and the replies queued on
 * them. The request head's parser is http_server_parse.c's; binding the
 * configured addresses, and keeping them across reloads, is
 * http_server_listen.c's.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/http_server.h"

#include "http_server_impl.h"

static void	conn_cb(evutil_socket_t, short, void *);
static void	conn_send(struct http_conn *);

/*
 * Queues the reply: status line, headers, then the body unless HEAD. On
 * failure (memory) the connection closes without one.
 */
void
http_server_reply(struct http_req *r, int code, const char *reason,
    const char *ctype, const char *body, size_t len, const char *extra)
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

void
http_server_json(struct http_req *r, int code, const char *reason,
    json_t *o, const char *extra)
{
	char	*text = o ? json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS |
		    JSON_REAL_PRECISION(6)) : NULL;
	size_t	 len;

	json_decref(o);
	if (text == NULL) {
		http_server_reply(r, 500, "Internal Server Error", "text/plain",
		    "out of memory\n", 14, NULL);
		return;
	}
	len = strlen(text);
	text[len] = '\n';	/* json_dumps' NUL: the body is text and '\n' */
	http_server_reply(r, code, reason, "application/json", text, len + 1, extra);
	free(text);
}

void
http_server_error(struct http_req *r, int code, const char *reason,
    const char *msg)
{
	http_server_json(r, code, reason, json_pack("{s:s}", "error", msg), NULL);
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
	event_assign(&c->ev, c->srv->base, c->fd, what, conn_cb, c);
	event_priority_set(&c->ev, HTTP_PRIORITY);
	event_add(&c->ev, &tv);
}

static void
server_pause(struct http_server *srv)
{
	if (srv->paused)
		return;
	srv->paused = true;
	http_server_socks_sync(srv);
}

/*
 * How many connections the API may hold now: [http] max_connections, but
 * never more than the descriptor limit leaves after the agent port's
 * max_connections and HTTP_NOFILE_RESERVE for probes, the state file,
 * listening sockets, libevent and libcurl. Read at each accept, so that a
 * limit lowered while running is honoured.
 */
static size_t
server_cap(const struct http_server *srv)
{
	struct rlimit	rl;
	uint64_t	cap = srv->max_conns, room, least;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		room = rl.rlim_cur > srv->agent_conns + HTTP_NOFILE_RESERVE ?
		    rl.rlim_cur - srv->agent_conns - HTTP_NOFILE_RESERVE : 0;
		if (room < cap)
			cap = room;
	}
	least = srv->max_conns < HTTP_MIN_CONNECTIONS ? srv->max_conns :
	    HTTP_MIN_CONNECTIONS;
	return (size_t)(cap < least ? least : cap);
}

static void
server_resume(struct http_server *srv)
{
	if (!srv->paused || srv->nconns >= server_cap(srv))
		return;
	srv->paused = false;
	http_server_socks_sync(srv);
}

static void
conn_close(struct http_conn *c)
{
	struct http_server	*srv = c->srv;

	event_del(&c->ev);
	evutil_closesocket(c->fd);
	evbuffer_free(c->out);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	srv->nconns--;
	free(c);
	if (!evtimer_pending(srv->resume_ev, NULL))
		server_resume(srv);
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
	evtimer_assign(&c->ev, c->srv->base, conn_cb, c);
	event_priority_set(&c->ev, HTTP_PRIORITY);
	evtimer_add(&c->ev, &tv);
}

/* The request is in (or is refused): the reply has its own deadline. */
static void
conn_reply(struct http_conn *c, size_t headlen)
{
	if (headlen > 0)
		http_server_parse(c, headlen);
	else {
		struct http_req r = { c, false, NULL, NULL, NULL };

		http_server_error(&r, 431, "Request Header Fields Too Large",
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

/* The reply a waiting connection waited for, as it is now. */
static void
conn_fresh(struct http_conn *c)
{
	struct http_req	r = { c, c->head, NULL, NULL, NULL };

	c->srv->hooks.fresh(&r, c->srv->hooks.arg);
}

static void
conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	(void)fd;
	if (c->state == CONN_FRESH) {
		/* The round did not end in time: what is known. */
		conn_fresh(c);
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

/*
 * Connections one address may hold: [http] per_address within the cap, or
 * by default the cap's share (http_server.h).
 */
static size_t
addr_max(const struct http_server *srv)
{
	size_t	cap = server_cap(srv), n = cap / HTTP_ADDR_SHARE;

	if (srv->per_address != 0)
		return srv->per_address < cap ? (size_t)srv->per_address : cap;
	return n < HTTP_ADDR_MIN ? HTTP_ADDR_MIN : n;
}

/* Whether the address of key holds its share already. */
static bool
addr_over_share(const struct http_server *srv, const unsigned char *key)
{
	const struct http_conn	*c;
	size_t			 n = 0, max = addr_max(srv);

	for (c = srv->conns; c != NULL; c = c->next)
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
refuse(struct http_server *srv, evutil_socket_t fd, const struct sockaddr *sa)
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
	srv->refused++;
	if (sa->sa_family == AF_UNIX)
		snprintf(text, sizeof(text), "a unix-socket caller");
	else if (getnameinfo(sa, sa->sa_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in), text,
	    sizeof(text), NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(text, sizeof(text), "an address");
	log_limited(&srv->share_limit, LOG_WARNING, "http API: %s holds %zu "
	    "connections, its share of max_connections: refusing more from it "
	    "(503)", text, addr_max(srv));
}

static void
accept_conn(struct http_sock *sock, evutil_socket_t fd,
    const struct sockaddr *sa)
{
	struct http_server		*srv = sock->srv;
	struct http_conn	*c;
	unsigned char		 key[HTTP_ADDR_KEY];

	if (srv->starved) {
		log_notice("http API: accepting again (%zu connections open)",
		    srv->nconns);
		srv->starved = false;
	}
	/* Fairness: one address cannot take every slot (a /health of others). */
	addr_key(sa, key);
	if (addr_over_share(srv, key)) {
		refuse(srv, fd, sa);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->out = evbuffer_new()) == NULL) {
		log_limited(&srv->accept_limit, LOG_WARNING,
		    "http API: out of memory for a connection");
		free(c);
		evutil_closesocket(fd);
		return;
	}
	c->srv = srv;
	c->fd = fd;
	memcpy(c->addr, key, sizeof(c->addr));
	c->trusted = sock->trusted;
	c->state = CONN_REQUEST;
	/* The whole request, however slowly it comes, within this. */
	c->deadline_ms = clock_now_ms() + HTTP_REQUEST_MS;
	event_assign(&c->ev, srv->base, fd, EV_READ, conn_cb, c);
	c->next = srv->conns;
	if (srv->conns != NULL)
		srv->conns->prev = c;
	srv->conns = c;
	if (++srv->nconns >= server_cap(srv))
		server_pause(srv);
	conn_wait(c, EV_READ);
}

/* accept() failed with err. */
static void
accept_failed(struct http_server *srv, int err)
{
	struct timeval	 tv = { 0, HTTP_RESUME_AFTER_MS * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Pause instead of spinning on a socket we cannot serve. */
		if (!srv->starved)
			log_warnx("http API: accept: %s (%zu connections "
			    "open): pausing, retrying every %d ms",
			    strerror(err), srv->nconns, HTTP_RESUME_AFTER_MS);
		srv->starved = true;
		server_pause(srv);
		event_add(srv->resume_ev, &tv);
		return;
	}
	log_limited(&srv->accept_limit, LOG_WARNING, "http API: accept: %s",
	    strerror(err));
}

/*
 * Up to max connections queued on sock accepted; stops when none is, and
 * at [http] max_rate (TCP) unless draining (the socket closes next).
 */
static void
accept_some(struct http_sock *sock, int max, bool drain)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	evutil_socket_t		 fd;
	int			 i;

	for (i = 0; i < max && !sock->srv->paused; i++) {
		if (!drain && !http_server_rate_allows(sock)) {
			http_server_rate_pause(sock->srv);
			return;
		}
		len = sizeof(ss);
		fd = accept4(sock->fd, (struct sockaddr *)&ss, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				accept_failed(sock->srv, errno);
			return;
		}
		if (len == 0)		/* an unnamed unix peer */
			ss.ss_family = AF_UNIX;
		http_server_rate_took(sock);
		accept_conn(sock, fd, (struct sockaddr *)&ss);
	}
}

/* A listening socket is readable: a few accepts, then the loop's turn. */
static void
accept_ready(evutil_socket_t lfd, short what, void *arg)
{
	(void)lfd;
	(void)what;
	accept_some(arg, HTTP_ACCEPT_BATCH, false);
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	server_resume(arg);
}

/*
 * Accepts on fd, a listening socket (bound, and listening when backlog is
 * 0). The server owns fd from now on, failure included, and path (a unix
 * socket to unlink at close) too.
 */
int
http_server_sock_add(struct http_server *srv, int fd, int backlog,
    bool trusted, const char *key, char *path)
{
	struct http_sock	*sock, **grown;

	grown = realloc(srv->socks, (srv->nsocks + 1) * sizeof(*grown));
	if (grown != NULL)
		srv->socks = grown;
	if (grown == NULL || (sock = calloc(1, sizeof(*sock))) == NULL) {
		log_errx("http listen %s: out of memory", key);
		goto fail;
	}
	sock->srv = srv;
	sock->trusted = trusted;
	sock->passed = key[0] == '\0';
	sock->wanted = true;
	sock->path = path;
	snprintf(sock->key, sizeof(sock->key), "%s", key);
	sock->fd = fd;
	if ((backlog > 0 && listen(fd, backlog) == -1) ||
	    evutil_make_socket_nonblocking(fd) == -1 ||
	    (sock->ev = event_new(srv->base, fd, EV_READ | EV_PERSIST,
	    accept_ready, sock)) == NULL) {
		log_err("http listen %s", key[0] ? key : "(passed socket)");
		free(sock);
		goto fail;
	}
	event_priority_set(sock->ev, HTTP_PRIORITY);
	srv->socks[srv->nsocks++] = sock;
	http_server_socks_sync(srv);
	return 0;
fail:
	close(fd);
	if (path != NULL) {
		unlink(path);
		free(path);
	}
	return -1;
}

/*
 * A socket about to close (a reload moved its address): the connections
 * the kernel completed but nobody accepted yet would be reset by the
 * close; they are clients that came in time, so they are served.
 */
void
http_server_sock_drain(struct http_sock *sock)
{
	accept_some(sock, HTTP_BACKLOG, true);
}

void
http_server_sock_free(struct http_sock *sock)
{
	event_free(sock->ev);
	evutil_closesocket(sock->fd);
	if (sock->path != NULL) {
		unlink(sock->path);
		free(sock->path);
	}
	free(sock);
}

struct http_server *
http_server_new(struct event_base *base, const struct http_server_hooks *hooks)
{
	struct http_server	*srv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return NULL;
	srv->base = base;
	srv->hooks = *hooks;
	srv->accept_limit.interval_ms = LOG_LIMIT_MS;
	srv->share_limit.interval_ms = LOG_LIMIT_MS;
	srv->rate_limit.interval_ms = LOG_LIMIT_MS;
	bucket_init(&srv->rate, 0, 1, clock_now_ms());
	if ((srv->resume_ev = evtimer_new(base, resume_cb, srv)) == NULL ||
	    (srv->rate_ev = evtimer_new(base, http_server_rate_cb,
	    srv)) == NULL) {
		if (srv->resume_ev != NULL)
			event_free(srv->resume_ev);
		free(srv);
		return NULL;
	}
	event_priority_set(srv->resume_ev, HTTP_PRIORITY);
	event_priority_set(srv->rate_ev, HTTP_PRIORITY);
	return srv;
}

void
http_server_free(struct http_server *srv)
{
	size_t	i;

	if (srv == NULL)
		return;
	for (i = 0; i < srv->nsocks; i++)
		http_server_sock_free(srv->socks[i]);
	free(srv->socks);
	srv->socks = NULL;
	srv->nsocks = 0;
	srv->paused = true;
	while (srv->conns != NULL)
		conn_close(srv->conns);
	event_free(srv->resume_ev);
	event_free(srv->rate_ev);
	free(srv);
}

void
http_server_settings(struct http_server *srv, uint64_t max_conns,
    uint64_t per_address, uint64_t agent_conns, uint64_t max_rate)
{
	uint64_t	burst = max_rate / HTTP_RATE_BURST_DIV;

	srv->max_conns = max_conns;
	srv->per_address = per_address;
	srv->agent_conns = agent_conns;
	bucket_set(&srv->rate, max_rate, burst, clock_now_ms());
	if (max_rate == 0 && srv->rate_paused) {
		event_del(srv->rate_ev);
		srv->rate_paused = false;
		http_server_socks_sync(srv);
	}
}

/* max_connections may have grown. */
void
http_server_resume(struct http_server *srv)
{
	if (!evtimer_pending(srv->resume_ev, NULL))
		server_resume(srv);
}

void
http_server_answer_waiting(struct http_server *srv)
{
	struct http_conn	*c, *next;

	for (c = srv->conns; c != NULL; c = next) {
		next = c->next;		/* conn_send may free c */
		if (c->state != CONN_FRESH)
			continue;
		conn_fresh(c);
		conn_send(c);
	}
}

uint64_t
http_server_refused(const struct http_server *srv)
{
	return srv->refused;
}

uint64_t
http_server_rate_waits(const struct http_server *srv)
{
	return srv->rate_waits;
}

bool
http_server_trusted(const struct http_req *r)
{
	return r->c->trusted;
}

void
http_server_wait(struct http_req *r)
{
	r->c->state = CONN_FRESH;
	r->c->head = r->head;
}

struct evbuffer *
http_server_out(struct http_req *r)
{
	return r->c->out;
}
