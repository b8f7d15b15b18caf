/*
 * Fetching a document on the loop, against real servers: testhttpd for
 * HTTP, and a small one here for unix and tcp (HAProxy's Runtime API
 * manner: a request line in, an answer out, then close).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/core/hastats.h"
#include "lbagent/sys/curl_loop.h"
#include "lbagent/daemon/fetch.h"
#include "testhttpd.h"
#include "testutil.h"

#define KIB	1024

/* ---- a stream server: one connection at a time, on a thread ---- */

enum ts_mode {
	TS_ANSWER,	/* read a request line, send the answer, close */
	TS_HTTP,	/* the same with a request head ("\r\n\r\n") */
	TS_SPEAK,	/* send the answer at once, close */
	TS_SILENT,	/* read a request line, wait for the client to go */
	TS_EMPTY,	/* read a request line, close without a byte */
};

struct ts_server {
	int		 lfd;
	int		 stop[2];	/* closing stop[1] ends the thread */
	pthread_t	 thread;
	enum ts_mode	 mode;
	const char	*answer;
	size_t		 answer_len;
	pthread_mutex_t	 mu;
	char		 request[512];	/* the last one */
	unsigned	 conns;		/* accepted */
	unsigned	 gone;		/* silent ones the client closed */
};

/* Waits for fd to be readable; false when stopping. */
static bool
ts_wait(struct ts_server *ts, int fd)
{
	struct pollfd	pfd[2] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = ts->stop[0], .events = POLLIN },
	};

	while (poll(pfd, 2, -1) == -1)
		if (errno != EINTR)
			return false;
	return pfd[1].revents == 0;
}

static void
ts_serve(struct ts_server *ts, int fd)
{
	const char	*until = ts->mode == TS_HTTP ? "\r\n\r\n" : "\n";
	char		 buf[512], c;
	size_t		 len = 0, off = 0;
	ssize_t		 n;

	/* The request, up to its end. */
	while (ts->mode != TS_SPEAK && len + 1 < sizeof(buf) &&
	    ts_wait(ts, fd) &&
	    (n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0) {
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, until) != NULL)
			break;
	}
	buf[len] = '\0';
	pthread_mutex_lock(&ts->mu);
	memcpy(ts->request, buf, len + 1);
	pthread_mutex_unlock(&ts->mu);
	switch (ts->mode) {
	case TS_ANSWER:
	case TS_HTTP:
	case TS_SPEAK:
		while (off < ts->answer_len && (n = send(fd, ts->answer + off,
		    ts->answer_len - off, MSG_NOSIGNAL)) > 0)
			off += (size_t)n;
		break;
	case TS_SILENT:
		/* Until the client closes (or we stop). */
		while (ts_wait(ts, fd)) {
			if (recv(fd, &c, 1, 0) <= 0) {
				pthread_mutex_lock(&ts->mu);
				ts->gone++;
				pthread_mutex_unlock(&ts->mu);
				break;
			}
		}
		break;
	case TS_EMPTY:
		break;
	}
}

static void *
ts_main(void *arg)
{
	struct ts_server	*ts = arg;
	int			 fd;

	while (ts_wait(ts, ts->lfd)) {
		if ((fd = accept(ts->lfd, NULL, NULL)) == -1)
			continue;
		pthread_mutex_lock(&ts->mu);
		ts->conns++;
		pthread_mutex_unlock(&ts->mu);
		ts_serve(ts, fd);
		close(fd);
	}
	return NULL;
}

static struct ts_server *
ts_start(int lfd, enum ts_mode mode, const char *answer, size_t len)
{
	struct ts_server	*ts;

	ck_assert_ptr_nonnull(ts = calloc(1, sizeof(*ts)));
	ts->lfd = lfd;
	ts->mode = mode;
	ts->answer = answer;
	ts->answer_len = answer != NULL ? len : 0;
	ck_assert_int_eq(listen(lfd, 16), 0);
	ck_assert_int_eq(pipe(ts->stop), 0);
	pthread_mutex_init(&ts->mu, NULL);
	ck_assert_int_eq(pthread_create(&ts->thread, NULL, ts_main, ts), 0);
	return ts;
}

/* A server on a unix socket at path. */
static struct ts_server *
ts_unix(const char *path, enum ts_mode mode, const char *answer, size_t len)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	int			fd;

	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	strcpy(sun.sun_path, path);
	ck_assert_int_ne(fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return ts_start(fd, mode, answer, len);
}

/* A server on 127.0.0.1, or ::1 with v6; NULL when there is no ::1. */
static struct ts_server *
ts_tcp(bool v6, int *port, enum ts_mode mode, const char *answer,
    size_t len)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 slen = sizeof(ss);
	int			 fd;

	memset(&ss, 0, sizeof(ss));
	if (v6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
	} else {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	ck_assert_int_ne(fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0), -1);
	if (bind(fd, (struct sockaddr *)&ss, v6 ? sizeof(*sin6) :
	    sizeof(*sin)) == -1) {
		ck_assert(v6);
		close(fd);
		return NULL;
	}
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &slen), 0);
	*port = ntohs(v6 ? sin6->sin6_port : sin->sin_port);
	return ts_start(fd, mode, answer, len);
}

