/*
 * tcp probes: configuration errors, and real runs against real sockets in
 * this process: listening, closed, silent, a tiny PING/+PONG server, a
 * peer that hangs up, and names answered by a tiny DNS server on loopback.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lbagent/probes/kinds.h"
#include "lbagent/probes/tcp.h"
#include "probeutil.h"
#include "testutil.h"

#define RUN_LIMIT_MS	20000

/* ---- sockets */

/* A socket bound to a loopback address with a free port; -1 if none. */
static int
bound(int family, int type, int *port)
{
	struct sockaddr_storage	ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len;
	int			 fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	}
	if ((fd = socket(family, type | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? sin->sin_port : sin6->sin6_port);
	return fd;
}

/* A listening TCP socket; the kernel accepts into its backlog. */
static int
listening(int family, int *port)
{
	int	fd = bound(family, SOCK_STREAM, port);

	if (fd != -1 && listen(fd, 16) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- a one-connection server in a thread */

struct server {
	int		 lfd;
	int		 port;
	bool		 read_line;	/* read a line before answering */
	const char	*reply;		/* then write this (NULL: nothing) */
	size_t		 replylen;
	char		 got[256];	/* the line read */
	pthread_t	 th;
};

static void *
server_main(void *arg)
{
	struct server	*sv = arg;
	size_t		 n = 0;
	ssize_t		 r;
	int		 fd;

	if ((fd = accept(sv->lfd, NULL, NULL)) == -1)
		return NULL;
	while (sv->read_line && n < sizeof(sv->got) - 1) {
		if ((r = read(fd, sv->got + n, sizeof(sv->got) - 1 - n)) <= 0)
			break;
		n += (size_t)r;
		if (memchr(sv->got, '\n', n) != NULL)
			break;
	}
	sv->got[n] = '\0';
	if (sv->reply != NULL)
		(void)!write(fd, sv->reply, sv->replylen);
	close(fd);
	return NULL;
}

static void
server_start(struct server *sv, bool read_line, const char *reply,
    long replylen)
{
	memset(sv, 0, sizeof(*sv));
	ck_assert_int_ne(sv->lfd = listening(AF_INET, &sv->port), -1);
	sv->read_line = read_line;
	sv->reply = reply;
	sv->replylen = reply == NULL ? 0 :
	    replylen < 0 ? strlen(reply) : (size_t)replylen;
	ck_assert_int_eq(pthread_create(&sv->th, NULL, server_main, sv), 0);
}

static void
server_join(struct server *sv)
{
	ck_assert_int_eq(pthread_join(sv->th, NULL), 0);
	close(sv->lfd);
}

/* ---- a tiny DNS server: db.test is 127.0.0.1, nothing else exists */

struct dns {
	int		 fd;
	int		 port;
	bool		 answer;	/* false: never answers */
	atomic_int	 queries;
	atomic_bool	 stop;
	pthread_t	 th;
	char		 conf[64];	/* resolv.conf's path */
};

/* Answers one query in buf (n bytes) into out; returns its length. */
static size_t
dns_answer(const unsigned char *buf, size_t n, unsigned char *out)
{
	static const unsigned char a_record[] = {
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1
	};
	char	 name[256];
	size_t	 i = 12, len = 0, qend;
	int	 qtype;
	bool	 known;

	if (n < 12)
		return 0;
	while (i < n && buf[i] != 0 && len + buf[i] + 1 < sizeof(name)) {
		if (len > 0)
			name[len++] = '.';
		memcpy(name + len, buf + i + 1, buf[i]);
		len += buf[i];
		i += (size_t)buf[i] + 1;
	}
	name[len] = '\0';
	if ((qend = i + 5) > n)
		return 0;
	qtype = buf[i + 1] << 8 | buf[i + 2];
	known = strcasecmp(name, "db.test") == 0;
	memcpy(out, buf, qend);
	out[2] = 0x81;				/* a response, RD */
	out[3] = known ? 0x80 : 0x83;		/* RA; NXDOMAIN */
	out[4] = 0, out[5] = 1;			/* the question */
	out[6] = 0, out[7] = known && qtype == 1;
	memset(out + 8, 0, 4);
	if (known && qtype == 1) {
		memcpy(out + qend, a_record, sizeof(a_record));
		return qend + sizeof(a_record);
	}
	return qend;
}

static void *
dns_main(void *arg)
{
	struct dns		*d = arg;
	struct pollfd		 pfd = { d->fd, POLLIN, 0 };
	struct sockaddr_storage	 from;
	socklen_t		 fromlen;
	unsigned char		 buf[512], out[600];
	ssize_t			 n;
	size_t			 len;

	while (!atomic_load(&d->stop)) {
		if (poll(&pfd, 1, 50) != 1)
			continue;
		fromlen = sizeof(from);
		n = recvfrom(d->fd, buf, sizeof(buf), 0,
		    (struct sockaddr *)&from, &fromlen);
		if (n <= 0)
			continue;
		atomic_fetch_add(&d->queries, 1);
		if (d->answer && (len = dns_answer(buf, (size_t)n, out)) > 0)
			(void)sendto(d->fd, out, len, 0,
			    (struct sockaddr *)&from, fromlen);
	}
	return NULL;
}

/* Starts the server and points the tcp probes' resolver at it. */
static void
dns_start(struct dns *d, const char *dir, bool answer)
{
	char	text[128], *path;

	memset(d, 0, sizeof(*d));
	d->answer = answer;
	ck_assert_int_ne(d->fd = bound(AF_INET, SOCK_DGRAM, &d->port), -1);
	snprintf(text, sizeof(text), "nameserver 127.0.0.1:%d\n"
	    "options timeout:5 attempts:1\n", d->port);
	path = tu_write(dir, "resolv.conf", text, -1);
	snprintf(d->conf, sizeof(d->conf), "%s", path);
	free(path);
	probe_tcp_resolv_conf(d->conf);
	ck_assert_int_eq(pthread_create(&d->th, NULL, dns_main, d), 0);
}

static void
dns_stop(struct dns *d)
{
	atomic_store(&d->stop, true);
	ck_assert_int_eq(pthread_join(d->th, NULL), 0);
	close(d->fd);
	probe_tcp_resolv_conf("/etc/resolv.conf");
}

/* ---- checks */

static void
expect_reason(const struct probe_outcome *out, enum probe_result result,
    const char *reason)
{
	ck_assert_msg(out->result == result, "%s, want %s (%s)",
	    probe_result_name(out->result), probe_result_name(result),
	    out->reason);
	ck_assert_str_eq(out->reason, reason);
}

/* ok, connected: a latency in the value and at the reason's start. */
static void
expect_connected(const struct probe_outcome *out, const char *suffix)
{
	char	want[PROBE_REASON_MAX + 1];

	ck_assert_msg(out->result == PROBE_OK, "%s: %s",
	    probe_result_name(out->result), out->reason);
	ck_assert(isfinite(out->value) && out->value >= 0);
	snprintf(want, sizeof(want), "connected in %.1fms%s", out->value,
	    suffix);
	ck_assert_str_eq(out->reason, want);
}

static void
set_address(struct pu *pu, const char *host, int port)
{
	char	addr[128];

	snprintf(addr, sizeof(addr), "%s:%d", host, port);
	pu_set(pu, "address", addr);
	pu_check(pu);
}

START_TEST(conf_errors)
{
	struct pu	 pu;
	const char	*hostport = "expected host:port or [IPv6]:port";
	const char	*portrange = "the port must be a number from 1 to 65535";
	char		 longline[5000];

	pu_init(&pu, &probe_tcp_ops, NULL);
	ck_assert_str_eq(pu_check_bad(&pu), "address is required");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "localhost"), hostport);
	ck_assert_str_eq(pu_set_bad(&pu, "address", ":80"),
	    "expected an IPv4 address or a host name before the port");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "host:"), portrange);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "host:0"), portrange);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "host:65536"), portrange);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "host:http"), portrange);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "host:-1"), portrange);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "::1:80"),
	    "write an IPv6 address in brackets: [::1]:port");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "[::1]80"), hostport);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "[::1:80"), hostport);
	ck_assert_str_eq(pu_set_bad(&pu, "address", "[db.test]:80"),
	    "not an IPv6 address between [ and ]");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "[fe80::1%]:80"),
	    "not an IPv6 address between [ and ]");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "[fe80::1%e/0]:80"),
	    "not an IPv6 address between [ and ]");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "10.0.0.256:80"),
	    "expected an IPv4 address or a host name before the port");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "bad host:80"),
	    "expected an IPv4 address or a host name before the port");
	ck_assert_str_eq(pu_set_bad(&pu, "address", "-x.test:80"),
	    "expected an IPv4 address or a host name before the port");
	ck_assert_str_eq(pu_set_bad(&pu, "send", ""), "expected some text");
	ck_assert_str_eq(pu_set_bad(&pu, "send", "PING\\0"),
	    "unknown escape: use \\n, \\r, \\t or \\\\");
	ck_assert_str_eq(pu_set_bad(&pu, "send", "PING\\"),
	    "unknown escape: use \\n, \\r, \\t or \\\\");
	ck_assert_str_eq(pu_set_bad(&pu, "expect", ""), "expected some text");
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	ck_assert_str_eq(pu_set_bad(&pu, "expect", longline),
	    "longer than the 4096 bytes of a line we read");
	ck_assert_str_eq(pu_set_bad(&pu, "timeout", "1s"), "unknown key");
	ck_assert_str_eq(pu_check_bad(&pu), "address is required");

	pu_set(&pu, "address", "127.0.0.1:6379");
	pu_set(&pu, "address", "[::1]:6379");
	pu_set(&pu, "address", "[fe80::1%eth0]:22");
	pu_set(&pu, "address", "redis-1.internal_net.example:6379");
	pu_set(&pu, "send", "PING\\r\\n\\t\\\\");
	pu_set(&pu, "expect", "+PONG");
	pu_check(&pu);
	pu_done(&pu);
}
END_TEST

