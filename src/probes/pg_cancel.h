/*
 * Cancel requests of one postgres probe. libpq 15's PQcancel connects and
 * waits for the server's answer, blocking, so it runs on a worker thread
 * (daemon/worker.h), never on the loop; one request in flight per probe,
 * so a server that never answers holds one thread, not one per run.
 */
#ifndef LBAGENT_PG_CANCEL_H
#define LBAGENT_PG_CANCEL_H

#include <event2/event.h>
#include <libpq-fe.h>

#define PG_CANCEL_TIMEOUT_MS	5000	/* then given up, its thread left */

struct pg_canceller;

/* For the probe called name (copied, for the log). NULL: out of memory. */
struct pg_canceller	*pg_canceller_new(struct event_base *base,
			    const char *name);
/*
 * Asks the server to cancel conn's query, from a thread, unless a request
 * of this probe is still in flight (then logs that none was sent). conn
 * may be finished at once: the request holds what it needs.
 */
void			 pg_canceller_send(struct pg_canceller *, PGconn *conn);
/* Gives up the request in flight, if any; its thread ends on its own. */
void			 pg_canceller_free(struct pg_canceller *);

#endif
