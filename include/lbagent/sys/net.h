/* Listening sockets from configured addresses, for the agent and the API. */
#ifndef LBAGENT_NET_H
#define LBAGENT_NET_H

#include <sys/socket.h>

#include "lbagent/core/settings.h"

/* Called with each bound (not yet listening) socket; 0, or -1 to stop. */
typedef int (*net_bound_fn)(int fd, const struct sockaddr *sa, void *arg);

/*
 * Binds every address cl stands for ('*': IPv4 and IPv6, each v6only;
 * IPv6 missing on the host is a notice, not an error), non-blocking and
 * close-on-exec, and hands each socket to fn, which owns it from then on.
 * -1 on failure, logged as "WHERE ADDR: why (what to do)", where from
 * net_where().
 */
int	net_bind(const struct config_listen *cl, const char *where,
	    net_bound_fn fn, void *arg);

/*
 * Where a listen address is set, for its errors: "FILE:LINE: listen", or
 * "FILE: [SECTION] listen (default)" when line is 0.
 */
void	net_where(char *buf, size_t size, const char *path, unsigned line,
	    const char *section);

/*
 * Why a bind failed with err, in words with what to do about it (port:
 * the one bound, for the command that shows who holds it).
 */
const char *net_bind_why(int err, const char *port, char *buf, size_t size);

/* "127.0.0.1:9505", "[::1]:9505" for logs. */
void	net_addr_text(const struct sockaddr *sa, char *buf, size_t size);

#endif
