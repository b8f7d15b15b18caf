/*
 * The http kind against a real HTTP server on 127.0.0.1 (testhttpd.c),
 * an HTTPS one (openssl s_server, when the CLI is installed), and URL
 * redaction.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/core/redact.h"
#include "lbagent/sys/log.h"
#include "lbagent/probes/kinds.h"
#include "testhttpd.h"
#include "probeutil.h"
#include "testutil.h"

static const char json_obj[] =
    "{\"queues\":[{\"name\":\"a\"},{\"name\":\"b\"},"
    "{\"name\":\"c\",\"ready\":true}],\"ratio\":1.5,\"nothing\":null,"
    "\"count\":42,\"big\":1e6,\"s\":\"x\",\"flag\":false,"
    "\"nested\":{\"a\":{\"b\":7}},\"7\":\"seven\"}";

/* As RabbitMQ's /api/queues/%2F answers, cut down; "new" has no stats. */
static const char rabbit_queues[] =
    "[{\"name\":\"mail\",\"vhost\":\"/\",\"messages_ready\":3,"
    "\"consumers\":1},{\"name\":\"orders\",\"vhost\":\"/\","
    "\"messages_ready\":12000,\"consumers\":0},{\"name\":\"new\","
    "\"vhost\":\"/\",\"consumers\":0},{\"messages_ready\":7}]";

static const struct th_route routes[] = {
	{ .path = "/ok", .status = 200, .body = "all ok\n" },
	{ .path = "/503", .status = 503, .body = "down\n" },
	{ .path = "/401", .status = 401, .body = "who are you\n" },
	{ .path = "/301", .status = 301, .body = "",
	    .headers = "Location: /ok\r\n" },
	{ .path = "/302", .status = 302, .body = "",
	    .headers = "Location: /ok\r\n" },
	{ .path = "/big", .status = 200, .body_len = 2 * 1024 * 1024 },
	{ .path = "/exact", .status = 200, .body_len = 1024 * 1024 },
	{ .path = "/slow", .status = 200, .body = "late ok\n",
	    .delay_ms = 300 },
	{ .path = "/silent", .mode = TH_SILENT },
	{ .path = "/mid", .mode = TH_CLOSE_MID, .status = 200,
	    .body = "partial" },
	{ .path = "/empty", .mode = TH_EMPTY },
	{ .path = "/garbage", .mode = TH_GARBAGE },
	{ .path = "/json/green", .status = 200,
	    .body = "{\"status\":\"green\",\"nodes\":3}" },
	{ .path = "/json/red", .status = 200, .body = "{\"status\":\"red\"}" },
	{ .path = "/json/queues", .status = 200,
	    .body = "[{\"name\":\"q1\",\"messages_ready\":1200},"
	    "{\"name\":\"q2\",\"messages_ready\":5}]" },
	{ .path = "/json/obj", .status = 200, .body = json_obj },
	{ .path = "/json/rabbit", .status = 200, .body = rabbit_queues },
	{ .path = "/json/nodes", .status = 200,
	    .body = "{\"n1\":{\"fd_used\":80},\"n2\":{\"fd_used\":95},"
	    "\"n3\":{\"fd_used\":\"?\"}}" },
	{ .path = "/json/list", .status = 200, .body = "[4,9,1]" },
	{ .path = "/json/load", .status = 200,
	  .body = "{\"utilization\":0.42,\"qps\":123.5,\"state\":\"busy\"}" },
	{ .path = "/json/none", .status = 200, .body = "[]" },
	{ .path = "/json/bad", .status = 200, .body = "not json {" },
	{ .path = "/json/empty", .status = 200, .body = "" },
	{ .path = NULL },
};

struct fixture {
	struct event_base	*base;
	struct probe_env	 env;
	struct th_server	*srv;
	int			 port;
	char			 url[256];
};

static struct fixture	f;

static void
setup(void)
{
	memset(&f, 0, sizeof(f));
	ck_assert_ptr_nonnull(f.base = event_base_new());
	pu_env_init(&f.env, f.base);
	f.srv = th_start_tcp(routes, &f.port);
}

static void
teardown(void)
{
	pu_env_free(&f.env);
	th_stop(f.srv);
	event_base_free(f.base);
}

static const char *
url(const char *path)
{
	snprintf(f.url, sizeof(f.url), "http://127.0.0.1:%d%s", f.port, path);
	return f.url;
}

/* One run of conf; the outcome is copied to *out. Frees conf. */
static void
run_conf(void *conf, int64_t timeout_ms, struct probe_outcome *out)
{
	struct pu	r;

	pu_init_env(&r, &probe_http_ops, &f.env, conf, timeout_ms);
	pu_run(&r, 20000);
	*out = r.out;
	pu_done(&r);
	probe_http_ops.conf_free(conf);
}

/* Runs path with extra key/value pairs and checks result and reason. */
static struct probe_outcome
run_path(const char *path, const char *const *extra, enum probe_result want,
    const char *reason)
{
	const char		*kv[32] = { "url", url(path) };
	struct probe_outcome	 out;
	size_t			 n = 2;

	for (; extra != NULL && *extra != NULL; extra++)
		kv[n++] = *extra;
	kv[n] = NULL;
	run_conf(pu_conf(&probe_http_ops, kv), 5000, &out);
	ck_assert_msg(out.result == want, "%s: %s, want %s (%s)", path,
	    probe_result_name(out.result), probe_result_name(want), out.reason);
	if (reason != NULL)
		ck_assert_str_eq(out.reason, reason);
	return out;
}

#define KV(...)	((const char *const[]){ __VA_ARGS__, NULL })

/* ---- configuration */

struct conf_case {
	const char	*kv[12];
	const char	*why;
};

