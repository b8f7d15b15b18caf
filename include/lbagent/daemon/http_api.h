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
#include <sys/types.h>

#include <event2/event.h>

#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/status.h"
#include "lbagent/sys/token_file.h"

#define HTTP_MAX_HEADERS_BYTES	8192	/* request line and headers */
#define HTTP_MAX_HEADERS_TEXT	"8192"
#define HTTP_MAX_BODY_BYTES	1024	/* a longer Content-Length is 413 */
#define HTTP_MAX_BODY_TEXT	"1024"
/* From accept to the request's last header, however slowly it comes. */
#define HTTP_REQUEST_MS		5000
/* From the end of the request to the reply's last byte written. */
#define HTTP_REPLY_MS		5000
/* The detail waits this long at most for a fresh round of the peers. */
#define HTTP_FRESH_MS		3000
/*
 * Descriptors lbagent keeps for itself beyond both ports' connections:
 * probes (an exec run holds up to six pipe ends for a moment), the state
 * file, markers, listening sockets, libevent and libcurl. main raises
 * RLIMIT_NOFILE to [agent] max_connections + [http] max_connections +
 * this; the API never takes more than the limit minus the other two.
 */
#define HTTP_NOFILE_RESERVE	64
/*
 * One address (an IP; every unix-socket caller counts as one) may hold at
 * most the API's connection cap / HTTP_ADDR_SHARE of its connections, and
 * HTTP_ADDR_MIN however low the cap; more are answered 503 and closed.
 */
#define HTTP_ADDR_SHARE		8
#define HTTP_ADDR_MIN		4
/*
 * Libevent priorities: main's base has HTTP_PRIORITIES levels; the agent
 * port's events keep the default (the middle one), the API's take the
 * lowest, so that a flood of HTTP requests waits while agent checks run.
 */
#define HTTP_PRIORITIES		3
#define HTTP_PRIORITY		(HTTP_PRIORITIES - 1)
/* Callbacks at HTTP_PRIORITY before the loop looks for new events again. */
#define HTTP_DISPATCH_MAX	8
#define HTTP_TOKEN_MAX		TOKEN_FILE_MAX	/* sys/token_file.h */

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

/* Compares in time that depends on the lengths only. */
bool		 http_api_token_equal(const char *a, size_t alen,
		    const char *b, size_t blen);

#endif
