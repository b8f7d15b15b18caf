/*
 * systemd integration against real sockets: a datagram socket of the test
 * acts as NOTIFY_SOCKET (a path and an abstract name) and every datagram
 * is checked byte for byte; the watchdog pings on a real event loop; the
 * socket-activation variables with real listening and non-listening
 * sockets placed at descriptors 3 onwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "lbagent/daemon/systemd.h"
#include "testutil.h"

static char	*dir;
static int	 rx = -1;		/* the test's end of NOTIFY_SOCKET */
static char	 rx_path[256];

static void
setup(void)
{
	dir = tu_tmpdir();
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

static void
teardown(void)
{
	systemd_close();
	if (rx != -1)
		close(rx);
	rx = -1;
	tu_rmtree(dir);
	free(dir);
}

/* Binds the receiving socket at dir/notify and points NOTIFY_SOCKET at it. */
static void
listen_path(void)
{
	struct sockaddr_un	sa;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(rx_path, sizeof(rx_path), "%s/notify", dir);
	ck_assert_uint_lt(strlen(rx_path), sizeof(sa.sun_path));
	strcpy(sa.sun_path, rx_path);
	ck_assert_int_ne(rx = socket(AF_UNIX, SOCK_DGRAM, 0), -1);
	ck_assert_int_eq(bind(rx, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", rx_path, 1);
}

/* The next datagram, waiting up to ms; "" when none came. */
static const char *
next_msg(int ms)
{
	static char	buf[1024];
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };
	ssize_t		n;

	ck_assert_int_eq(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)), 0);
	n = recv(rx, buf, sizeof(buf) - 1, 0);
	if (n == -1) {
		ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
		n = 0;
	}
	buf[n] = '\0';
	return buf;
}

/* Nothing queued: what has been sent was all of it. */
static void
assert_no_msg(void)
{
	ck_assert_str_eq(next_msg(50), "");
}

static uint64_t
mono_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

START_TEST(notify_path)
{
	uint64_t	before, after, mono;
	char		tail;

	listen_path();
	systemd_init();
	ck_assert(systemd_notify_enabled());
	/* Probe commands run by lbagent must not see it. */
	ck_assert_ptr_null(getenv("NOTIFY_SOCKET"));

	ck_assert_int_eq(systemd_ready(), 0);
	ck_assert_str_eq(next_msg(1000), "READY=1");
	ck_assert_int_eq(systemd_stopping(), 0);
	ck_assert_str_eq(next_msg(1000), "STOPPING=1");
	ck_assert_int_eq(systemd_notifyf("STATUS=%d probes", 3), 0);
	ck_assert_str_eq(next_msg(1000), "STATUS=3 probes");

	before = mono_us();
	ck_assert_int_eq(systemd_reloading(), 0);
	after = mono_us();
	ck_assert_int_eq(sscanf(next_msg(1000),
	    "RELOADING=1\nMONOTONIC_USEC=%" SCNu64 "%c", &mono, &tail), 1);
	ck_assert_uint_ge(mono, before);
	ck_assert_uint_le(mono, after);
	assert_no_msg();
}
END_TEST

START_TEST(notify_abstract)
{
	struct sockaddr_un	sa;
	char			name[64];
	socklen_t		len;

	snprintf(name, sizeof(name), "lbagent-test-%ld", (long)getpid());
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path + 1, name, strlen(name));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(name));
	ck_assert_int_ne(rx = socket(AF_UNIX, SOCK_DGRAM, 0), -1);
	ck_assert_int_eq(bind(rx, (struct sockaddr *)&sa, len), 0);

	snprintf(rx_path, sizeof(rx_path), "@%s", name);
	setenv("NOTIFY_SOCKET", rx_path, 1);
	systemd_init();
	ck_assert(systemd_notify_enabled());
	ck_assert_int_eq(systemd_ready(), 0);
	ck_assert_str_eq(next_msg(1000), "READY=1");
	ck_assert_int_eq(systemd_notify("STATUS=a\nERRNO=0"), 0);
	ck_assert_str_eq(next_msg(1000), "STATUS=a\nERRNO=0");
}
END_TEST

