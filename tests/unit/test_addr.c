/* Peer and load-balancer addresses: each form, each refusal, loopback. */
#include <string.h>

#include "lbagent/core/addr.h"
#include "testutil.h"

START_TEST(urls)
{
	static const struct {
		const char	*s, *scheme, *host, *path;
		unsigned	 port;
		bool		 userinfo, bracketed;
	} v[] = {
		{ "http://10.0.0.12:9506", "http", "10.0.0.12", "", 9506,
		  false, false },
		{ "HTTPS://Lb1/stats;csv", "https", "Lb1", "/stats;csv", 0,
		  false, false },
		{ "http://u:p@lb1:8404/stats;csv", "http", "lb1", "/stats;csv",
		  8404, true, false },
		/* The last '@' before the path: a password may hold one. */
		{ "http://u:p@ss@10.0.0.1/x@y", "http", "10.0.0.1", "/x@y", 0,
		  true, false },
		{ "http://[::1]:9506/", "http", "::1", "/", 9506, false, true },
		{ "http://[fe80::1]?q#f", "http", "fe80::1", "?q#f", 0, false,
		  true },
		{ "http://n1:/status", "http", "n1", "/status", 0, false,
		  false },
		{ "http://n1:09506", "http", "n1", "", 9506, false, false },
	};
	struct addr	 a;
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_msg(addr_parse(v[i].s, &a, &why) == 0, "%s: %s",
		    v[i].s, why);
		ck_assert_int_eq(a.kind, ADDR_URL);
		ck_assert_str_eq(a.scheme, v[i].scheme);
		ck_assert_str_eq(a.host, v[i].host);
		ck_assert_str_eq(a.path, v[i].path);
		ck_assert_uint_eq(a.port, v[i].port);
		ck_assert_int_eq(a.userinfo, v[i].userinfo);
		ck_assert_int_eq(a.bracketed, v[i].bracketed);
	}
}
END_TEST

START_TEST(sockets_and_tcp)
{
	struct addr	 a;
	const char	*why;

	ck_assert_int_eq(addr_parse("unix:/run/haproxy/admin.sock", &a, &why),
	    0);
	ck_assert_int_eq(a.kind, ADDR_UNIX);
	ck_assert_str_eq(a.path, "/run/haproxy/admin.sock");
	ck_assert_int_eq(addr_parse("tcp:10.0.0.2:09999", &a, &why), 0);
	ck_assert_int_eq(a.kind, ADDR_TCP);
	ck_assert_str_eq(a.host, "10.0.0.2");
	ck_assert_uint_eq(a.port, 9999);
	ck_assert(!a.bracketed);
	ck_assert_int_eq(addr_parse("tcp:[::1]:9999", &a, &why), 0);
	ck_assert_str_eq(a.host, "::1");
	ck_assert(a.bracketed);
}
END_TEST

START_TEST(refused)
{
	static const struct {
		const char	*s, *why;
	} v[] = {
		{ "unix:run/x", "unix: needs an absolute path" },
		{ "tcp:", "tcp: expected tcp:ADDRESS:PORT or tcp:[IPv6]:PORT" },
		{ "tcp:10.0.0.1", "tcp: expected tcp:ADDRESS:PORT or "
		  "tcp:[IPv6]:PORT" },
		{ "tcp::80", "tcp: expected tcp:ADDRESS:PORT or "
		  "tcp:[IPv6]:PORT" },
		{ "tcp:[::1]", "tcp: expected tcp:ADDRESS:PORT or "
		  "tcp:[IPv6]:PORT" },
		{ "tcp:[::1]x:80", "tcp: expected tcp:ADDRESS:PORT or "
		  "tcp:[IPv6]:PORT" },
		{ "tcp:[]:80", "tcp: expected tcp:ADDRESS:PORT or "
		  "tcp:[IPv6]:PORT" },
		{ "tcp:::1:80", "tcp: write an IPv6 address in brackets: "
		  "tcp:[::1]:PORT" },
		{ "tcp:10.0.0.1:", "tcp: the port must be a number from 1 to "
		  "65535" },
		{ "tcp:10.0.0.1:0", "tcp: the port must be a number from 1 to "
		  "65535" },
		{ "tcp:10.0.0.1:65536", "tcp: the port must be a number from 1 "
		  "to 65535" },
		{ "tcp:10.0.0.1:+80", "tcp: the port must be a number from 1 "
		  "to 65535" },
		{ "tcp:[::1]:99999999999999999999", "tcp: the port must be a "
		  "number from 1 to 65535" },
		{ "10.0.0.1:80", "expected scheme://HOST[:PORT][/PATH]" },
		{ "://x", "expected scheme://HOST[:PORT][/PATH]" },
		{ "http:/x", "expected scheme://HOST[:PORT][/PATH]" },
		{ "http://", "the URL has no host" },
		{ "http://u@/x", "the URL has no host" },
		{ "http://[::1/", "the URL has no host" },
		{ "http://::1/", "the URL has no host" },
		{ "http://h:x/", "the port must be a number from 1 to 65535" },
	};
	struct addr	 a;
	const char	*why;
	char		 longer[1200];
	size_t		 i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		why = NULL;
		ck_assert_msg(addr_parse(v[i].s, &a, &why) == -1, "%s accepted",
		    v[i].s);
		ck_assert_str_eq(why, v[i].why);
	}
	memset(longer, 'a', sizeof(longer));
	memcpy(longer, "unix:/", 6);
	longer[5 + 108] = '\0';
	ck_assert_int_eq(addr_parse(longer, &a, &why), -1);
	ck_assert_str_eq(why, "unix: the path is longer than 107 bytes");
	longer[5 + 107] = '\0';
	ck_assert_int_eq(addr_parse(longer, &a, &why), 0);
	memset(longer, 'a', sizeof(longer));
	memcpy(longer, "http://h/", 9);
	longer[sizeof(longer) - 1] = '\0';
	ck_assert_int_eq(addr_parse(longer, &a, &why), -1);
	ck_assert_str_eq(why, "the URL is longer than 1023 bytes");
	memset(longer, 'h', 300);
	memcpy(longer, "tcp:", 4);
	memcpy(longer + 300, ":80", 4);
	ck_assert_int_eq(addr_parse(longer, &a, &why), -1);
	ck_assert_str_eq(why, "tcp: expected tcp:ADDRESS:PORT or "
	    "tcp:[IPv6]:PORT");
}
END_TEST

START_TEST(loopback)
{
	static const char *const yes[] = { "localhost", "::1", "127.0.0.1",
	    "127.1.2.3", "127.0.0.1" };
	/* A name starting with 127. may be anywhere. */
	static const char *const no[] = { "", "10.0.0.1", "0.0.0.0", "::",
	    "[::1]", "127.evil.example", "localhost.example", "lb1",
	    "1127.0.0.1" };
	size_t	i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(addr_host_loopback(yes[i]), "%s", yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!addr_host_loopback(no[i]), "%s", no[i]);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("addr");
	TCase	*tc = tcase_create("addr");

	tcase_add_test(tc, urls);
	tcase_add_test(tc, sockets_and_tcp);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, loopback);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
