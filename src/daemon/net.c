/* Listening sockets from configured addresses. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/daemon/log.h"
#include "lbagent/daemon/net.h"

void
net_addr_text(const struct sockaddr *sa, char *buf, size_t size)
{
	char	host[NI_MAXHOST], port[NI_MAXSERV];
	socklen_t len = sa->sa_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	if (getnameinfo(sa, len, host, sizeof(host), port, sizeof(port),
	    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, size, "?");
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, size, "[%s]:%s", host, port);
	else
		snprintf(buf, size, "%s:%s", host, port);
}

/* Binds one address; 0 also when a wildcard's IPv6 is missing. */
static int
bind_one(const struct config_listen *cl, const struct addrinfo *ai,
    net_bound_fn fn, void *arg)
{
	bool	wildcard = cl->host[0] == '\0';
	int	fd, one = 1;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1) {
		if (wildcard && ai->ai_family == AF_INET6 &&
		    errno == EAFNOSUPPORT) {
			log_notice("listen %s: no IPv6 on this host; IPv4 only",
			    cl->text);
			return 0;
		}
		log_err("listen %s: socket", cl->text);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		if (wildcard && ai->ai_family == AF_INET6 &&
		    (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)) {
			log_notice("listen %s: no IPv6 on this host; IPv4 only",
			    cl->text);
			close(fd);
			return 0;
		}
		log_err("listen %s: bind", cl->text);
		close(fd);
		return -1;
	}
	return fn(fd, ai->ai_addr, arg);
}

int
net_bind(const struct config_listen *cl, net_bound_fn fn, void *arg)
{
	struct addrinfo	 hints, *res, *ai;
	int		 rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
	rc = getaddrinfo(cl->host[0] ? cl->host : NULL, cl->port, &hints, &res);
	if (rc != 0) {
		log_errx("listen %s: %s", cl->text, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (bind_one(cl, ai, fn, arg) == -1) {
			freeaddrinfo(res);
			return -1;
		}
	}
	freeaddrinfo(res);
	return 0;
}