START_TEST(accepting)
{
	struct pu	pu;
	int		fd, port;

	pu_init(&pu, &probe_tcp_ops, NULL);
	ck_assert_int_ne(fd = listening(AF_INET, &port), -1);
	set_address(&pu, "127.0.0.1", port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), "");
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), "");
	close(fd);
	pu_done(&pu);
}
END_TEST

START_TEST(accepting_ipv6)
{
	struct pu	pu;
	int		fd, port;

	if ((fd = listening(AF_INET6, &port)) == -1)
		return;		/* no ::1 here */
	pu_init(&pu, &probe_tcp_ops, NULL);
	set_address(&pu, "[::1]", port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), "");
	close(fd);
	pu_done(&pu);
}
END_TEST

START_TEST(refused)
{
	struct pu			 pu;
	const struct probe_outcome	*out;
	int				 fd, port;

	pu_init(&pu, &probe_tcp_ops, NULL);
	/* A port that was free a moment ago, and nobody listens on. */
	ck_assert_int_ne(fd = bound(AF_INET, SOCK_STREAM, &port), -1);
	close(fd);
	set_address(&pu, "127.0.0.1", port);
	out = pu_run(&pu, RUN_LIMIT_MS);
	expect_reason(out, PROBE_CRIT, "connection refused");
	ck_assert(isnan(out->value));
	pu_done(&pu);
}
END_TEST