static void
ts_stop(struct ts_server *ts)
{
	close(ts->stop[1]);
	pthread_join(ts->thread, NULL);
	close(ts->stop[0]);
	close(ts->lfd);
	pthread_mutex_destroy(&ts->mu);
	free(ts);
}

/* Whether the last request was want. */
static bool
ts_got(struct ts_server *ts, const char *want)
{
	bool	got;

	pthread_mutex_lock(&ts->mu);
	got = strcmp(ts->request, want) == 0;
	pthread_mutex_unlock(&ts->mu);
	return got;
}

static unsigned
ts_count(struct ts_server *ts, unsigned *what)
{
	unsigned	n;

	pthread_mutex_lock(&ts->mu);
	n = *what;
	pthread_mutex_unlock(&ts->mu);
	return n;
}

/* ---- the loop and what done saw ---- */

struct result {
	unsigned	 calls;
	bool		 ok;
	char		*body;
	size_t		 len;
	bool		 nul;		/* body[len] was '\0' */
	char		 error[128];
	double		 ms;		/* from fetch_start to done */
	struct timespec	 t0;
	struct fetch	*cancel;	/* done cancels this one */
};

struct fixture {
	struct event_base	*base;
	struct curl_loop	*curl;
	char			*dir;
	unsigned		 pending;	/* dones still to come */
};

static struct fixture	fx;

static double
since_ms(const struct timespec *t0)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

static void
done_cb(void *arg, bool ok, const char *body, size_t len, const char *error)
{
	struct result	*r = arg;

	r->calls++;
	r->ms = since_ms(&r->t0);
	r->ok = ok;
	if (ok) {
		ck_assert_ptr_nonnull(body);
		ck_assert_ptr_null(error);
		ck_assert_ptr_nonnull(r->body = malloc(len + 1));
		memcpy(r->body, body, len + 1);
		r->len = len;
		r->nul = body[len] == '\0';
	} else {
		ck_assert_ptr_null(body);
		ck_assert_ptr_nonnull(error);
		snprintf(r->error, sizeof(r->error), "%s", error);
	}
	if (r->cancel != NULL) {
		fetch_cancel(r->cancel);
		r->cancel = NULL;
		fx.pending--;
	}
	if (fx.pending > 0)
		fx.pending--;
	if (fx.pending == 0)
		event_base_loopbreak(fx.base);
}

static void
bound_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(fx.base);
}

/* Runs the loop until every done came, or for ms. */
static void
run_for(int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*bound = evtimer_new(fx.base, bound_cb, NULL);

	evtimer_add(bound, &tv);
	event_base_dispatch(fx.base);
	event_free(bound);
}

static void
setup(void)
{
	memset(&fx, 0, sizeof(fx));
	ck_assert_ptr_nonnull(fx.base = event_base_new());
	ck_assert_ptr_nonnull(fx.curl = curl_loop_new(fx.base));
	fx.dir = tu_tmpdir();
}

static void
teardown(void)
{
	curl_loop_free(fx.curl);
	event_base_free(fx.base);
	tu_rmtree(fx.dir);
	free(fx.dir);
}

static void
source(const char *text, struct fetch_source *src)
{
	const char	*why = NULL;

	ck_assert_msg(fetch_source_parse(text, src, &why) == 0, "%s: %s",
	    text, why);
}

/* Starts a fetch of text into r; done must not come from in here. */
static struct fetch *
start(const char *text, const char *request, uint64_t timeout_ms,
    size_t cap, struct result *r)
{
	struct fetch_source	 src;
	struct fetch		*f;

	source(text, &src);
	memset(r, 0, sizeof(*r));
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	f = fetch_start(fx.base, fx.curl, &src, request, timeout_ms, cap,
	    done_cb, r);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(r->calls, 0);
	fx.pending++;
	return f;
}

/* One fetch, run to its end: done exactly once. */
static void
fetch_one(const char *text, const char *request, uint64_t timeout_ms,
    size_t cap, struct result *r)
{
	start(text, request, timeout_ms, cap, r);
	run_for((int)timeout_ms + 20000);
	ck_assert_uint_eq(r->calls, 1);
	/* Nothing more comes later. */
	run_for(50);
	ck_assert_uint_eq(r->calls, 1);
}

static void
want_error(const struct result *r, const char *error)
{
	ck_assert_msg(!r->ok, "succeeded");
	ck_assert_str_eq(r->error, error);
}

/*
 * A timeout, not before its time. Timers are kept in milliseconds or
 * coarser: a few of slack for the rounding, none for the machine.
 */
