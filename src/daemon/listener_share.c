/*
 * The agent port's fairness: the connections each source address has
 * open, counted as they open and close; the share of max_connections one
 * address may hold (more are closed at once, unanswered); and the
 * pressure cut near capacity, which holds every connection briefly so
 * that the slots turn over (listener.h says the numbers).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "listener_impl.h"

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
void
listener_source_drop(struct listener *l, struct source *s)
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

/*
 * How long a connection waits for its request line under the pressure
 * cut. Where the line chooses the service it is needed (conn_mute), so
 * it is waited for up to LISTENER_PRESSED_NAME_WAIT_MS, short of the
 * deadline, unless the address is known to send none; otherwise the
 * reply does not hang on it, and LISTENER_PRESSED_REQUEST_WAIT_MS is
 * enough. request_timeout, when shorter, still bounds a wait for a name.
 */
int
listener_pressed_wait_ms(const struct listener *l, const struct conn *c)
{
	int	wait_ms = LISTENER_PRESSED_REQUEST_WAIT_MS;

	if (listener_text_chooses(l, c->port) && !c->sends_none)
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
		event_add(&c->cap, listener_fixed_tv(l,
		    LISTENER_PRESSED_DEADLINE_MS, &tv));
		c->capped = true;
		/* The wait ends before the deadline. */
		wait_ms = listener_pressed_wait_ms(l, c);
		if (c->state == CONN_REQUEST &&
		    c->request_until_ms > now + wait_ms) {
			c->request_until_ms = now + wait_ms;
			event_add(&c->timer,
			    listener_fixed_tv(l, wait_ms, &tv));
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

/*
 * Fairness: one address cannot take the slots every load balancer
 * needs. Whether a connection from addr may open, with *src its count;
 * one over its share is closed (fd) unanswered, which HAProxy counts as
 * no answer (not as a failed check).
 */
bool
listener_source_admit(struct listener *l, evutil_socket_t fd,
    const char *addr, struct source **src)
{
	/* Out of memory for the count: not counted, rather than refused. */
	*src = source_get(l, addr);
	if (source_over_share(l, *src)) {
		evutil_closesocket(fd);
		log_limited(&l->refused_log, LOG_WARNING, "agent port: %s "
		    "holds %zu connections, its share of max_connections: "
		    "refusing more from it", addr, per_source_max(l));
		return false;
	}
	return true;
}

/*
 * Near capacity every connection is held briefly, so slots turn over:
 * whether one accepted now is, the open ones cut too when it is the
 * first.
 */
bool
listener_pressed_accept(struct listener *l, int64_t now)
{
	bool	pressed;

	pressed = (l->nconns + 1) * LISTENER_PRESSED_DEN >=
	    l->cfg->max_connections * LISTENER_PRESSED_NUM;
	if (pressed && !l->pressed)
		press(l, now);
	return pressed;
}
