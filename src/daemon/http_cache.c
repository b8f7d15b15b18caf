/*
 * The HTTP API's cached documents (http_cache.h). A scrape of /metrics
 * with many services costs milliseconds of the loop the agent port shares;
 * rendered per change instead of per request, a flood of scrapes costs a
 * copy of the headers each and a reference to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lbagent/sys/clock.h"
#include "lbagent/daemon/http_cache.h"

static void
blob_unref(struct http_blob *b)
{
	if (b != NULL && --b->refs == 0) {
		free(b->text);
		free(b);
	}
}

/* evbuffer_add_reference's cleanup: a reply is written, or freed. */
static void
blob_done(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	blob_unref(arg);
}

static char *
render(enum http_doc doc, const struct agent_view *a,
    const struct status_daemon *dm, size_t *len)
{
	struct status_clock	 c = { clock_now_ms(), clock_wall_ms() };
	json_t			*o;
	char			*text;

	if (doc == HTTP_DOC_METRICS)
		return status_metrics(a, dm, len);
	o = status_json(a, dm, false, &c);
	text = o ? json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS |
	    JSON_REAL_PRECISION(6)) : NULL;
	json_decref(o);
	if (text == NULL)
		return NULL;
	*len = strlen(text);
	text[(*len)++] = '\n';	/* json_dumps' NUL: the body is text and '\n' */
	return text;
}

/*
 * Whether the cached document still shows what is: nothing it shows
 * changed, and counters that move on their own (agent checks, probe
 * runs; the peers' round age, which moves with the clock) moved within
 * HTTP_CACHE_MOVING_MS of its rendering, or not at all.
 */
static bool
fresh(const struct http_cache *k, enum http_doc doc, const struct agent_view *a,
    const struct status_daemon *dm, uint64_t gen, uint64_t ticks,
    int64_t now_ms)
{
	struct agent_info	info;
	bool			moving;

	if (k->blob[doc] == NULL || k->generation[doc] != gen ||
	    k->reloads[doc] != dm->reloads)
		return false;
	if (doc == HTTP_DOC_STATUS)
		return true;	/* no counters in the public part */
	a->info(a, &info);
	moving = k->ticks[doc] != ticks || info.has_peers;
	return !moving || now_ms - k->at_ms[doc] < HTTP_CACHE_MOVING_MS;
}

struct http_blob *
http_cache_get(struct http_cache *k, enum http_doc doc, const struct agent_view *a,
    const struct status_daemon *dm)
{
	struct http_blob	*b;
	uint64_t		 ticks, gen = a->generation(a, &ticks);
	int64_t			 now_ms = clock_now_ms();

	if (fresh(k, doc, a, dm, gen, ticks, now_ms))
		return k->blob[doc];
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if ((b->text = render(doc, a, dm, &b->len)) == NULL) {
		free(b);
		return NULL;
	}
	b->refs = 1;		/* the cache's */
	blob_unref(k->blob[doc]);
	k->blob[doc] = b;
	k->generation[doc] = gen;
	k->ticks[doc] = ticks;
	k->reloads[doc] = dm->reloads;
	k->at_ms[doc] = now_ms;
	k->renders[doc]++;
	return b;
}

int
http_cache_add(struct evbuffer *out, struct http_blob *b)
{
	if (b->len == 0)
		return 0;
	if (evbuffer_add_reference(out, b->text, b->len, blob_done, b) == -1)
		return -1;
	b->refs++;
	return 0;
}

void
http_cache_clear(struct http_cache *k)
{
	int	i;

	for (i = 0; i < HTTP_DOC_COUNT; i++) {
		blob_unref(k->blob[i]);
		k->blob[i] = NULL;
	}
}
