/*
 * systemd's notify protocol and socket activation, written directly: the
 * protocol is one datagram of "KEY=VALUE" lines to an AF_UNIX socket, and
 * the sockets are descriptors 3 onwards, described by three variables.
 * libsystemd would be a dependency for about a hundred lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lbagent/core/text.h"
#include "lbagent/daemon/systemd.h"

#define LISTEN_FDS_START	3
/* More passed sockets than this is a broken environment, not a setup. */
#define LISTEN_FDS_MAX		1024
#define NOTIFY_MSG_MAX		(SYSTEMD_STATUS_MAX + 64)

static struct {
	int			 fd;		/* -1: notify is off */
	struct sockaddr_un	 sa;
	socklen_t		 salen;
	bool			 failing;	/* the last send failed; logged */
	bool			 status_sent;
	char			 status[SYSTEMD_STATUS_MAX + 1];
	uint64_t		 watchdog_us;	/* ping interval; 0: none */
	struct event		*watchdog_ev;
} sd = { .fd = -1 };

/* A decimal number, all of s, at most max; -1 when it is not one. */
static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* NOTIFY_SOCKET as an address: "/path" or "@abstract". */
static int
notify_address(const char *s, struct sockaddr_un *sa, socklen_t *salen)
{
	size_t	len = strlen(s);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((s[0] != '/' && s[0] != '@') || len < 2)
		return -1;
	if (len > sizeof(sa->sun_path) - (s[0] == '/'))
		return -1;
	memcpy(sa->sun_path, s, len);
	if (s[0] == '@') {
		/* Abstract: a leading NUL, and the length says where it ends. */
		sa->sun_path[0] = '\0';
		*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else
		*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    len + 1);
	return 0;
}

static void
watchdog_init(void)
{
	const char	*usec = getenv("WATCHDOG_USEC");
	const char	*pid = getenv("WATCHDOG_PID");
	uint64_t	 us, p;

	sd.watchdog_us = 0;
	if (usec == NULL)
		return;
	if (parse_u64(usec, UINT64_MAX, &us) == -1 || us == 0) {
		log_warnx("systemd: WATCHDOG_USEC=\"%.32s\" is not a positive "
		    "number of microseconds: no watchdog pings", usec);
		return;
	}
	if (pid != NULL && (parse_u64(pid, INT_MAX, &p) == -1 ||
	    p != (uint64_t)getpid())) {
		log_info("systemd: the watchdog is for pid %.32s, not this one",
		    pid);
		return;
	}
	sd.watchdog_us = us / 2 > 0 ? us / 2 : 1;
}

void
systemd_init(void)
{
	const char	*path = getenv("NOTIFY_SOCKET");

	systemd_close();
	watchdog_init();
	if (path != NULL && path[0] != '\0') {
		if (notify_address(path, &sd.sa, &sd.salen) == -1)
			log_warnx("systemd: NOTIFY_SOCKET=\"%.120s\" is not an "
			    "absolute path or @abstract name that fits a unix "
			    "socket address: not notifying systemd", path);
		else if ((sd.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0)) == -1)
			log_warn("systemd: notify socket");
	}
	if (sd.fd == -1)
		sd.watchdog_us = 0;	/* nobody to ping */
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

void
systemd_close(void)
{
	if (sd.watchdog_ev != NULL)
		event_free(sd.watchdog_ev);
	sd.watchdog_ev = NULL;
	sd.watchdog_us = 0;
	if (sd.fd != -1)
		close(sd.fd);
	sd.fd = -1;
	sd.failing = false;
	sd.status_sent = false;
	sd.status[0] = '\0';
}

bool
systemd_notify_enabled(void)
{
	return sd.fd != -1;
}

/* The first line of msg, for a log line about it. */
static int
first_line_len(const char *msg)
{
	size_t	n = strcspn(msg, "\n");

	return n > 40 ? 40 : (int)n;
}

int
systemd_notify(const char *msg)
{
	size_t	len = strlen(msg);
	ssize_t	n;

	if (sd.fd == -1)
		return -1;
	do {
		/* A datagram socket that cannot take it now drops it: EAGAIN. */
		n = sendto(sd.fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL,
		    (const struct sockaddr *)&sd.sa, sd.salen);
	} while (n == -1 && errno == EINTR);
	if (n == -1) {
		if (!sd.failing)
			log_warn("systemd: cannot send %.*s to the notify "
			    "socket (further failures are not logged)",
			    first_line_len(msg), msg);
		sd.failing = true;
		return -1;
	}
	if (sd.failing)
		log_notice("systemd: the notify socket takes messages again");
	sd.failing = false;
	return 0;
}

