/* The unit tests' HTTP server: real sockets, a thread per connection. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "testhttpd.h"
#include "testutil.h"

#define TH_HEAD_MAX	16384

struct th_server {
	const struct th_route	*routes;
	int			 lfd;
	int			 stop[2];	/* closing stop[1] wakes everyone */
	pthread_t		 acceptor;
	pthread_mutex_t		 mu;
	pthread_t		*conns;
	size_t			 nconns, cap;
	unsigned		 requests;
	char			*last;
};

struct th_conn {
	struct th_server	*srv;
	int			 fd;
};

/* Waits for events on fd; false when stopping, timed out or broken. */
static bool
th_wait(struct th_server *srv, int fd, short events, int timeout_ms)
{
	struct pollfd	pfd[2] = {
		{ .fd = fd, .events = events },
		{ .fd = srv->stop[0], .events = POLLIN },
	};
	int		n;

	do
		n = poll(pfd, 2, timeout_ms);
	while (n == -1 && errno == EINTR);
	if (n <= 0 || pfd[1].revents != 0)
		return false;
	return true;
}

/* Sleeps ms (-1: for ever) unless the server stops first; false if so. */
static bool
th_sleep(struct th_server *srv, int ms)
{
	struct pollfd	pfd = { .fd = srv->stop[0], .events = POLLIN };

	return ms == 0 || poll(&pfd, 1, ms) == 0;
}

static bool
th_send(struct th_server *srv, int fd, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if (!th_wait(srv, fd, POLLOUT, 10000))
			return false;
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static const struct th_route *
th_route_for(const struct th_route *r, const char *target)
{
	for (; r->path != NULL; r++)
		if (strcmp(r->path, "*") == 0 || strcmp(r->path, target) == 0)
			return r;
	return NULL;
}

static const char *
th_status_text(int status)
{
	switch (status) {
	case 200:	return "OK";
	case 301:	return "Moved Permanently";
	case 302:	return "Found";
	case 404:	return "Not Found";
	case 500:	return "Internal Server Error";
	case 503:	return "Service Unavailable";
	default:	return "Whatever";
	}
}

static void
th_answer(struct th_server *srv, int fd, const struct th_route *r,
    bool head_only)
{
	char		 hdr[1024];
	char		*filler = NULL;
	const char	*body = r->body;
	size_t		 len = body != NULL ? strlen(body) : r->body_len;
	size_t		 promise = r->mode == TH_CLOSE_MID ? 2 * len : len;
	int		 n;

	if (body == NULL) {
		if ((filler = malloc(len + 1)) == NULL)
			return;
		memset(filler, 'x', len);
		body = filler;
	}
	n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 %d %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
	    r->status, th_status_text(r->status), promise,
	    r->headers != NULL ? r->headers : "");
	if (th_send(srv, fd, hdr, (size_t)n) && !head_only)
		th_send(srv, fd, body, len);
	free(filler);
}

