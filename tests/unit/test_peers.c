/*
 * The peer guard's rounds on a real event loop: a real HTTP server gives a
 * peer's /status and a load balancer's stats page, peers.c asks them, and
 * a reload carries what was learned to the sources at the same address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lbagent/daemon/config.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/curl_loop.h"
#include "lbagent/daemon/peers.h"
#include "testhttpd.h"
#include "testutil.h"

#define BOUND_MS	5000	/* a liveness bound for one round */

static const char STATUS[] = "{\"node_id\": \"n2\", \"services\": [{\"name\": "
    "\"\", \"serving\": true}]}";
static const char CSV[] = "# pxname,svname,qcur,scur,stot,status,weight,"
    "iweight,qtime,rtime,\n"
    "be,n1,1,3,12345,UP,100,100,4,17,\nbe,n2,0,0,7,UP,100,100,0,0,\n";

static struct {
	struct event_base	*base;
	struct curl_loop	*curl;
	struct th_server	*th;
	int			 port;
	char			*dir;
	unsigned		 rounds;
} fx;

static const struct th_route routes[] = {
	{ "/status", TH_ANSWER, 200, STATUS, 0, 0,
	  "Content-Type: application/json\r\n" },
	{ "/stats;csv", TH_ANSWER, 200, CSV, 0, 0, NULL },
	{ NULL, TH_ANSWER, 0, NULL, 0, 0, NULL },
};

static void
setup(void)
{
	memset(&fx, 0, sizeof(fx));
	ck_assert_ptr_nonnull(fx.base = event_base_new());
	ck_assert_ptr_nonnull(fx.curl = curl_loop_new(fx.base));
	ck_assert_ptr_nonnull(fx.th = th_start_tcp(routes, &fx.port));
	fx.dir = tu_tmpdir();
}

static void
teardown(void)
{
	th_stop(fx.th);
	curl_loop_free(fx.curl);
	event_base_free(fx.base);
	tu_rmtree(fx.dir);
	free(fx.dir);
}

static void
changed(void *arg)
{
	(void)arg;
	fx.rounds++;
	event_base_loopbreak(fx.base);
}

static void
bound_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	event_base_loopbreak(fx.base);
}

/* Runs the loop until the next round is done (bounded). */
static void
next_round(void)
{
	struct timeval	 tv = { BOUND_MS / 1000, (BOUND_MS % 1000) * 1000 };
	struct event	*bound = evtimer_new(fx.base, bound_cb, NULL);
	unsigned	 before = fx.rounds;

	ck_assert_ptr_nonnull(bound);
	evtimer_add(bound, &tv);
	event_base_dispatch(fx.base);
	event_free(bound);
	ck_assert_msg(fx.rounds > before, "no round within %d ms", BOUND_MS);
}

/* A config asking the server as peer n2 and as the given load balancers. */
static struct config *
load(const char *haproxy)
{
	struct config_errors	 errs;
	struct config		*cfg;
	char			*text, *path;

	ck_assert_int_ne(asprintf(&text, "[agent]\nnode_id = n1\n"
	    "[peers]\nagents = http://127.0.0.1:%d\nhaproxy = %s\n"
	    "backend = be\ninterval = 1m\n", fx.port, haproxy), -1);
	path = tu_write(fx.dir, "t.conf", text, -1);
	cfg = config_load(path, &errs);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	config_errors_free(&errs);
	free(path);
	free(text);
	return cfg;
}

static char *
lb_url(const char *userinfo, const char *path)
{
	char	*s;

	ck_assert_int_ne(asprintf(&s, "http://%s127.0.0.1:%d%s", userinfo,
	    fx.port, path), -1);
	return s;
}

/*
 * Sources whose shown text is the same (credentials redacted) are still
 * two: after a reload each keeps only what its own address answered. The
 * configuration check refuses such a pair now; peers.c must not rely on
 * it. The reload used to give the first one's CSV to both and leave the
 * second answered without it: SIGSEGV when judging the peer.
 */
