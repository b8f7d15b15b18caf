/*
 * One document fetched on the event loop. HTTP goes through the shared
 * curl loop. unix and tcp are a non-blocking connect, the request written
 * with MSG_NOSIGNAL (a server gone must not raise SIGPIPE), then reads
 * until the server closes, as HAProxy's Runtime API does after one
 * command; one timer bounds the whole exchange and also carries failures
 * found while starting, so that done always comes from the loop.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "lbagent/core/addr.h"
#include "lbagent/core/redact.h"
#include "lbagent/daemon/fetch.h"

#define FETCH_CHUNK	4096	/* first size of the body buffer */
#define FETCH_ERROR_MAX	96

static const char	usage[] = "expected http://, https://, unix:/PATH or "
			    "tcp:ADDRESS:PORT";

/* Where a unix or tcp exchange stands. */
enum stream_state {
	STREAM_CONNECTING,	/* waiting for the socket to be writable */
	STREAM_SENDING,		/* writing the request */
	STREAM_READING,		/* reading until the server closes */
};

struct fetch {
	fetch_done_fn		 done;
	fetch_piece_fn		 piece;		/* NULL: the body is kept */
	void			*arg;
	size_t			 cap;
	size_t			 got;		/* bytes handed to piece */
	char			*pbuf;		/* a piece read from a socket */
	struct event		*resume;	/* the next turn: another piece */
	bool			 spent;		/* a piece went this turn */
	bool			 paused;	/* libcurl holds the next one */
	bool			 stopped;	/* piece said stop, in error */
	char			*body;		/* room for len bytes and a NUL */
	size_t			 len, room;
	bool			 too_big;
	bool			 no_memory;
	char			 error[FETCH_ERROR_MAX];

	/* FETCH_HTTP */
	struct curl_loop	*curl;
	CURL			*easy;

	/* FETCH_UNIX, FETCH_TCP */
	enum stream_state	 state;
	int			 fd;
	struct event		 io;
	bool			 io_armed;
	struct event		*timer;		/* the whole exchange */
	bool			 failed;	/* the timer says error, not timeout */
	char			*request;
	size_t			 reqlen, sent;
};

static void	stream_io_cb(evutil_socket_t, short, void *);

/* Drops everything the fetch holds, the body included. */
static void
fetch_release(struct fetch *f)
{
	if (f->easy != NULL) {
		curl_loop_remove(f->curl, f->easy);
		curl_easy_cleanup(f->easy);
	}
	if (f->io_armed)
		event_del(&f->io);
	if (f->timer != NULL)
		event_free(f->timer);
	if (f->resume != NULL)
		event_free(f->resume);
	free(f->pbuf);
	if (f->fd != -1)
		close(f->fd);
	free(f->request);
	free(f->body);
	free(f);
}

/* Frees the fetch, then tells its owner: done may start or cancel others. */
static void
fetch_finish(struct fetch *f, bool ok, const char *error)
{
	fetch_done_fn	 done = f->done;
	void		*arg = f->arg;
	char		*body = f->body, why[FETCH_ERROR_MAX];
	size_t		 len = f->len;	/* 0 in pieces: nothing kept */

	snprintf(why, sizeof(why), "%s", ok ? "" : error);
	f->body = NULL;
	fetch_release(f);
	if (ok && body != NULL)
		body[len] = '\0';
	if (ok)
		done(arg, true, body != NULL ? body : "", len, NULL);
	else
		done(arg, false, NULL, 0, why);
	free(body);
}

/* "answer larger than 64 KiB" for the fetch's cap. */
static const char *
too_big_text(struct fetch *f)
{
	size_t	c = f->cap;

	if (c >= 1024 * 1024 && c % (1024 * 1024) == 0)
		snprintf(f->error, sizeof(f->error), "answer larger than "
		    "%zu MiB", c / (1024 * 1024));
	else if (c >= 1024 && c % 1024 == 0)
		snprintf(f->error, sizeof(f->error), "answer larger than "
		    "%zu KiB", c / 1024);
	else
		snprintf(f->error, sizeof(f->error), "answer larger than "
		    "%zu bytes", c);
	return f->error;
}

