/* libcurl's multi on the libevent loop, against a real local server. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lbagent/sys/curl_loop.h"
#include "testhttpd.h"
#include "testutil.h"

#define NXFER	100

static const struct th_route routes[] = {
	{ .path = "/ok", .status = 200, .body = "hello\n" },
	{ .path = "/slow", .status = 200, .body = "late\n", .delay_ms = 300 },
	{ .path = "/silent", .mode = TH_SILENT },
	{ .path = NULL },
};

struct fixture {
	struct event_base	*base;
	struct curl_loop	*loop;
	struct th_server	*srv;
	int			 port;
	CURL			*easy[NXFER];
	unsigned		 done;		/* done callbacks seen */
	unsigned		 ok;		/* ... with CURLE_OK and 200 */
	unsigned		 want;		/* break the loop at this many */
	unsigned		 ticks_in_flight;
	unsigned		 chain;		/* re-adds left (done_adds_more) */
	CURLcode		 last_rc;
	bool			 timed_out;
	bool			 free_in_done;
};

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	return size * n;
}

static CURL *
easy_for(struct fixture *f, const char *path)
{
	char	 url[256];
	CURL	*easy;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", f->port, path);
	ck_assert_ptr_nonnull(easy = curl_easy_init());
	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_PROXY, "");
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 30000L);
	return easy;
}

static void
done_cb(CURL *easy, CURLcode rc, void *arg)
{
	struct fixture	*f = arg;
	long		 code = 0;

	f->done++;
	f->last_rc = rc;
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_OK && code == 200)
		f->ok++;
	if (f->chain > 0) {
		f->chain--;
		ck_assert_int_eq(curl_loop_add(f->loop, easy, done_cb, f), 0);
		return;
	}
	if (f->free_in_done) {
		curl_loop_free(f->loop);
		f->loop = NULL;
		event_base_loopbreak(f->base);
		return;
	}
	if (f->done == f->want)
		event_base_loopbreak(f->base);
}

static void
bound_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fixture	*f = arg;

	f->timed_out = true;
	event_base_loopbreak(f->base);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fixture	*f = arg;

	if (f->done < f->want)
		f->ticks_in_flight++;
}

/* Runs the loop until done_cb breaks it, or for ms at most. */
static void
run_for(struct fixture *f, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*bound = evtimer_new(f->base, bound_cb, f);

	f->timed_out = false;
	evtimer_add(bound, &tv);
	event_base_dispatch(f->base);
	event_free(bound);
}

static void
setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	ck_assert_ptr_nonnull(f->base = event_base_new());
	ck_assert_ptr_nonnull(f->loop = curl_loop_new(f->base));
	f->srv = th_start_tcp(routes, &f->port);
}

static void
teardown(struct fixture *f)
{
	size_t	i;

	curl_loop_free(f->loop);
	for (i = 0; i < NXFER; i++)
		if (f->easy[i] != NULL)
			curl_easy_cleanup(f->easy[i]);
	th_stop(f->srv);
	event_base_free(f->base);
}

START_TEST(one_transfer)
{
	struct fixture	f;

	setup(&f);
	f.want = 1;
	f.easy[0] = easy_for(&f, "/ok");
	ck_assert_int_eq(curl_loop_add(f.loop, f.easy[0], done_cb, &f), 0);
	/* Never from inside curl_loop_add. */
	ck_assert_uint_eq(f.done, 0);
	/* The same handle twice is refused, and the first run goes on. */
	ck_assert_int_eq(curl_loop_add(f.loop, f.easy[0], done_cb, &f), -1);
	run_for(&f, 20000);
	ck_assert(!f.timed_out);
	ck_assert_uint_eq(f.done, 1);
	ck_assert_uint_eq(f.ok, 1);
	teardown(&f);
}
END_TEST

/* A hundred slow transfers at once: all finish, the loop keeps ticking. */
START_TEST(hundred_in_flight)
{
	struct fixture	 f;
	struct event	*tick;
	struct timeval	 tv = { 0, 10000 };
	size_t		 i;

	setup(&f);
	f.want = NXFER;
	tick = event_new(f.base, -1, EV_PERSIST, tick_cb, &f);
	evtimer_add(tick, &tv);
	for (i = 0; i < NXFER; i++) {
		f.easy[i] = easy_for(&f, "/slow");
		ck_assert_int_eq(curl_loop_add(f.loop, f.easy[i], done_cb, &f),
		    0);
	}
	/* Served one after the other they would need 30s. */
	run_for(&f, 25000);
	event_free(tick);
	ck_assert(!f.timed_out);
	ck_assert_uint_eq(f.done, NXFER);
	ck_assert_uint_eq(f.ok, NXFER);
	ck_assert_uint_eq(th_requests(f.srv), NXFER);
	/* Each answer waits 300ms: the loop ran meanwhile. */
	ck_assert_uint_gt(f.ticks_in_flight, 0);
	teardown(&f);
}
END_TEST

