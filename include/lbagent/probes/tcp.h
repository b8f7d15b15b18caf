/* The tcp probe kind's one setting beyond its keys. */
#ifndef LBAGENT_PROBE_TCP_H
#define LBAGENT_PROBE_TCP_H

/*
 * The resolv.conf read (with /etc/hosts) when a probe first needs to
 * resolve a name; default /etc/resolv.conf. Tests point it at their own
 * resolver on loopback. Takes effect for probes that have not resolved yet.
 */
void	probe_tcp_resolv_conf(const char *path);

#endif
