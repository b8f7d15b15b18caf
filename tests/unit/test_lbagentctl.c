/*
 * lbagentctl's modules: the command line, addresses, the HTTP client
 * against a real local server, the configuration (with errors too), the
 * marker files, what the daemon should
 * show after a marker change, and the status text from JSON fixtures.
 */
#include <errno.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lbagent/core/name.h"
#include "lbagent/ctl/args.h"
#include "lbagent/ctl/client.h"
#include "lbagent/ctl/conf.h"
#include "lbagent/ctl/fleet.h"
#include "lbagent/ctl/format.h"
#include "lbagent/ctl/markers.h"
#include "lbagent/ctl/term.h"
#include "lbagent/ctl/wait.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/markers.h"
#include "testhttpd.h"
#include "testutil.h"

static char	*dir;

static void
setup(void)
{
	dir = tu_tmpdir();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

/* ---------------------------------------------------------- arguments */

/* Parses a NULL-terminated list of words after "lbagentctl". */
static int
parse(struct ctl_opts *o, char *why, ...)
{
	char	*argv[32];
	int	 argc = 0;
	va_list	 ap;

	argv[argc++] = (char *)"lbagentctl";
	va_start(ap, why);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	return ctl_parse_args(argc, argv, o, why, 256);
}

START_TEST(args_status)
{
	struct ctl_opts	o;
	char		why[256];

	ck_assert_int_eq(parse(&o, why, "status", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_STATUS);
	ck_assert(!o.json);
	ck_assert_ptr_null(o.service);
	ck_assert_ptr_null(o.config);
	ck_assert_ptr_null(o.address);
	ck_assert(o.timeout_s == CTL_TIMEOUT_DEFAULT_S);

	ck_assert_int_eq(parse(&o, why, "-f", "/x.conf", "status", "--json",
	    "web", "-s", "unix:/run/x.sock", "-t", "2.5", NULL), 0);
	ck_assert(o.json);
	ck_assert_str_eq(o.service, "web");
	ck_assert_str_eq(o.config, "/x.conf");
	ck_assert_str_eq(o.address, "unix:/run/x.sock");
	ck_assert(o.timeout_s == 2.5);

	/* '-' is the default service, whose name is "". */
	ck_assert_int_eq(parse(&o, why, "status", "-", NULL), 0);
	ck_assert_str_eq(o.service, "");
	/* So is "default", its name in the metrics. */
	ck_assert_int_eq(parse(&o, why, "status", "default", NULL), 0);
	ck_assert_str_eq(o.service, "");

	ck_assert_int_eq(parse(&o, why, "status", "--short", "web", NULL), 0);
	ck_assert(o.brief && !o.json);
	ck_assert_str_eq(o.service, "web");
	ck_assert_int_eq(parse(&o, why, "status", "--json", "--short", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_str_eq(why, "status: --json or --short, not both");

	/* why takes a service as status does. */
	ck_assert_int_eq(parse(&o, why, "why", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_WHY);
	ck_assert_ptr_null(o.service);
	ck_assert_int_eq(parse(&o, why, "why", "-", NULL), 0);
	ck_assert_str_eq(o.service, "");
	ck_assert_int_eq(parse(&o, why, "why", "web", NULL), 0);
	ck_assert_str_eq(o.service, "web");
}
END_TEST

START_TEST(args_markers)
{
	struct ctl_opts	o;
	char		why[256];

	ck_assert_int_eq(parse(&o, why, "maint", "on", "--reason",
	    "kernel upgrade", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_MAINT);
	ck_assert(o.on);
	ck_assert_str_eq(o.reason, "kernel upgrade");
	ck_assert_ptr_null(o.service);

	ck_assert_int_eq(parse(&o, why, "drain", "off", "--service", "web",
	    NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_DRAIN);
	ck_assert(!o.on);
	ck_assert_str_eq(o.service, "web");

	/* A reason may start with a dash. */
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--reason", "-x-",
	    NULL), 0);
	ck_assert_str_eq(o.reason, "-x-");

	/* mode off is the marker being there. */
	ck_assert_int_eq(parse(&o, why, "mode", "off", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_MODE);
	ck_assert(o.on);
	ck_assert_int_eq(parse(&o, why, "mode", "auto", "--service", "a.b_c-1",
	    NULL), 0);
	ck_assert(!o.on);
	ck_assert_str_eq(o.service, "a.b_c-1");
}
END_TEST

START_TEST(args_others)
{
	struct ctl_opts	o;
	char		why[256];

	ck_assert_int_eq(parse(&o, why, "check", "-f", "/etc/x.conf", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_CHECK);
	ck_assert_str_eq(o.config, "/etc/x.conf");
	ck_assert_int_eq(parse(&o, why, "reload", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_RELOAD);
	ck_assert_int_eq(parse(&o, why, "-h", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_HELP);
	ck_assert_int_eq(parse(&o, why, "status", "--help", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_HELP);
	ck_assert_int_eq(parse(&o, why, "-V", NULL), 0);
	ck_assert_int_eq(o.cmd, CTL_VERSION);
}
END_TEST

START_TEST(args_usage_errors)
{
	static const char *const bad[][6] = {
		{ NULL },
		{ "frobnicate", NULL },
		{ "maint", NULL },
		{ "maint", "yes", NULL },
		{ "maint", "on", "extra", NULL },
		{ "maint", "off", "--reason", "x", NULL },
		{ "maint", "on", "--json", NULL },
		{ "drain", "on", "--reason", "two\nlines", NULL },
		{ "drain", "on", "--service", "../etc", NULL },
		{ "drain", "on", "--service", "-", NULL },
		{ "drain", "on", "--service", "..", NULL },
		{ "drain", "on", "--service", ".", NULL },
		{ "drain", "on", "--service", ".web", NULL },
		{ "drain", "on", "--service", "drain", NULL },
		{ "maint", "on", "--service", "maint", NULL },
		{ "mode", "off", "--service", "off", NULL },
		{ "drain", "on", "--service", "state.json", NULL },
		{ "drain", "off", "--service", "state.json.tmp", NULL },
		{ "status", "off", NULL },
		{ "status", "state.json", NULL },
		{ "mode", "on", NULL },
		{ "mode", "off", "--reason", "x", NULL },
		{ "status", "--service", "web", NULL },
		{ "status", "a", "b", NULL },
		{ "status", "no/slash", NULL },
		{ "check", "extra", NULL },
		{ "reload", "--json", NULL },
		{ "why", "--short", NULL },
		{ "why", "--json", NULL },
		{ "why", "a", "b", NULL },
		{ "why", "no/slash", NULL },
		{ "maint", "on", "--short", NULL },
		{ "-t", "0", "status", NULL },
		{ "-t", "abc", "status", NULL },
		{ "-t", "nan", "status", NULL },
		{ "status", "-f", NULL },
		{ "status", "--bogus", NULL },
		{ "-x", "status", NULL },
	};
	struct ctl_opts	o;
	char		why[256], *argv[8];
	size_t		i;
	int		argc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argc = 0;
		argv[argc++] = (char *)"lbagentctl";
		while (bad[i][argc - 1] != NULL) {
			argv[argc] = (char *)bad[i][argc - 1];
			argc++;
		}
		argv[argc] = NULL;
		ck_assert_msg(ctl_parse_args(argc, argv, &o, why,
		    sizeof(why)) == CTL_EXIT_USAGE, "case %zu accepted", i);
		ck_assert_msg(why[0] != '\0', "case %zu: no reason given", i);
	}
}
END_TEST

/* --for and --until: with "on" only, one of them, values checked. */
START_TEST(args_marker_end)
{
	struct ctl_opts	o;
	char		why[256];

	ck_assert_int_eq(parse(&o, why, "drain", "on", "--for", "2h", NULL), 0);
	ck_assert_uint_eq(o.for_ms, 7200000);
	ck_assert_ptr_null(o.until);
	ck_assert_int_eq(parse(&o, why, "maint", "on", "--until", "23:59",
	    "--reason", "r", NULL), 0);
	ck_assert_str_eq(o.until, "23:59");
	ck_assert_int_eq(parse(&o, why, "maint", "on", "--until",
	    "2999-01-01T00:00Z", NULL), 0);
	ck_assert_int_eq(parse(&o, why, "drain", "on", NULL), 0);
	ck_assert_uint_eq(o.for_ms, 0);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--for", "soon", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--for", "0s", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "off", "--for", "2s", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--for", "2s",
	    "--until", "23:59", NULL), CTL_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "not both"));
	ck_assert_int_eq(parse(&o, why, "mode", "off", "--for", "2s", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--until", "24:00",
	    NULL), CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--until",
	    "2000-01-01T00:00Z", NULL), CTL_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "past"));
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--until",
	    "2999-01-01T00:00", NULL), CTL_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "zone"));
}
END_TEST

/* --wait with on only; its timeout takes durations and defaults to 5m. */
START_TEST(args_wait)
{
	struct ctl_opts	o;
	char		why[256];

	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait", NULL), 0);
	ck_assert(o.wait && o.on);
	ck_assert(o.timeout_s == CTL_WAIT_TIMEOUT_DEFAULT_S);
	ck_assert_int_eq(parse(&o, why, "maint", "on", "--wait", "--timeout",
	    "60s", "--service", "web", NULL), 0);
	ck_assert(o.wait);
	ck_assert_int_eq(o.cmd, CTL_MAINT);
	ck_assert(o.timeout_s == 60);
	ck_assert_int_eq(parse(&o, why, "--timeout", "5m", "drain", "on",
	    "--wait", NULL), 0);
	ck_assert(o.timeout_s == 300);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait", "-t", "2.5",
	    NULL), 0);
	ck_assert(o.timeout_s == 2.5);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait",
	    "--timeout=1500ms", NULL), 0);
	ck_assert(o.timeout_s == 1.5);
	/* Without --wait, the usual 10s, or a duration too. */
	ck_assert_int_eq(parse(&o, why, "drain", "on", NULL), 0);
	ck_assert(!o.wait);
	ck_assert(o.timeout_s == CTL_TIMEOUT_DEFAULT_S);
	ck_assert_int_eq(parse(&o, why, "-t", "90s", "drain", "on", NULL), 0);
	ck_assert(o.timeout_s == 90);

	ck_assert_int_eq(parse(&o, why, "drain", "off", "--wait", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_str_eq(why, "drain off: --wait goes with 'on'");
	ck_assert_int_eq(parse(&o, why, "maint", "off", "--wait", "--timeout",
	    "1m", NULL), CTL_EXIT_USAGE);
	ck_assert_str_eq(why, "maint off: --wait goes with 'on'");
	ck_assert_int_eq(parse(&o, why, "mode", "off", "--wait", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_str_eq(why, "mode: --wait does not go with it");
	ck_assert_int_eq(parse(&o, why, "status", "--wait", NULL),
	    CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait", "--timeout",
	    "0s", NULL), CTL_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "--timeout '0s'"));
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait", "--timeout",
	    "25h", NULL), CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait", "--timeout",
	    "soon", NULL), CTL_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--wait", "--timeout",
	    NULL), CTL_EXIT_USAGE);
}
END_TEST