START_TEST(config_errors)
{
	static const char	 u[] = "http://127.0.0.1/";
	static const char	 status_usage[] = "expected status codes or "
	    "ranges such as 200, 200-299, 301";
	static const char	 url_usage[] = "expected an http:// or "
	    "https:// URL";
	const struct conf_case	 cases[] = {
		{ { NULL }, "url is required" },
		{ { "url", "" }, url_usage },
		{ { "url", "ftp://host/" }, url_usage },
		{ { "url", "file:///etc/passwd" }, url_usage },
		{ { "url", "localhost:8080/health" }, url_usage },
		{ { "url", "/health" }, url_usage },
		{ { "url", "http://" }, url_usage },
		{ { "url", "http://host:99999/" }, url_usage },
		{ { "url", "http://exa mple/" }, url_usage },
		{ { "url", "http://us%01er:pw@host/" }, "the URL's user name "
		    "must not decode to control characters" },
		{ { "url", "http://user:p%0Aw@host/" }, "the URL's password "
		    "must not decode to control characters" },
		{ { "url", u, "method", "get" }, "expected an uppercase method "
		    "such as GET, HEAD or POST" },
		{ { "url", u, "method", "" }, "expected an uppercase method "
		    "such as GET, HEAD or POST" },
		{ { "url", u, "method", "GE T" }, "expected an uppercase method "
		    "such as GET, HEAD or POST" },
		{ { "url", u, "method", "G1" }, "expected an uppercase method "
		    "such as GET, HEAD or POST" },
		{ { "url", u, "method", "ABCDEFGHIJKLMNOPQRSTUVWXY" },
		    "expected an uppercase method such as GET, HEAD or POST" },
		{ { "url", u, "expect_status", "abc" }, status_usage },
		{ { "url", u, "expect_status", "" }, status_usage },
		{ { "url", u, "expect_status", "200," }, status_usage },
		{ { "url", u, "expect_status", ",200" }, status_usage },
		{ { "url", u, "expect_status", "200 301" }, status_usage },
		{ { "url", u, "expect_status", "200-" }, status_usage },
		{ { "url", u, "expect_status", "200-300-400" }, status_usage },
		{ { "url", u, "expect_status", "2xx" }, status_usage },
		{ { "url", u, "expect_status", "99" },
		    "status codes go from 100 to 599" },
		{ { "url", u, "expect_status", "200-600" },
		    "status codes go from 100 to 599" },
		{ { "url", u, "expect_status", "300-200" },
		    "a range goes from low to high, e.g. 200-299" },
		{ { "url", u, "expect_status", "200,201,202,203,204,205,206,"
		    "207,208,209,210,211,212,213,214,215,216,217,218,219,220,"
		    "221,222,223,224,225,226,227,228,229,230,231,232" },
		    "at most 32 codes or ranges" },
		{ { "url", u, "header", "NoColon" }, "expected Name: value" },
		{ { "url", u, "header", ": value" }, "expected Name: value" },
		{ { "url", u, "header", "Bad Name: v" }, "expected Name: value" },
		{ { "url", u, "header", "X-A: a\001b" }, "a header value must "
		    "not contain control characters" },
		{ { "url", u, "tls_verify", "maybe" },
		    "expected yes, no, true, false, on or off" },
		{ { "url", u, "warn_latency", "5" },
		    "duration needs a unit: ms, s, m or h" },
		{ { "url", u, "crit_latency", "fast" },
		    "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h" },
		{ { "url", u, "json_field", "" }, "expected a dotted path such "
		    "as status, 0.messages_ready or *.messages_ready" },
		{ { "url", u, "json_field", ".a" }, "expected a dotted path "
		    "such as status, 0.messages_ready or *.messages_ready" },
		{ { "url", u, "json_field", "a." }, "expected a dotted path "
		    "such as status, 0.messages_ready or *.messages_ready" },
		{ { "url", u, "json_field", "a..b" }, "expected a dotted path "
		    "such as status, 0.messages_ready or *.messages_ready" },
		{ { "url", u, "json_field", "a", "warn", "lots" },
		    "expected a number" },
		{ { "url", u, "json_field", "a", "crit", "1e999" },
		    "expected a number" },
		{ { "url", u, "json_field", "a*" }, "* stands alone between "
		    "dots, e.g. *.messages_ready" },
		{ { "url", u, "json_field", "*.a", "expect_value", "1" },
		    "json_field with * gives a number: use warn and/or crit" },
		{ { "url", u, "json_field", "a", "json_aggregate", "sum",
		    "warn", "1" }, "json_aggregate needs * in json_field" },
		{ { "url", u, "json_aggregate", "max" },
		    "json_aggregate needs * in json_field" },
		{ { "url", u, "json_field", "*.a", "json_aggregate", "avg",
		    "warn", "1" }, "expected max, min, sum or count" },
		{ { "url", u, "auth_file", "lbagent.auth" },
		    "expected an absolute path" },
		{ { "url", "http://bob:pw@h/", "auth_file", "/etc/x.auth" },
		    "auth_file and user:password@ in url: give one" },
		{ { "url", u, "expect_body", "" }, "expected some text" },
		{ { "url", u, "bogus", "1" }, "unknown key" },
		{ { "url", u, "json_field", "a", "expect_value", "x", "warn",
		    "1" }, "json_field takes expect_value or warn/crit, not "
		    "both" },
		{ { "url", u, "json_field", "a", "expect_value", "x", "crit",
		    "1" }, "json_field takes expect_value or warn/crit, not "
		    "both" },
		{ { "url", u, "expect_value", "green" },
		    "expect_value, warn and crit need json_field" },
		{ { "url", u, "warn", "1" },
		    "expect_value, warn and crit need json_field" },
		{ { "url", u, "crit", "1" },
		    "expect_value, warn and crit need json_field" },
		{ { "url", u, "method", "HEAD", "expect_body", "ok" },
		    "a HEAD request has no body to check" },
		{ { "url", u, "method", "HEAD", "json_field", "a",
		    "expect_value", "b" }, "a HEAD request has no body to check" },
		{ { "url", u, "warn_latency", "1s", "crit_latency", "1s" },
		    "warn_latency must be below crit_latency" },
		{ { "url", u, "warn_latency", "2s", "crit_latency", "500ms" },
		    "warn_latency must be below crit_latency" },
	};
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = pu_conf_error(&probe_http_ops, cases[i].kv);
		ck_assert_msg(why != NULL, "case %zu accepted", i);
		ck_assert_msg(strcmp(why, cases[i].why) == 0,
		    "case %zu: \"%s\", want \"%s\"", i, why, cases[i].why);
	}
}
END_TEST

START_TEST(config_accepted)
{
	static const char *const ok[][12] = {
		{ "url", "http://127.0.0.1/" },
		{ "url", "HTTPS://Example.COM:8443/health?x=1#frag" },
		{ "url", "http://[::1]:8080/" },
		{ "url", "http://user:pa%3Ass@host/" },
		{ "url", "http://user@host/" },
		{ "url", "http://h/", "method", "HEAD" },
		{ "url", "http://h/", "method", "DELETE" },
		{ "url", "http://h/", "method", "OPTIONS" },
		{ "url", "http://h/", "expect_status", "200" },
		{ "url", "http://h/", "expect_status", " 200 - 299 , 301,404" },
		{ "url", "http://h/", "expect_status", "100-599" },
		{ "url", "http://h/", "header", "X-Token: s3cret", "header",
		    "Accept:", "header", "Host: example.com" },
		{ "url", "http://h/", "tls_verify", "no" },
		{ "url", "http://h/", "warn_latency", "500ms", "crit_latency",
		    "2s" },
		{ "url", "http://h/", "warn_latency", "0ms" },
		{ "url", "http://h/", "json_field", "0.messages_ready", "warn",
		    "100", "crit", "1000" },
		{ "url", "http://h/", "json_field", "free", "warn", "10",
		    "crit", "5" },
		{ "url", "http://h/", "json_field", "a", "crit", "-0.5" },
		{ "url", "http://h/", "json_field", "queues.2.name",
		    "expect_value", "c" },
		{ "url", "http://h/", "json_field", "s", "expect_value", "" },
		{ "url", "http://h/", "expect_body", "ok", "json_field", "s",
		    "expect_value", "x" },
		{ "url", "http://h/", "json_field", "*.messages_ready",
		    "warn", "100", "crit", "1000" },
		{ "url", "http://h/", "json_field", "queues.*.consumers",
		    "json_aggregate", "min", "warn", "1", "crit", "0" },
		{ "url", "http://h/", "json_field", "*", "json_aggregate",
		    "count", "crit", "1" },
		/* Measure only. */
		{ "url", "http://h/", "json_field", "utilization" },
		{ "url", "http://h/", "json_field", "*.a", "json_aggregate",
		    "sum" },
	};
	size_t	i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		probe_http_ops.conf_free(pu_conf(&probe_http_ops, ok[i]));
	probe_http_ops.conf_free(NULL);
}
END_TEST

