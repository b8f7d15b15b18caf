/*
 * The agent port. Each connection is a small state machine driven by one
 * event: read the request (agent-send) if one is coming, write the reply
 * and our FIN (in one segment), then read until the peer closes, so that
 * we never close with unread input (the kernel would answer it with a
 * reset that can cost HAProxy the reply). Everything is bounded: bytes,
 * time, connections, and the accepts of one turn of the loop.
 *
 * This file: a connection's life, from the accept to the close, and the
 * listener's own. listener_share.c counts each address's connections and
 * cuts holds near capacity; listener_bind.c owns the listening sockets.
 */
#include <arpa/inet.h>
#include <errno.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "lbagent/sys/clock.h"

#include "listener_impl.h"

#define RESUME_AFTER_MS		100	/* after running out of descriptors */
#define ACCEPT_BATCH		16	/* connections accepted per port a turn */
/* After a burst: what it took is given back (trim_cb). */
#define TRIM_PEAK_MIN		256	/* connections open at once */
#define TRIM_AFTER_MS		1000	/* once fewer than a quarter remain */

enum io_result { IO_DONE, IO_AGAIN, IO_CLOSED };

static void	conn_cb(evutil_socket_t, short, void *);

void
listener_pause(struct listener *l)
{
	size_t	i;

	if (l->paused)
		return;
	for (i = 0; i < l->nports; i++)
		event_del(l->ports[i]->ev);
	l->paused = true;
}

void
listener_resume(struct listener *l)
{
	size_t	i;

	if (!l->paused || l->nconns >= l->cfg->max_connections)
		return;
	for (i = 0; i < l->nports; i++)
		event_add(l->ports[i]->ev, NULL);
	l->paused = false;
}

static void
conn_close(struct conn *c)
{
	struct listener	*l = c->l;

	event_del(&c->ev);
	event_del(&c->timer);
	event_del(&c->cap);
	evutil_closesocket(c->fd);
	if (c->src != NULL && --c->src->nconns == 0)
		listener_source_drop(l, c->src);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	l->nconns--;
	if (l->nconns * LISTENER_PRESSED_DEN <
	    l->cfg->max_connections * LISTENER_PRESSED_NUM)
		l->pressed = false;
	slab_free(&l->slabs, c);
	if (l->peak >= TRIM_PEAK_MIN && l->nconns < l->peak / 4 &&
	    l->trim_ev != NULL && !event_pending(l->trim_ev, EV_TIMEOUT, NULL)) {
		struct timeval tv = { TRIM_AFTER_MS / 1000,
		    TRIM_AFTER_MS % 1000 * 1000 };

		event_add(l->trim_ev, &tv);
	}
	if (!event_pending(l->resume_ev, EV_TIMEOUT, NULL))
		listener_resume(l);
}

