/* The postgres probe kind's one setting beyond its keys. */
#ifndef LBAGENT_PROBE_POSTGRES_H
#define LBAGENT_PROBE_POSTGRES_H

/*
 * The resolv.conf read (with /etc/hosts) when a probe first resolves a
 * host name; default /etc/resolv.conf. Unit tests point it at their own.
 */
void	probe_postgres_resolv_conf(const char *path);

#endif