START_TEST(reload_matches_sources_by_address)
{
	struct config		*cfg, *cfg2;
	struct peers		*ps;
	struct peer_view	 v;
	char			*a, *b, *other, *list;
	bool			 failed;

	a = lb_url("a:x@", "/stats;csv");
	b = lb_url("b:y@", "/stats;csv");
	cfg = load(a);
	ps = peers_new(fx.base, fx.curl, cfg, changed, NULL, &failed);
	ck_assert(!failed);
	ck_assert_ptr_nonnull(ps);
	next_round();
	ck_assert(peer_view_lb_ok(peers_lb(ps, 0)));
	peers_view(ps, 0, &v);
	ck_assert_msg(v.other_serving, "%s", v.why);

	/* The second item as the old check let it through. */
	other = lb_url("", "/x;csv");
	ck_assert_int_ne(asprintf(&list, "%s, %s", a, other), -1);
	cfg2 = load(list);
	ck_assert_uint_eq(cfg2->peers.haproxy.count, 2);
	free(cfg2->peers.haproxy.items[1]);
	cfg2->peers.haproxy.items[1] = b;
	ps = peers_reload(ps, cfg2, &failed);
	ck_assert(!failed);
	ck_assert_ptr_nonnull(ps);
	ck_assert_str_eq(peer_view_lb_text(peers_lb(ps, 0)),
	    peer_view_lb_text(peers_lb(ps, 1)));
	/* The first kept its answer; the second has none yet. */
	ck_assert(peer_view_lb_ok(peers_lb(ps, 0)));
	ck_assert(!peers_lb(ps, 1)->answered);
	ck_assert_ptr_null(peers_lb(ps, 1)->table);
	ck_assert(peer_view_peer_ok(peers_peer(ps, 0)));
	peers_view(ps, 0, &v);
	ck_assert_msg(v.other_serving, "%s", v.why);
	next_round();
	ck_assert(peer_view_lb_ok(peers_lb(ps, 0)));
	ck_assert(peer_view_lb_ok(peers_lb(ps, 1)));

	/* The same configuration again: everything kept, nothing doubled. */
	ps = peers_reload(ps, cfg2, &failed);
	ck_assert(!failed);
	ck_assert(peer_view_lb_ok(peers_lb(ps, 0)));
	ck_assert(peer_view_lb_ok(peers_lb(ps, 1)));
	ck_assert_ptr_ne(peers_lb(ps, 0)->table, peers_lb(ps, 1)->table);
	peers_view(ps, 0, &v);
	ck_assert_msg(v.other_serving, "%s", v.why);
	peers_free(ps);
	config_free(cfg);
	config_free(cfg2);
	free(a);
	free(other);
	free(list);
}
END_TEST

/* This node's server row on each load balancer, for the rate and latency. */
START_TEST(this_node_stats)
{
	struct config		*cfg;
	struct peers		*ps;
	struct lb_server_sample	 s;
	char			*a, *list;
	bool			 failed;
	int64_t			 before;

	a = lb_url("", "/stats;csv");
	ck_assert_int_ne(asprintf(&list, "%s, http://127.0.0.1:1/stats;csv",
	    a), -1);
	cfg = load(list);
	ps = peers_new(fx.base, fx.curl, cfg, changed, NULL, &failed);
	ck_assert_ptr_nonnull(ps);
	/* No round yet: nothing known. */
	ck_assert(!peers_this_node_stats(ps, 0, 0, &s));
	ck_assert(!s.found);
	ck_assert(s.stot == -1);
	ck_assert_int_eq(s.at_ms, INT64_MIN);
	before = clock_now_ms();
	next_round();
	ck_assert(peers_this_node_stats(ps, 0, 0, &s));
	ck_assert(s.found);
	ck_assert(s.stot == 12345);
	ck_assert_int_eq(s.scur, 3);
	ck_assert_int_eq(s.qcur, 1);
	ck_assert_int_eq(s.rtime_ms, 17);
	ck_assert_int_eq(s.qtime_ms, 4);
	ck_assert_int_ge(s.round_ms, before);
	ck_assert_int_ge(s.at_ms, s.round_ms);
	ck_assert_int_le(s.at_ms, clock_now_ms());
	ck_assert_int_eq(s.round_ms, peers_round_ms(ps));
	/* The load balancer that did not answer: nothing, no time. */
	ck_assert(!peers_this_node_stats(ps, 0, 1, &s));
	ck_assert(!s.found);
	ck_assert(s.stot == -1);
	ck_assert_int_eq(s.rtime_ms, -1);
	ck_assert_int_eq(s.at_ms, INT64_MIN);
	peers_free(ps);
	config_free(cfg);
	free(a);
	free(list);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("peers");
	TCase	*tc = tcase_create("peers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reload_matches_sources_by_address);
	tcase_add_test(tc, this_node_stats);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