static void
ms_tv(int64_t ms, struct timeval *tv)
{
	if (ms < 0)
		ms = 0;
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

/*
 * The timeval to add a timer of one of the fixed lengths with (a hold, a
 * request wait): libevent's common timeout for it, which queues the
 * timers of one length in the order they were added, O(1) each, instead
 * of in the heap every other timer shares; with thousands of connections
 * waiting, sifting through that heap was the loop's own largest cost
 * (docs/benchmarks.md). Lengths beyond the table use tv, in the heap.
 */
const struct timeval *
listener_fixed_tv(struct listener *l, int ms, struct timeval *tv)
{
	const struct timeval	*common;
	size_t			 i;

	for (i = 0; i < l->ncommon; i++)
		if (l->common[i].ms == ms)
			return l->common[i].tv;
	ms_tv(ms, tv);
	if (l->ncommon == COMMON_TIMEOUTS ||
	    (common = event_base_init_common_timeout(l->base, tv)) == NULL)
		return tv;
	l->common[l->ncommon].ms = ms;
	l->common[l->ncommon++].tv = common;
	return common;
}

/*
 * Waits for `what` on the connection, until its deadline at most. The
 * I/O event has no timeout of its own and persists, so it stays in the
 * epoll set until the connection closes; the deadline is a timer beside
 * it (cap), added once, at the first wait, for the hold the connection
 * got when accepted, and a request wait a second one (timer). A timeout
 * on the I/O event itself would cost two epoll_ctl each time it fires
 * (libevent takes the descriptor out of the set, then puts it back); a
 * timer costs no system call. Every callback ends here or in conn_close.
 */
static void
conn_wait(struct conn *c, short what)
{
	struct timeval	tv;

	if (c->waiting != what) {
		event_del(&c->ev);
		event_assign(&c->ev, c->l->base, c->fd, what | EV_PERSIST,
		    conn_cb, c);
		event_add(&c->ev, NULL);
		c->waiting = what;
	}
	if (!c->capped) {
		event_add(&c->cap, listener_fixed_tv(c->l, c->hold_ms, &tv));
		c->capped = true;
	}
}

/* Waits for request text for wait_ms, a fixed length (fixed_tv). */
static void
conn_wait_request(struct conn *c, int wait_ms)
{
	struct timeval	tv;

	conn_wait(c, EV_READ);
	event_add(&c->timer, listener_fixed_tv(c->l, wait_ms, &tv));
}

/* Reads request bytes until a newline, the limit, EOF or EAGAIN. */
static enum io_result
conn_read_request(struct conn *c)
{
	ssize_t	n;

	while (c->reqlen < sizeof(c->req)) {
		n = recv(c->fd, c->req + c->reqlen, sizeof(c->req) - c->reqlen, 0);
		if (n > 0) {
			if (memchr(c->req + c->reqlen, '\n', (size_t)n) != NULL) {
				c->reqlen += (size_t)n;
				return IO_DONE;
			}
			c->reqlen += (size_t)n;
			continue;
		}
		if (n == 0)
			return IO_DONE;		/* sent what it had, then shut */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return IO_AGAIN;
		return IO_CLOSED;		/* reset: nobody to answer */
	}
	return IO_DONE;
}

/* The request's first line, without its line ending: the key's text. */
static size_t
request_text_len(const char *req, size_t len)
{
	const char	*nl = memchr(req, '\n', len);

	if (nl != NULL)
		len = (size_t)(nl - req);
	if (len > 0 && req[len - 1] == '\r')
		len--;
	return len;
}

static void
conn_enter_drain(struct conn *c)
{
	/* Sends the reply and our FIN, which tells a reader it is complete. */
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_DRAIN;
	conn_wait(c, EV_READ);
}

/*
 * Whether the reply can be followed by close() at once instead of reading
 * until the peer closes. Only when nothing can still arrive and nothing
 * hangs on where the reply went: nothing was sent, the address is known
 * and has never sent agent-send text (quiet_addr, decided in accept_conn
 * where that was looked up already), and the reply neither claims nor
 * restores anything (a late request text would otherwise have to move
 * that bookkeeping to its own key). This is HAProxy without agent-send
 * while the node is up, the common case, at the cost of a bare
 * accept/write/close loop.
 */
static bool
conn_may_close_now(const struct conn *c)
{
	return c->quiet_addr && !c->ck.created && c->ck.carried == 0 &&
	    c->ck.restore == 0;
}

/*
 * Writes the reply, held back (MSG_MORE) until the shutdown after it sends
 * it with our FIN in one segment: a packet and its acknowledgement fewer
 * for the load balancer and for us at every check (on loopback, the CPU
 * that sends a segment also delivers it).
 */
static void
conn_write(struct conn *c)
{
	ssize_t	n;

	while (c->outoff < c->outlen) {
		n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
		    MSG_NOSIGNAL | MSG_DONTWAIT | MSG_MORE);
		if (n >= 0) {
			c->outoff += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			c->state = CONN_REPLY;
			conn_wait(c, EV_WRITE);
			return;
		}
		conn_close(c);		/* reset or gone: nothing to finish */
		return;
	}
	if (conn_may_close_now(c)) {
		/*
		 * The shutdown sends the reply; close() alone would, should
		 * text have come after all, reset the connection and drop
		 * the reply still held back.
		 */
		shutdown(c->fd, SHUT_WR);
		conn_close(c);
		return;
	}
	conn_enter_drain(c);
}

static void
conn_reply(struct conn *c)
{
	size_t	len = request_text_len(c->req, c->reqlen);

	event_del(&c->timer);		/* the request wait is over */
	c->replied_early = c->reqlen == 0;
	c->service = agent_select(c->l->agent, c->port, c->req, len);
	c->outlen = agent_reply(c->l->agent, c->service, c->addr, c->req, len,
	    c->out, &c->ck);
	c->outoff = 0;
	conn_write(c);
}

/*
 * Reads what comes after the reply. Text that arrives after an early
 * reply is the request we did not wait for: it tells the key.
 */