/* Makes room for n more bytes and a NUL; n must fit under the cap. */
static int
body_reserve(struct fetch *f, size_t n)
{
	size_t	 need = f->len + n + 1, room;
	char	*p;

	if (need <= f->room)
		return 0;
	room = f->room > 0 ? f->room : FETCH_CHUNK;
	while (room < need)
		room = room <= SIZE_MAX / 2 ? 2 * room : need;
	if (room > f->cap + 1)
		room = f->cap + 1;
	if ((p = realloc(f->body, room)) == NULL) {
		f->no_memory = true;
		return -1;
	}
	f->body = p;
	f->room = room;
	return 0;
}

/* What a failed connect(2) or read says, short. */
static const char *
errno_text(struct fetch *f, const char *what, int err)
{
	switch (err) {
	case ECONNREFUSED:
		return "connection refused";
	case ECONNRESET:
		return "connection reset";
	case ENOENT:
		return "no such socket";
	case EACCES:
	case EPERM:
		return "permission denied";
	case EHOSTUNREACH:
		return "host unreachable";
	case ENETUNREACH:
		return "network unreachable";
	case ETIMEDOUT:
		return "timeout";
	case EAGAIN:
		/* A unix socket's backlog is full. */
		return "server busy";
	default:
		snprintf(f->error, sizeof(f->error), "%s: %s", what,
		    strerror(err));
		return f->error;
	}
}

/* Hands a piece on; -1 when it is one too many or the owner says stop. */
static int
give_piece(struct fetch *f, const char *data, size_t len)
{
	const char	*why = "stopped";

	if (len > f->cap - f->got) {
		f->too_big = true;
		return -1;
	}
	f->got += len;
	if (f->piece(f->arg, data, len, &why) == -1) {
		snprintf(f->error, sizeof(f->error), "%s", why);
		f->stopped = true;
		return -1;
	}
	return 0;
}

/*
 * One piece a turn of the loop: libcurl may hand several in one call, the
 * next ones wait (paused) until the loop has run once more.
 */
static size_t
http_piece(struct fetch *f, char *data, size_t len)
{
	struct timeval	 now = { 0, 0 };

	if (f->spent) {
		f->paused = true;
		return CURL_WRITEFUNC_PAUSE;
	}
	if (give_piece(f, data, len) == -1)
		return 0;	/* libcurl stops with CURLE_WRITE_ERROR */
	f->spent = true;
	/* A timer, not event_active: that would run in this same turn. */
	evtimer_add(f->resume, &now);
	return len;
}

/* The loop ran: the next piece may go. */
static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fetch	*f = arg;

	(void)fd;
	(void)what;
	f->spent = false;
	if (f->paused) {
		f->paused = false;
		curl_easy_pause(f->easy, CURLPAUSE_CONT);
	}
}

/* libcurl's CURLOPT_WRITEFUNCTION: keep the body, up to the cap. */
static size_t
http_write(char *data, size_t size, size_t n, void *arg)
{
	struct fetch	*f = arg;
	size_t		 len = size * n;

	if (f->piece != NULL)
		return http_piece(f, data, len);
	if (len > f->cap - f->len) {
		f->too_big = true;
		return 0;	/* libcurl stops with CURLE_WRITE_ERROR */
	}
	if (body_reserve(f, len) == -1)
		return 0;
	memcpy(f->body + f->len, data, len);
	f->len += len;
	return len;
}

/* A failed transfer, short; the URL never appears in it. */
static const char *
http_error(struct fetch *f, CURLcode rc)
{
	long	err = 0;

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		curl_easy_getinfo(f->easy, CURLINFO_OS_ERRNO, &err);
		return errno_text(f, "cannot connect", (int)err);
	case CURLE_OPERATION_TIMEDOUT:
		return "timeout";
	case CURLE_COULDNT_RESOLVE_HOST:
		return "cannot resolve host";
	case CURLE_PEER_FAILED_VERIFICATION:
		return "TLS: certificate verify failed";
	case CURLE_SSL_CONNECT_ERROR:
		return "TLS: handshake failed";
	case CURLE_GOT_NOTHING:
		return "empty reply";
	case CURLE_PARTIAL_FILE:
		return "connection closed mid-answer";
	case CURLE_RECV_ERROR:
		return "receive failed";
	case CURLE_SEND_ERROR:
		return "send failed";
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_UNSUPPORTED_PROTOCOL:	/* an HTTP/0.9 answer */
		return "not an HTTP reply";
	case CURLE_FILESIZE_EXCEEDED:		/* said by Content-Length */
		return too_big_text(f);
	case CURLE_WRITE_ERROR:
		if (f->stopped)
			return f->error;
		if (f->too_big)
			return too_big_text(f);
		if (f->no_memory)
			return "out of memory";
		break;
	case CURLE_OUT_OF_MEMORY:
		return "out of memory";
	default:
		break;
	}
	/* libcurl's static text names no host, user or header. */
	return curl_easy_strerror(rc);
}