static void *
th_conn_main(void *arg)
{
	struct th_conn		*c = arg;
	struct th_server	*srv = c->srv;
	const struct th_route	*r;
	char			 buf[TH_HEAD_MAX + 1], method[16], target[1024];
	size_t			 len = 0;
	ssize_t			 n;

	for (;;) {
		if (len == TH_HEAD_MAX || !th_wait(srv, c->fd, POLLIN, 10000))
			goto done;
		n = recv(c->fd, buf + len, TH_HEAD_MAX - len, MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			goto done;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			break;
	}
	*strstr(buf, "\r\n\r\n") = '\0';
	if (sscanf(buf, "%15s %1023s", method, target) != 2)
		goto done;
	pthread_mutex_lock(&srv->mu);
	srv->requests++;
	free(srv->last);
	srv->last = strdup(buf);
	r = th_route_for(srv->routes, target);
	pthread_mutex_unlock(&srv->mu);
	if (r == NULL) {
		static const struct th_route none = {
			.path = "*", .status = 404, .body = "no route\n",
		};
		r = &none;
	}
	if (!th_sleep(srv, r->delay_ms))
		goto done;
	switch (r->mode) {
	case TH_ANSWER:
	case TH_CLOSE_MID:
		th_answer(srv, c->fd, r, strcmp(method, "HEAD") == 0);
		break;
	case TH_SILENT:
		th_sleep(srv, -1);
		break;
	case TH_EMPTY:
		break;
	case TH_GARBAGE:
		th_send(srv, c->fd, "SSH-2.0-OpenSSH_9.2\r\nnonsense\r\n", 31);
		break;
	}
done:
	close(c->fd);
	free(c);
	return NULL;
}

static void *
th_accept_main(void *arg)
{
	struct th_server	*srv = arg;
	struct th_conn		*c;
	pthread_t		 t;
	int			 fd;

	while (th_wait(srv, srv->lfd, POLLIN, -1)) {
		if ((fd = accept(srv->lfd, NULL, NULL)) == -1)
			continue;
		if ((c = malloc(sizeof(*c))) == NULL) {
			close(fd);
			continue;
		}
		c->srv = srv;
		c->fd = fd;
		pthread_mutex_lock(&srv->mu);
		if (srv->nconns == srv->cap) {
			srv->cap = srv->cap == 0 ? 64 : 2 * srv->cap;
			srv->conns = realloc(srv->conns,
			    srv->cap * sizeof(*srv->conns));
			if (srv->conns == NULL)
				abort();
		}
		if (pthread_create(&t, NULL, th_conn_main, c) != 0) {
			pthread_mutex_unlock(&srv->mu);
			close(fd);
			free(c);
			continue;
		}
		srv->conns[srv->nconns++] = t;
		pthread_mutex_unlock(&srv->mu);
	}
	return NULL;
}

static struct th_server *
th_start(const struct th_route *routes, int lfd)
{
	struct th_server	*srv;

	ck_assert_ptr_nonnull(srv = calloc(1, sizeof(*srv)));
	srv->routes = routes;
	srv->lfd = lfd;
	ck_assert_int_eq(pipe(srv->stop), 0);
	pthread_mutex_init(&srv->mu, NULL);
	ck_assert_int_eq(pthread_create(&srv->acceptor, NULL, th_accept_main,
	    srv), 0);
	return srv;
}

struct th_server *
th_start_tcp(const struct th_route *routes, int *port)
{
	struct sockaddr_in	sin = { .sin_family = AF_INET };
	socklen_t		slen = sizeof(sin);
	int			fd;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ne(fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(fd, 512), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &slen), 0);
	*port = ntohs(sin.sin_port);
	return th_start(routes, fd);
}

struct th_server *
th_start_unix(const struct th_route *routes, const char *path)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	int			fd;

	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	strcpy(sun.sun_path, path);
	ck_assert_int_ne(fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(fd, 512), 0);
	return th_start(routes, fd);
}

void
th_stop(struct th_server *srv)
{
	size_t	i;

	close(srv->stop[1]);
	pthread_join(srv->acceptor, NULL);
	for (i = 0; i < srv->nconns; i++)
		pthread_join(srv->conns[i], NULL);
	close(srv->stop[0]);
	close(srv->lfd);
	pthread_mutex_destroy(&srv->mu);
	free(srv->conns);
	free(srv->last);
	free(srv);
}

unsigned
th_requests(struct th_server *srv)
{
	unsigned	n;

	pthread_mutex_lock(&srv->mu);
	n = srv->requests;
	pthread_mutex_unlock(&srv->mu);
	return n;
}

char *
th_last_request(struct th_server *srv)
{
	char	*s;

	pthread_mutex_lock(&srv->mu);
	s = strdup(srv->last != NULL ? srv->last : "");
	pthread_mutex_unlock(&srv->mu);
	ck_assert_ptr_nonnull(s);
	return s;
}

int
th_closed_port(void)
{
	struct sockaddr_in	sin = { .sin_family = AF_INET };
	socklen_t		slen = sizeof(sin);
	int			fd;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ne(fd = socket(AF_INET, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &slen), 0);
	close(fd);
	return ntohs(sin.sin_port);
}
