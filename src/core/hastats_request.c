/*
 * What the load balancers are asked over the Runtime API (see
 * hastats_reader.h): the backends' servers, or one server of each. Pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/hastats_reader.h"

void
hastats_request(const char *const *backends, size_t nbackends, char *buf)
{
	static const char	all[] = "show stat;show servers state\n";
	size_t			i, len = 0;
	int			n;

	for (i = 0; i < 2 * nbackends; i++) {
		n = snprintf(buf + len, HASTATS_REQUEST_MAX - len, i < nbackends ?
		    "show stat %s 4 -1%s" : "show servers state %s%s",
		    backends[i % nbackends], i + 1 < 2 * nbackends ? ";" : "\n");
		if (n < 0 || (size_t)n >= HASTATS_REQUEST_MAX - len)
			break;
		len += (size_t)n;
	}
	if (nbackends == 0 || i < 2 * nbackends)
		memcpy(buf, all, sizeof(all));
}

/* A name the Runtime API takes as one word of "BE/SERVER" (HAProxy's own). */
static bool
cli_name(const char *s)
{
	return *s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == strlen(s);
}

int
hastats_request_own(const char *const *backends, const char *const *servers,
    const long *sids, size_t n, char *buf)
{
	size_t	i, len = 0;
	int	m;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (sids[i] < 0 || !cli_name(backends[i]) ||
		    !cli_name(servers[i]))
			return -1;
		m = snprintf(buf + len, HASTATS_REQUEST_MAX - len, "show stat "
		    "%s 4 %ld;get weight %s/%s%s", backends[i], sids[i],
		    backends[i], servers[i], i + 1 < n ? ";" : "\n");
		if (m < 0 || (size_t)m >= HASTATS_REQUEST_MAX - len)
			return -1;
		len += (size_t)m;
	}
	return 0;
}

int
hastats_table_own_request(const struct hastats_table *t,
    const char *const *backends, const char *const *servers, size_t n,
    char *buf)
{
	long			sids[HASTATS_OWN_MAX];
	struct hastats_row	row;
	const char		*why;
	size_t			i;

	if (t == NULL || n > HASTATS_OWN_MAX)
		return -1;
	for (i = 0; i < n; i++)
		sids[i] = hastats_table_find(t, backends[i], servers[i], &row,
		    &why) == 1 ? row.sid : -1;
	return hastats_request_own(backends, servers, sids, n, buf);
}

bool
hastats_table_has_all(const struct hastats_table *t,
    const char *const *backends, const char *const *servers, size_t n)
{
	struct hastats_row	row;
	const char		*why;
	size_t			i;

	for (i = 0; i < n; i++)
		if (hastats_table_find(t, backends[i], servers[i], &row,
		    &why) != 1)
			return false;
	return true;
}
