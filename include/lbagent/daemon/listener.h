/* The agent port: accepts HAProxy's checks and hands each its reply line. */
#ifndef LBAGENT_LISTENER_H
#define LBAGENT_LISTENER_H

#include <event2/event.h>

#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/config.h"

/* Each connection is bounded: this many request bytes, this long open. */
#define LISTENER_REQUEST_MAX	256
#define LISTENER_DEADLINE_MS	2000
/* How long to wait for agent-send text from an address known to send it. */
#define LISTENER_REQUEST_WAIT_MS 250
/* Bytes read after the reply before an endless sender is cut off. */
#define LISTENER_DRAIN_MAX	(64 * 1024)
/*
 * Fairness. One source address holds at most max_connections /
 * LISTENER_SOURCE_SHARE connections (at least LISTENER_SOURCE_MIN); more
 * are closed at once, unanswered. Once LISTENER_PRESSED_NUM /
 * LISTENER_PRESSED_DEN of max_connections are open, a new connection is
 * held for LISTENER_PRESSED_DEADLINE_MS in all and waits for agent-send
 * text (or a service's name) LISTENER_PRESSED_REQUEST_WAIT_MS at most, and
 * the connections already open are cut to the same, so that idle
 * connections cannot keep the load balancers' checks waiting in the
 * kernel's queue. Where the text chooses the service (the shared port
 * with [service] sections) the line is waited for up to
 * LISTENER_PRESSED_NAME_WAIT_MS instead, and a connection without a whole
 * line by then is closed unanswered (unless its address is known to send
 * no text): never the default service's word for a name that came late.
 */
#define LISTENER_SOURCE_SHARE	8
#define LISTENER_SOURCE_MIN	8
#define LISTENER_PRESSED_NUM	3
#define LISTENER_PRESSED_DEN	4
#define LISTENER_PRESSED_DEADLINE_MS	300
#define LISTENER_PRESSED_REQUEST_WAIT_MS 50
#define LISTENER_PRESSED_NAME_WAIT_MS	250

struct listener;

/*
 * Binds every configured address; NULL (with the reason logged) on
 * failure. fds, when nfds > 0, are listening sockets from systemd for the
 * shared port, used instead of [agent] listen (services' own ports are
 * still bound); the listener owns them from now on, failure included.
 */
struct listener	*listener_new(struct event_base *, const struct config *,
		    struct agent *, const int *fds, size_t nfds);
/*
 * A reload: ports whose address and service stay keep their sockets (and
 * connections); the others close; new ones are bound. Open connections
 * follow their services by name (one whose service is gone is closed, or
 * its late text dropped). Called after agent_reload() and before the old
 * configuration is freed. -1 when an address could not be bound (logged;
 * the others are in place).
 */
int		 listener_reload(struct listener *, const struct config *);
/* Stops accepting and closes every open connection. */
void		 listener_free(struct listener *);

#endif