/* HH:MM: today, or tomorrow once past; local time. */
START_TEST(until_local_time)
{
	struct tm	tm;
	time_t		now;
	int64_t		ms;
	const char	*why;

	setenv("TZ", "UTC", 1);
	tzset();
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = 126, tm.tm_mon = 11, tm.tm_mday = 2, tm.tm_hour = 1;
	tm.tm_min = 30;
	now = timegm(&tm);
	ck_assert_int_eq(ctl_until("03:00", now, &ms, &why), 0);
	ck_assert_int_eq(ms, ((int64_t)now + 5400) * 1000);
	ck_assert_int_eq(ctl_until("01:00", now, &ms, &why), 0);
	ck_assert_int_eq(ms, ((int64_t)now + 84600) * 1000);
	ck_assert_int_eq(ctl_until("01:30", now, &ms, &why), 0);
	ck_assert_int_eq(ms, ((int64_t)now + 86400) * 1000);
	ck_assert_int_eq(ctl_until("2026-12-02T03:00:00+01:00", now, &ms,
	    &why), 0);
	ck_assert_int_eq(ms, ((int64_t)now + 1800) * 1000);
	ck_assert_int_eq(ctl_until("1:30", now, &ms, &why), -1);
}
END_TEST

/* The content lbagentctl writes: the reason first, then who and when. */
START_TEST(marker_content)
{
	struct marker	m;
	char		buf[MARKER_FILE_MAX], host[256];

	setenv("SUDO_USER", "alice", 1);
	ck_assert_int_eq(ctl_marker_content(buf, sizeof(buf), "kernel",
	    1796181600000LL, 1796181602000LL), 0);
	ck_assert_uint_ne(buf[strlen(buf) - 1], '\n');
	gethostname(host, sizeof(host));
	memset(&m, 0, sizeof(m));
	marker_parse(&m, MARKER_DRAIN, buf, strlen(buf), false);
	ck_assert_str_eq(m.reason, "kernel");
	ck_assert_str_eq(m.owner, "alice");
	ck_assert_str_eq(m.host, host);
	ck_assert_int_eq(m.since_wall_ms, 1796181600000LL);
	ck_assert_int_eq(m.until_wall_ms, 1796181602000LL);
	unsetenv("SUDO_USER");
	ck_assert_int_eq(ctl_marker_content(buf, sizeof(buf), NULL,
	    1796181600000LL, 1796181602000LL), 0);
	ck_assert(buf[0] == '\n');
	marker_parse(&m, MARKER_DRAIN, buf, strlen(buf), false);
	ck_assert(m.owner[0] != '\0');
}
END_TEST

/* Service names: lbagentctl refuses what the configuration refuses, so. */
START_TEST(args_service_names_as_the_config)
{
	static const char *const names[] = { "drain", "maint", "off", ".",
	    "..", ".x", "state.json", "state.json.tmp", "a/b" };
	struct ctl_opts	o;
	char		why[256], want[256];
	size_t		i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert_int_eq(name_service(names[i], want,
		    sizeof(want)), -1);
		ck_assert_int_eq(parse(&o, why, "drain", "on", "--service",
		    names[i], NULL), CTL_EXIT_USAGE);
		ck_assert_msg(strstr(why, want) != NULL, "%s: %s", names[i], why);
		ck_assert_int_eq(parse(&o, why, "status", names[i], NULL),
		    CTL_EXIT_USAGE);
		ck_assert_msg(strstr(why, want) != NULL, "%s: %s", names[i], why);
	}
	ck_assert_int_eq(parse(&o, why, "drain", "on", "--service", "drainer",
	    NULL), 0);
	ck_assert_str_eq(o.service, "drainer");
}
END_TEST

