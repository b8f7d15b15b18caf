/*
 * The agent port. Each connection is a small state machine driven by one
 * event: read the request (agent-send) if one is coming, write the reply
 * and our FIN (in one segment), then read until the peer closes, so that
 * we never close with unread input (the kernel would answer it with a
 * reset that can cost HAProxy the reply). Everything is bounded: bytes,
 * time, connections, and the accepts of one turn of the loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <netdb.h>
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

#include "lbagent/core/lbkeys.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/listener.h"
#include "lbagent/sys/log.h"
#include "lbagent/sys/net.h"
#include "lbagent/sys/slab.h"

#define LISTEN_BACKLOG		4096
#define NAME_KEY_MAX		160
#define RESUME_AFTER_MS		100	/* after running out of descriptors */
#define SOURCE_BUCKETS		1024	/* hash of the addresses with connections */
#define COMMON_TIMEOUTS		8	/* the holds' and waits' fixed lengths */
#define ACCEPT_BATCH		16	/* connections accepted per port a turn */
/* After a burst: what it took is given back (trim_cb). */
#define TRIM_PEAK_MIN		256	/* connections open at once */
#define TRIM_AFTER_MS		1000	/* once fewer than a quarter remain */

enum conn_state {
	CONN_REQUEST,	/* waiting for the request line */
	CONN_REPLY,	/* writing the reply line */
	CONN_DRAIN,	/* reply written, write side shut: reading to EOF */
};

/* One listening socket and the service it is for. */
struct port {
	struct listener		*l;
	evutil_socket_t		 fd;
	struct event		*ev;		/* readable: port_accept_cb */
	int			 service;	/* or AGENT_SHARED_PORT */
	/* What a reload matches it by: service name and address as written. */
	char			 key[NAME_KEY_MAX];
	bool			 passed;	/* by systemd: kept across reloads */
	bool			 wanted;	/* during a reload */
};

/*
 * The connections one source address has open, for the fairness check:
 * counted as they open and close, since counting them by walking every
 * open connection at each accept took most of the loop's time once
 * thousands were open (scripts/bench --full, with idle connections).
 */
struct source {
	struct source		*next;		/* same bucket */
	size_t			 nconns;
	char			 addr[LBKEY_ADDR_MAX];
};

struct conn {
	struct conn		*prev, *next;	/* listener::conns */
	struct listener		*l;
	struct source		*src;		/* NULL if it could not be counted */
	int			 port;		/* the port's service */
	int			 service;	/* chosen when replying */
	evutil_socket_t		 fd;
	struct event		 ev;		/* I/O, persistent: see conn_wait */
	struct event		 timer;		/* the request wait's end */
	struct event		 cap;		/* the deadline: closes */
	short			 waiting;	/* what ev is added for, or 0 */
	bool			 capped;	/* cap added */
	enum conn_state		 state;
	int			 hold_ms;	/* the deadline, from the accept */
	int64_t			 deadline_ms;
	int64_t			 request_until_ms;
	char			 addr[LBKEY_ADDR_MAX];
	size_t			 reqlen;
	bool			 replied_early;	/* before any request text */
	bool			 quiet_addr;	/* known to send none; not waited for */
	bool			 pressed;	/* under the pressure cut: see conn_mute */
	bool			 sends_none;	/* agent_addr_quiet, where text chooses */
	bool			 late_done;
	struct agent_check	 ck;
	size_t			 outlen, outoff;
	size_t			 drained;
	/* Buffers last: a reused conn zeroes everything before them. */
	char			 req[LISTENER_REQUEST_MAX];
	char			 out[REPLY_MAX];
};

struct listener {
	struct event_base	*base;
	const struct config	*cfg;
	struct agent		*agent;
	struct port		**ports;
	size_t			 nports;
	struct conn		*conns;
	size_t			 nconns;
	struct slab_pool	 slabs;		/* the conns */
	size_t			 peak;		/* most open since the last trim */
	struct event		*trim_ev;	/* trim_cb */
	uint64_t		 muted;		/* closed unanswered: conn_mute */
	struct log_limit	 muted_log;
	bool			 paused;
	bool			 pressed;	/* near capacity: short holds */
	bool			 starved;	/* out of descriptors; logged once */
	struct event		*resume_ev;
	struct log_limit	 refused_log;	/* addresses over their share */
	struct source		*sources[SOURCE_BUCKETS];
	struct source		*spare_source;	/* no malloc per lone check */
	/* libevent's common timeouts for the fixed lengths: see fixed_tv. */
	struct {
		int			 ms;
		const struct timeval	*tv;
	}			 common[COMMON_TIMEOUTS];
	size_t			 ncommon;
};

