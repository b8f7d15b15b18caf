/*
 * The HTTP API's cached documents: /metrics and the public /status,
 * rendered once per change of what they show (agent_generation) and, when
 * only their counters moved, at most once every HTTP_CACHE_MOVING_MS; a
 * request adds the rendered bytes to its reply by reference, not a copy.
 */
#ifndef LBAGENT_HTTP_CACHE_H
#define LBAGENT_HTTP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "lbagent/daemon/status.h"
#include "lbagent/daemon/view.h"

/* Counters that move on their own show at most this old. */
#define HTTP_CACHE_MOVING_MS	1000

enum http_doc {
	HTTP_DOC_METRICS,
	HTTP_DOC_STATUS,	/* the public part */
	HTTP_DOC_COUNT,
};

/* One rendering, shared by the replies that carry it. */
struct http_blob {
	unsigned	 refs;
	char		*text;
	size_t		 len;
};

struct http_cache {
	struct http_blob	*blob[HTTP_DOC_COUNT];
	uint64_t		 generation[HTTP_DOC_COUNT];
	uint64_t		 ticks[HTTP_DOC_COUNT];
	uint64_t		 reloads[HTTP_DOC_COUNT];
	int64_t			 at_ms[HTTP_DOC_COUNT];
	uint64_t		 renders[HTTP_DOC_COUNT];	/* since start */
};

/*
 * The document as it is now: the cached one, or rendered anew. Borrowed
 * (valid until the next call); NULL out of memory.
 */
struct http_blob	*http_cache_get(struct http_cache *, enum http_doc,
			    const struct agent_view *, const struct status_daemon *);
/* Adds the blob's bytes to out by reference; -1 out of memory. */
int			 http_cache_add(struct evbuffer *out,
			    struct http_blob *);
/* Drops the cached documents (replies under way keep theirs). */
void			 http_cache_clear(struct http_cache *);

#endif