int
systemd_notifyf(const char *fmt, ...)
{
	char	msg[NOTIFY_MSG_MAX];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(msg)) {
		log_warnx("systemd: notify message too long, not sent");
		return -1;
	}
	return systemd_notify(msg);
}

int
systemd_ready(void)
{
	return systemd_notify("READY=1");
}

int
systemd_reloading(void)
{
	struct timespec	ts;

	/* systemd >= 253 wants the time, to tell this reload from an old one. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return systemd_notifyf("RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
	    (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

int
systemd_stopping(void)
{
	return systemd_notify("STOPPING=1");
}

void
systemd_status(const char *line)
{
	char	text[SYSTEMD_STATUS_MAX + 1];

	if (sd.fd == -1 || line == NULL)
		return;
	/* One line: a newline would start another assignment. */
	text_line(text, SYSTEMD_STATUS_MAX, line, strlen(line));
	if (sd.status_sent && strcmp(text, sd.status) == 0)
		return;
	if (systemd_notifyf("STATUS=%s", text) == -1)
		return;		/* tried again with the next line */
	memcpy(sd.status, text, sizeof(text));
	sd.status_sent = true;
}

uint64_t
systemd_watchdog_interval_us(void)
{
	return sd.watchdog_us;
}

static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	systemd_notify("WATCHDOG=1");
}

int
systemd_watchdog_start(struct event_base *base)
{
	struct timeval	tv;

	if (sd.watchdog_us == 0 || sd.watchdog_ev != NULL)
		return 0;
	tv.tv_sec = (time_t)(sd.watchdog_us / 1000000);
	tv.tv_usec = (suseconds_t)(sd.watchdog_us % 1000000);
	sd.watchdog_ev = event_new(base, -1, EV_PERSIST, watchdog_cb, NULL);
	if (sd.watchdog_ev == NULL || event_add(sd.watchdog_ev, &tv) == -1) {
		log_errx("systemd: cannot start the watchdog timer");
		if (sd.watchdog_ev != NULL)
			event_free(sd.watchdog_ev);
		sd.watchdog_ev = NULL;
		return -1;
	}
	log_info("systemd: watchdog pings every %" PRIu64 " ms",
	    sd.watchdog_us / 1000);
	return 0;
}

/* Why fd cannot be a listening socket for us; NULL when it can. */
static const char *
socket_problem(int fd, bool http)
{
	struct sockaddr_storage	ss;
	socklen_t		len;
	int			v;

	if (fcntl(fd, F_GETFD) == -1)
		return "is not open";
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1)
		return errno == ENOTSOCK ? "is not a socket" : strerror(errno);
	if (v != SOCK_STREAM)
		return "is not a stream socket (want ListenStream=)";
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1)
		return strerror(errno);
	if (!v)
		return "is not listening (Accept=yes is not supported)";
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return strerror(errno);
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6 &&
	    !(http && ss.ss_family == AF_UNIX))
		return http ? "is not a TCP or unix socket" :
		    "is not a TCP socket (the agent port is TCP)";
	return NULL;
}

static int
push_fd(int **arr, size_t *n, int fd)
{
	int	*grown = realloc(*arr, (*n + 1) * sizeof(**arr));

	if (grown == NULL)
		return -1;
	*arr = grown;
	grown[(*n)++] = fd;
	return 0;
}

/* Splits LISTEN_FDNAMES into count names; -1 when it has another count. */
static int
split_names(char *names, char **out, size_t count)
{
	size_t	i = 0;
	char	*p = names;

	for (;;) {
		if (i == count)
			return -1;
		out[i++] = p;
		if ((p = strchr(p, ':')) == NULL)
			break;
		*p++ = '\0';
	}
	return i == count ? 0 : -1;
}

/* Whether a descriptor's name gives it to the HTTP API. */
static bool
named_http(const char *name)
{
	return name != NULL && strcmp(name, SYSTEMD_FDNAME_HTTP) == 0;
}

/*
 * How many descriptors systemd passed to this process: *count, 0 when
 * none or when they are another process's; -1 (logged) when LISTEN_PID
 * or LISTEN_FDS is not what it should be.
 */
