/*
 * The postgres kind's name resolution: each name of the host list asked
 * of evdns in turn, with the probe's own resolver (made on first need,
 * kept across runs in its pg_keep), then the lists of pg_hosts.h given
 * to pg_connect(), so that libpq resolves nothing and never blocks the
 * loop on a lookup.
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include "lbagent/probes/pg_hosts.h"
#include "lbagent/probes/postgres.h"
#include "lbagent/probes/probe.h"
#include "pg_kind.h"

static const char	*resolv_conf = "/etc/resolv.conf";

static void
keep_destroy_cb(evutil_socket_t fd, short what, void *arg)
{
	pg_keep_destroy(arg);
}

static void	pg_resolve_next(struct pg_run *);

/* The addresses of the name asked for are in (or not): the next one. */
static void
pg_resolved(struct pg_run *r, int err, struct evutil_addrinfo *res)
{
	struct evutil_addrinfo	*ai;
	const void		*a;
	size_t			 i = r->host_i, n = 0;

	for (ai = res; ai != NULL && n < PG_HOST_ADDRS_MAX; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			a = &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr;
		else if (ai->ai_family == AF_INET6)
			a = &((struct sockaddr_in6 *)(void *)
			    ai->ai_addr)->sin6_addr;
		else
			continue;
		if (evutil_inet_ntop(ai->ai_family, a, r->addrs[i][n],
		    sizeof(r->addrs[i][n])) != NULL)
			n++;
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	r->n_addrs[i] = n;
	if (n == 0 && r->resolve_host == NULL) {
		r->resolve_host = r->conf->hosts.host[i];
		r->resolve_err = err;
	}
	r->host_i++;
	pg_resolve_next(r);
}

static void
pg_dns_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct pg_run	*r = arg;
	struct pg_keep	*keep = r->keep;

	if (r->starting) {
		/* Answered at once (hosts file): the asker carries on. */
		r->answered = true;
		r->gai_err = err;
		r->ais = res;
		return;
	}
	r->req = NULL;
	keep->lookups--;
	if (r->run != NULL) {
		pg_resolved(r, err, res);
		return;
	}
	/* Cancelled: the run is gone, only this is left. */
	if (res != NULL)
		evutil_freeaddrinfo(res);
	free(r);
	if (keep->freed && keep->lookups == 0 &&
	    event_base_once(keep->base, -1, EV_TIMEOUT, keep_destroy_cb, keep,
	    NULL) == -1)
		pg_keep_destroy(keep);	/* not from inside evdns, unless we must */
}

/* Asks evdns for the next name of the host list; connects after the last. */
static void
pg_resolve_next(struct pg_run *r)
{
	const struct pg_hosts	*h = &r->conf->hosts;
	struct evutil_addrinfo	 hints, *res;
	struct pg_host_lists	 lists;

	while (r->host_i < h->n && !h->name[r->host_i])
		r->host_i++;
	if (r->host_i == h->n) {
		if (pg_hosts_join(h, (const char (*)[PG_HOST_ADDRS_MAX][48])
		    r->addrs, r->n_addrs, &lists) == -1) {
			if (errno == ENOMEM)
				pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
				    probe_errno_local(ENOMEM));
			else
				pg_finish(r, PROBE_CRIT, NAN, "cannot resolve "
				    "%s: %s", r->resolve_host, r->resolve_err
				    != 0 ? evutil_gai_strerror(r->resolve_err) :
				    "no address");
			return;
		}
		pg_connect(r, &lists);
		pg_host_lists_clear(&lists);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	r->starting = true;
	r->answered = false;
	r->gai_err = EVUTIL_EAI_FAIL;
	r->req = evdns_getaddrinfo(r->keep->dns, h->host[r->host_i], NULL,
	    &hints, pg_dns_cb, r);
	r->starting = false;
	if (r->req == NULL) {
		res = r->ais;
		r->ais = NULL;
		pg_resolved(r, r->answered ? r->gai_err : EVUTIL_EAI_FAIL, res);
		return;
	}
	r->keep->lookups++;
}

/* The names of the host list, with the probe's resolver. */
void
pg_resolve(struct pg_run *r)
{
	struct pg_keep	*keep;

	if ((keep = r->keep = pg_keep(r->run)) == NULL) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	if (keep->dns == NULL) {
		if ((keep->dns = evdns_base_new(keep->base,
		    EVDNS_BASE_DISABLE_WHEN_INACTIVE)) == NULL) {
			pg_finish(r, PROBE_UNKNOWN, NAN, "cannot set up the "
			    "resolver (%s)", probe_errno_local(ENOMEM));
			return;
		}
		/* Errors leave the hosts file and a loopback server. */
		(void)evdns_base_resolv_conf_parse(keep->dns, DNS_OPTIONS_ALL,
		    resolv_conf);
	}
	r->state = PG_RESOLVING;
	r->host_i = 0;
	pg_resolve_next(r);
}

void
probe_postgres_resolv_conf(const char *path)
{
	resolv_conf = path;
}