START_TEST(key_docs)
{
	static const char *const names[] = { "url", "method", "expect_status",
	    "expect_body", "header", "tls_verify", "warn_latency",
	    "crit_latency", "auth_file", "json_field", "json_aggregate",
	    "expect_value", "warn", "crit" };
	const struct probe_key_doc	*k = probe_http_ops.keys;
	size_t				 i;

	ck_assert_str_eq(probe_http_ops.name, "http");
	ck_assert_str_eq(probe_http_ops.unit, "ms");
	for (i = 0; k[i].name != NULL; i++) {
		ck_assert_str_eq(k[i].name, names[i]);
		ck_assert_ptr_nonnull(k[i].help);
		ck_assert(k[i].repeatable == (strcmp(k[i].name, "header") == 0));
	}
	ck_assert_uint_eq(i, sizeof(names) / sizeof(names[0]));
	ck_assert_str_eq(k[1].def, "GET");
	ck_assert_str_eq(k[2].def, "200-399");
	ck_assert_str_eq(k[5].def, "yes");
	ck_assert_str_eq(k[10].def, "max");
	ck_assert_ptr_null(k[0].def);
}
END_TEST

/* ---- redaction */

START_TEST(redaction)
{
	static const char *const cases[][2] = {
		{ "http://host/", "http://host/" },
		{ "https://user@host/", "https://***@host/" },
		{ "https://user:pass@host/x", "https://***@host/x" },
		{ "http://user:pass@host", "http://***@host" },
		{ "http://:pass@host/", "http://***@host/" },
		{ "http://@host/", "http://***@host/" },
		{ "http://us%40er:p%3Ass%2F@host:8080/", "http://***@host:8080/" },
		{ "http://a@b:c@host/", "http://***@host/" },
		{ "http://user:pass@[::1]:8080/v?x", "http://***@[::1]:8080/v?x" },
		{ "http://[fe80::1%25eth0]/", "http://[fe80::1%25eth0]/" },
		{ "http://u:p@[fe80::1%25eth0]:1/", "http://***@[fe80::1%25eth0]:1/" },
		{ "https://h/api?token=abc&x=1", "https://h/api?token=abc&x=1" },
		{ "https://u:p@h/api?token=abc", "https://***@h/api?token=abc" },
		{ "http://host/path@not-userinfo", "http://host/path@not-userinfo" },
		{ "http://host?mail=a@b", "http://host?mail=a@b" },
		{ "http://host#a@b", "http://host#a@b" },
		{ "HTTP://U:P@HOST/", "HTTP://***@HOST/" },
		{ "svn+ssh://u:p@h/r", "svn+ssh://***@h/r" },
		{ "//u:p@h/", "//***@h/" },
		{ "u:p@h/x", "***@h/x" },
		{ "no url at all", "no url at all" },
		{ "", "" },
	};
	char	buf[128];
	size_t	i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = redact_url(cases[i][0], buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i][1]);
		ck_assert_uint_eq(n, strlen(cases[i][1]));
	}
	/* Cut to fit, still terminated, still without the secret. */
	n = redact_url("https://alice:hunter2@example.com/", buf, 12);
	ck_assert_str_eq(buf, "https://***");
	ck_assert_uint_eq(n, strlen("https://***@example.com/"));
	n = redact_url("https://alice:hunter2@example.com/", buf, 1);
	ck_assert_str_eq(buf, "");
	buf[0] = 'z';
	n = redact_url("https://alice:hunter2@example.com/", buf, 0);
	ck_assert_int_eq(buf[0], 'z');
	ck_assert_uint_eq(n, strlen("https://***@example.com/"));
}
END_TEST

/* ---- status and body */

START_TEST(status_codes)
{
	struct probe_outcome	out;

	out = run_path("/ok", NULL, PROBE_OK, NULL);
	ck_assert_msg(strncmp(out.reason, "HTTP 200 in ", 12) == 0, "%s",
	    out.reason);
	ck_assert(out.value >= 0 && isfinite(out.value));
	out = run_path("/503", NULL, PROBE_CRIT, "HTTP 503");
	ck_assert(out.value >= 0);
	run_path("/401", NULL, PROBE_CRIT, "HTTP 401");
	run_path("/nowhere", NULL, PROBE_CRIT, "HTTP 404");
	/* Redirects count as up by default, and are not followed. */
	run_path("/302", NULL, PROBE_OK, NULL);
	run_path("/302", KV("expect_status", "200"), PROBE_CRIT, "HTTP 302");
	run_path("/301", KV("expect_status", "200-299, 301"), PROBE_OK, NULL);
	run_path("/ok", KV("expect_status", "200-299, 301"), PROBE_OK, NULL);
	run_path("/302", KV("expect_status", "200-299, 301"), PROBE_CRIT,
	    "HTTP 302");
	run_path("/503", KV("expect_status", "503"), PROBE_OK, NULL);
}
END_TEST

START_TEST(bodies)
{
	run_path("/ok", KV("expect_body", "ok"), PROBE_OK, NULL);
	run_path("/ok", KV("expect_body", "all ok\n"), PROBE_OK, NULL);
	run_path("/503", KV("expect_body", "ok"), PROBE_CRIT, "HTTP 503");
	run_path("/json/red", KV("expect_body", "ok"), PROBE_CRIT,
	    "body lacks \"ok\"");
	run_path("/json/empty", KV("expect_body", "ok"), PROBE_CRIT,
	    "body lacks \"ok\"");
	run_path("/big", KV("expect_body", "ok"), PROBE_CRIT,
	    "body larger than 1 MiB");
	run_path("/exact", KV("expect_body", "xxxx"), PROBE_OK, NULL);
	/* Without a body check the body is not kept, whatever its size. */
	run_path("/big", NULL, PROBE_OK, NULL);
}
END_TEST

