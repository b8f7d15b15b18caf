/*
 * libcurl's multi interface on the libevent loop. libcurl says which
 * sockets to watch (the socket callback) and when to call it back (the
 * timer callback); each watched socket gets one persistent event and the
 * loop one timer, and every event is handed back through
 * curl_multi_socket_action. After each call the finished transfers are
 * collected with curl_multi_info_read and their done callbacks run, so a
 * transfer never blocks the loop and no libcurl call is made from inside
 * one of libcurl's own callbacks.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <event2/event_struct.h>

#include "lbagent/sys/curl_loop.h"
#include "lbagent/sys/log.h"

/* A transfer in flight; found from its easy handle via CURLOPT_PRIVATE. */
struct xfer {
	struct xfer		*prev, *next;	/* curl_loop::xfers */
	CURL			*easy;
	curl_loop_done_fn	 done;
	void			*arg;
};

/* A socket libcurl asked us to watch; libcurl keeps it as the socketp. */
struct sock {
	struct sock		*prev, *next;	/* curl_loop::socks */
	struct curl_loop	*loop;
	curl_socket_t		 fd;
	struct event		 ev;
	bool			 armed;
};

struct curl_loop {
	struct event_base	*base;
	CURLM			*multi;
	struct event		*timer;
	struct xfer		*xfers;
	struct sock		*socks;
	int			 dispatching;	/* inside done callbacks */
	bool			 dying;		/* freed from a done callback */
};

static void	loop_destroy(struct curl_loop *);

static void
xfer_unlink(struct curl_loop *loop, struct xfer *x)
{
	if (x->prev != NULL)
		x->prev->next = x->next;
	else
		loop->xfers = x->next;
	if (x->next != NULL)
		x->next->prev = x->prev;
}

/* Stops watching s; libcurl no longer knows it (or is gone). */
static void
sock_free(struct curl_loop *loop, struct sock *s)
{
	if (s->armed)
		event_del(&s->ev);
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		loop->socks = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	free(s);
}

/* Runs the done callbacks of every transfer libcurl reports finished. */
static void
collect_done(struct curl_loop *loop)
{
	CURLMsg			*msg;
	struct xfer		*x;
	curl_loop_done_fn	 done;
	CURL			*easy;
	CURLcode		 rc;
	void			*arg, *p;
	int			 left;

	loop->dispatching++;
	while (!loop->dying &&
	    (msg = curl_multi_info_read(loop->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle;
		rc = msg->data.result;
		p = NULL;
		if (curl_easy_getinfo(easy, CURLINFO_PRIVATE, &p) != CURLE_OK ||
		    p == NULL) {
			log_warnx("curl: a finished transfer is not ours; dropped");
			curl_multi_remove_handle(loop->multi, easy);
			continue;
		}
		x = p;
		/* Removing also drops any message still queued for it. */
		curl_multi_remove_handle(loop->multi, easy);
		curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
		xfer_unlink(loop, x);
		done = x->done;
		arg = x->arg;
		free(x);
		done(easy, rc, arg);
	}
	loop->dispatching--;
	if (loop->dying && loop->dispatching == 0)
		loop_destroy(loop);
}

/* A watched socket is ready: tell libcurl, then collect what finished. */
static void
sock_event_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sock		*s = arg;
	struct curl_loop	*loop = s->loop;	/* s may go in the call */
	int			 flags = 0, running;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(loop->multi, fd, flags, &running);
	collect_done(loop);
}

/* libcurl's timeout (or "as soon as possible") came: let it run. */
static void
timer_event_cb(evutil_socket_t fd, short what, void *arg)
{
	struct curl_loop	*loop = arg;
	int			 running;

	curl_multi_socket_action(loop->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	collect_done(loop);
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: watch fd for `what`, or stop. */
static int
socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct curl_loop	*loop = userp;
	struct sock		*s = socketp;
	short			 events = EV_PERSIST;

	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			curl_multi_assign(loop->multi, fd, NULL);
			sock_free(loop, s);
		}
		return 0;
	}
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL) {
			log_warn("curl: socket");
			return -1;
		}
		s->loop = loop;
		s->fd = fd;
		if ((s->next = loop->socks) != NULL)
			s->next->prev = s;
		loop->socks = s;
		curl_multi_assign(loop->multi, fd, s);
	} else if (s->armed) {
		event_del(&s->ev);
		s->armed = false;
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		events |= EV_READ;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		events |= EV_WRITE;
	if (event_assign(&s->ev, loop->base, fd, events, sock_event_cb, s) ==
	    -1 || event_add(&s->ev, NULL) == -1) {
		log_warnx("curl: cannot watch a socket");
		return -1;
	}
	s->armed = true;
	return 0;
}