/*
 * lbagent out of descriptors: no socket() for the run is not the server
 * failing: unknown. With them back, the same probe connects.
 */
START_TEST(out_of_descriptors)
{
	struct pu	pu;
	struct tu_fds	fds;
	int		fd, port, base_fds;

	pu_init(&pu, &probe_tcp_ops, NULL);
	ck_assert_int_ne(fd = listening(AF_INET, &port), -1);
	set_address(&pu, "127.0.0.1", port);
	base_fds = pu_count_fds();
	tu_fds_exhaust(&fds, 0);
	expect_reason(pu_run(&pu, RUN_LIMIT_MS), PROBE_UNKNOWN, "socket: Too "
	    "many open files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	ck_assert_int_eq(pu_count_fds(), base_fds);
	ck_assert_int_eq(pu_run(&pu, RUN_LIMIT_MS)->result, PROBE_OK);
	close(fd);
	pu_done(&pu);
}
END_TEST

/* The core's timeout applies: here we are the core and cancel. */
START_TEST(accepting_and_silent)
{
	struct pu	pu;
	int		fd, port, fds;

	pu_init(&pu, &probe_tcp_ops, NULL);
	ck_assert_int_ne(fd = listening(AF_INET, &port), -1);
	set_address(&pu, "127.0.0.1", port);
	pu_set(&pu, "expect", "+OK");
	fds = pu_count_fds();
	pu_start(&pu);
	pu_loop_ms(&pu, 300);
	ck_assert_int_eq(pu.nreports, 0);
	pu_cancel(&pu);
	pu_drain(&pu, RUN_LIMIT_MS);
	ck_assert_int_eq(pu.nreports, 0);
	ck_assert_int_eq(pu_count_fds(), fds);
	close(fd);
	pu_done(&pu);
}
END_TEST

START_TEST(ping_pong)
{
	struct pu	pu;
	struct server	sv;

	pu_init(&pu, &probe_tcp_ops, NULL);
	pu_set(&pu, "send", "PING\\r\\n");
	pu_set(&pu, "expect", "+PONG");
	server_start(&sv, true, "+PONG\r\n", -1);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), ", got \"+PONG\"");
	server_join(&sv);
	ck_assert_str_eq(sv.got, "PING\r\n");

	/* Something else comes back. */
	server_start(&sv, true, "-ERR unknown command 'PING'\r\nmore\r\n", -1);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_reason(pu_run(&pu, RUN_LIMIT_MS), PROBE_CRIT,
	    "expected \"+PONG\" got \"-ERR unknown command 'PING'\"");
	ck_assert(isfinite(pu.out.value));
	server_join(&sv);
	pu_done(&pu);
}
END_TEST

