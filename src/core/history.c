/* The last transitions of a service, oldest first. Pure. */
#include <string.h>

#include "lbagent/core/history.h"
#include "lbagent/core/text.h"

void
history_add(struct history *h, int64_t wall_ms, const char *from,
    const char *to, const char *reason)
{
	struct history_entry	*e;

	if (h->count == HISTORY_MAX) {
		h->first = (h->first + 1) % HISTORY_MAX;
		h->count--;
	}
	e = &h->e[(h->first + h->count++) % HISTORY_MAX];
	e->wall_ms = wall_ms;
	text_line(e->from, sizeof(e->from) - 1, from, strlen(from));
	text_line(e->to, sizeof(e->to) - 1, to, strlen(to));
	text_reason(e->reason, reason, strlen(reason));
}

size_t
history_count(const struct history *h)
{
	return h->count;
}

const struct history_entry *
history_get(const struct history *h, size_t i)
{
	return i < h->count ? &h->e[(h->first + i) % HISTORY_MAX] : NULL;
}

json_t *
history_to_json(const struct history *h)
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < h->count; i++) {
		const struct history_entry *e = history_get(h, i);

		json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s}", "at",
		    (json_int_t)e->wall_ms, "from", e->from, "to", e->to,
		    "reason", e->reason));
	}
	return a;
}

int
history_from_json(struct history *h, const json_t *a, const char **why)
{
	struct history	 n;
	const json_t	*o;
	const char	*from, *to, *reason;
	json_int_t	 at;
	size_t		 i;

	memset(&n, 0, sizeof(n));
	if (!json_is_array(a)) {
		*why = "history is not an array";
		return -1;
	}
	json_array_foreach(a, i, o) {
		if (json_unpack((json_t *)o, "{s:I, s:s, s:s, s:s}", "at", &at,
		    "from", &from, "to", &to, "reason", &reason) != 0) {
			*why = "a history entry lacks at, from, to or reason";
			return -1;
		}
		history_add(&n, at, from, to, reason);
	}
	*h = n;
	return 0;
}