/* libcurl's CURLMOPT_TIMERFUNCTION: call back in timeout_ms, or never. */
static int
timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct curl_loop	*loop = userp;
	struct timeval		 tv;

	if (timeout_ms < 0) {
		evtimer_del(loop->timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	return evtimer_add(loop->timer, &tv) == 0 ? 0 : -1;
}

struct curl_loop *
curl_loop_new(struct event_base *base)
{
	struct curl_loop	*loop;

	if ((loop = calloc(1, sizeof(*loop))) == NULL)
		return NULL;
	loop->base = base;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(loop);
		return NULL;
	}
	if ((loop->timer = evtimer_new(base, timer_event_cb, loop)) == NULL ||
	    (loop->multi = curl_multi_init()) == NULL)
		goto fail;
	if (curl_multi_setopt(loop->multi, CURLMOPT_SOCKETFUNCTION,
	    socket_cb) != CURLM_OK ||
	    curl_multi_setopt(loop->multi, CURLMOPT_SOCKETDATA, loop) !=
	    CURLM_OK ||
	    curl_multi_setopt(loop->multi, CURLMOPT_TIMERFUNCTION, timer_cb) !=
	    CURLM_OK ||
	    curl_multi_setopt(loop->multi, CURLMOPT_TIMERDATA, loop) != CURLM_OK)
		goto fail;
	return loop;
fail:
	loop_destroy(loop);
	return NULL;
}

/* Aborts what is left, then frees; never from inside collect_done. */
static void
loop_destroy(struct curl_loop *loop)
{
	struct xfer	*x;

	while ((x = loop->xfers) != NULL) {
		curl_multi_remove_handle(loop->multi, x->easy);
		curl_easy_setopt(x->easy, CURLOPT_PRIVATE, NULL);
		xfer_unlink(loop, x);
		free(x);
	}
	if (loop->multi != NULL) {
		/* Cached connections close without calling back into us. */
		curl_multi_setopt(loop->multi, CURLMOPT_SOCKETFUNCTION, NULL);
		curl_multi_setopt(loop->multi, CURLMOPT_TIMERFUNCTION, NULL);
		curl_multi_cleanup(loop->multi);
	}
	while (loop->socks != NULL)
		sock_free(loop, loop->socks);
	if (loop->timer != NULL)
		event_free(loop->timer);
	free(loop);
	curl_global_cleanup();
}

void
curl_loop_free(struct curl_loop *loop)
{
	if (loop == NULL)
		return;
	if (loop->dispatching > 0) {
		/* From a done callback: collect_done finishes the job. */
		loop->dying = true;
		return;
	}
	loop_destroy(loop);
}

int
curl_loop_add(struct curl_loop *loop, CURL *easy, curl_loop_done_fn done,
    void *arg)
{
	struct xfer	*x;
	CURLMcode	 mc;

	if (loop->dying)
		return -1;
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		log_warn("curl: transfer");
		return -1;
	}
	x->easy = easy;
	x->done = done;
	x->arg = arg;
	/*
	 * Adding only arms the timer, so nothing runs before the private
	 * pointer is set and done is never called from in here.
	 */
	if ((mc = curl_multi_add_handle(loop->multi, easy)) != CURLM_OK) {
		log_warnx("curl: cannot start a transfer: %s",
		    curl_multi_strerror(mc));
		free(x);
		return -1;
	}
	curl_easy_setopt(easy, CURLOPT_PRIVATE, x);
	if ((x->next = loop->xfers) != NULL)
		x->next->prev = x;
	loop->xfers = x;
	return 0;
}

void
curl_loop_remove(struct curl_loop *loop, CURL *easy)
{
	struct xfer	*x;
	void		*p = NULL;

	if (curl_easy_getinfo(easy, CURLINFO_PRIVATE, &p) != CURLE_OK ||
	    p == NULL)
		return;
	/* The private pointer could be anyone's: trust only our list. */
	for (x = loop->xfers; x != NULL && x != p; x = x->next)
		;
	if (x == NULL)
		return;
	curl_multi_remove_handle(loop->multi, easy);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
	xfer_unlink(loop, x);
	free(x);
}