static void
http_done(CURL *easy, CURLcode rc, void *arg)
{
	struct fetch	*f = arg;
	long		 status = 0;

	/* A status line came: it says more than what happened after. */
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	if (status != 0 && status != 200) {
		snprintf(f->error, sizeof(f->error), "HTTP %ld", status);
		fetch_finish(f, false, f->error);
	} else if (rc != CURLE_OK)
		fetch_finish(f, false, http_error(f, rc));
	else
		fetch_finish(f, true, NULL);
}

static int
http_start(struct fetch *f, struct event_base *base, struct curl_loop *curl,
    const struct fetch_source *src, uint64_t timeout_ms)
{
	CURL	*e;
	long	 ms = timeout_ms > LONG_MAX ? LONG_MAX : (long)timeout_ms;

	if (f->piece != NULL && (base == NULL || (f->resume = evtimer_new(base,
	    resume_cb, f)) == NULL))
		return -1;
	if (curl == NULL || (f->easy = e = curl_easy_init()) == NULL)
		return -1;
	f->curl = curl;
	if (curl_easy_setopt(e, CURLOPT_URL, src->url) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") !=
	    CURLE_OK ||
#else
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) != CURLE_OK ||
#endif
	    curl_easy_setopt(e, CURLOPT_NOPROXY, "*") != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK)
		return -1;
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ms);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "lbagent/" LBAGENT_VERSION);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
	if (f->piece != NULL)
		curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)FETCH_PIECE_MAX);
	/* A Content-Length over the cap fails before any byte is read. */
	if (f->cap <= INT64_MAX)
		curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
		    (curl_off_t)f->cap);
	return curl_loop_add(curl, e, http_done, f);
}

/* Waits until the socket is ready for `what`. */
static int
stream_wait(struct fetch *f, short what)
{
	if (f->io_armed)
		event_del(&f->io);
	f->io_armed = false;
	if (event_assign(&f->io, event_get_base(f->timer), f->fd, what,
	    stream_io_cb, f) == -1 || event_add(&f->io, NULL) == -1) {
		fetch_finish(f, false, "cannot watch the socket");
		return -1;
	}
	f->io_armed = true;
	return 0;
}

