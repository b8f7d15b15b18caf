/*
 * Fuzz target: HTTP API requests (src/daemon/http_api.c, the API's own small
 * server: request parsing, the routing, the bearer token's compare, and
 * the documents of src/daemon/status.c). The target starts the real API once, for
 * fuzzagent.c's agent (two services, one file probe), on a unix
 * socket in its temp dir (trusted) and a TCP one on 127.0.0.1 (the token
 * decides), passed in as systemd would (non-blocking, as src/daemon/systemd.c
 * makes them). Each input picks one by its first byte's low bit (1: TCP)
 * and is sent as the request, the write side then closed; the loop runs
 * until the server closes the connection. Whatever it answers is one
 * HTTP/1.1 status line and headers.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/http_api.h"
#include "fuzzagent.h"
#include "fuzzutil.h"

static struct event_base	*base;
static struct http_api		*api;
static struct status_daemon	 dm;
static struct sockaddr_un	 unix_sa;
static struct sockaddr_in	 tcp_sa;

static int
listener(int family)
{
	socklen_t	len;
	int		fd;

	if (family == AF_UNIX) {
		memset(&unix_sa, 0, sizeof(unix_sa));
		unix_sa.sun_family = AF_UNIX;
		snprintf(unix_sa.sun_path, sizeof(unix_sa.sun_path), "%s",
		    fz_write("http.sock", NULL, 0));
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
		if (fd == -1 || bind(fd, (struct sockaddr *)&unix_sa,
		    sizeof(unix_sa)) == -1)
			abort();
	} else {
		memset(&tcp_sa, 0, sizeof(tcp_sa));
		tcp_sa.sin_family = AF_INET;
		tcp_sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(tcp_sa);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
		if (fd == -1 || bind(fd, (struct sockaddr *)&tcp_sa,
		    sizeof(tcp_sa)) == -1 || getsockname(fd,
		    (struct sockaddr *)&tcp_sa, &len) == -1)
			abort();
	}
	if (listen(fd, 16) == -1)
		abort();
	return fd;
}

static void
stop(void)
{
	http_api_free(api);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct fz_agent	*fa;
	int			 fds[2];

	fz_init();
	fa = fz_agent();
	base = fa->base;
	fds[0] = listener(AF_UNIX);
	fds[1] = listener(AF_INET);
	if ((api = http_api_new(base, fa->cfg, fa->agent, &dm, fds, 2)) ==
	    NULL)
		abort();
	close(fds[0]);
	close(fds[1]);
	/* Registered after fz_agent's: runs before it. */
	atexit(stop);
	return 0;
}

/*
 * The client's address for the next TCP request. The server closes
 * first, so each connection leaves its pair of ports in TIME_WAIT for a
 * minute: thousands of requests a second would soon run out of ports
 * from one address. Loopback has 2^24 of them; with
 * IP_BIND_ADDRESS_NO_PORT each has its own ports.
 */
static const struct sockaddr_in *
next_source(void)
{
	static struct sockaddr_in	sa;
	static uint32_t			n;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(0x7f010000 | (n++ & 0xffff));
	return &sa;
}

/* Reads the answer away; the server closing the connection ends the loop. */
static char	reply_head[16];
static size_t	reply_len;

static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	char	buf[4096];
	ssize_t	n;
	size_t	take;

	if (what & EV_TIMEOUT) {
		event_base_loopbreak(base);
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		take = sizeof(reply_head) - reply_len;
		if (take > (size_t)n)
			take = (size_t)n;
		memcpy(reply_head + reply_len, buf, take);
		reply_len += take;
	}
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		event_base_loopbreak(base);
}

/*
 * Connects, through the EINTR that libFuzzer's timer (SIGALRM, once a
 * second) can give: the connection then goes on, and is waited for.
 */
static void
connect_to(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd	pfd = { fd, POLLOUT, 0 };
	socklen_t	elen = sizeof(int);
	int		err = 0;

	if (connect(fd, sa, len) == 0)
		return;
	if (errno != EINTR) {
		fz_note(strerror(errno), strlen(strerror(errno)));
		FZ_ASSERT(!"connect");
	}
	while (poll(&pfd, 1, -1) == -1)
		FZ_ASSERT(errno == EINTR);
	FZ_ASSERT(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0);
	FZ_ASSERT(err == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct timeval	 tv = { (HTTP_REQUEST_MS + HTTP_REPLY_MS) / 1000 + 5, 0 };
	struct event	*ev;
	bool		 tcp;
	int		 one = 1;
	size_t		 off = 0;
	ssize_t		 n;
	int		 fd;

	if (size < 1)
		return 0;
	tcp = data[0] & 1;
	data++;
	size--;
	fd = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FZ_ASSERT(fd != -1);
	if (tcp) {
		/* The port is picked at connect, for this pair of addresses. */
		FZ_ASSERT(setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT,
		    &one, sizeof(one)) == 0);
		FZ_ASSERT(bind(fd, (struct sockaddr *)next_source(),
		    sizeof(struct sockaddr_in)) == 0);
		connect_to(fd, (struct sockaddr *)&tcp_sa, sizeof(tcp_sa));
	} else
		connect_to(fd, (struct sockaddr *)&unix_sa, sizeof(unix_sa));
	/* Far below the socket's buffer: it all goes at once. */
	while (off < size) {
		if ((n = write(fd, data + off, size - off)) == -1) {
			FZ_ASSERT(errno == EINTR);
			continue;
		}
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	FZ_ASSERT(fcntl(fd, F_SETFL, O_NONBLOCK) == 0);
	ev = event_new(base, fd, EV_READ | EV_PERSIST, read_cb, NULL);
	FZ_ASSERT(ev != NULL);
	event_add(ev, &tv);
	reply_len = 0;
	event_base_dispatch(base);
	event_free(ev);
	close(fd);
	/* Nothing (a request cut short), or a status line. */
	FZ_ASSERT(reply_len == 0 || (reply_len >= 13 &&
	    memcmp(reply_head, "HTTP/1.1 ", 9) == 0));
	return 0;
}