static void
conn_drain(struct conn *c)
{
	char	buf[4096];
	ssize_t	n;
	size_t	take;

	for (;;) {
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN &&
		    errno != EWOULDBLOCK)) {
			/* Late text without a newline ends with the connection. */
			if (c->replied_early && !c->late_done && c->reqlen > 0)
				agent_late_text(c->l->agent, c->service,
				    c->addr, c->req,
				    request_text_len(c->req, c->reqlen), &c->ck);
			conn_close(c);
			return;
		}
		if (n == -1) {
			if (errno == EINTR)
				continue;
			conn_wait(c, EV_READ);
			return;
		}
		if (c->replied_early && !c->late_done) {
			take = sizeof(c->req) - c->reqlen;
			if (take > (size_t)n)
				take = (size_t)n;
			memcpy(c->req + c->reqlen, buf, take);
			c->reqlen += take;
			if (memchr(c->req, '\n', c->reqlen) != NULL ||
			    c->reqlen == sizeof(c->req)) {
				c->late_done = true;
				agent_late_text(c->l->agent, c->service,
				    c->addr, c->req,
				    request_text_len(c->req, c->reqlen), &c->ck);
			}
		}
		c->drained += (size_t)n;
		if (c->drained > LISTENER_DRAIN_MAX) {
			conn_close(c);
			return;
		}
	}
}

/* Whether the text chooses the service on the port: agent_select(). */
bool
listener_text_chooses(const struct listener *l, int port)
{
	return port == AGENT_SHARED_PORT && agent_nservices(l->agent) > 1;
}

/*
 * The request wait is over and the line is not complete (no newline, no
 * EOF). Without the pressure cut the wait was the whole of it (250 ms, or
 * request_timeout for a name): what came is all the load balancer sends
 * (an agent-send without "\n") and is answered. Under the cut the wait
 * was shorter, and where the text chooses the service the default
 * service's word is right only when the load balancer sends no text at
 * all: so only an address known to send none gets it for nothing, and
 * part of a line, or nothing from any other address, is closed
 * unanswered. A wrong word would be acted on; a closed connection changes
 * nothing in HAProxy, and the next check asks again.
 */
static bool
conn_mute(const struct conn *c)
{
	if (!c->pressed || !listener_text_chooses(c->l, c->port))
		return false;
	return c->reqlen > 0 || !c->sends_none;
}

static void
conn_close_muted(struct conn *c)
{
	struct listener	*l = c->l;

	l->muted++;
	log_limited(&l->muted_log, LOG_NOTICE, "agent port: a check from %s "
	    "closed unanswered under the pressure cut: %s agent-send line when "
	    "the wait for it ended (%llu so far)", c->addr,
	    c->reqlen > 0 ? "part of an" : "no", (unsigned long long)l->muted);
	conn_close(c);
}

static void
conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	switch (c->state) {
	case CONN_REQUEST:
		/*
		 * A timeout here is the request wait's end; what is waiting
		 * in the socket is read first all the same.
		 */
		switch (conn_read_request(c)) {
		case IO_CLOSED:
			conn_close(c);
			return;
		case IO_AGAIN:
			/* Its timer still runs. */
			if ((what & EV_READ) &&
			    clock_now_ms() < c->request_until_ms)
				return;
			if (conn_mute(c)) {
				conn_close_muted(c);
				return;
			}
			break;
		case IO_DONE:
			break;
		}
		conn_reply(c);
		return;
	case CONN_REPLY:
		conn_write(c);
		return;
	case CONN_DRAIN:
		conn_drain(c);
		return;
	}
}

/* The deadline: closed, answered or not. */
static void
cap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_close(arg);
}

/* Dotted quad without printf: this runs for every check. */
static void
format_ipv4(const unsigned char *a, char buf[LBKEY_ADDR_MAX])
{
	char	*p = buf;
	int	 i;

	for (i = 0; i < 4; i++) {
		unsigned v = a[i];

		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		*p++ = i < 3 ? '.' : '\0';
	}
}

/* The peer's address as text; IPv4-mapped IPv6 reads as IPv4. */
static void
format_addr(const struct sockaddr *sa, char buf[LBKEY_ADDR_MAX])
{
	const struct sockaddr_in6	*s6 = (const void *)sa;
	const struct sockaddr_in	*s4 = (const void *)sa;

	buf[0] = '\0';
	if (sa->sa_family == AF_INET)
		format_ipv4((const unsigned char *)&s4->sin_addr, buf);
	else if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		format_ipv4(&s6->sin6_addr.s6_addr[12], buf);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, LBKEY_ADDR_MAX);
	if (buf[0] == '\0')
		snprintf(buf, LBKEY_ADDR_MAX, "unknown");
}