START_TEST(long_and_odd_lines)
{
	struct pu	pu;
	struct server	sv;
	char		big[5000];

	pu_init(&pu, &probe_tcp_ops, NULL);
	pu_set(&pu, "expect", "+PONG");
	/* 5000 bytes, no newline: the first 4 KiB are the line, cut. */
	memset(big, 'A', sizeof(big));
	server_start(&sv, false, big, sizeof(big));
	set_address(&pu, "127.0.0.1", sv.port);
	expect_reason(pu_run(&pu, RUN_LIMIT_MS), PROBE_CRIT,
	    "expected \"+PONG\" got \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	    "AAAAAAAAAAAAAAAAAAAA...\"");
	server_join(&sv);
	/* Control bytes and NULs are shown as '?'. */
	server_start(&sv, false, "-E\0R\x1b[1m\r\n", 10);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_reason(pu_run(&pu, RUN_LIMIT_MS), PROBE_CRIT,
	    "expected \"+PONG\" got \"-E?R?[1m\"");
	server_join(&sv);
	/* A last line without its newline still counts. */
	server_start(&sv, false, "xx +PONG", -1);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), ", got \"+PONG\"");
	server_join(&sv);
	pu_done(&pu);
}
END_TEST

START_TEST(banner)
{
	struct pu	pu;
	struct server	sv;

	pu_init(&pu, &probe_tcp_ops, NULL);
	pu_set(&pu, "expect", "SSH-2.0-");
	server_start(&sv, false, "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", -1);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), ", got \"SSH-2.0-\"");
	server_join(&sv);
	pu_done(&pu);
}
END_TEST

START_TEST(closes_at_once)
{
	struct pu	pu;
	struct server	sv;

	pu_init(&pu, &probe_tcp_ops, NULL);
	pu_set(&pu, "expect", "+OK");
	server_start(&sv, false, NULL, 0);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_reason(pu_run(&pu, RUN_LIMIT_MS), PROBE_CRIT,
	    "closed before a line");
	server_join(&sv);
	pu_done(&pu);
}
END_TEST

START_TEST(send_only)
{
	struct pu	pu;
	struct server	sv;

	pu_init(&pu, &probe_tcp_ops, NULL);
	pu_set(&pu, "send", "QUIT\\tnow\\\\\\n");
	server_start(&sv, true, NULL, 0);
	set_address(&pu, "127.0.0.1", sv.port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), "");
	server_join(&sv);
	ck_assert_str_eq(sv.got, "QUIT\tnow\\\n");
	pu_done(&pu);
}
END_TEST

START_TEST(names)
{
	struct pu	 pu;
	struct dns	 d;
	char		*dir = tu_tmpdir();
	int		 fd, port;

	dns_start(&d, dir, true);
	pu_init(&pu, &probe_tcp_ops, NULL);
	ck_assert_int_ne(fd = listening(AF_INET, &port), -1);
	/* From the hosts file: no query at all. */
	set_address(&pu, "localhost", port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), "");
	ck_assert_int_eq(atomic_load(&d.queries), 0);
	/* From the DNS server, on the same resolver. */
	set_address(&pu, "db.test", port);
	expect_connected(pu_run(&pu, RUN_LIMIT_MS), "");
	ck_assert_int_gt(atomic_load(&d.queries), 0);
	set_address(&pu, "nx.test", port);
	expect_reason(pu_run(&pu, RUN_LIMIT_MS), PROBE_CRIT,
	    "cannot resolve nx.test: nodename nor servname provided, or not "
	    "known");
	close(fd);
	pu_done(&pu);
	dns_stop(&d);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* A resolver that never answers: the timeout cancels the lookup. */