static void
want_timeout(const struct result *r, uint64_t timeout_ms)
{
	want_error(r, "timeout");
	ck_assert_msg(r->ms >= (double)timeout_ms - 5, "after %.1fms", r->ms);
}

static char *
path_in(const char *name)
{
	char	*p;

	ck_assert_int_ne(asprintf(&p, "%s/%s", fx.dir, name), -1);
	return p;
}

static char *
x_bytes(size_t n)
{
	char	*p = malloc(n);

	ck_assert_ptr_nonnull(p);
	memset(p, 'x', n);
	return p;
}

/* ---- source forms ---- */

START_TEST(parse_good)
{
	struct fetch_source	 src;
	const char		*why;

	ck_assert_int_eq(fetch_source_parse("http://10.0.0.2:9506/status",
	    &src, &why), 0);
	ck_assert_int_eq(src.kind, FETCH_HTTP);
	ck_assert_str_eq(src.url, "http://10.0.0.2:9506/status");
	ck_assert_str_eq(src.text, "http://10.0.0.2:9506/status");
	ck_assert_int_eq(fetch_source_parse("https://lb-2.example:8443/"
	    "stats;csv", &src, &why), 0);
	ck_assert_int_eq(src.kind, FETCH_HTTP);
	/* The URL keeps its credentials; the text never shows them. */
	ck_assert_int_eq(fetch_source_parse("http://admin:s3cret@10.0.0.2/"
	    "stats;csv", &src, &why), 0);
	ck_assert_str_eq(src.url, "http://admin:s3cret@10.0.0.2/stats;csv");
	ck_assert_str_eq(src.text, "http://***@10.0.0.2/stats;csv");
	ck_assert_ptr_null(strstr(src.text, "s3cret"));

	ck_assert_int_eq(fetch_source_parse("unix:/run/haproxy/admin.sock",
	    &src, &why), 0);
	ck_assert_int_eq(src.kind, FETCH_UNIX);
	ck_assert_str_eq(src.path, "/run/haproxy/admin.sock");
	ck_assert_str_eq(src.text, "unix:/run/haproxy/admin.sock");

	ck_assert_int_eq(fetch_source_parse("tcp:127.0.0.1:9999", &src, &why),
	    0);
	ck_assert_int_eq(src.kind, FETCH_TCP);
	ck_assert_str_eq(src.host, "127.0.0.1");
	ck_assert_str_eq(src.port, "9999");
	ck_assert_str_eq(src.text, "tcp:127.0.0.1:9999");
	ck_assert_int_eq(fetch_source_parse("tcp:[::1]:9999", &src, &why), 0);
	ck_assert_int_eq(src.kind, FETCH_TCP);
	ck_assert_str_eq(src.host, "::1");
	ck_assert_str_eq(src.port, "9999");
	ck_assert_str_eq(src.text, "tcp:[::1]:9999");
	ck_assert_int_eq(fetch_source_parse("tcp:[fe80::1%lo]:1", &src, &why),
	    0);
	ck_assert_str_eq(src.host, "fe80::1%lo");
	ck_assert_int_eq(fetch_source_parse("tcp:10.1.2.3:65535", &src, &why),
	    0);
}
END_TEST

START_TEST(parse_bad)
{
	static const struct {
		const char	*s, *why;	/* why: a part of it */
	} bad[] = {
		{ "", "expected http://" },
		{ "ftp://10.0.0.2/stats", "expected http://" },
		{ "10.0.0.2:9506", "expected http://" },
		{ "/run/haproxy/admin.sock", "expected http://" },
		{ "http://", "" },
		{ "unix:run/haproxy/admin.sock", "absolute path" },
		{ "unix:", "absolute path" },
		{ "unix:/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "longer" },
		{ "tcp:127.0.0.1", "tcp:ADDRESS:PORT" },
		{ "tcp:127.0.0.1:", "port" },
		{ "tcp:", "tcp:ADDRESS:PORT" },
		{ "tcp::9999", "tcp:ADDRESS:PORT" },
		{ "tcp:[::1]", "tcp:ADDRESS:PORT" },
		{ "tcp:[::1]9999", "tcp:ADDRESS:PORT" },
		{ "tcp:127.0.0.1:0", "port" },
		{ "tcp:127.0.0.1:65536", "port" },
		{ "tcp:127.0.0.1:99999999999999999999", "port" },
		{ "tcp:127.0.0.1:+80", "port" },
		{ "tcp:127.0.0.1:80x", "port" },
		{ "tcp:localhost:9999", "numeric" },
		{ "tcp:lb-1.example:9999", "numeric" },
		{ "tcp:1.2.3.999:9999", "numeric" },
		{ "tcp:[10.0.0.1]:9999", "numeric" },
		{ "tcp:::1:9999", "brackets" },
		{ NULL, NULL },
	};
	struct fetch_source	 src;
	const char		*why;
	size_t			 i;

	for (i = 0; bad[i].s != NULL; i++) {
		why = NULL;
		ck_assert_msg(fetch_source_parse(bad[i].s, &src, &why) == -1,
		    "%s", bad[i].s);
		ck_assert_ptr_nonnull(why);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "%s: %s",
		    bad[i].s, why);
	}
}
END_TEST

