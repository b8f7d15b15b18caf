/*
 * The socketpair relay under libpq (see pg_relay.h). Each direction holds
 * one chunk at a time: a chunk is read only once the last one is written
 * on, so what the relay holds is two chunks, whatever the server sends;
 * the rest waits in the kernel, bounded by the budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pg_relay.h"

#define PG_RELAY_CHUNK	16384	/* bytes held per direction */

struct pg_dir {
	char	buf[PG_RELAY_CHUNK];
	size_t	off, len;	/* what is still to write */
	bool	eof;		/* the reading side ended */
	bool	shut;		/* ... and the writing side was told */
};

struct pg_relay {
	int		 srv;	/* the server's socket, taken from libpq */
	int		 end;	/* the relay's end of the pair */
	dev_t		 dev;	/* libpq's end, to tell it apart later */
	ino_t		 ino;
	struct event	*srv_r, *srv_w, *end_r, *end_w;
	struct pg_dir	 down;	/* server -> libpq */
	struct pg_dir	 up;	/* libpq -> server */
	size_t		 budget, got;
	bool		 over;
	void		(*over_cb)(void *);
	void		*arg;
};

static void	relay_cb(evutil_socket_t, short, void *);

static void
arm(struct event *ev, bool on)
{
	if (on && !event_pending(ev, EV_READ | EV_WRITE, NULL))
		event_add(ev, NULL);
	else if (!on && event_pending(ev, EV_READ | EV_WRITE, NULL))
		event_del(ev);
}

/* Watches what each side can do next; tells a side its peer ended. */
static void
relay_arm(struct pg_relay *r)
{
	if (r->down.eof && r->down.len == 0 && !r->down.shut) {
		r->down.shut = true;
		shutdown(r->end, SHUT_WR);	/* libpq reads EOF */
	}
	if (r->up.eof && r->up.len == 0 && !r->up.shut) {
		r->up.shut = true;
		shutdown(r->srv, SHUT_WR);
	}
	arm(r->srv_r, !r->over && !r->down.eof && r->down.len == 0);
	arm(r->end_w, !r->over && r->down.len > 0);
	arm(r->end_r, !r->over && !r->up.eof && r->up.len == 0);
	arm(r->srv_w, !r->over && r->up.len > 0);
}

/* Reads one chunk from fd into d; false once over the budget. */
static bool
relay_read(struct pg_relay *r, int fd, struct pg_dir *d, bool counted)
{
	size_t	want = sizeof(d->buf);
	ssize_t	n;

	if (counted && r->budget - r->got + 1 < want)
		want = r->budget - r->got + 1;
	while ((n = recv(fd, d->buf, want, 0)) == -1 && errno == EINTR)
		;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return true;
	if (n <= 0) {
		d->eof = true;	/* an error ends it as EOF does */
		return true;
	}
	d->off = 0;
	d->len = (size_t)n;
	if (!counted)
		return true;
	r->got += (size_t)n;
	return r->got <= r->budget;
}

/* Writes what d holds to fd; on an error, the other side is gone. */
static void
relay_write(int fd, struct pg_dir *d, struct pg_dir *back)
{
	ssize_t	n;

	while (d->len > 0) {
		n = send(fd, d->buf + d->off, d->len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1) {
			/* Nobody reads on: drop it, and hear no more. */
			d->len = 0;
			d->eof = true;
			back->eof = true;
			back->len = 0;
			return;
		}
		d->off += (size_t)n;
		d->len -= (size_t)n;
	}
}

static void
relay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_relay	*r = arg;

	if (fd == r->srv && (what & EV_READ)) {
		if (!relay_read(r, r->srv, &r->down, true)) {
			r->over = true;
			r->down.len = 0;
			relay_arm(r);
			r->over_cb(r->arg);	/* may free r */
			return;
		}
		relay_write(r->end, &r->down, &r->up);
	} else if (fd == r->end && (what & EV_READ)) {
		relay_read(r, r->end, &r->up, false);
		relay_write(r->srv, &r->up, &r->down);
	} else if (fd == r->end)
		relay_write(r->end, &r->down, &r->up);
	else
		relay_write(r->srv, &r->up, &r->down);
	relay_arm(r);
}

struct pg_relay *
pg_relay_new(struct event_base *base, int fd, size_t budget,
    void (*over)(void *), void *arg)
{
	struct pg_relay	*r;
	struct stat	 st;
	int		 pair[2] = { -1, -1 }, error;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->srv = r->end = -1;
	r->budget = budget;
	r->over_cb = over;
	r->arg = arg;
	if ((r->srv = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    pair) == -1)
		goto fail;
	r->end = pair[1];
	if ((r->srv_r = event_new(base, r->srv, EV_READ | EV_PERSIST, relay_cb,
	    r)) == NULL ||
	    (r->srv_w = event_new(base, r->srv, EV_WRITE | EV_PERSIST,
	    relay_cb, r)) == NULL ||
	    (r->end_r = event_new(base, r->end, EV_READ | EV_PERSIST,
	    relay_cb, r)) == NULL ||
	    (r->end_w = event_new(base, r->end, EV_WRITE | EV_PERSIST,
	    relay_cb, r)) == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	/* From here on libpq's descriptor is the pair's other end. */
	if (dup3(pair[0], fd, O_CLOEXEC) == -1 || fstat(fd, &st) == -1)
		goto fail;
	close(pair[0]);
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	relay_arm(r);
	return r;

fail:
	error = errno;
	if (pair[0] != -1)
		close(pair[0]);
	pg_relay_free(r);
	errno = error;
	return NULL;
}

bool
pg_relay_on(const struct pg_relay *r, int fd)
{
	struct stat	st;

	return fd != -1 && fstat(fd, &st) == 0 && st.st_dev == r->dev &&
	    st.st_ino == r->ino;
}

size_t
pg_relay_read(const struct pg_relay *r)
{
	return r->got;
}

void
pg_relay_free(struct pg_relay *r)
{
	if (r == NULL)
		return;
	/* libpq's goodbye (Terminate), if it is there to pass on. */
	if (!r->over && !r->up.eof && r->up.len == 0 && r->end != -1 &&
	    r->srv != -1) {
		relay_read(r, r->end, &r->up, false);
		relay_write(r->srv, &r->up, &r->down);
	}
	if (r->srv_r != NULL)
		event_free(r->srv_r);
	if (r->srv_w != NULL)
		event_free(r->srv_w);
	if (r->end_r != NULL)
		event_free(r->end_r);
	if (r->end_w != NULL)
		event_free(r->end_w);
	if (r->srv != -1)
		close(r->srv);
	if (r->end != -1)
		close(r->end);
	free(r);
}