START_TEST(usage_fits)
{
	char	*text = NULL, *line;
	size_t	 len = 0;
	FILE	*fp;

	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	ctl_usage(fp, true);
	fclose(fp);
	for (line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"))
		ck_assert_msg(strlen(line) <= 80, "usage line too long: %s", line);
	free(text);
}
END_TEST

/* ---------------------------------------------------------- addresses */

START_TEST(addresses)
{
	struct ctl_addr	 a;
	const char	*why;
	static const char *const bad[] = {
		"", "9506", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:http", "unix:relative", "unix:", "https://h:1",
		"http://h:1/status", "::1:9506", "[::1]9506", "h:1:2",
		"user@h:1",
	};
	size_t		 i;

	ck_assert_int_eq(ctl_addr_parse("unix:/run/lbagent/http.sock", &a,
	    &why), 0);
	ck_assert_str_eq(a.unix_path, "/run/lbagent/http.sock");
	ck_assert_str_eq(a.url, "http://localhost");
	ck_assert_str_eq(a.text, "unix:/run/lbagent/http.sock");

	ck_assert_int_eq(ctl_addr_parse("127.0.0.1:9506", &a, &why), 0);
	ck_assert_str_eq(a.unix_path, "");
	ck_assert_str_eq(a.url, "http://127.0.0.1:9506");
	ck_assert_int_eq(ctl_addr_parse("http://localhost:9506/", &a, &why), 0);
	ck_assert_str_eq(a.url, "http://localhost:9506");
	ck_assert_int_eq(ctl_addr_parse("[::1]:9506", &a, &why), 0);
	ck_assert_str_eq(a.url, "http://[::1]:9506");

	/* What a listener binds to everything is asked on loopback. */
	ck_assert_int_eq(ctl_addr_parse("*:9506", &a, &why), 0);
	ck_assert_str_eq(a.url, "http://127.0.0.1:9506");
	ck_assert_str_eq(a.text, "*:9506");
	ck_assert_int_eq(ctl_addr_parse("0.0.0.0:9506", &a, &why), 0);
	ck_assert_str_eq(a.url, "http://127.0.0.1:9506");
	ck_assert_int_eq(ctl_addr_parse("[::]:9506", &a, &why), 0);
	ck_assert_str_eq(a.url, "http://[::1]:9506");

	/* Where a token may go. */
	ck_assert_int_eq(ctl_addr_parse("127.0.0.2:1", &a, &why), 0);
	ck_assert(ctl_addr_is_local(&a));
	ck_assert_int_eq(ctl_addr_parse("[::]:1", &a, &why), 0);
	ck_assert(ctl_addr_is_local(&a));
	ck_assert_int_eq(ctl_addr_parse("localhost:1", &a, &why), 0);
	ck_assert(ctl_addr_is_local(&a));
	ck_assert_int_eq(ctl_addr_parse("unix:/x", &a, &why), 0);
	ck_assert(ctl_addr_is_local(&a));
	ck_assert_int_eq(ctl_addr_parse("10.0.0.1:9506", &a, &why), 0);
	ck_assert(!ctl_addr_is_local(&a));
	ck_assert_int_eq(ctl_addr_parse("127.example.com:9506", &a, &why), 0);
	ck_assert(!ctl_addr_is_local(&a));
	ck_assert_int_eq(ctl_addr_parse("localhost.evil:9506", &a, &why), 0);
	ck_assert(!ctl_addr_is_local(&a));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(ctl_addr_parse(bad[i], &a, &why) == -1,
		    "'%s' accepted", bad[i]);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

START_TEST(address_order)
{
	const char	*entries[] = { "127.0.0.1:9506", "[::1]:9507",
			    "unix:/a.sock", "unix:/b.sock" };
	const char	*bad_entries[] = { "127.0.0.1:9506", "nope" };
	struct ctl_addr	 out[4];
	const char	*bad, *why;

	/* Unix sockets first (the detail needs no token there), in order. */
	ck_assert_int_eq(ctl_addr_list(entries, 4, out, 4, &bad, &why), 4);
	ck_assert_str_eq(out[0].text, "unix:/a.sock");
	ck_assert_str_eq(out[1].text, "unix:/b.sock");
	ck_assert_str_eq(out[2].text, "127.0.0.1:9506");
	ck_assert_str_eq(out[3].text, "[::1]:9507");
	ck_assert_int_eq(ctl_addr_list(entries, 0, out, 4, &bad, &why), 0);
	ck_assert_int_eq(ctl_addr_list(bad_entries, 2, out, 4, &bad, &why), -1);
	ck_assert_str_eq(bad, "nope");
}
END_TEST

/* ------------------------------------------------------------ the HTTP client */

static const struct th_route routes[] = {
	{ .path = "/status", .status = 200, .body = "{\"services\": []}" },
	{ .path = "/denied", .status = 401, .body = "{\"error\": \"no\"}" },
	{ .path = "/silent", .mode = TH_SILENT },
	{ .path = NULL },
};

START_TEST(http_get_tcp)
{
	struct th_server	*srv;
	struct ctl_addr		 a;
	const char		*why;
	char			 addr[64], err[256], *body, *req, *auth;
	long			 status;
	int			 port;

	ck_assert_ptr_nonnull(srv = th_start_tcp(routes, &port));
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	ck_assert_int_eq(ctl_addr_parse(addr, &a, &why), 0);
	/* A proxy in the environment is never used: the token stays here. */
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	setenv("HTTP_PROXY", "http://127.0.0.1:1", 1);

	ck_assert_int_eq(ctl_http_get(&a, "s3cret", "/status", &status, &body,
	    err, sizeof(err)), CTL_HTTP_OK);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(body, "{\"services\": []}");
	free(body);
	req = th_last_request(srv);
	ck_assert_ptr_nonnull(strstr(req, "GET /status HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(auth = strstr(req, "\r\nAuthorization: Bearer "
	    "s3cret"));
	auth += strlen("\r\nAuthorization: Bearer s3cret");
	ck_assert(*auth == '\r' || *auth == '\0');
	free(req);

	/* No token, no header. */
	ck_assert_int_eq(ctl_http_get(&a, NULL, "/status", &status, &body,
	    err, sizeof(err)), CTL_HTTP_OK);
	free(body);
	req = th_last_request(srv);
	ck_assert_ptr_null(strcasestr(req, "Authorization"));
	free(req);

	/* Any status is an answer; the caller reads it. */
	ck_assert_int_eq(ctl_http_get(&a, "bad", "/denied", &status, &body,
	    err, sizeof(err)), CTL_HTTP_OK);
	ck_assert_int_eq(status, 401);
	free(body);

	/* A daemon that accepts and never answers: bounded. */
	ck_assert_int_eq(ctl_http_get(&a, NULL, "/silent", &status, &body,
	    err, sizeof(err)), CTL_HTTP_TIMEOUT);
	ck_assert_ptr_null(body);
	th_stop(srv);
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
}
END_TEST

START_TEST(http_get_unix)
{
	struct th_server	*srv;
	struct ctl_addr		 a;
	const char		*why;
	char			 addr[512], path[256], err[256], *body, *req;
	long			 status;

	snprintf(path, sizeof(path), "%s/http.sock", dir);
	snprintf(addr, sizeof(addr), "unix:%s", path);
	ck_assert_int_eq(ctl_addr_parse(addr, &a, &why), 0);
	/* Nothing there yet: not running. */
	ck_assert_int_eq(ctl_http_get(&a, NULL, "/status", &status, &body,
	    err, sizeof(err)), CTL_HTTP_NOT_RUNNING);
	ck_assert_ptr_nonnull(strstr(err, path));

	ck_assert_ptr_nonnull(srv = th_start_unix(routes, path));
	ck_assert_int_eq(ctl_http_get(&a, NULL, "/status", &status, &body,
	    err, sizeof(err)), CTL_HTTP_OK);
	ck_assert_int_eq(status, 200);
	free(body);
	req = th_last_request(srv);
	ck_assert_ptr_nonnull(strstr(req, "GET /status HTTP/1.1\r\n"));
	free(req);
	th_stop(srv);

	/* A socket left behind with nobody accepting: not running either. */
	ck_assert_int_eq(ctl_http_get(&a, NULL, "/status", &status, &body,
	    err, sizeof(err)), CTL_HTTP_NOT_RUNNING);
}
END_TEST

START_TEST(http_get_refused)
{
	struct ctl_addr	 a;
	const char	*why;
	char		 addr[64], err[256], *body;
	long		 status;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", th_closed_port());
	ck_assert_int_eq(ctl_addr_parse(addr, &a, &why), 0);
	ck_assert_int_eq(ctl_http_get(&a, NULL, "/status", &status, &body,
	    err, sizeof(err)), CTL_HTTP_NOT_RUNNING);
	ck_assert_ptr_null(body);
}
END_TEST

START_TEST(token_file)
{
	char		*path, *tok;
	const char	*why;

	path = tu_write(dir, "token", "  s3cret \r\nsecond line\n", -1);
	ck_assert_str_eq(tok = ctl_read_token(path, &why), "s3cret");
	free(tok);
	free(path);
	path = tu_write(dir, "empty", " \n", -1);
	ck_assert_ptr_null(ctl_read_token(path, &why));
	ck_assert_str_eq(why, "empty");
	free(path);
	ck_assert_ptr_null(ctl_read_token("/nonexistent/token", &why));
	ck_assert_str_eq(why, strerror(ENOENT));
}
END_TEST

/* ----------------------------------------------------- configuration */

START_TEST(conf_good)
{
	struct ctl_conf	 c;
	char		 why[256], *path;

	path = tu_write(dir, "good.conf",
	    "[agent]\nstate_dir = /srv/lb\n\n"
	    "[http]\nlisten = *:9600, unix:/run/x.sock\n"
	    "token_file = /etc/lbagent/token\n\n"
	    "[probe p]\ntype = file\npath = /tmp/x\n\n"
	    "[service web]\nprobes = p\n", -1);
	ck_assert_int_eq(ctl_conf_load(path, &c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c.nerrors, 0);
	ck_assert_str_eq(c.state_dir, "/srv/lb");
	ck_assert_uint_eq(c.nlisten, 2);
	ck_assert_str_eq(c.listen[0], "*:9600");
	ck_assert_str_eq(c.listen[1], "unix:/run/x.sock");
	ck_assert_str_eq(c.token_file, "/etc/lbagent/token");
	ck_assert_uint_eq(c.nservices, 1);
	ck_assert_str_eq(c.services[0], "web");
	ctl_conf_free(&c);
	free(path);

	/* The defaults are config.c's. */
	path = tu_write(dir, "empty.conf", "", -1);
	ck_assert_int_eq(ctl_conf_load(path, &c, why, sizeof(why)), 0);
	ck_assert_str_eq(c.state_dir, "/var/lib/lbagent");
	ck_assert_uint_eq(c.nlisten, 1);
	ck_assert_str_eq(c.listen[0], "127.0.0.1:9506");
	ck_assert_ptr_null(c.token_file);
	ck_assert_uint_eq(c.nservices, 0);
	ctl_conf_free(&c);
	free(path);

	ck_assert_int_eq(ctl_conf_load("/nonexistent/lbagent.conf", &c, why,
	    sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "/nonexistent/lbagent.conf"));
}
END_TEST

START_TEST(conf_with_errors)
{
	struct ctl_conf	 c;
	char		 why[256], *path;

	/* An edit under way: the few keys still count, over the defaults. */
	path = tu_write(dir, "broken.conf",
	    "[agent]\nstate_dir = /srv/lb\nbogus = 1\n\n"
	    "[http]\nlisten = 127.0.0.1:9700 ,unix:/run/y.sock\n\n"
	    "[probe p]\ntype = nosuchkind\n\n"
	    "this line is not ini\n"
	    "[service api]\nprobes = p, missing\n"
	    "[service off]\nprobes = p\n[service ../etc]\nprobes = p\n",
	    -1);
	ck_assert_int_eq(ctl_conf_load(path, &c, why, sizeof(why)), 0);
	ck_assert_uint_gt(c.nerrors, 0);
	ck_assert_str_eq(c.state_dir, "/srv/lb");
	ck_assert_uint_eq(c.nlisten, 2);
	ck_assert_str_eq(c.listen[0], "127.0.0.1:9700");
	ck_assert_str_eq(c.listen[1], "unix:/run/y.sock");
	ck_assert_ptr_null(c.token_file);
	ck_assert_uint_eq(c.nservices, 1);
	ck_assert_str_eq(c.services[0], "api");
	ctl_conf_free(&c);
	free(path);

	path = tu_write(dir, "none.conf", "[http]\nlisten = none\n"
	    "[agent]\nstate_dir = relative\nx = y\n", -1);
	ck_assert_int_eq(ctl_conf_load(path, &c, why, sizeof(why)), 0);
	ck_assert_uint_gt(c.nerrors, 0);
	ck_assert_uint_eq(c.nlisten, 0);
	ck_assert_str_eq(c.state_dir, "/var/lib/lbagent");
	ctl_conf_free(&c);
	free(path);
}
END_TEST

/* ------------------------------------------------------------ markers */

static char *
slurp(const char *path)
{
	static char	buf[1024];
	FILE		*fp = fopen(path, "r");
	size_t		 n;

	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* Only the expected names in d: no temporary file left behind. */
static void
only_files(const char *d, const char *a, const char *b)
{
	DIR		*dp = opendir(d);
	struct dirent	*de;

	ck_assert_ptr_nonnull(dp);
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		ck_assert_msg((a != NULL && strcmp(de->d_name, a) == 0) ||
		    (b != NULL && strcmp(de->d_name, b) == 0),
		    "unexpected %s in %s", de->d_name, d);
	}
	closedir(dp);
}

START_TEST(marker_set_and_clear)
{
	char		 path[512], sdir[512], err[256];
	struct stat	 st;
	struct markers	 ms;
	mode_t		 old = umask(022);

	ck_assert_int_eq(ctl_marker_path(path, sizeof(path), dir, NULL,
	    MARKER_DRAIN), 0);
	ck_assert_int_eq(ctl_marker_set(dir, NULL, MARKER_DRAIN,
	    "kernel upgrade (alice)", err, sizeof(err)), 0);
	ck_assert_str_eq(slurp(path), "kernel upgrade (alice)\n");
	ck_assert_int_eq(stat(path, &st), 0);
	/* What touch makes: 0666 less the umask. */
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	only_files(dir, "drain", NULL);

	/* The daemon's reader sees the reason. */
	memset(&ms, 0, sizeof(ms));
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "kernel upgrade (alice)");

	/* Replaced, not appended; without a reason, empty. */
	ck_assert_int_eq(ctl_marker_set(dir, NULL, MARKER_DRAIN, NULL, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(slurp(path), "");
	markers_read(dir, &ms);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "drain marker");
	only_files(dir, "drain", NULL);

	ck_assert_int_eq(ctl_marker_clear(dir, NULL, MARKER_DRAIN, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* Gone already is fine. */
	ck_assert_int_eq(ctl_marker_clear(dir, NULL, MARKER_DRAIN, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(ctl_marker_clear(dir, "web", MARKER_MAINT, err,
	    sizeof(err)), 0);

	/* A service's directory is made as lbagent makes it. */
	ck_assert_int_eq(ctl_marker_set(dir, "web", MARKER_OFF, "", err,
	    sizeof(err)), 0);
	snprintf(sdir, sizeof(sdir), "%s/web", dir);
	ck_assert_int_eq(stat(sdir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0755);
	ck_assert_int_eq(ctl_marker_path(path, sizeof(path), dir, "web",
	    MARKER_OFF), 0);
	ck_assert_str_eq(slurp(path), "\n");
	only_files(sdir, "off", NULL);
	umask(old);
}
END_TEST

START_TEST(marker_failures)
{
	char	path[512], err[256], *file;

	/* Something in the marker's place that a rename cannot replace. */
	ck_assert_int_eq(ctl_marker_path(path, sizeof(path), dir, NULL,
	    MARKER_MAINT), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	free(tu_write(path, "keep", "x", -1));
	err[0] = '\0';
	ck_assert_int_eq(ctl_marker_set(dir, NULL, MARKER_MAINT, "r", err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, path));
	only_files(dir, "maint", NULL);
	ck_assert_int_eq(ctl_marker_clear(dir, NULL, MARKER_MAINT, err,
	    sizeof(err)), -1);

	/* A state_dir that is a file. */
	file = tu_write(dir, "file", "", -1);
	ck_assert_int_eq(ctl_marker_set(file, NULL, MARKER_DRAIN, NULL, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, file));
	free(file);
}
END_TEST

/* A service's directory that is a link: never written (or read) through. */
START_TEST(marker_service_dir_link)
{
	char	other[512], link[1024], err[256];
	struct stat st;

	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	ck_assert_int_eq(mkdir(other, 0755), 0);
	free(tu_write(other, "maint", "keep me", -1));
	snprintf(link, sizeof(link), "%s/web", dir);
	ck_assert_int_eq(symlink(other, link), 0);
	err[0] = '\0';
	ck_assert_int_eq(ctl_marker_set(dir, "web", MARKER_DRAIN, "r", err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "symbolic link") != NULL, "%s", err);
	ck_assert_int_eq(ctl_marker_clear(dir, "web", MARKER_MAINT, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "symbolic link") != NULL, "%s", err);
	only_files(other, "maint", NULL);
	snprintf(link, sizeof(link), "%s/maint", other);
	ck_assert_int_eq(stat(link, &st), 0);
}
END_TEST

/* -------------------------------------------------- what to wait for */

static json_t *
svc(const char *state, const char *automation)
{
	return json_pack("{s:s, s:s, s:s}", "name", "web", "state", state,
	    "automation", automation);
}

START_TEST(expectations)
{
	struct markers		node, own;
	struct ctl_expect	e;

	memset(&node, 0, sizeof(node));
	memset(&own, 0, sizeof(own));
	ctl_expect_from(&node, NULL, &e);
	ck_assert_ptr_null(e.state);
	ck_assert(!e.off);

	node.m[MARKER_DRAIN].present = true;
	ctl_expect_from(&node, &own, &e);
	ck_assert_str_eq(e.state, "drain");
	/* Maint wins over drain, from either scope. */
	own.m[MARKER_MAINT].present = true;
	ctl_expect_from(&node, &own, &e);
	ck_assert_str_eq(e.state, "maint");
	/* The default service has the node's markers only. */
	ctl_expect_from(&node, NULL, &e);
	ck_assert_str_eq(e.state, "drain");
	own.m[MARKER_OFF].present = true;
	ctl_expect_from(&node, &own, &e);
	ck_assert(e.off);
}
END_TEST

START_TEST(reflects)
{
	struct ctl_expect	 e = { .state = NULL, .reason = NULL, .off = false };
	json_t			*s;

	s = svc("up", "auto");
	ck_assert(ctl_reflects(s, &e, true, false));
	e.state = "drain";
	ck_assert(!ctl_reflects(s, &e, true, false));
	json_decref(s);
	s = svc("drain", "auto");
	ck_assert(ctl_reflects(s, &e, true, false));
	e.state = "maint";
	ck_assert(!ctl_reflects(s, &e, true, false));
	/* After drain off, drain still showing is not done. */
	e.state = NULL;
	ck_assert(!ctl_reflects(s, &e, true, false));
	json_decref(s);
	s = svc("down", "auto");
	ck_assert(ctl_reflects(s, &e, true, false));
	json_decref(s);

	/* The marker's reason, alone or with what the peer guard adds. */
	e.state = "drain";
	e.reason = "deploy";
	s = svc("drain", "auto");
	json_object_set_new(s, "reason", json_string("deploy"));
	ck_assert(ctl_reflects(s, &e, true, false));
	json_object_set_new(s, "reason",
	    json_string("deploy (no other node serving)"));
	ck_assert(ctl_reflects(s, &e, true, false));
	json_object_set_new(s, "reason",
	    json_string("other (no other node serving)"));
	ck_assert(!ctl_reflects(s, &e, true, false));
	json_object_set_new(s, "reason",
	    json_string("dep (no other node serving)"));
	ck_assert(!ctl_reflects(s, &e, true, false));	/* not cut: shorter */
	e.reason = "";
	json_object_set_new(s, "reason", json_string("no other node serving"));
	ck_assert(ctl_reflects(s, &e, true, false));
	e.state = NULL;
	e.reason = NULL;
	json_decref(s);
	s = svc("down", "auto");

	/* Automation only. */
	e.off = true;
	ck_assert(!ctl_reflects(s, &e, false, true));
	json_decref(s);
	s = svc("up", "off");
	ck_assert(ctl_reflects(s, &e, false, true));
	e.off = false;
	ck_assert(!ctl_reflects(s, &e, false, true));
	json_decref(s);
	/* Shadow mode is not off: mode auto is done, with a note. */
	s = svc("up", "shadow");
	ck_assert(ctl_reflects(s, &e, false, true));
	ck_assert_str_eq(ctl_shadow_by(s), "a shadow marker or setting");
	json_object_set_new(s, "shadow_by", json_string("LBAGENT_MODE=shadow"));
	ck_assert_str_eq(ctl_shadow_by(s), "LBAGENT_MODE=shadow");
	e.off = true;
	ck_assert(!ctl_reflects(s, &e, false, true));
	e.off = false;
	json_decref(s);
	s = svc("up", "auto");
	ck_assert_ptr_null(ctl_shadow_by(s));
	json_decref(s);
	ck_assert(!ctl_reflects(NULL, &e, true, true));
}
END_TEST

/* maint on --reason over a maint: done only once the new reason shows. */
START_TEST(reflects_reason)
{
	struct markers		 node, own;
	struct ctl_expect	 e;
	json_t			*s = svc("maint", "auto");

	memset(&node, 0, sizeof(node));
	memset(&own, 0, sizeof(own));
	node.m[MARKER_MAINT].present = true;
	snprintf(node.m[MARKER_MAINT].reason, sizeof(node.m[0].reason),
	    "third reason");
	ctl_expect_from(&node, &own, &e);
	ck_assert_str_eq(e.reason, "third reason");
	/* The public part has no reason: the word is all there is. */
	ck_assert(ctl_reflects(s, &e, true, false));
	json_object_set_new(s, "reason", json_string("again"));
	ck_assert(!ctl_reflects(s, &e, true, false));
	json_object_set_new(s, "reason", json_string("third reason"));
	ck_assert(ctl_reflects(s, &e, true, false));
	/* The service's own marker wins, as in the decision. */
	own.m[MARKER_MAINT].present = true;
	snprintf(own.m[MARKER_MAINT].reason, sizeof(own.m[0].reason), "own");
	ctl_expect_from(&node, &own, &e);
	ck_assert_str_eq(e.reason, "own");
	ck_assert(!ctl_reflects(s, &e, true, false));
	/* Maint over drain: maint's reason. */
	memset(&own, 0, sizeof(own));
	own.m[MARKER_DRAIN].present = true;
	ctl_expect_from(&node, &own, &e);
	ck_assert_str_eq(e.reason, "third reason");
	json_decref(s);
}
END_TEST

START_TEST(off_not_by_marker)
{
	json_t	*s = svc("up", "off");

	/* Without detail it cannot be told. */
	ck_assert_ptr_null(ctl_off_not_by_marker(s));
	json_object_set_new(s, "markers", json_pack("[{s:s, s:s}]", "kind",
	    "off", "scope", "node"));
	json_object_set_new(s, "automation_off_by",
	    json_string("marker /var/lib/lbagent/off"));
	ck_assert_ptr_null(ctl_off_not_by_marker(s));
	json_object_set_new(s, "markers", json_array());
	json_object_set_new(s, "automation_off_by",
	    json_string("LBAGENT_MODE=off"));
	ck_assert_str_eq(ctl_off_not_by_marker(s), "LBAGENT_MODE=off");
	json_object_set_new(s, "automation", json_string("auto"));
	ck_assert_ptr_null(ctl_off_not_by_marker(s));
	json_decref(s);
}
END_TEST

/* ------------------------------------------------------------ the text */

static json_t *
fixture(const char *name)
{
	char		 path[1024];
	json_error_t	 e;
	json_t		*root;
	const char	*src = getenv("SOURCE_ROOT");

	snprintf(path, sizeof(path), "%s/tests/unit/data/ctl/%s",
	    src != NULL ? src : ".", name);
	root = json_load_file(path, 0, &e);
	ck_assert_msg(root != NULL, "%s: %s", path, e.text);
	return root;
}

static char *
format(const json_t *root, const char *only)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*fp;

	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	ctl_format_status(fp, root, only, 80);
	fclose(fp);
	return text;
}

/* Every line within 80 columns, every byte printable. */
static void
check_text(const char *text)
{
	const char	*p, *nl;

	for (p = text; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert_msg(nl - p <= 80, "line of %d columns: %.*s\n%s",
		    (int)(nl - p), (int)(nl - p), p, text);
	}
	for (p = text; *p != '\0'; p++)
		ck_assert_msg(*p == '\n' || (*p >= 0x20 && *p < 0x7f),
		    "byte 0x%02x in the text", (unsigned char)*p);
}

static size_t
count(const char *text, const char *needle)
{
	size_t	n = 0;

	for (; (text = strstr(text, needle)) != NULL; text++)
		n++;
	return n;
}

START_TEST(format_detail)
{
	json_t	*root = fixture("status_detail.json");
	char	*t = format(root, NULL);

	check_text(t);
	/* The daemon, its last reload's errors as file:line lines. */
	ck_assert_ptr_nonnull(strstr(t, "lbagent 0.1.0, pid 4242, node "
	    "web-1.example.net, incarnation 7\n"));
	ck_assert_ptr_nonnull(strstr(t, "FAILED"));
	ck_assert_ptr_nonnull(strstr(t,
	    "\n  /etc/lbagent/lbagent.conf:12: [probe client-api] url: missing\n"));
	/* The summary, the default service by its label. */
	ck_assert_ptr_nonnull(strstr(t, "\n(default)  drain       0  no       "
	    "auto\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nweb        up         45  yes      "
	    "off\n"));
	/* A name wider than the column has a line of its own. */
	ck_assert_ptr_nonnull(strstr(t, "\na-service-name-that-is-much-longer-"
	    "than-the-summary-column-allows-x\n           maint"));

	/* The reply, the decision, the rules, automation. */
	ck_assert_ptr_nonnull(strstr(t, "  reply       drain up #kernel upgrade "
	    "(alice)\n"));
	ck_assert_ptr_nonnull(strstr(t, "  decision    drain: kernel upgrade "
	    "(alice)\n"));
	ck_assert_ptr_nonnull(strstr(t, "  rules say   down: client-api: HTTP "
	    "503\n"));
	ck_assert_ptr_nonnull(strstr(t, "  automation  OFF (LBAGENT_MODE=off)\n"));
	/* Hysteresis in words, the ramp, damping. */
	ck_assert_ptr_nonnull(strstr(t, "  transition  up for 12m34s (since "
	    "2026-11-29 10:13:11 UTC)\n"));
	ck_assert_ptr_nonnull(strstr(t, "  pending     failing for 12s, goes "
	    "down at 30s\n"));
	ck_assert_ptr_nonnull(strstr(t, "  ramp        at 45%, rising to 100%; "
	    "started 20s ago, ends in 40s\n"));
	ck_assert_ptr_nonnull(strstr(t, "up_after x4 (5 goings-out"));
	ck_assert_ptr_nonnull(strstr(t, "none (1 going-out in the flap "
	    "window)"));
	/* Markers with their scope and reason, or unreadable. */
	ck_assert_ptr_nonnull(strstr(t, "  markers     drain (node-wide): "
	    "kernel upgrade (alice)\n              maint (this service): "
	    "present, unreadable\n"));
	/* Probes: result, value, last run, duration, reason. */
	ck_assert_ptr_nonnull(strstr(t, "    client-api   http     crit        "
	    "    -  3.2s ago   45 ms\n"));
	/* The value with its unit: a disk's is a percentage. */
	ck_assert_ptr_nonnull(strstr(t, "    disk         disk     warn       "
	    "86.25%  1s ago     1.5 s\n"));
	/* A name wider than the column has a line of its own. */
	ck_assert_ptr_nonnull(strstr(t, "    a-probe-with-a-very-long-name-"
	    "indeed-yes\n                 exec     -"));
	ck_assert_ptr_nonnull(strstr(t, "(counts as ok; runs 50 ok, 1 warn, 0 "
	    "crit)"));
	/* Runs lbagent could not make, when there were any. */
	ck_assert_ptr_nonnull(strstr(t, "(runs 120 ok, 0 warn, 3 crit, 7 "
	    "unknown)"));
	ck_assert_ptr_nonnull(strstr(t, "(not settled yet;"));
	/* An escape sequence in a reason is shown, not obeyed. */
	ck_assert_ptr_nonnull(strstr(t, "86% used\\x1b[31m evil"));
	/* Load balancers: address, text, last asked, last reply, owed. */
	ck_assert_ptr_nonnull(strstr(t, "    127.0.0.2 \"app\": asked 1.4s ago "
	    "(1234 checks), last reply \"drain up #kernel\n"));
	ck_assert_ptr_nonnull(strstr(t, "      still owed: ready, 100%\n"));
	ck_assert_ptr_nonnull(strstr(t, "2001:db8::1234:5678:9abc:def0 (no "
	    "agent-send): asked 2m05s ago"));
	ck_assert_int_eq(count(t, "still owed"), 1);
	/* A key from the state file has not been answered since the start. */
	ck_assert_ptr_nonnull(strstr(t, "10.0.0.9 \"api\": asked 3s ago (0 "
	    "checks), no reply since lbagent started\n"));
	/* The last 10 of 14 transitions, oldest first. */
	ck_assert_ptr_nonnull(strstr(t, "  last 10 of 14 transitions, newest "
	    "last\n"));
	ck_assert_ptr_null(strstr(t, "transition 4:"));
	ck_assert_ptr_nonnull(strstr(t, "    2026-11-29 10:04:11  up -> down: "
	    "transition 5:"));
	ck_assert_ptr_nonnull(strstr(t, "transition 14:"));
	ck_assert(strstr(t, "transition 5:") < strstr(t, "transition 14:"));
	ck_assert_int_eq(count(t, "  history     no transitions yet\n"), 2);
	ck_assert_int_eq(count(t, "\nservice "), 3);
	free(t);

	/* One service only. */
	t = format(root, "web");
	check_text(t);
	ck_assert_int_eq(count(t, "\nservice "), 1);
	ck_assert_ptr_nonnull(strstr(t, "\nservice web: up 45%, serving\n"));
	ck_assert_ptr_null(strstr(t, "(default)"));
	free(t);
	t = format(root, "");
	ck_assert_ptr_nonnull(strstr(t, "\nservice (default): drain, not "
	    "serving\n"));
	ck_assert_int_eq(count(t, "\nservice "), 1);
	free(t);
	json_decref(root);
}
END_TEST

START_TEST(format_public)
{
	json_t	*root = fixture("status_public.json");
	char	*t = format(root, NULL);

	check_text(t);
	ck_assert_ptr_nonnull(strstr(t, "node web-1, incarnation 7\n"));
	ck_assert_ptr_nonnull(strstr(t, "public view"));
	ck_assert_ptr_nonnull(strstr(t, "\nweb        down        0  no       "
	    "off\n"));
	ck_assert_ptr_null(strstr(t, "\nservice "));
	free(t);
	json_decref(root);
}
END_TEST

START_TEST(format_narrow_and_garbage)
{
	json_t		*root = fixture("status_detail.json");
	char		*text = NULL;
	size_t		 len = 0;
	FILE		*fp;

	/* Whatever comes back, the formatter neither crashes nor overflows. */
	json_object_set_new(json_array_get(json_object_get(root, "services"),
	    0), "probes", json_string("not an array"));
	json_object_set_new(root, "last_reload", json_integer(3));
	json_object_set_new(json_array_get(json_object_get(root, "services"),
	    1), "transition", json_pack("{s:s}", "state", "up"));
	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	ctl_format_status(fp, root, NULL, 80);
	fclose(fp);
	check_text(text);
	free(text);
	json_decref(root);
	root = json_pack("{s:b, s:[{s:i}]}", "detail", 1, "services", "name",
	    3);
	text = format(root, NULL);
	check_text(text);
	free(text);
	json_decref(root);
}
END_TEST

/* The peer guard and the load balancers' view, from a real daemon's answer. */
START_TEST(format_peer_guard)
{
	json_t	*root = fixture("status_peers.json");
	char	*text = format(root, NULL);

	check_text(text);
	ck_assert_msg(strstr(text, "  peer guard  holding: peer-guard: dep "
	    "failing but no other node serving\n") != NULL, "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "NO OTHER NODE SERVING (asked 0.4s "
	    "ago): n2: MAINT on\n      unix:/tmp/hx/admin.sock"));
	ck_assert_ptr_nonnull(strstr(text, "n2: not serving: MAINT on "
	    "unix:/tmp/hx/admin.sock"));
	ck_assert_ptr_nonnull(strstr(text, "WARNING: maint marker obeyed, but "
	    "no other node is serving"));
	ck_assert_ptr_nonnull(strstr(text, "  as the load balancers show it\n"
	    "    unix:/tmp/hx/admin.sock: be/n1 MAINT, weight 5 (initial 5), agent "
	    "L7OK\n      WARNING: initial weight 5 is below 10:"));
	ck_assert_ptr_nonnull(strstr(text, "http://127.0.0.1:19700/stats;csv: "
	    "be/n1 MAINT, weight 5 (initial unknown)"));
	ck_assert_ptr_nonnull(strstr(text, "\npeers\n  http://127.0.0.1:19601/"
	    "status: this node\n  n2 (http://127.0.0.1:19602/status): not "
	    "serving: MAINT on"));
	free(text);
	json_decref(root);
	/* Without peers: the guard is off, no peers list. */
	root = fixture("status_detail.json");
	text = format(root, NULL);
	ck_assert_ptr_null(strstr(text, "\npeers\n"));
	ck_assert_ptr_null(strstr(text, "as the load balancers show it"));
	free(text);
	json_decref(root);
}
END_TEST

/* A load balancer's row with what it has on the node: sessions, queue. */
START_TEST(format_lb_load)
{
	json_t	*root = fixture("status_peers.json"), *row;
	char	*text;

	row = json_array_get(json_object_get(json_array_get(json_object_get(
	    root, "haproxy"), 0), "this_node"), 0);
	json_object_set_new(row, "sessions", json_integer(3));
	json_object_set_new(row, "queued", json_integer(0));
	json_object_set_new(row, "others_serving", json_integer(2));
	row = json_array_get(json_object_get(json_array_get(json_object_get(
	    root, "haproxy"), 1), "this_node"), 0);
	json_object_set_new(row, "sessions", json_null());
	json_object_set_new(row, "queued", json_integer(1));
	json_object_set_new(row, "others_serving", json_null());
	text = format(root, NULL);
	check_text(text);
	ck_assert_msg(strstr(text, "    unix:/tmp/hx/admin.sock: be/n1 MAINT, "
	    "weight 5 (initial 5), agent L7OK\n      sessions 3, queued 0; "
	    "other servers serving: 2\n      WARNING: initial weight 5") !=
	    NULL, "%s", text);
	ck_assert_msg(strstr(text, "be/n1 MAINT, weight 5 (initial unknown),\n"
	    "      agent L7OK\n      sessions unknown, queued 1; other servers "
	    "serving: unknown\n") != NULL, "%s", text);
	free(text);
	json_decref(root);
}
END_TEST

/* One load balancer of the "haproxy" array, with one row. */
static json_t *
lb_json(const char *source, bool ok, double seen, const char *status,
    int weight, int sessions, int queued)
{
	json_t	*row = json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:n, s:n}",
	    "service", "", "backend", "be", "server", "n1", "found", 1,
	    "status", status, "weight", weight, "error", "warnings");

	json_object_set_new(row, "sessions", sessions < 0 ? json_null() :
	    json_integer(sessions));
	json_object_set_new(row, "queued", json_integer(queued));
	return json_pack("{s:s, s:b, s:o, s:o, s:[o]}", "source", source, "ok",
	    ok, "error", ok ? json_null() : json_string("connect: refused"),
	    "last_seen_s", seen < 0 ? json_null() : json_real(seen),
	    "this_node", row);
}

static enum ctl_drain
verdict(json_t *lb, double since_s, char *words, size_t size)
{
	json_t			*root = json_pack("{s:b, s:[o]}", "detail", 1,
				    "haproxy", lb);
	struct ctl_drain_lb	 v[2];

	ck_assert_uint_eq(ctl_drain_nlbs(root), 1);
	ck_assert_uint_eq(ctl_drain_check(root, NULL, since_s, v, 2), 1);
	ctl_drain_describe(&v[0], words, size);
	json_decref(root);
	return v[0].verdict;
}

START_TEST(drain_verdicts)
{
	struct ctl_drain_lb	 v[4];
	json_t			*root;
	char			 w[512];

	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "DRAIN (agent)", 0,
	    0, 0), 5, w, sizeof(w)), CTL_DRAIN_DONE);
	ck_assert_str_eq(w, "drained");
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "MAINT", 10, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_DONE);
	/* A weight of 0 is out of the traffic, whatever the status. */
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "UP", 0, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_DONE);
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "DOWN", 10, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_DONE);
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "DRAIN", 0, 1, 0),
	    5, w, sizeof(w)), CTL_DRAIN_BUSY);
	ck_assert_str_eq(w, "1 session, 0 queued");
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "DRAIN", 0, 0, 2),
	    5, w, sizeof(w)), CTL_DRAIN_BUSY);
	ck_assert_str_eq(w, "0 sessions, 2 queued");
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "UP 1/3", 100, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_SERVING);
	ck_assert_str_eq(w, "still in the traffic (be/n1 UP 1/3, weight 100), "
	    "0 sessions, 0 queued");
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "no check", 1, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_SERVING);
	/* Sessions unknown: never counted as none. */
	ck_assert_int_eq(verdict(lb_json("lb", true, 0.2, "DRAIN", 0, -1, 0),
	    5, w, sizeof(w)), CTL_DRAIN_UNKNOWN);
	ck_assert_str_eq(w, "be/n1: its sessions and queue are not known");
	/* An answer from before the wait began does not count. */
	ck_assert_int_eq(verdict(lb_json("lb", true, 5.5, "DRAIN", 0, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_OLD);
	ck_assert_str_eq(w, "no answer since the wait began (the last one "
	    "5.5s ago)");
	ck_assert_int_eq(verdict(lb_json("lb", true, -1, "DRAIN", 0, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_OLD);
	/* One that stopped answering is reported, never drained. */
	ck_assert_int_eq(verdict(lb_json("lb", false, 0.2, "DRAIN", 0, 0, 0),
	    5, w, sizeof(w)), CTL_DRAIN_SILENT);
	ck_assert_str_eq(w, "not answering: connect: refused");

	/* Several load balancers: done only when each is. */
	root = json_pack("{s:[o, o]}", "haproxy", lb_json("a", true, 0.1,
	    "DRAIN", 0, 0, 0), lb_json("b", true, 0.1, "DRAIN", 0, 2, 0));
	ck_assert_uint_eq(ctl_drain_check(root, NULL, 1, v, 4), 2);
	ck_assert_str_eq(v[0].source, "a");
	ck_assert(!ctl_drain_done(v, 2));
	ck_assert(ctl_drain_done(v, 1));
	ck_assert(!ctl_drain_done(v, 0));
	/* Only the service waited for counts; none there is unknown. */
	ck_assert_uint_eq(ctl_drain_check(root, "web", 1, v, 4), 2);
	ck_assert_int_eq(v[0].verdict, CTL_DRAIN_UNKNOWN);
	ck_assert_uint_eq(ctl_drain_check(root, "", 1, v, 4), 2);
	ck_assert_int_eq(v[0].verdict, CTL_DRAIN_DONE);
	ck_assert_int_eq(v[1].verdict, CTL_DRAIN_BUSY);
	json_decref(root);

	/* A server the load balancer does not have. */
	root = json_pack("{s:[{s:s, s:b, s:n, s:f, s:[{s:s, s:s, s:s, s:b, "
	    "s:s}]}]}", "haproxy", "source", "lb", "ok", 1, "error",
	    "last_seen_s", 0.1, "this_node", "service", "", "backend", "be",
	    "server", "n9", "found", 0, "error", "no server be/n9");
	ck_assert_uint_eq(ctl_drain_check(root, NULL, 1, v, 4), 1);
	ck_assert_int_eq(v[0].verdict, CTL_DRAIN_UNKNOWN);
	ctl_drain_describe(&v[0], w, sizeof(w));
	ck_assert_str_eq(w, "be/n9: no server be/n9");
	json_decref(root);
	/* No load balancer at all: never done. */
	root = json_pack("{s:[]}", "haproxy");
	ck_assert_uint_eq(ctl_drain_nlbs(root), 0);
	ck_assert_uint_eq(ctl_drain_check(root, NULL, 1, v, 4), 0);
	json_decref(root);
}
END_TEST

/* A service object for the formatters: name, state, and the detail. */
static json_t *
svc_detail(const char *name, const char *state, int weight, bool serving,
    const char *reply, const char *reason)
{
	return json_pack("{s:s, s:s, s:i, s:b, s:s, s:s, s:s, s:n, s:{s:s, "
	    "s:i, s:s}, s:{s:s, s:i, s:s, s:f, s:n, s:n, s:{s:i, s:i, s:f}}, "
	    "s:[], s:[], s:[], s:[]}",
	    "name", name, "state", state, "weight", weight, "serving", serving,
	    "automation", "auto", "reply", reply, "reason", reason,
	    "automation_off_by", "target", "state", state, "weight", weight,
	    "reason", reason, "transition", "state", state, "weight", weight,
	    "since", "2026-11-29T10:02:11.000Z", "since_s", 1380.0, "pending",
	    "ramp", "damping", "factor", 1, "outs_in_window", 0, "up_after_s",
	    60.0, "markers", "probes", "load_balancers", "history");
}

static json_t *
doc_of(json_t *svc)
{
	return json_pack("{s:b, s:s, s:[o]}", "detail", 1, "started_at",
	    "2026-11-29T07:00:00.000Z", "services", svc);
}

/* The fixture's moment: 2026-11-29 10:25:11 UTC. */
#define NOW	((time_t)1795947911)

static char *
format_with(int which, const json_t *root, const char *only)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*fp;

	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	if (which == 0)
		ctl_format_short(fp, root, only, 80);
	else if (which == 1)
		ctl_format_why(fp, root, only, 80, NOW);
	else
		ctl_format_replies(fp, ctl_service(root, only), "web", 80);
	fclose(fp);
	check_text(text);
	return text;
}

static void
utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

START_TEST(format_short)
{
	json_t	*root = fixture("status_detail.json");
	char	*t;

	utc();
	t = format_with(0, root, NULL);
	ck_assert_ptr_nonnull(strstr(t, "SERVICE    REPLY     WHY"));
	/* The reply's words, the marker's reason, when the drain began. */
	ck_assert_msg(strstr(t, "\n(default)  drain up  drain marker: kernel "
	    "upgrade (alice)               10:13:11\n") != NULL, "%s", t);
	ck_assert_ptr_nonnull(strstr(t, "\nweb        -         automation off "
	    "(LBAGENT_MODE=off)"));
	free(t);
	t = format_with(0, root, "web");
	ck_assert_ptr_null(strstr(t, "(default)"));
	free(t);
	json_decref(root);

	/* A long why is cut to its column; SINCE stays in place. */
	root = doc_of(svc_detail("api", "down", 0, false, "down #client-api: "
	    "HTTP 503 from http://127.0.0.1:8080/a/very/long/path/indeed",
	    "client-api: HTTP 503 from http://127.0.0.1:8080/a/very/long/path/"
	    "indeed"));
	t = format_with(0, root, NULL);
	ck_assert_msg(strstr(t, "\napi        down   client-api: HTTP 503 from "
	    "http://127.0.0.1:8080/a...  10:02:11\n") != NULL, "%s", t);
	free(t);
	json_decref(root);

	/* The public part: the state, no why, no time. */
	root = fixture("status_public.json");
	t = format_with(0, root, NULL);
	ck_assert_msg(strstr(t, "\nweb        down   -") != NULL, "%s", t);
	free(t);
	json_decref(root);
}
END_TEST

static char *
fleet_text(const json_t *root, const char *service, json_t **fleet)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*fp;

	ck_assert_ptr_nonnull(*fleet = ctl_fleet_json(root, service));
	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	ctl_fleet_format(fp, *fleet, 80);
	fclose(fp);
	check_text(text);
	return text;
}

START_TEST(format_fleet)
{
	json_t		*root = fixture("status_fleet.json"), *f, *rows, *r;
	char		*t;

	t = fleet_text(root, NULL, &f);
	rows = json_object_get(f, "rows");
	/* This node first, once (its own answer is not a second row). */
	ck_assert_uint_eq(json_array_size(rows), 4);
	r = json_array_get(rows, 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "node")), "n1");
	ck_assert(json_is_true(json_object_get(r, "self")));
	ck_assert_msg(strstr(t, "fleet as n1 sees it: peers asked 0.4s ago "
	    "(every 1s); suspect after 3,") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\nNODE           STATE  WT   SERVE AUTO    "
	    "SEEN   LIVENESS INC  LB\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\nn1*            up     100  yes   auto    "
	    "now    self     3    1:UP/100\n") != NULL, "%s", t);
	/* A long name is cut, with a mark. */
	ck_assert_msg(strstr(t, "\na-rather-long~ drain  0    no    off     "
	    "0.2s   alive    12   1:DRAIN (agent)/0\n") != NULL, "%s", t);
	/* A peer that does not answer says so, with its last incarnation. */
	ck_assert_msg(strstr(t, "\nn3             no answer: connection "
	    "re~ 13m    dead     5    1:DOWN/0\n") != NULL, "%s", t);
	/* Never answered: its address, never seen. */
	ck_assert_msg(strstr(t, "\nhttp://10.0.0~ no answer: timeout        "
	    "never  suspect  -\n") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\nLB 1: unix:/run/haproxy/admin.sock\n") !=
	    NULL, "%s", t);
	free(t);
	json_decref(f);

	/* Another service: its state and weight. */
	t = fleet_text(root, "web", &f);
	ck_assert_msg(strstr(t, "\na-rather-long~ up     50   yes   auto ") !=
	    NULL, "%s", t);
	ck_assert_ptr_nonnull(strstr(t, ", service web:"));
	free(t);
	json_decref(f);

	/* More load balancers than fit: whole entries, and how many more. */
	{
		json_t	*lbs = json_array();
		FILE	*fp;
		char	*text = NULL;
		size_t	 len = 0, k;

		free(fleet_text(root, NULL, &f));
		for (k = 0; k < 8; k++)
			json_array_append_new(lbs, json_pack("{s:s, s:i}",
			    "status", "UP", "weight", 100));
		json_object_set_new(json_array_get(json_object_get(f, "rows"),
		    0), "load_balancers", lbs);
		ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
		ctl_fleet_format(fp, f, 80);
		fclose(fp);
		ck_assert_msg(strstr(text, "    now    self     3    1:UP/100 "
		    "+7 more\n") != NULL, "%s", text);
		free(text);
		json_decref(f);
	}

	/* A view older than its rounds allow says so. */
	json_object_set_new(json_object_get(root, "peer_rounds"),
	    "last_round_s", json_real(300.0));
	t = fleet_text(root, NULL, &f);
	ck_assert_msg(strstr(t, "peers asked 5m ago, STALE (every 1s)") != NULL,
	    "%s", t);
	free(t);
	json_decref(f);

	/* Garbage where rows would be: no crash, every line in 80. */
	json_object_set_new(root, "peers", json_string("\x01"));
	json_object_set_new(root, "peer_rounds", json_null());
	t = fleet_text(root, NULL, &f);
	ck_assert_uint_eq(json_array_size(json_object_get(f, "rows")), 1);
	ck_assert_msg(strstr(t, "no [peers] agents configured") != NULL, "%s", t);
	free(t);
	json_decref(f);
	json_object_set_new(root, "peers", json_pack("[{s:s, s:i}]", "node_id",
	    "bad\x02name\n", "services", 3));
	t = fleet_text(root, NULL, &f);
	ck_assert_uint_eq(json_array_size(json_object_get(f, "rows")), 2);
	free(t);
	json_decref(f);
	json_decref(root);
}
END_TEST

