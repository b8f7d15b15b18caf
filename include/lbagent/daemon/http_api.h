/*
 * The HTTP API ([http] listen): GET /status, /metrics, /health[/SERVICE]
 * and, on unix sockets, POST /reload on the agent's event loop, one
 * request per connection. Everything is
 * bounded: header and body bytes, a total deadline to send the request
 * and another to read the reply, connections open at once (within what
 * the descriptor limit leaves to the API); the detail of /status needs
 * the bearer token or the unix socket. It reads the agent, never blocks it.
 */
#ifndef LBAGENT_HTTP_API_H
#define LBAGENT_HTTP_API_H

#include <stddef.h>

#include <event2/event.h>

#include "lbagent/daemon/config.h"
#include "lbagent/daemon/http_api_token.h"
#include "lbagent/daemon/http_server.h"
#include "lbagent/daemon/status.h"

struct agent;
struct http_api;

/*
 * Binds cfg->http's addresses (and accepts on fds, listening sockets
 * passed by systemd: a unix one is trusted like a unix: address) and
 * reads the token file. dm is main's and outlives the API. NULL when an
 * address cannot be bound (logged).
 */
struct http_api	*http_api_new(struct event_base *, const struct config *,
		    struct agent *, const struct status_daemon *dm,
		    const int *fds, size_t nfds);
/*
 * A reload: settings (max_connections, the token file) are taken anew;
 * sockets whose address stays are kept with their connections, the
 * others close, new ones are bound. -1 when an address could not be
 * bound (logged; the others are in place).
 */
int		 http_api_reload(struct http_api *, const struct config *);
/*
 * What POST /reload runs (on a unix socket only): cb(arg), from the loop
 * after the request's reply is queued. Without it the request gets 503.
 */
void		 http_api_on_reload(struct http_api *, void (*cb)(void *),
		    void *arg);
void		 http_api_free(struct http_api *);

#endif