/* Refused at once: nothing started, done never called. */
START_TEST(start_refused)
{
	struct fetch_source	src;
	struct result		r = { 0 };

	setup();
	source("http://127.0.0.1:1/", &src);
	ck_assert_ptr_null(fetch_start(fx.base, fx.curl, &src, NULL, 0, KIB,
	    done_cb, &r));
	ck_assert_ptr_null(fetch_start(fx.base, NULL, &src, NULL, 1000, KIB,
	    done_cb, &r));
	source("tcp:127.0.0.1:1", &src);
	ck_assert_ptr_null(fetch_start(NULL, fx.curl, &src, "x\n", 1000, KIB,
	    done_cb, &r));
	run_for(100);
	ck_assert_uint_eq(r.calls, 0);
	teardown();
}
END_TEST

/* ---- HTTP ---- */

static const char	status_json[] = "{\"services\": {\"\": "
			    "{\"state\": \"up\"}}}\n";

static const struct th_route routes[] = {
	{ .path = "/status", .status = 200, .body = status_json,
	    .headers = "Content-Type: application/json\r\n" },
	{ .path = "/down", .status = 503, .body = "{\"state\":\"down\"}\n" },
	{ .path = "/moved", .status = 302, .body = "",
	    .headers = "Location: /status\r\n" },
	{ .path = "/big", .status = 200, .body_len = 64 * KIB + 1 },
	{ .path = "/just", .status = 200, .body_len = 64 * KIB },
	{ .path = "/mib", .status = 200, .body_len = 1024 * KIB },
	{ .path = "/big503", .status = 503, .body_len = 200 * KIB },
	{ .path = "/empty", .status = 200, .body = "" },
	{ .path = "/slow", .status = 200, .body = "late\n", .delay_ms = 5000 },
	{ .path = "/silent", .mode = TH_SILENT },
	{ .path = "/half", .status = 200, .mode = TH_CLOSE_MID,
	    .body_len = 100 },
	{ .path = "/garbage", .mode = TH_GARBAGE },
	{ .path = NULL },
};

static struct th_server *
httpd(int *port)
{
	return th_start_tcp(routes, port);
}

static char *
url(int port, const char *path)
{
	char	*u;

	ck_assert_int_ne(asprintf(&u, "http://127.0.0.1:%d%s", port, path),
	    -1);
	return u;
}

START_TEST(http_ok)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u, *req;
	int			 port;

	setup();
	srv = httpd(&port);
	u = url(port, "/status");
	fetch_one(u, "ignored\n", 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, strlen(status_json));
	ck_assert_str_eq(r.body, status_json);
	ck_assert(r.nul);
	req = th_last_request(srv);
	ck_assert_ptr_nonnull(strstr(req, "GET /status HTTP/1.1\r\n"));
	free(req);
	free(r.body);
	free(u);
	/* A 200 with nothing in it is a document too. */
	u = url(port, "/empty");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_str_eq(r.body, "");
	free(r.body);
	free(u);
	th_stop(srv);
	teardown();
}
END_TEST

/* Credentials in the URL go to the server, as Basic. */
START_TEST(http_credentials)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u, *req;
	int			 port;

	setup();
	srv = httpd(&port);
	ck_assert_int_ne(asprintf(&u, "http://admin:pw@127.0.0.1:%d/status",
	    port), -1);
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	req = th_last_request(srv);
	/* base64("admin:pw") */
	ck_assert_ptr_nonnull(strstr(req, "Authorization: Basic "
	    "YWRtaW46cHc=\r\n"));
	free(req);
	free(r.body);
	free(u);
	th_stop(srv);
	teardown();
}
END_TEST

START_TEST(http_status)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u;
	int			 port;

	setup();
	srv = httpd(&port);
	u = url(port, "/down");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "HTTP 503");
	free(u);
	/* Over the cap, but the status says more. */
	u = url(port, "/big503");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "HTTP 503");
	free(u);
	/* Redirects are not followed. */
	u = url(port, "/moved");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "HTTP 302");
	ck_assert_uint_eq(th_requests(srv), 3);
	free(u);
	u = url(port, "/nowhere");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "HTTP 404");
	free(u);
	th_stop(srv);
	teardown();
}
END_TEST

START_TEST(http_cap)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u;
	int			 port;

	setup();
	srv = httpd(&port);
	u = url(port, "/big");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "answer larger than 64 KiB");
	free(u);
	u = url(port, "/just");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, 64 * KIB);
	ck_assert(r.nul);
	free(r.body);
	/* A cap that is no round number is said in bytes. */
	fetch_one(u, NULL, 5000, 1000, &r);
	want_error(&r, "answer larger than 1000 bytes");
	free(u);
	th_stop(srv);
	teardown();
}
END_TEST

