/*
 * tcp: a port must accept a connection; optionally we send a line and look
 * for a substring in the first line that comes back. Everything runs on
 * the event loop: the connect is non-blocking and names are resolved with
 * libevent's evdns (the hosts file, then the resolv.conf servers), never
 * with the blocking getaddrinfo(). The value is the connect latency.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include "lbagent/core/units.h"
#include "lbagent/probes/kinds.h"
#include "lbagent/probes/probe.h"
#include "lbagent/probes/tcp.h"

#define TCP_LINE_MAX	4096	/* of the first line read, for expect */
#define TCP_SHOW_MAX	60	/* of expect and of what came, in reasons */
#define TCP_HOST_MAX	253

static const char	*resolv_conf = "/etc/resolv.conf";

struct tcp_conf {
	char	*host;
	char	 port[6];
	bool	 numeric;	/* an address: nothing to resolve */
	char	*send;		/* escapes undone */
	size_t	 sendlen;
	char	*expect;
};

/*
 * Across runs of one probe: its resolver, made on first need. evdns calls
 * back a cancelled lookup later, from the loop, and touches the resolver
 * then: so the resolver lives until the last such callback, even when the
 * probe is gone (keep_free during a reload).
 */
struct tcp_keep {
	struct event_base	*base;
	struct evdns_base	*dns;
	unsigned		 lookups;	/* in flight, cancelled ones too */
	bool			 freed;		/* the probe is gone */
};

enum tcp_state {
	TCP_RESOLVING,	/* waiting for evdns */
	TCP_CONNECTING,	/* non-blocking connect in progress */
	TCP_SENDING,	/* writing `send` */
	TCP_READING,	/* reading the first line, for `expect` */
};

struct tcp_run {
	struct probe_run			*run;	/* NULL once cancelled */
	const struct tcp_conf			*conf;
	struct tcp_keep				*keep;
	enum tcp_state				 state;
	struct evdns_getaddrinfo_request	*req;
	bool					 starting;
	int					 gai_err;
	struct evutil_addrinfo			*ais;	/* all addresses */
	struct evutil_addrinfo			*ai;	/* the one tried */
	int					 fd;
	struct event				*ev;
	struct timespec				 t0;
	double					 latency_ms;
	int					 err;	/* last connect error */
	size_t					 sent;
	char					 line[TCP_LINE_MAX];
	size_t					 linelen;
};

static const struct probe_key_doc tcp_keys[] = {
	{ "address", NULL, "host:port, [IPv6]:port or name:port that must "
	    "accept a connection (required); names are resolved at each run, "
	    "from /etc/hosts, then DNS.", false },
	{ "send", NULL, "Text sent once connected; \\n, \\r, \\t and \\\\ "
	    "are escapes.", false },
	{ "expect", NULL, "Text the first line read back must contain.",
	    false },
	{ NULL, NULL, NULL, false },
};

static void	tcp_try_connect(struct tcp_run *);
static void	tcp_io_cb(evutil_socket_t, short, void *);

void
probe_tcp_resolv_conf(const char *path)
{
	resolv_conf = path;
}

static void *
tcp_conf_new(void)
{
	return calloc(1, sizeof(struct tcp_conf));
}

static void
tcp_conf_free(void *p)
{
	struct tcp_conf	*conf = p;

	if (conf == NULL)
		return;
	free(conf->host);
	free(conf->send);
	free(conf->expect);
	free(conf);
}

/* A host name as DNS and the hosts file have them. */
static bool
valid_hostname(const char *s)
{
	size_t	n = strlen(s);
	bool	digits_only = true;

	if (n == 0 || n > TCP_HOST_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (; *s != '\0'; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    *s == '-' || *s == '_')
			digits_only = false;
		else if (!((*s >= '0' && *s <= '9') || *s == '.'))
			return false;
	}
	/* 1.2.3.999 is a bad address, not a name to look up. */
	return !digits_only;
}

