/*
 * The HTTP API server's own parts, shared by its files: http_server.c
 * (connections, accept, the share, replies), http_server_parse.c (the
 * request head) and http_server_listen.c (the listening sockets).
 */
#ifndef LBAGENT_HTTP_SERVER_IMPL_H
#define LBAGENT_HTTP_SERVER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "lbagent/core/bucket.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/http_server.h"

#define HTTP_BACKLOG		64
#define HTTP_DRAIN_MAX		(64 * 1024)	/* read after the reply, at most */
#define HTTP_RESUME_AFTER_MS	100		/* after running out of descriptors */
#define HTTP_MIN_CONNECTIONS	4		/* however low the descriptor limit */
#define HTTP_KEY_MAX		(sizeof("unix:") + 108)
#define HTTP_ACCEPT_BATCH	16		/* per turn of the loop */
#define HTTP_ADDR_KEY		17		/* family and IPv6 bytes */
/* [http] max_rate's burst: a quarter of a second's connections at once. */
#define HTTP_RATE_BURST_DIV	4

enum conn_state {
	CONN_REQUEST,	/* reading the request line and headers */
	CONN_FRESH,	/* the detail waits for the peers' round in flight */
	CONN_REPLY,	/* writing the reply */
	CONN_DRAIN,	/* reply written, write side shut: reading to EOF */
};

/* One listening socket. */
struct http_sock {
	struct http_server		*srv;
	struct event		*ev;		/* the listening socket's */
	evutil_socket_t		 fd;
	bool			 trusted;	/* unix: the detail for every caller */
	bool			 passed;	/* by systemd: kept across reloads */
	bool			 wanted;	/* during a reload */
	char			 key[HTTP_KEY_MAX];	/* what a reload matches */
	char			*path;		/* our unix socket: unlinked at close */
};

struct http_conn {
	struct http_conn	*prev, *next;	/* http_server::conns */
	struct http_server		*srv;
	evutil_socket_t		 fd;
	struct event		 ev;
	enum conn_state		 state;
	bool			 trusted;
	bool			 head;		/* CONN_FRESH: a HEAD request */
	unsigned char		 addr[HTTP_ADDR_KEY];	/* its share's */
	int64_t			 deadline_ms;
	size_t			 inlen, scanned, drained;
	struct evbuffer		*out;
	char			 in[HTTP_MAX_HEADERS_BYTES + 1];
};

struct http_server {
	struct event_base		*base;
	struct http_server_hooks	 hooks;
	uint64_t			 max_conns;	/* [http] max_connections */
	uint64_t			 per_address;	/* [http] per_address; 0:
							   the cap's share */
	uint64_t			 agent_conns;	/* [agent] max_connections */
	struct http_sock		**socks;
	size_t				 nsocks;
	struct http_conn		*conns;
	size_t				 nconns;
	bool				 paused;
	bool				 starved;	/* out of descriptors; logged once */
	struct event			*resume_ev;
	struct log_limit		 accept_limit;
	struct log_limit		 share_limit;	/* addresses over their share */
	uint64_t			 refused;	/* by the share, since start */
	struct bucket			 rate;		/* [http] max_rate, TCP */
	bool				 rate_paused;	/* TCP waits for the rate */
	struct event			*rate_ev;	/* its end */
	struct log_limit		 rate_limit;
	uint64_t			 rate_waits;	/* since start */
};

/* http_server.c */
/*
 * Accepts on fd, a listening socket (bound, and listening when backlog is
 * 0). The server owns fd from now on, failure included, and path (a unix
 * socket to unlink at close) too. key: what a reload matches ("" passed).
 */
int	http_server_sock_add(struct http_server *, int fd, int backlog,
	    bool trusted, const char *key, char *path);
void	http_server_sock_drain(struct http_sock *);
void	http_server_sock_free(struct http_sock *);
/* Accepting again, unless a pause for descriptors runs. */
void	http_server_resume(struct http_server *);

/* http_server_listen.c */
/*
 * Each listening socket accepting or not as the server is: none while it
 * pauses (descriptors, capacity), no TCP one while the rate waits.
 */
void	http_server_socks_sync(struct http_server *);
/* Whether sock may accept one more now ([http] max_rate; unix: always). */
bool	http_server_rate_allows(struct http_sock *);
/* sock accepted one: counted against the rate (TCP). */
void	http_server_rate_took(struct http_sock *);
/* Past the rate: TCP sockets stop accepting until it allows one again. */
void	http_server_rate_pause(struct http_server *);
void	http_server_rate_cb(evutil_socket_t, short, void *);

/* http_server_parse.c */
/*
 * Parses the head (the first len bytes of c->in, ending in an empty line)
 * and queues the reply (the route hook's). A body is never needed: it is
 * read and dropped after the reply, as is anything else the client sends.
 */
void	http_server_parse(struct http_conn *, size_t len);

#endif