START_TEST(status_exit)
{
	json_t	*root = fixture("status_detail.json");

	/* The default service is drained: not serving, though web serves. */
	ck_assert_int_eq(ctl_status_exit(root, NULL), 3);
	ck_assert_int_eq(ctl_status_exit(root, ""), 3);
	/* web serves, but the last reload failed: 5, the node's. */
	ck_assert_int_eq(ctl_status_exit(root, "web"), 5);
	ck_assert_int_eq(ctl_status_exit(root, "nosuch"), 3);
	json_object_set_new(root, "last_reload", json_null());
	ck_assert_int_eq(ctl_status_exit(root, "web"), 0);
	/* A name no service has, asked lately: 5; not lately: 0. */
	json_object_set_new(root, "unknown_names", json_pack("[{s:s, s:s, "
	    "s:i, s:b}]", "name", "aip", "from", "10.0.0.1", "checks", 3,
	    "recent", 1));
	ck_assert_int_eq(ctl_status_exit(root, "web"), 5);
	json_object_set_new(json_array_get(json_object_get(root,
	    "unknown_names"), 0), "recent", json_false());
	ck_assert_int_eq(ctl_status_exit(root, "web"), 0);
	json_decref(root);
	root = doc_of(svc_detail("api", "up", 50, true, "up 50%", "disk: 91%"));
	ck_assert_int_eq(ctl_status_exit(root, NULL), 0);
	json_decref(root);
	root = doc_of(svc_detail("api", "up", 0, false, "up 0%", "x"));
	ck_assert_int_eq(ctl_status_exit(root, NULL), 3);
	json_decref(root);
}
END_TEST

