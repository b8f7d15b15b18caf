/*
 * The HTTP API's server: a small HTTP/1.1 server of its own on the
 * agent's event loop. It owns each connection from accept to close, so
 * that everything a caller can hold is bounded: a total deadline for the
 * request (from accept to its last header, however slowly the bytes
 * come), another for writing the reply, a cap on connections that leaves
 * descriptors to the rest of the process, a share of them per address,
 * and a pause, not a spin, when accept() runs out of them. The parser
 * takes only strict HTTP/1.1 (CR LF line ends, no NUL, no folded
 * headers); one request per connection, every reply "Connection: close";
 * its events run at the loop's lowest priority. What a request gets is
 * its owner's business (http_api.c's routes), through the hooks.
 */
#ifndef LBAGENT_HTTP_SERVER_H
#define LBAGENT_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "lbagent/daemon/config.h"

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

struct http_conn;
struct http_server;

/* One request, parsed in place in its connection's buffer. */
struct http_req {
	struct http_conn	*c;
	bool			 head;		/* HEAD: the headers only */
	const char		*method;
	const char		*target;
	const char		*auth;		/* Authorization, or NULL */
};

/* What the server asks of its owner. */
struct http_server_hooks {
	/* A request is in: queue its reply, or http_server_wait. */
	void	(*route)(struct http_req *, void *arg);
	/* A request that waits is due (http_server_answer_waiting, or
	 * HTTP_FRESH_MS passed): queue its reply now. */
	void	(*fresh)(struct http_req *, void *arg);
	void	*arg;
};

/* Listens on nothing yet; NULL out of memory (logged). */
struct http_server	*http_server_new(struct event_base *,
			    const struct http_server_hooks *);
void			 http_server_free(struct http_server *);
/*
 * [http] max_connections, [http] per_address (0: the cap's share),
 * [agent] max_connections (see server_cap) and [http] max_rate (TCP
 * connections accepted a second; 0: no limit).
 */
void			 http_server_settings(struct http_server *,
			    uint64_t max_conns, uint64_t per_address,
			    uint64_t agent_conns, uint64_t max_rate);
/* Binds cfg->http's addresses; -1 when one cannot be bound (logged). */
int			 http_server_listen(struct http_server *,
			    const struct config *);
/* Accepts on fds, listening sockets systemd passed (a unix one trusted). */
int			 http_server_adopt(struct http_server *, const int *fds,
			    size_t nfds);
/*
 * A reload: sockets whose address stays are kept with their connections,
 * the others close, new ones are bound; -1 when one could not be bound.
 */
int			 http_server_reload(struct http_server *,
			    const struct config *);
/* Every request that waits gets its reply now. */
void			 http_server_answer_waiting(struct http_server *);
/* Connections refused by the share since start. */
uint64_t		 http_server_refused(const struct http_server *);
/* Times TCP accepting waited for [http] max_rate since start. */
uint64_t		 http_server_rate_waits(const struct http_server *);

/* --- for the hooks: one request --- */

/* A unix-socket caller (the socket's permissions are the access control). */
bool		 http_server_trusted(const struct http_req *);
/* The reply comes later: at the next answer_waiting, or HTTP_FRESH_MS. */
void		 http_server_wait(struct http_req *);
/* Where the reply goes (status line, headers, body). */
struct evbuffer	*http_server_out(struct http_req *);
/*
 * Queues the reply: status line, headers, then the body unless HEAD. On
 * failure (memory) the connection closes without one.
 */
void		 http_server_reply(struct http_req *, int code,
		    const char *reason, const char *ctype, const char *body,
		    size_t len, const char *extra);
/* o (taken) as the JSON body; out of memory: a 500. */
void		 http_server_json(struct http_req *, int code,
		    const char *reason, json_t *o, const char *extra);
/* {"error": msg} */
void		 http_server_error(struct http_req *, int code,
		    const char *reason, const char *msg);

#endif