enum io_result { IO_DONE, IO_AGAIN, IO_CLOSED };

static void	conn_cb(evutil_socket_t, short, void *);

/* FNV-1a of the address text, into a bucket. */
static size_t
source_bucket(const char *addr)
{
	uint32_t	h = 2166136261u;

	for (; *addr != '\0'; addr++)
		h = (h ^ (unsigned char)*addr) * 16777619u;
	return h % SOURCE_BUCKETS;
}

/* The count of addr, created at 0 if it has none; NULL out of memory. */
static struct source *
source_get(struct listener *l, const char *addr)
{
	struct source	**head = &l->sources[source_bucket(addr)], *s;

	for (s = *head; s != NULL; s = s->next)
		if (strcmp(s->addr, addr) == 0)
			return s;
	if ((s = l->spare_source) != NULL) {
		l->spare_source = NULL;
		s->nconns = 0;
	} else if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	s->next = *head;
	*head = s;
	return s;
}

/* Forgets an address that has no connection open any more. */
static void
source_drop(struct listener *l, struct source *s)
{
	struct source	**p = &l->sources[source_bucket(s->addr)];

	while (*p != s)
		p = &(*p)->next;
	*p = s->next;
	if (l->spare_source == NULL)
		l->spare_source = s;
	else
		free(s);
}

static void
listener_pause(struct listener *l)
{
	size_t	i;

	if (l->paused)
		return;
	for (i = 0; i < l->nports; i++)
		event_del(l->ports[i]->ev);
	l->paused = true;
}

static void
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
		source_drop(l, c->src);
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
static const struct timeval *
fixed_tv(struct listener *l, int ms, struct timeval *tv)
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
		event_add(&c->cap, fixed_tv(c->l, c->hold_ms, &tv));
		c->capped = true;
	}
}