START_TEST(format_why)
{
	json_t	*root = fixture("status_detail.json"), *s, *tr;
	char	*t;

	utc();
	t = format_with(1, root, NULL);
	/* A marker: which, its reason, what ends it, the rules underneath. */
	ck_assert_msg(strstr(t, "(default): drain since 10:13:11 (12m ago), "
	    "not serving\n  because of the drain marker (node-wide): kernel "
	    "upgrade (alice)\n  ends with `lbagentctl drain off`\n  underneath, "
	    "the probes say down (client-api: HTTP 503)\n") != NULL, "%s", t);
	/* Automation off, not by a marker. */
	ck_assert_ptr_nonnull(strstr(t, "  automation is off (LBAGENT_MODE=off): "
	    "the load balancers keep what they were\n    last told\n"));
	ck_assert_ptr_nonnull(strstr(t, "  ends when lbagent restarts without "
	    "LBAGENT_MODE=off in its environment\n"));
	/* The service's own marker: --service. */
	ck_assert_ptr_nonnull(strstr(t, "  ends with `lbagentctl maint off "
	    "--service\n    a-service-name-that-is-much-longer"));
	free(t);
	json_decref(root);

	/* Down by the rules, coming back: for how long it passed so far. */
	s = svc_detail("api", "down", 0, false, "down #client-api: HTTP 503",
	    "client-api: HTTP 503");
	tr = json_object_get(s, "transition");
	json_object_set_new(tr, "pending", json_pack("{s:s, s:f, s:f, s:s}",
	    "towards", "up", "for_s", 12.0, "after_s", 60.0, "text", "passing "
	    "for 12s, comes back at 1m"));
	root = doc_of(s);
	t = format_with(1, root, NULL);
	ck_assert_msg(strcmp(t, "api: down since 10:02:11 (23m ago), not "
	    "serving\n  because client-api: HTTP 503\n  comes back after 1m of "
	    "passing; 12s so far\n") == 0, "%s", t);
	free(t);
	/* Still failing: what brings it back; flap damping. */
	json_object_set_new(tr, "pending", json_null());
	json_object_set_new(tr, "damping", json_pack("{s:i, s:i, s:f}", "factor",
	    4, "outs_in_window", 3, "up_after_s", 240.0));
	t = format_with(1, root, NULL);
	ck_assert_msg(strstr(t, "  comes back after 4m of passing, once the "
	    "probes pass\n  flap damping: up_after x4 (3 goings-out in the flap "
	    "window)\n") != NULL, "%s", t);
	free(t);
	/* Held over a restart: the engine's since is before the start. */
	json_object_set_new(tr, "since", json_string("2026-11-29T06:50:00.000Z"));
	t = format_with(1, root, NULL);
	ck_assert_msg(strstr(t, "api: down since 06:50:00 (3h35m ago)") != NULL &&
	    strstr(t, "  held from before lbagent started at 07:00:00 (the "
	    "state file)\n") != NULL, "%s", t);
	free(t);
	json_decref(root);

	/* Up, the rules not moved yet: how long, when it goes down. */
	s = svc_detail("api", "up", 100, true, "up", "");
	json_object_set_new(json_object_get(s, "target"), "state",
	    json_string("down"));
	json_object_set_new(json_object_get(s, "target"), "reason",
	    json_string("client-api: HTTP 503"));
	json_object_set_new(json_object_get(s, "transition"), "pending",
	    json_pack("{s:s, s:f, s:f, s:s}", "towards", "down", "for_s", 12.0,
	    "after_s", 30.0, "text", "failing for 12s, goes down at 30s"));
	root = doc_of(s);
	t = format_with(1, root, NULL);
	ck_assert_msg(strstr(t, "  the probes say down: client-api: HTTP 503\n"
	    "  goes down after 30s of failing; 12s so far\n") != NULL, "%s", t);
	free(t);
	/* The peer guard holds it in. */
	json_object_set_new(json_object_get(s, "transition"), "pending",
	    json_pack("{s:s, s:f, s:f, s:s}", "towards", "down", "for_s", 40.0,
	    "after_s", 30.0, "text", "failing for 40s; held in by the peer "
	    "guard: no other node serving"));
	json_object_set_new(s, "peer_guard", json_pack("{s:s, s:s}", "state",
	    "holding", "reason", "client-api failing but no other node "
	    "serving"));
	t = format_with(1, root, NULL);
	ck_assert_msg(strstr(t, "  the peer guard is holding: client-api failing "
	    "but no other node serving\n  failing for 40s; held in by the peer "
	    "guard: no other node serving\n") != NULL, "%s", t);
	free(t);
	json_decref(root);

	/* A weight by the rules: which probe, what restores it. */
	root = doc_of(svc_detail("api", "up", 50, true, "up 50% #disk: 91% used",
	    "disk: 91% used"));
	t = format_with(1, root, NULL);
	ck_assert_msg(strstr(t, "api: up 50% since 10:02:11 (23m ago), "
	    "serving\n  because disk: 91% used\n  back to 100% once the probes "
	    "pass for restore_after\n") != NULL, "%s", t);
	free(t);
	json_decref(root);

	/* The ramp: x% now, full weight by when. */
	s = svc_detail("api", "up", 45, true, "up 45% #recovering",
	    "recovering");
	json_object_set_new(json_object_get(s, "transition"), "ramp",
	    json_pack("{s:i, s:i, s:f, s:f}", "weight", 45, "to", 100,
	    "started_s", 20.0, "ends_in_s", 40.0));
	root = doc_of(s);
	t = format_with(1, root, NULL);
	ck_assert_msg(strstr(t, "  recovering: 45% now, 100% by 10:25:51 (in "
	    "40s)\n") != NULL && strstr(t, "because") == NULL, "%s", t);
	free(t);
	json_decref(root);
}
END_TEST

