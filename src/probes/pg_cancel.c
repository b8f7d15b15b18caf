/* Cancel requests of one postgres probe on a worker thread (pg_cancel.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/sys/worker.h"
#include "pg_cancel.h"

#define PG_CANCEL_ERR_MAX	256

struct pg_canceller {
	struct event_base	*base;
	char			*name;
	struct worker_job	*job;		/* in flight, or given up on */
	struct event		*timer;		/* PG_CANCEL_TIMEOUT_MS */
	int64_t			 started_ms;
};

/* One request: the thread's, then released with the job. */
struct pg_cancel_req {
	struct pg_canceller	*owner;		/* only in done() */
	PGcancel		*cancel;
	int			 ok;
	char			 err[PG_CANCEL_ERR_MAX];
};

static void
req_run(void *arg)
{
	struct pg_cancel_req	*q = arg;

	q->ok = PQcancel(q->cancel, q->err, sizeof(q->err));
}

static void
req_release(void *arg)
{
	struct pg_cancel_req	*q = arg;

	PQfreeCancel(q->cancel);
	free(q);
}

/* On the loop: the server answered (or the request failed). */
static void
req_done(void *arg)
{
	struct pg_cancel_req	*q = arg;
	struct pg_canceller	*c = q->owner;
	size_t			 n;

	evtimer_del(c->timer);
	if (!q->ok) {
		n = strcspn(q->err, "\r\n");
		log_warnx("probe %s: the cancel request failed: %.*s", c->name,
		    (int)n, q->err);
	}
	/* Last touch of q: worker_free may release it. */
	worker_free(c->job);
	c->job = NULL;
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_canceller	*c = arg;

	if (c->job == NULL)
		return;
	/* Its thread stays blocked; no other request until it returns. */
	worker_abandon(c->job);
	log_warnx("probe %s: the cancel request got no answer within %dms",
	    c->name, PG_CANCEL_TIMEOUT_MS);
}

struct pg_canceller *
pg_canceller_new(struct event_base *base, const char *name)
{
	struct pg_canceller	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->base = base;
	if ((c->name = strdup(name)) == NULL ||
	    (c->timer = evtimer_new(base, timer_cb, c)) == NULL) {
		free(c->name);
		free(c);
		return NULL;
	}
	return c;
}

void
pg_canceller_send(struct pg_canceller *c, PGconn *conn)
{
	struct pg_cancel_req	*q;
	struct timeval		 tv;

	if (c->job != NULL) {
		if (worker_running(c->job)) {
			log_info("probe %s: no cancel request sent, the one of "
			    "%lldms ago is still in flight", c->name,
			    (long long)(clock_now_ms() - c->started_ms));
			return;
		}
		worker_free(c->job);	/* given up on, and now returned */
		c->job = NULL;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (q->cancel = PQgetCancel(conn)) == NULL) {
		free(q);
		log_warnx("probe %s: cannot make a cancel request", c->name);
		return;
	}
	q->owner = c;
	c->started_ms = clock_now_ms();
	if ((c->job = worker_start(c->base, req_run, req_done, req_release,
	    q)) == NULL) {
		log_warn("probe %s: cannot start a thread for the cancel "
		    "request", c->name);
		req_release(q);
		return;
	}
	tv.tv_sec = PG_CANCEL_TIMEOUT_MS / 1000;
	tv.tv_usec = (PG_CANCEL_TIMEOUT_MS % 1000) * 1000;
	evtimer_add(c->timer, &tv);
}

void
pg_canceller_free(struct pg_canceller *c)
{
	if (c == NULL)
		return;
	worker_free(c->job);
	event_free(c->timer);
	free(c->name);
	free(c);
}