/* No Content-Length: the body is counted as it comes. */
START_TEST(http_cap_unannounced)
{
	static const char	 head[] = "HTTP/1.0 200 OK\r\n\r\n";
	struct ts_server	*ts;
	struct result		 r;
	char			*answer, *u;
	int			 port;

	setup();
	answer = x_bytes(sizeof(head) - 1 + 2 * 64 * KIB);
	memcpy(answer, head, sizeof(head) - 1);
	ts = ts_tcp(false, &port, TS_HTTP, answer, sizeof(head) - 1 +
	    2 * 64 * KIB);
	u = url(port, "/stats;csv");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "answer larger than 64 KiB");
	fetch_one(u, NULL, 5000, 2 * 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, 2 * 64 * KIB);
	free(r.body);
	free(u);
	ts_stop(ts);
	free(answer);
	teardown();
}
END_TEST

START_TEST(http_timeout)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u;
	int			 port;

	setup();
	srv = httpd(&port);
	u = url(port, "/silent");
	fetch_one(u, NULL, 300, 64 * KIB, &r);
	want_timeout(&r, 300);
	free(u);
	u = url(port, "/slow");
	fetch_one(u, NULL, 400, 64 * KIB, &r);
	want_timeout(&r, 400);
	free(u);
	th_stop(srv);
	teardown();
}
END_TEST

START_TEST(http_broken)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u;
	int			 port;

	setup();
	srv = httpd(&port);
	u = url(th_closed_port(), "/status");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "connection refused");
	free(u);
	u = url(port, "/half");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "connection closed mid-answer");
	free(u);
	u = url(port, "/garbage");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	want_error(&r, "not an HTTP reply");
	free(u);
	th_stop(srv);
	teardown();
}
END_TEST