START_TEST(format_replies)
{
	json_t	*root, *s;
	char	*t;

	/* The public part: the state only. */
	root = fixture("status_public.json");
	t = format_with(2, root, "web");
	ck_assert_str_eq(t, "web          state down, automation off\n");
	free(t);
	json_decref(root);

	s = svc_detail("web", "up", 100, true, "up", "");
	root = doc_of(s);
	t = format_with(2, root, "web");
	ck_assert_str_eq(t, "web          replies \"up\" (no load balancer has "
	    "asked yet)\n");
	free(t);
	/* Every one gets the same: once. */
	json_object_set_new(s, "load_balancers", json_pack("[{s:s, s:s, s:s}, "
	    "{s:s, s:s, s:s}]", "address", "10.0.0.1", "text", "web",
	    "next_reply", "ready up", "address", "10.0.0.2", "text", "web",
	    "next_reply", "ready up"));
	t = format_with(2, root, "web");
	ck_assert_str_eq(t, "web          replies \"ready up\" to all 2 load "
	    "balancers that ask\n");
	free(t);
	/* They differ: a line each, with the first few that get it. */
	json_object_set_new(s, "load_balancers", json_pack("[{s:s, s:s, s:s}, "
	    "{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, "
	    "s:s}, {s:s, s:s}]",
	    "address", "10.0.0.1", "text", "web", "next_reply", "ready up",
	    "address", "10.0.0.2", "text", "", "next_reply", "up",
	    "address", "10.0.0.3", "text", "web", "next_reply", "ready up",
	    "address", "10.0.0.4", "text", "web", "next_reply", "ready up",
	    "address", "10.0.0.5", "text", "web", "next_reply", "ready up",
	    /* An older daemon's entry: the service's reply. */
	    "address", "10.0.0.6", "text", "x"));
	t = format_with(2, root, "web");
	ck_assert_str_eq(t, "web          replies \"ready up\" to 10.0.0.1 "
	    "\"web\", 10.0.0.3 \"web\", 10.0.0.4\n"
	    "             \"web\" and 1 more\n"
	    "             replies \"up\" to 10.0.0.2, 10.0.0.6 \"x\"\n");
	free(t);
	json_decref(root);
	root = json_object();
	t = format_with(2, root, "web");
	ck_assert_str_eq(t, "web          not answered for by lbagent\n");
	free(t);
	json_decref(root);
}
END_TEST