/*
 * A new connection's state, counted (src) and linked in, its hold chosen;
 * NULL, fd closed, out of memory.
 */
static struct conn *
conn_new(struct port *port, evutil_socket_t fd, struct source *src,
    const char addr[LBKEY_ADDR_MAX], int64_t now)
{
	struct listener	*l = port->l;
	struct conn	*c;
	bool		 pressed;

	if ((c = slab_alloc(&l->slabs)) == NULL) {
		evutil_closesocket(fd);
		if (src != NULL && src->nconns == 0)
			listener_source_drop(l, src);
		return NULL;
	}
	/* Only the state before the buffers needs to start at zero. */
	memset(c, 0, offsetof(struct conn, req));
	c->l = l;
	if ((c->src = src) != NULL)
		src->nconns++;
	c->port = port->service;
	c->fd = fd;
	pressed = listener_pressed_accept(l, now);
	c->hold_ms = pressed ? LISTENER_PRESSED_DEADLINE_MS :
	    LISTENER_DEADLINE_MS;
	c->deadline_ms = now + c->hold_ms;
	c->pressed = pressed;
	c->state = CONN_REQUEST;
	memcpy(c->addr, addr, sizeof(c->addr));
	/* Looked up once: press() and conn_mute ask again for thousands. */
	c->sends_none = listener_text_chooses(l, c->port) &&
	    agent_addr_quiet(l->agent, addr);
	/* Assigned, not added: conn_wait adds them (and conn_close deletes). */
	event_assign(&c->ev, l->base, fd, EV_READ | EV_PERSIST, conn_cb, c);
	evtimer_assign(&c->timer, l->base, conn_cb, c);
	evtimer_assign(&c->cap, l->base, cap_cb, c);
	c->next = l->conns;
	if (l->conns != NULL)
		l->conns->prev = c;
	l->conns = c;
	if (++l->nconns >= l->cfg->max_connections)
		listener_pause(l);
	if (l->nconns > l->peak)
		l->peak = l->nconns;
	return c;
}

/* A new connection's first read: answered at once, or waited on. */
static void
conn_start(struct conn *c, int64_t now)
{
	struct listener	*l = c->l;
	int		 wait_ms;

	switch (conn_read_request(c)) {
	case IO_CLOSED:
		conn_close(c);
		return;
	case IO_DONE:
		conn_reply(c);
		return;
	case IO_AGAIN:
		break;
	}
	/*
	 * Nothing complete yet. On a port shared by several services the
	 * name decides the answer: wait for it. Otherwise wait briefly only
	 * when text is coming (part of it is here, or this address has sent
	 * text before); else answer now, and text that still comes is read
	 * after the reply.
	 */
	if (agent_wants_name(l->agent, c->port)) {
		/* 10 ms to 2 s (config.c); at 2 s the cap closes it first. */
		wait_ms = c->pressed ? listener_pressed_wait_ms(l, c) :
		    (int)l->cfg->request_timeout_ms;
		c->request_until_ms = now + wait_ms;
		conn_wait_request(c, wait_ms);
		return;
	}
	if (c->reqlen > 0 || agent_addr_sends_text(l->agent, c->addr)) {
		wait_ms = c->pressed ? listener_pressed_wait_ms(l, c) :
		    LISTENER_REQUEST_WAIT_MS;
		c->request_until_ms = now + wait_ms;
		conn_wait_request(c, wait_ms);
		return;
	}
	c->quiet_addr = true;
	conn_reply(c);
}

/* One accepted connection: refused, answered at once, or waited on. */
static void
accept_conn(struct port *port, evutil_socket_t fd, const struct sockaddr *sa)
{
	struct listener	*l = port->l;
	struct conn	*c;
	struct source	*src;
	char		 addr[LBKEY_ADDR_MAX];
	int64_t		 now = clock_now_ms();

	if (l->starved) {
		log_notice("accepting again (%zu connections open)", l->nconns);
		l->starved = false;
	}
	format_addr(sa, addr);
	if (!listener_source_admit(l, fd, addr, &src))
		return;
	if ((c = conn_new(port, fd, src, addr, now)) != NULL)
		conn_start(c, now);
}