START_TEST(notify_off)
{
	char	long_path[200];

	/* Unset: nothing to do, nothing fails loudly. */
	systemd_init();
	ck_assert(!systemd_notify_enabled());
	ck_assert_int_eq(systemd_ready(), -1);
	systemd_status("up");
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 0);

	/* Neither an absolute path nor @name, or too long: off. */
	setenv("NOTIFY_SOCKET", "run/notify", 1);
	systemd_init();
	ck_assert(!systemd_notify_enabled());
	ck_assert_ptr_null(getenv("NOTIFY_SOCKET"));
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	setenv("NOTIFY_SOCKET", long_path, 1);
	systemd_init();
	ck_assert(!systemd_notify_enabled());
	setenv("NOTIFY_SOCKET", "@", 1);
	systemd_init();
	ck_assert(!systemd_notify_enabled());
}
END_TEST

START_TEST(status_deduplicated)
{
	char	big[400], want[SYSTEMD_STATUS_MAX + 8];

	listen_path();
	systemd_init();
	systemd_status("up");
	ck_assert_str_eq(next_msg(1000), "STATUS=up");
	/* The same text, as a reply line or not: nothing sent. */
	systemd_status("up");
	systemd_status("up\n");
	assert_no_msg();

	systemd_status("drain up #kernel upgrade\n");
	ck_assert_str_eq(next_msg(1000), "STATUS=drain up #kernel upgrade");
	systemd_status("up");
	ck_assert_str_eq(next_msg(1000), "STATUS=up");

	/* One line only: a newline would be a second assignment. */
	systemd_status("down #a\nREADY=1");
	ck_assert_str_eq(next_msg(1000), "STATUS=down #a");
	systemd_status("down #\x01\x7f");
	ck_assert_str_eq(next_msg(1000), "STATUS=down #??");

	memset(big, 'r', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	systemd_status(big);
	snprintf(want, sizeof(want), "STATUS=%.*s", SYSTEMD_STATUS_MAX, big);
	ck_assert_str_eq(next_msg(1000), want);
	/* Differing past the cut is no difference. */
	big[300] = 's';
	systemd_status(big);
	assert_no_msg();
}
END_TEST

/* Points stderr at dir/log until log_restore(); returns its path. */
static int	saved_stderr = -1;

static char *
log_capture(void)
{
	char	*path;
	int	 fd;

	ck_assert_int_ne(asprintf(&path, "%s/log", dir), -1);
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), -1);
	fflush(stderr);
	ck_assert_int_ne(saved_stderr = dup(STDERR_FILENO), -1);
	ck_assert_int_ne(dup2(fd, STDERR_FILENO), -1);
	close(fd);
	return path;
}

static char *
log_restore(const char *path)
{
	static char	buf[8192];
	FILE		*fp;
	size_t		 n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static int
count(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

START_TEST(failures_logged_once_and_retried)
{
	char		*path, *log;

	listen_path();
	systemd_init();
	/* The receiver goes away: every send fails, one line says so. */
	close(rx);
	rx = -1;
	unlink(rx_path);
	path = log_capture();
	ck_assert_int_eq(systemd_ready(), -1);
	ck_assert_int_eq(systemd_notify("WATCHDOG=1"), -1);
	systemd_status("up");
	systemd_status("up");
	log = log_restore(path);
	ck_assert_int_eq(count(log, "systemd: cannot send"), 1);
	ck_assert_ptr_nonnull(strstr(log, "cannot send READY=1 to the notify "
	    "socket"));
	ck_assert_ptr_nonnull(strstr(log, "No such file or directory"));
	free(path);

	/* It comes back: the status that was not sent is sent now. */
	listen_path();
	path = log_capture();
	systemd_status("up");
	log = log_restore(path);
	ck_assert_str_eq(next_msg(1000), "STATUS=up");
	ck_assert_int_eq(count(log, "takes messages again"), 1);
	free(path);
}
END_TEST

START_TEST(watchdog_interval)
{
	char	pid[32];

	listen_path();
	setenv("WATCHDOG_USEC", "30000000", 1);
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 15000000);
	ck_assert_ptr_null(getenv("WATCHDOG_USEC"));

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("NOTIFY_SOCKET", rx_path, 1);
	setenv("WATCHDOG_USEC", "3", 1);
	setenv("WATCHDOG_PID", pid, 1);
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 1);
	ck_assert_ptr_null(getenv("WATCHDOG_PID"));

	/* Another process's watchdog, nonsense, or nobody to ping: none. */
	snprintf(pid, sizeof(pid), "%ld", (long)getpid() + 1);
	setenv("NOTIFY_SOCKET", rx_path, 1);
	setenv("WATCHDOG_USEC", "30000000", 1);
	setenv("WATCHDOG_PID", pid, 1);
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 0);

	setenv("NOTIFY_SOCKET", rx_path, 1);
	setenv("WATCHDOG_USEC", "30s", 1);
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 0);
	setenv("NOTIFY_SOCKET", rx_path, 1);
	setenv("WATCHDOG_USEC", "0", 1);
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 0);

	setenv("WATCHDOG_USEC", "30000000", 1);
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 0);
}
END_TEST