/* The value column with the units the daemon gives. */
START_TEST(format_units)
{
	json_t	*root = fixture("status_detail.json");
	json_t	*ps = json_object_get(json_array_get(json_object_get(root,
		    "services"), 0), "probes");
	char	*t;

	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}}", "name", "plugin", "type", "exec", "counted", "ok",
	    "settled", 1, "last", "result", "ok", "reason", "OK", "value", 0.25,
	    "ago_s", 1.0, "duration_ms", 3, "unit", "s"));
	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}}", "name", "tcp-plugin", "type", "exec",
	    "counted", "ok", "settled", 1, "last", "result", "ok", "reason",
	    "TCP OK", "value", 0.000164, "ago_s", 1.0, "duration_ms", 3, "unit",
	    "s"));
	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}}", "name", "api", "type", "http", "counted", "ok",
	    "settled", 1, "last", "result", "ok", "reason", "HTTP 200 in 12ms",
	    "value", 12.4, "ago_s", 1.0, "duration_ms", 13, "unit", "ms"));
	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}}", "name", "queue", "type", "http", "counted",
	    "ok", "settled", 1, "last", "result", "ok", "reason", "messages 7",
	    "value", 7.0, "ago_s", 1.0, "duration_ms", 13, "unit", ""));
	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}}", "name", "load", "type", "load", "counted", "ok",
	    "settled", 1, "last", "result", "ok", "reason", "load 0.5 per CPU",
	    "value", 0.5, "ago_s", 1.0, "duration_ms", 0, "unit", ""));
	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}}", "name", "fresh", "type", "file", "counted", "ok",
	    "settled", 1, "last", "result", "ok", "reason", "modified 3s ago",
	    "value", 3.02, "ago_s", 1.0, "duration_ms", 0, "unit", "s"));
	t = format(root, "");
	check_text(t);
	ck_assert_msg(strstr(t, "    plugin       exec     ok         0.25 s  "
	    "1s ago") != NULL, "%s", t);
	/* check_tcp's time: not rounded away to 0.00. */
	ck_assert_msg(strstr(t, "    tcp-plugin   exec     ok     0.000164 s  "
	    "1s ago") != NULL, "%s", t);
	ck_assert_ptr_nonnull(strstr(t, "    api          http     ok       "
	    "12.40 ms  1s ago"));
	/* A JSON field's number: the daemon gives no unit. */
	ck_assert_ptr_nonnull(strstr(t, "    queue        http     ok           "
	    "   7  1s ago"));
	ck_assert_ptr_nonnull(strstr(t, "    load         load     ok           "
	    " 0.5  1s ago"));
	ck_assert_ptr_nonnull(strstr(t, "    fresh        file     ok         "
	    "3.02 s  1s ago"));
	free(t);
	json_decref(root);
}
END_TEST