/* Waits for request text for wait_ms, a fixed length (fixed_tv). */
static void
conn_wait_request(struct conn *c, int wait_ms)
{
	struct timeval	tv;

	conn_wait(c, EV_READ);
	event_add(&c->timer, fixed_tv(c->l, wait_ms, &tv));
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
static bool
text_chooses(const struct listener *l, int port)
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
	if (!c->pressed || !text_chooses(c->l, c->port))
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
 * How long a connection waits for its request line under the pressure
 * cut. Where the line chooses the service it is needed (conn_mute), so
 * it is waited for up to LISTENER_PRESSED_NAME_WAIT_MS, short of the
 * deadline, unless the address is known to send none; otherwise the
 * reply does not hang on it, and LISTENER_PRESSED_REQUEST_WAIT_MS is
 * enough. request_timeout, when shorter, still bounds a wait for a name.
 */
static int
pressed_wait_ms(const struct listener *l, const struct conn *c)
{
	int	wait_ms = LISTENER_PRESSED_REQUEST_WAIT_MS;

	if (text_chooses(l, c->port) && !c->sends_none)
		wait_ms = LISTENER_PRESSED_NAME_WAIT_MS;
	if (agent_wants_name(l->agent, c->port) &&
	    wait_ms > (int)l->cfg->request_timeout_ms)
		wait_ms = (int)l->cfg->request_timeout_ms;
	return wait_ms;
}

/*
 * Near capacity: every open connection is cut to a short hold, so that
 * the slots turn over and the kernel's queue (where the load balancers'
 * checks wait) drains. Done once, on entering that state.
 */
static void
press(struct listener *l, int64_t now)
{
	int64_t		 until = now + LISTENER_PRESSED_DEADLINE_MS;
	struct conn	*c;
	struct timeval	 tv;

	int		 wait_ms;

	l->pressed = true;
	for (c = l->conns; c != NULL; c = c->next) {
		/* Its wait, whole or cut, ends under the cut: conn_mute. */
		c->pressed = true;
		if (c->deadline_ms <= until)
			continue;
		c->deadline_ms = until;
		/* The pressed lengths from now: common timeouts too. */
		event_add(&c->cap, fixed_tv(l, LISTENER_PRESSED_DEADLINE_MS,
		    &tv));
		c->capped = true;
		/* The wait ends before the deadline. */
		wait_ms = pressed_wait_ms(l, c);
		if (c->state == CONN_REQUEST &&
		    c->request_until_ms > now + wait_ms) {
			c->request_until_ms = now + wait_ms;
			event_add(&c->timer, fixed_tv(l, wait_ms, &tv));
		}
	}
}

/* Open connections one source address may hold (listener.h). */
static size_t
per_source_max(const struct listener *l)
{
	size_t	n = (size_t)l->cfg->max_connections / LISTENER_SOURCE_SHARE;

	return n < LISTENER_SOURCE_MIN ? LISTENER_SOURCE_MIN : n;
}

/* Whether the address of count s holds its share of the connections already. */
static bool
source_over_share(const struct listener *l, const struct source *s)
{
	return s != NULL && s->nconns >= per_source_max(l);
}

/* One accepted connection: answered at once, or waited on. */
static void
accept_conn(struct port *port, evutil_socket_t fd, const struct sockaddr *sa)
{
	struct listener	*l = port->l;
	struct conn	*c;
	struct source	*src;
	char		 addr[LBKEY_ADDR_MAX];
	int64_t		 now = clock_now_ms();
	int		 wait_ms;
	bool		 pressed;

	if (l->starved) {
		log_notice("accepting again (%zu connections open)", l->nconns);
		l->starved = false;
	}
	/*
	 * Fairness: one address cannot take the slots every load balancer
	 * needs. Closed unanswered, which HAProxy counts as no answer (not
	 * as a failed check).
	 */
	format_addr(sa, addr);
	/* Out of memory for the count: not counted, rather than refused. */
	src = source_get(l, addr);
	if (source_over_share(l, src)) {
		evutil_closesocket(fd);
		log_limited(&l->refused_log, LOG_WARNING, "agent port: %s "
		    "holds %zu connections, its share of max_connections: "
		    "refusing more from it", addr, per_source_max(l));
		return;
	}
	if ((c = slab_alloc(&l->slabs)) == NULL) {
		evutil_closesocket(fd);
		if (src != NULL && src->nconns == 0)
			source_drop(l, src);
		return;
	}
	/* Only the state before the buffers needs to start at zero. */
	memset(c, 0, offsetof(struct conn, req));
	c->l = l;
	if ((c->src = src) != NULL)
		src->nconns++;
	c->port = port->service;
	c->fd = fd;
	/* Near capacity every connection is held briefly, so slots turn over. */
	pressed = (l->nconns + 1) * LISTENER_PRESSED_DEN >=
	    l->cfg->max_connections * LISTENER_PRESSED_NUM;
	if (pressed && !l->pressed)
		press(l, now);
	c->hold_ms = pressed ? LISTENER_PRESSED_DEADLINE_MS :
	    LISTENER_DEADLINE_MS;
	c->deadline_ms = now + c->hold_ms;
	c->pressed = pressed;
	c->state = CONN_REQUEST;
	memcpy(c->addr, addr, sizeof(c->addr));
	/* Looked up once: press() and conn_mute ask again for thousands. */
	c->sends_none = text_chooses(l, c->port) &&
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
		wait_ms = pressed ? pressed_wait_ms(l, c) :
		    (int)l->cfg->request_timeout_ms;
		c->request_until_ms = now + wait_ms;
		conn_wait_request(c, wait_ms);
		return;
	}
	if (c->reqlen > 0 || agent_addr_sends_text(l->agent, c->addr)) {
		wait_ms = pressed ? pressed_wait_ms(l, c) :
		    LISTENER_REQUEST_WAIT_MS;
		c->request_until_ms = now + wait_ms;
		conn_wait_request(c, wait_ms);
		return;
	}
	c->quiet_addr = true;
	conn_reply(c);
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
static void
port_accept_cb(evutil_socket_t fd, short what, void *arg)
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
	    port_accept_cb, port)) == NULL) {
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
	/* Passed sockets replace [agent] listen; services' ports still bind. */
	if (nfds > 0 ? listen_passed(l, fds, nfds) == -1 :
	    listen_all(l, &cfg->listen, AGENT_SHARED_PORT, "", false) == -1)
		goto fail;
	/* Service i of the config is the agent's service i + 1. */
	for (i = 0; i < cfg->nservices; i++)
		if (listen_all(l, &cfg->services[i].listen, (int)i + 1,
		    cfg->services[i].name, false) == -1)
			goto fail;
	if (l->nports == 0) {
		log_errx("no address to listen on");
		goto fail;
	}
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
static void
remap_conns(struct listener *l)
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
	remap_conns(l);
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

void
listener_free(struct listener *l)
{
	size_t	i;

	if (l == NULL)
		return;
	for (i = 0; i < l->nports; i++)
		port_free(l->ports[i]);
	free(l->ports);
	l->ports = NULL;
	l->nports = 0;
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