struct json_case {
	const char		*path;
	const char		*kv[12];
	enum probe_result	 result;
	const char		*reason;
	double			 value;		/* NAN: the latency */
};

START_TEST(json_fields)
{
	const struct json_case	cases[] = {
		{ "/json/green", { "json_field", "status", "expect_value",
		    "green" }, PROBE_OK, "status is \"green\"", NAN },
		{ "/json/red", { "json_field", "status", "expect_value",
		    "green" }, PROBE_CRIT, "status is \"red\" (expected "
		    "\"green\")", NAN },
		{ "/json/queues", { "json_field", "0.messages_ready", "warn",
		    "100", "crit", "1000" }, PROBE_CRIT,
		    "messages_ready 1200 (crit 1000)", 1200 },
		{ "/json/queues", { "json_field", "1.messages_ready", "warn",
		    "3", "crit", "1000" }, PROBE_WARN,
		    "messages_ready 5 (warn 3)", 5 },
		{ "/json/queues", { "json_field", "1.messages_ready", "warn",
		    "100", "crit", "1000" }, PROBE_OK, "messages_ready 5", 5 },
		{ "/json/queues", { "json_field", "0.name", "expect_value",
		    "q1" }, PROBE_OK, "name is \"q1\"", NAN },
		{ "/json/obj", { "json_field", "queues.2.name", "expect_value",
		    "c" }, PROBE_OK, "queues.2.name is \"c\"", NAN },
		{ "/json/obj", { "json_field", "queues.2.ready",
		    "expect_value", "true" }, PROBE_OK,
		    "queues.2.ready is \"true\"", NAN },
		{ "/json/obj", { "json_field", "flag", "expect_value", "true" },
		    PROBE_CRIT, "flag is \"false\" (expected \"true\")", NAN },
		{ "/json/obj", { "json_field", "ratio", "expect_value", "1.5" },
		    PROBE_OK, "ratio is \"1.5\"", NAN },
		{ "/json/obj", { "json_field", "count", "expect_value", "42" },
		    PROBE_OK, "count is \"42\"", NAN },
		{ "/json/obj", { "json_field", "big", "expect_value",
		    "1000000.0" }, PROBE_OK, "big is \"1000000.0\"", NAN },
		{ "/json/obj", { "json_field", "nothing", "expect_value",
		    "null" }, PROBE_OK, "nothing is \"null\"", NAN },
		{ "/json/obj", { "json_field", "7", "expect_value", "seven" },
		    PROBE_OK, "7 is \"seven\"", NAN },
		{ "/json/obj", { "json_field", "queues", "expect_value", "x" },
		    PROBE_CRIT, "queues is an array (expected \"x\")", NAN },
		{ "/json/obj", { "json_field", "nested", "expect_value", "x" },
		    PROBE_CRIT, "nested is an object (expected \"x\")", NAN },
		{ "/json/obj", { "json_field", "nested.a.b", "crit", "5" },
		    PROBE_CRIT, "nested.a.b 7 (crit 5)", 7 },
		{ "/json/obj", { "json_field", "missing.field", "expect_value",
		    "x" }, PROBE_CRIT, "no JSON field missing.field", NAN },
		{ "/json/obj", { "json_field", "queues.9.name", "expect_value",
		    "x" }, PROBE_CRIT, "no JSON field queues.9.name", NAN },
		{ "/json/obj", { "json_field", "queues.x", "expect_value",
		    "x" }, PROBE_CRIT, "no JSON field queues.x", NAN },
		{ "/json/obj", { "json_field", "count.x", "expect_value",
		    "x" }, PROBE_CRIT, "no JSON field count.x", NAN },
		{ "/json/obj", { "json_field", "s", "warn", "1" }, PROBE_CRIT,
		    "s is not a number", NAN },
		{ "/json/obj", { "json_field", "flag", "crit", "1" }, PROBE_CRIT,
		    "flag is not a number", NAN },
		{ "/json/bad", { "json_field", "status", "expect_value", "x" },
		    PROBE_CRIT, "body is not JSON", NAN },
		{ "/json/empty", { "json_field", "status", "expect_value",
		    "x" }, PROBE_CRIT, "body is not JSON", NAN },
		/* Measure only: the number is the value, ok; else crit. */
		{ "/json/load", { "json_field", "utilization" }, PROBE_OK,
		    "utilization 0.42", 0.42 },
		{ "/json/load", { "json_field", "qps" }, PROBE_OK,
		    "qps 123.5", 123.5 },
		{ "/json/load", { "json_field", "latency_ms" }, PROBE_CRIT,
		    "no JSON field latency_ms", NAN },
		{ "/json/load", { "json_field", "state" }, PROBE_CRIT,
		    "state is not a number", NAN },
		{ "/json/bad", { "json_field", "qps" }, PROBE_CRIT,
		    "body is not JSON", NAN },
		{ "/json/list", { "json_field", "*" }, PROBE_OK,
		    "max * 9 (1)", 9 },
		/* crit below warn: lower is worse. */
		{ "/json/obj", { "json_field", "count", "warn", "50", "crit",
		    "10" }, PROBE_WARN, "count 42 (warn 50)", 42 },
		{ "/json/obj", { "json_field", "count", "warn", "100", "crit",
		    "50" }, PROBE_CRIT, "count 42 (crit 50)", 42 },
		{ "/json/obj", { "json_field", "count", "warn", "40", "crit",
		    "10" }, PROBE_OK, "count 42", 42 },
		{ "/json/obj", { "json_field", "count", "warn", "42", "crit",
		    "10" }, PROBE_WARN, "count 42 (warn 42)", 42 },
		/* At the threshold counts. */
		{ "/json/obj", { "json_field", "count", "crit", "42" },
		    PROBE_CRIT, "count 42 (crit 42)", 42 },
		{ "/json/obj", { "json_field", "count", "warn", "42.5" },
		    PROBE_OK, "count 42", 42 },
		{ "/json/obj", { "json_field", "ratio", "warn", "1" },
		    PROBE_WARN, "ratio 1.5 (warn 1)", 1.5 },
		{ "/json/obj", { "json_field", "big", "warn", "1e5" },
		    PROBE_WARN, "big 1000000 (warn 100000)", 1e6 },
		/* Status first, then the body, then the field. */
		{ "/503", { "json_field", "status", "expect_value", "x" },
		    PROBE_CRIT, "HTTP 503", NAN },
		{ "/json/green", { "expect_body", "yellow", "json_field",
		    "status", "expect_value", "green" }, PROBE_CRIT,
		    "body lacks \"yellow\"", NAN },
	};
	struct probe_outcome	out;
	size_t			i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = run_path(cases[i].path, cases[i].kv, cases[i].result,
		    NULL);
		ck_assert_msg(strcmp(out.reason, cases[i].reason) == 0,
		    "case %zu: \"%s\", want \"%s\"", i, out.reason,
		    cases[i].reason);
		if (!isnan(cases[i].value)) {
			ck_assert_msg(out.value == cases[i].value,
			    "case %zu: value %g", i, out.value);
			/* The field's number, not a latency in ms. */
			ck_assert_msg(strcmp(out.unit, "") == 0,
			    "case %zu: unit %s", i, out.unit);
		}
	}
}
END_TEST

