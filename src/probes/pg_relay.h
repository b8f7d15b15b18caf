/*
 * The postgres kind's relay: libpq reads whatever the server sends into a
 * buffer the size of the message the server announces, so what reaches
 * libpq is bounded here instead. The relay takes the connected socket from
 * libpq and gives it one end of a socketpair in its place (same descriptor
 * number); it copies bytes both ways from the event loop, counting what the
 * server sent, and stops reading from the server once the budget is spent.
 * It sits below TLS: libpq encrypts and verifies as before, over the pair.
 */
#ifndef LBAGENT_PG_RELAY_H
#define LBAGENT_PG_RELAY_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

struct pg_relay;

/*
 * Takes over libpq's socket fd (connected, nothing sent yet). over(arg)
 * runs once, from the loop, when the server sent more than budget bytes;
 * the relay has stopped reading then and over() may free it. NULL with
 * errno set when it cannot (fd is then libpq's as before).
 */
struct pg_relay	*pg_relay_new(struct event_base *base, int fd, size_t budget,
		    void (*over)(void *), void *arg);
/* Still in place on fd: libpq has not closed it for another attempt. */
bool		 pg_relay_on(const struct pg_relay *, int fd);
/* Bytes read from the server so far. */
size_t		 pg_relay_read(const struct pg_relay *);
/* Closes the server's socket and the relay's end; NULL is fine. */
void		 pg_relay_free(struct pg_relay *);

#endif