/* An IPv6 address, with a zone (fe80::1%eth0) for link-local ones. */
static bool
valid_ipv6(char *s)
{
	struct in6_addr	 a6;
	char		*zone = strchr(s, '%');
	bool		 ok;

	if (zone != NULL) {
		if (zone[1] == '\0' || strspn(zone + 1, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(zone + 1))
			return false;
		*zone = '\0';
	}
	ok = inet_pton(AF_INET6, s, &a6) == 1;
	if (zone != NULL)
		*zone = '%';
	return ok;
}

static int
parse_address(struct tcp_conf *conf, const char *value, const char **why)
{
	const char	*colon, *port;
	char		 host[TCP_HOST_MAX + 1];
	struct in_addr	 a4;
	uint64_t	 n;
	size_t		 len;
	bool		 numeric;

	*why = "expected host:port or [IPv6]:port";
	if (value[0] == '[') {
		if ((colon = strchr(value, ']')) == NULL || colon[1] != ':')
			return -1;
		len = (size_t)(colon - value - 1);
		port = colon + 2;
		if (len >= sizeof(host))
			return -1;
		memcpy(host, value + 1, len);
		host[len] = '\0';
		if (!valid_ipv6(host)) {
			*why = "not an IPv6 address between [ and ]";
			return -1;
		}
		numeric = true;
	} else {
		if ((colon = strrchr(value, ':')) == NULL)
			return -1;
		len = (size_t)(colon - value);
		port = colon + 1;
		if (len >= sizeof(host))
			return -1;
		memcpy(host, value, len);
		host[len] = '\0';
		if (strchr(host, ':') != NULL) {
			*why = "write an IPv6 address in brackets: [::1]:port";
			return -1;
		}
		numeric = inet_pton(AF_INET, host, &a4) == 1;
		if (!numeric && !valid_hostname(host)) {
			*why = "expected an IPv4 address or a host name before "
			    "the port";
			return -1;
		}
	}
	if (units_uint(port, &n, why) == -1 || n < 1 || n > 65535) {
		*why = "the port must be a number from 1 to 65535";
		return -1;
	}
	free(conf->host);
	if ((conf->host = strdup(host)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	snprintf(conf->port, sizeof(conf->port), "%u", (unsigned)n);
	conf->numeric = numeric;
	return 0;
}

/* Undoes \n, \r, \t and \\ in a send string. */
static int
unescape(const char *value, char **out, size_t *outlen, const char **why)
{
	char	*buf, *d;

	if (*value == '\0') {
		*why = "expected some text";
		return -1;
	}
	if ((buf = malloc(strlen(value) + 1)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	for (d = buf; *value != '\0'; value++) {
		if (*value != '\\') {
			*d++ = *value;
			continue;
		}
		switch (*++value) {
		case 'n':
			*d++ = '\n';
			break;
		case 'r':
			*d++ = '\r';
			break;
		case 't':
			*d++ = '\t';
			break;
		case '\\':
			*d++ = '\\';
			break;
		default:
			free(buf);
			*why = "unknown escape: use \\n, \\r, \\t or \\\\";
			return -1;
		}
	}
	*d = '\0';
	*out = buf;
	*outlen = (size_t)(d - buf);
	return 0;
}

static int
tcp_conf_set(void *p, const char *key, const char *value, const char **why)
{
	struct tcp_conf	*conf = p;
	char		*s;
	size_t		 len;

	if (strcmp(key, "address") == 0)
		return parse_address(conf, value, why);
	if (strcmp(key, "send") == 0) {
		if (unescape(value, &s, &len, why) == -1)
			return -1;
		free(conf->send);
		conf->send = s;
		conf->sendlen = len;
		return 0;
	}
	if (strcmp(key, "expect") == 0) {
		if (*value == '\0') {
			*why = "expected some text";
			return -1;
		}
		if (strlen(value) > TCP_LINE_MAX) {
			*why = "longer than the 4096 bytes of a line we read";
			return -1;
		}
		free(conf->expect);
		if ((conf->expect = strdup(value)) == NULL) {
			*why = "out of memory";
			return -1;
		}
		return 0;
	}
	*why = "unknown key";
	return -1;
}

static int
tcp_conf_check(void *p, const char **why)
{
	struct tcp_conf	*conf = p;

	if (conf->host == NULL) {
		*why = "address is required";
		return -1;
	}
	return 0;
}

static void
keep_destroy(struct tcp_keep *keep)
{
	if (keep->dns != NULL)
		evdns_base_free(keep->dns, 0);
	free(keep);
}

static void
keep_destroy_cb(evutil_socket_t fd, short what, void *arg)
{
	keep_destroy(arg);
}

static void
tcp_keep_free(void *p)
{
	struct tcp_keep	*keep = p;

	if (keep == NULL)
		return;
	if (keep->lookups > 0)
		keep->freed = true;	/* the last callback frees it */
	else
		keep_destroy(keep);
}

static void
tcp_release(struct tcp_run *t)
{
	if (t->ev != NULL)
		event_free(t->ev);
	if (t->fd != -1)
		close(t->fd);
	if (t->ais != NULL)
		evutil_freeaddrinfo(t->ais);
	free(t);
}

/* Releases the run, then reports it: the order probe_report() asks for. */
static void LOG_PRINTF(3, 4)
tcp_finish(struct tcp_run *t, enum probe_result result, const char *fmt, ...)
{
	struct probe_run	*run = t->run;
	double			 value = t->latency_ms;
	char			 reason[PROBE_REASON_MAX + 1];
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	run->data = NULL;
	tcp_release(t);
	probe_report(run, result, value, "%s", reason);
}

static void
tcp_wait(struct tcp_run *t, short what)
{
	if (t->ev != NULL)
		event_free(t->ev);
	t->ev = event_new(t->run->env->base, t->fd, what, tcp_io_cb, t);
	if (t->ev == NULL || event_add(t->ev, NULL) == -1)
		tcp_finish(t, PROBE_UNKNOWN, "cannot watch the socket (%s)",
		    probe_errno_local(ENOMEM));
}

/* Up to TCP_SHOW_MAX bytes of s for a reason, "..." when cut. */
static const char *
shown(char buf[TCP_SHOW_MAX + 4], const char *s, size_t len)
{
	size_t	i, n = len <= TCP_SHOW_MAX ? len : TCP_SHOW_MAX;

	/* probe_report() makes the rest printable; these would cut it. */
	for (i = 0; i < n; i++)
		buf[i] = s[i] == '\0' || s[i] == '\n' || s[i] == '\r' ? '?' : s[i];
	memcpy(buf + n, len > n ? "..." : "", len > n ? 4 : 1);
	return buf;
}

/* The first line is in: does it hold what we expect? */
static void
tcp_check_line(struct tcp_run *t)
{
	const char	*expect = t->conf->expect;
	char		*nl, got[TCP_SHOW_MAX + 4], want[TCP_SHOW_MAX + 4];
	size_t		 len = t->linelen;

	if ((nl = memchr(t->line, '\n', len)) != NULL)
		len = (size_t)(nl - t->line);
	if (len > 0 && t->line[len - 1] == '\r')
		len--;
	if (memmem(t->line, len, expect, strlen(expect)) != NULL) {
		tcp_finish(t, PROBE_OK, "connected in %.1fms, got \"%s\"",
		    t->latency_ms, shown(want, expect, strlen(expect)));
		return;
	}
	tcp_finish(t, PROBE_CRIT, "expected \"%s\" got \"%s\"",
	    shown(want, expect, strlen(expect)), shown(got, t->line, len));
}

static void
tcp_read(struct tcp_run *t)
{
	ssize_t	n;

	for (;;) {
		n = recv(t->fd, t->line + t->linelen,
		    sizeof(t->line) - t->linelen, 0);
		if (n > 0) {
			t->linelen += (size_t)n;
			if (memchr(t->line + t->linelen - (size_t)n, '\n',
			    (size_t)n) != NULL || t->linelen == sizeof(t->line)) {
				tcp_check_line(t);
				return;
			}
			continue;
		}
		if (n == 0) {
			/* A last line without its newline still counts. */
			if (t->linelen > 0)
				tcp_check_line(t);
			else
				tcp_finish(t, PROBE_CRIT, "closed before a line");
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			tcp_wait(t, EV_READ);
			return;
		}
		if (errno == ECONNRESET)
			tcp_finish(t, PROBE_CRIT, "connection reset");
		else
			tcp_finish(t, PROBE_CRIT, "read: %s", strerror(errno));
		return;
	}
}

/* Connected, or `send` written: what comes next. */
static void
tcp_next(struct tcp_run *t)
{
	if (t->conf->expect != NULL) {
		t->state = TCP_READING;
		tcp_read(t);
		return;
	}
	tcp_finish(t, PROBE_OK, "connected in %.1fms", t->latency_ms);
}

static void
tcp_send(struct tcp_run *t)
{
	const struct tcp_conf	*conf = t->conf;
	ssize_t			 n;

	while (t->sent < conf->sendlen) {
		n = send(t->fd, conf->send + t->sent, conf->sendlen - t->sent,
		    MSG_NOSIGNAL);
		if (n >= 0) {
			t->sent += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			tcp_wait(t, EV_WRITE);
			return;
		}
		if (errno == ECONNRESET || errno == EPIPE)
			tcp_finish(t, PROBE_CRIT, "connection closed while "
			    "sending");
		else
			tcp_finish(t, PROBE_CRIT, "send: %s", strerror(errno));
		return;
	}
	tcp_next(t);
}

static void
tcp_connected(struct tcp_run *t)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t->latency_ms = (double)(now.tv_sec - t->t0.tv_sec) * 1e3 +
	    (double)(now.tv_nsec - t->t0.tv_nsec) / 1e6;
	if (t->conf->send != NULL) {
		t->state = TCP_SENDING;
		tcp_send(t);
		return;
	}
	tcp_next(t);
}

/* The connect to t->ai failed with err: try the next address. */
static void
tcp_connect_failed(struct tcp_run *t, int err)
{
	t->err = err;
	if (t->ev != NULL) {
		event_free(t->ev);
		t->ev = NULL;
	}
	close(t->fd);
	t->fd = -1;
	t->ai = t->ai->ai_next;
	tcp_try_connect(t);
}

static void
tcp_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_run	*t = arg;
	int		 err = 0;
	socklen_t	 len = sizeof(err);

	switch (t->state) {
	case TCP_CONNECTING:
		if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
			err = errno;
		if (err != 0)
			tcp_connect_failed(t, err);
		else
			tcp_connected(t);
		break;
	case TCP_SENDING:
		tcp_send(t);
		break;
	case TCP_READING:
		tcp_read(t);
		break;
	case TCP_RESOLVING:
		break;
	}
}

/* Tries t->ai and the addresses after it, until one connects. */
static void
tcp_try_connect(struct tcp_run *t)
{
	const char	*local;

	t->state = TCP_CONNECTING;
	for (; t->ai != NULL; t->ai = t->ai->ai_next) {
		t->fd = socket(t->ai->ai_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (t->fd == -1) {
			t->err = errno;
			/* No descriptor for us: nothing learnt of the peer. */
			if ((local = probe_errno_local(t->err)) != NULL) {
				tcp_finish(t, PROBE_UNKNOWN, "socket: %s (%s)",
				    strerror(t->err), local);
				return;
			}
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t->t0);
		if (connect(t->fd, t->ai->ai_addr,
		    (socklen_t)t->ai->ai_addrlen) == 0) {
			tcp_connected(t);
			return;
		}
		if (errno == EINPROGRESS) {
			tcp_wait(t, EV_WRITE);
			return;
		}
		t->err = errno;
		close(t->fd);
		t->fd = -1;
	}
	switch (t->err) {
	case ECONNREFUSED:
		tcp_finish(t, PROBE_CRIT, "connection refused");
		break;
	case ENETUNREACH:
		tcp_finish(t, PROBE_CRIT, "network unreachable");
		break;
	case EHOSTUNREACH:
		tcp_finish(t, PROBE_CRIT, "host unreachable");
		break;
	case ETIMEDOUT:
		tcp_finish(t, PROBE_CRIT, "connect timed out");
		break;
	default:
		tcp_finish(t, PROBE_CRIT, "connect: %s", strerror(t->err));
		break;
	}
}

/* The addresses are known (or not): connect. */
static void
tcp_resolved(struct tcp_run *t, int err, struct evutil_addrinfo *res)
{
	t->ais = t->ai = res;
	if (err != 0 || res == NULL) {
		tcp_finish(t, PROBE_CRIT, "cannot resolve %s: %s",
		    t->conf->host, err != 0 ? evutil_gai_strerror(err) :
		    "no address");
		return;
	}
	t->err = ENOENT;
	tcp_try_connect(t);
}

static void
tcp_dns_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct tcp_run	*t = arg;
	struct tcp_keep	*keep = t->keep;

	if (t->starting) {
		/* Answered at once (hosts file): tcp_start carries on. */
		t->gai_err = err;
		t->ais = res;
		return;
	}
	t->req = NULL;
	keep->lookups--;
	if (t->run != NULL) {
		tcp_resolved(t, err, res);
		return;
	}
	/* Cancelled: the run is gone, only this is left. */
	if (res != NULL)
		evutil_freeaddrinfo(res);
	free(t);
	if (keep->freed && keep->lookups == 0 &&
	    event_base_once(keep->base, -1, EV_TIMEOUT, keep_destroy_cb, keep,
	    NULL) == -1) {
		/* Not from inside evdns's own callback, unless we must. */
		keep_destroy(keep);
	}
}

/* The probe's resolver: once made, kept for its later runs. */
static struct tcp_keep *
tcp_dns(struct probe_run *run)
{
	struct tcp_keep	*keep = run->keep;

	if (keep == NULL) {
		if ((keep = calloc(1, sizeof(*keep))) == NULL)
			return NULL;
		keep->base = run->env->base;
		run->keep = keep;
	}
	if (keep->dns == NULL) {
		keep->dns = evdns_base_new(run->env->base,
		    EVDNS_BASE_DISABLE_WHEN_INACTIVE);
		if (keep->dns == NULL)
			return NULL;
		/* Errors leave the hosts file and a loopback server. */
		(void)evdns_base_resolv_conf_parse(keep->dns, DNS_OPTIONS_ALL,
		    resolv_conf);
	}
	return keep;
}

static void
tcp_start(struct probe_run *run)
{
	const struct tcp_conf	*conf = run->conf;
	struct evutil_addrinfo	 hints, *res = NULL;
	struct tcp_run		*t;
	int			 err;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	t->run = run;
	t->conf = conf;
	t->fd = -1;
	t->latency_ms = NAN;
	t->state = TCP_RESOLVING;
	run->data = t;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	if (conf->numeric) {
		/* No lookup can happen: the host is an address. */
		hints.ai_flags = EVUTIL_AI_NUMERICHOST | EVUTIL_AI_NUMERICSERV;
		err = evutil_getaddrinfo(conf->host, conf->port, &hints, &res);
		tcp_resolved(t, err, res);
		return;
	}
	if ((t->keep = tcp_dns(run)) == NULL) {
		tcp_finish(t, PROBE_UNKNOWN, "cannot set up the resolver (%s)",
		    probe_errno_local(ENOMEM));
		return;
	}
	t->starting = true;
	t->gai_err = EVUTIL_EAI_FAIL;
	t->req = evdns_getaddrinfo(t->keep->dns, conf->host, conf->port,
	    &hints, tcp_dns_cb, t);
	t->starting = false;
	if (t->req == NULL) {
		tcp_resolved(t, t->gai_err, t->ais);
		return;
	}
	t->keep->lookups++;
}

/* The timeout passed: drop the lookup or the connection, never report. */
static void
tcp_cancel(struct probe_run *run)
{
	struct tcp_run	*t = run->data;

	if (t == NULL)
		return;
	run->data = NULL;
	if (t->req != NULL) {
		/* evdns calls tcp_dns_cb once more; it frees t. */
		t->run = NULL;
		evdns_getaddrinfo_cancel(t->req);
		return;
	}
	tcp_release(t);
}

const struct probe_ops probe_tcp_ops = {
	.name = "tcp",
	.unit = "ms",
	.keys = tcp_keys,
	.windowed = true,
	.conf_new = tcp_conf_new,
	.conf_free = tcp_conf_free,
	.conf_set = tcp_conf_set,
	.conf_check = tcp_conf_check,
	.start = tcp_start,
	.cancel = tcp_cancel,
	.keep_free = tcp_keep_free,
};
