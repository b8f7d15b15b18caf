/*
 * The HTTP API's listening sockets: the configured addresses bound (TCP,
 * or unix sockets that replace one left by an earlier run), the sockets
 * systemd passed, a reload that keeps the sockets whose address stays,
 * with their connections, and the pauses of accepting ([http] max_rate).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/sys/net.h"
#include "lbagent/daemon/http_server.h"

#include "http_server_impl.h"

struct bind_ctx {
	struct http_server	*srv;
	const char	*key;
};

static int
tcp_bound(int fd, const struct sockaddr *sa, void *arg)
{
	struct bind_ctx	*ctx = arg;
	char		 text[80];

	if (http_server_sock_add(ctx->srv, fd, HTTP_BACKLOG, false, ctx->key, NULL) == -1)
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
bind_unix(struct http_server *srv, const char *path, const char *key,
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
	if (http_server_sock_add(srv, fd, HTTP_BACKLOG, true, key, copy) == -1)
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
listen_all(struct http_server *srv, const struct config *cfg, bool mark_only)
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
		for (k = 0, have = false; k < srv->nsocks; k++) {
			if (!srv->socks[k]->passed &&
			    strcmp(srv->socks[k]->key, key) == 0) {
				srv->socks[k]->wanted = true;
				have = true;
			}
		}
		if (have || mark_only)
			continue;
		ctx.srv = srv;
		ctx.key = key;
		if (l->is_unix ? bind_unix(srv, l->path, key, where) == -1 :
		    net_bind(&l->tcp, where, tcp_bound, &ctx) == -1)
			rc = -1;
	}
	return rc;
}

int
http_server_listen(struct http_server *srv, const struct config *cfg)
{
	return listen_all(srv, cfg, false);
}

int
http_server_adopt(struct http_server *srv, const int *fds, size_t nfds)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	size_t			 i;
	int			 fd;

	for (i = 0; i < nfds; i++) {
		len = sizeof(ss);
		/* The API closes what it accepts on; main keeps the original. */
		if (getsockname(fds[i], (struct sockaddr *)&ss, &len) == -1 ||
		    (fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) == -1) {
			log_err("http: passed descriptor %d", fds[i]);
			return -1;
		}
		if (http_server_sock_add(srv, fd, 0, ss.ss_family == AF_UNIX, "",
		    NULL) == -1)
			return -1;
		log_notice("http API on the socket systemd passed (%s)",
		    ss.ss_family == AF_UNIX ? "unix: detail for every caller" :
		    "TCP");
	}
	return 0;
}

int
http_server_reload(struct http_server *srv, const struct config *cfg)
{
	size_t	i, k;
	int	rc;

	for (i = 0; i < srv->nsocks; i++)
		srv->socks[i]->wanted = srv->socks[i]->passed;
	/* Mark what stays, close what goes (a path may be bound anew), bind. */
	listen_all(srv, cfg, true);
	for (i = 0, k = 0; i < srv->nsocks; i++) {
		struct http_sock *sock = srv->socks[i];

		if (sock->wanted) {
			srv->socks[k++] = sock;
			continue;
		}
		log_notice("reload: the http API no longer listens on %s",
		    sock->key);
		http_server_sock_drain(sock);
		http_server_sock_free(sock);
	}
	srv->nsocks = k;
	rc = listen_all(srv, cfg, false);
	http_server_resume(srv);
	return rc;
}

void
http_server_socks_sync(struct http_server *srv)
{
	size_t	i;

	for (i = 0; i < srv->nsocks; i++) {
		struct http_sock *sock = srv->socks[i];

		if (srv->paused || (srv->rate_paused && !sock->trusted))
			event_del(sock->ev);
		else
			event_add(sock->ev, NULL);
	}
}

bool
http_server_rate_allows(struct http_sock *sock)
{
	return sock->trusted ||
	    bucket_wait_ms(&sock->srv->rate, clock_now_ms(), 1) == 0;
}

void
http_server_rate_took(struct http_sock *sock)
{
	if (!sock->trusted)
		(void)bucket_take(&sock->srv->rate, clock_now_ms());
}

/*
 * Past [http] max_rate: the TCP sockets stop accepting (the kernel queues
 * what comes, up to the backlog, and then drops it: clients retry) until
 * the rate allows a turn's accepts again (waking once per connection
 * would cost more than the connections). Nothing else is that cheap
 * against a client that comes again the moment it is answered, however
 * it is answered.
 */
void
http_server_rate_pause(struct http_server *srv)
{
	uint64_t	wait_ms = bucket_wait_ms(&srv->rate, clock_now_ms(),
			    HTTP_ACCEPT_BATCH);
	struct timeval	tv;

	if (srv->rate_paused)
		return;
	if (wait_ms == 0)
		wait_ms = 1;
	srv->rate_paused = true;
	srv->rate_waits++;
	log_limited(&srv->rate_limit, LOG_WARNING, "http API: more than "
	    "[http] max_rate (%llu) TCP connections a second: accepting "
	    "waits, the kernel queues the rest",
	    (unsigned long long)srv->rate.rate);
	http_server_socks_sync(srv);
	tv.tv_sec = (time_t)(wait_ms / 1000);
	tv.tv_usec = (suseconds_t)(wait_ms % 1000) * 1000;
	event_add(srv->rate_ev, &tv);
}

void
http_server_rate_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_server	*srv = arg;

	(void)fd;
	(void)what;
	srv->rate_paused = false;
	http_server_socks_sync(srv);
}