static void
stop_loop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

START_TEST(watchdog_pings_from_the_loop)
{
	struct event_base	*base;
	struct event		*stop;
	struct timeval		 tv = { 0, 450000 };
	int			 pings = 0;
	const char		*m;

	listen_path();
	setenv("WATCHDOG_USEC", "200000", 1);		/* pings every 100 ms */
	systemd_init();
	ck_assert_uint_eq(systemd_watchdog_interval_us(), 100000);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(systemd_watchdog_start(base), 0);
	ck_assert_ptr_nonnull(stop = evtimer_new(base, stop_loop, base));
	evtimer_add(stop, &tv);
	/* Nothing before the loop runs: a stuck loop is what it catches. */
	assert_no_msg();
	event_base_dispatch(base);
	while (*(m = next_msg(10)) != '\0') {
		ck_assert_str_eq(m, "WATCHDOG=1");
		pings++;
	}
	/* 100, 200, 300, 400 ms; a loaded machine may run late, not early. */
	ck_assert_int_ge(pings, 2);
	ck_assert_int_le(pings, 4);
	event_free(stop);
	systemd_close();
	event_base_free(base);
}
END_TEST

/*
 * Socket activation needs sockets at descriptors 3 onwards, where Check
 * may keep its own files: those are parked above and put back after.
 */
#define SLOTS	4
static int	parked[SLOTS];

static void
park_slots(void)
{
	int	i;

	for (i = 0; i < SLOTS; i++) {
		parked[i] = fcntl(3 + i, F_DUPFD_CLOEXEC, 100);
		close(3 + i);
	}
}

static void
unpark_slots(void)
{
	int	i;

	for (i = 0; i < SLOTS; i++) {
		close(3 + i);
		if (parked[i] != -1) {
			dup2(parked[i], 3 + i);
			close(parked[i]);
		}
	}
}

enum kind { TCP_LISTEN, TCP_BOUND, UDP, UNIX_LISTEN, REGULAR_FILE, CLOSED };

/* Puts a socket (or something else) of the given kind at descriptor fd. */
static void
place(int fd, enum kind k)
{
	struct sockaddr_in	sin;
	struct sockaddr_un	sun;
	int			s = -1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	switch (k) {
	case TCP_LISTEN:
	case TCP_BOUND:
		s = socket(AF_INET, SOCK_STREAM, 0);
		bind(s, (struct sockaddr *)&sin, sizeof(sin));
		if (k == TCP_LISTEN)
			listen(s, 8);
		break;
	case UDP:
		s = socket(AF_INET, SOCK_DGRAM, 0);
		bind(s, (struct sockaddr *)&sin, sizeof(sin));
		break;
	case UNIX_LISTEN:
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/s%d", dir, fd);
		unlink(sun.sun_path);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		bind(s, (struct sockaddr *)&sun, sizeof(sun));
		listen(s, 8);
		break;
	case REGULAR_FILE:
		s = open("/dev/null", O_RDONLY);
		break;
	case CLOSED:
		close(fd);
		return;
	}
	if (s != fd) {
		dup2(s, fd);
		close(s);
	}
}