START_TEST(silent_resolver)
{
	struct pu	 pu;
	struct dns	 d;
	char		*dir = tu_tmpdir();
	int		 fds;

	dns_start(&d, dir, false);
	pu_init(&pu, &probe_tcp_ops, NULL);
	set_address(&pu, "db.test", 80);
	pu_start(&pu);		/* makes the resolver: its socket stays */
	fds = pu_count_fds();
	pu_loop_ms(&pu, 300);
	ck_assert_int_eq(pu.nreports, 0);
	ck_assert_int_gt(atomic_load(&d.queries), 0);
	pu_cancel(&pu);
	pu_drain(&pu, RUN_LIMIT_MS);
	ck_assert_int_eq(pu.nreports, 0);
	ck_assert_int_eq(pu_count_fds(), fds);
	/*
	 * And once more, the probe freed right after the cancel, as in a
	 * reload: the loop goes on, evdns calls back the cancelled lookup.
	 */
	pu_start(&pu);
	pu_loop_ms(&pu, 100);
	pu_cancel(&pu);
	probe_tcp_ops.keep_free(pu.run.keep);
	pu.run.keep = NULL;
	pu_drain(&pu, RUN_LIMIT_MS);
	ck_assert_int_eq(pu.nreports, 0);
	pu_done(&pu);
	dns_stop(&d);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* Many runs of every outcome: no descriptor stays behind. */
START_TEST(no_leaks)
{
	struct pu	pu_ok, pu_refused, pu_silent;
	struct server	sv;
	int		lfd, port, dead, fds, i;

	pu_init(&pu_ok, &probe_tcp_ops, NULL);
	pu_init_on(&pu_refused, &probe_tcp_ops, pu_ok.base);
	pu_init_on(&pu_silent, &probe_tcp_ops, pu_ok.base);
	ck_assert_int_ne(lfd = listening(AF_INET, &port), -1);
	ck_assert_int_ne(fcntl(lfd, F_SETFL, O_NONBLOCK), -1);
	ck_assert_int_ne(dead = bound(AF_INET, SOCK_STREAM, &i), -1);
	close(dead);
	set_address(&pu_ok, "127.0.0.1", port);
	set_address(&pu_refused, "127.0.0.1", i);
	set_address(&pu_silent, "127.0.0.1", port);
	pu_set(&pu_silent, "expect", "x");
	fds = pu_count_fds();
	for (i = 0; i < 50; i++) {
		pu_start(&pu_ok);
		pu_start(&pu_refused);
		pu_start(&pu_silent);
		pu_wait(&pu_ok, RUN_LIMIT_MS);
		pu_wait(&pu_refused, RUN_LIMIT_MS);
		ck_assert_int_eq(pu_silent.nreports, 0);
		pu_cancel(&pu_silent);
		/* What the listener queued, so the backlog never fills. */
		while ((dead = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) != -1)
			close(dead);
	}
	pu_drain(&pu_ok, RUN_LIMIT_MS);
	ck_assert_int_eq(pu_count_fds(), fds);
	server_start(&sv, true, "+PONG\n", -1);
	set_address(&pu_ok, "127.0.0.1", sv.port);
	pu_set(&pu_ok, "send", "PING\\n");
	pu_set(&pu_ok, "expect", "+PONG");
	expect_connected(pu_run(&pu_ok, RUN_LIMIT_MS), ", got \"+PONG\"");
	server_join(&sv);
	ck_assert_int_eq(pu_count_fds(), fds);
	close(lfd);
	pu_done(&pu_silent);
	pu_done(&pu_refused);
	pu_done(&pu_ok);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("probe_tcp");
	TCase	*tc;

	tc = tcase_create("conf");
	tcase_add_test(tc, conf_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("runs");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, accepting);
	tcase_add_test(tc, accepting_ipv6);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, out_of_descriptors);
	tcase_add_test(tc, accepting_and_silent);
	tcase_add_test(tc, ping_pong);
	tcase_add_test(tc, long_and_odd_lines);
	tcase_add_test(tc, banner);
	tcase_add_test(tc, closes_at_once);
	tcase_add_test(tc, send_only);
	tcase_add_test(tc, names);
	tcase_add_test(tc, silent_resolver);
	tcase_add_test(tc, no_leaks);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
