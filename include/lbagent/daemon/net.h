/* Listening sockets from configured addresses, for the agent and the API. */
#ifndef LBAGENT_NET_H
#define LBAGENT_NET_H

#include <sys/socket.h>

#include "lbagent/daemon/config.h"

/* Called with each bound (not yet listening) socket; 0, or -1 to stop. */
typedef int (*net_bound_fn)(int fd, const struct sockaddr *sa, void *arg);

/*
 * Binds every address cl stands for ('*': IPv4 and IPv6, each v6only;
 * IPv6 missing on the host is a notice, not an error), non-blocking and
 * close-on-exec, and hands each socket to fn, which owns it from then on.
 * -1 on failure, logged with cl's text.
 */
int	net_bind(const struct config_listen *cl, net_bound_fn fn, void *arg);

/* "127.0.0.1:9505", "[::1]:9505" for logs. */
void	net_addr_text(const struct sockaddr *sa, char *buf, size_t size);

#endif