/*
 * A burst is over (fewer than a quarter of its peak still open): what it
 * took goes back to the kernel. The conns' empty slabs are unmapped as
 * they empty already, but for the one kept for reuse; malloc keeps what
 * was freed to it (the addresses' counts, the replies' bookkeeping,
 * libevent's) until asked to trim.
 */
static void
trim_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listener	*l = arg;

	(void)fd;
	(void)what;
	slab_pool_trim(&l->slabs);
#ifdef HAVE_MALLOC_TRIM
	malloc_trim(0);
#endif
	l->peak = l->nconns;
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	listener_resume(arg);
}

static void
accept_error(struct listener *l, int err)
{
	struct timeval	 tv = { 0, RESUME_AFTER_MS * 1000 };

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Pause instead of spinning on a listener we cannot serve. */
		if (!l->starved)
			log_warnx("accept: %s (%zu connections open): pausing, "
			    "retrying every %d ms", strerror(err), l->nconns,
			    RESUME_AFTER_MS);
		l->starved = true;
		listener_pause(l);
		event_add(l->resume_ev, &tv);
		return;
	}
	log_warnx("accept: %s", strerror(err));
}

/*
 * A listening socket is readable: accept what is queued, ACCEPT_BATCH at
 * most, and leave the rest to the next turn of the loop (the event is
 * level-triggered), as HAProxy's tune.maxaccept does. Under a steady
 * stream of checks the queue never empties: accepting until it did held
 * back every open connection's timers and closes for tens of ms, until
 * they came due all at once (scripts/bench --full, with idle connections).
 */
void
listener_port_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct port		*port = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	int			 i, cfd;

	(void)what;
	for (i = 0; i < ACCEPT_BATCH && !port->l->paused; i++) {
		len = sizeof(ss);
		cfd = accept4(fd, (struct sockaddr *)&ss, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			accept_conn(port, cfd, (struct sockaddr *)&ss);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			accept_error(port->l, errno);
		return;
	}
}

struct listener *
listener_new(struct event_base *base, const struct config *cfg,
    struct agent *agent, const int *fds, size_t nfds)
{
	struct listener	*l;
	size_t		 i;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return NULL;
	}
	l->base = base;
	l->cfg = cfg;
	l->agent = agent;
	l->refused_log = (struct log_limit)LOG_LIMIT_INIT(0);
	l->muted_log = (struct log_limit)LOG_LIMIT_INIT(0);
	slab_pool_init(&l->slabs, sizeof(struct conn));
	if ((l->resume_ev = evtimer_new(base, resume_cb, l)) == NULL ||
	    (l->trim_ev = evtimer_new(base, trim_cb, l)) == NULL) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		goto fail;
	}
	if (listener_bind(l, fds, nfds) == -1)
		goto fail;
	return l;
fail:
	listener_free(l);
	return NULL;
}

/*
 * A service number of the old configuration as one of the reloaded agent's
 * (services are matched by name, and may have moved); -2 when it is gone.
 */
static int
remap_service(const struct listener *l, int service)
{
	const char	*name;
	int		 now;

	if (service == AGENT_SHARED_PORT)
		return service;
	name = service == 0 ? "" : l->cfg->services[service - 1].name;
	return (now = agent_find_service(l->agent, name)) >= 0 ? now : -2;
}

/*
 * Connections open across a reload (the agent already reloaded, l->cfg
 * still the old configuration) follow their services by name. One whose
 * service is gone is closed if not answered yet, and its late text, if
 * any still comes, is read and dropped: it has no service to go to.
 */
void
listener_remap_conns(struct listener *l)
{
	struct conn	*c, *next;
	int		 port, service;

	for (c = l->conns; c != NULL; c = next) {
		next = c->next;
		port = remap_service(l, c->port);
		service = c->state == CONN_REQUEST ? 0 :
		    remap_service(l, c->service);
		if (port == -2 || service == -2) {
			if (c->state == CONN_REQUEST) {
				conn_close(c);
				continue;
			}
			c->late_done = true;
		}
		c->port = port == -2 ? AGENT_SHARED_PORT : port;
		if (service >= 0)
			c->service = service;
	}
}

void
listener_free(struct listener *l)
{
	if (l == NULL)
		return;
	listener_close_ports(l);
	l->paused = true;
	while (l->conns != NULL)
		conn_close(l->conns);
	slab_pool_destroy(&l->slabs);
	free(l->spare_source);
	if (l->resume_ev != NULL)
		event_free(l->resume_ev);
	if (l->trim_ev != NULL)
		event_free(l->trim_ev);
	free(l);
}
