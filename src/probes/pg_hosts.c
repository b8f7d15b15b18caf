/* The postgres kind's host lists (see pg_hosts.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/probes/pg_hosts.h"

bool
pg_host_numeric(const char *h, size_t len)
{
	char		buf[256];
	unsigned char	a[16];

	if (len == 0 || h[0] == '/' || h[0] == '@')
		return true;
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, h, len);
	buf[len] = '\0';
	return inet_pton(AF_INET, buf, a) == 1 ||
	    inet_pton(AF_INET6, buf, a) == 1;
}

void
pg_hosts_clear(struct pg_hosts *h)
{
	size_t	i;

	for (i = 0; i < PG_HOSTS_MAX; i++) {
		free(h->host[i]);
		free(h->port[i]);
	}
	memset(h, 0, sizeof(*h));
}

/* The comma-separated entries of s into v; their count, or -1. */
static int
split(const char *s, char **v, const char **why)
{
	const char	*end;
	size_t		 n = 0;

	for (;; s = end + 1) {
		end = s + strcspn(s, ",");
		if (n == PG_HOSTS_MAX) {
			*why = "conninfo: more than 16 hosts";
			return -1;
		}
		if ((v[n++] = strndup(s, (size_t)(end - s))) == NULL) {
			*why = "out of memory";
			return -1;
		}
		if (*end == '\0')
			return (int)n;
	}
}

int
pg_hosts_parse(struct pg_hosts *h, const char *host, const char *port,
    const char **why)
{
	char	*ports[PG_HOSTS_MAX] = { NULL };
	int	 n, np = 0, i;

	pg_hosts_clear(h);
	if (host == NULL || host[0] == '\0')
		return 0;
	if ((n = split(host, h->host, why)) == -1 ||
	    (port != NULL && port[0] != '\0' &&
	    (np = split(port, ports, why)) == -1)) {
		for (i = 0; i < PG_HOSTS_MAX; i++)
			free(ports[i]);
		pg_hosts_clear(h);
		return -1;
	}
	h->n = (size_t)n;
	/* One port for all, or one each; libpq judges any other count. */
	h->ports_listed = np > 1 && np == n;
	for (i = 0; i < PG_HOSTS_MAX; i++) {
		if (h->ports_listed)
			h->port[i] = ports[i];
		else
			free(ports[i]);
	}
	for (i = 0; i < n; i++) {
		h->name[i] = !pg_host_numeric(h->host[i], strlen(h->host[i]));
		h->any_name |= h->name[i];
	}
	return 0;
}

/* Appends ",s" (or "s" first) to *dst of *len. */
static int
append(char **dst, size_t *len, bool first, const char *s)
{
	size_t	n = strlen(s);
	char	*p;

	if ((p = realloc(*dst, *len + n + 2)) == NULL)
		return -1;
	*dst = p;
	if (!first)
		p[(*len)++] = ',';
	memcpy(p + *len, s, n);
	*len += n;
	p[*len] = '\0';
	return 0;
}

void
pg_host_lists_clear(struct pg_host_lists *out)
{
	free(out->host);
	free(out->hostaddr);
	free(out->port);
	memset(out, 0, sizeof(*out));
}

int
pg_hosts_join(const struct pg_hosts *h,
    const char (*addrs)[PG_HOST_ADDRS_MAX][48], const size_t *n_addrs,
    struct pg_host_lists *out)
{
	size_t	i, j, n, lh = 0, la = 0, lp = 0, k = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < h->n; i++) {
		n = h->name[i] ? n_addrs[i] : 1;
		if (n > PG_HOST_ADDRS_MAX)
			n = PG_HOST_ADDRS_MAX;
		for (j = 0; j < n; j++, k++) {
			if (append(&out->host, &lh, k == 0, h->host[i]) == -1 ||
			    append(&out->hostaddr, &la, k == 0, h->name[i] ?
			    addrs[i][j] : "") == -1 ||
			    (h->ports_listed && append(&out->port, &lp, k == 0,
			    h->port[i]) == -1)) {
				pg_host_lists_clear(out);
				errno = ENOMEM;
				return -1;
			}
		}
	}
	if (k == 0) {
		errno = 0;
		return -1;
	}
	return 0;
}
