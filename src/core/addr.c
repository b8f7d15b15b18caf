/* Peer and load-balancer addresses: one reader for every form. */
#include <ctype.h>
#include <string.h>

#include "lbagent/core/addr.h"

#define TCP_USAGE	"tcp: expected tcp:ADDRESS:PORT or tcp:[IPv6]:PORT"

/* Decimal digits only, 1 to 65535 (leading zeros allowed); 0 otherwise. */
static unsigned
port_number(const char *s, size_t len)
{
	unsigned long	n = 0;
	size_t		i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		n = n * 10 + (unsigned long)(s[i] - '0');
		if (n > 65535)
			return 0;
	}
	return (unsigned)n;
}

static int
copy_host(struct addr *a, const char *s, size_t len)
{
	if (len == 0 || len >= sizeof(a->host))
		return -1;
	memcpy(a->host, s, len);
	a->host[len] = '\0';
	return 0;
}

/*
 * HOST:PORT, [IPv6]:PORT, and for URLs HOST or [IPv6] alone, in the len
 * bytes at s. Sets *bad_port when only the port is wrong.
 */
static int
host_port(struct addr *a, const char *s, size_t len, bool port_needed,
    bool *bad_port)
{
	const char	*end = s + len, *colon, *rb;

	*bad_port = false;
	if (len > 0 && *s == '[') {
		if ((rb = memchr(s, ']', len)) == NULL)
			return -1;
		if (rb + 1 != end && rb[1] != ':')
			return -1;
		colon = rb + 1 == end ? NULL : rb + 1;
		a->bracketed = true;
		if (copy_host(a, s + 1, (size_t)(rb - s - 1)) == -1)
			return -1;
	} else {
		for (colon = end; colon > s && colon[-1] != ':'; colon--)
			;
		colon = colon > s ? colon - 1 : NULL;
		/* IPv6 without brackets */
		if (colon != NULL &&
		    memchr(s, ':', (size_t)(colon - s)) != NULL)
			return -1;
		if (copy_host(a, s, (size_t)((colon != NULL ? colon : end) -
		    s)) == -1)
			return -1;
	}
	if (colon == NULL) {
		if (port_needed)
			return -1;
		return 0;
	}
	if ((size_t)(end - colon - 1) == 0 && !port_needed)
		return 0;	/* "http://host:/": no port */
	if ((a->port = port_number(colon + 1, (size_t)(end - colon - 1))) ==
	    0) {
		*bad_port = true;
		return -1;
	}
	return 0;
}

static int
parse_tcp(const char *s, struct addr *a, const char **why)
{
	const char	*colon;
	bool		 bad_port;

	a->kind = ADDR_TCP;
	*why = TCP_USAGE;
	if (*s != '[' && (colon = strrchr(s, ':')) != NULL &&
	    memchr(s, ':', (size_t)(colon - s)) != NULL) {
		*why = "tcp: write an IPv6 address in brackets: tcp:[::1]:PORT";
		return -1;
	}
	if (host_port(a, s, strlen(s), true, &bad_port) == -1) {
		if (bad_port)
			*why = "tcp: the port must be a number from 1 to 65535";
		return -1;
	}
	return 0;
}

static int
parse_url(const char *s, struct addr *a, const char **why)
{
	const char	*p = s, *auth, *end, *at = NULL, *q;
	size_t		 i;
	bool		 bad_port;

	*why = "expected scheme://HOST[:PORT][/PATH]";
	a->kind = ADDR_URL;
	if (!isalpha((unsigned char)*p))
		return -1;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' ||
	    *p == '.')
		p++;
	if (strncmp(p, "://", 3) != 0 || (size_t)(p - s) >= sizeof(a->scheme))
		return -1;
	for (i = 0; s + i < p; i++)
		a->scheme[i] = (char)tolower((unsigned char)s[i]);
	a->scheme[i] = '\0';
	auth = p + 3;
	end = auth + strcspn(auth, "/?#");
	/* The last '@' of the authority: a password may hold one. */
	for (q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	if (at != NULL) {
		a->userinfo = true;
		auth = at + 1;
	}
	if (strlen(end) >= sizeof(a->path)) {
		*why = "the URL is longer than 1023 bytes";
		return -1;
	}
	memcpy(a->path, end, strlen(end) + 1);
	if (host_port(a, auth, (size_t)(end - auth), false, &bad_port) == -1) {
		*why = bad_port ? "the port must be a number from 1 to 65535" :
		    "the URL has no host";
		return -1;
	}
	return 0;
}

int
addr_parse(const char *s, struct addr *a, const char **why)
{
	memset(a, 0, sizeof(*a));
	if (strncmp(s, "unix:", 5) == 0) {
		a->kind = ADDR_UNIX;
		if (s[5] != '/') {
			*why = "unix: needs an absolute path";
			return -1;
		}
		/* What a sockaddr_un holds. */
		if (strlen(s + 5) >= 108) {
			*why = "unix: the path is longer than 107 bytes";
			return -1;
		}
		memcpy(a->path, s + 5, strlen(s + 5) + 1);
		return 0;
	}
	if (strncmp(s, "tcp:", 4) == 0)
		return parse_tcp(s + 4, a, why);
	return parse_url(s, a, why);
}

bool
addr_host_loopback(const char *host)
{
	size_t	i;

	if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0)
		return true;
	if (strncmp(host, "127.", 4) != 0)
		return false;
	for (i = 0; host[i] != '\0'; i++)
		if (host[i] != '.' && !isdigit((unsigned char)host[i]))
			return false;
	return true;
}