/* Reads one piece, then lets the loop run before the next. */
static void
stream_read_piece(struct fetch *f)
{
	ssize_t	n;

	for (;;) {
		n = recv(f->fd, f->pbuf, FETCH_PIECE_MAX, 0);
		if (n > 0) {
			if (give_piece(f, f->pbuf, (size_t)n) == -1)
				fetch_finish(f, false, f->stopped ? f->error :
				    too_big_text(f));
			else
				stream_wait(f, EV_READ);
			return;
		}
		if (n == 0) {
			if (f->got == 0)
				fetch_finish(f, false, "closed without an "
				    "answer");
			else
				fetch_finish(f, true, NULL);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			stream_wait(f, EV_READ);
		else
			fetch_finish(f, false, errno_text(f, "read", errno));
		return;
	}
}

/* Reads what has come, until the server closes, would block, or errs. */
static void
stream_read(struct fetch *f)
{
	char	 spill, *p;
	size_t	 room;
	ssize_t	 n;

	if (f->piece != NULL) {
		stream_read_piece(f);
		return;
	}
	for (;;) {
		if (f->len < f->cap) {
			if (body_reserve(f, 1) == -1) {
				fetch_finish(f, false, "out of memory");
				return;
			}
			p = f->body + f->len;
			room = f->room - 1 - f->len;
		} else {
			/* Full: one byte more says the answer is too big. */
			p = &spill;
			room = 1;
		}
		n = recv(f->fd, p, room, 0);
		if (n > 0) {
			if (p == &spill) {
				fetch_finish(f, false, too_big_text(f));
				return;
			}
			f->len += (size_t)n;
			continue;
		}
		if (n == 0) {
			if (f->len == 0)
				fetch_finish(f, false, "closed without an "
				    "answer");
			else
				fetch_finish(f, true, NULL);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			stream_wait(f, EV_READ);
			return;
		}
		fetch_finish(f, false, errno_text(f, "read", errno));
		return;
	}
}

static void
stream_send(struct fetch *f)
{
	ssize_t	n;

	while (f->sent < f->reqlen) {
		n = send(f->fd, f->request + f->sent, f->reqlen - f->sent,
		    MSG_NOSIGNAL);
		if (n >= 0) {
			f->sent += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			stream_wait(f, EV_WRITE);
			return;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			fetch_finish(f, false, "connection closed while "
			    "sending");
		else
			fetch_finish(f, false, errno_text(f, "send", errno));
		return;
	}
	f->state = STREAM_READING;
	stream_read(f);
}

static void
stream_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fetch	*f = arg;
	socklen_t	 len = sizeof(int);
	int		 err = 0;

	f->io_armed = false;
	switch (f->state) {
	case STREAM_CONNECTING:
		if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
			err = errno;
		if (err != 0) {
			fetch_finish(f, false, errno_text(f, "cannot connect",
			    err));
			return;
		}
		f->state = STREAM_SENDING;
		stream_send(f);
		break;
	case STREAM_SENDING:
		stream_send(f);
		break;
	case STREAM_READING:
		stream_read(f);
		break;
	}
}

/* The whole exchange took too long, or starting it failed. */
static void
stream_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fetch	*f = arg;

	fetch_finish(f, false, f->failed ? f->error : "timeout");
}

/* Fails the fetch from the loop: done is never called from fetch_start. */
static void
stream_fail_later(struct fetch *f, const char *error)
{
	if (error != f->error)
		snprintf(f->error, sizeof(f->error), "%s", error);
	f->failed = true;
	event_active(f->timer, EV_TIMEOUT, 0);
}