START_TEST(json_wildcards)
{
	const struct json_case	cases[] = {
		{ "/json/rabbit", { "json_field", "*.messages_ready", "warn",
		    "1000", "crit", "10000" }, PROBE_CRIT, "max "
		    "*.messages_ready 12000 (orders) at or above crit 10000",
		    12000 },
		{ "/json/rabbit", { "json_field", "*.messages_ready", "warn",
		    "1000", "crit", "20000" }, PROBE_WARN, "max "
		    "*.messages_ready 12000 (orders) at or above warn 1000",
		    12000 },
		{ "/json/rabbit", { "json_field", "*.messages_ready",
		    "json_aggregate", "max", "crit", "20000" }, PROBE_OK,
		    "max *.messages_ready 12000 (orders)", 12000 },
		/* An element without a name is named by its index. */
		{ "/json/rabbit", { "json_field", "*.messages_ready",
		    "json_aggregate", "min", "warn", "5", "crit", "2" },
		    PROBE_WARN, "min *.messages_ready 3 (mail) at or below "
		    "warn 5", 3 },
		{ "/json/rabbit", { "json_field", "*.messages_ready",
		    "json_aggregate", "sum", "crit", "12010" }, PROBE_CRIT,
		    "sum *.messages_ready 12010 at or above crit 12010",
		    12010 },
		{ "/json/rabbit", { "json_field", "*.messages_ready",
		    "json_aggregate", "count", "warn", "4" }, PROBE_OK,
		    "count *.messages_ready 3", 3 },
		{ "/json/rabbit", { "json_field", "*.consumers",
		    "json_aggregate", "min", "crit", "0", "warn", "1" },
		    PROBE_CRIT, "min *.consumers 0 (orders) at or below crit 0",
		    0 },
		{ "/json/list", { "json_field", "*", "warn", "5" }, PROBE_WARN,
		    "max * 9 (1) at or above warn 5", 9 },
		{ "/json/list", { "json_field", "*", "json_aggregate", "min",
		    "warn", "5", "crit", "0" }, PROBE_WARN,
		    "min * 1 (2) at or below warn 5", 1 },
		{ "/json/nodes", { "json_field", "*.fd_used", "warn", "90" },
		    PROBE_CRIT, "n3.fd_used is a string, not a number", NAN },
		{ "/json/nodes", { "json_field", "*.fd_used", "json_aggregate",
		    "count", "crit", "3" }, PROBE_CRIT,
		    "count *.fd_used 3 at or above crit 3", 3 },
		{ "/json/obj", { "json_field", "nested.*.b", "warn", "5" },
		    PROBE_WARN, "max nested.*.b 7 (a) at or above warn 5", 7 },
		{ "/json/obj", { "json_field", "queues.*.name",
		    "json_aggregate", "count", "warn", "9" }, PROBE_OK,
		    "count queues.*.name 3", 3 },
		{ "/json/obj", { "json_field", "missing.*.b", "warn", "5" },
		    PROBE_CRIT, "no JSON field missing.*.b", NAN },
		{ "/json/obj", { "json_field", "count.*", "warn", "5" },
		    PROBE_CRIT, "count is a number, not an array or object",
		    NAN },
		{ "/json/green", { "json_field", "*.x", "json_aggregate", "sum",
		    "warn", "5" }, PROBE_OK, "sum *.x 0", 0 },
		{ "/json/none", { "json_field", "*.x", "json_aggregate",
		    "count", "warn", "5" }, PROBE_OK, "count *.x 0", 0 },
		{ "/json/bad", { "json_field", "*.x", "warn", "5" },
		    PROBE_CRIT, "body is not JSON", NAN },
	};
	struct probe_outcome	out;
	size_t			i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = run_path(cases[i].path, cases[i].kv, cases[i].result,
		    NULL);
		ck_assert_msg(strcmp(out.reason, cases[i].reason) == 0,
		    "case %zu: \"%s\", want \"%s\"", i, out.reason,
		    cases[i].reason);
		ck_assert_msg(!out.from_check, "case %zu", i);
		if (!isnan(cases[i].value))
			ck_assert_msg(out.value == cases[i].value,
			    "case %zu: value %g", i, out.value);
	}
	/* max and min of nothing: the check's own unknown, no value. */
	out = run_path("/json/none", KV("json_field", "*.messages_ready",
	    "warn", "5"), PROBE_UNKNOWN, "max *.messages_ready matched nothing");
	ck_assert(out.from_check);
	ck_assert(isnan(out.value));
	out = run_path("/json/green", KV("json_field", "*.messages_ready",
	    "json_aggregate", "min", "warn", "5"), PROBE_UNKNOWN,
	    "min *.messages_ready matched nothing");
	ck_assert(out.from_check);
}
END_TEST

START_TEST(latency)
{
	struct probe_outcome	out;

	/* The answer takes 300ms at least: lower bounds only. */
	out = run_path("/slow", KV("warn_latency", "100ms"), PROBE_WARN, NULL);
	ck_assert_msg(strncmp(out.reason, "latency ", 8) == 0 &&
	    strstr(out.reason, "ms (warn 100ms)") != NULL, "%s", out.reason);
	ck_assert(out.value >= 300);
	out = run_path("/slow", KV("warn_latency", "100ms", "crit_latency",
	    "200ms"), PROBE_CRIT, NULL);
	ck_assert_msg(strstr(out.reason, "ms (crit 200ms)") != NULL, "%s",
	    out.reason);
	out = run_path("/slow", KV("crit_latency", "1s"), PROBE_OK, NULL);
	ck_assert_msg(strncmp(out.reason, "HTTP 200 in ", 12) == 0, "%s",
	    out.reason);
	/* A worse result elsewhere wins; a JSON value stays the value. */
	run_path("/json/red", KV("warn_latency", "0ms", "json_field", "status",
	    "expect_value", "green"), PROBE_CRIT,
	    "status is \"red\" (expected \"green\")");
	out = run_path("/json/obj", KV("warn_latency", "0ms", "json_field",
	    "count", "crit", "100"), PROBE_WARN, NULL);
	ck_assert_msg(strstr(out.reason, "(warn 0s)") != NULL, "%s",
	    out.reason);
	ck_assert(out.value == 42);
	out = run_path("/json/obj", KV("warn_latency", "0ms", "json_field",
	    "count", "warn", "10"), PROBE_WARN, "count 42 (warn 10)");
}
END_TEST