static int
fds_count(const char *pid_s, const char *fds_s, uint64_t *count)
{
	uint64_t	pid;

	*count = 0;
	if (parse_u64(pid_s, INT_MAX, &pid) == -1 || pid == 0) {
		log_errx("socket activation: LISTEN_PID=\"%.32s\" is not a "
		    "process id", pid_s);
		return -1;
	}
	if (pid != (uint64_t)getpid()) {
		log_notice("socket activation: LISTEN_PID=%" PRIu64 " is not "
		    "this process (%ld): binding as configured", pid,
		    (long)getpid());
		return 0;
	}
	if (fds_s == NULL)
		return 0;
	if (parse_u64(fds_s, LISTEN_FDS_MAX, count) == -1) {
		log_errx("socket activation: LISTEN_FDS=\"%.32s\" is not a "
		    "number of descriptors (0 to %d)", fds_s, LISTEN_FDS_MAX);
		*count = 0;
		return -1;
	}
	return 0;
}

/*
 * Whether every descriptor is a listening socket of the kind its name
 * asks for; -1 otherwise, each one that is not logged.
 */
static int
check_fds(char **name, uint64_t count)
{
	size_t	i;
	int	bad = 0;

	for (i = 0; i < count; i++) {
		int		 fd = LISTEN_FDS_START + (int)i;
		const char	*why = socket_problem(fd, named_http(name[i]));

		if (why != NULL) {
			log_errx("socket activation: descriptor %d (%s%.64s) %s",
			    fd, name[i] != NULL ? "named " : "unnamed",
			    name[i] != NULL ? name[i] : "", why);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/*
 * Takes the descriptors into s, the agent port's and the HTTP API's
 * apart, each close-on-exec and non-blocking; -1 (logged) on failure.
 */
static int
keep_fds(struct systemd_sockets *s, char **name, uint64_t count)
{
	size_t	i;

	for (i = 0; i < count; i++) {
		int	fd = LISTEN_FDS_START + (int)i;
		bool	http = named_http(name[i]);
		int	fl = fcntl(fd, F_GETFL);

		/* Neither probes nor anything else we run may keep them. */
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 || fl == -1 ||
		    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1) {
			log_err("socket activation: descriptor %d", fd);
			return -1;
		}
		if (push_fd(http ? &s->http : &s->agent,
		    http ? &s->nhttp : &s->nagent, fd) == -1) {
			log_errx("socket activation: out of memory");
			return -1;
		}
	}
	return 0;
}

/* The work of systemd_listen_fds, before the environment is cleaned up. */
static int
take_fds(struct systemd_sockets *s, const char *pid_s, const char *fds_s,
    const char *names_s)
{
	char		*names = NULL, **name = NULL;
	uint64_t	 count;
	int		 rc = -1;

	if (fds_count(pid_s, fds_s, &count) == -1)
		return -1;
	if (count == 0)
		return 0;
	if ((name = calloc(count, sizeof(*name))) == NULL ||
	    (names_s != NULL && (names = strdup(names_s)) == NULL)) {
		log_errx("socket activation: out of memory");
		goto out;
	}
	if (names_s != NULL && split_names(names, name, count) == -1) {
		log_errx("socket activation: LISTEN_FDNAMES=\"%.200s\" "
		    "does not name the %" PRIu64 " descriptor(s) of "
		    "LISTEN_FDS", names_s, count);
		goto out;
	}
	if (check_fds(name, count) == -1 || keep_fds(s, name, count) == -1)
		goto out;
	log_notice("socket activation: %zu socket(s) for the agent port, "
	    "instead of [agent] listen", s->nagent);
	if (s->nhttp > 0)
		log_notice("socket activation: %zu socket(s) named \"%s\" kept "
		    "for the HTTP API, which this version does not serve yet",
		    s->nhttp, SYSTEMD_FDNAME_HTTP);
	rc = 0;
out:
	if (rc == -1) {
		/* Nothing taken: the caller exits, the descriptors stay. */
		free(s->agent);
		free(s->http);
		memset(s, 0, sizeof(*s));
	}
	free(names);
	free(name);
	return rc;
}

int
systemd_listen_fds(struct systemd_sockets *s)
{
	const char	*pid = getenv("LISTEN_PID");
	int		 rc = 0;

	memset(s, 0, sizeof(*s));
	if (pid != NULL)
		rc = take_fds(s, pid, getenv("LISTEN_FDS"),
		    getenv("LISTEN_FDNAMES"));
	else if (getenv("LISTEN_FDS") != NULL)
		log_notice("socket activation: LISTEN_FDS without LISTEN_PID "
		    "ignored: binding as configured");
	/* Probe commands must not take our sockets for theirs. */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return rc;
}

void
systemd_sockets_free(struct systemd_sockets *s)
{
	size_t	i;

	for (i = 0; i < s->nagent; i++)
		close(s->agent[i]);
	for (i = 0; i < s->nhttp; i++)
		close(s->http[i]);
	free(s->agent);
	free(s->http);
	memset(s, 0, sizeof(*s));
}