/* What one call of systemd_listen_fds gave, kept past unpark_slots. */
struct outcome {
	int	rc;
	size_t	nagent, nhttp;
	int	agent[SLOTS], http[SLOTS];
	int	cloexec_nonblock;	/* every fd taken is both */
	int	env_left;		/* LISTEN_* still set after the call */
	char	log[4096];
};

/* Sets LISTEN_* (NULL: unset; "self" as pid: this process) and calls it. */
static void
activate(struct outcome *o, const char *pid, const char *fds,
    const char *names, const enum kind *kinds, int nkinds)
{
	struct systemd_sockets	s;
	char			self[32], *path;
	size_t			i;
	int			k;

	memset(o, 0, sizeof(*o));
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	if (pid != NULL)
		setenv("LISTEN_PID", strcmp(pid, "self") == 0 ? self : pid, 1);
	if (fds != NULL)
		setenv("LISTEN_FDS", fds, 1);
	if (names != NULL)
		setenv("LISTEN_FDNAMES", names, 1);
	path = log_capture();
	park_slots();
	for (k = 0; k < nkinds; k++)
		place(3 + k, kinds[k]);
	o->rc = systemd_listen_fds(&s);
	o->nagent = s.nagent;
	o->nhttp = s.nhttp;
	o->cloexec_nonblock = 1;
	for (i = 0; i < s.nagent && i < SLOTS; i++)
		o->agent[i] = s.agent[i];
	for (i = 0; i < s.nhttp && i < SLOTS; i++)
		o->http[i] = s.http[i];
	for (i = 0; i < s.nagent + s.nhttp; i++) {
		int fd = i < s.nagent ? s.agent[i] : s.http[i - s.nagent];

		if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC) ||
		    !(fcntl(fd, F_GETFL) & O_NONBLOCK))
			o->cloexec_nonblock = 0;
	}
	systemd_sockets_free(&s);
	unpark_slots();
	snprintf(o->log, sizeof(o->log), "%s", log_restore(path));
	free(path);
	o->env_left = getenv("LISTEN_PID") != NULL ||
	    getenv("LISTEN_FDS") != NULL || getenv("LISTEN_FDNAMES") != NULL;
}

START_TEST(listen_names_split)
{
	static const enum kind	three[] = { TCP_LISTEN, TCP_LISTEN, TCP_LISTEN };
	static const enum kind	unix_http[] = { TCP_LISTEN, UNIX_LISTEN };
	struct outcome		o;

	activate(&o, "self", "3", "lbagent.socket:http:agent", three, 3);
	ck_assert_msg(o.rc == 0, "%s", o.log);
	ck_assert_uint_eq(o.nagent, 2);
	ck_assert_int_eq(o.agent[0], 3);
	ck_assert_int_eq(o.agent[1], 5);
	ck_assert_uint_eq(o.nhttp, 1);
	ck_assert_int_eq(o.http[0], 4);
	ck_assert(o.cloexec_nonblock);
	ck_assert(!o.env_left);

	/* No names: every socket is the agent's. */
	activate(&o, "self", "2", NULL, three, 2);
	ck_assert_int_eq(o.rc, 0);
	ck_assert_uint_eq(o.nagent, 2);
	ck_assert_uint_eq(o.nhttp, 0);

	/* The HTTP API may listen on a unix socket; the agent port may not. */
	activate(&o, "self", "2", "agent:http", unix_http, 2);
	ck_assert_msg(o.rc == 0, "%s", o.log);
	ck_assert_uint_eq(o.nagent, 1);
	ck_assert_uint_eq(o.nhttp, 1);
	activate(&o, "self", "2", "agent:other", unix_http, 2);
	ck_assert_int_eq(o.rc, -1);
	ck_assert_msg(strstr(o.log, "descriptor 4 (named other) is not a TCP "
	    "socket") != NULL, "%s", o.log);
}
END_TEST