START_TEST(remove_in_flight)
{
	struct fixture	f;
	size_t		i;

	setup(&f);
	f.want = 1;
	for (i = 0; i < 3; i++) {
		f.easy[i] = easy_for(&f, "/silent");
		ck_assert_int_eq(curl_loop_add(f.loop, f.easy[i], done_cb, &f),
		    0);
	}
	for (i = 0; i < 100 && th_requests(f.srv) < 3; i++)
		run_for(&f, 100);
	ck_assert_uint_eq(th_requests(f.srv), 3);
	for (i = 0; i < 3; i++)
		curl_loop_remove(f.loop, f.easy[i]);
	/* Twice, or a handle it never ran: harmless. */
	curl_loop_remove(f.loop, f.easy[0]);
	f.easy[3] = easy_for(&f, "/ok");
	curl_loop_remove(f.loop, f.easy[3]);
	run_for(&f, 300);
	ck_assert_uint_eq(f.done, 0);
	/* A removed handle can run again. */
	ck_assert_int_eq(curl_loop_add(f.loop, f.easy[3], done_cb, &f), 0);
	run_for(&f, 20000);
	ck_assert(!f.timed_out);
	ck_assert_uint_eq(f.done, 1);
	ck_assert_uint_eq(f.ok, 1);
	teardown(&f);
}
END_TEST

START_TEST(free_in_flight)
{
	struct fixture	f;
	size_t		i;

	setup(&f);
	for (i = 0; i < 5; i++) {
		f.easy[i] = easy_for(&f, i % 2 ? "/silent" : "/slow");
		ck_assert_int_eq(curl_loop_add(f.loop, f.easy[i], done_cb, &f),
		    0);
	}
	f.want = 1000;
	run_for(&f, 100);
	curl_loop_free(f.loop);
	f.loop = NULL;
	run_for(&f, 500);
	ck_assert_uint_eq(f.done, 0);
	teardown(&f);
}
END_TEST

/* A done callback may start the next transfer on the same handle. */
START_TEST(done_adds_more)
{
	struct fixture	f;

	setup(&f);
	f.want = 5;
	f.chain = 4;
	f.easy[0] = easy_for(&f, "/ok");
	ck_assert_int_eq(curl_loop_add(f.loop, f.easy[0], done_cb, &f), 0);
	run_for(&f, 20000);
	ck_assert(!f.timed_out);
	ck_assert_uint_eq(f.done, 5);
	ck_assert_uint_eq(f.ok, 5);
	teardown(&f);
}
END_TEST

/* A done callback may free the loop; the others are dropped silently. */
START_TEST(free_from_done)
{
	struct fixture	f;
	size_t		i;

	setup(&f);
	f.free_in_done = true;
	f.easy[0] = easy_for(&f, "/ok");
	ck_assert_int_eq(curl_loop_add(f.loop, f.easy[0], done_cb, &f), 0);
	for (i = 1; i < 4; i++) {
		f.easy[i] = easy_for(&f, "/silent");
		ck_assert_int_eq(curl_loop_add(f.loop, f.easy[i], done_cb, &f),
		    0);
	}
	run_for(&f, 20000);
	ck_assert(!f.timed_out);
	ck_assert_ptr_null(f.loop);
	run_for(&f, 300);
	ck_assert_uint_eq(f.done, 1);
	teardown(&f);
}
END_TEST

START_TEST(connection_refused)
{
	struct fixture	f;
	char		url[64];

	setup(&f);
	f.want = 1;
	f.easy[0] = easy_for(&f, "/");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", th_closed_port());
	curl_easy_setopt(f.easy[0], CURLOPT_URL, url);
	ck_assert_int_eq(curl_loop_add(f.loop, f.easy[0], done_cb, &f), 0);
	run_for(&f, 20000);
	ck_assert(!f.timed_out);
	ck_assert_uint_eq(f.done, 1);
	ck_assert_int_eq(f.last_rc, CURLE_COULDNT_CONNECT);
	teardown(&f);
}
END_TEST

static Suite *
curl_loop_suite(void)
{
	Suite	*s = suite_create("curl_loop");
	TCase	*tc = tcase_create("loop");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_transfer);
	tcase_add_test(tc, hundred_in_flight);
	tcase_add_test(tc, remove_in_flight);
	tcase_add_test(tc, free_in_flight);
	tcase_add_test(tc, done_adds_more);
	tcase_add_test(tc, free_from_done);
	tcase_add_test(tc, connection_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(curl_loop_suite());
}