/* ---- transport failures */

START_TEST(transport)
{
	struct probe_outcome	 out;
	char			 u[64];

	snprintf(u, sizeof(u), "http://127.0.0.1:%d/", th_closed_port());
	run_conf(pu_conf(&probe_http_ops, KV("url", u)), 5000, &out);
	ck_assert_int_eq(out.result, PROBE_CRIT);
	ck_assert_str_eq(out.reason, "connection refused");
	ck_assert(isnan(out.value));
	out = run_path("/mid", NULL, PROBE_CRIT,
	    "connection closed mid-response");
	run_path("/empty", NULL, PROBE_CRIT, "empty reply");
	run_path("/garbage", NULL, PROBE_CRIT, "not an HTTP reply");
	/* The run's timeout is libcurl's too. */
	run_conf(pu_conf(&probe_http_ops, KV("url", url("/silent"))), 300,
	    &out);
	ck_assert_int_eq(out.result, PROBE_CRIT);
	ck_assert_str_eq(out.reason, "timed out");
}
END_TEST

/*
 * lbagent out of descriptors: no socket, or no resolver thread, for the
 * transfer is not the server failing: unknown. With them back, it runs.
 */
START_TEST(out_of_descriptors)
{
	struct tu_fds		 fds;
	struct probe_outcome	 out, named;
	void			*by_addr, *by_name;

	by_addr = pu_conf(&probe_http_ops, KV("url", url("/ok")));
	by_name = pu_conf(&probe_http_ops,
	    KV("url", "http://lbagent-test.invalid/"));
	tu_fds_exhaust(&fds, 0);
	run_conf(by_addr, 5000, &out);
	run_conf(by_name, 5000, &named);
	tu_fds_release(&fds);
	ck_assert_msg(out.result == PROBE_UNKNOWN, "%s (%s)",
	    probe_result_name(out.result), out.reason);
	ck_assert_str_eq(out.reason, "socket: Too many open files (lbagent "
	    "out of descriptors)");
	ck_assert_msg(named.result == PROBE_UNKNOWN, "%s (%s)",
	    probe_result_name(named.result), named.reason);
	/* Whatever libcurl says of it (8.22: "Could not resolve host"). */
	ck_assert_str_eq(named.reason, "cannot resolve host (lbagent out of "
	    "descriptors)");
	run_path("/ok", NULL, PROBE_OK, NULL);
}
END_TEST

/* ---- what goes on the wire */

static char *
request_for(const char *const *kv)
{
	struct probe_outcome	out;

	run_conf(pu_conf(&probe_http_ops, kv), 5000, &out);
	ck_assert_int_eq(out.result, PROBE_OK);
	return th_last_request(f.srv);
}

static void
has_line(const char *req, const char *line, bool want)
{
	char	needle[256];

	snprintf(needle, sizeof(needle), "\r\n%s\r\n", line);
	/* The head ends without CRLF: check the last line too. */
	ck_assert_msg((strstr(req, needle) != NULL ||
	    (strlen(req) > strlen(line) && strcmp(req + strlen(req) -
	    strlen(line), line) == 0 && req[strlen(req) - strlen(line) - 1] ==
	    '\n')) == want, "%s %s in:\n%s", want ? "no" : "unwanted", line,
	    req);
}

START_TEST(request_shape)
{
	char	*req, u[128];

	req = request_for(KV("url", url("/ok")));
	ck_assert(strncmp(req, "GET /ok HTTP/1.1\r\n", 18) == 0);
	has_line(req, "User-Agent: lbagent/" LBAGENT_VERSION, true);
	ck_assert_ptr_null(strstr(req, "Authorization"));
	free(req);

	snprintf(u, sizeof(u), "http://alice:hunter2@127.0.0.1:%d/ok", f.port);
	req = request_for(KV("url", u, "header", "X-Token: s3cret", "header",
	    "Accept:"));
	ck_assert(strncmp(req, "GET /ok HTTP/1.1\r\n", 18) == 0);
	has_line(req, "Authorization: Basic YWxpY2U6aHVudGVyMg==", true);
	has_line(req, "X-Token: s3cret", true);
	ck_assert_ptr_null(strstr(req, "Accept:"));
	free(req);

	/* Percent-encoded credentials are decoded first, as libcurl does. */
	snprintf(u, sizeof(u), "http://al%%40ice:hunter2@127.0.0.1:%d/ok",
	    f.port);
	req = request_for(KV("url", u));
	has_line(req, "Authorization: Basic YWxAaWNlOmh1bnRlcjI=", true);
	free(req);

	req = request_for(KV("url", url("/ok"), "method", "HEAD"));
	ck_assert(strncmp(req, "HEAD /ok HTTP/1.1\r\n", 19) == 0);
	free(req);
	req = request_for(KV("url", url("/ok"), "method", "POST"));
	ck_assert(strncmp(req, "POST /ok HTTP/1.1\r\n", 19) == 0);
	has_line(req, "Content-Length: 0", true);
	free(req);
	req = request_for(KV("url", url("/ok"), "method", "PUT"));
	ck_assert(strncmp(req, "PUT /ok HTTP/1.1\r\n", 18) == 0);
	has_line(req, "Content-Length: 0", true);
	free(req);
	req = request_for(KV("url", url("/ok"), "method", "DELETE"));
	ck_assert(strncmp(req, "DELETE /ok HTTP/1.1\r\n", 21) == 0);
	free(req);
	/* No redirect followed: one request only. */
	ck_assert_uint_eq(th_requests(f.srv), 7);
	run_path("/302", NULL, PROBE_OK, NULL);
	ck_assert_uint_eq(th_requests(f.srv), 8);
}
END_TEST

/* A run with conf; its outcome. */
static struct probe_outcome
auth_run(const char *path, enum probe_result want, const char *reason)
{
	return run_path("/ok", KV("auth_file", path), want, reason);
}

