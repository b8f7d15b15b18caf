/* Credentials out of URLs before anyone shows them. */
#include <ctype.h>
#include <string.h>

#include "lbagent/core/redact.h"

struct out {
	char	*buf;
	size_t	 size;
	size_t	 len;		/* what the whole result needs */
};

static void
out_add(struct out *o, const char *s, size_t n)
{
	size_t	room;

	if (o->size > 0 && o->len < o->size - 1) {
		room = o->size - 1 - o->len;
		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

/* Where the authority starts: after "scheme://", after "//", or at 0. */
static const char *
authority(const char *url)
{
	const char	*p = url;

	if (isalpha((unsigned char)*p)) {
		while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' ||
		    *p == '.')
			p++;
		if (strncmp(p, "://", 3) == 0)
			return p + 3;
	} else if (strncmp(p, "//", 2) == 0)
		return p + 2;
	return url;
}

size_t
redact_url(const char *url, char *buf, size_t size)
{
	struct out	 o = { buf, size, 0 };
	const char	*auth = authority(url), *end, *at = NULL, *p;

	end = auth + strcspn(auth, "/?#");
	for (p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (at == NULL)
		out_add(&o, url, strlen(url));
	else {
		out_add(&o, url, (size_t)(auth - url));
		out_add(&o, "***", 3);
		out_add(&o, at, strlen(at));
	}
	if (size > 0)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len;
}
