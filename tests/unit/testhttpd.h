/*
 * A small real HTTP/1.1 server for the unit tests: a thread accepting on
 * 127.0.0.1 or on a unix socket, one thread per connection, answering from
 * a table of routes that the test owns (and may change between runs).
 */
#ifndef LBAGENT_TESTHTTPD_H
#define LBAGENT_TESTHTTPD_H

#include <stddef.h>

enum th_mode {
	TH_ANSWER,	/* status line, headers, body, close */
	TH_SILENT,	/* read the request, never answer (until th_stop) */
	TH_CLOSE_MID,	/* promise twice the body, send half of it, close */
	TH_EMPTY,	/* read the request, close without a byte */
	TH_GARBAGE,	/* answer something that is not HTTP */
};

struct th_route {
	const char	*path;		/* request target; "*" any; NULL ends */
	enum th_mode	 mode;
	int		 status;
	const char	*body;		/* NULL: body_len bytes of 'x' */
	size_t		 body_len;	/* used when body is NULL */
	int		 delay_ms;	/* before answering */
	const char	*headers;	/* extra lines, each ending in "\r\n" */
};

struct th_server;

/* Serves routes (not copied: keep them alive) on 127.0.0.1:*port. */
struct th_server	*th_start_tcp(const struct th_route *routes, int *port);
/* Serves routes on a unix socket at path. */
struct th_server	*th_start_unix(const struct th_route *routes,
			    const char *path);
/* Stops answering, drops every connection, joins every thread. */
void			 th_stop(struct th_server *);

/* How many requests were read so far. */
unsigned		 th_requests(struct th_server *);
/* The last request's head (request line and headers); free it. */
char			*th_last_request(struct th_server *);

/* A TCP port on 127.0.0.1 where nobody listens (just closed). */
int			 th_closed_port(void);

#endif
