/*
 * Addresses of the other nodes and of the load balancers ([peers] agents
 * and haproxy), read in one place: a URL's scheme, credentials, host,
 * port and path; a Unix socket's path; a TCP address and port. Pure: no
 * resolving, no I/O.
 */
#ifndef LBAGENT_ADDR_H
#define LBAGENT_ADDR_H

#include <stdbool.h>

enum addr_kind {
	ADDR_URL,	/* scheme://[userinfo@]host[:port][/path] */
	ADDR_UNIX,	/* unix:/absolute/path */
	ADDR_TCP,	/* tcp:ADDRESS:PORT or tcp:[IPv6]:PORT */
};

struct addr {
	enum addr_kind	kind;
	char		scheme[16];	/* ADDR_URL: lower case ("http") */
	bool		userinfo;	/* ADDR_URL: "user[:password]@" given */
	char		host[256];	/* ADDR_URL, ADDR_TCP: no brackets */
	bool		bracketed;	/* the host was written [like:this] */
	unsigned	port;		/* 1 to 65535; 0: the URL gives none */
	char		path[1024];	/* ADDR_UNIX: the socket; ADDR_URL: from
					   the first '/', '?' or '#', or "" */
};

/*
 * Reads s. 0, or -1 with *why (static text fit to follow "KEY: ") when it
 * is none of the three forms. A URL's scheme is any; whether a host of a
 * tcp: address is numeric is the caller's to check.
 */
int	addr_parse(const char *s, struct addr *a, const char **why);

/*
 * Whether host (without brackets) is this machine's loopback: localhost,
 * ::1, or a numeric 127.0.0.0/8 address (a name may be anywhere).
 */
bool	addr_host_loopback(const char *host);

#endif