/* auth_file: read at each run, its faults crit naming it, never shown. */
START_TEST(auth_file)
{
	static const char *const bad[][2] = {
		{ "", "expected one line user:password" },
		{ "\n", "expected one line user:password" },
		{ "alice", "expected one line user:password" },
		{ "alice:a\nbob:b\n", "expected one line user:password" },
		{ ":hunter2\n", "the user name before ':' is empty" },
		{ "alice:hun\tter2\n", "user:password must not contain "
		    "control characters" },
	};
	char			*dir = tu_tmpdir(), *path, *req, u[256], big[5000];
	struct probe_outcome	 out;
	void			*conf;
	size_t			 i;

	/* The file need not exist at load (lbagent -c elsewhere). */
	snprintf(u, sizeof(u), "%s/later.auth", dir);
	probe_http_ops.conf_free(pu_conf(&probe_http_ops, KV("url",
	    url("/ok"), "auth_file", u)));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		path = tu_write(dir, "bad.auth", bad[i][0], -1);
		snprintf(u, sizeof(u), "auth_file %s: %s", path, bad[i][1]);
		out = auth_run(path, PROBE_CRIT, u);
		ck_assert_ptr_null(strstr(out.reason, "hunter2"));
		free(path);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[10] = ':';
	path = tu_write(dir, "big.auth", big, -1);
	snprintf(u, sizeof(u), "auth_file %s: larger than 4096 bytes", path);
	auth_run(path, PROBE_CRIT, u);
	free(path);
	snprintf(u, sizeof(u), "auth_file %s: not a regular file", dir);
	auth_run(dir, PROBE_CRIT, u);
	/* Nothing was sent for the failed runs. */
	ck_assert_uint_eq(th_requests(f.srv), 0);

	/* One line, its newline (or CRLF) dropped; ':' in the password. */
	path = tu_write(dir, "rabbit.auth", "alice:hunter2\n", -1);
	req = request_for(KV("url", url("/ok"), "auth_file", path));
	has_line(req, "Authorization: Basic YWxpY2U6aHVudGVyMg==", true);
	free(req);

	/* A rotated password is used by the next run, without a reload. */
	conf = pu_conf(&probe_http_ops, KV("url", url("/ok"), "auth_file",
	    path));
	free(tu_write(dir, "rabbit.auth", "alice:new:pw\r\n", -1));
	{
		struct pu	r;

		pu_init_env(&r, &probe_http_ops, &f.env, conf, 5000);
		pu_run(&r, 20000);
		ck_assert_int_eq(r.out.result, PROBE_OK);
		req = th_last_request(f.srv);
		/* base64("alice:new:pw") */
		has_line(req, "Authorization: Basic YWxpY2U6bmV3OnB3", true);
		free(req);
		/* Gone at a run: crit, its path, not its text. */
		ck_assert_int_eq(unlink(path), 0);
		pu_start(&r);
		pu_wait(&r, 20000);
		ck_assert_int_eq(r.out.result, PROBE_CRIT);
		snprintf(u, sizeof(u), "auth_file %s: No such file or "
		    "directory", path);
		ck_assert_str_eq(r.out.reason, u);
		pu_done(&r);
	}
	probe_http_ops.conf_free(conf);

/* The server's 401 is the reason; the password is nowhere in it. */
	free(tu_write(dir, "rabbit.auth", "alice:wrong-secret\n", -1));
	out = run_path("/401", KV("auth_file", path), PROBE_CRIT, "HTTP 401");
	ck_assert_ptr_null(strstr(out.reason, "wrong-secret"));
	free(path);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- HTTPS, with a throw-away certificate and openssl s_server */

static pid_t
tls_server(const char *dir, int *port)
{
	char			 cmd[2048], cert[512], key[512], addr[64];
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	pid_t			 pid;
	int			 fd, i;

	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(cmd, sizeof(cmd), "openssl req -x509 -newkey ec -pkeyopt "
	    "ec_paramgen_curve:prime256v1 -nodes -keyout %s -out %s -days 2 "
	    "-subj /CN=localhost >/dev/null 2>&1", key, cert);
	ck_assert_int_eq(system(cmd), 0);
	*port = th_closed_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", *port);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("openssl", "openssl", "s_server", "-quiet", "-www",
		    "-accept", addr, "-cert", cert, "-key", key, (char *)NULL);
		_exit(127);
	}
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)*port);
	for (i = 0; i < 200; i++) {
		ck_assert_int_ne(fd = socket(AF_INET, SOCK_STREAM, 0), -1);
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			close(fd);
			return pid;
		}
		close(fd);
		usleep(50000);
	}
	ck_abort_msg("openssl s_server did not start");
	return -1;
}

static bool
have_openssl(void)
{
	return system("openssl version >/dev/null 2>&1") == 0;
}

START_TEST(https)
{
	struct probe_outcome	 out;
	char			*dir, u[128];
	pid_t			 pid;
	int			 port, status;

	/* scripts/deps test installs it: a missing one fails, never skips. */
	ck_assert_msg(have_openssl(), "https: no openssl CLI (scripts/deps "
	    "test installs it)");
	dir = tu_tmpdir();
	pid = tls_server(dir, &port);
	snprintf(u, sizeof(u), "https://alice:hunter2@127.0.0.1:%d/", port);
	run_conf(pu_conf(&probe_http_ops, KV("url", u)), 5000, &out);
	ck_assert_int_eq(out.result, PROBE_CRIT);
	ck_assert_str_eq(out.reason, "TLS: certificate verify failed");
	run_conf(pu_conf(&probe_http_ops, KV("url", u, "tls_verify", "no",
	    "expect_body", "s_server")), 5000, &out);
	ck_assert_msg(out.result == PROBE_OK, "%s", out.reason);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- secrets never shown */

START_TEST(no_secrets)
{
	static const char *const secrets[] = { "alice", "hunter2", "s3cret",
	    "YWxpY2U" };
	struct probe_outcome	 out;
	struct pu	 r;
	char			*dir, *log, u[128], text[65536];
	void			*conf;
	FILE			*fp;
	size_t			 i, n;
	int			 saved, fd, port = 0;
	pid_t			 pid = -1;
	char			 reasons[2048] = "";
	const char		*targets[] = { "refused", "/401", "/silent",
	    "/mid", "/garbage", "tls", "/ok" };

	dir = tu_tmpdir();
	ck_assert_int_ne(asprintf(&log, "%s/log", dir), -1);
	if (have_openssl())
		pid = tls_server(dir, &port);
	log_set_debug(1);
	fflush(stderr);
	ck_assert_int_ne(saved = dup(2), -1);
	ck_assert_int_ne(fd = open(log, O_CREAT | O_TRUNC | O_WRONLY, 0600),
	    -1);
	dup2(fd, 2);
	close(fd);

	/* Each failure once, each with a fresh runner, so each is logged. */
	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		if (strcmp(targets[i], "refused") == 0)
			snprintf(u, sizeof(u), "http://alice:hunter2@127.0.0.1:"
			    "%d/", th_closed_port());
		else if (strcmp(targets[i], "tls") == 0) {
			if (pid == -1)
				continue;
			snprintf(u, sizeof(u), "https://alice:hunter2@"
			    "127.0.0.1:%d/", port);
		} else
			snprintf(u, sizeof(u), "http://alice:hunter2@127.0.0.1:"
			    "%d%s", f.port, targets[i]);
		conf = pu_conf(&probe_http_ops, KV("url", u, "header",
		    "X-Token: s3cret", "expect_body", "ok"));
		pu_init_env(&r, &probe_http_ops, &f.env, conf, 500);
		pu_run(&r, 20000);
		out = r.out;
		strncat(reasons, out.reason, sizeof(reasons) -
		    strlen(reasons) - 2);
		strcat(reasons, "\n");
		pu_done(&r);
		probe_http_ops.conf_free(conf);
	}

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	log_set_debug(0);
	ck_assert_ptr_nonnull(fp = fopen(log, "r"));
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	/* libcurl's text did reach the log, and nothing secret with it. */
	ck_assert_msg(strstr(text, "probe web: libcurl: ") != NULL, "%s", text);
	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		ck_assert_msg(strstr(text, secrets[i]) == NULL, "%s in:\n%s",
		    secrets[i], text);
		ck_assert_msg(strstr(reasons, secrets[i]) == NULL, "%s in:\n%s",
		    secrets[i], reasons);
	}
	ck_assert_msg(strstr(reasons, "connection refused\nHTTP 401\n"
	    "timed out\nconnection closed mid-response\nnot an HTTP reply\n")
	    == reasons, "%s", reasons);
	if (pid != -1) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	tu_rmtree(dir);
	free(dir);
	free(log);
}
END_TEST