/* A window's figures under its probe; a window not judging says so. */
START_TEST(format_window)
{
	json_t	*root = fixture("status_detail.json");
	json_t	*ps = json_object_get(json_array_get(json_object_get(root,
		    "services"), 0), "probes");
	char	*t;

	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:s, "
	    "s:f, s:f, s:i, s:s}, s:{s:i, s:i, s:i, s:i, s:f, s:i, s:i, s:i, "
	    "s:s, s:b, s:s, s:s}}", "name", "api", "type", "http", "counted",
	    "warn", "settled", 1, "last", "result", "ok", "reason",
	    "HTTP 200 in 12ms", "value", 12.4, "ago_s", 1.0, "duration_ms", 13,
	    "unit", "ms", "window", "window_ms", 60000, "min_samples", 10,
	    "samples", 57, "errors", 3, "error_rate", 5.263, "p50_ms", 12,
	    "p95_ms", 310, "p99_ms", 1840, "since", "2026-12-02T01:05:50.123Z",
	    "judging", 1, "result", "warn", "reason",
	    "p99 1.8s over 1m (warn 800ms)"));
	json_array_append_new(ps, json_pack("{s:s, s:s, s:s, s:b, s:n, "
	    "s:{s:i, s:i, s:i, s:i, s:n, s:n, s:n, s:n, s:n, s:b, s:s, s:s}}",
	    "name", "db", "type", "tcp", "counted", "ok", "settled", 0, "last",
	    "window", "window_ms", 10000, "min_samples", 10, "samples", 4,
	    "errors", 0, "error_rate", "p50_ms", "p95_ms", "p99_ms", "since",
	    "judging", 0, "result", "ok", "reason",
	    "4 of 10 samples over 10s: not judged yet"));
	t = format(root, "");
	check_text(t);
	ck_assert_msg(strstr(t, "      window 1m: p50 12ms, p95 310ms, p99 "
	    "1.8s, error rate 5.3%\n        57 samples since 2026-12-02 01:05:50 "
	    "UTC; warn: p99 1.8s over 1m") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "      window 10s: 4 of 10 samples, not judged "
	    "yet\n") != NULL, "%s", t);
	free(t);
	json_decref(root);
}
END_TEST

/* Whatever comes back, why, --short and the replies neither crash nor overflow. */
START_TEST(format_why_garbage)
{
	char	 long_text[5000], *t;
	json_t	*root, *odd;
	int	 which;

	utc();
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	odd = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:[i, {s:s}], s:{s:i}, "
	    "s:[], s:s, s:[i, {s:i}, {s:s, s:s}], s:[{s:s}]}",
	    "name", "w", "state", "\033[31mred", "reply", "a\nb #c",
	    "reason", long_text, "automation", "off", "transition", "str",
	    "history", 1, "at", "garbage", "markers", "x", 1, "target",
	    "peer_guard", "x", "load_balancers", 1, "next_reply", 5, "address",
	    long_text, "next_reply", long_text, "probes", "last", "x");
	ck_assert_ptr_nonnull(odd);
	root = json_pack("{s:b, s:s, s:[i, s, {}, O]}", "detail", 1,
	    "started_at", long_text, "services", 3, "x", odd);
	ck_assert_ptr_nonnull(root);
	json_decref(odd);
	for (which = 0; which < 3; which++) {
		t = format_with(which, root, which == 2 ? "w" : NULL);
		free(t);
	}
	/* A transition with numbers out of range and a pending of garbage. */
	json_object_set_new(odd, "state", json_string("down"));
	json_object_set_new(odd, "automation", json_string("auto"));
	json_object_set_new(odd, "transition", json_pack("{s:s, s:f, s:{s:s, "
	    "s:f, s:s}, s:{s:f, s:f, s:f}, s:{s:f, s:s}}", "since", long_text,
	    "since_s", -1e300, "pending", "towards", long_text, "for_s", 1e300,
	    "text", long_text, "ramp", "weight", -5.0, "to", 1e20, "ends_in_s",
	    1e300, "damping", "factor", 1e9, "outs_in_window", "many"));
	ck_assert_ptr_nonnull(json_object_get(odd, "transition"));
	for (which = 0; which < 3; which++) {
		t = format_with(which, root, which == 2 ? "w" : NULL);
		free(t);
	}
	json_decref(root);
}
END_TEST

/* What fn wrote through a ctl_term_stream, read back from a pipe. */
static char *
through_stream(void (*fn)(FILE *))
{
	static char	out[8192];
	int		fds[2];
	ssize_t		n;
	size_t		len = 0;
	FILE		*fp;

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_ptr_nonnull(fp = ctl_term_stream(fds[1]));
	fn(fp);
	ck_assert_int_eq(fclose(fp), 0);
	close(fds[1]);
	while ((n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	out[len] = '\0';
	return out;
}

static void
write_hostile(FILE *fp)
{
	fprintf(fp, "name %s\tcol\n", "\x1b[2J\x9b" "1m\xc2\x9b" "2J\x7f\r\\");
	/* A character cut between two writes stays whole. */
	fputs("caf\xc3", fp);
	fflush(fp);
	fputs("\xa9 \xe2\x82", fp);
	fflush(fp);
	fputs("\xac\n", fp);
	/* A start that never ends: escaped at the close. */
	fputs("end\xe2\x82", fp);
}

START_TEST(term_stream_escapes)
{
	const char	*t;

	ctl_term_set_utf8(true);
	t = through_stream(write_hostile);
	ck_assert_str_eq(t, "name \\x1b[2J\\x9b1m\\xc2\\x9b2J\\x7f\\x0d\\\tcol\n"
	    "caf\xc3\xa9 \xe2\x82\xac\nend\\xe2\\x82");
	ctl_term_set_utf8(false);
	t = through_stream(write_hostile);
	ck_assert_str_eq(t, "name \\x1b[2J\\x9b1m\\xc2\\x9b2J\\x7f\\x0d\\\tcol\n"
	    "caf\\xc3\\xa9 \\xe2\\x82\\xac\nend\\xe2\\x82");
}
END_TEST

static void
write_long(FILE *fp)
{
	int	i;

	/* More than a chunk, a character across every boundary. */
	for (i = 0; i < 1000; i++)
		fputs("\xe2\x82\xac" "\x1b", fp);
}

START_TEST(term_stream_long)
{
	const char	*t;
	size_t		 i;

	ctl_term_set_utf8(true);
	t = through_stream(write_long);
	ctl_term_set_utf8(false);
	ck_assert_uint_eq(strlen(t), 1000 * 7);
	for (i = 0; i < 1000; i++)
		ck_assert(memcmp(t + 7 * i, "\xe2\x82\xac\\x1b", 7) == 0);
}
END_TEST

START_TEST(term_text_and_json)
{
	char	 buf[64], *text = NULL;
	size_t	 len = 0;
	json_t	*doc = json_pack("{s:s}", "name", "a\x1b[2J\x7f\xc2\x9b\xc3\xa9\\");
	FILE	*fp;

	ctl_term_text(buf, sizeof(buf), "a\x1b\xc3\xa9\\");
	ck_assert_str_eq(buf, "a\\x1b\\xc3\\xa9\\\\");
	ctl_term_set_utf8(true);
	ctl_term_text(buf, sizeof(buf), "a\x1b\xc3\xa9\\");
	ck_assert_str_eq(buf, "a\\x1b\xc3\xa9\\\\");
	ctl_term_set_utf8(false);
	ctl_term_text(buf, sizeof(buf), NULL);
	ck_assert_str_eq(buf, "");

	/* JSON: ASCII only, DEL and C1 as \u escapes, still JSON. */
	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	ck_assert_int_eq(ctl_term_json(fp, doc, JSON_COMPACT), 0);
	fclose(fp);
	ck_assert_str_eq(text, "{\"name\":\"a\\u001B[2J\\u007f\\u009B\\u00E9"
	    "\\\\\"}\n");
	{
		json_t	*back = json_loads(text, 0, NULL);

		ck_assert_ptr_nonnull(back);
		ck_assert_str_eq(json_string_value(json_object_get(back,
		    "name")), "a\x1b[2J\x7f\xc2\x9b\xc3\xa9\\");
		json_decref(back);
	}
	free(text);
	json_decref(doc);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("lbagentctl");
	TCase	*tc;

	tc = tcase_create("args");
	tcase_add_test(tc, args_status);
	tcase_add_test(tc, args_markers);
	tcase_add_test(tc, args_others);
	tcase_add_test(tc, args_usage_errors);
	tcase_add_test(tc, args_service_names_as_the_config);
	tcase_add_test(tc, args_marker_end);
	tcase_add_test(tc, args_wait);
	tcase_add_test(tc, until_local_time);
	tcase_add_test(tc, marker_content);
	tcase_add_test(tc, usage_fits);
	suite_add_tcase(s, tc);

	tc = tcase_create("client");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, address_order);
	tcase_add_test(tc, http_get_tcp);
	tcase_add_test(tc, http_get_unix);
	tcase_add_test(tc, http_get_refused);
	tcase_add_test(tc, token_file);
	tcase_add_test(tc, conf_good);
	tcase_add_test(tc, conf_with_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("markers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, marker_set_and_clear);
	tcase_add_test(tc, marker_failures);
	tcase_add_test(tc, marker_service_dir_link);
	tcase_add_test(tc, expectations);
	tcase_add_test(tc, reflects);
	tcase_add_test(tc, reflects_reason);
	tcase_add_test(tc, off_not_by_marker);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_test(tc, format_detail);
	tcase_add_test(tc, format_public);
	tcase_add_test(tc, format_narrow_and_garbage);
	tcase_add_test(tc, format_peer_guard);
	tcase_add_test(tc, format_short);
	tcase_add_test(tc, status_exit);
	tcase_add_test(tc, format_why);
	tcase_add_test(tc, format_replies);
	tcase_add_test(tc, format_units);
	tcase_add_test(tc, format_window);
	tcase_add_test(tc, format_why_garbage);
	tcase_add_test(tc, format_fleet);
	tcase_add_test(tc, format_lb_load);
	tcase_add_test(tc, drain_verdicts);
	tcase_add_test(tc, term_stream_escapes);
	tcase_add_test(tc, term_stream_long);
	tcase_add_test(tc, term_text_and_json);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int	rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = tu_run(suite());
	curl_global_cleanup();
	return rc;
}