/* http_proxy in the environment is not for us. */
START_TEST(http_no_proxy)
{
	struct th_server	*srv;
	struct result		 r;
	char			*u, *proxy;
	int			 port;

	setup();
	srv = httpd(&port);
	proxy = url(th_closed_port(), "");
	setenv("http_proxy", proxy, 1);
	setenv("HTTP_PROXY", proxy, 1);
	setenv("all_proxy", proxy, 1);
	u = url(port, "/status");
	fetch_one(u, NULL, 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	free(r.body);
	free(u);
	free(proxy);
	th_stop(srv);
	teardown();
}
END_TEST

/* ---- unix and tcp ---- */

static char *
stats_csv(size_t *len)
{
	const char	*root = getenv("SOURCE_ROOT");
	char		 path[1024], *buf;
	FILE		*fp;

	snprintf(path, sizeof(path), "%s/tests/unit/data/hastats/"
	    "show-stat-2.6.csv", root != NULL ? root : ".");
	ck_assert_msg((fp = fopen(path, "r")) != NULL, "%s", path);
	ck_assert_ptr_nonnull(buf = malloc(64 * KIB));
	*len = fread(buf, 1, 64 * KIB, fp);
	ck_assert_uint_gt(*len, 0);
	fclose(fp);
	return buf;
}

/* HAProxy's way: "show stat\n" in, the CSV out, closed. */
START_TEST(unix_show_stat)
{
	struct ts_server	*ts;
	struct hastats_row	 row;
	struct result		 r;
	const char		*why;
	char			*csv, *sock, *text;
	size_t			 len;

	setup();
	csv = stats_csv(&len);
	sock = path_in("admin.sock");
	ts = ts_unix(sock, TS_ANSWER, csv, len);
	ck_assert_int_ne(asprintf(&text, "unix:%s", sock), -1);
	fetch_one(text, "show stat\n", 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, len);
	ck_assert_mem_eq(r.body, csv, len);
	ck_assert(r.nul);
	ck_assert(ts_got(ts, "show stat\n"));
	ck_assert_int_eq(hastats_find(r.body, r.len, "be", "drain", &row,
	    &why), 1);
	ck_assert_str_eq(hastats_admin(&row), "DRAIN");
	free(r.body);
	/* Exactly the cap is fine; a byte less is not. */
	fetch_one(text, "show stat\n", 5000, len, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	free(r.body);
	fetch_one(text, "show stat\n", 5000, len - 1, &r);
	ck_assert_msg(!r.ok && strncmp(r.error, "answer larger than ",
	    19) == 0, "%s", r.error);
	ts_stop(ts);
	free(text);
	free(sock);
	free(csv);
	teardown();
}
END_TEST

START_TEST(tcp_answer)
{
	static const char	 doc[] = "{\"state\": \"up\"}\n";
	struct ts_server	*ts;
	struct result		 r;
	char			*text;
	int			 port, v6;

	setup();
	for (v6 = 0; v6 < 2; v6++) {
		if ((ts = ts_tcp(v6, &port, TS_ANSWER, doc, sizeof(doc) - 1)) ==
		    NULL)
			continue;	/* no ::1 here */
		ck_assert_int_ne(asprintf(&text, v6 ? "tcp:[::1]:%d" :
		    "tcp:127.0.0.1:%d", port), -1);
		fetch_one(text, "GET\n", 5000, 64 * KIB, &r);
		ck_assert_msg(r.ok, "%s", r.error);
		ck_assert_str_eq(r.body, doc);
		ck_assert(ts_got(ts, "GET\n"));
		free(r.body);
		ts_stop(ts);
		free(text);
	}
	/* No request: the server speaks first. */
	ts = ts_tcp(false, &port, TS_SPEAK, doc, sizeof(doc) - 1);
	ck_assert_int_ne(asprintf(&text, "tcp:127.0.0.1:%d", port), -1);
	fetch_one(text, NULL, 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_str_eq(r.body, doc);
	free(r.body);
	fetch_one(text, "", 5000, 64 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	free(r.body);
	ts_stop(ts);
	free(text);
	teardown();
}
END_TEST

START_TEST(stream_timeout)
{
	struct ts_server	*ts;
	struct result		 r;
	char			*sock, *text;
	int			 port;

	setup();
	sock = path_in("silent.sock");
	ts = ts_unix(sock, TS_SILENT, NULL, 0);
	ck_assert_int_ne(asprintf(&text, "unix:%s", sock), -1);
	fetch_one(text, "show stat\n", 300, 64 * KIB, &r);
	want_timeout(&r, 300);
	ts_stop(ts);
	free(text);
	ts = ts_tcp(false, &port, TS_SILENT, NULL, 0);
	ck_assert_int_ne(asprintf(&text, "tcp:127.0.0.1:%d", port), -1);
	fetch_one(text, "show stat\n", 300, 64 * KIB, &r);
	want_timeout(&r, 300);
	ts_stop(ts);
	free(text);
	free(sock);
	teardown();
}
END_TEST

START_TEST(stream_cap)
{
	struct ts_server	*ts;
	struct result		 r;
	char			*text, *big;
	int			 port;

	setup();
	big = x_bytes(1024 * KIB);
	ts = ts_tcp(false, &port, TS_ANSWER, big, 1024 * KIB);
	ck_assert_int_ne(asprintf(&text, "tcp:127.0.0.1:%d", port), -1);
	fetch_one(text, "show stat\n", 5000, 64 * KIB, &r);
	want_error(&r, "answer larger than 64 KiB");
	fetch_one(text, "show stat\n", 5000, 1024 * KIB, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, 1024 * KIB);
	ck_assert(r.nul);
	free(r.body);
	fetch_one(text, "show stat\n", 5000, 512 * KIB, &r);
	want_error(&r, "answer larger than 512 KiB");
	ts_stop(ts);
	free(text);
	free(big);
	teardown();
}
END_TEST

/* Failures to connect come from the loop too. */
START_TEST(stream_refused)
{
	struct sockaddr_un	 sun = { .sun_family = AF_UNIX };
	struct result		 r;
	char			*sock, *text;
	int			 fd;

	setup();
	ck_assert_int_ne(asprintf(&text, "tcp:127.0.0.1:%d", th_closed_port()),
	    -1);
	fetch_one(text, "show stat\n", 5000, 64 * KIB, &r);
	want_error(&r, "connection refused");
	free(text);
	/* A unix socket bound but not listening: HAProxy gone. */
	sock = path_in("gone.sock");
	strcpy(sun.sun_path, sock);
	ck_assert_int_ne(fd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	ck_assert_int_ne(asprintf(&text, "unix:%s", sock), -1);
	fetch_one(text, "show stat\n", 5000, 64 * KIB, &r);
	want_error(&r, "connection refused");
	free(text);
	free(sock);
	sock = path_in("nothing.sock");
	ck_assert_int_ne(asprintf(&text, "unix:%s", sock), -1);
	fetch_one(text, "show stat\n", 5000, 64 * KIB, &r);
	want_error(&r, "no such socket");
	free(text);
	free(sock);
	teardown();
}
END_TEST

START_TEST(stream_empty)
{
	struct ts_server	*ts;
	struct result		 r;
	char			*sock, *text;

	setup();
	sock = path_in("empty.sock");
	ts = ts_unix(sock, TS_EMPTY, NULL, 0);
	ck_assert_int_ne(asprintf(&text, "unix:%s", sock), -1);
	fetch_one(text, "show stat\n", 5000, 64 * KIB, &r);
	want_error(&r, "closed without an answer");
	ts_stop(ts);
	free(text);
	free(sock);
	teardown();
}
END_TEST

/* ---- cancel ---- */

/* Every kind, mid-flight: done never comes, the connections close. */
START_TEST(cancel_in_flight)
{
	struct th_server	*srv;
	struct ts_server	*ts_u, *ts_t;
	struct fetch		*f[4];
	struct result		 r[4];
	char			*sock, *text[4];
	int			 port, tport;
	size_t			 i;

	setup();
	srv = httpd(&port);
	text[0] = url(port, "/silent");
	sock = path_in("silent.sock");
	ts_u = ts_unix(sock, TS_SILENT, NULL, 0);
	ck_assert_int_ne(asprintf(&text[1], "unix:%s", sock), -1);
	ts_t = ts_tcp(false, &tport, TS_SILENT, NULL, 0);
	ck_assert_int_ne(asprintf(&text[2], "tcp:127.0.0.1:%d", tport), -1);
	ck_assert_int_ne(asprintf(&text[3], "unix:%s/none.sock", fx.dir), -1);
	for (i = 0; i < 3; i++)
		f[i] = start(text[i], "show stat\n", 30000, 64 * KIB, &r[i]);
	/* Until each server has the request. */
	for (i = 0; i < 500 && (th_requests(srv) < 1 ||
	    !ts_got(ts_u, "show stat\n") || !ts_got(ts_t, "show stat\n"));
	    i++)
		run_for(10);
	ck_assert_uint_eq(th_requests(srv), 1);
	ck_assert(ts_got(ts_u, "show stat\n"));
	ck_assert(ts_got(ts_t, "show stat\n"));
	/* Its failure is already waiting in the loop when cancelled. */
	f[3] = start(text[3], "show stat\n", 30000, 64 * KIB, &r[3]);
	for (i = 0; i < 4; i++)
		fetch_cancel(f[i]);
	fx.pending = 0;
	fetch_cancel(NULL);
	run_for(300);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(r[i].calls, 0);
	/* The servers see their clients go. */
	for (i = 0; i < 200 && (ts_count(ts_u, &ts_u->gone) < 1 ||
	    ts_count(ts_t, &ts_t->gone) < 1); i++)
		usleep(10000);
	ck_assert_uint_eq(ts_count(ts_u, &ts_u->gone), 1);
	ck_assert_uint_eq(ts_count(ts_t, &ts_t->gone), 1);
	for (i = 0; i < 4; i++)
		free(text[i]);
	ts_stop(ts_u);
	ts_stop(ts_t);
	th_stop(srv);
	free(sock);
	teardown();
}
END_TEST

/* One fetch's done cancels another, of each kind. */
START_TEST(cancel_from_done)
{
	struct th_server	*srv;
	struct ts_server	*ts;
	struct fetch		*fb;
	struct result		 a, b;
	char			*ok, *text[2];
	int			 port, tport;
	size_t			 i;

	setup();
	srv = httpd(&port);
	ok = url(port, "/status");
	text[0] = url(port, "/silent");
	ts = ts_tcp(false, &tport, TS_SILENT, NULL, 0);
	ck_assert_int_ne(asprintf(&text[1], "tcp:127.0.0.1:%d", tport), -1);
	for (i = 0; i < 2; i++) {
		fb = start(text[i], "show stat\n", 30000, 64 * KIB, &b);
		start(ok, NULL, 5000, 64 * KIB, &a);
		/* b never answers: a's done comes while b is in flight. */
		a.cancel = fb;
		run_for(20000);
		ck_assert_uint_eq(a.calls, 1);
		ck_assert_msg(a.ok, "%s", a.error);
		free(a.body);
		run_for(300);
		ck_assert_uint_eq(b.calls, 0);
		ck_assert_uint_eq(fx.pending, 0);
	}
	for (i = 0; i < 200 && ts_count(ts, &ts->gone) < 1; i++)
		usleep(10000);
	ck_assert_uint_eq(ts_count(ts, &ts->gone), 1);
	free(text[0]);
	free(text[1]);
	free(ok);
	ts_stop(ts);
	th_stop(srv);
	teardown();
}
END_TEST

/* ---- an answer in pieces ---- */

/* What the pieces were, and the loop's turns between them. */
struct pieces {
	size_t		 n, total, max;
	char		*copy;		/* every piece, in order */
	size_t		 room;
	unsigned	 turns;		/* loop turns seen by another event */
	unsigned	 last_turns;
	unsigned	 same;		/* pieces in a row on one count */
	bool		 crowded;	/* three of them */
	size_t		 stop_after;	/* bytes; 0: never stop */
};

static struct pieces	pc;

static int
piece_cb(void *arg, const char *data, size_t len, const char **why)
{
	(void)arg;
	pc.same = pc.n > 0 && pc.turns == pc.last_turns ? pc.same + 1 : 1;
	if (pc.same >= 3)
		pc.crowded = true;
	pc.last_turns = pc.turns;
	pc.n++;
	if (len > pc.max)
		pc.max = len;
	if (pc.total + len <= pc.room)
		memcpy(pc.copy + pc.total, data, len);
	pc.total += len;
	if (pc.stop_after > 0 && pc.total >= pc.stop_after) {
		*why = "enough of it";
		return -1;
	}
	return 0;
}

/*
 * Always readable: runs once in every turn of the loop, before or after
 * the fetch's events. Pieces one a turn see its count move at least every
 * second piece; three pieces that see the same count came in fewer turns.
 */
static void
turn_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	pc.turns++;
}

/* Fetches text in pieces; every piece came in a turn of its own. */
static void
fetch_pieces(const char *text, const char *request, size_t cap,
    size_t stop_after, struct result *r)
{
	struct fetch_source	 src;
	struct event		*turn;
	int			 p[2];

	memset(&pc, 0, sizeof(pc));
	pc.room = 2048 * KIB;
	pc.stop_after = stop_after;
	ck_assert_ptr_nonnull(pc.copy = malloc(pc.room));
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	turn = event_new(fx.base, p[0], EV_READ | EV_PERSIST, turn_cb, NULL);
	event_add(turn, NULL);
	source(text, &src);
	memset(r, 0, sizeof(*r));
	ck_assert_ptr_nonnull(fetch_start_pieces(fx.base, fx.curl, &src,
	    request, 10000, cap, piece_cb, done_cb, r));
	fx.pending++;
	run_for(30000);
	ck_assert_uint_eq(r->calls, 1);
	event_free(turn);
	close(p[0]);
	close(p[1]);
	ck_assert_uint_le(pc.max, FETCH_PIECE_MAX);
	ck_assert_msg(!pc.crowded, "two pieces in one turn of the loop");
	ck_assert_msg(pc.n <= pc.turns + 1, "%zu pieces in %u turns", pc.n,
	    pc.turns);
}

START_TEST(pieces_http_and_unix)
{
	struct th_server	*srv;
	struct ts_server	*ts;
	struct result		 r;
	char			*u, *sock, *text, *mib = x_bytes(1024 * KIB);
	size_t			 i;
	int			 port;

	setup();
	for (i = 0; i < 1024 * KIB; i++)
		mib[i] = (char)('a' + i % 23);
	srv = httpd(&port);
	u = url(port, "/mib");
	fetch_pieces(u, NULL, 8 * 1024 * KIB, 0, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_uint_eq(pc.total, 1024 * KIB);
	ck_assert_uint_ge(pc.n, 64);
	ck_assert_str_eq(r.body, "");
	free(r.body);
	free(pc.copy);
	/* Over the cap, or stopped by the owner: an error, nothing more. */
	fetch_pieces(u, NULL, 512 * KIB, 0, &r);
	want_error(&r, "answer larger than 512 KiB");
	free(pc.copy);
	fetch_pieces(u, NULL, 8 * 1024 * KIB, 100 * KIB, &r);
	want_error(&r, "enough of it");
	free(pc.copy);
	free(u);
	th_stop(srv);

	sock = path_in("admin.sock");
	ts = ts_unix(sock, TS_ANSWER, mib, 1024 * KIB);
	ck_assert_int_ne(asprintf(&text, "unix:%s", sock), -1);
	fetch_pieces(text, "show stat\n", 8 * 1024 * KIB, 0, &r);
	ck_assert_msg(r.ok, "%s", r.error);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_uint_eq(pc.total, 1024 * KIB);
	ck_assert_mem_eq(pc.copy, mib, 1024 * KIB);
	free(r.body);
	free(pc.copy);
	fetch_pieces(text, "show stat\n", 8 * 1024 * KIB, 100 * KIB, &r);
	want_error(&r, "enough of it");
	free(pc.copy);
	fetch_pieces(text, "show stat\n", 512 * KIB, 0, &r);
	want_error(&r, "answer larger than 512 KiB");
	free(pc.copy);
	ts_stop(ts);
	free(text);
	free(sock);
	free(mib);
	teardown();
}
END_TEST

static Suite *
fetch_suite(void)
{
	Suite	*s = suite_create("fetch");
	TCase	*tc = tcase_create("fetch");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, parse_good);
	tcase_add_test(tc, parse_bad);
	tcase_add_test(tc, start_refused);
	tcase_add_test(tc, http_ok);
	tcase_add_test(tc, http_credentials);
	tcase_add_test(tc, http_status);
	tcase_add_test(tc, http_cap);
	tcase_add_test(tc, http_cap_unannounced);
	tcase_add_test(tc, http_timeout);
	tcase_add_test(tc, http_broken);
	tcase_add_test(tc, http_no_proxy);
	tcase_add_test(tc, unix_show_stat);
	tcase_add_test(tc, tcp_answer);
	tcase_add_test(tc, stream_timeout);
	tcase_add_test(tc, stream_cap);
	tcase_add_test(tc, stream_refused);
	tcase_add_test(tc, stream_empty);
	tcase_add_test(tc, cancel_in_flight);
	tcase_add_test(tc, cancel_from_done);
	tcase_add_test(tc, pieces_http_and_unix);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(fetch_suite());
}
