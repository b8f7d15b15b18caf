/*
 * One document fetched on the event loop, bounded in time and size: a
 * peer's HTTP API, or HAProxy's statistics over HTTP, a unix socket or
 * TCP. Never blocks the loop; never resolves a name on it except through
 * libcurl's own resolver (unix and tcp take addresses only).
 */
#ifndef LBAGENT_FETCH_H
#define LBAGENT_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "lbagent/sys/curl_loop.h"

enum fetch_kind {
	FETCH_HTTP,	/* GET url */
	FETCH_UNIX,	/* write the request, read until the server closes */
	FETCH_TCP,	/* the same over TCP */
};

struct fetch_source {
	enum fetch_kind	kind;
	char		text[256];	/* as written, credentials redacted
					   (redact_url), cut to fit: for
					   logs and status */
	char		url[1024];	/* FETCH_HTTP: the URL as written */
	char		path[108];	/* FETCH_UNIX: an absolute path */
	char		host[256];	/* FETCH_TCP: a numeric address */
	char		port[8];	/* FETCH_TCP: 1 to 65535 */
};

/*
 * "http://...", "https://...", "unix:/abs/path", "tcp:ADDRESS:PORT" or
 * "tcp:[IPv6]:PORT". 0, or -1 with *why (static text).
 */
int		 fetch_source_parse(const char *s, struct fetch_source *,
		    const char **why);

struct fetch;

/*
 * ok: body holds len bytes and a NUL after them. !ok: error is short text
 * ("timeout", "connection refused", "HTTP 503", "answer larger than
 * 64 KiB", "cannot resolve host", ...) that names no host or credential.
 * body and error live only during the call; the fetch is gone once it is
 * called.
 */
typedef void	(*fetch_done_fn)(void *arg, bool ok, const char *body,
		    size_t len, const char *error);

/*
 * Starts a fetch of src. HTTP: a GET of the URL on curl (no proxy, no
 * redirect followed, anything but 200 is an error); request is ignored.
 * unix and tcp: request (NULL or "" for none) is written once connected,
 * then the answer is read until the server closes; an empty answer is an
 * error. timeout_ms (above 0) bounds the whole exchange, connecting
 * included; an answer over cap bytes is an error. Returns NULL only when
 * nothing could be started (bad arguments, no memory): then done is never
 * called. Otherwise done is called exactly once, from the loop, never
 * from in here; failures to connect come that way too.
 */
struct fetch	*fetch_start(struct event_base *, struct curl_loop *,
		    const struct fetch_source *src, const char *request,
		    uint64_t timeout_ms, size_t cap, fetch_done_fn done,
		    void *arg);
/* The most a piece holds: what the loop does for one in one turn. */
#define FETCH_PIECE_MAX	(16 * 1024)

/*
 * One piece of the answer, as it comes: at most FETCH_PIECE_MAX bytes, and
 * one per turn of the loop, so that other events run between pieces. 0 to
 * go on, or -1 with *why (text that lives until done is called) to stop:
 * done then says !ok with that text. It must not cancel the fetch.
 */
typedef int	(*fetch_piece_fn)(void *arg, const char *data, size_t len,
		    const char **why);

/*
 * As fetch_start, but the answer is handed to piece as it comes and not
 * kept: done then says ok with body "" and len 0.
 * An HTTP fetch needs base too.
 */
struct fetch	*fetch_start_pieces(struct event_base *,
		    struct curl_loop *, const struct fetch_source *src,
		    const char *request, uint64_t timeout_ms, size_t cap,
		    fetch_piece_fn piece, fetch_done_fn done, void *arg);
/*
 * Stops a fetch in flight and frees it; done is never called. Safe from
 * any fetch's done but its own (by then it is gone). Every fetch must be
 * finished or cancelled before its event base or curl loop is freed.
 */
void		 fetch_cancel(struct fetch *);

#endif