/* A lasting failure logs libcurl's text once; a new one logs again. */
START_TEST(libcurl_text_once)
{
	struct pu	 r;
	char			*dir, *log, u[64], text[8192], *p;
	void			*refused, *garbage;
	FILE			*fp;
	size_t			 n, lines = 0;
	int			 saved, fd, i;

	dir = tu_tmpdir();
	ck_assert_int_ne(asprintf(&log, "%s/log", dir), -1);
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/", th_closed_port());
	refused = pu_conf(&probe_http_ops, KV("url", u));
	garbage = pu_conf(&probe_http_ops, KV("url", url("/garbage")));
	log_set_debug(1);
	fflush(stderr);
	ck_assert_int_ne(saved = dup(2), -1);
	ck_assert_int_ne(fd = open(log, O_CREAT | O_TRUNC | O_WRONLY, 0600),
	    -1);
	dup2(fd, 2);
	close(fd);
	pu_init_env(&r, &probe_http_ops, &f.env, refused, 5000);
	for (i = 0; i < 3; i++)
		pu_run(&r, 20000);
	r.run.conf = garbage;
	pu_run(&r, 20000);
	r.run.conf = refused;
	pu_run(&r, 20000);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	log_set_debug(0);
	ck_assert_ptr_nonnull(fp = fopen(log, "r"));
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	for (p = text; (p = strstr(p, "libcurl: ")) != NULL; p++)
		lines++;
	/* refused (once for three runs), garbage, refused again. */
	ck_assert_msg(lines == 3, "%zu lines:\n%s", lines, text);
	pu_done(&r);
	probe_http_ops.conf_free(refused);
	probe_http_ops.conf_free(garbage);
	tu_rmtree(dir);
	free(dir);
	free(log);
}
END_TEST

/* ---- the run's life */

START_TEST(cancel_in_flight)
{
	struct pu	 r;
	void			*conf;
	unsigned		 i;

	conf = pu_conf(&probe_http_ops, KV("url", url("/silent")));
	pu_init_env(&r, &probe_http_ops, &f.env, conf, 10000);
	pu_start(&r);
	ck_assert_ptr_nonnull(r.run.data);
	for (i = 0; i < 100 && th_requests(f.srv) == 0; i++)
		pu_loop_pending(f.base, NULL, 50);
	ck_assert_uint_eq(th_requests(f.srv), 1);
	/* The owner's timeout: the kind drops the run and never reports. */
	r.run.ops->cancel(&r.run);
	r.run.in_flight = false;
	ck_assert_ptr_null(r.run.data);
	pu_loop_pending(f.base, NULL, 300);
	ck_assert_uint_eq(r.nreports, 0);
	/* And the same probe runs again. */
	conf = (void *)r.run.conf;
	probe_http_ops.conf_free(conf);
	conf = pu_conf(&probe_http_ops, KV("url", url("/ok")));
	r.run.conf = conf;
	pu_run(&r, 20000);
	ck_assert_int_eq(r.out.result, PROBE_OK);
	pu_done(&r);
	probe_http_ops.conf_free(conf);
}
END_TEST

START_TEST(no_curl_loop)
{
	struct probe_env	 env = { .base = f.base };
	struct pu	 r;
	void			*conf;

	conf = pu_conf(&probe_http_ops, KV("url", url("/ok")));
	pu_init_env(&r, &probe_http_ops, &env, conf, 1000);
	pu_start(&r);
	ck_assert_uint_eq(r.nreports, 1);
	ck_assert_int_eq(r.out.result, PROBE_CRIT);
	ck_assert_str_eq(r.out.reason, "cannot start the request");
	ck_assert_ptr_null(r.run.data);
	pu_done(&r);
	probe_http_ops.conf_free(conf);
}
END_TEST

#define NPROBES	100

/* A hundred HTTP probes in flight at once all report. */
START_TEST(hundred_probes)
{
	static struct pu	 r[NPROBES];
	void			*conf;
	unsigned		 pending = NPROBES;
	size_t			 i;

	conf = pu_conf(&probe_http_ops, KV("url", url("/slow"),
	    "expect_body", "late"));
	for (i = 0; i < NPROBES; i++) {
		pu_init_env(&r[i], &probe_http_ops, &f.env, conf, 20000);
		r[i].pending = &pending;
		pu_start(&r[i]);
	}
	ck_assert(pu_loop_pending(f.base, &pending, 25000));
	for (i = 0; i < NPROBES; i++) {
		ck_assert_uint_eq(r[i].nreports, 1);
		ck_assert_msg(r[i].out.result == PROBE_OK, "%s",
		    r[i].out.reason);
		pu_done(&r[i]);
	}
	ck_assert_uint_eq(th_requests(f.srv), NPROBES);
	probe_http_ops.conf_free(conf);
}
END_TEST

static Suite *
http_suite(void)
{
	Suite	*s = suite_create("probe_http");
	TCase	*tc = tcase_create("conf");

	tcase_add_test(tc, config_errors);
	tcase_add_test(tc, config_accepted);
	tcase_add_test(tc, key_docs);
	tcase_add_test(tc, redaction);
	suite_add_tcase(s, tc);

	tc = tcase_create("runs");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, status_codes);
	tcase_add_test(tc, bodies);
	tcase_add_test(tc, json_fields);
	tcase_add_test(tc, json_wildcards);
	tcase_add_test(tc, latency);
	tcase_add_test(tc, transport);
	tcase_add_test(tc, out_of_descriptors);
	tcase_add_test(tc, request_shape);
	tcase_add_test(tc, auth_file);
	tcase_add_test(tc, https);
	tcase_add_test(tc, no_secrets);
	tcase_add_test(tc, libcurl_text_once);
	tcase_add_test(tc, cancel_in_flight);
	tcase_add_test(tc, no_curl_loop);
	tcase_add_test(tc, hundred_probes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(http_suite());
}