/* The source's address; the parser let only numeric ones through. */
static int
stream_address(const struct fetch_source *src, struct sockaddr_storage *ss,
    socklen_t *sslen)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)ss;
	struct addrinfo		 hints, *ai;

	memset(ss, 0, sizeof(*ss));
	if (src->kind == FETCH_UNIX) {
		if (src->path[0] != '/' ||
		    strnlen(src->path, sizeof(src->path)) >=
		    sizeof(sun->sun_path))
			return -1;
		sun->sun_family = AF_UNIX;
		memcpy(sun->sun_path, src->path, strlen(src->path) + 1);
		*sslen = sizeof(*sun);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	/* Numeric only: getaddrinfo() never blocks on these. */
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(src->host, src->port, &hints, &ai) != 0)
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int
stream_start(struct fetch *f, struct event_base *base,
    const struct fetch_source *src, const char *request,
    uint64_t timeout_ms)
{
	struct sockaddr_storage	ss;
	socklen_t		sslen;
	struct timeval		tv;

	if (base == NULL || stream_address(src, &ss, &sslen) == -1)
		return -1;
	if (f->piece != NULL && (f->pbuf = malloc(FETCH_PIECE_MAX)) == NULL)
		return -1;
	if (request != NULL && *request != '\0') {
		if ((f->request = strdup(request)) == NULL)
			return -1;
		f->reqlen = strlen(request);
	}
	tv.tv_sec = (time_t)(timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
	if ((f->timer = evtimer_new(base, stream_timer_cb, f)) == NULL ||
	    evtimer_add(f->timer, &tv) == -1)
		return -1;
	f->state = STREAM_CONNECTING;
	f->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (f->fd == -1) {
		stream_fail_later(f, errno_text(f, "socket", errno));
		return 0;
	}
	/* Connected at once (unix sockets may be) or not: wait to write. */
	if (connect(f->fd, (struct sockaddr *)&ss, sslen) == -1 &&
	    errno != EINPROGRESS) {
		stream_fail_later(f, errno_text(f, "cannot connect", errno));
		return 0;
	}
	if (event_assign(&f->io, base, f->fd, EV_WRITE, stream_io_cb, f) ==
	    -1 || event_add(&f->io, NULL) == -1)
		return -1;
	f->io_armed = true;
	return 0;
}

static struct fetch *
begin(struct event_base *base, struct curl_loop *curl,
    const struct fetch_source *src, const char *request,
    uint64_t timeout_ms, size_t cap, fetch_piece_fn piece, fetch_done_fn done,
    void *arg)
{
	struct fetch	*f;
	int		 rv = -1;

	if (src == NULL || done == NULL || timeout_ms == 0)
		return NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->fd = -1;
	f->done = done;
	f->piece = piece;
	f->arg = arg;
	/* Room for cap bytes and a NUL must not wrap. */
	f->cap = cap < SIZE_MAX - 1 ? cap : SIZE_MAX - 2;
	switch (src->kind) {
	case FETCH_HTTP:
		rv = http_start(f, base, curl, src, timeout_ms);
		break;
	case FETCH_UNIX:
	case FETCH_TCP:
		rv = stream_start(f, base, src, request, timeout_ms);
		break;
	}
	if (rv == -1) {
		fetch_release(f);
		return NULL;
	}
	return f;
}

struct fetch *
fetch_start(struct event_base *base, struct curl_loop *curl,
    const struct fetch_source *src, const char *request,
    uint64_t timeout_ms, size_t cap, fetch_done_fn done, void *arg)
{
	return begin(base, curl, src, request, timeout_ms, cap, NULL, done, arg);
}

struct fetch *
fetch_start_pieces(struct event_base *base, struct curl_loop *curl,
    const struct fetch_source *src, const char *request,
    uint64_t timeout_ms, size_t cap, fetch_piece_fn piece, fetch_done_fn done,
    void *arg)
{
	if (piece == NULL)
		return NULL;
	return begin(base, curl, src, request, timeout_ms, cap, piece, done,
	    arg);
}

void
fetch_cancel(struct fetch *f)
{
	if (f != NULL)
		fetch_release(f);
}

/* A tcp: address as addr.c reads it, with a numeric host. */
static int
check_tcp(const struct addr *a, struct fetch_source *src, const char **why)
{
	struct addrinfo	hints, *ai;

	memcpy(src->host, a->host, sizeof(src->host));
	snprintf(src->port, sizeof(src->port), "%u", a->port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = a->bracketed ? AF_INET6 : AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(src->host, src->port, &hints, &ai) != 0) {
		*why = "tcp: needs a numeric address";
		return -1;
	}
	freeaddrinfo(ai);
	return 0;
}

/* An http:// or https:// URL with a host, as libcurl reads it. */
static int
parse_http(const char *s, struct fetch_source *src, const char **why)
{
	CURLU	*u;
	char	*scheme = NULL, *host = NULL;
	int	 rv = -1;

	*why = usage;
	if (strlen(s) >= sizeof(src->url)) {
		*why = "the URL is longer than 1023 bytes";
		return -1;
	}
	if ((u = curl_url()) == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (curl_url_set(u, CURLUPART_URL, s, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		goto done;
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    *host == '\0') {
		*why = "the URL has no host";
		goto done;
	}
	memcpy(src->url, s, strlen(s) + 1);
	redact_url(s, src->text, sizeof(src->text));
	rv = 0;
done:
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return rv;
}

int
fetch_source_parse(const char *s, struct fetch_source *src,
    const char **why)
{
	struct addr	a;

	memset(src, 0, sizeof(*src));
	if (strncmp(s, "unix:", 5) != 0 && strncmp(s, "tcp:", 4) != 0) {
		src->kind = FETCH_HTTP;
		return parse_http(s, src, why);
	}
	if (addr_parse(s, &a, why) == -1)
		return -1;
	if (a.kind == ADDR_UNIX) {
		src->kind = FETCH_UNIX;
		memcpy(src->path, a.path, sizeof(src->path));
	} else {
		src->kind = FETCH_TCP;
		if (check_tcp(&a, src, why) == -1)
			return -1;
	}
	snprintf(src->text, sizeof(src->text), "%s", s);
	return 0;
}
