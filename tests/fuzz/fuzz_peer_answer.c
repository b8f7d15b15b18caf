/*
 * Fuzz target: a peer's public /status answer (peer_view_answer_parse in
 * src/core/peer_view.c), then judged as the peer guard judges it
 * (peer_view_judge and peer_view_aggregate) for the services the seeds
 * name, with and without a load balancer that shows node1 and node2 up. Names must come out as
 * the config allows them, every text NUL-terminated.
 */
#include <string.h>

#include "lbagent/daemon/peers.h"
#include "fuzzutil.h"

static const char	csv[] = "# pxname,svname,status,weight\n"
			    "be,node1,UP,100\nbe,node2,DOWN,100\n";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
name_ok(const char *s)
{
	size_t	n = strlen(s);

	FZ_ASSERT(n <= CONFIG_NAME_MAX);
	FZ_ASSERT(strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char	*services[] = { "", "web", "api" };
	static const char	*const backends[] = { "be" };
	struct hastats_reader	*rd;
	struct peer_source	 ps[2];
	struct lb_source	 lb;
	struct peer_verdict	 v[2];
	struct peer_view	 view;
	struct transition_conf	 tc;
	const char		*why = NULL;
	size_t			 i, nlbs;

	memset(ps, 0, sizeof(ps));
	if (peer_view_answer_parse((const char *)data, size, &ps[0].ans, &why)
	    == -1) {
		FZ_ASSERT(why != NULL && ps[0].ans.nsvc == 0 &&
		    ps[0].ans.svc == NULL);
		peer_view_answer_free(&ps[0].ans);
		return 0;
	}
	FZ_ASSERT(ps[0].ans.nsvc > 0 && ps[0].ans.svc != NULL);
	name_ok(ps[0].ans.node_id);
	FZ_ASSERT(ps[0].ans.node_id[0] != '\0');
	for (i = 0; i < ps[0].ans.nsvc; i++) {
		name_ok(ps[0].ans.svc[i].name);
		name_ok(ps[0].ans.svc[i].server);
	}
	ps[0].answered = true;
	ps[0].took_ms = 5;
	snprintf(ps[0].text, sizeof(ps[0].text), "http://n:9506");
	ps[1].answered = false;
	snprintf(ps[1].error, sizeof(ps[1].error), "connection refused");
	memset(&lb, 0, sizeof(lb));
	lb.answered = true;
	FZ_ASSERT((rd = hastats_reader_new(backends, 1, NULL)) != NULL);
	FZ_ASSERT(hastats_reader_feed(rd, csv, sizeof(csv) - 1, &why) == 0);
	FZ_ASSERT((lb.table = hastats_reader_finish(rd, &why)) != NULL);
	hastats_reader_free(rd);
	memset(&tc, 0, sizeof(tc));
	snprintf(tc.backend, sizeof(tc.backend), "be");
	tc.peer_timeout_ms = 1000;
	for (nlbs = 0; nlbs <= 1; nlbs++)
		for (i = 0; i < sizeof(services) / sizeof(services[0]); i++) {
			memset(&view, 0, sizeof(view));
			peer_view_aggregate(ps, 2, &lb, nlbs, services[i], &tc,
			    "self", 1000, v, &view);
			FZ_ASSERT(memchr(view.who, '\0', sizeof(view.who)));
			FZ_ASSERT(memchr(view.why, '\0', sizeof(view.why)));
			FZ_ASSERT(!v[1].serving);
		}
	peer_view_answer_free(&ps[0].ans);
	hastats_table_free(lb.table);
	return 0;
}
