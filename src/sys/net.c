/* Listening sockets from configured addresses. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/sys/log.h"
#include "lbagent/sys/net.h"

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

void
net_where(char *buf, size_t size, const char *path, unsigned line,
    const char *section)
{
	if (line > 0)
		snprintf(buf, size, "%s:%u: listen", path, line);
	else
		snprintf(buf, size, "%s: [%s] listen (default)", path, section);
}

const char *
net_bind_why(int err, const char *port, char *buf, size_t size)
{
	switch (err) {
	case EADDRINUSE:
		snprintf(buf, size, "address already in use (is another "
		    "lbagent running? ss -ltnp 'sport = %s')", port);
		break;
	case EACCES:
		if (strtoul(port, NULL, 10) < 1024)
			snprintf(buf, size, "permission denied (a port below "
			    "1024 needs root or CAP_NET_BIND_SERVICE)");
		else
			snprintf(buf, size, "permission denied (a security "
			    "policy refuses it)");
		break;
	case EADDRNOTAVAIL:
		snprintf(buf, size, "address not available (it is not an "
		    "address of this host: ip -br addr)");
		break;
	default:
		snprintf(buf, size, "%s", strerror(err));
		break;
	}
	return buf;
}

/* Binds one address; 0 also when a wildcard's IPv6 is missing. */
static int
bind_one(const struct config_listen *cl, const char *where,
    const struct addrinfo *ai, net_bound_fn fn, void *arg)
{
	bool	wildcard = cl->host[0] == '\0';
	int	fd, one = 1, err;
	char	why[160];

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1) {
		if (wildcard && ai->ai_family == AF_INET6 &&
		    errno == EAFNOSUPPORT) {
			log_notice("listen %s: no IPv6 on this host; IPv4 only",
			    cl->text);
			return 0;
		}
		log_err("%s %s: socket", where, cl->text);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		err = errno;
		close(fd);
		if (wildcard && ai->ai_family == AF_INET6 &&
		    (err == EADDRNOTAVAIL || err == EAFNOSUPPORT)) {
			log_notice("listen %s: no IPv6 on this host; IPv4 only",
			    cl->text);
			return 0;
		}
		log_errx("%s %s: %s", where, cl->text,
		    net_bind_why(err, cl->port, why, sizeof(why)));
		return -1;
	}
	return fn(fd, ai->ai_addr, arg);
}

int
net_bind(const struct config_listen *cl, const char *where, net_bound_fn fn,
    void *arg)
{
	struct addrinfo	 hints, *res, *ai;
	int		 rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
	rc = getaddrinfo(cl->host[0] ? cl->host : NULL, cl->port, &hints, &res);
	if (rc != 0) {
		log_errx("%s %s: %s", where, cl->text, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (bind_one(cl, where, ai, fn, arg) == -1) {
			freeaddrinfo(res);
			return -1;
		}
	}
	freeaddrinfo(res);
	return 0;
}