START_TEST(listen_not_ours)
{
	static const enum kind	one[] = { TCP_LISTEN };
	struct outcome		o;
	char			other[32];

	/* For another process (our parent, say): ignored, and cleaned up. */
	snprintf(other, sizeof(other), "%ld", (long)getpid() + 1);
	activate(&o, other, "1", "agent", one, 1);
	ck_assert_int_eq(o.rc, 0);
	ck_assert_uint_eq(o.nagent + o.nhttp, 0);
	ck_assert(!o.env_left);
	ck_assert_ptr_nonnull(strstr(o.log, "is not this process"));

	activate(&o, NULL, "1", NULL, one, 1);
	ck_assert_int_eq(o.rc, 0);
	ck_assert_uint_eq(o.nagent, 0);
	ck_assert(!o.env_left);

	/* Ours, with nothing passed. */
	activate(&o, "self", "0", NULL, one, 1);
	ck_assert_int_eq(o.rc, 0);
	ck_assert_uint_eq(o.nagent, 0);
	activate(&o, "self", NULL, NULL, one, 1);
	ck_assert_int_eq(o.rc, 0);
	ck_assert_uint_eq(o.nagent, 0);
}
END_TEST

START_TEST(listen_bad_fds_rejected)
{
	static const struct {
		enum kind	 second;
		const char	*why;
	} bad[] = {
		{ TCP_BOUND, "descriptor 4 (named http) is not listening" },
		{ UDP, "descriptor 4 (named http) is not a stream socket" },
		{ REGULAR_FILE, "descriptor 4 (named http) is not a socket" },
		{ CLOSED, "descriptor 4 (named http) is not open" },
	};
	struct outcome	o;
	size_t		i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum kind	kinds[2] = { TCP_LISTEN, bad[i].second };

		activate(&o, "self", "2", "agent:http", kinds, 2);
		ck_assert_int_eq(o.rc, -1);
		/* Nothing taken: the caller exits without listening. */
		ck_assert_uint_eq(o.nagent + o.nhttp, 0);
		ck_assert_msg(strstr(o.log, bad[i].why) != NULL,
		    "want \"%s\" in:\n%s", bad[i].why, o.log);
		ck_assert(!o.env_left);
	}
}
END_TEST

START_TEST(listen_bad_variables_rejected)
{
	static const enum kind	two[] = { TCP_LISTEN, TCP_LISTEN };
	struct outcome		o;

	activate(&o, "self", "2", "agent", two, 2);
	ck_assert_int_eq(o.rc, -1);
	ck_assert_ptr_nonnull(strstr(o.log, "LISTEN_FDNAMES=\"agent\" does not "
	    "name the 2 descriptor(s)"));
	activate(&o, "self", "2", "a:b:c", two, 2);
	ck_assert_int_eq(o.rc, -1);
	activate(&o, "self", "two", NULL, two, 2);
	ck_assert_int_eq(o.rc, -1);
	ck_assert_ptr_nonnull(strstr(o.log, "LISTEN_FDS=\"two\""));
	activate(&o, "self", "-1", NULL, two, 2);
	ck_assert_int_eq(o.rc, -1);
	activate(&o, "12x", "2", NULL, two, 2);
	ck_assert_int_eq(o.rc, -1);
	ck_assert_ptr_nonnull(strstr(o.log, "LISTEN_PID=\"12x\" is not a "
	    "process id"));
	ck_assert(!o.env_left);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("systemd");
	TCase	*tc = tcase_create("systemd");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, notify_path);
	tcase_add_test(tc, notify_abstract);
	tcase_add_test(tc, notify_off);
	tcase_add_test(tc, status_deduplicated);
	tcase_add_test(tc, failures_logged_once_and_retried);
	tcase_add_test(tc, watchdog_interval);
	tcase_add_test(tc, watchdog_pings_from_the_loop);
	tcase_add_test(tc, listen_names_split);
	tcase_add_test(tc, listen_not_ours);
	tcase_add_test(tc, listen_bad_fds_rejected);
	tcase_add_test(tc, listen_bad_variables_rejected);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
