/*
 * The agent port's listening sockets: every configured address bound (or
 * systemd's sockets taken for the shared port), each with the service it
 * is for; at a reload the ports whose address and service stay are kept,
 * the others closed and the new ones bound.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/sys/net.h"

#include "listener_impl.h"

#define LISTEN_BACKLOG		4096

static void
port_free(struct port *port)
{
	event_free(port->ev);
	close(port->fd);
	free(port);
}

/*
 * Accepts on fd, a bound socket (non-blocking, close-on-exec), for
 * service; listen(2) with backlog unless it is 0 (a socket systemd passed
 * listens already). The port owns fd from now on, failure included.
 */
static int
port_add(struct listener *l, evutil_socket_t fd, int service, int backlog,
    const char *what, const char *key)
{
	struct port		*port, **grown;

	/* Each port has its own allocation: its address is the callback's. */
	grown = realloc(l->ports, (l->nports + 1) * sizeof(*grown));
	if (grown == NULL || (port = calloc(1, sizeof(*port))) == NULL) {
		if (grown != NULL)
			l->ports = grown;
		log_errx("listen %s: out of memory", what);
		close(fd);
		return -1;
	}
	l->ports = grown;
	port->l = l;
	port->service = service;
	port->passed = key == NULL;
	port->wanted = true;
	snprintf(port->key, sizeof(port->key), "%s", key ? key : "");
	port->fd = fd;
	if ((backlog != 0 && listen(fd, backlog) == -1) ||
	    (port->ev = event_new(l->base, fd, EV_READ | EV_PERSIST,
	    listener_port_accept_cb, port)) == NULL) {
		log_err("listen %s", what);
		free(port);
		close(fd);
		return -1;
	}
	/* A port bound by a reload while paused waits for the resume. */
	if (!l->paused)
		event_add(port->ev, NULL);
	l->ports[l->nports++] = port;
	return 0;
}

struct bound_ctx {
	struct listener			*l;
	const struct config_listen	*cl;
	int				 service;
	char				 key[NAME_KEY_MAX];
};

/* A socket net_bind() bound: the listener accepts on it from now on. */
static int
attach_bound(int fd, const struct sockaddr *sa, void *arg)
{
	struct bound_ctx	*ctx = arg;
	char			 text[80];

	if (port_add(ctx->l, fd, ctx->service, LISTEN_BACKLOG,
	    ctx->cl->text, ctx->key) == -1)
		return -1;
	net_addr_text(sa, text, sizeof(text));
	log_notice("listening on %s", text);
	return 0;
}

/* "web\n*:9510": what a reload matches a port by. */
static void
port_key(char key[NAME_KEY_MAX], const char *service,
    const struct config_listen *cl)
{
	snprintf(key, NAME_KEY_MAX, "%s\n%s", service, cl->text);
}

/*
 * Binds every address of one list, for one service (or the shared port),
 * except those a port already serves (a reload: marked wanted instead).
 */
static int
listen_all(struct listener *l, const struct config_listens *ls, int service,
    const char *name, bool mark_only)
{
	struct bound_ctx	ctx;
	char			where[PATH_MAX + 96], section[96];
	size_t			i, k;
	bool			have;

	if (name[0] != '\0')
		snprintf(section, sizeof(section), "service %s", name);
	else
		snprintf(section, sizeof(section), "agent");
	net_where(where, sizeof(where), l->cfg->path, ls->line, section);
	for (i = 0; i < ls->count; i++) {
		ctx.l = l;
		ctx.cl = &ls->addr[i];
		ctx.service = service;
		port_key(ctx.key, name, &ls->addr[i]);
		for (k = 0, have = false; k < l->nports; k++) {
			if (!l->ports[k]->passed &&
			    strcmp(l->ports[k]->key, ctx.key) == 0) {
				l->ports[k]->wanted = true;
				l->ports[k]->service = service;
				have = true;
			}
		}
		if (!have && !mark_only &&
		    net_bind(&ls->addr[i], where, attach_bound, &ctx) == -1)
			return -1;
	}
	return 0;
}

/*
 * Accepts on sockets passed by systemd for the shared port. They keep the
 * backlog their socket unit gave them.
 */
static int
listen_passed(struct listener *l, const int *fds, size_t nfds)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	char			 text[80], what[32];
	size_t			 i;

	for (i = 0; i < nfds; i++) {
		snprintf(what, sizeof(what), "descriptor %d", fds[i]);
		if (port_add(l, fds[i], AGENT_SHARED_PORT, 0, what, NULL) == -1) {
			while (++i < nfds)
				close(fds[i]);
			return -1;
		}
		len = sizeof(ss);
		if (getsockname(fds[i], (struct sockaddr *)&ss, &len) == -1) {
			log_notice("listening on %s (socket activation)", what);
			continue;
		}
		net_addr_text((struct sockaddr *)&ss, text, sizeof(text));
		log_notice("listening on %s (socket activation)", text);
	}
	return 0;
}


/*
 * Binds every configured address, or takes fds (passed by systemd) for
 * the shared port; -1 (logged) on failure, the ports bound so far kept
 * for listener_free.
 */
int
listener_bind(struct listener *l, const int *fds, size_t nfds)
{
	const struct config	*cfg = l->cfg;
	size_t			 i;

	/* Passed sockets replace [agent] listen; services' ports still bind. */
	if (nfds > 0 ? listen_passed(l, fds, nfds) == -1 :
	    listen_all(l, &cfg->listen, AGENT_SHARED_PORT, "", false) == -1)
		return -1;
	/* Service i of the config is the agent's service i + 1. */
	for (i = 0; i < cfg->nservices; i++)
		if (listen_all(l, &cfg->services[i].listen, (int)i + 1,
		    cfg->services[i].name, false) == -1)
			return -1;
	if (l->nports == 0) {
		log_errx("no address to listen on");
		return -1;
	}
	return 0;
}

int
listener_reload(struct listener *l, const struct config *cfg)
{
	bool	passed = false, bind;
	size_t	i, k;
	int	rc = 0;

	for (i = 0; i < l->nports; i++) {
		l->ports[i]->wanted = l->ports[i]->passed;
		passed |= l->ports[i]->passed;
	}
	listener_remap_conns(l);
	l->cfg = cfg;
	/*
	 * First mark the ports that stay (with their service's new number),
	 * then close the others (an address may move to another service),
	 * then bind what is new; one that fails is logged, the rest go on.
	 */
	for (bind = false;; bind = true) {
		if (!passed && listen_all(l, &cfg->listen, AGENT_SHARED_PORT, "",
		    !bind) == -1)
			rc = -1;
		for (i = 0; i < cfg->nservices; i++)
			if (listen_all(l, &cfg->services[i].listen, (int)i + 1,
			    cfg->services[i].name, !bind) == -1)
				rc = -1;
		if (bind)
			break;
		for (i = 0, k = 0; i < l->nports; i++) {
			struct port *p = l->ports[i];

			if (p->wanted) {
				l->ports[k++] = p;
				continue;
			}
			log_notice("reload: no longer listening on %s",
			    strchr(p->key, '\n') + 1);
			port_free(p);
		}
		l->nports = k;
	}
	return rc;
}


/* Stops accepting: every listening socket closed. */
void
listener_close_ports(struct listener *l)
{
	size_t	i;

	for (i = 0; i < l->nports; i++)
		port_free(l->ports[i]);
	free(l->ports);
	l->ports = NULL;
	l->nports = 0;
}
