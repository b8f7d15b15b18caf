/*
 * The postgres kind's host lists, as pure text work: which entries of
 * libpq's host list are names (resolved by the probe with evdns, so that
 * libpq never resolves one), and the host, hostaddr and port lists given
 * to libpq once the addresses are known. An address, a socket directory
 * or an empty entry is left to libpq, which resolves none of them.
 */
#ifndef LBAGENT_PG_HOSTS_H
#define LBAGENT_PG_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#define PG_HOSTS_MAX		16	/* entries of a host list */
#define PG_HOST_ADDRS_MAX	4	/* addresses tried per name */

struct pg_hosts {
	size_t	 n;
	char	*host[PG_HOSTS_MAX];
	char	*port[PG_HOSTS_MAX];	/* each entry's, when listed */
	bool	 name[PG_HOSTS_MAX];	/* to resolve */
	bool	 ports_listed;		/* one port per host, to repeat */
	bool	 any_name;
};

/* The lists libpq is given in place of the conninfo's. */
struct pg_host_lists {
	char	*host;
	char	*hostaddr;
	char	*port;		/* NULL: the conninfo's own stays */
};

/* An address, a socket directory or empty: nothing libpq resolves. */
bool	pg_host_numeric(const char *h, size_t len);
/*
 * Splits host (may be NULL: no entry) and port at their commas into h.
 * -1 with *why on too many entries or out of memory.
 */
int	pg_hosts_parse(struct pg_hosts *h, const char *host, const char *port,
	    const char **why);
void	pg_hosts_clear(struct pg_hosts *h);
/*
 * The lists for libpq: each name entry once per address of addrs[i] (up
 * to n_addrs[i], already numeric text), the other entries as they are with
 * an empty hostaddr. A name with no address is left out. -1 when no entry
 * is left (errno 0) or out of memory (errno ENOMEM).
 */
int	pg_hosts_join(const struct pg_hosts *h,
	    const char (*addrs)[PG_HOST_ADDRS_MAX][48], const size_t *n_addrs,
	    struct pg_host_lists *out);
void	pg_host_lists_clear(struct pg_host_lists *out);

#endif
